"""The terminal report of `contractlang rehearse`: per rehearsal its settings, timeline and
failure path; per draft metered against net billed usage, each allocation's bill and the
budget verdicts. Every line wraps within the console's width (80 columns off a terminal)."""

from __future__ import annotations

import functools
from collections.abc import Iterable
from decimal import Decimal
from fractions import Fraction
from typing import Any

import polars as pl
from rich.console import Console, RenderableType
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from contractlang.diagnostics import printable
from contractlang.evaluate.results import ContractResult
from contractlang.lang.numbers import MICROS_PER_HOUR, plain, round_fraction
from contractlang.rehearse.plan import Timing
from contractlang.rehearse.record import Record
from contractlang.rehearse.results import Rehearsal, RehearsalReport
from contractlang.render.common.layout import print_trimmed, wrap
from contractlang.render.common.numbers import duration_human, money
from contractlang.render.evaluate.terminal import requirement_line
from contractlang.render.rehearse.timeline import (
    facts_by_alloc,
    failure_path_table,
    span,
    timeline_table,
)


def gpu_hours(gpu_us: int) -> str:
    """GPU-hours to 4 places (a rehearsal's allocations are short).

    >>> gpu_hours(141_208_384)
    '0.0392 GPU-h'
    """
    return f"{plain(round_fraction(Fraction(gpu_us, MICROS_PER_HOUR), 4, half_even=False))} GPU-h"


def para(text: str | Text, indent: int = 0) -> RenderableType:
    """A paragraph that wraps at the console's width, ``indent`` columns in."""
    body = text if isinstance(text, Text) else Text(text)
    return Padding(body, (0, 0, 0, indent), expand=False)


def _origin(t: Timing, what: str) -> str:
    if t.origin == "flag":
        return "set by flag"
    if t.origin == "promise":
        return "the draft's promise"
    return f"no {what} promised"


def settings_lines(record: Record, number: int, total: int) -> list[RenderableType]:
    plan = record.plan
    lines: list[RenderableType] = [
        para(
            Text(
                f"rehearsal {number} of {total}: {printable(', '.join(plan.contracts))}",
                style="bold",
            )
        )
    ]
    notice = plan.notice
    how = (
        f"notice {duration_human(notice.us)} by {record.notice_signal}"
        if notice.us
        else "no notice: reclaimed at once"
    )
    wait = plan.replacement_wait
    lines.append(
        para(
            f"{how} ({_origin(notice, 'notice')}); replacement wait "
            f"{duration_human(wait.us)} ({_origin(wait, 'restart')})",
            2,
        )
    )
    spec = record.allocation
    price = f", price {plain(spec.price)} per GPU-hour" if spec.price is not None else ""
    zone = f" in {spec.zone}" if spec.zone else ""
    lines.append(
        para(
            printable(f"each allocation: {spec.gpus} × {spec.sku}, {spec.capacity}{zone}{price}"), 2
        )
    )
    shares = ", ".join(i.percent for i in record.interrupts)
    fired = sum(1 for i in record.interrupts if i.alloc_id is not None)
    steps = f" of {record.total_steps} steps" if record.total_steps else ""
    planned = (
        f"interrupts at {shares}{steps}: {fired} of {len(record.interrupts)} came"
        if record.interrupts
        else "no interrupt planned"
    )
    allocations = _count(len(record.allocations), "allocation")
    lines.append(para(printable(f"{planned}; run `{record.run_id}`, {allocations}"), 2))
    if record.time_scale != 1:
        lines.append(
            para(
                Text(
                    f"time scale {record.time_scale}: notice leads and waits ran "
                    f"{record.time_scale}× faster than recorded, so the job had 1/"
                    f"{record.time_scale} of each notice lead to act in; the times below are "
                    f"recorded ({span(record.recorded_us)} in all, {span(record.real_us)} of "
                    "real time)",
                    style="yellow",
                ),
                2,
            )
        )
    return lines


def _count(n: int, word: str) -> str:
    """``1 allocation``, ``3 allocations``."""
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _bill(rows: Iterable[dict[str, Any]], currency: str) -> str:
    """An allocation's (or the run's) ledger lines in words."""
    parts = []
    for r in rows:
        amount: Decimal = r["amount"]
        qty = plain(r["quantity_gpu_hours"]) if r["quantity_gpu_hours"] is not None else ""
        if r["kind"] == "charge":
            parts.append(f"charged {qty} GPU-h: {plain(amount, grouped=True)} {currency}")
        elif r["kind"] == "exclusion":
            parts.append(f"excluded {qty} GPU-h by “{printable(r['term'])}”")
        elif r["kind"] == "credit":
            parts.append(
                f"credit “{printable(r['term'])}” {plain(amount, grouped=True)} {currency}"
            )
        else:
            parts.append(
                f"“{printable(r['term'])}” {plain(amount, grouped=True, sign=True)} {currency}"
            )
    return "; ".join(parts) or "nothing billed"


def draft_lines(c: ContractResult, rehearsal: Rehearsal, width: int) -> list[RenderableType]:
    t, s = c.totals, c.settings

    def m(minor: int) -> str:
        return money(minor, s.precision, s.currency)

    out: list[RenderableType] = [
        Text(""),
        para(Text(printable(c.name), style="bold")),
        para(
            f"metered {gpu_hours(t.metered_gpu_us)} · excluded {gpu_hours(t.excluded_gpu_us)}"
            f" · billed {gpu_hours(t.billable_gpu_us)} · replayed {gpu_hours(t.lost_gpu_us)}"
            f" ({t.lost_steps} steps)",
            2,
        ),
    ]
    ledger = c.ledger()
    facts = facts_by_alloc(rehearsal)
    bills = Table.grid(padding=(0, 1))
    bills.add_column(no_wrap=True)
    bills.add_column(overflow="fold")
    for a in rehearsal.record.allocations:
        lines = ledger.filter(pl.col("alloc_id") == a.alloc_id).iter_rows(named=True)
        bills.add_row(
            printable(f"{a.alloc_id} {facts[a.alloc_id]['end_reason']}"), _bill(lines, s.currency)
        )
    run_lines = ledger.filter(pl.col("alloc_id").is_null())
    if not run_lines.is_empty():
        bills.add_row("the run", _bill(run_lines.iter_rows(named=True), s.currency))
    out.append(Padding(bills, (0, 0, 0, 2), expand=False))
    out.append(
        para(
            Text.assemble(
                f"gross {m(t.gross_minor)} · credits {m(t.credits_minor)} · cap cuts "
                f"{m(t.cap_cuts_minor)} · ",
                (f"net billed {m(t.net_minor)}", "bold"),
            ),
            2,
        )
    )
    for b in c.budgets:
        verdict = (
            Text("meets it", style="green") if b.met else Text("does not meet it", style="red")
        )
        out.append(para(Text.assemble(f"budget “{printable(b.name)}”: ", verdict), 2))
        for r in b.requirements:
            mark, chunks = requirement_line(r, s.precision)
            said = [printable(x) for x in chunks]
            said[0] = mark.plain + said[0]
            line = Text("\n".join(wrap(said, width - 2, indent=len(mark))))
            line.stylize(mark.style, 0, len(mark))
            out.append(para(line, 2))
    return out


#: The closing hints, each with the flag that makes it needless once given.
HINTS: tuple[tuple[str, str], ...] = (
    ("--trace-out", "the rehearsal as a trace: --trace-out DIR"),
    ("--ledger", "line items: --ledger PATH"),
    ("--runs", "per-run figures: --runs PATH"),
    ("--format", "data: --format json"),
)


def render_rehearsal(report: RehearsalReport, console: Console, given: Iterable[str] = ()) -> None:
    """The whole report, rehearsal by rehearsal, then the verdict and hints at the flags not
    ``given``. No line is wider than the console, nor ends in blanks."""
    total = len(report.rehearsals)
    show = functools.partial(print_trimmed, console)
    for i, r in enumerate(report.rehearsals, 1):
        show(*settings_lines(r.record, i, total), timeline_table(r))
        show(Text("failure path", style="bold"), failure_path_table(r))
        result = r.record.result or "no verdict (the run is not accepted)"
        show(Text.assemble("final result: ", (result, "bold")))
        for c in r.contracts:
            show(*draft_lines(c, r, console.width))
        show(Text(""))
    show(verdict_text(report))
    taken = set(given)
    hints = [text for flag, text in HINTS if flag not in taken]
    if hints:
        chunks = [f"{h} ·" for h in hints[:-1]] + hints[-1:]
        show(Text("\n".join(wrap(chunks, console.width)), style="dim"))


def verdict_text(report: RehearsalReport) -> Text:
    if report.verdict == "no budget":
        return Text("no budget given: nothing to meet (exit 0).")
    drafts = report.drafts()
    meeting = [c.name for c, _ in drafts if c.budgets_met]
    if len(meeting) == len(drafts):
        return Text(
            f"verdict: every draft meets every budget ({len(drafts)} of {len(drafts)}).",
            style="green bold",
        )
    which = f" ({', '.join(meeting)})" if meeting else ""
    return Text(
        f"verdict: {len(meeting)} of {len(drafts)} drafts meet every budget{which}.",
        style="red bold",
    )
