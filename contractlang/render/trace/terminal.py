"""The summary of a trace as `contractlang trace validate` and `trace facts` show it: a small
table for people, the one-line totals of a valid or invalid trace, and what a quarantine set
aside in words (its JSON: :mod:`~contractlang.render.trace.json`)."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from contractlang.codes import CODES
from contractlang.errors import ContractlangError
from contractlang.render.common.numbers import counted
from contractlang.trace.model import Quarantine
from contractlang.trace.problems import TraceInvalid
from contractlang.trace.schema import TraceSummary


def valid_total(summary: TraceSummary, quarantine: Quarantine | None = None) -> str:
    """The last line of `trace validate` on a valid trace: ``20,207 rows: valid, 2 warnings``
    (and with a quarantine, what it set aside)."""
    line = f"{counted(summary.rows_read, 'row')}: valid" + _warnings(summary.warnings)
    if quarantine is not None:
        line += f"; {set_aside(quarantine)}"
    return line


def set_aside(q: Quarantine) -> str:
    """What a quarantine set aside, in words: ``2 runs (57 rows) set aside: 1 × T012
    (duplicate row), 3 × T010 (event outside the allocation's lifetime)``."""
    if not q.runs:
        return "no run set aside"
    why = ", ".join(f"{n:,} × {code} ({CODES[code]})" for code, n in q.problems.items())
    return f"{counted(q.runs, 'run')} ({counted(q.rows, 'row')}) set aside" + (
        f": {why}" if why else ""
    )


def invalid_total(exc: ContractlangError) -> str:
    """The last line of `trace validate` on an invalid trace: how many errors, in how many
    rows (when the rows were read), and warnings."""
    if isinstance(exc, TraceInvalid):
        return (
            f"{counted(exc.rows, 'row')}: invalid, {counted(exc.errors, 'error')} in "
            f"{counted(exc.error_rows, 'row')}" + _warnings(exc.warnings)
        )
    errors = sum(1 for d in exc.diagnostics if d.is_error)
    warnings = len(exc.diagnostics) - errors
    return f"invalid, {counted(errors, 'error')}; no rows were checked" + _warnings(warnings)


def _warnings(n: int) -> str:
    return f", {counted(n, 'warning')}" if n else ""


def render_summary(
    summary: TraceSummary, name: str, console: Console, quarantine: Quarantine | None = None
) -> None:
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
    if quarantine is not None:
        table.add_row("set aside", f"{quarantine.runs:,}", set_aside(quarantine))
    console.print(table)
