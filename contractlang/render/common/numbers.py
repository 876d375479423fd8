"""Exact numbers as people read them: money, GPU-hours, durations, budget measures.

Everything here takes exact values (``int`` minor units, microseconds, ``Fraction``) and
returns strings of plain digits (:func:`~contractlang.lang.numbers.plain`: never exponent
notation, at any precision); nothing passes through float.
"""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

from contractlang.evaluate.results import DisplayUnit
from contractlang.lang.numbers import (
    MICROS_PER_HOUR,
    counted,
    duration_human,
    gpu_hours,
    plain,
    round_fraction,
    scaled,
)

__all__ = ["counted", "duration_human"]  # kept here for the renderers; they live in lang.numbers


def minor_to_str(minor: int, precision: int) -> str:
    """Minor units as a plain decimal string: ``12345, 2`` → ``"123.45"``."""
    return plain(scaled(minor, precision))


def money(minor: int, precision: int, currency: str | None = None, sign: bool = False) -> str:
    """Money for people: thousands separators, the currency after the number."""
    text = plain(scaled(minor, precision), grouped=True, sign=sign)
    return f"{text} {currency}" if currency else text


def gpu_hours_str(gpu_us: int, places: int = 6) -> str:
    """GPU-microseconds as GPU-hours (``places`` decimals, half away from zero, as in the
    ledger and the per-run table)."""
    return plain(gpu_hours(gpu_us, places))


def gpu_hours_human(gpu_us: int) -> str:
    return plain(round_fraction(Fraction(gpu_us, MICROS_PER_HOUR), 2), grouped=True)


def seconds_str(us: int | None) -> str | None:
    if us is None:
        return None
    return plain(scaled(us, 6).normalize())


def measure(value: Fraction | None, unit: DisplayUnit, precision: int = 2) -> str | None:
    """A budget measure in its display unit, as a plain decimal string (None for none)."""
    if value is None:
        return None
    shown = value / unit.factor
    places = precision if unit.kind == "money" else 4
    return plain(round_fraction(shown, places))


def measure_human(value: Fraction | None, unit: DisplayUnit, precision: int = 2) -> str:
    """A budget measure for people: money with thousands separators at the contract's
    precision; other measures to at most 4 places, without trailing zeros.

    >>> measure_human(Fraction(164), DisplayUnit("", Fraction(1), "plain"))
    '164'
    >>> measure_human(Fraction(12345678, 1000), DisplayUnit("USD", Fraction(1), "money"))
    '12,345.68 USD'
    """
    text = measure(value, unit, precision)
    if text is None:
        return "none"
    number = Decimal(text)
    if unit.kind == "money":
        shown = plain(number, grouped=True)
    else:
        shown = plain(number.normalize(), grouped=True) if number != 0 else "0"
    if unit.kind == "percent":
        return f"{shown}%"
    return f"{shown} {unit.label}".strip()
