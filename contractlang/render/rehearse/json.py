"""The JSON document of `contractlang rehearse --format json` (schema in docs/rehearse.md).

A rehearsal's times are real, so the document describes each rehearsal's own timeline: every
time is recorded seconds after that rehearsal's start (a decimal string), never a clock time
of day, and no path but a checkpoint's, relative to the checkpoint directory. Exact numbers are
strings, as in `evaluate`'s JSON; each draft's object is `evaluate`'s contract object.
"""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

from contractlang.lang.numbers import micros, plain
from contractlang.rehearse.plan import Timing
from contractlang.rehearse.results import Rehearsal, RehearsalReport
from contractlang.render.common.numbers import gpu_hours_str, seconds_str
from contractlang.render.evaluate.json import contract_to_json
from contractlang.render.rehearse.timeline import facts_by_alloc

SCHEMA = "contractlang.rehearse/1"


def render_json(report: RehearsalReport) -> str:
    return json.dumps(report_to_json(report), indent=2, ensure_ascii=False) + "\n"


def report_to_json(report: RehearsalReport) -> dict[str, Any]:
    s = report.settings
    spec = s.allocation
    return {
        "schema": SCHEMA,
        "verdict": report.verdict,
        "time_scale": str(s.time_scale),
        "allocation": {
            "gpus": spec.gpus,
            "sku": spec.sku,
            "capacity": spec.capacity,
            "zone": spec.zone,
            "price": None if spec.price is None else plain(spec.price),
        },
        "interrupts_at": [str(f) for f in s.interrupts],
        "rehearsals": [rehearsal_to_json(r) for r in report.rehearsals],
        "warnings": [w.to_json() for w in report.warnings],
    }


def _timing(t: Timing) -> dict[str, Any]:
    return {"seconds": seconds_str(t.us), "from": t.origin}


def rehearsal_to_json(r: Rehearsal) -> dict[str, Any]:
    record = r.record
    return {
        "contracts": list(record.plan.contracts),
        "run_id": record.run_id,
        "notice": {**_timing(record.plan.notice), "signal": record.notice_signal},
        "replacement_wait": _timing(record.plan.replacement_wait),
        "total_steps": record.total_steps,
        "result": record.result,
        "recorded_seconds": seconds_str(record.recorded_us),
        "interrupts": [
            {"at": str(i.fraction), "step": i.step, "alloc_id": i.alloc_id}
            for i in record.interrupts
        ],
        "allocations": _allocations(r),
        "checkpoints": [
            {
                "alloc_id": c.alloc_id,
                "at_seconds": seconds_str(c.at_us),
                "step": c.step,
                "path": c.path,
                "sha256": c.sha256,
                "valid": c.valid,
                "reason": c.reason,
            }
            for c in record.checkpoints
        ],
        "timeline": [
            {
                "at_seconds": seconds_str(e.at_us),
                "source": e.source,
                "event": e.event,
                "alloc_id": e.alloc_id,
                "step": e.step,
                "valid": e.valid,
            }
            for e in record.events
        ],
        "drafts": [
            {**contract_to_json(c), "bill": _bill(c.ledger().to_dicts())} for c in r.contracts
        ],
        "warnings": [w.to_json() for w in record.warnings],
    }


def _allocations(r: Rehearsal) -> list[dict[str, Any]]:
    record, facts = r.record, facts_by_alloc(r)
    out = []
    for a in record.allocations:
        f = facts[a.alloc_id]
        out.append(
            {
                "alloc_id": a.alloc_id,
                "attempt": a.attempt,
                "start_seconds": seconds_str(a.start_us),
                "end_seconds": seconds_str(a.end_us),
                "end_reason": a.end_reason,
                "end_step": a.end_step,
                "returncode": a.returncode,
                "interrupt": a.interrupt,
                "notice_lead_seconds": _seconds(f["notice_lead"]),
                "last_checkpoint": None
                if f["last_checkpoint_step"] is None
                else {
                    "step": f["last_checkpoint_step"],
                    "at_seconds": seconds_str(micros(f["last_checkpoint_at"] - record.started_at)),
                },
                "replacement_wait_seconds": _seconds(f["replacement_wait"]),
                "replayed_steps": f["replayed_steps"],
                "replayed_seconds": _seconds(f["replayed_time"]),
                "replayed_gpu_hours": gpu_hours_str(micros(f["replayed_time"]) * f["gpus"]),
            }
        )
    return out


def _seconds(value: Any) -> str | None:
    return None if value is None else seconds_str(micros(value))


def _text(value: Any) -> str:
    return plain(value) if isinstance(value, Decimal) else str(value)


def _bill(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The draft's ledger lines without their dates (real days, not the rehearsal's own)."""
    keep = ("alloc_id", "kind", "term", "line", "quantity_gpu_hours", "amount")
    return [
        {k: None if x[k] is None else x[k] if k == "line" else _text(x[k]) for k in keep}
        for x in lines
    ]
