"""The two evaluators of per-run expressions agree: the polars compiler (:mod:`compile`), which
budgets use for most aggregates, and the exact row interpreter (:func:`budget.row_value`), which
they use when an aggregate's argument divides. Property tests over random expressions and runs
with missing values: none propagation, Kleene logic, `coalesce`, scalar `min`/`max`, `in`."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

import polars as pl
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from contractlang.compile import Env, compile_expr
from contractlang.evaluate.budget import row_value
from contractlang.evaluate.rational import Rational, Unsupported, compile_rational
from contractlang.lang import ast

NUMS = ("reclaims", "failures", "allocations")  # per-run plain numbers
FLAG = "accepted"  # a per-run boolean

cells = st.one_of(st.none(), st.integers(-5, 5))
runs_strategy = st.lists(
    st.fixed_dictionaries(
        {**dict.fromkeys(NUMS, cells), FLAG: st.one_of(st.none(), st.booleans())}
    ),
    min_size=1,
    max_size=8,
)


def num(value: int) -> ast.Number:
    return ast.Number(Decimal(value), str(value))


numbers: st.SearchStrategy[ast.Expr] = st.recursive(
    st.one_of(st.sampled_from([ast.Name(n) for n in NUMS]), st.integers(-3, 3).map(num)),
    lambda inner: st.one_of(
        st.builds(ast.Binary, st.sampled_from(["+", "-", "*"]), inner, inner),
        st.builds(lambda a: ast.Unary("-", a), inner),
        st.builds(lambda a, b: ast.Call("coalesce", (a, b)), inner, inner),
        st.builds(
            lambda f, a, b: ast.Call(f, (a, b)), st.sampled_from(["min", "max"]), inner, inner
        ),
    ),
    max_leaves=6,
)

conditions: st.SearchStrategy[ast.Expr] = st.recursive(
    st.one_of(
        st.just(ast.Name(FLAG)),
        st.builds(
            ast.Compare, st.sampled_from(["==", "!=", "<", "<=", ">", ">="]), numbers, numbers
        ),
        st.builds(
            lambda v, a, b: ast.In(v, (num(a), num(b))),
            numbers,
            st.integers(-3, 3),
            st.integers(-3, 3),
        ),
    ),
    lambda inner: st.one_of(
        st.builds(ast.Logic, st.sampled_from(["and", "or"]), inner, inner),
        st.builds(lambda a: ast.Unary("not", a), inner),
    ),
    max_leaves=5,
)


def frame(rows: list[dict[str, object]]) -> pl.DataFrame:
    return pl.DataFrame(rows, schema={**dict.fromkeys(NUMS, pl.Int64), FLAG: pl.Boolean})


def compiled(e: ast.Expr, runs: pl.DataFrame) -> list[object]:
    val = compile_expr(e, Env(columns=dict(runs.schema), promises={}))
    values = runs.with_columns(val.expr.alias("_v"))["_v"].to_list()  # literals broadcast
    if val.kind == "bool":
        return values
    return [None if v is None else Fraction(Decimal(v)) * val.factor for v in values]


@settings(max_examples=150, deadline=None)
@given(numbers, runs_strategy)
def test_numbers_agree_exactly(e: ast.Expr, rows: list[dict[str, object]]) -> None:
    runs = frame(rows)
    assert compiled(e, runs) == [row_value(e, r) for r in runs.iter_rows(named=True)]


NULL_RUNS = [dict.fromkeys((*NUMS, FLAG))] * 2


@settings(max_examples=150, deadline=None)
@given(conditions, runs_strategy)
# polars 2.1 gave these one row instead of two (a decimal literal compared with an all-null
# when/then or coalesce result); the compiler now puts the column side on the left
@example(ast.Compare("==", num(0), ast.Call("coalesce", (ast.Name("reclaims"), num(0)))), NULL_RUNS)
@example(ast.Compare("==", num(0), ast.Call("coalesce", (num(0), ast.Name("reclaims")))), NULL_RUNS)
@example(
    ast.Compare("<", num(0), ast.Call("min", (ast.Name("reclaims"), ast.Name("reclaims")))),
    NULL_RUNS,
)
# `coalesce(0, reclaims)` compiles to the constant 0: it is the constant side (found by this
# test, 2026-12)
@example(
    ast.Compare(
        "==",
        ast.Call("coalesce", (num(0), ast.Name("reclaims"))),
        ast.Call("min", (ast.Name("reclaims"), ast.Name("reclaims"))),
    ),
    NULL_RUNS,
)
def test_conditions_agree_exactly(e: ast.Expr, rows: list[dict[str, object]]) -> None:
    runs = frame(rows)
    assert compiled(e, runs) == [row_value(e, r) for r in runs.iter_rows(named=True)]


@settings(max_examples=150, deadline=None)
@given(numbers, numbers, runs_strategy)
def test_quotients_agree_to_twenty_places(
    top: ast.Expr, bottom: ast.Expr, rows: list[dict[str, object]]
) -> None:
    # the compiler keeps a quotient to 20 decimal places; the interpreter keeps it exact;
    # both give none for x / 0 and for a none operand
    runs = frame(rows)
    e = ast.Binary("/", top, bottom)
    for fast, exact in zip(
        compiled(e, runs), [row_value(e, r) for r in runs.iter_rows(named=True)], strict=True
    ):
        if exact is None:
            assert fast is None
        else:
            assert isinstance(fast, Fraction)
            assert isinstance(exact, Fraction)
            assert abs(fast - exact) <= Fraction(1, 10**20)


def test_coalesce_passes_over_a_constant_that_is_none() -> None:
    # coalesce(1 / 0, reclaims): 1 / 0 is none, so the value is `reclaims` (none where it is)
    e = ast.Call("coalesce", (ast.Binary("/", num(1), num(0)), ast.Name("reclaims")))
    runs = frame([{**dict.fromkeys((*NUMS, FLAG)), "reclaims": 2}, dict.fromkeys((*NUMS, FLAG))])
    assert compiled(e, runs) == [Fraction(2), None]
    assert [row_value(e, r) for r in runs.iter_rows(named=True)] == [Fraction(2), None]


# --------------------------------------------------------------------------- rational columns

# Numbers with division anywhere, and conditions over them: what budgets compute as exact
# fractions in 128-bit columns (:mod:`contractlang.evaluate.rational`).
with_quotients: st.SearchStrategy[ast.Expr] = st.recursive(
    st.one_of(st.sampled_from([ast.Name(n) for n in NUMS]), st.integers(-3, 3).map(num)),
    lambda inner: st.one_of(
        st.builds(ast.Binary, st.sampled_from(["+", "-", "*", "/"]), inner, inner),
        st.builds(lambda a: ast.Unary("-", a), inner),
        st.builds(lambda a, b: ast.Call("coalesce", (a, b)), inner, inner),
        st.builds(
            lambda f, a, b: ast.Call(f, (a, b)), st.sampled_from(["min", "max"]), inner, inner
        ),
    ),
    max_leaves=7,
)
quotient_conditions: st.SearchStrategy[ast.Expr] = st.recursive(
    st.one_of(
        st.just(ast.Name(FLAG)),
        st.builds(
            ast.Compare,
            st.sampled_from(["==", "!=", "<", "<=", ">", ">="]),
            with_quotients,
            with_quotients,
        ),
        st.builds(lambda v, a: ast.In(v, (num(a), num(-a))), with_quotients, st.integers(-3, 3)),
    ),
    lambda inner: st.one_of(
        st.builds(ast.Logic, st.sampled_from(["and", "or"]), inner, inner),
        st.builds(lambda a: ast.Unary("not", a), inner),
    ),
    max_leaves=5,
)


def rational(e: ast.Expr, runs: pl.DataFrame) -> list[object]:
    got = compile_rational(e, runs)
    if isinstance(got, Rational):
        pairs = runs.with_columns(n=got.num, d=got.den).select("n", "d").rows()
        return [None if n is None else Fraction(n, d) for n, d in pairs]
    return runs.with_columns(got.alias("_v"))["_v"].to_list()


@settings(max_examples=200, deadline=None)
@given(st.one_of(with_quotients, quotient_conditions), runs_strategy)
def test_rational_columns_agree_with_the_row_interpreter_exactly(
    e: ast.Expr, rows: list[dict[str, object]]
) -> None:
    runs = frame(rows)
    try:
        got = rational(e, runs)
    except Unsupported:  # only when an intermediate could pass 2^126
        return
    assert got == [row_value(e, r) for r in runs.iter_rows(named=True)]


def test_an_expression_too_wide_for_128_bits_goes_run_by_run() -> None:
    # (reclaims × reclaims × …) 20 times: |x|^20 with |x| up to 10^3 is 10^60 > 2^126
    e: ast.Expr = ast.Name("reclaims")
    for _ in range(19):
        e = ast.Binary("*", e, ast.Name("reclaims"))
    runs = frame([{**dict.fromkeys((*NUMS, FLAG)), "reclaims": 1000}])
    with pytest.raises(Unsupported):
        compile_rational(e, runs)
