"""A figure with its Monte Carlo error, as people read it: ``1,733 USD ± 41``.

The error (half the 95 % interval) is shown to two significant digits and the value to the
same decimal place — tens, hundreds, … when the error is that large; never finer than the
contract's precision for money, nor than 4 places otherwise; an error of zero shows the value
as budgets do. Exact throughout (Fractions in, strings out).

>>> usd = DisplayUnit("USD", Fraction(1), "money")
>>> plus_minus(Fraction(173345, 100), Fraction(4123, 100), usd)
'1,733 USD ± 41'
>>> plus_minus(Fraction(14590700), Fraction(200685), usd)
'14,590,000 USD ± 200,000'
>>> pct = DisplayUnit("%", Fraction(1, 100), "percent")
>>> plus_minus(Fraction(5525, 1000000), Fraction(132, 1000000), pct)
'0.552% ± 0.013'
>>> plus_minus(Fraction(3, 2), None, DisplayUnit("", Fraction(1), "plain"))
'1.5'
"""

from __future__ import annotations

import math
from fractions import Fraction

from contractlang.evaluate.results import DisplayUnit
from contractlang.lang.numbers import plain, round_fraction
from contractlang.render.common.numbers import measure_human


def places_for(half: Fraction, most: int) -> int:
    """Decimal places that show ``half`` to two significant digits (at most ``most``; negative
    for tens, hundreds, …), counting a rounding up to a third digit (99.7 → 100).

    >>> places_for(Fraction(4123, 100), 2), places_for(Fraction(200685), 2)
    (0, -4)
    >>> places_for(Fraction(997, 10), 2), places_for(Fraction(1, 1000), 2)
    (-1, 2)
    """
    if half <= 0:
        return most
    magnitude = math.floor(math.log10(half.numerator) - math.log10(half.denominator))
    while Fraction(10) ** magnitude > half:  # the float estimate was one too high
        magnitude -= 1
    while Fraction(10) ** (magnitude + 1) <= half:  # or one too low
        magnitude += 1
    places = 1 - magnitude
    if places <= most and round_fraction(half, places) >= Fraction(10) ** (2 - places):
        places -= 1  # two digits rounded up to three: 99.7 is 1.0 × 10²
    return min(most, places)


def plus_minus(
    value: Fraction | None,
    half: Fraction | None,
    unit: DisplayUnit,
    precision: int = 2,
    *,
    sign: bool = False,
) -> str:
    """``value ± half`` in ``unit`` (``half`` None or 0: the value alone); ``sign`` writes a
    ``+`` before a positive value (a difference).

    >>> usd = DisplayUnit("USD", Fraction(1), "money")
    >>> plus_minus(Fraction(72824, 100), Fraction(62, 10), usd, sign=True)
    '+728.2 USD ± 6.2'
    """
    if value is None:
        return "none"
    if half is None or half == 0:
        alone = measure_human(value, unit, precision)
        return f"+{alone}" if sign and value > 0 else alone
    most = precision if unit.kind == "money" else 4
    shown, err = value / unit.factor, half / unit.factor
    places = places_for(err, most)
    number = plain(round_fraction(shown, places), grouped=True, sign=sign)
    error = plain(round_fraction(err, places), grouped=True)
    if unit.kind == "percent":
        return f"{number}% ± {error}"
    return f"{number} {unit.label} ± {error}".replace("  ", " ")
