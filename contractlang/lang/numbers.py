"""Exact numbers, as every pass reads and rounds them: microseconds, GPU-hours, and rounding a
``Fraction`` to decimal places. Nothing here passes through float.

Time is kept in integer microseconds; GPU-time in GPU-microseconds. A GPU-hour figure (in the
ledger, the per-run table, JSON, summaries) is GPU-µs ÷ 3.6 × 10⁹ rounded half away from zero
to :data:`HOUR_PLACES` places — here for one value, and in
:func:`contractlang.evaluate.ledger.hours` for a column (a test checks the two agree)::

    >>> gpu_hours(5_400_000_000)
    Decimal('1.500000')
    >>> round_fraction(Fraction(-5, 2), 0, half_even=False)
    Decimal('-3')
"""

from __future__ import annotations

import decimal
import math
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from fractions import Fraction

MICROS_PER_SECOND = 1_000_000
MICROS_PER_MINUTE = 60 * MICROS_PER_SECOND
MICROS_PER_HOUR = 60 * MICROS_PER_MINUTE
MICROS_PER_DAY = 24 * MICROS_PER_HOUR
#: The largest 64-bit integer: minor units and sums are kept as ``Int64``.
INT64_MAX = 2**63 - 1

#: The earliest timestamp a trace may hold (inclusive).
MIN_TS = datetime(1900, 1, 1, tzinfo=UTC)
#: The first timestamp a trace may not hold (exclusive): the range ends at 2199-12-31.
MAX_TS = datetime(2200, 1, 1, tzinfo=UTC)
#: The times a trace may hold, in words (the last day is the one before ``MAX_TS``).
TRACE_DAYS = f"{MIN_TS:%Y-%m-%d} to {MAX_TS - timedelta(days=1):%Y-%m-%d}"
#: The longest span a trace can cover, in microseconds: no duration a term writes (a billing
#: increment or minimum, a promise) can be longer and still mean something.
LONGEST_US = (MAX_TS - MIN_TS) // timedelta(microseconds=1)
#: Decimal places of hours and GPU-hours in every output.
HOUR_PLACES = 6


def round_fraction(value: Fraction, places: int, *, half_even: bool = True) -> Decimal:
    """``value`` rounded to ``places`` decimal places, exactly: half to even, or half away from
    zero (``half_even=False``). Negative places round to tens, hundreds, …

    >>> round_fraction(Fraction(2, 3), 4)
    Decimal('0.6667')
    >>> round_fraction(Fraction(1, 8), 2), round_fraction(Fraction(1, 8), 2, half_even=False)
    (Decimal('0.12'), Decimal('0.13'))
    >>> f"{round_fraction(Fraction(14590700), -4):,f}"
    '14,590,000'
    """
    q = Fraction(value) * 10**places
    whole = math.floor(q)
    rest = q - whole
    if rest > Fraction(1, 2):
        whole += 1
    elif rest == Fraction(1, 2):
        if not half_even:
            whole += 1 if q > 0 else 0
        elif whole % 2 == 1:
            whole += 1
    return Decimal(f"{whole}e{-places}")  # exact: the text constructor does not round


def scaled(units: int, places: int) -> Decimal:
    """``units`` of 10⁻``places``, exactly: minor units as an amount.

    >>> scaled(12345, 2), scaled(0, 8)
    (Decimal('123.45'), Decimal('0E-8'))
    """
    return Decimal(f"{units}e-{places}")


def plain(value: Decimal, *, grouped: bool = False, sign: bool = False) -> str:
    """A decimal as people and programs read it: plain digits, never exponent notation, with
    every place it holds; thousands separators when ``grouped``, a ``+`` when ``sign``.

    >>> plain(Decimal("0E-8")), plain(Decimal("4E-10")), plain(Decimal("-1234.50"), grouped=True)
    ('0.00000000', '0.0000000004', '-1,234.50')
    """
    return format(value, ("+" if sign else "") + ("," if grouped else "") + "f")


def gpu_hours(gpu_us: int, places: int = HOUR_PLACES) -> Decimal:
    """GPU-microseconds (or microseconds) as GPU-hours (hours), rounded half away from zero."""
    return round_fraction(Fraction(gpu_us, MICROS_PER_HOUR), places, half_even=False)


def micros(value: timedelta) -> int:
    """A duration as exact microseconds.

    >>> micros(timedelta(days=1, seconds=1, microseconds=5))
    86401000005
    """
    return (value.days * 86_400 + value.seconds) * MICROS_PER_SECOND + value.microseconds


def duration_human(us: int | None) -> str:
    """Microseconds as ``1 h 12 min 30 s`` (sub-second remainders as decimals of a second).

    >>> duration_human(90_000_000), duration_human(1_000_001_000_000), duration_human(500_000)
    ('1 min 30 s', '11 d 13 h 46 min 41 s', '0.5 s')
    """
    if us is None:
        return "none"
    sign = "-" if us < 0 else ""
    us = abs(us)
    secs, micros = divmod(us, MICROS_PER_SECOND)
    days, secs = divmod(secs, 86400)
    h, secs = divmod(secs, 3600)
    m, s = divmod(secs, 60)
    parts = []
    if days:
        parts.append(f"{days} d")
    if h:
        parts.append(f"{h} h")
    if m:
        parts.append(f"{m} min")
    if s or micros or not parts:
        sec = scaled(s * MICROS_PER_SECOND + micros, 6).normalize()
        parts.append(f"{plain(sec)} s")
    return sign + " ".join(parts)


#: Decimal arithmetic that never rounds. Python's default context keeps 28 digits, and a trace
#: amount alone may have 38 (20 before the point, 18 after): a sum or difference of two such
#: amounts in the default context is rounded without a word. This one keeps 200 digits and
#: raises rather than round, should a result ever need more.
EXACT = decimal.Context(
    prec=200,
    traps=[decimal.Inexact, decimal.Overflow, decimal.InvalidOperation, decimal.DivisionByZero],
)


def exact_sum(values: Iterable[Decimal]) -> Decimal:
    """The sum of ``values``, exactly (:data:`EXACT`); 0 for none.

    >>> big = Decimal("12345678901234567890.123456789012345678")
    >>> exact_sum([big, big])
    Decimal('24691357802469135780.246913578024691356')
    >>> sum([big, big])  # the default context: rounded to 28 digits
    Decimal('24691357802469135780.24691358')
    """
    with decimal.localcontext(EXACT):
        return sum(values, Decimal(0))


def exact_difference(a: Decimal, b: Decimal) -> Decimal:
    """``a − b``, exactly (:data:`EXACT`)."""
    return EXACT.subtract(a, b)


def counted(n: int, noun: str) -> str:
    """A count and its noun, singular for one: ``1 event``, ``2 events``, ``1,000 runs``.

    >>> counted(1, "invoice line"), counted(1000, "allocation")
    ('1 invoice line', '1,000 allocations')
    """
    return f"{n:,} {noun}" + ("" if n == 1 else "s")
