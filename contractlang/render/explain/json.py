"""The JSON document of `contractlang explain --format json` (schema ``contractlang.explain/1``,
in docs/evaluate.md): one run's bill under each contract — the run's figures, each
allocation's facts and its ledger lines, and the run's own lines (caps above the allocation).

Stable: exact numbers as strings (money at the contract's precision, GPU-hours at 6 places,
durations in seconds), timestamps of the trace in ISO 8601, no paths.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

import polars as pl

from contractlang.evaluate.results import ContractResult, Evaluation
from contractlang.lang.numbers import micros, plain
from contractlang.render.common.numbers import gpu_hours_str, minor_to_str, seconds_str
from contractlang.render.explain.terminal import select

SCHEMA = "contractlang.explain/1"


def render_explain_json(result: Evaluation, run_id: str, alloc_id: str | None = None) -> str:
    """The document, as text (raises
    :class:`~contractlang.render.explain.terminal.ExplainError` for a run or allocation the
    trace does not have)."""
    doc = {
        "schema": SCHEMA,
        "run_id": run_id,
        "alloc_id": alloc_id,
        "contracts": [_contract(c, run_id, alloc_id) for c in result.contracts],
    }
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def _contract(c: ContractResult, run_id: str, alloc_id: str | None) -> dict[str, Any]:
    run, allocs = select(c, run_id, alloc_id)
    s = c.settings
    ledger = c.ledger().filter(pl.col("run_id") == run_id)

    def money(minor: int) -> str:
        return minor_to_str(minor, s.precision)

    def lines(frame: pl.DataFrame) -> list[dict[str, Any]]:
        return [
            {
                "kind": r["kind"],
                "term": r["term"],
                "line": r["line"],
                "month": r["month"],
                "quantity_gpu_hours": _text(r["quantity_gpu_hours"]),
                "amount": _text(r["amount"]),
            }
            for r in frame.iter_rows(named=True)
        ]

    out: dict[str, Any] = {
        "name": c.name,
        "currency": s.currency,
        "precision": s.precision,
        "run": {
            "accepted": run["accepted"],
            "time_to_accept_seconds": _seconds(run["time_to_accept"]),
            "allocations": run["allocations"],
            "reclaims": run["reclaims"],
            "failures": run["failures"],
            "settle_month": run["settle_month"],
            "gross": money(run["gross_minor"]),
            "credits": money(-run["credit_lines_minor"]),
            "cap_cuts": money(run["cap_cuts_minor"]),
            "net": money(run["net_minor"]),
        },
        "allocations": [
            _allocation(c, a, lines(ledger.filter(pl.col("alloc_id") == a["alloc_id"])))
            for a in allocs.iter_rows(named=True)
        ],
    }
    if alloc_id is None:
        out["run_lines"] = lines(ledger.filter(pl.col("alloc_id").is_null()))
    return out


def _allocation(c: ContractResult, a: dict[str, Any], lines: list[Any]) -> dict[str, Any]:
    whole = a["excluded_by"]
    return {
        "alloc_id": a["alloc_id"],
        "attempt": a["attempt"],
        "gpus": a["gpus"],
        "sku": a["sku"],
        "capacity": a["capacity"],
        "zone": a["zone"],
        "start": _iso(a["start"]),
        "end": _iso(a["end"]),
        "end_reason": a["end_reason"],
        "runtime_seconds": seconds_str(a["runtime_us"]),
        "gpu_hours": gpu_hours_str(a["gpus"] * a["runtime_us"]),
        "notice_lead_seconds": _seconds(a["notice_lead"]),
        "replacement_wait_seconds": _seconds(a["replacement_wait"]),
        "last_checkpoint_at": _iso(a["last_checkpoint_at"]),
        "last_checkpoint_step": a["last_checkpoint_step"],
        "replayed_seconds": _seconds(a["replayed_time"]),
        "replayed_steps": a["replayed_steps"],
        "excluded_by": None if whole is None else c.plan.whole_exclusions[whole].label,
        "billable_seconds": seconds_str(a["billable_us"]),
        "lines": lines,
    }


def _seconds(value: timedelta | None) -> str | None:
    return None if value is None else seconds_str(micros(value))


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()


def _text(value: Decimal | None) -> str | None:
    return None if value is None else plain(value)
