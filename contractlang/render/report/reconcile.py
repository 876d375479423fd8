"""`contractlang reconcile --report PATH.html|PATH.md`: the terminal summary's content as a
report — per contract what the charges were compared net of and the tax left out (when the
invoice has any), the months (expected, invoiced, over- and under-billed), each status
with its count and amount, the largest discrepancies with the terms and facts behind them,
and the dispute letter's numbers. The HTML is one self-contained page (autoescaped, inline
CSS, nothing fetched); the Markdown fits a ticket or a pull-request comment (no HTML, every
string from a trace or a contract escaped)."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

from contractlang.reconcile.model import STATUSES, Reconciliation
from contractlang.render.common.numbers import counted
from contractlang.render.reconcile.terminal import (
    aside_amount,
    discrepancy_lines,
    dispute_rows,
    invoice_note,
)
from contractlang.render.reconcile.words import money_text
from contractlang.render.report.render import environment, markdown_text

__all__ = ["render_reconcile_report"]


@dataclass(frozen=True)
class ContractView:
    """What the report says of one contract; every string as plain text."""

    name: str
    currency: str
    heading: str
    invoice: str | None
    months: list[tuple[str, str, str, str, str]]
    statuses: list[tuple[str, str, str]]
    discrepancies: list[list[str]]
    dispute: list[tuple[str, str, str]]
    set_aside: str | None


def _views(r: Reconciliation) -> list[ContractView]:
    out = []
    for c in r.contracts:
        s = c.contract.settings

        def m(d: Decimal, p: int = s.precision) -> str:
            return money_text(d, p, grouped=True)

        summary = c.summary()
        aside = None
        if r.set_aside is not None:
            a = r.set_aside
            aside = (
                f"Not reconciled: {counted(a.lines, 'invoice line')} "
                f"{aside_amount(a, m, s.currency)} of {counted(a.runs, 'run')} set aside by "
                "--on-invalid quarantine."
            )
        out.append(
            ContractView(
                name=c.name,
                currency=s.currency,
                heading=(
                    f"{counted(r.invoice_lines, 'invoice line')}, tolerance "
                    f"{money_text(c.tolerance, s.precision)} {s.currency}"
                ),
                invoice=invoice_note(c, m),
                months=[
                    (
                        row.month or "(none)",
                        m(row.expected),
                        m(row.invoiced),
                        m(row.over_billed),
                        m(row.under_billed),
                    )
                    for row in (*c.months(), c.total())
                ],
                statuses=[(st, f"{summary[st].count:,}", m(summary[st].amount)) for st in STATUSES],
                discrepancies=[
                    discrepancy_lines(x, n, c, r.sources)
                    for n, x in enumerate(c.largest(), start=1)
                ],
                dispute=[(label, m(amount), count) for label, amount, count in dispute_rows(c)],
                set_aside=aside,
            )
        )
    return out


def _markdown(r: Reconciliation) -> str:
    md = markdown_text
    lines = ["# Reconciliation", ""]
    for v in _views(r):
        lines += [f"## Contract {md(v.name)}", "", md(v.heading), ""]
        if v.invoice:
            lines += [md(v.invoice), ""]
        lines += [
            f"| month | expected ({v.currency}) | invoiced | over-billed | under-billed |",
            "|---|---:|---:|---:|---:|",
        ]
        lines += [f"| {md(a)} | {b} | {c} | {d} | {e} |" for a, b, c, d, e in v.months]
        lines += ["", "| status | lines | amount |", "|---|---:|---:|"]
        lines += [f"| {a} | {b} | {c} |" for a, b, c in v.statuses]
        if v.set_aside:
            lines += ["", f"**{md(v.set_aside)}**"]
        lines += ["", "### Largest discrepancies" if v.discrepancies else
                  "No discrepancy beyond the tolerance.", ""]  # fmt: skip
        for d in v.discrepancies:
            head, *rest = d
            lines.append(md(head))
            lines += [f"   - {md(x.removeprefix('- '))}" for x in rest]
        lines += ["", f"### Dispute letter ({v.currency})", "", "| | amount | lines |",
                  "|---|---:|---|"]  # fmt: skip
        lines += [f"| {md(a)} | {b} | {md(c)} |" for a, b, c in v.dispute]
        lines.append("")
    return "\n".join(lines)


def render_reconcile_report(r: Reconciliation, path: Path) -> str:
    """The report for ``path``'s extension (``.html`` or ``.md``)."""
    if path.suffix.lower() == ".md":
        return _markdown(r)
    template = environment(True).get_template("reconcile.html.j2")
    return template.render(views=_views(r))
