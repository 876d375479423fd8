"""Compile checked AST expressions to exact polars expressions over the facts frames.

One function per AST node kind (:data:`_COMPILERS`); an unknown node is an internal error, never
a silent default. Numbers are polars ``Decimal`` values whose *scale* the compiler tracks, with an
exact rational *factor* to base units kept at compile time::

    real value = runtime value × factor        (base units: second, GPU, one currency unit)

so ``2.10 USD per gpu_hour`` is the decimal ``2.10`` with factor ``1/3600`` and ``runtime`` is an
integer of microseconds with factor ``1/1_000_000``. A constant (an expression that reads no
column: ``3 USD / 7 gpus``) is computed exactly, in Fractions (:mod:`contractlang.lang.exact`),
and a product or quotient with a constant operand multiplies the other operand's factor, so no
constant is ever rounded, nor divided at runtime (``1 USD per gpu_hour / 3 * 3`` is exactly
``1 USD per gpu_hour``). Products of two columns cast first so that polars (which rounds a
product to the larger input scale) keeps every digit; sums bring both sides to a common factor
with exact integer multipliers and to a common scale by explicit casts, and comparisons to a
common factor; the factor is applied once, by one division at scale 20, when a value leaves the
compiler (:func:`to_money`, :func:`to_micros`).

Three-valued logic is polars' own: ``&``, ``|`` and ``~`` are Kleene, comparisons with null are
null. ``x / 0`` is none; scalar ``min``/``max`` with a none argument are none.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from decimal import Decimal
from fractions import Fraction
from typing import Literal

import polars as pl

from contractlang.errors import InternalError
from contractlang.lang import ast, exact
from contractlang.lang.facts import FACTS, PROMISES, TRACE_PREFIX
from contractlang.lang.numbers import MICROS_PER_SECOND, scaled
from contractlang.lang.types import UNITS
from contractlang.lang.vocabulary import COMPARE, FLIP

#: Scale of money facts (``charge``, credits) before a ledger line rounds them; design §6 asks
#: for at least 18 places.
MONEY_SCALE = 20
#: Scale a quotient keeps.
DIV_SCALE = 20
#: Scales above this are rounded back in products, to stay inside 38 digits.
MAX_SCALE = 24
#: The most places any runtime value is held at (a Decimal(38, 37) keeps one digit before the
#: point).
MAX_PLACES = 37
#: A constant operand of ``*`` or ``/`` with this many digits or more in both its numerator
#: and its denominator multiplies or divides the runtime value as a decimal; any other only
#: the factor (:func:`times`).
FOLD_DIGITS = 10
MICROS = Fraction(1, MICROS_PER_SECOND)

ValKind = Literal["num", "bool", "str", "null"]


@dataclass(frozen=True)
class Val:
    """A compiled expression: the polars expression, its kind, and for numbers the decimal scale
    of the runtime value and the exact factor to base units."""

    expr: pl.Expr
    kind: ValKind
    scale: int = 0
    factor: Fraction = Fraction(1)
    #: a constant's exact value in base units (known before any row is read), else None
    exact: Fraction | None = None


def dec(scale: int) -> pl.Decimal:
    return pl.Decimal(38, scale)


def lit_decimal(value: Decimal | int | Fraction) -> tuple[pl.Expr, int]:
    """A decimal literal and its scale; a Fraction must have a terminating expansion."""
    if isinstance(value, Fraction):
        value = _fraction_to_decimal(value)
    d = Decimal(value)
    exp = d.as_tuple().exponent
    scale = max(0, -exp) if isinstance(exp, int) else 0
    return pl.lit(d, dtype=dec(scale)), scale


def _fraction_to_decimal(f: Fraction) -> Decimal:
    den = f.denominator
    twos = fives = 0
    while den % 2 == 0:
        den //= 2
        twos += 1
    while den % 5 == 0:
        den //= 5
        fives += 1
    if den != 1:
        raise InternalError(f"{f} has no finite decimal expansion")
    places = max(twos, fives)
    return scaled(f.numerator * 10**places // f.denominator, places)


def _gcd(a: Fraction, b: Fraction) -> Fraction:
    """The largest rational g with a/g and b/g both integers."""
    return Fraction(math.gcd(a.numerator, b.numerator), math.lcm(a.denominator, b.denominator))


def constant(value: Fraction) -> Val:
    """The exact constant ``value`` (in base units) as a number: a decimal literal when its
    expansion ends within :data:`MAX_SCALE` places, else its numerator with the factor
    1/denominator — so the literal is exact either way."""
    if _decimal(value):
        expr, scale = lit_decimal(value)
        return Val(expr, "num", scale)
    return Val(_integer(value.numerator), "num", 0, Fraction(1, value.denominator))


def times(v: Val, c: Fraction) -> Val:
    """``v × c`` for a constant ``c`` other than 0.

    ``c`` goes to the factor, exactly, with no runtime product nor rounding (kept positive: a
    negative ``c`` negates the runtime value) — unless both its numerator and denominator
    have :data:`FOLD_DIGITS` digits or more (``× 33.33333333333333333``, ``/ 3.333333333333333333
    minutes``): the factor would hold the constant's many digits over a runtime value far
    from the value's size, and overflow wherever it is applied. Then the part of ``c`` that
    is a decimal multiplies ``v`` at runtime, as a decimal product does (rounded back at
    :data:`MAX_SCALE` places if it needs more), or the part that is the inverse of one divides
    it, as a quotient does (:func:`div`); only the few digits left go to the factor."""
    if c < 0:
        v, c = Val(-v.expr, v.kind, v.scale, v.factor), -c
    limit = 10**FOLD_DIGITS
    num_ends, num_rest = _ending(c.numerator)
    den_ends, den_rest = _ending(c.denominator)
    if c.numerator < limit or c.denominator < limit:  # few digits: a small or large constant
        return Val(v.expr, v.kind, v.scale, v.factor * c)
    if den_rest < limit and _decimal(Fraction(c.numerator, den_ends)):
        expr, scale = lit_decimal(Fraction(c.numerator, den_ends))
        return mul(Val(v.expr, v.kind, v.scale, v.factor / den_rest), Val(expr, "num", scale))
    if num_rest < limit and _decimal(Fraction(c.denominator, num_ends)):
        expr, scale = lit_decimal(Fraction(c.denominator, num_ends))
        return div(Val(v.expr, v.kind, v.scale, v.factor * num_rest), Val(expr, "num", scale))
    return Val(v.expr, v.kind, v.scale, v.factor * c)


def _decimal(value: Fraction) -> bool:
    """Whether ``value`` (whose decimal ends) is a literal of at most :data:`MAX_SCALE` places
    within 38 digits."""
    places = _places(value.denominator)
    return places is not None and places <= MAX_SCALE and abs(value) * 10**places < 10**38


def _ending(den: int) -> tuple[int, int]:
    """``den`` as ``2^a·5^b`` (a decimal ends after dividing by it) times the rest."""
    ends = 1
    for p in (2, 5):
        while den % p == 0:
            den //= p
            ends *= p
    return ends, den


def _places(den: int) -> int | None:
    """The places of the decimal expansion of 1/den, or None when it does not end."""
    twos = fives = 0
    while den % 2 == 0:
        den //= 2
        twos += 1
    while den % 5 == 0:
        den //= 5
        fives += 1
    return max(twos, fives) if den == 1 else None


def _integer(n: int, places: int = 0) -> pl.Expr:
    """The integer ``n`` as a ``Decimal(38, 0)`` literal — or its digits read at ``places``
    places (``n / 10^places``). One of more than 38 digits is kept exactly by no decimal: an
    overflow (E405 at the contract), never a wrapped number."""
    if abs(n) >= 10**38:
        raise pl.exceptions.ComputeError(
            f"decimal overflow: the integer {n} has more than 38 digits"
        )
    return pl.lit(Decimal(n).scaleb(-places), dtype=dec(places))


def rescale(v: Val, factor: Fraction) -> pl.Expr:
    """``v``'s runtime expression re-expressed at ``factor`` (which must divide v.factor)."""
    ratio = v.factor / factor
    if ratio.denominator != 1:
        raise InternalError(f"factor {factor} does not divide {v.factor}")
    if ratio == 1:
        return v.expr
    return v.expr * _integer(ratio.numerator)


def align(vals: list[Val]) -> tuple[list[pl.Expr], Fraction, int]:
    """Bring numbers to one common factor; returns the expressions, the factor and the scale."""
    nums = [v for v in vals if v.kind == "num"]
    if not nums:
        return [v.expr for v in vals], Fraction(1), 0
    common = nums[0].factor
    for v in nums[1:]:
        common = _gcd(common, v.factor)
    scale = max(v.scale for v in nums)
    exprs = [rescale(v, common) if v.kind == "num" else v.expr for v in vals]
    return exprs, common, scale


def mul(a: Val, b: Val) -> Val:
    """Exact product: cast so polars keeps every digit (up to MAX_SCALE places of the value:
    more of the runtime product where the factor is above 1, :func:`_tens_above`)."""
    factor = a.factor * b.factor
    target = min(a.scale + b.scale, MAX_SCALE + _tens_above(factor), MAX_PLACES)
    target = max(target, a.scale, b.scale)
    left = a.expr.cast(dec(target)) if target != a.scale else a.expr
    return Val(left * b.expr, "num", target, factor)


def div(a: Val, b: Val) -> Val:
    """The quotient of two numbers, its value kept to DIV_SCALE places (rounded half to even,
    as polars divides); none where the divisor is 0 (or none). A constant divisor never comes
    here (:func:`_binary` folds it into the factor, exactly).

    The value is the runtime quotient times the factor ``f = a.factor / b.factor``; where
    ``f`` is above 1 (a divisor held in microseconds, or in 1/3600 of its unit) the runtime
    quotient needs ``k`` places more than the value, with ``10^k >= f``, and is then read at
    ``k`` places fewer with the factor ``f/10^k`` — the same digits, exactly. The quotient's
    magnitude is ``w + r/|b|`` with ``w = |a| // |b|`` and ``r = |a| mod |b|``, ``r`` and
    ``|b|`` read at as many places more as the quotient needs (their ratio unchanged), so
    ``a`` is never cast to the quotient's places: no intermediate has more digits than ``a``,
    ``b`` or the quotient."""
    f = a.factor / b.factor
    k = _tens_above(f)
    numerator = a.expr
    if DIV_SCALE + k > MAX_PLACES:  # more places than a decimal holds: a × 10^m first, exactly
        m = DIV_SCALE + k - MAX_PLACES
        numerator, f, k = numerator * _integer(10**m), f / 10**m, k - m
    scale = max(DIV_SCALE + k, a.scale, b.scale)
    zero = b.expr == 0
    safe = pl.when(zero).then(pl.lit(1, dtype=dec(0))).otherwise(b.expr)
    # |a| and |b|: the rest is below both, so it fits where they do (a floored rest of a
    # negative `a` would be near `b`, at `a`'s places)
    num, den = numerator.abs(), safe.abs()
    whole, rest = num // den, num % den  # at the wider of the two scales
    places = max(a.scale, b.scale)
    shift = scale - places  # r and b read at `shift` places more: r/b at `scale` places
    part = _places_more(rest, places, shift) / _places_more(den, b.scale, shift)
    q = whole.cast(dec(scale)) + part
    q = pl.when((numerator < 0) != (safe < 0)).then(-q).otherwise(q)
    if k:
        q = q.cast(dec(scale)).reinterpret(dtype=pl.Int128).reinterpret(dtype=dec(scale - k))
    expr = pl.when(zero).then(pl.lit(None, dtype=dec(scale - k))).otherwise(q)
    return Val(expr, "num", scale - k, f / 10**k)


def _places_more(e: pl.Expr, scale: int, more: int) -> pl.Expr:
    """``e`` (at ``scale`` places) ÷ 10^more: its digits read at ``more`` places more."""
    if not more:
        return e
    # the cast pins the digits' scale (a no-op where the dtype already is), so reading them is
    # exact whatever polars made the type
    return e.cast(dec(scale)).reinterpret(dtype=pl.Int128).reinterpret(dtype=dec(scale + more))


def _tens_above(f: Fraction) -> int:
    """The least ``k >= 0`` with ``10^k >= f``."""
    k = 0
    while 10**k < f:
        k += 1
    return k


def to_money(v: Val, scale: int = MONEY_SCALE) -> pl.Expr:
    """A money value in currency units as ``Decimal(38, scale)``: the factor applied once."""
    return apply_factor(v, scale)


def apply_factor(v: Val, scale: int) -> pl.Expr:
    """``v``'s value in base units as ``Decimal(38, scale)``: the runtime value times the
    factor's numerator, divided by its denominator ``d`` and rounded once, half to even (as
    polars divides decimals).

    The runtime value may be far larger than the value (``gpu_time`` is held in
    GPU-microseconds; a factor such as 1/3600² keeps a constant's divisions), so it is never
    cast to ``scale`` places whole: its magnitude is split into a whole multiple of ``d`` and
    a rest below it, ``|x| = w·d + r``, and only ``r / d`` is computed at ``scale`` places — as
    ``r`` and ``d`` read at as many places more as that needs (their ratio unchanged). The
    result is the number one division of ``x`` at ``scale`` places gives, but no intermediate
    needs more digits than ``x``, ``d`` or the value itself."""
    if v.kind == "null":
        return pl.lit(None, dtype=dec(scale))
    if v.exact is not None:  # a constant: rounded here, exactly, however many digits it has
        return _integer(round(v.exact * 10**scale), scale)
    f = v.factor
    if f.denominator >= 10**38:
        return _tiny(v, scale)
    x = v.expr if f.numerator == 1 else v.expr * _integer(f.numerator)
    d = f.denominator
    if d == 1:
        return x.cast(dec(scale))
    if v.scale >= scale or scale == 0:
        # the quotient at v's own places, rounded to scale (at 0 places an integer whole part
        # would change which way a half goes)
        return (x.cast(dec(max(scale, v.scale))) / _integer(d)).cast(dec(scale))
    more = scale - v.scale
    magnitude = x.abs()
    whole, rest = magnitude // _integer(d), magnitude % _integer(d)
    value = whole.cast(dec(scale)) + _places_more(rest, v.scale, more) / _integer(d, more)
    return pl.when(x < 0).then(-value).otherwise(value)


def _tiny(v: Val, scale: int) -> pl.Expr:
    """:func:`apply_factor` for a factor whose denominator has more than 38 digits (``1 USD per
    gpu_hour × 0.000000000000000001 × 0.000000000000000001``): 0 where every runtime value
    (below 10^38 at its places) gives less than half a unit of the last place, else the
    runtime value read at as many places more as the denominator's factors of 10 allow."""
    f = v.factor
    most = Fraction(10 ** (38 - v.scale) * f.numerator, f.denominator)
    if most * 2 * 10**scale <= 1:
        return pl.when(v.expr.is_null()).then(None).otherwise(pl.lit(0, dtype=dec(scale)))
    tens = min(_tens(f.denominator), MAX_PLACES - v.scale)
    if not tens:  # no decimal holds the denominator: an overflow (E405)
        return v.expr / _integer(f.denominator)
    shifted = _places_more(v.expr, v.scale, tens)
    return apply_factor(Val(shifted, "num", v.scale + tens, f * 10**tens), scale)


def _tens(d: int) -> int:
    """How many times 10 divides ``d``."""
    k = 0
    while d % 10 == 0:
        d //= 10
        k += 1
    return k


def to_micros(v: Val) -> pl.Expr:
    """A duration as whole microseconds (``Int64``), rounded half away from zero."""
    if v.kind == "null":
        return pl.lit(None, dtype=pl.Int64)
    micro = Val(v.expr, "num", v.scale, v.factor / MICROS)
    return apply_factor(micro, 6).round(0, mode="half_away_from_zero").cast(pl.Int64)


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
        return Val(x + y if e.op == "+" else x - y, "num", scale, factor)
    if e.op == "*":
        return mul(a, b)
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


def compare(op: str, a: Val, b: Val) -> pl.Expr:
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
        return v.expr == _integer(floor, v.scale) if floor == t and _fits(t) else _known(v, False)
    if op == "!=":
        return v.expr != _integer(floor, v.scale) if floor == t and _fits(t) else _known(v, True)
    if op in ("<", "<="):
        most = ceil - 1 if op == "<" else floor  # m <= most
        if not _fits(most):
            return _known(v, most > 0)
        return v.expr <= _integer(most, v.scale)
    least = floor + 1 if op == ">" else ceil  # m >= least
    if not _fits(least):
        return _known(v, least < 0)
    return v.expr >= _integer(least, v.scale)


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
    return Val(compare(op, compile_expr(left, env), compile_expr(right, env)), "bool")


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
        eq = compare("==", option, value) if flip else compare("==", value, option)
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
