"""Budgets: each `require` measured over the runs of one contract, exactly.

Aggregates (design §5) run over runs and skip none: ``mean``, ``sum``, ``min``, ``max``,
``share(cond)`` (runs where cond is true ÷ runs where it is not none), ``count(cond)`` and ``pN``
(linear interpolation between closest ranks, numpy's default). Over an empty set they are none
(``count`` is 0), and a requirement on none is "not measurable" and not met. Everything is
computed with Python ``Fraction``s from the exact decimals of the runs table — no float.
"""

from __future__ import annotations

import math
from datetime import timedelta
from decimal import Decimal
from fractions import Fraction

import polars as pl

from contractlang.compile import Env, compile_expr, truth
from contractlang.errors import InternalError
from contractlang.evaluate.bounds import Bounded, decides, interval
from contractlang.evaluate.quotients import Quotients, aggregate_quotients
from contractlang.evaluate.rational import Rational, Unsupported, compile_rational
from contractlang.evaluate.results import BudgetResult, DisplayUnit, RequirementResult, Verdict
from contractlang.lang import ast, exact
from contractlang.lang.numbers import MICROS_PER_SECOND, micros
from contractlang.lang.show import source_text
from contractlang.lang.types import UNITS, is_currency_code
from contractlang.lang.vocabulary import COMPARE, COUNTING_AGGREGATES, FLIP, percentile

Value = exact.Value
_I128 = 2**127 - 1


def budget_currencies(budget: ast.Budget) -> list[tuple[str, ast.Quantity]]:
    """Money literals in a budget, with their currency codes (for the E402 check)."""
    out = []
    for req in budget.requires:
        for node in ast.walk(req.expr):
            if isinstance(node, ast.Quantity) and is_currency_code(node.unit):
                out.append((node.unit, node))
    return out


def evaluate_budget(budget: ast.Budget, runs: pl.DataFrame, text_of: str | None) -> BudgetResult:
    """Measure each requirement of ``budget`` over ``runs`` (``text_of``: the budget's source
    text, for the requirement's wording)."""
    env = Env(columns=dict(runs.schema), promises={})
    results = []
    for req in budget.requires:
        if not isinstance(req.expr, ast.Compare):
            raise InternalError("a checked `require` is not a comparison")
        cmp = req.expr
        left_is_value = ast.has_aggregate(cmp.left)
        value_side, limit_side = (cmp.left, cmp.right) if left_is_value else (cmp.right, cmp.left)
        op = cmp.op if left_is_value else FLIP[cmp.op]
        limit = _number(_eval(limit_side, runs, env))
        if limit is None:
            raise InternalError("a budget limit evaluated to none")
        value = _measure(value_side, limit, runs, env)
        if value is None:
            verdict: Verdict = "not measurable"
        else:
            verdict = "met" if COMPARE[op](value, limit) else "not met"
        text = _text(req, text_of)
        results.append(
            RequirementResult(
                text, req.span.line, op, value, limit, display_unit(limit_side), verdict
            )
        )
    return BudgetResult(budget.name, budget.span.line, tuple(results))


def _measure(e: ast.Expr, limit: Fraction, runs: pl.DataFrame, env: Env) -> Fraction | None:
    """The value of a requirement's measured side. Aggregates known only between bounds (sums
    and means of quotients) are resolved exactly only when the bounds cannot decide the
    verdict and every figure shown (:func:`~contractlang.evaluate.bounds.decides`); otherwise
    the value is their lower bound's, which shows the same digits and verdict."""
    found: dict[int, Value | Bounded] = {}

    def known(node: ast.Expr) -> Value | Bounded:
        if id(node) not in found:
            if not (isinstance(node, ast.Call) and ast.is_aggregate_call(node)):
                raise InternalError(f"cannot evaluate {type(node).__name__} at budget level")
            found[id(node)] = aggregate(node, runs, env)
        return found[id(node)]

    def low(node: ast.Expr) -> Value:
        got = known(node)
        return got.low if isinstance(got, Bounded) else got

    value = _number(exact.evaluate(e, low))
    if not any(isinstance(v, Bounded) for v in found.values()):
        return value

    def bounded(node: ast.Expr) -> Fraction | Bounded | None:
        got = known(node)
        return got if isinstance(got, (Fraction, Bounded)) else None

    iv = interval(e, bounded)
    if iv is not None and decides(iv[0], iv[1], limit):
        return value

    def resolved(node: ast.Expr) -> Value:
        got = known(node)
        return got.exact() if isinstance(got, Bounded) else got

    return _number(exact.evaluate(e, resolved))


def _text(req: ast.Require, text: str | None) -> str:
    return source_text(req.expr.span, text) or "require"


def _number(v: Value) -> Fraction | None:
    if isinstance(v, bool):
        return Fraction(int(v))
    return v if isinstance(v, Fraction) else None


def display_unit(limit: ast.Expr) -> DisplayUnit:
    """The unit a limit is written in, to show its requirement's value and margin in.

    >>> per = ast.Per(ast.Quantity(Decimal(9), "USD"), "gpu_hour")
    >>> display_unit(per)
    DisplayUnit(label='USD per gpu_hour', factor=Fraction(1, 3600), kind='money')
    """
    for node in ast.walk(limit):
        if isinstance(node, ast.Per) and node.unit in UNITS:
            amount = display_unit(node.amount)
            label = f"{amount.label} per {node.unit}".strip()
            return DisplayUnit(label, amount.factor / UNITS[node.unit].factor, amount.kind)
        if isinstance(node, ast.Percent):
            return DisplayUnit("%", Fraction(1, 100), "percent")
        if isinstance(node, ast.Quantity):
            if is_currency_code(node.unit):
                return DisplayUnit(node.unit, Fraction(1), "money")
            unit = UNITS.get(node.unit)
            if unit is not None:
                label = node.unit if node.unit.endswith("s") else node.unit + "s"
                return DisplayUnit(label, unit.factor, "quantity")
    return DisplayUnit("", Fraction(1), "plain")


# --------------------------------------------------------------------------- interpretation


def _eval(e: ast.Expr, runs: pl.DataFrame, env: Env) -> Value:
    """Interpret a budget-level expression: literals and arithmetic (:mod:`exact`) over the
    values of aggregates."""

    def leaf(node: ast.Expr) -> Value:
        if isinstance(node, ast.Call) and ast.is_aggregate_call(node):
            got = aggregate(node, runs, env)
            return got.exact() if isinstance(got, Bounded) else got
        raise InternalError(f"cannot evaluate {type(node).__name__} at budget level")

    return exact.evaluate(e, leaf)


def _exact(value: object) -> Fraction:
    """A polars number (Decimal or int) as an exact Fraction."""
    return Fraction(Decimal(value)) if not isinstance(value, int) else Fraction(value)  # type: ignore[arg-type]


def aggregate(call: ast.Call, runs: pl.DataFrame, env: Env) -> Value | Bounded:
    """One aggregate over the runs, computed by polars on exact decimals (sums of decimals
    are exact; means divide once, as Fractions) — no float anywhere. Aggregates of quotients
    go to :mod:`~contractlang.evaluate.quotients`."""
    if any(isinstance(n, ast.Binary) and n.op == "/" for n in ast.walk(call.args[0])):
        return _aggregate_quotients(call, runs)
    val = compile_expr(call.args[0], env)
    # a condition counted: the literal none is a boolean none (`share(none)` has no value)
    expr = truth(val) if call.func in COUNTING_AGGREGATES else val.expr
    # one value per run, even for an argument without a column (`count(true)`): with_columns
    # broadcasts a literal where select would not
    runs = runs.with_columns(expr.alias("_v")).select("_v")
    v = pl.col("_v")
    if call.func in COUNTING_AGGREGATES:
        row = runs.select(
            true=v.fill_null(False).cast(pl.Int64).sum(), known=v.is_not_null().sum()
        ).row(0, named=True)
        if call.func == "count":
            return Fraction(row["true"])
        return None if row["known"] == 0 else Fraction(row["true"], row["known"])
    pct = percentile(call.func)
    if pct is not None:
        return exact_percentile(runs.to_series(), Fraction(pct, 100), val.factor)
    row = runs.select(n=v.count(), total=v.sum(), low=v.min(), high=v.max()).row(0, named=True)
    if row["n"] == 0:
        return None
    pick = {"sum": "total", "mean": "total", "min": "low", "max": "high"}.get(call.func)
    if pick is None:
        raise InternalError(f"unknown aggregate `{call.func}`")
    result = _exact(row[pick]) * val.factor
    return result / row["n"] if call.func == "mean" else result


def _aggregate_quotients(call: ast.Call, runs: pl.DataFrame) -> Value | Bounded:
    """An aggregate whose argument divides: a quotient such as ``lost_gpu_time /
    metered_gpu_time`` = 1/3 has no finite decimal, and the mean of 1/3, 1/3, 1/3 and 0 must
    be exactly 1/4, not 0.2499… from quotients cut to 20 places. The argument is computed as
    exact fractions in 128-bit columns (:mod:`~contractlang.evaluate.rational`), or, when it
    does not fit them, run by run with Fractions (:func:`row_value`)."""
    arg = call.args[0]
    try:
        compiled = compile_rational(arg, runs)
    except Unsupported:
        compiled = None
    if isinstance(compiled, Rational) and call.func not in COUNTING_AGGREGATES:
        frame = runs.select(num=compiled.num, den=compiled.den)
        return aggregate_quotients(call.func, Quotients.of_columns(frame, Fraction(1)))
    if isinstance(compiled, pl.Expr) and call.func in COUNTING_AGGREGATES:
        said = runs.with_columns(compiled.alias("_v")).get_column("_v")
        return _counted(call.func, int(said.sum()), said.count())
    names = sorted({n.name for n in ast.walk(arg) if isinstance(n, ast.Name)} & set(runs.columns))
    rows = runs.select(names).iter_rows(named=True) if names else ({} for _ in range(runs.height))
    values = [row_value(arg, row) for row in rows]
    if call.func in COUNTING_AGGREGATES:
        true = sum(1 for x in values if x is True)
        return _counted(call.func, true, sum(1 for x in values if isinstance(x, bool)))
    nums = [x for x in values if isinstance(x, Fraction)]
    if all(abs(x.numerator) <= _I128 and x.denominator <= _I128 for x in nums):
        pairs = [(x.numerator, x.denominator) for x in nums]
        return aggregate_quotients(call.func, Quotients.of_pairs(pairs, Fraction(1)))
    return _exact_aggregate(call.func, nums)


def _counted(func: str, true: int, known: int) -> Fraction | None:
    """``count`` (runs where true) or ``share`` (of the runs where not none)."""
    if func == "count":
        return Fraction(true)
    return None if known == 0 else Fraction(true, known)


def _exact_aggregate(func: str, nums: list[Fraction]) -> Fraction | None:
    """Exact Fractions, for per-run values beyond 128 bits (slow, and rare)."""
    if not nums:
        return None
    ordered = sorted(nums)
    pct = percentile(func)
    if pct is not None:
        return _interpolate(ordered, Fraction(pct, 100))
    if func in ("sum", "mean"):
        total = sum(ordered, Fraction(0))
        return total / len(ordered) if func == "mean" else total
    if func in ("min", "max"):
        return ordered[0] if func == "min" else ordered[-1]
    raise InternalError(f"unknown aggregate `{func}`")


def _ranks(n: int, q: Fraction) -> tuple[int, int, Fraction]:
    """The two closest ranks around position ``q × (n − 1)`` and the weight of the upper one:
    linear interpolation between closest ranks, numpy's default."""
    pos = q * (n - 1)
    lo = math.floor(pos)
    return lo, min(lo + 1, n - 1), pos - lo


def _interpolate(ordered: list[Fraction], q: Fraction) -> Fraction:
    lo, hi, weight = _ranks(len(ordered), q)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * weight


RowValue = exact.Value
_I128 = 2**127 - 1


def _cell(v: object) -> RowValue:
    """A runs-table cell as an exact value in base units (durations in seconds)."""
    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, timedelta):
        return Fraction(micros(v), MICROS_PER_SECOND)
    if isinstance(v, (int, Decimal)):
        return Fraction(v)
    raise InternalError(f"a run fact holds a {type(v).__name__} a budget cannot read")


def row_value(e: ast.Expr, row: dict[str, object]) -> RowValue:
    """One run's value of a per-run expression, exactly: the semantics of :mod:`compile` (none
    propagates through arithmetic and comparisons, ``x / 0`` is none, logic is Kleene) in
    Fractions, arithmetic by :mod:`exact`. Names not in ``row`` are enum members."""

    def leaf(node: ast.Expr) -> RowValue:
        match node:
            case ast.Name(name=name):
                return _cell(row[name]) if name in row else name
            case ast.String(value=text):
                return text
            case ast.Unary(op="not", operand=o):
                x = row_value(o, row)
                return None if x is None else not x
            case ast.Compare(op=op, left=lhs, right=rhs):
                x, y = row_value(lhs, row), row_value(rhs, row)
                return None if x is None or y is None else bool(COMPARE[op](x, y))
            case ast.Logic(op=op, left=lhs, right=rhs):
                x, y = row_value(lhs, row), row_value(rhs, row)
                decides = op == "or"  # true decides `or`, false decides `and`
                if decides in (x, y):
                    return decides
                return None if None in (x, y) else not decides
            case ast.In(value=value, options=options, negated=negated):
                x = row_value(value, row)
                if x is None:
                    return None
                return any(x == row_value(o, row) for o in options) != negated
        raise InternalError(f"cannot evaluate {type(node).__name__} for a run")

    return exact.evaluate(e, leaf)


def exact_percentile(
    values: pl.Series, q: Fraction, factor: Fraction = Fraction(1)
) -> Fraction | None:
    """The q-th quantile of ``values`` (nulls skipped) by linear interpolation between the
    closest ranks (numpy's default), exactly: polars sorts, Python interpolates the two values
    around position ``q × (n − 1)``. None when there are no values.

    >>> exact_percentile(pl.Series([10, 40, 20, 30]), Fraction(95, 100))
    Fraction(77, 2)
    """
    ordered = values.drop_nulls().sort()
    n = ordered.len()
    if n == 0:
        return None
    lo, hi, weight = _ranks(n, q)
    low, high = _exact(ordered[lo]) * factor, _exact(ordered[hi]) * factor
    return low + (high - low) * weight
