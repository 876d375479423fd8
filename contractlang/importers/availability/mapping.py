"""``contractlang import availability``: a public spot availability trace (SkyPilot JSON or
Bamboo add/remove CSV, :mod:`contractlang.importers.availability.read`) as a trace of allocations.

The file becomes one run (``--run-id``, by default the file's name without its extension).
Capacity is counted in instances: instance slot *k* (1, 2, … up to the most instances the
file ever has) is held whenever at least *k* instances are available, so each uninterrupted
stretch with at least *k* instances is one allocation ``RUN:k#n`` (the *n*-th stretch of slot
*k*) of ``--gpus`` GPUs, started at the stretch's start and ended by ``reclaimed`` when the
count falls below *k* — or ``released`` when the stretch lasts to the end of the trace, which
the provider did not end. ``--start`` is the wall-clock time of the trace's tick 0.

A one-node SkyPilot file (0 or 1 per tick) gives one allocation per stretch of 1s; a 16-node
file counts instances, and a drop from 16 to 12 reclaims slots 13–16 at once. Rows: a
SkyPilot file's ticks (``data[i]`` is row *i* + 1) or a Bamboo file's lines; every one is
mapped (it sets the count of its tick or time), or blank.

>>> from datetime import UTC, datetime
>>> from contractlang.importers.availability.read import parse_availability
>>> r = availability_trace(parse_availability(
...     '{"metadata": {"gap_seconds": 60}, "data": [1, 2, 0, 1]}', "t.json"),
...     datetime(2025, 1, 1, tzinfo=UTC), run_id="t", gpus=8)
>>> for alloc, ts, event in r.select("alloc_id", "ts", "event").rows():
...     print(alloc, ts.strftime("%H:%M"), event)
t:1#1 00:00 started
t:1#1 00:02 reclaimed
t:1#2 00:03 started
t:1#2 00:04 released
t:2#1 00:01 started
t:2#1 00:02 reclaimed
"""

from __future__ import annotations

from datetime import datetime, timedelta
from decimal import Decimal
from pathlib import Path

import polars as pl

from contractlang.codes import LAST_LINE_OPEN
from contractlang.diagnostics import NO_SPAN, error
from contractlang.errors import ContractlangError
from contractlang.importers.availability.read import (
    CUT_HELP,
    Availability,
    cut_bamboo_row,
    cut_short_message,
    read_availability,
    text_lines,
)
from contractlang.importers.frame import SOURCE_ROW, Events, validated
from contractlang.importers.result import Collector, ImportResult
from contractlang.importers.text import format_error, read_text
from contractlang.lang.numbers import (
    MAX_TS,
    MICROS_PER_HOUR,
    MIN_TS,
    TRACE_DAYS,
    duration_human,
)
from contractlang.trace.limits import MAX_GPUS

__all__ = ["allocations_of", "availability_trace", "import_availability", "slot_stretches"]

#: The most allocations one import makes (each is two events).
MAX_ALLOCATIONS = 10_000_000


def import_availability(
    path: str | Path,
    start: datetime,
    *,
    run_id: str | None = None,
    gpus: int = 1,
    sku: str | None = None,
    zone: str | None = None,
    capacity: str | None = "spot",
    price: Decimal | None = None,
) -> ImportResult:
    """Read an availability trace (``.json`` SkyPilot, ``.csv`` Bamboo) as allocations (see
    the module docstring)."""
    p = Path(path)
    name = str(p)
    csv_text = None
    if p.suffix.lower() == ".csv" and p.is_file():
        csv_text = read_text(p)
        cut = cut_bamboo_row(csv_text)
        if cut is not None:  # a Bamboo file cut short: its last row does not read whole
            raise format_error(name, cut_short_message(name, *cut), help=CUT_HELP)
    a = read_availability(p)
    _check_span(a, start, name)
    made = allocations_of(a)
    if made > MAX_ALLOCATIONS:
        raise ContractlangError(
            [
                error(
                    "E609",
                    f"the trace would make {made:,} allocations, more than the "
                    f"{MAX_ALLOCATIONS:,} one import makes",
                    NO_SPAN,
                    file=name,
                    help="split the trace, or import a coarser one",
                )
            ]
        )
    run = run_id if run_id is not None else p.stem
    frame = availability_trace(
        a, start, run_id=run, gpus=gpus, sku=sku, zone=zone, capacity=capacity, price=price
    )
    trace = validated(frame, name, None)
    c = Collector("availability", name)
    if a.tick_us is not None:  # SkyPilot: a row per tick
        ticks = a.span_us // a.tick_us
        c.rows_read = ticks
        c.mapped("ticks of capacity", ticks, one="tick of capacity")
    else:
        lines = text_lines(csv_text if csv_text is not None else p.read_text(encoding="utf-8"))
        blank = [n for n, line in enumerate(lines, start=1) if not line.strip()]
        c.rows_read = len(lines)
        c.mapped("add/remove rows", len(lines) - len(blank), one="add/remove row")
        c.blanks(len(blank), tuple(blank))
        if a.open_line is not None:  # it read whole, but a copy cut there would too
            c.note("I044", LAST_LINE_OPEN, a.open_line, f"`{a.open_row}`")
    ends = frame.filter(pl.col("event") != "started").get_column("event")
    c.facts += [
        ("span of the trace", duration_human(a.span_us)),
        ("most instances at once", f"{a.peak:,}"),
        ("allocations ended by a reclaim", f"{(ends == 'reclaimed').sum():,}"),
        ("allocations held to the end (released)", f"{(ends == 'released').sum():,}"),
        ("share of the time with an instance", f"{float(a.available_fraction(1)):.2%}"),
    ]
    report = c.report(events=frame.height, runs=trace.summary.runs, allocations=made)
    return ImportResult(frame, trace, report)


def availability_trace(
    a: Availability,
    start: datetime,
    *,
    run_id: str,
    gpus: int = 1,
    sku: str | None = None,
    zone: str | None = None,
    capacity: str | None = "spot",
    price: Decimal | None = None,
) -> pl.DataFrame:
    """The events of ``a``'s allocations, tick 0 at ``start``."""
    if not 1 <= gpus <= MAX_GPUS:
        raise ValueError(f"gpus must be between 1 and {MAX_GPUS:,}")
    ev = Events({SOURCE_ROW: pl.Int64()})
    numbered: dict[int, int] = {}
    for slot, s, e in slot_stretches(a):
        numbered[slot] = numbered.get(slot, 0) + 1
        alloc = f"{run_id}:{slot}#{numbered[slot]}"
        base = {"run_id": run_id, "alloc_id": alloc, "source": "scheduler"}
        ev.add(
            **base, ts=_at(start, s), event="started", gpus=gpus, sku=sku, zone=zone,
            capacity=capacity, price=price, source_row=_row(a, s),
        )  # fmt: skip
        survives = a.final_count is None or slot <= a.final_count
        ended = "released" if e == a.span_us and survives else "reclaimed"
        ev.add(**base, ts=_at(start, e), event=ended, source_row=_row(a, e))
    return ev.frame()


def _check_span(a: Availability, start: datetime, name: str) -> None:
    """E609 unless the trace, placed at ``start``, lies within the times a trace may hold
    (:data:`~contractlang.lang.numbers.MIN_TS` to ``MAX_TS``)."""
    end = start + timedelta(microseconds=a.span_us) if start <= MAX_TS else start
    if start >= MIN_TS and end < MAX_TS:
        return
    raise ContractlangError(
        [
            error(
                "E609",
                f"placed at `--start {start.isoformat()}`, the trace's {_hours(a.span_us)} would "
                f"fall outside the times a trace holds ({TRACE_DAYS})",
                NO_SPAN,
                file=name,
                help="give a `--start` within those years",
            )
        ]
    )


def slot_stretches(a: Availability) -> list[tuple[int, int, int]]:
    """Every ``(slot, start_us, end_us)``: the uninterrupted stretches in which at least
    ``slot`` instances are available, slot by slot, each slot's in time order. One sweep over
    the stretches: a rise from *c* to *d* instances opens slots *c* + 1 … *d*, a fall closes
    them, so the work grows with the stretches and the allocations, not with their product.

    >>> from contractlang.importers.availability.read import parse_availability
    >>> a = parse_availability('{"metadata": {"gap_seconds": 1}, "data": [2, 1, 2]}', "t")
    >>> [(k, s // 10**6, e // 10**6) for k, s, e in slot_stretches(a)]
    [(1, 0, 3), (2, 0, 1), (2, 2, 3)]
    """
    out: list[tuple[int, int, int]] = []
    opened: list[int] = []  # opened[k - 1]: when slot k was last opened
    for st in a.stretches:
        while len(opened) > st.count:  # a fall: the top slots close
            out.append((len(opened), opened.pop(), st.start_us))
        while len(opened) < st.count:  # a rise: new slots open
            opened.append(st.start_us)
    while opened:
        out.append((len(opened), opened.pop(), a.span_us))
    return sorted(out)


def allocations_of(a: Availability) -> int:
    """How many allocations :func:`slot_stretches` gives: every rise opens as many."""
    count = before = 0
    for st in a.stretches:
        count += max(0, st.count - before)
        before = st.count
    return count


def _row(a: Availability, us: int) -> int | None:
    """The SkyPilot tick (a row, from 1) that begins at ``us`` (at the trace's end, its last
    tick); None for Bamboo, whose rows the availability model does not keep."""
    if a.tick_us is None:
        return None
    return min(us // a.tick_us + 1, a.span_us // a.tick_us)


def _at(start: datetime, us: int) -> datetime:
    return start + timedelta(microseconds=us)


def _hours(us: int) -> str:
    return f"{Decimal(us) / MICROS_PER_HOUR:,.2f} h"
