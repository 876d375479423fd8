"""The summary of a trace as `contractlang trace validate` and `trace facts` show it: a small
table for people, a JSON document for tools (stable keys, no paths or clock times), and the
one-line totals of a valid or invalid trace."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

from contractlang.errors import ContractlangError
from contractlang.trace.model import Trace
from contractlang.trace.schema import TraceSummary
from contractlang.trace.validate import TraceInvalid


def valid_total(summary: TraceSummary) -> str:
    """The last line of `trace validate` on a valid trace: ``20,207 rows: valid, 2 warnings``."""
    return f"{_count(summary.rows_read, 'row')}: valid" + _warnings(summary.warnings)


def invalid_total(exc: ContractlangError) -> str:
    """The last line of `trace validate` on an invalid trace: how many errors, in how many
    rows (when the rows were read), and warnings."""
    if isinstance(exc, TraceInvalid):
        return (
            f"{_count(exc.rows, 'row')}: invalid, {_count(exc.errors, 'error')} in "
            f"{_count(exc.error_rows, 'row')}" + _warnings(exc.warnings)
        )
    errors = sum(1 for d in exc.diagnostics if d.is_error)
    warnings = len(exc.diagnostics) - errors
    return f"invalid, {_count(errors, 'error')}; no rows were checked" + _warnings(warnings)


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def _warnings(n: int) -> str:
    return f", {_count(n, 'warning')}" if n else ""


def summary_json(summary: TraceSummary, loaded: Trace) -> dict[str, Any]:
    """The JSON document of `--format json`: the summary and the warnings, no paths."""
    doc = summary.model_dump(mode="json")
    doc["not_used"] = [dict(n) for n in doc["not_used"]]
    warnings = [w.to_json() for w in loaded.warnings]
    for w in warnings:
        w.pop("file", None)
    return {"version": 1, "valid": True, "summary": doc, "warnings": warnings}


def render_summary(summary: TraceSummary, name: str, console: Console) -> None:
    """The summary as a small two-column table."""
    table = Table(show_header=False, box=None, pad_edge=False, title=None)
    table.add_column(style="bold")
    table.add_column(justify="right")
    table.add_column()
    table.add_row("trace", "", name)
    table.add_row("rows read", f"{summary.rows_read:,}", "")
    table.add_row("rows used", f"{summary.rows_used:,}", "")
    for item in summary.not_used:
        table.add_row("not used", f"{item.rows:,}", item.reason)
    facts = summary.facts
    accepted = f"{facts.accepted_runs:,} accepted" if facts else ""
    table.add_row("runs", f"{summary.runs:,}", accepted)
    closed = (
        f"{summary.closed_at_open_at:,} closed at --open-at" if summary.closed_at_open_at else ""
    )
    table.add_row("allocations", f"{summary.allocations:,}", closed)
    if summary.first_ts and summary.last_ts:
        table.add_row(
            "time span",
            "",
            f"{summary.first_ts:%Y-%m-%d %H:%M:%S} to {summary.last_ts:%Y-%m-%d %H:%M:%S} UTC",
        )
    if facts:
        table.add_row("reclaims", f"{facts.reclaims:,}", "")
        table.add_row("failures", f"{facts.failures:,}", "")
        table.add_row("metered GPU-hours", f"{facts.metered_gpu_hours:,.2f}", "")
        share = (
            f"{facts.lost_gpu_hours / facts.metered_gpu_hours:.1%} of metered"
            if facts.metered_gpu_hours
            else ""
        )
        table.add_row("lost GPU-hours", f"{facts.lost_gpu_hours:,.2f}", share)
        table.add_row("lost steps", f"{facts.lost_steps:,}", "")
    if summary.extra_columns:
        table.add_row("trace columns", "", ", ".join(f"trace.{c}" for c in summary.extra_columns))
    if summary.warnings:
        table.add_row("warnings", f"{summary.warnings:,}", "")
    console.print(table)
