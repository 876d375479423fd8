"""The summary of a trace as `contractlang trace validate --format json` and `trace facts
--format json` write it, for tools: stable keys, no paths or clock times; and what a quarantine
set aside, which the `contractlang.evaluate/1` document carries too."""

from __future__ import annotations

from typing import Any

from contractlang.trace.model import Quarantine, Trace
from contractlang.trace.schema import TraceSummary


def quarantine_json(q: Quarantine | None) -> dict[str, Any] | None:
    """A quarantine in JSON: runs and rows set aside, problems by code (no path)."""
    if q is None:
        return None
    return {"runs": q.runs, "rows": q.rows, "problems": dict(q.problems)}


def summary_json(summary: TraceSummary, loaded: Trace) -> dict[str, Any]:
    """The JSON document of `--format json`: the summary and the warnings, no paths."""
    doc = summary.model_dump(mode="json")
    doc["not_used"] = [dict(n) for n in doc["not_used"]]
    warnings = [w.to_json() for w in loaded.warnings]
    for w in warnings:
        w.pop("file", None)
    out = {"version": 1, "valid": True, "summary": doc, "warnings": warnings}
    if loaded.quarantine is not None:
        out["quarantine"] = quarantine_json(loaded.quarantine)
    return out
