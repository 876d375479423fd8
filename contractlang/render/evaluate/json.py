"""The JSON document of `contractlang evaluate --format json` (schema in docs/evaluate.md).

Stable: the same inputs give the same bytes. No input paths, no clock times; every exact
number is a string (money at the contract's precision, GPU-hours at 6 places), so no consumer
reads money through a float. For audit, it names its inputs by content: the SHA-256 of each
terms file's text (with the file's name, not its path) and the digest of the normalised trace
(:mod:`~contractlang.trace.digest`: the same for the same events in any format or row order),
taken before rendering and carried by the evaluation's trace.
"""

from __future__ import annotations

import hashlib
import json
from fractions import Fraction
from pathlib import PurePath
from typing import Any

from contractlang.diagnostics import Source
from contractlang.errors import InternalError
from contractlang.evaluate.results import BudgetResult, ContractResult, DisplayUnit, Evaluation
from contractlang.render.common.numbers import (
    gpu_hours_str,
    measure,
    minor_to_str,
    seconds_str,
)
from contractlang.render.trace.json import quarantine_json

SCHEMA = "contractlang.evaluate/1"
_MONEY = DisplayUnit("", Fraction(1), "money")


def evaluation_to_json(result: Evaluation) -> dict[str, Any]:
    summary = result.trace.summary
    return {
        "schema": SCHEMA,
        "verdict": result.verdict,
        "terms": [terms_file_json(source) for source in result.sources.values()],
        "trace": {
            "events": summary.rows_read,
            "runs": summary.runs,
            "allocations": summary.allocations,
            "from": summary.first_ts.isoformat() if summary.first_ts else None,
            "to": summary.last_ts.isoformat() if summary.last_ts else None,
            "digest": _digest(result),
            **(
                {"quarantine": quarantine_json(result.trace.quarantine)}
                if result.trace.quarantine is not None
                else {}
            ),
        },
        "contracts": [contract_to_json(c) for c in result.contracts],
        "warnings": [w.to_json() for w in result.warnings],
    }


def _digest(result: Evaluation) -> str:
    """The trace's digest, taken by whoever asked for the document (``digest`` of
    :func:`~contractlang.pipeline.evaluation.evaluate` and of
    :func:`~contractlang.compare.run.compare`)."""
    if result.trace.digest is None:
        raise InternalError("the trace's digest was not taken for the JSON document")
    return result.trace.digest


def terms_file_json(source: Source) -> dict[str, str]:
    """A terms file by its name (without its folder) and the SHA-256 of its text as read
    (UTF-8; the same as ``sha256sum`` of the file unless it starts with a byte-order mark or
    ends lines with a lone carriage return).

    >>> terms_file_json(Source("rulesets/x.spot", ""))["file"]
    'x.spot'
    """
    digest = hashlib.sha256(source.text.encode("utf-8")).hexdigest()
    return {"file": PurePath(source.name).name, "sha256": digest}


def render_json(result: Evaluation) -> str:
    return dump_json(evaluation_to_json(result))


def dump_json(doc: dict[str, Any]) -> str:
    """A document as the bytes `evaluate --format json` writes."""
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def contract_to_json(c: ContractResult) -> dict[str, Any]:
    t, p, s = c.totals, c.promises, c.settings

    def money(minor: int) -> str:
        return minor_to_str(minor, s.precision)

    dist = {
        k: (None if v is None else measure(v, _MONEY, s.precision))
        for k, v in t.cost_per_accepted_run.items()
    }
    return {
        "name": c.name,
        "currency": s.currency,
        "precision": s.precision,
        "rounding": s.rounding,
        "totals": {
            "runs": t.runs,
            "accepted_runs": t.accepted_runs,
            "allocations": t.allocations,
            "metered_gpu_hours": gpu_hours_str(t.metered_gpu_us),
            "excluded_gpu_hours": gpu_hours_str(t.excluded_gpu_us),
            "billable_gpu_hours": gpu_hours_str(t.billable_gpu_us),
            "gross": money(t.gross_minor),
            "credits": money(t.credits_minor),
            "cap_cuts": money(t.cap_cuts_minor),
            "net": money(t.net_minor),
        },
        "lost": {"gpu_hours": gpu_hours_str(t.lost_gpu_us), "steps": t.lost_steps},
        "cost_per_accepted_run": dist,
        "promises": {
            "reclaim_notice": None
            if p.notice_us is None
            else {
                "promised_seconds": seconds_str(p.notice_us),
                "reclaims": p.reclaims,
                "breaches": p.notice_breaches,
                "shortest_seconds": seconds_str(p.shortest_notice_us),
            },
            "restart": None
            if p.restart_us is None
            else {
                "promised_seconds": seconds_str(p.restart_us),
                "replacements": p.replacements,
                "breaches": p.restart_breaches,
                "never_replaced": p.never_replaced,
                "longest_wait_seconds": seconds_str(p.longest_wait_us),
            },
        },
        "budgets": [budget_to_json(b, s.precision) for b in c.budgets],
        "warnings": [w.to_json() for w in c.warnings],
    }


def budget_to_json(b: BudgetResult, precision: int) -> dict[str, Any]:
    return {
        "name": b.name,
        "met": b.met,
        "requirements": [
            {
                "require": r.text,
                "line": r.line,
                "value": measure(r.value, r.unit, precision),
                "limit": measure(r.limit, r.unit, precision),
                "unit": r.unit.label,
                "margin": measure(r.margin, r.unit, precision),
                "verdict": r.verdict,
            }
            for r in b.requirements
        ],
    }
