"""Small evaluation scenarios: a trace built from compact event calls, `.spot` text, a result.

A scenario reads like the story it tells::

    events = [
        started("r1", "a1", "2026-03-02 10:00", gpus=8),
        released("r1", "a1", "2026-03-02 11:01"),
        accepted("r1", "2026-03-02 12:00"),
    ]
    c = contract_result(CONTRACT, events)
    assert c.totals.net_minor == 1736

Times are UTC wall-clock text (``YYYY-MM-DD HH:MM[:SS[.ffffff]]``); each event's ``source`` is
the system that records it (design §3). Money helpers return exact ``Decimal``s.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import polars as pl

from contractlang.evaluate.results import ContractResult, Evaluation
from contractlang.pipeline.evaluation import evaluate
from contractlang.pipeline.language import terms_from_text

Event = dict[str, Any]

_SOURCE = {
    "requested": "scheduler",
    "started": "scheduler",
    "notice": "scheduler",
    "reclaimed": "scheduler",
    "released": "scheduler",
    "failed": "scheduler",
    "checkpoint": "job",
    "restored": "job",
    "progress": "job",
    "accepted": "job",
    "rejected": "job",
}

#: The typed columns of a scenario trace; extra columns (``trace.<column>``) follow.
TRACE_SCHEMA: dict[str, pl.DataType] = {
    "run_id": pl.String(),
    "alloc_id": pl.String(),
    "ts": pl.Datetime("us", "UTC"),
    "source": pl.String(),
    "event": pl.String(),
    "gpus": pl.Int64(),
    "sku": pl.String(),
    "zone": pl.String(),
    "capacity": pl.String(),
    "price": pl.Decimal(38, 6),
    "step": pl.Int64(),
    "valid": pl.Boolean(),
}


def at(text: str) -> datetime:
    """A UTC instant from ``YYYY-MM-DD HH:MM[:SS[.ffffff]]``."""
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def _event(run: str, alloc: str | None, ts: str, event: str, **values: Any) -> Event:
    return {
        "run_id": run,
        "alloc_id": alloc,
        "ts": at(ts),
        "source": _SOURCE[event],
        "event": event,
        **values,
    }


def started(
    run: str,
    alloc: str,
    ts: str,
    *,
    gpus: int = 8,
    sku: str = "H100-80G",
    zone: str = "us-east-1a",
    capacity: str = "spot",
    price: str | None = None,
    **extra: Any,
) -> Event:
    """An allocation starts; ``price`` is decimal text per GPU-hour (``trace.price``)."""
    return _event(
        run,
        alloc,
        ts,
        "started",
        gpus=gpus,
        sku=sku,
        zone=zone,
        capacity=capacity,
        price=None if price is None else Decimal(price),
        **extra,
    )


def released(run: str, alloc: str, ts: str, *, step: int | None = None) -> Event:
    return _event(run, alloc, ts, "released", step=step)


def reclaimed(run: str, alloc: str, ts: str, *, step: int | None = None) -> Event:
    return _event(run, alloc, ts, "reclaimed", step=step)


def failed(run: str, alloc: str, ts: str, *, step: int | None = None) -> Event:
    return _event(run, alloc, ts, "failed", step=step)


def notice(run: str, alloc: str, ts: str) -> Event:
    return _event(run, alloc, ts, "notice")


def requested(run: str, ts: str, alloc: str | None = None) -> Event:
    return _event(run, alloc, ts, "requested")


def checkpoint(run: str, ts: str, step: int, *, valid: bool = True) -> Event:
    return _event(run, None, ts, "checkpoint", step=step, valid=valid)


def accepted(run: str, ts: str) -> Event:
    return _event(run, None, ts, "accepted")


def trace_frame(events: Sequence[Event]) -> pl.DataFrame:
    """The events as a trace frame with the schema's types (extra keys become extra columns)."""
    extras: list[str] = []
    for e in events:
        extras.extend(k for k in e if k not in TRACE_SCHEMA and k not in extras)
    rows = [{k: e.get(k) for k in [*TRACE_SCHEMA, *extras]} for e in events]
    schema_overrides = dict(TRACE_SCHEMA)
    return pl.DataFrame(rows, schema_overrides=schema_overrides, infer_schema_length=None)


def evaluate_text(
    spot: str, events: Sequence[Event] | pl.DataFrame, filename: str = "terms.spot"
) -> Evaluation:
    """Check ``spot`` and evaluate it against the events."""
    frame = events if isinstance(events, pl.DataFrame) else trace_frame(events)
    return evaluate(terms_from_text(spot, filename), frame)


def contract_result(spot: str, events: Sequence[Event] | pl.DataFrame) -> ContractResult:
    """The result of the only contract in ``spot``."""
    result = evaluate_text(spot, events)
    (only,) = result.contracts
    return only


def usd(text: str) -> Decimal:
    """An exact amount: ``usd("17.36")``."""
    return Decimal(text)


def lines(c: ContractResult) -> list[tuple[str, str | None, str, str, Decimal]]:
    """The ledger as ``(run_id, alloc_id, kind, term, amount)`` tuples, in ledger order."""
    return [
        (r["run_id"], r["alloc_id"], r["kind"], r["term"], r["amount"])
        for r in c.ledger().iter_rows(named=True)
    ]


def run_row(c: ContractResult, run_id: str) -> dict[str, Any]:
    """One row of the per-run table (money as exact ``Decimal``)."""
    rows = c.runs_table().filter(pl.col("run_id") == run_id).to_dicts()
    assert len(rows) == 1, f"run {run_id} not found"
    return rows[0]


def alloc_row(c: ContractResult, alloc_id: str) -> dict[str, Any]:
    """One allocation's row of the evaluated facts (the columns the engine adds included)."""
    rows = c.allocations.filter(pl.col("alloc_id") == alloc_id).to_dicts()
    assert len(rows) == 1, f"allocation {alloc_id} not found"
    return rows[0]


def assert_ledger_sums_to_net(c: ContractResult) -> None:
    """The ledger's amounts sum exactly to the net total, and per run to each run's net."""
    ledger = c.ledger()
    assert all(isinstance(a, Decimal) for a in ledger["amount"].to_list())
    total = sum(ledger["amount"].to_list(), Decimal(0))
    assert total == c.money(c.totals.net_minor)
    for run in c.runs_table().iter_rows(named=True):
        amounts = ledger.filter(pl.col("run_id") == run["run_id"])["amount"].to_list()
        assert sum(amounts, Decimal(0)) == run["net"], run["run_id"]


def write_spot(path: Path, spot: str) -> Path:
    path.write_text(spot, encoding="utf-8")
    return path
