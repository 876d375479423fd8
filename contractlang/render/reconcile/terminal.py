"""The terminal summary of `contractlang reconcile`, for a finance analyst: what the charges
were compared net of (reversals, adjustments, credit lines of positive amount) and the tax
lines left out, when the invoice has any; per month what the contract expects, what was
invoiced and how much was over- and under-billed; each status with its count and amount; the
five largest discrepancies with the terms and facts behind them; and the dispute letter's
numbers. Plain text that fits 80 columns (it is pasted into tickets and letters)."""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Iterable
from decimal import Decimal

from contractlang.diagnostics import printable
from contractlang.lang.numbers import exact_difference, exact_sum
from contractlang.reconcile.model import (
    STATUSES,
    ContractReconciliation,
    Lines,
    ReconciledAmount,
    Reconciliation,
    SetAside,
    counted_as_charges,
    net_of,
)
from contractlang.render.common.layout import words, wrap
from contractlang.render.common.numbers import counted
from contractlang.render.reconcile.words import (
    STATUS_WORDS,
    basis_text,
    money_text,
    reason_text,
    rows_text,
    what,
)
from contractlang.trace.problems import Sources

WIDTH = 80
Money = Callable[[Decimal], str]


def render_reconciliation(r: Reconciliation) -> str:
    return "\n".join(render_contract(c, r) for c in r.contracts)


def render_contract(c: ContractReconciliation, r: Reconciliation) -> str:
    s = c.contract.settings
    cur, p = s.currency, s.precision

    def m(d: Decimal) -> str:
        return money_text(d, p, grouped=True)

    out = [
        _wrap(
            f'reconcile "{c.name}": {counted(r.invoice_lines, "invoice line")}, '
            f"tolerance {money_text(c.tolerance, p)} {cur}"
        ),
    ]
    note = invoice_note(c, m)
    if note is not None:
        out.append(_wrap(note))
    out += [
        "",
        f"{'month':<9}{'expected':>15}{'invoiced':>15}{'over-billed':>15}{'under-billed':>15}",
    ]
    for row in (*c.months(), c.total()):
        out.append(
            f"{row.month or '(none)':<9}{m(row.expected):>15}{m(row.invoiced):>15}"
            f"{m(row.over_billed):>15}{m(row.under_billed):>15}"
        )
    out += ["", f"{'status':<14}{'lines':>8}{'amount':>15}"]
    summary = c.summary()
    for status in STATUSES:
        t = summary[status]
        out.append(f"{status:<14}{t.count:>8,}{m(t.amount):>15}")
    if r.set_aside is not None:
        out += ["", *_set_aside(r.set_aside, m, cur)]
    largest = c.largest()
    out += ["", "largest discrepancies" if largest else "no discrepancy beyond the tolerance"]
    for n, x in enumerate(largest, start=1):
        out += _discrepancy(n, x, m, cur, r.sources)
    out += ["", *_dispute(c, m, cur)]
    return "\n".join(out) + "\n"


def invoice_note(c: ContractReconciliation, money: Money) -> str | None:
    """What the charges and credits were compared net of, and the tax left out: ``charges net
    of 1 reversal (-1,500.00 USD); 1 tax line (12.00 USD) reported, not compared``; None when
    the invoice has only charges of 0 or more and credits of 0 or less."""
    cur = c.contract.settings.currency

    def amount(x: Lines) -> str:
        return f"{money(x.amount)} {cur}"

    net = [c.invoice_lines(k) for k in ("reversal", "adjustment") if c.invoice_lines(k).count]
    said = ["charges " + net_of(net, amount)] if net else []
    back, positive, tax = (
        c.invoice_lines(k) for k in ("credit_reversal", "positive_credit", "tax")
    )
    if back.count:
        said.append("credits " + net_of([back], amount))
    if positive.count:
        said.append(counted_as_charges(positive, amount(positive)))
    if tax.count:
        said.append(f"{tax.words(amount(tax))} reported, not compared")
    return "; ".join(said) if said else None


def aside_amount(s: SetAside, money: Money, cur: str) -> str:
    """``(12.00 USD)``, or ``(12.00 USD, 1 line with no readable amount)``: the money of the
    lines a quarantine set aside (the terminal's and the reports' words)."""
    return f"({money(s.amount)} {cur}" + (
        f", {counted(s.unreadable, 'line')} with no readable amount)" if s.unreadable else ")"
    )


def _set_aside(s: SetAside, money: Money, cur: str) -> list[str]:
    """The invoice money a quarantine kept out of the comparison: the analyst must see it."""
    amount = aside_amount(s, money, cur)
    chunks = [
        *words(f"not reconciled: {counted(s.lines, 'invoice line')}"),
        *words(amount),
        *words(f"of {counted(s.runs, 'run')} set aside by"),
        "`--on-invalid quarantine`;",
        *words("fix the runs (the quarantine file says why) and reconcile again"),
    ]
    return wrap(chunks, WIDTH, indent=2)


def _discrepancy(
    n: int, x: ReconciledAmount, money: Money, cur: str, sources: Sources
) -> list[str]:
    direction = "over-billed" if x.difference > 0 else "under-billed"
    head = f"{n}. {money(x.difference.copy_abs())} {cur} {direction}: {what(x)}"
    if x.status in ("missing", "unexpected"):
        head += f" ({STATUS_WORDS[x.status]})"
    lines = [_wrap(head, "", "   ")]
    expected = "nothing" if x.expected is None else money(x.expected)
    invoiced = "nothing" if x.invoiced is None else money(x.invoiced)
    basis = f" by {basis_text(x)}" if x.basis else ""
    rows = f" on {rows_text(x.invoice_rows, sources)}" if x.invoice_rows else ""
    lines.append(_wrap(f"expected {expected}{basis}; invoiced {invoiced}{rows}", "   ", "   "))
    for reason in x.reasons[:4]:
        lines.append(_wrap("- " + reason_text(reason), "   ", "     "))
    if len(x.reasons) > 4:
        rest = counted(len(x.reasons) - 4, "more reason")
        lines.append(f"   - and {rest} (see --format json)")
    return lines


def dispute_rows(c: ContractReconciliation) -> list[tuple[str, Decimal, str]]:
    """The dispute letter's numbers: each label, its exact amount, and how many lines make it
    (when that is worth saying)."""
    total = c.total()
    charges, credits = c.claims()
    due, given = c.credits()
    tax = c.invoice_lines("tax")
    over = [x for x in c.discrepancies if x.difference > 0]
    under = [x for x in c.discrepancies if x.difference < 0]
    return [
        ("invoiced", total.invoiced, ""),
        ("owed under the contract's terms", total.expected, ""),
        ("charges beyond the terms", charges, _n(x for x in over if x.kind == "charge")),
        (
            "credit owed by the contract's own terms",
            credits,
            _n(x for x in over if x.kind == "credit"),
        ),
        ("to claim from the provider", exact_sum((charges, credits)), ""),
        ("under-billed (owed to the provider)", c.owed_to_provider(), _n(under)),
        ("net difference (invoiced − owed)", exact_difference(total.invoiced, total.expected), ""),
        ("credits the terms give, after caps", due, ""),
        ("credits on the invoice", given, ""),
        *(
            [("tax on the invoice, not compared", tax.amount, _count(tax.count))]
            if tax.count
            else []
        ),
    ]


def _dispute(c: ContractReconciliation, money: Money, cur: str) -> list[str]:
    rows = dispute_rows(c)
    width = max(len(k) for k, _, _ in rows)
    out = [_wrap(f'dispute letter, contract "{c.name}" ({cur})')]
    for label, amount, count in rows:
        out.append(f"  {label:<{width}}  {money(amount):>14}" + (f"  {count}" if count else ""))
    return out


def discrepancy_lines(
    x: ReconciledAmount, n: int, c: ContractReconciliation, sources: Sources
) -> list[str]:
    """Discrepancy ``n`` of ``c`` as the summary writes it (a numbered head, the amounts, the
    reasons), each line unwrapped, for a report to lay out."""
    s = c.contract.settings

    def money(d: Decimal) -> str:
        return money_text(d, s.precision, grouped=True)

    return [" ".join(line.split()) for line in _discrepancy(n, x, money, s.currency, sources)]


def _n(lines: Iterable[ReconciledAmount]) -> str:
    return _count(sum(1 for _ in lines))


def _count(count: int) -> str:
    return f"({count} line{'s' if count != 1 else ''})"


def _wrap(text: str, indent: str = "", later: str | None = None) -> str:
    """``text`` filled to 80 columns; control characters from the trace or the terms (an
    escape sequence in a run id) shown as ``\\x1b``, never obeyed by the terminal."""
    return textwrap.fill(
        printable(text),
        WIDTH,
        initial_indent=indent,
        subsequent_indent=indent if later is None else later,
        break_long_words=True,
        break_on_hyphens=False,
    )
