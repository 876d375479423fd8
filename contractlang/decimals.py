"""Exact decimal values as polars expressions: :class:`Val` and its arithmetic.

Numbers are polars ``Decimal`` values whose *scale* is tracked, with an exact rational
*factor* to base units kept at compile time::

    real value = runtime value × factor        (base units: second, GPU, one currency unit)

so ``2.10 USD per gpu_hour`` is the decimal ``2.10`` with factor ``1/3600`` and ``runtime`` is an
integer of microseconds with factor ``1/1_000_000``. A constant (an expression that reads no
column: ``3 USD / 7 gpus``) is computed exactly, in Fractions (:mod:`contractlang.lang.exact`),
and a product or quotient with a constant operand multiplies the other operand's factor
(:func:`times`), so no constant is rounded (``1 USD per gpu_hour / 3 * 3`` is exactly ``1 USD
per gpu_hour``). The powers of ten a factor gains are read as places of the runtime value
instead (:func:`_tens_to_scale`), so a factor holds only what no decimal ends (the 1/3 of
``/ 3``) — and that part only up to :data:`FACTOR_REST_MOST` (:func:`bounded`); a constant
of many digits multiplies as a decimal. Products of two columns cast first so that polars
(which rounds a product to the larger input scale) keeps every digit; sums bring both sides to
their largest common unit (``factor / 10^scale``) with exact integer multipliers and to a
common scale by explicit casts (:func:`align`); the factor is applied once, by one division at
scale 20, when a value leaves (:func:`to_money`, :func:`to_micros`): at once where it fits 38
digits (the quick :data:`Arithmetic`), else split so that no intermediate is wider than the
value (the careful one). A number too large for 38 digits is a polars overflow, which the
evaluation reports as E405; no step loops once per digit of a constant, nor writes a
constant's digits out.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Literal

import polars as pl

from contractlang.errors import InternalError
from contractlang.lang.numbers import MICROS_PER_SECOND, scaled

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
#: The largest part of a factor's denominator that is not a power of 2 or 5 (a constant's
#: 1/3, 1/7, 1/23 of 1.15, 1/2,667 of 53.34) that the factor keeps; beyond it the part
#: divides the runtime value (:func:`bounded`).
FACTOR_REST_MOST = 10**6
MICROS = Fraction(1, MICROS_PER_SECOND)

ValKind = Literal["num", "bool", "str", "null"]

#: How :func:`apply_factor` applies a factor ``n/d``. ``quick``: ``x·n/d`` at once — exact,
#: with the same one rounding, wherever ``x·n`` at the value's places fits 38 digits; a row
#: where it does not fails loudly (an overflow, E405), and the evaluation runs again the
#: ``careful`` way (the engine's ``run_stages``), which needs no intermediate wider than the
#: value. The quick way costs a third of the careful one (bench_evaluate).
Arithmetic = Literal["quick", "careful"]


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
    places = _tens(value.denominator, MAX_SCALE)  # its powers of ten as places (_tens_to_scale)
    return Val(
        integer(value.numerator, places), "num", places, Fraction(10**places, value.denominator)
    )


def bounded(v: Val) -> Val:
    """``v`` with a factor whose denominator's part other than 2^a·5^b is at most
    :data:`FACTOR_REST_MOST`: a larger part (``/ 3.333333 minutes`` is 1/9,999,999 of what it
    divides; ``/ 999999.999999`` 1/999,999,999,999; a sum of two such is their product) would
    hold every runtime value that many times larger than its value, and a sum or product
    with it past 38 digits, where a quotient at 20 places of the value holds it (a fuzz
    against Fractions found both). So that part divides the runtime value, as a quotient
    does (:func:`div`); the rest of the factor stays exact."""
    if v.kind != "num":
        return v
    _, rest = _ending(v.factor.denominator)
    if rest <= FACTOR_REST_MOST or rest >= 10**38:
        return v
    return div(Val(v.expr, v.kind, v.scale, v.factor * rest), Val(integer(rest), "num", 0))


def _tens_to_scale(v: Val) -> Val:
    """``v`` with the powers of ten of its factor's denominator read as decimal places of its
    runtime value instead (up to :data:`MAX_SCALE` places): the same digits, the same value,
    but a factor that says how large the runtime value is. A constant's decimal places left in
    the factor (``runtime / 1000000000 minutes / 0.1``: GPU-µs with the factor 1/(6 × 10^15))
    would have every product with it cast the runtime value to its partner's places on top —
    26 digits more than the value needs, past 38 beside ``charge``. A power of ten of the
    numerator is read as fewer places, where the value has them."""
    if v.kind != "num":
        return v
    k = _tens(v.factor.denominator, max(0, MAX_SCALE - v.scale))
    if not k:  # a power of ten of the numerator: fewer places (`charge * 1000`)
        k = -_tens(v.factor.numerator, v.scale)
    if not k:
        return v
    return Val(_places_more(v.expr, v.scale, k), v.kind, v.scale + k, v.factor * Fraction(10) ** k)


def times(v: Val, c: Fraction) -> Val:
    """``v × c`` for a constant ``c`` other than 0.

    ``c`` goes to the factor, exactly, with no runtime product nor rounding (kept positive: a
    negative ``c`` negates the runtime value; its powers of ten become places of the runtime
    value, :func:`_tens_to_scale`, and a large part of its denominator that no decimal ends
    divides it, :func:`bounded`) — unless its numerator has :data:`FOLD_DIGITS` digits or
    more besides its trailing zeros (``× 999999.999999%``, ``× 33.33333333333333333``): the
    factor would hold the constant's many digits over a runtime value far from the value's
    size, and overflow wherever it is applied. Then the
    part of ``c`` that is a decimal multiplies ``v`` at runtime, as a decimal product does
    (rounded back at :data:`MAX_SCALE` places if it needs more), or the part that is the
    inverse of one divides it, as a quotient does (:func:`div`); only the few digits left go
    to the factor."""
    if c < 0:
        v, c = Val(-v.expr, v.kind, v.scale, v.factor), -c
    limit = 10**FOLD_DIGITS
    num_ends, num_rest = _ending(c.numerator)
    den_ends, den_rest = _ending(c.denominator)
    if c.numerator < limit * 10 ** _tens(c.numerator, c.numerator.bit_length()):
        # few digits but for powers of ten in the numerator: a small or large constant
        return _tens_to_scale(bounded(Val(v.expr, v.kind, v.scale, v.factor * c)))
    if den_rest < limit and _decimal(Fraction(c.numerator, den_ends)):
        expr, scale = lit_decimal(Fraction(c.numerator, den_ends))
        return mul(Val(v.expr, v.kind, v.scale, v.factor / den_rest), Val(expr, "num", scale))
    if num_rest < limit and _decimal(Fraction(c.denominator, num_ends)):
        expr, scale = lit_decimal(Fraction(c.denominator, num_ends))
        return div(Val(v.expr, v.kind, v.scale, v.factor * num_rest), Val(expr, "num", scale))
    return _tens_to_scale(bounded(Val(v.expr, v.kind, v.scale, v.factor * c)))


def _decimal(value: Fraction) -> bool:
    """Whether ``value`` (whose decimal ends) is a literal of at most :data:`MAX_SCALE` places
    within 38 digits."""
    places = _places(value.denominator)
    return places is not None and places <= MAX_SCALE and abs(value) * 10**places < 10**38


def _ending(den: int) -> tuple[int, int]:
    """``den`` as ``2^a·5^b`` (a decimal ends after dividing by it) times the rest."""
    rest = den
    twos = (rest & -rest).bit_length() - 1 if rest else 0
    rest >>= twos
    fives = _multiplicity(rest, 5)
    rest //= 5**fives
    return den // rest, rest


def _multiplicity(n: int, p: int) -> int:
    """How many times ``p`` divides ``n`` (``n`` not 0): by squaring, so a power of thousands
    of digits takes a few dozen divisions, not one per factor."""
    if n == 0:
        return 0
    count = 0
    powers = [p]  # p, p^2, p^4, … while they divide n
    while n % powers[-1] == 0 and powers[-1].bit_length() * 2 <= n.bit_length() + 1:
        powers.append(powers[-1] * powers[-1])
    for k in reversed(range(len(powers))):
        while n % powers[k] == 0:
            n //= powers[k]
            count += 1 << k
    return count


def _places(den: int) -> int | None:
    """The places of the decimal expansion of 1/den, or None when it does not end."""
    ends, rest = _ending(den)
    if rest != 1:
        return None
    twos = (ends & -ends).bit_length() - 1
    return max(twos, _multiplicity(ends >> twos, 5))


def digits(n: int) -> int:
    """How many decimal digits ``|n|`` has (1 for 0), without writing it out: Python will
    not write an integer of more than 4,300 digits (a ValueError)."""
    n = abs(n)
    if n < 10:
        return 1
    k = (n.bit_length() - 1) * 30102 // 100000  # log10(2) > 0.30102: from below
    while 10 ** (k + 1) <= n:
        k += 1
    return k + 1


def integer(n: int, places: int = 0) -> pl.Expr:
    """The integer ``n`` as a ``Decimal(38, 0)`` literal — or its digits read at ``places``
    places (``n / 10^places``). One of more than 38 digits is kept exactly by no decimal: an
    overflow (E405 at the contract), never a wrapped number; the message says how many digits
    it has, never the number (which may have thousands)."""
    if abs(n) >= 10**38:
        raise pl.exceptions.ComputeError(
            f"decimal overflow: an integer of {digits(n)} digits is more than 38"
        )
    return pl.lit(Decimal(n).scaleb(-places), dtype=dec(places))


def rescale(v: Val, factor: Fraction, scale: int) -> pl.Expr:
    """``v``'s runtime expression re-expressed at ``factor`` and ``scale`` places, its value
    unchanged: ``factor / 10^scale`` must divide ``v``'s unit, ``v.factor / 10^v.scale``, and
    ``scale`` be at least ``v.scale``.

    Where ``v.factor / factor`` is an integer the expression is multiplied by it and left at
    its own places (the caller casts it); else that ratio is ``N / 10^j`` (``j`` at most the
    places ``v`` gains), and ``v``'s digits are multiplied by ``N`` and read at ``scale``
    places — the value times exactly the ratio, with no power of ten the places already hold
    (a price held in µs against ``charge`` at 20 places is multiplied by a few digits, not by
    10^20 more than it needs)."""
    ratio = v.factor / factor
    if ratio.denominator == 1:
        return v.expr if ratio == 1 else v.expr * integer(ratio.numerator)
    n = ratio * 10 ** (scale - v.scale)
    if n.denominator != 1 or scale < v.scale:
        raise InternalError(f"the unit {factor}/10^{scale} does not divide {v.factor}")
    return _places_more(v.expr * integer(n.numerator), v.scale, scale - v.scale)


def align(vals: list[Val]) -> tuple[list[pl.Expr], Fraction, int]:
    """Bring numbers to one common factor and scale; returns the expressions, the factor and
    the scale (the largest of the numbers'; an expression may still be at fewer places, and
    the caller casts it).

    The common *unit* — the value of a runtime value's last digit, ``factor / 10^scale`` — is
    the largest that divides every number's unit, so each runtime value is multiplied by the
    least integer that brings it there: ``charge`` (20 places) beside ``2.123457 USD per
    gpu_hour * gpu_time`` (GPU-µs with the factor 2,123,457/3.6 × 10^15) is multiplied by 9,
    not by 3.6 × 10^15."""
    nums = [v for v in vals if v.kind == "num"]
    if not nums:
        return [v.expr for v in vals], Fraction(1), 0
    scale = max(v.scale for v in nums)
    unit = nums[0].factor / 10 ** nums[0].scale
    for v in nums[1:]:
        unit = _gcd(unit, v.factor / 10**v.scale)
    common = unit * 10**scale
    exprs = [rescale(v, common, scale) if v.kind == "num" else v.expr for v in vals]
    return exprs, common, scale


def mul(a: Val, b: Val, *, of_value: bool = False) -> Val:
    """Exact product: cast so polars keeps every digit (up to MAX_SCALE places of the value:
    more of the runtime product where the factor is above 1, :func:`_tens_above`).

    ``of_value`` (a product the terms write): where the factor is below 1/10 the runtime
    product is that much larger than its value, and MAX_SCALE places of the value need fewer
    of it — ``(gpu_time / 1000 gpu_minutes + runtime / 3.333333 minutes) × (7 USD per
    gpu_hour × gpu_time)`` is held at 7/216 of its value, 30.9 times larger: 24 places of that
    passed 38 digits for a credit of 2.2 × 10^13 USD, 23 do not."""
    factor = a.factor * b.factor
    places = MAX_SCALE + _tens_above(factor) - (_tens_below(factor) if of_value else 0)
    target = min(a.scale + b.scale, places, MAX_PLACES)
    target = max(target, a.scale, b.scale)
    left = a.expr.cast(dec(target)) if target != a.scale else a.expr
    return Val(left * b.expr, "num", target, factor)


def div(a: Val, b: Val) -> Val:
    """The quotient of two numbers, its value kept to DIV_SCALE places (rounded half to even,
    as polars divides); none where the divisor is 0 (or none). A constant divisor never comes
    here (:func:`contractlang.compile._binary` folds it into the factor, exactly).

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
        numerator, f, k = numerator * integer(10**m), f / 10**m, k - m
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
    """``e`` (at ``scale`` places) ÷ 10^more: its digits read at ``more`` places more (or
    × 10^-more, at fewer places, where ``more`` is negative)."""
    if not more:
        return e
    # the cast pins the digits' scale (a no-op where the dtype already is), so reading them is
    # exact whatever polars made the type
    return e.cast(dec(scale)).reinterpret(dtype=pl.Int128).reinterpret(dtype=dec(scale + more))


def _tens_above(f: Fraction) -> int:
    """The least ``k >= 0`` with ``10^k >= f``, from the bit lengths (a factor of thousands of
    digits is a few steps, not one per digit)."""
    if f <= 1:
        return 0
    # 10^k >= f  ⟺  10^k · den >= num; start from a k a little below it and step up
    num, den = f.numerator, f.denominator
    k = max(0, (num.bit_length() - den.bit_length() - 1) * 30102 // 100000)
    while 10**k * den < num:
        k += 1
    return k


def _tens_below(f: Fraction) -> int:
    """The largest ``k >= 0`` with ``10^k <= 1/f`` (0 for ``f >= 1/10``)."""
    if f * 10 > 1:
        return 0
    k = _tens_above(1 / f)
    return k if 10**k * f <= 1 else k - 1


def to_money(v: Val, arithmetic: Arithmetic, scale: int = MONEY_SCALE) -> pl.Expr:
    """A money value in currency units as ``Decimal(38, scale)``: the factor applied once."""
    return apply_factor(v, scale, arithmetic)


def apply_factor(v: Val, scale: int, arithmetic: Arithmetic) -> pl.Expr:
    """``v``'s value in base units as ``Decimal(38, scale)``: the runtime value times the
    factor ``n/d``, rounded once, half to even (as polars divides decimals), the quick or the
    careful way (:data:`Arithmetic`).

    The runtime value may be far larger than the value (``gpu_time`` is held in
    GPU-microseconds; a factor such as 1/3600² keeps a constant's divisions) or held at more
    places than ``scale`` (a price at 24), so it is never cast to ``scale`` places whole nor
    multiplied by ``n`` whole: its digits are read at ``scale`` places where it has more (the
    places beyond join ``d``), their magnitude split into a whole multiple of ``d`` and a rest
    below it, ``|x| = w·d + r``, and the value is ``w·n + r·n/d`` — only ``r·n/d`` computed at
    ``scale`` places, as ``r·n`` and ``d`` read at as many places more as that needs (their
    ratio unchanged). ``w·n`` is an integer, so the one rounding is that of the whole value;
    no intermediate needs more digits than the value, ``x`` or ``d·n``."""
    if v.kind == "null":
        return pl.lit(None, dtype=dec(scale))
    if v.exact is not None:  # a constant: rounded here, exactly, however many digits it has
        return integer(round(v.exact * 10**scale), scale)
    f = v.factor
    n, d, x, places = f.numerator, f.denominator, v.expr, v.scale
    if places > scale > 0 and d * 10 ** (places - scale) < 10**38:
        d *= 10 ** (places - scale)  # the digits read at `scale` places: the value × 10^…
        x, places = _places_more(x, places, scale - places), scale
    if d >= 10**38:
        return _tiny(v, scale, arithmetic)
    if d == 1:
        return (x if n == 1 else x * integer(n)).cast(dec(scale))
    if places > scale or scale == 0:
        # the quotient at v's own places, rounded to scale (at 0 places an integer whole part
        # would change which way a half goes)
        x = x if n == 1 else x * integer(n)
        return (x.cast(dec(max(scale, places))) / integer(d)).cast(dec(scale))
    if arithmetic == "quick":  # at once: an overflow is done again the careful way, below
        at = x.cast(dec(scale))
        return (at if n == 1 else at * integer(n)) / integer(d)
    if n != 1 and d * n * 10**places >= 10**38 and d * n * 10 ** (scale - places) < 10**38:
        return _on_digits(x, places, n, d, scale)
    more = scale - places
    magnitude = x.abs()
    whole, rest = magnitude // integer(d), magnitude % integer(d)
    if n != 1:
        whole, rest = whole * integer(n), rest * integer(n)
    value = whole.cast(dec(scale)) + _places_more(rest, places, more) / integer(d, more)
    return pl.when(x < 0).then(-value).otherwise(value)


def _on_digits(x: pl.Expr, places: int, n: int, d: int, scale: int) -> pl.Expr:
    """:func:`apply_factor` where ``r·n`` at ``places`` places would pass 38 digits (a rest
    below a long ``d`` at 20 places, times the numerator of ``× 2.123457``): the same split
    done on the digits ``X`` of ``|x|``, as integers, with ``n`` taking the places the value
    gains — ``X·n/d = w·n + q + rem/d`` with ``X = w·d + r`` and ``r·n = q·d + rem`` — and the
    half-even rounding of the whole value decided from ``rem`` and the parity of the rest, so
    no intermediate passes the value's digits, ``d·n`` or ``2d``."""
    n *= 10 ** (scale - places)
    digits = _places_more(x.abs(), places, -places)
    big_d, big_n, one, two = integer(d), integer(n), integer(1), integer(2)
    whole, rest = digits // big_d, digits % big_d
    part = rest * big_n
    below = whole * big_n + part // big_d
    twice = (part % big_d) * two
    up = (twice > big_d) | ((twice == big_d) & (below % two == one))
    value = _places_more(pl.when(up).then(below + one).otherwise(below), 0, scale)
    return pl.when(x < 0).then(-value).otherwise(value)


def _tiny(v: Val, scale: int, arithmetic: Arithmetic) -> pl.Expr:
    """:func:`apply_factor` for a factor whose denominator has more than 38 digits (``1 USD per
    gpu_hour × 0.000000000000000001 × 0.000000000000000001``): 0 where every runtime value
    (below 10^38 at its places) gives less than half a unit of the last place, else the
    runtime value read at as many places more as the denominator's factors of 10 allow."""
    f = v.factor
    most = Fraction(10 ** (38 - v.scale) * f.numerator, f.denominator)
    if most * 2 * 10**scale <= 1:
        return pl.when(v.expr.is_null()).then(None).otherwise(pl.lit(0, dtype=dec(scale)))
    tens = _tens(f.denominator, max(0, MAX_PLACES - v.scale))
    if not tens:  # no decimal holds the denominator: an overflow (E405)
        return v.expr / integer(f.denominator)
    shifted = _places_more(v.expr, v.scale, tens)
    return apply_factor(Val(shifted, "num", v.scale + tens, f * 10**tens), scale, arithmetic)


def _tens(d: int, most: int) -> int:
    """How many times 10 divides ``d`` (not 0), counting to ``most`` at the most."""
    twos = (d & -d).bit_length() - 1
    return min(twos, most, _multiplicity(d, 5))


def to_micros(v: Val, arithmetic: Arithmetic) -> pl.Expr:
    """A duration as whole microseconds (``Int64``), rounded half away from zero."""
    if v.kind == "null":
        return pl.lit(None, dtype=pl.Int64)
    micro = Val(v.expr, "num", v.scale, v.factor / MICROS)
    return apply_factor(micro, 6, arithmetic).round(0, mode="half_away_from_zero").cast(pl.Int64)
