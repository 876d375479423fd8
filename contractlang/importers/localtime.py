"""Timestamps as exports write them: ISO 8601 with or without an offset, and local wall-clock
times read in a named time zone, where a time that falls in a daylight-saving gap (it never
happened) or in a repeated hour (it happened twice) is an error, never a guess.

>>> ny = read_zone("America/New_York")
>>> localize(parse_timestamp("2025-07-01T12:00:00"), ny).isoformat()
'2025-07-01T16:00:00+00:00'
>>> localize(parse_timestamp("2025-03-09T02:30:00"), ny).message
'does not exist in `America/New_York`: the clocks skip that hour'
>>> localize(parse_timestamp("2025-11-02T01:30:00"), ny).code
'I005'
"""

from __future__ import annotations

import re
import zoneinfo
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache

from contractlang.diagnostics import NO_SPAN, did_you_mean, error
from contractlang.errors import ContractlangError

_ISO = re.compile(
    r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|z|[+-]\d{2}(:?\d{2})?)?$", re.ASCII
)


#: The code of a time too close to the ends of the calendar to place in UTC: the row is
#: rejected (it is not a time an export means), where a gap or a repeat is an error.
OUT_OF_RANGE = "I015"


@dataclass(frozen=True, slots=True)
class LocalTimeProblem:
    """Why a local time cannot be placed on the UTC line (``I004`` gap, ``I005`` repeat,
    :data:`OUT_OF_RANGE`)."""

    code: str
    message: str


@cache
def _zones() -> frozenset[str]:
    return frozenset(zoneinfo.available_timezones())


def read_zone(name: str, flag: str = "--tz") -> zoneinfo.ZoneInfo:
    """The IANA time zone ``name`` (``Europe/Berlin``, ``UTC``); an unknown one is E502 with
    the closest name as help."""
    if name in _zones():
        return zoneinfo.ZoneInfo(name)
    guess = did_you_mean(name, _zones())
    raise ContractlangError(
        [
            error(
                "E502",
                f"`{flag} {name}` is not a known time zone",
                NO_SPAN,
                file="contractlang",
                help=f"did you mean `{guess}`?"
                if guess
                else "use an IANA name such as `America/New_York`, `Europe/Berlin` or `UTC`",
            )
        ]
    )


def parse_timestamp(text: str) -> datetime | None:
    """ISO 8601 date and time (``T`` or a space between them, optional seconds, fraction and
    offset); None when ``text`` is not one. Fractions beyond microseconds are cut (a trace
    keeps microseconds)."""
    t = text.strip()
    if not _ISO.match(t):
        return None
    if "." in t:
        t = re.sub(r"(\.[0-9]{6})[0-9]+", r"\1", t)
    try:
        return datetime.fromisoformat(t)
    except ValueError:
        return None


def localize(ts: datetime, zone: zoneinfo.ZoneInfo) -> datetime | LocalTimeProblem:
    """``ts`` in UTC: as it is when it has an offset, else read as wall-clock time in ``zone``.
    A wall-clock time that never happened there (the clocks skipped it) or happened twice (the
    clocks went back over it) is a :class:`LocalTimeProblem`."""
    try:
        return _localize(ts, zone)
    except OverflowError:
        return LocalTimeProblem(OUT_OF_RANGE, "is out of range")


def _localize(ts: datetime, zone: zoneinfo.ZoneInfo) -> datetime | LocalTimeProblem:
    if ts.tzinfo is not None:
        return ts.astimezone(UTC)
    early = ts.replace(tzinfo=zone, fold=0)
    late = ts.replace(tzinfo=zone, fold=1)
    if early.utcoffset() != late.utcoffset():
        back = early.astimezone(UTC).astimezone(zone).replace(tzinfo=None)
        if back != ts:
            return LocalTimeProblem(
                "I004", f"does not exist in `{zone.key}`: the clocks skip that hour"
            )
        return LocalTimeProblem(
            "I005",
            f"happens twice in `{zone.key}`: the clocks go back over that hour, so it is ambiguous",
        )
    return early.astimezone(UTC)
