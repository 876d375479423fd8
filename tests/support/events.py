"""One builder of trace events for every test: compact calls that read like the story.

    rows = [
        requested("r1", 0),
        started("r1", "a1", 5, gpus=8),
        checkpoint("r1", 35, step=100),
        reclaimed("r1", "a1", 90, step=130),
        accepted("r1", "2025-01-01 03:00"),
    ]
    df = frame(rows)

A time is minutes after :data:`T0` (a number) or UTC wall-clock text
(``YYYY-MM-DD HH:MM[:SS[.ffffff]]``). Each event's ``source`` is the system that records it
(docs/trace.md, "Events"). :data:`TRACE_SCHEMA` is the trace's columns as the package defines
them (text for the enum columns, as a file gives them).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import polars as pl

from contractlang.trace.schema import COLUMNS, EVENT_DTYPES, EVENTS

Event = dict[str, Any]
When = str | float

T0 = datetime(2025, 1, 1, tzinfo=UTC)

#: The trace's columns and types, from the package (enum columns as text).
TRACE_SCHEMA: dict[str, pl.DataType] = {
    c: pl.String() if isinstance(EVENT_DTYPES[c], pl.Enum) else EVENT_DTYPES[c] for c in COLUMNS
}


def schema(*, without: Sequence[str] = ()) -> dict[str, pl.DataType]:
    """:data:`TRACE_SCHEMA` less some optional columns."""
    return {c: t for c, t in TRACE_SCHEMA.items() if c not in without}


def at(when: When) -> datetime:
    """A UTC instant: ``when`` minutes after :data:`T0`, or wall-clock text."""
    if isinstance(when, str):
        return datetime.fromisoformat(when).replace(tzinfo=UTC)
    return T0 + timedelta(minutes=when)


def event(run: str | None, alloc: str | None, when: When, kind: str, **values: Any) -> Event:
    """Any event; an unknown ``kind`` is recorded as from the job (for tests of T004)."""
    source = EVENTS[kind].source if kind in EVENTS else "job"
    return {"run_id": run, "alloc_id": alloc, "ts": at(when), "source": source, "event": kind,
            **values}  # fmt: skip


def started(
    run: str,
    alloc: str,
    when: When,
    gpus: int = 8,
    *,
    sku: str = "H100-80G",
    zone: str = "us-east-1a",
    capacity: str = "spot",
    price: str | Decimal | None = None,
    **extra: Any,
) -> Event:
    """An allocation starts; ``price`` is decimal text per GPU-hour (``trace.price``)."""
    values: dict[str, Any] = {"gpus": gpus, "sku": sku, "zone": zone, "capacity": capacity}
    if price is not None:
        values["price"] = Decimal(price)
    return event(run, alloc, when, "started", **values, **extra)


def released(run: str, alloc: str, when: When, *, step: int | None = None) -> Event:
    return event(run, alloc, when, "released", step=step)


def reclaimed(run: str, alloc: str, when: When, *, step: int | None = None) -> Event:
    return event(run, alloc, when, "reclaimed", step=step)


def failed(run: str, alloc: str, when: When, *, step: int | None = None) -> Event:
    return event(run, alloc, when, "failed", step=step)


def notice(run: str, alloc: str, when: When) -> Event:
    return event(run, alloc, when, "notice")


def requested(run: str, when: When, alloc: str | None = None) -> Event:
    return event(run, alloc, when, "requested")


def checkpoint(run: str, when: When, step: int, *, valid: bool = True) -> Event:
    return event(run, None, when, "checkpoint", step=step, valid=valid)


def accepted(run: str, when: When) -> Event:
    return event(run, None, when, "accepted")


def frame(rows: Sequence[Event], schema: dict[str, pl.DataType] | None = None) -> pl.DataFrame:
    """The events as a trace frame with ``schema``'s types (default :data:`TRACE_SCHEMA`);
    keys outside the schema become extra columns, typed by their values."""
    base = dict(TRACE_SCHEMA if schema is None else schema)
    extras: list[str] = []
    for e in rows:
        extras.extend(k for k in e if k not in base and k not in TRACE_SCHEMA and k not in extras)
    columns = [*base, *extras]
    data = [{k: e.get(k) for k in columns} for e in rows]
    return pl.DataFrame(data, schema_overrides=base, infer_schema_length=None)
