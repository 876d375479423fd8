"""Small evaluation scenarios: a trace built from compact event calls (:mod:`support.events`),
`.spot` text, a result.

A scenario reads like the story it tells::

    events = [
        started("r1", "a1", "2026-03-02 10:00", gpus=8),
        released("r1", "a1", "2026-03-02 11:01"),
        accepted("r1", "2026-03-02 12:00"),
    ]
    c = contract_result(CONTRACT, events)
    assert c.totals.net_minor == 1736

Times are UTC wall-clock text (``YYYY-MM-DD HH:MM[:SS[.ffffff]]``). Money helpers return exact
``Decimal``s.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from decimal import Decimal
from pathlib import Path
from typing import Any

import polars as pl

from contractlang.evaluate.results import ContractResult, Evaluation
from contractlang.pipeline.evaluation import evaluate
from contractlang.pipeline.language import terms_from_text
from contractlang.render.evaluate.json import render_json
from contractlang.trace.digest import with_digest
from support.events import (
    Event,
    accepted,
    at,
    checkpoint,
    failed,
    notice,
    reclaimed,
    released,
    requested,
    started,
)
from support.events import frame as trace_frame

__all__ = [
    "accepted",
    "alloc_row",
    "assert_ledger_sums_to_net",
    "at",
    "checkpoint",
    "contract_result",
    "evaluate_text",
    "failed",
    "lines",
    "notice",
    "reclaimed",
    "released",
    "requested",
    "run_row",
    "started",
    "trace_frame",
    "usd",
    "write_spot",
]


def evaluate_text(
    spot: str, events: Sequence[Event] | pl.DataFrame, filename: str = "terms.spot"
) -> Evaluation:
    """Check ``spot`` and evaluate it against the events."""
    frame = events if isinstance(events, pl.DataFrame) else trace_frame(events)
    return evaluate(terms_from_text(spot, filename), frame)


def json_document(result: Evaluation) -> str:
    """``result``'s `contractlang.evaluate/1` document, the trace's digest taken first (as
    `evaluate --format json` takes it: the renderer only reads it)."""
    return render_json(replace(result, trace=with_digest(result.trace)))


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
