"""A rehearsal's record as a trace in the schema of docs/trace.md: one ``run_id``, the scheduler's
and the job's events, no invoice lines. ``started`` rows carry the allocation's ``gpus``,
``sku``, ``zone``, ``capacity`` and ``price``; times are UTC microseconds from the rehearsal's
real start, with scaled waits recorded at their full length.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import polars as pl

from contractlang.lang.frames import TIMESTAMP
from contractlang.rehearse.record import Record
from contractlang.trace.schema import COLUMNS, EVENT_DTYPES

#: The trace's columns, with text for the enum columns (as a file holds them); ``price`` gets
#: its own decimal scale (see :func:`to_frame`).
FRAME_SCHEMA: dict[str, pl.DataType] = {
    c: pl.String() if isinstance(EVENT_DTYPES[c], pl.Enum) else EVENT_DTYPES[c] for c in COLUMNS
}


def to_frame(record: Record) -> pl.DataFrame:
    """The rehearsal's trace, rows in recorded time order (exact repeats dropped)."""
    spec = record.allocation
    rows: list[dict[str, Any]] = []
    seen: set[tuple[Any, ...]] = set()
    for e in record.events:
        row: dict[str, Any] = {
            "run_id": record.run_id,
            "alloc_id": e.alloc_id,
            "ts": record.started_at + timedelta(microseconds=e.at_us),
            "source": e.source,
            "event": e.event,
            "step": e.step,
            "valid": e.valid,
        }
        if e.event == "started":
            row |= {
                "gpus": spec.gpus,
                "sku": spec.sku,
                "zone": spec.zone,
                "capacity": spec.capacity,
                "price": spec.price,
            }
        key = tuple(sorted((k, str(v)) for k, v in row.items()))
        if key in seen:  # a job that says the same thing twice in one microsecond
            continue
        seen.add(key)
        rows.append(row)
    schema = dict(FRAME_SCHEMA)
    schema["ts"] = TIMESTAMP
    schema["price"] = pl.Decimal(38, _scale(record))
    data = [{c: r.get(c) for c in schema} for r in rows]
    return pl.DataFrame(data, schema=schema)


def _scale(record: Record) -> int:
    price = record.allocation.price
    if price is None:
        return 2
    exponent = price.as_tuple().exponent
    return max(2, -exponent) if isinstance(exponent, int) else 2
