"""Durations as people write them outside the language — a number and a unit (``30s``,
``2 min``, ``1.5 hours``) in a flag, or a number under a key that names its unit
(``step_seconds = 1.5``) — read exactly into microseconds. One reader for every flag and file
that takes a duration; each says which unit words it takes (:class:`DurationReader`).

A duration is exact or refused: never rounded, however many digits or how large an exponent
its number has (:func:`in_micros`). Refused, it is :class:`BadDuration`, whose message the
caller gives under its own code (``E502`` on the command line, ``E702`` for a rehearsal).

>>> wait = DurationReader(frozenset({"s", "ms", "min"}), 10**12, "11 days", bare="s")
>>> [wait.micros(text, "--wait") for text in ("1.5s", "2 min", "250ms", "2")]
[1500000, 120000000, 250000, 2000000]
>>> whole_micros(Decimal("0.25"), "s"), whole_micros(Decimal("1e-7"), "s")
(250000, None)
>>> written(1_500_000)
'1.5s'
"""

from __future__ import annotations

import decimal
import re
from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal

from contractlang.diagnostics import shortened
from contractlang.lang.numbers import INT64_MAX, MICROS_PER_SECOND, plain, scaled
from contractlang.lang.vocabulary import TIME_UNITS

#: Every unit word a reader may take, with its length in microseconds: the language's units
#: (``second`` … ``day``) and their plurals, and the short forms flags are written with.
UNIT_MICROS: dict[str, int] = {
    **{word: s * MICROS_PER_SECOND for word, s in TIME_UNITS.items()},
    **{word + "s": s * MICROS_PER_SECOND for word, s in TIME_UNITS.items()},
    "us": 1,
    "µs": 1,
    "ms": 1_000,
    "s": TIME_UNITS["second"] * MICROS_PER_SECOND,
    "sec": TIME_UNITS["second"] * MICROS_PER_SECOND,
    "secs": TIME_UNITS["second"] * MICROS_PER_SECOND,
    "m": TIME_UNITS["minute"] * MICROS_PER_SECOND,
    "min": TIME_UNITS["minute"] * MICROS_PER_SECOND,
    "mins": TIME_UNITS["minute"] * MICROS_PER_SECOND,
    "h": TIME_UNITS["hour"] * MICROS_PER_SECOND,
    "d": TIME_UNITS["day"] * MICROS_PER_SECOND,
}

#: The plural name of each unit of the language, by its length (for a reader's help).
_NAMES = {s * MICROS_PER_SECOND: word + "s" for word, s in TIME_UNITS.items()}
#: A number in ASCII digits (no sign, no exponent), then a unit word or none; blanks around
#: each. What the unit word is, the reader decides.
_TEXT = re.compile(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([^\s0-9.]*)\s*")


class BadDuration(ValueError):
    """A duration a reader refuses: the message, naming the flag and quoting its text, and
    what to do about it."""

    def __init__(self, message: str, help: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.help = help


@dataclass(frozen=True)
class DurationReader:
    """What one flag takes as a duration: its unit words (of :data:`UNIT_MICROS`), at most
    ``longest_us`` (``longest`` in words, with ``long_help`` saying why), a bare number in
    ``bare`` units (None: a unit is required), unit words in any case (``any_case``) or as
    written."""

    units: frozenset[str]
    longest_us: int
    longest: str
    bare: str | None = None
    any_case: bool = False
    long_help: str | None = None

    def __post_init__(self) -> None:
        unknown = sorted(self.units - UNIT_MICROS.keys())
        if unknown or (self.bare is not None and self.bare not in self.units):
            raise ValueError(f"unknown unit words {unknown or [self.bare]}")

    @property
    def help(self) -> str:
        """How to write one (the examples are read by every reader: a test checks)."""
        bare = f"; a bare number is {_NAMES[UNIT_MICROS[self.bare]]}" if self.bare else ""
        return f"write a number and a unit, such as `30s`, `500ms`, `2 min` or `1.5h`{bare}"

    def micros(self, text: str, flag: str) -> int:
        """``text`` (``flag``'s value) in microseconds, exactly; :class:`BadDuration` when it
        is not a number and one of the units, is longer than the longest, or is finer than a
        microsecond (checked in that order)."""
        m = _TEXT.fullmatch(text)
        word = m.group(2) if m else ""
        unit = (word.lower() if self.any_case else word) or self.bare
        if m is None or unit is None or unit not in self.units:
            raise BadDuration(f"`{flag} {shortened(text)}` is not a duration", self.help)
        us = in_micros(Decimal(m.group(1)), unit)
        if us > self.longest_us:
            raise self.too_long(text, flag)
        if us != us.to_integral_value():
            raise BadDuration(f"`{flag} {shortened(text)}` is finer than a microsecond")
        return int(us)

    def delta(self, text: str, flag: str) -> timedelta:
        """:meth:`micros` as a ``timedelta``."""
        return timedelta(microseconds=self.micros(text, flag))

    def too_long(self, text: str, flag: str) -> BadDuration:
        """The refusal of a duration longer than :attr:`longest_us` (``text`` as shown)."""
        return BadDuration(
            f"`{flag} {shortened(text)}` is longer than {self.longest}", self.long_help
        )


def in_micros(number: Decimal, unit: str) -> Decimal:
    """``number`` of ``unit`` (a word of :data:`UNIT_MICROS`) in microseconds, exactly: the
    product keeps every digit (Python's default context keeps 28 and rounds the rest
    silently), and an exponent as large as ``1e-999999999`` costs nothing.

    >>> n = Decimal("1.0000000000000000000000000000001")
    >>> n * 1_000_000 == 1_000_000, in_micros(n, "s") == 1_000_000
    (True, False)
    """
    digits = len(number.as_tuple().digits) + len(str(UNIT_MICROS[unit]))
    exact = decimal.Context(
        prec=digits,
        Emin=decimal.MIN_EMIN,
        Emax=decimal.MAX_EMAX,
        traps=[decimal.Inexact, decimal.InvalidOperation, decimal.Overflow],
    )
    return exact.multiply(number, Decimal(UNIT_MICROS[unit]))


def whole_micros(number: Decimal, unit: str) -> int | None:
    """``number`` of ``unit`` in whole microseconds; None when that is finer than a
    microsecond, not finite, or beyond a 64-bit integer.

    >>> whole_micros(Decimal("1e-999999999"), "s"), whole_micros(Decimal("1.5e3"), "ms")
    (None, 1500000)
    """
    if not number.is_finite():
        return None
    us = in_micros(number, unit)
    if us.copy_abs() > INT64_MAX or us != us.to_integral_value():
        return None
    return int(us)


def written(us: int) -> str:
    """Microseconds as a duration flag takes them: seconds, exactly (``1s``, ``0.5s``).

    >>> written(1_000_000), written(500_000), written(90_000_000), written(1)
    ('1s', '0.5s', '90s', '0.000001s')
    """
    return f"{plain(scaled(us, 6).normalize())}s"
