"""Budgets over per-run quotients in linear time, still exact where it shows: sums and means of
quotients are bounds that decide the verdict and every shown digit, or the exact fraction is
computed; percentiles, minimum and maximum are exact elements. Every expectation here is an
exact ``Fraction`` computed in the test from the runs' own numbers."""

from __future__ import annotations

import math
from datetime import timedelta
from fractions import Fraction

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contractlang.evaluate import quotients
from contractlang.evaluate.bounds import GRID, Bounded, decides, interval
from contractlang.evaluate.budget import evaluate_budget
from contractlang.evaluate.quotients import Quotients, aggregate_quotients
from contractlang.lang import ast
from contractlang.pipeline.language import parse, terms_from_text

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def reference(func: str, values: list[Fraction]) -> Fraction | None:
    """The aggregate by its definition, in Fractions (docs/evaluate.md, "Budgets": linear
    interpolation)."""
    if not values:
        return None
    if func == "sum":
        return sum(values, Fraction(0))
    if func == "mean":
        return sum(values, Fraction(0)) / len(values)
    ordered = sorted(values)
    q = (
        Fraction(0)
        if func == "min"
        else Fraction(1)
        if func == "max"
        else Fraction(int(func[1:]), 100)
    )
    pos = q * (len(ordered) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


denominators = st.one_of(
    st.integers(-(10**13), 10**13),  # GPU-microseconds
    st.integers(-(2**100), 2**100),  # wider than a chunk of the long division
    st.sampled_from([1, 2, 3, 7, 1024, 3 * 2**61]),
)
pairs = st.lists(st.tuples(st.integers(-(10**18), 10**18), denominators), max_size=40)


@SETTINGS
@given(pairs, st.sampled_from(["sum", "mean", "min", "max", "p50", "p95", "p99"]))
def test_quotient_aggregates_agree_with_fractions(pairs: list[tuple[int, int]], func: str) -> None:
    kept = [(n, d) for n, d in pairs if d != 0]
    want = reference(func, [Fraction(n, d) for n, d in kept])
    got = aggregate_quotients(func, Quotients.of_pairs(kept, Fraction(1, 3600)))
    if want is None:
        assert got is None
        return
    want /= 3600
    if isinstance(got, Bounded):
        assert func in ("sum", "mean")
        assert got.low <= want <= got.high
        # the bounds are tight: at most one unit of the last place per quotient cut
        assert got.high - got.low <= Fraction(len(kept), 10**quotients.PLACES) / 3600
        assert got.exact() == want
    else:
        assert got == want


def test_zero_and_none_denominators_are_left_out_as_x_over_0_is_none() -> None:
    frame = pl.DataFrame(
        {"num": [1, 2, None, 5], "den": [3, 0, 4, -10]},
        schema={"num": pl.Int128, "den": pl.Int128},
    )
    q = Quotients.of_columns(frame, Fraction(1))
    # left: 1/3 and 5/(−10) = −1/2; their mean (1/3 − 1/2) / 2 = −1/12
    got = aggregate_quotients("mean", q)
    assert isinstance(got, Bounded)
    assert got.exact() == Fraction(-1, 12)
    assert aggregate_quotients("min", q) == Fraction(-1, 2)


def test_equal_cuts_are_ordered_exactly() -> None:
    # 1/(10^30 + 1) and 1/(10^30 + 3) are 2 × 10^-60 apart: both cut to 10^27 − 1 at 57
    # places, told apart exactly
    a, b = Fraction(1, 10**30 + 3), Fraction(1, 10**30 + 1)
    pairs = [(b.numerator, b.denominator), (a.numerator, a.denominator)]
    q = Quotients.of_pairs(pairs, Fraction(1))
    assert aggregate_quotients("min", q) == a
    assert aggregate_quotients("max", q) == b


# --------------------------------------------------------------------------- bounds


def test_bounds_decide_unless_the_limit_or_a_shown_digit_lies_between_them() -> None:
    tiny = Fraction(1, 10**50)
    # just above 5%, a rounding point, but not containing it: decided
    assert decides(Fraction(5, 100) + tiny, Fraction(5, 100) + 2 * tiny, Fraction(1, 10))
    x = Fraction(1, 7)  # 0.142857…: no 32-place rounding point within 10^-50 of it
    assert decides(x, x + tiny, Fraction(1, 10))
    assert not decides(x - tiny, x + tiny, x)  # the limit itself between the bounds
    half = Fraction(1, 4)
    assert not decides(half - tiny, half + tiny, Fraction(1, 10))  # a rounding point
    assert Fraction(1, 2 * 10**32) == GRID


def test_interval_arithmetic_bounds_every_value_in_the_box() -> None:
    text = 'budget "b" {\n  require (mean(a / b) - max(c / d)) * 2 / mean(e / f) <= 1\n}\n'
    parsed = parse(text).file
    assert parsed is not None
    (budget,) = parsed.items
    assert isinstance(budget, ast.Budget)
    expr = budget.requires[0].expr
    assert isinstance(expr, ast.Compare)
    boxes = {
        "a": (Fraction(1), Fraction(2)),
        "c": (Fraction(3), Fraction(3)),
        "e": (Fraction(1, 2), Fraction(4)),
    }

    def leaf(node: ast.Expr) -> Fraction | Bounded:
        assert isinstance(node, ast.Call)
        name = node.args[0].left.name  # type: ignore[attr-defined]
        lo, hi = boxes[name]
        return lo if lo == hi else Bounded(lo, hi, lambda: lo)

    lo, hi = interval(expr.left, leaf) or (None, None)
    assert lo is not None
    assert hi is not None
    # (x − 3) · 2 / y over x ∈ [1, 2], y ∈ [1/2, 4]: corners (1−3)·2/(1/2) = −8 … (2−3)·2/4
    assert (lo, hi) == (Fraction(-8), Fraction(-1, 2))


# --------------------------------------------------------------------------- budgets


def runs_table(lost: list[int], metered: list[int]) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "lost_gpu_time": [timedelta(microseconds=x) for x in lost],
            "metered_gpu_time": [timedelta(microseconds=x) for x in metered],
        }
    )


def requirement(text: str, runs: pl.DataFrame) -> tuple[Fraction | None, str]:
    (budget,) = terms_from_text(f'budget "b" {{\n  require {text}\n}}\n', "b.spot").budgets
    (r,) = evaluate_budget(budget, runs, None).requirements
    return r.value, r.verdict


@pytest.mark.parametrize(
    ("op", "verdict"), [("<=", "met"), (">=", "met"), ("<", "not met"), (">", "not met")]
)
def test_a_mean_exactly_at_its_limit_is_an_exact_tie(op: str, verdict: str) -> None:
    # 1/3 and 2/3 have no finite decimal; their mean is exactly 1/2
    runs = runs_table([1, 2_000_000], [3, 3_000_000])
    value, said = requirement(f"mean(lost_gpu_time / metered_gpu_time) {op} 50%", runs)
    assert value == Fraction(1, 2)
    assert said == verdict


@SETTINGS
@given(
    st.lists(st.tuples(st.integers(0, 10**12), st.integers(0, 10**13)), min_size=1, max_size=60),
    st.sampled_from(["mean", "sum", "p95", "max"]),
    st.fractions(0, 2, max_denominator=1000),
)
def test_budget_verdicts_equal_the_exact_definition(
    runs: list[tuple[int, int]], func: str, limit: Fraction
) -> None:
    table = runs_table([a for a, _ in runs], [b for _, b in runs])
    values = [Fraction(a, b) for a, b in runs if b != 0]  # x / 0 is none, skipped
    want = reference(func, values)
    text = f"{func}(lost_gpu_time / metered_gpu_time) <= {limit.numerator} / {limit.denominator}"
    value, verdict = requirement(text, table)
    if want is None:
        assert (value, verdict) == (None, "not measurable")
        return
    assert verdict == ("met" if want <= limit else "not met")
    assert value is not None
    # the value shows the exact value's digits: equal to 30 places at least
    assert abs(value - want) <= Fraction(len(values), 10**quotients.PLACES)
