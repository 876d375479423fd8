"""Compile checked AST expressions to exact polars expressions over the facts frames.

One function per AST node kind (:data:`_COMPILERS`); an unknown node is an internal error, never
a silent default. Each compiles to a :class:`~contractlang.decimals.Val`: a polars expression
with its decimal scale and its exact factor to base units, whose arithmetic
(:mod:`contractlang.decimals`) keeps every digit; comparisons bring both sides to a common unit
the same way.

Three-valued logic is polars' own: ``&``, ``|`` and ``~`` are Kleene, comparisons with null are
null. ``x / 0`` is none; scalar ``min``/``max`` with a none argument are none.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from fractions import Fraction

import polars as pl

from contractlang.decimals import (
    MICROS,
    Val,
    align,
    bounded,
    constant,
    dec,
    div,
    integer,
    lit_decimal,
    mul,
    times,
)
from contractlang.errors import InternalError
from contractlang.lang import ast, exact
from contractlang.lang.facts import ABSENT_AS_NONE, FACTS, PROMISES, TRACE_PREFIX
from contractlang.lang.types import UNITS
from contractlang.lang.vocabulary import COMPARE, FLIP

# --------------------------------------------------------------------------- the compiler


@dataclass(frozen=True)
class Env:
    """What names mean while compiling: the columns present and the contract's promises."""

    columns: Mapping[str, pl.DataType]
    promises: Mapping[str, ast.Expr]  # promised_notice → its duration expression


def compile_expr(e: ast.Expr, env: Env) -> Val:
    fn = _COMPILERS.get(type(e))
    if fn is None:
        raise InternalError(f"no compiler for {type(e).__name__}")
    v: Val = fn(e, env)
    if v.kind == "num" and v.exact is None:
        value = folded(e)
        if value is not None:
            v = replace(v, exact=value)
    return v


def _number(e: ast.Number, env: Env) -> Val:
    expr, scale = lit_decimal(e.value)
    return Val(expr, "num", scale)


def _percent(e: ast.Percent, env: Env) -> Val:
    expr, scale = lit_decimal(e.value)
    return Val(expr, "num", scale, Fraction(1, 100))


def _quantity(e: ast.Quantity, env: Env) -> Val:
    expr, scale = lit_decimal(e.value)
    unit = UNITS.get(e.unit)
    return Val(expr, "num", scale, unit.factor if unit else Fraction(1))


def _per(e: ast.Per, env: Env) -> Val:
    amount = compile_expr(e.amount, env)
    per = exact.unit_factor(e.unit)  # a unit of time, GPUs, …, or a currency code (1)
    if per is None:
        raise InternalError(f"no factor for the unit `{e.unit}`")
    return Val(amount.expr, amount.kind, amount.scale, amount.factor / per)


def _percent_of(e: ast.PercentOf, env: Env) -> Val:
    share = Fraction(e.percent.value) / 100
    if share == 0:  # 0% of x is 0, or none where x is
        return mul(_percent(e.percent, env), compile_expr(e.operand, env))
    return times(compile_expr(e.operand, env), share)


def _name(e: ast.Name, env: Env) -> Val:
    if e.name in PROMISES:
        return compile_expr(env.promises[e.name], env)
    fact = FACTS.get(e.name)
    if fact is None:  # an enum member
        return Val(pl.lit(e.name), "str")
    return read_column(e.name, env)


def read_column(column: str, env: Env) -> Val:
    dtype = env.columns.get(column)
    if dtype is None:
        raise InternalError(f"column `{column}` is not in the facts")
    col = pl.col(column)
    if isinstance(dtype, pl.Duration):
        return Val(col.dt.total_microseconds().cast(dec(0)), "num", 0, MICROS)
    if isinstance(dtype, pl.Decimal):
        return Val(col, "num", dtype.scale or 0)
    if dtype.is_integer():
        return Val(col.cast(dec(0)), "num", 0)
    if dtype == pl.Boolean:
        return Val(col, "bool")
    if dtype in (pl.String, pl.Categorical) or isinstance(dtype, pl.Enum):
        return Val(col.cast(pl.String), "str")
    raise InternalError(f"column `{column}` has type {dtype} the compiler cannot read")


def _trace_column(e: ast.TraceColumn, env: Env) -> Val:
    """``trace.<column>``; ``trace.price`` of a trace that records no prices is none on every
    allocation (an optional schema column the trace does not carry), so a rate reading it
    falls through to the next rate, as on an allocation without a price."""
    if e.column == ABSENT_AS_NONE and TRACE_PREFIX + e.column not in env.columns:
        return Val(pl.lit(None, dtype=dec(0)), "num", 0)
    return read_column(TRACE_PREFIX + e.column, env)


def _string(e: ast.String, env: Env) -> Val:
    return Val(pl.lit(e.value), "str")


def _bool(e: ast.Bool, env: Env) -> Val:
    return Val(pl.lit(e.value), "bool")


def _none(e: ast.NoneLit, env: Env) -> Val:
    return Val(pl.lit(None, dtype=dec(0)), "null")


def _unary(e: ast.Unary, env: Env) -> Val:
    v = compile_expr(e.operand, env)
    if e.op == "not":
        return Val(~truth(v), "bool")
    return Val(-v.expr, v.kind, v.scale, v.factor)


def _binary(e: ast.Binary, env: Env) -> Val:
    left, right = folded(e.left), folded(e.right)
    if left is not None and right is not None:
        value = exact.evaluate(e)  # none for `x / 0`
        return constant(value) if isinstance(value, Fraction) else _none_number()
    if e.op == "*" and right:
        return times(compile_expr(e.left, env), right)
    if e.op == "*" and left:
        return times(compile_expr(e.right, env), left)
    if e.op == "/" and right:
        return times(compile_expr(e.left, env), 1 / right)
    a = compile_expr(e.left, env)
    b = compile_expr(e.right, env)
    if e.op in ("+", "-"):
        (x, y), factor, scale = align([a, b])
        x, y = (z.cast(dec(scale)) for z in (x, y))  # polars' own rescaling of a sum that
        # does not fit reads `division by zero`; a cast that does not fit is an overflow (E405)
        return bounded(Val(x + y if e.op == "+" else x - y, "num", scale, factor))
    if e.op == "*":
        return bounded(mul(a, b, of_value=True))
    return div(a, b)


def folded(e: ast.Expr) -> Fraction | None:
    """The exact value of ``e`` when it is a constant number that is not none, else None."""
    if not exact.is_constant(e):
        return None
    value = exact.evaluate(e)
    return value if isinstance(value, Fraction) else None


def _none_number() -> Val:
    """A constant number that is none (``1 USD / 0``)."""
    return Val(pl.lit(None, dtype=dec(0)), "num")


def comparison_expr(op: str, a: Val, b: Val) -> pl.Expr:
    if "null" in (a.kind, b.kind):
        return pl.lit(None, dtype=pl.Boolean)
    if (
        a.kind == b.kind == "num"
        and (a.exact is not None or b.exact is not None)
        and (a.factor > 0 and b.factor > 0)
    ):
        if a.exact is not None and b.exact is not None:
            return pl.lit(bool(COMPARE[op](a.exact, b.exact)))
        if a.exact is not None:
            return _against(FLIP[op], b, a.exact)
        assert b.exact is not None
        return _against(op, a, b.exact)
    (x, y), _, _ = align([a, b])
    result: pl.Expr = COMPARE[op](x, y)  # Python's operators, which polars expressions overload
    return result


def _against(op: str, v: Val, c: Fraction) -> pl.Expr:
    """``v OP c`` for a constant ``c``, exactly, with no rescaling of ``v``: ``c`` in ``v``'s
    runtime units and last places, ``t = c / factor × 10^scale``, and ``v``'s digits ``m`` (an
    integer) against it — ``m < t`` is ``m <= ceil(t) - 1``, ``m == t`` is false where ``t``
    is not an integer, and a bound beyond the 38 digits ``m`` can have decides it alone (none
    where ``v`` is none)."""
    t = c / v.factor * 10**v.scale
    floor, ceil = t.numerator // t.denominator, -(-t.numerator // t.denominator)
    if op == "==":
        return v.expr == integer(floor, v.scale) if floor == t and _fits(t) else _known(v, False)
    if op == "!=":
        return v.expr != integer(floor, v.scale) if floor == t and _fits(t) else _known(v, True)
    if op in ("<", "<="):
        most = ceil - 1 if op == "<" else floor  # m <= most
        if not _fits(most):
            return _known(v, most > 0)
        return v.expr <= integer(most, v.scale)
    least = floor + 1 if op == ">" else ceil  # m >= least
    if not _fits(least):
        return _known(v, least < 0)
    return v.expr >= integer(least, v.scale)


def _fits(m: Fraction | int) -> bool:
    """Whether ``m`` is within the digits (38) of a decimal's runtime value."""
    return -(10**38) < m < 10**38


def _known(v: Val, answer: bool) -> pl.Expr:
    """``answer`` wherever ``v`` is not none (none where it is)."""
    return pl.when(v.expr.is_null()).then(pl.lit(None, dtype=pl.Boolean)).otherwise(answer)


def _compare(e: ast.Compare, env: Env) -> Val:
    left, right, op = e.left, e.right, str(e.op)
    if not _varies(left, env) and _varies(right, env):
        # the column side goes left: polars 2.1 returns one row for `decimal literal < x`
        # when x is an all-null result of when/then (tests/test_semantics_agree.py)
        left, right, op = right, left, FLIP[op]
    return Val(comparison_expr(op, compile_expr(left, env), compile_expr(right, env)), "bool")


def _logic(e: ast.Logic, env: Env) -> Val:
    a = truth(compile_expr(e.left, env))
    b = truth(compile_expr(e.right, env))
    return Val(a & b if e.op == "and" else a | b, "bool")


def truth(v: Val) -> pl.Expr:
    """``v`` as a boolean: the literal ``none`` is a boolean none here (``true or none`` is
    true, ``true and none`` none), not the decimal none it is beside a number."""
    return pl.lit(None, dtype=pl.Boolean) if v.kind == "null" else v.expr


def _in(e: ast.In, env: Env) -> Val:
    """``x in [a, b, …]``: ``x == a or x == b or …`` (Kleene: none where ``x`` is none and no
    option is equal); ``x in []`` is false, as an empty ``or`` is. Text against text written
    in the file is one lookup (``is_in``, the same values): a chain of thousands of ``or``
    took polars time and memory growing with the square of its length."""
    value = compile_expr(e.value, env)
    words = [_word(opt, env) for opt in e.options]
    if value.kind == "str" and words and all(w is not None for w in words):
        found = value.expr.is_in(pl.Series(words, dtype=pl.String).implode())
        return Val(~found if e.negated else found, "bool")
    result: pl.Expr = pl.lit(False)
    constant = not _varies(e.value, env)
    for k, opt in enumerate(e.options):
        option = compile_expr(opt, env)
        flip = constant and _varies(opt, env)  # the column side left, as in _compare
        eq = comparison_expr("==", option, value) if flip else comparison_expr("==", value, option)
        result = eq if k == 0 else result | eq
    return Val(~result if e.negated else result, "bool")


def _word(e: ast.Expr, env: Env) -> str | None:
    """The text of a string literal or an enum member (``spot``), else None."""
    if isinstance(e, ast.String):
        return e.value
    if isinstance(e, ast.Name) and e.name not in PROMISES and e.name not in FACTS:
        return e.name
    return None


def _call(e: ast.Call, env: Env) -> Val:
    args = [compile_expr(a, env) for a in e.args]
    if e.func == "coalesce":
        return _coalesce(e, args, env)
    if e.func in ("min", "max"):
        exprs, factor, scale = align(args)
        exprs = [x.cast(dec(scale)) for x in exprs]
        any_null = pl.any_horizontal([x.is_null() for x in exprs])
        pick = pl.min_horizontal(exprs) if e.func == "min" else pl.max_horizontal(exprs)
        expr = pl.when(any_null).then(pl.lit(None, dtype=dec(scale))).otherwise(pick)
        return Val(expr, "num", scale, factor)
    raise InternalError(f"function `{e.func}` is not a scalar function")


def _coalesce(e: ast.Call, args: list[Val], env: Env) -> Val:
    """The first argument that is not none. Arguments after a constant that is not none are
    never reached and a `none` literal is skipped, so the result is either that constant or
    ``first_column_expr.fill_null(…)`` — always a whole column or a scalar: polars 2.1 gives
    `lit == coalesce(col, lit)` (and `lit.fill_null(col)`) the length of a scalar when the
    column is all null (tests/test_semantics_agree.py)."""
    kinds = {a.kind for a in args} - {"null"}
    kind = kinds.pop() if kinds else "null"
    exprs, factor, scale = align(args)
    if kind == "num":
        exprs = [x.cast(dec(scale)) for x in exprs]
    kept: list[pl.Expr] = []
    for node, val, x in zip(e.args, args, exprs, strict=True):
        if val.kind == "null" or _constant_none(node, env):
            continue
        kept.append(x)
        if not _reads_columns(node, env):
            break
    if not kept:
        return Val(pl.lit(None, dtype=dec(0)), "null")
    picked = kept[-1]
    for x in reversed(kept[:-1]):
        picked = x.fill_null(picked)
    return Val(picked, kind, scale, factor)


def _constant_none(e: ast.Expr, env: Env) -> bool:
    """A constant number that is none, such as ``1 USD / 0``: coalesce passes over it."""
    if _reads_columns(e, env) or any(isinstance(n, ast.Name) for n in ast.walk(e)):
        return False
    return exact.evaluate(e) is None and not isinstance(e, (ast.String, ast.Bool))


def _varies(e: ast.Expr, env: Env) -> bool:
    """Whether ``e`` compiles to a whole column, not a scalar: it reads a column that no
    coalesce passes over (``coalesce(0, reclaims)`` is the constant 0, as :func:`_coalesce`
    compiles it)."""
    if isinstance(e, ast.Call) and e.func == "coalesce":
        for arg in e.args:
            if isinstance(arg, ast.NoneLit) or _constant_none(arg, env):
                continue
            if _varies(arg, env):
                return True
            if not _reads_columns(arg, env):
                return False
        return False
    if isinstance(e, ast.TraceColumn) or (isinstance(e, ast.Name) and e.name in FACTS):
        return True
    return any(_varies(c, env) for c in ast.children(e))


def _reads_columns(e: ast.Expr, env: Env) -> bool:
    """Whether ``e`` reads a column of the facts (a fact or `trace.<c>`)."""
    return any(
        isinstance(n, ast.TraceColumn) or (isinstance(n, ast.Name) and n.name in FACTS)
        for n in ast.walk(e)
    )


_COMPILERS: dict[type, Callable[..., Val]] = {
    ast.Number: _number,
    ast.Percent: _percent,
    ast.Quantity: _quantity,
    ast.Per: _per,
    ast.PercentOf: _percent_of,
    ast.Name: _name,
    ast.TraceColumn: _trace_column,
    ast.String: _string,
    ast.Bool: _bool,
    ast.NoneLit: _none,
    ast.Unary: _unary,
    ast.Binary: _binary,
    ast.Compare: _compare,
    ast.Logic: _logic,
    ast.In: _in,
    ast.Call: _call,
}


def condition(when: ast.Expr | None, env: Env) -> pl.Expr:
    """A `when` as a boolean that is true only where the condition is true (none → false)."""
    if when is None:
        return pl.lit(True)
    return truth(compile_expr(when, env)).fill_null(False)
