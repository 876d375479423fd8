"""`compare`'s engine: ranking, deltas, clause attribution and the price to pass.

Attribution and price figures are checked two ways: against hand computations on small
scenarios, and against an independent path — the contract evaluated by `evaluate` after the
clause is deleted from its source text (or each rate's price is written multiplied).
"""

from __future__ import annotations

import re
from fractions import Fraction
from pathlib import Path

import pytest
from support.compared import example_trace, rulesets_attributed
from support.scenario import accepted, reclaimed, released, started, trace_frame

from contractlang.compare import compare
from contractlang.compare.model import ContractFigures
from contractlang.compare.rank import delta
from contractlang.compare.variants import (
    removable_clauses,
)
from contractlang.evaluate.results import ContractResult
from contractlang.pipeline.evaluation import evaluate
from contractlang.pipeline.language import load_terms, terms_from_text

ROOT = Path(__file__).resolve().parents[1]
RULESETS = sorted((ROOT / "rulesets").glob("*.spot"))
EXAMPLE = ROOT / "examples" / "trace.parquet"

# One run, one allocation of 1 GPU for 4 hours, reclaimed; accepted.
RECLAIMED_4H = [
    started("r1", "a1", 0, gpus=1),
    reclaimed("r1", "a1", 240),
    accepted("r1", 300),
]

CAPPED = """
contract "capped" {
  currency USD
  rate 10 USD per gpu_hour
  credit "reclaim" 50% of charge when end_reason == reclaimed
  cap credits at 10 USD per run
}
"""


def test_attribution_of_a_credit_and_its_cap_by_hand() -> None:
    # charge = 10 USD × 1 GPU × 4 h = 40.00; credit = 50% = 20.00; the run cap at 10 USD cuts
    # 10.00: net = 40.00 − 20.00 + 10.00 = 30.00.
    cmp = compare(terms_from_text(CAPPED), trace_frame(RECLAIMED_4H), attribute_clauses=True)
    (c,) = cmp.contracts
    assert c.result.totals.net_minor == 3000
    assert c.attribution is not None
    by_label = {a.clause.label: a for a in c.attribution}
    assert set(by_label) == {"reclaim", "cap credits at 10 USD per run"}
    credit = by_label["reclaim"].without
    # without the credit: nothing to cap; gross 40.00, credits after caps 0, net 40.00
    assert credit is not None
    assert (credit.gross_minor, credit.credits_minor, credit.cap_cuts_minor, credit.net_minor) == (
        4000, 0, 0, 4000,
    )  # fmt: skip
    cap = by_label["cap credits at 10 USD per run"].without
    # without the cap: the whole 20.00 credit stands (below the run's gross): net 20.00
    assert cap is not None
    assert (cap.gross_minor, cap.credits_minor, cap.cap_cuts_minor, cap.net_minor) == (
        4000, -2000, 0, 2000,
    )  # fmt: skip
    # with it: credits after caps = −20.00 + 10.00 = −10.00
    assert ContractFigures.of(c.result, c.result.budgets).credits_minor == -1000


PRICED = """
contract "two" {
  currency USD
  rate 2 USD per gpu_hour
}
budget "spend" {
  require sum(net) <= 1000 USD
}
"""

# 10 GPUs for 10 hours, released, accepted: 100 GPU-hours.
HUNDRED_GPU_HOURS = [
    started("r1", "a1", 0, gpus=10),
    released("r1", "a1", 600),
    accepted("r1", 601),
]


def test_price_to_pass_of_a_linear_bill_by_hand() -> None:
    # net(m) = m × 2 USD × 100 GPU-hours = 200 m USD ≤ 1000 USD ⇔ m ≤ 5: passes on [0, 5];
    # every bisection midpoint above 5 fails, so the end found is exactly 5.
    cmp = compare(terms_from_text(PRICED), trace_frame(HUNDRED_GPU_HOURS), attribute_clauses=True)
    (c,) = cmp.contracts
    assert c.to_pass is not None
    assert c.to_pass.met
    p = c.to_pass.price
    assert p is not None
    assert p.monotone
    assert p.intervals == ((Fraction(0), Fraction(5)),)
    assert p.largest == 5
    assert p.headroom == 5
    assert p.at_largest is not None
    assert p.at_largest.net_minor == 100_000


NON_MONOTONE = """
contract "fixed-credit" {
  currency USD
  rate 2 USD per gpu_hour
  credit "fixed" 50 USD when end_reason == released
}
budget "share" {
  require -sum(credits) / sum(gross) <= 10%
  require sum(net) <= 1000 USD
}
"""


def test_a_fixed_credit_makes_pass_fail_non_monotone_in_price() -> None:
    # gross(m) = 200 m USD and the credit is 50 USD whatever m: 50 / 200 m ≤ 10% ⇔ m ≥ 2.5;
    # net = 200 m − 50 ≤ 1000 ⇔ m ≤ 5.25. So it passes on [2.5, 5.25] only (both ends are
    # reached exactly: 2.5 is on the grid, 5.25 the first midpoint between 5 and 5.5).
    frame = trace_frame(HUNDRED_GPU_HOURS)
    cmp = compare(terms_from_text(NON_MONOTONE), frame, attribute_clauses=True)
    (c,) = cmp.contracts
    assert c.to_pass is not None
    assert not c.to_pass.met
    p = c.to_pass.price
    assert p is not None
    assert not p.monotone
    assert p.intervals == ((Fraction(5, 2), Fraction(21, 4)),)
    assert p.at_largest is not None
    assert p.at_largest.net_minor == 100_000
    # the clause that would make it pass on its own: none (without the credit the ratio is 0%
    # but the net is 200.00, which passes: so the credit is the one)
    assert [x.label for x in c.to_pass.clauses] == ["fixed"]


def test_no_multiplier_passes_names_the_requirement_that_never_does() -> None:
    spot = PRICED.replace(
        "require sum(net) <= 1000 USD",
        "require sum(net) <= 1000 USD\n  require sum(net) >= 5000 USD",
    )
    # sum(net) ≥ 5000 needs m ≥ 25 and sum(net) ≤ 1000 needs m ≤ 5: never both
    cmp = compare(terms_from_text(spot), trace_frame(HUNDRED_GPU_HOURS), attribute_clauses=True)
    p = cmp.contracts[0].to_pass.price  # type: ignore[union-attr]
    assert p is not None
    assert p.intervals == ()
    assert p.largest is None
    assert p.never == ("sum(net) >= 5000 USD",)


def test_ranking_and_deltas_against_the_baseline() -> None:
    spot = """
    contract "pricey" { currency USD rate 3 USD per gpu_hour }
    contract "cheap" { currency USD rate 2 USD per gpu_hour }
    budget "b" { require sum(net) <= 250 USD }
    """
    # 100 GPU-hours: pricey 300.00 (fails, off by 50), cheap 200.00 (meets, 50 to spare)
    frame = trace_frame(HUNDRED_GPU_HOURS)
    cmp = compare(terms_from_text(spot), frame)
    assert [(c.name, c.rank) for c in cmp.contracts] == [("pricey", 2), ("cheap", 1)]
    assert cmp.baseline == "pricey"
    d = delta(cmp.contract("cheap").result, cmp.base.result)
    assert d.money is not None
    assert d.money["net"] == -100
    # each contract carries its delta, the baseline its own (nothing: 300 − 300)
    assert cmp.contract("cheap").delta == d
    assert cmp.base.delta.money is not None
    assert cmp.base.delta.money["net"] == 0
    again = compare(terms_from_text(spot), frame, baseline="cheap")
    d = delta(again.contract("pricey").result, again.base.result)
    assert d.money is not None
    assert d.money["net"] == 100
    assert again.contract("pricey").delta == d


# --------------------------------------------------------------------------- the independent path


def _figures(c: ContractResult) -> tuple[object, ...]:
    t = c.totals
    reqs = tuple((r.text, r.value, r.verdict) for b in c.budgets for r in b.requirements)
    return (
        t.gross_minor,
        t.credits_minor + t.cap_cuts_minor,
        t.cap_cuts_minor,
        t.net_minor,
        t.cost_per_accepted_run["p95"],
        tuple(b.met for b in c.budgets),
        reqs,
    )


def _contract_figures(o: ContractFigures) -> tuple[object, ...]:
    reqs = tuple((r.text, r.value, r.verdict) for b in o.budgets for r in b.requirements)
    return (
        o.gross_minor,
        o.credits_minor,
        o.cap_cuts_minor,
        o.net_minor,
        o.p95,
        tuple(b.met for b in o.budgets),
        reqs,
    )


@pytest.fixture(scope="module")
def rulesets_compared():  # type: ignore[no-untyped-def]
    cmp = rulesets_attributed()
    return load_terms(RULESETS), example_trace(), cmp


BUDGETS = (ROOT / "rulesets" / "fy27-budget.spot").read_text(encoding="utf-8")


def test_attribution_matches_the_contract_with_the_clause_deleted_from_its_source(
    rulesets_compared,  # type: ignore[no-untyped-def]
) -> None:
    _, trace, cmp = rulesets_compared
    budgets = BUDGETS
    checked = 0
    for c in cmp.contracts:
        source = c.result.source_text
        assert source is not None
        assert c.attribution is not None
        assert [a.clause.label for a in c.attribution] == [
            r.label for r in removable_clauses(c.result.contract, source)
        ]
        for a in c.attribution:
            span = a.clause.clause.span
            edited = source[: span.start_pos] + source[span.end_pos :]
            assert a.clause.label.split(" ")[0] in source[span.start_pos : span.end_pos]
            alone = terms_from_text(edited + "\n" + budgets, "edited.spot")
            reference = evaluate(alone, trace).contracts[0]
            assert a.without is not None, a.error
            assert _contract_figures(a.without) == _figures(reference), (c.name, a.clause.label)
            checked += 1
    # every exclusion, credit, cap and billing setting of the five drafts
    assert checked == 3 + 2 + 3 + 17  # aws, coreweave, gcp, northwind (azure has none)


def _multiplied(source: str, m: Fraction) -> str:
    """Every rate's price written times ``m`` (a `rate none` stays none)."""

    def one(match: re.Match[str]) -> str:
        price, tail = match.group(1), match.group(2)
        if price.strip() == "none":
            return match.group(0)
        return f"rate ({_decimal(m)}) * ({price}){tail}"

    return re.sub(r"rate (.*?)( when|\n)", one, source)


def _decimal(m: Fraction) -> str:
    digits = 0
    while (m * 10**digits).denominator != 1:
        digits += 1
    whole = m * 10**digits
    text = str(whole.numerator).rjust(digits + 1, "0")
    return text if digits == 0 else f"{text[:-digits]}.{text[-digits:]}"


def test_the_price_to_pass_is_evaluated_exactly_at_the_multiplier_found(
    rulesets_compared,  # type: ignore[no-untyped-def]
) -> None:
    _, trace, cmp = rulesets_compared
    budgets = BUDGETS
    for c in cmp.contracts:
        assert c.to_pass is not None
        p = c.to_pass.price
        assert p is not None
        assert p.largest is not None
        assert p.at_largest is not None
        source = c.result.source_text
        assert source is not None
        edited = _multiplied(source, p.largest)
        reference = evaluate(terms_from_text(edited + "\n" + budgets, "m.spot"), trace).contracts[0]
        assert _contract_figures(p.at_largest) == _figures(reference), c.name
        # within 0.1 %: just past the end found, the headline (the only requirement the
        # terms move in the ranking budget) fails
        past = p.largest * Fraction(10011, 10000)
        past = Fraction(round(past * 10**6), 10**6)
        over = _multiplied(source, past)
        beyond = evaluate(terms_from_text(over + "\n" + budgets, "m.spot"), trace).contracts[0]
        assert not beyond.budgets[0].requirements[0].met, c.name
