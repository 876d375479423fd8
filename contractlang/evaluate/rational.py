"""Per-run expressions of a budget as exact fractions in 128-bit polars columns: each number a
numerator and a positive denominator, so ``lost_gpu_time / metered_gpu_time > 10%`` is decided
exactly for every run at polars' speed, not run by run in Python.

The semantics are :func:`~contractlang.evaluate.budget.row_value`'s (none propagates, ``x / 0``
is none, logic is Kleene, values in base units). Every product is bounded before it is formed,
from the largest magnitudes in the data; an expression that could leave 128 bits, or that reads
text (enum members), raises :class:`Unsupported` and is computed run by run instead.

>>> import polars as pl
>>> from contractlang.lang import ast
>>> runs = pl.DataFrame({"a": [1, 2], "b": [3, 0]})
>>> q = compile_rational(ast.Binary("/", ast.Name("a"), ast.Name("b")), runs)
>>> runs.select(n=q.num, d=q.den).rows()
[(1, 3), (None, None)]
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import polars as pl

from contractlang.lang import ast, exact
from contractlang.lang.numbers import MICROS_PER_SECOND
from contractlang.lang.vocabulary import COMPARE

#: Largest magnitude any intermediate may reach (products are formed below 2¹²⁷).
LIMIT = 2**126


class Unsupported(Exception):
    """The expression cannot be kept in 128 bits (or reads text): compute it run by run."""


@dataclass(frozen=True)
class Rational:
    """A numeric column ``num / den`` (``den > 0``; both none together), with bounds
    ``|num| <= top`` and ``den <= bottom``."""

    num: pl.Expr
    den: pl.Expr
    top: int
    bottom: int


def _i128(value: int) -> pl.Expr:
    return pl.lit(value, dtype=pl.Int128)


def _checked(num: pl.Expr, den: pl.Expr, top: int, bottom: int) -> Rational:
    if top > LIMIT or bottom > LIMIT:
        raise Unsupported
    return Rational(num, den, top, bottom)


def _constant(value: Fraction) -> Rational:
    return _checked(
        _i128(value.numerator), _i128(value.denominator), abs(value.numerator), value.denominator
    )


def _column(name: str, runs: pl.DataFrame) -> Rational | pl.Expr:
    dtype = runs.schema[name]
    col = pl.col(name)
    if dtype == pl.Boolean:
        return col
    if isinstance(dtype, pl.Duration):
        raw, den = col.dt.total_microseconds().cast(pl.Int128), MICROS_PER_SECOND
    elif isinstance(dtype, pl.Decimal):
        raw, den = col.to_physical().cast(pl.Int128), 10 ** (dtype.scale or 0)
    elif dtype.is_integer():
        raw, den = col.cast(pl.Int128), 1
    else:
        raise Unsupported
    top = runs.select(raw.abs().max()).item() or 0
    return _checked(raw, pl.when(raw.is_null()).then(None).otherwise(_i128(den)), top, den)


def _number(x: Rational | pl.Expr) -> Rational:
    if not isinstance(x, Rational):
        raise Unsupported
    return x


def _boolean(x: Rational | pl.Expr) -> pl.Expr:
    if isinstance(x, Rational):
        raise Unsupported
    return x


def _add(a: Rational, b: Rational, sign: int) -> Rational:
    num = a.num * b.den + _i128(sign) * b.num * a.den
    return _checked(num, a.den * b.den, a.top * b.bottom + b.top * a.bottom, a.bottom * b.bottom)


def _mul(a: Rational, b: Rational) -> Rational:
    return _checked(a.num * b.num, a.den * b.den, a.top * b.top, a.bottom * b.bottom)


def _div(a: Rational, b: Rational) -> Rational:
    zero = b.num == 0
    sign = pl.when(b.num < 0).then(_i128(-1)).otherwise(_i128(1))
    num = pl.when(zero).then(None).otherwise(a.num * b.den * sign)
    den = pl.when(zero).then(None).otherwise(a.den * b.num * sign)
    return _checked(num, den, a.top * b.bottom, a.bottom * b.top)


def _scale(a: Rational, k: Fraction) -> Rational:
    return _mul(a, _constant(k))


def _compare(op: str, a: Rational, b: Rational) -> pl.Expr:
    if a.top * b.bottom + b.top * a.bottom > LIMIT:
        raise Unsupported
    diff = a.num * b.den - b.num * a.den
    return COMPARE[op](diff, _i128(0))  # type: ignore[no-any-return]


def _pick(first: Rational, cond: pl.Expr, other: Rational) -> Rational:
    return Rational(
        pl.when(cond).then(first.num).otherwise(other.num),
        pl.when(cond).then(first.den).otherwise(other.den),
        max(first.top, other.top),
        max(first.bottom, other.bottom),
    )


def compile_rational(e: ast.Expr, runs: pl.DataFrame) -> Rational | pl.Expr:
    """``e`` over ``runs`` as a :class:`Rational` (numbers) or a Boolean expression."""
    c = exact.constant_value(e) if exact.is_constant(e) else None
    if c is not None:
        return _constant(c)
    match e:
        case ast.Name(name=name) if name in runs.columns:
            return _column(name, runs)
        case ast.Bool(value=truth):
            return pl.lit(truth)
        case ast.Unary(op="-", operand=o):
            x = _number(compile_rational(o, runs))
            return Rational(_i128(-1) * x.num, x.den, x.top, x.bottom)  # no `neg` on Int128
        case ast.Unary(op="not", operand=o):
            return ~_boolean(compile_rational(o, runs))
        case ast.Binary(op=op, left=lhs, right=rhs):
            x, y = _number(compile_rational(lhs, runs)), _number(compile_rational(rhs, runs))
            if op == "*":
                return _mul(x, y)
            return _div(x, y) if op == "/" else _add(x, y, 1 if op == "+" else -1)
        case ast.Per(amount=a, unit=u):
            factor = exact.unit_factor(u)
            if factor is None:
                raise Unsupported
            return _scale(_number(compile_rational(a, runs)), 1 / factor)
        case ast.PercentOf(percent=p, operand=o):
            return _scale(_number(compile_rational(o, runs)), Fraction(p.value) / 100)
        case ast.Compare(op=op, left=lhs, right=rhs):
            left, right = compile_rational(lhs, runs), compile_rational(rhs, runs)
            if isinstance(left, pl.Expr) and isinstance(right, pl.Expr) and op in ("==", "!="):
                return left == right if op == "==" else left != right
            return _compare(op, _number(left), _number(right))
        case ast.Logic(op=op, left=lhs, right=rhs):
            first, second = (
                _boolean(compile_rational(lhs, runs)),
                _boolean(compile_rational(rhs, runs)),
            )
            return first | second if op == "or" else first & second  # polars' logic is Kleene's
        case ast.In(value=value, options=options, negated=negated):
            x = _number(compile_rational(value, runs))
            hits = [_compare("==", x, _number(compile_rational(o, runs))) for o in options]
            anyhit = pl.any_horizontal([h.fill_null(False) for h in hits])
            said = ~anyhit if negated else anyhit
            return pl.when(x.num.is_null()).then(None).otherwise(said)
        case ast.Call(func="min" | "max" as func, args=args) if len(args) >= 2:
            parts = [_number(compile_rational(a, runs)) for a in args]
            best = parts[0]
            for other in parts[1:]:
                keep = _compare("<=" if func == "min" else ">=", best, other)
                best = _pick(best, keep, other)
            missing = pl.any_horizontal([p.num.is_null() for p in parts])
            return Rational(
                pl.when(missing).then(None).otherwise(best.num),
                pl.when(missing).then(None).otherwise(best.den),
                best.top,
                best.bottom,
            )
        case ast.Call(func="coalesce", args=args):
            parts = [_number(compile_rational(a, runs)) for a in args]
            best = parts[-1]
            for earlier in reversed(parts[:-1]):
                best = _pick(earlier, earlier.num.is_not_null(), best)
            return best
    raise Unsupported
