"""A figure with its Monte Carlo error, as people read it: ``1,733 USD ± 41``.

The error (half the 95 % interval) is shown to two significant digits and the value to the
same decimal place — never finer than the contract's precision for money, nor than 4 places
otherwise; an error of zero shows the value as budgets do. Exact throughout (Fractions in,
strings out).

>>> usd = DisplayUnit("USD", Fraction(1), "money")
>>> plus_minus(Fraction(173345, 100), Fraction(4123, 100), usd)
'1,733 USD ± 41'
>>> pct = DisplayUnit("%", Fraction(1, 100), "percent")
>>> plus_minus(Fraction(5525, 1000000), Fraction(132, 1000000), pct)
'0.552% ± 0.013'
>>> plus_minus(Fraction(3, 2), None, DisplayUnit("", Fraction(1), "plain"))
'1.5'
"""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

from contractlang.evaluate.results import DisplayUnit
from contractlang.lang.numbers import round_fraction
from contractlang.render.numbers import measure_human


def places_for(half: Fraction, most: int) -> int:
    """Decimal places that show ``half`` to two significant digits (0 to ``most``)."""
    if half <= 0:
        return most
    magnitude = (Decimal(half.numerator) / Decimal(half.denominator)).adjusted()
    return max(0, min(most, 1 - magnitude))


def plus_minus(
    value: Fraction | None, half: Fraction | None, unit: DisplayUnit, precision: int = 2
) -> str:
    """``value ± half`` in ``unit`` (``half`` None or 0: the value alone)."""
    if value is None:
        return "none"
    if half is None or half == 0:
        return measure_human(value, unit, precision)
    most = precision if unit.kind == "money" else 4
    shown, err = value / unit.factor, half / unit.factor
    places = places_for(err, most)
    number = f"{round_fraction(shown, places):,}"
    error = f"{round_fraction(err, places):,}"
    if unit.kind == "percent":
        return f"{number}% ± {error}"
    return f"{number} {unit.label} ± {error}".replace("  ", " ")
