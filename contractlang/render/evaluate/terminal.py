"""The terminal summary of `contractlang evaluate`: the contracts' figures (metered next to net
billed, lost progress, cost per accepted run, promise breaches) in the widest layout that fits
the terminal (:mod:`~contractlang.render.common.layout`), then each budget requirement in plain
words and the verdict, with its exit code. Prose wraps between words; no figure is ever split."""

from __future__ import annotations

from fractions import Fraction

from rich.console import Console, Group, RenderableType
from rich.text import Text

from contractlang.diagnostics import printable
from contractlang.evaluate.results import ContractResult, DisplayUnit, Evaluation, RequirementResult
from contractlang.render.common.layout import Figure, lay_out, words, wrap
from contractlang.render.common.numbers import (
    counted,
    duration_human,
    gpu_hours_human,
    measure_human,
    money,
)
from contractlang.render.trace.terminal import set_aside
from contractlang.trace.schema import TraceSummary


def figures(result: Evaluation) -> list[Figure]:
    """Every figure of the summary, one cell per contract. Money carries its currency in the
    label when every contract bills in one, else in each cell."""
    cs = result.contracts
    currencies = {c.settings.currency for c in cs}
    one = next(iter(currencies)) if len(currencies) == 1 else None
    per = f" ({one})" if one else ""

    def cash(c: ContractResult, minor: int) -> str:
        return money(minor, c.settings.precision, None if one else c.settings.currency)

    def fig(group: str, label: str, short: str, cells: list[str], bold: bool = False) -> Figure:
        return Figure(group, label, short, tuple(cells), bold)

    usage, bill, lost = "usage (GPU-hours)", f"bill{per}", "lost progress"
    out = [
        fig("runs", "runs (accepted)", "runs (accepted)",
            [f"{c.totals.runs:,} ({c.totals.accepted_runs:,})" for c in cs]),
        fig("runs", "allocations", "allocations", [f"{c.totals.allocations:,}" for c in cs]),
        fig(usage, "metered GPU-hours", "metered",
            [gpu_hours_human(c.totals.metered_gpu_us) for c in cs]),
        fig(usage, "excluded GPU-hours", "excluded",
            [gpu_hours_human(c.totals.excluded_gpu_us) for c in cs]),
        fig(usage, "billable GPU-hours", "billable",
            [gpu_hours_human(c.totals.billable_gpu_us) for c in cs]),
        fig(bill, f"gross{per}", "gross", [cash(c, c.totals.gross_minor) for c in cs]),
        fig(bill, f"credits{per}", "credits", [cash(c, c.totals.credits_minor) for c in cs]),
        fig(bill, f"cap cuts{per}", "cap cuts", [cash(c, c.totals.cap_cuts_minor) for c in cs]),
        fig(bill, f"net billed{per}", "net billed", [cash(c, c.totals.net_minor) for c in cs],
            bold=True),
        fig(lost, "lost GPU-hours", "GPU-hours",
            [gpu_hours_human(c.totals.lost_gpu_us) for c in cs]),
        fig(lost, "lost steps", "steps", [f"{c.totals.lost_steps:,}" for c in cs]),
    ]  # fmt: skip
    for key in ("p50", "p95", "max"):
        out.append(
            fig(f"cost per accepted run{per}", f"cost per accepted run {key}{per}", key,
                [_dist(c, key, one is None) for c in cs])
        )  # fmt: skip
    out += [
        fig("promises", "notice promised", "notice", [_promised(c.promises.notice_us) for c in cs]),
        fig("promises", "notice breaches", "breached", [_notice(c) for c in cs]),
        fig("promises", "restart promised", "restart",
            [_promised(c.promises.restart_us) for c in cs]),
        fig("promises", "restart breaches", "breached", [_restart(c) for c in cs]),
    ]  # fmt: skip
    return out


def _dist(c: ContractResult, key: str, with_currency: bool) -> str:
    value = c.totals.cost_per_accepted_run.get(key)
    if value is None:
        return "none"
    unit = DisplayUnit(c.settings.currency if with_currency else "", Fraction(1), "money")
    return measure_human(value, unit, c.settings.precision)


def _promised(us: int | None) -> str:
    return "none" if us is None else duration_human(us)


def _notice(c: ContractResult) -> str:
    p = c.promises
    return "—" if p.notice_us is None else f"{p.notice_breaches:,} of {p.reclaims:,}"


def _restart(c: ContractResult) -> str:
    p = c.promises
    return "—" if p.restart_us is None else f"{p.restart_breaches:,} of {p.replacements:,}"


def requirement_line(r: RequirementResult, precision: int) -> tuple[Text, list[str]]:
    """A requirement's mark (✓, ✗, ?) and the chunks of its sentence (a line breaks only
    between chunks, never inside a figure and its unit)."""
    value = measure_human(r.value, r.unit, precision)
    said = words(f"{r.text}:")
    if r.verdict == "not measurable":
        why = (
            "not measurable (the measured value is none: no runs to measure, or a division by "
            "zero) — not met"
        )
        return Text("  ? ", "yellow bold"), [*said, *words(why)]
    margin = r.margin
    assert margin is not None
    amount = measure_human(abs(margin), r.unit, precision)
    if r.verdict == "met":
        how = [amount, "to", "spare"] if margin else words("exactly at the limit")
        return Text("  ✓ ", "green bold"), [*said, value, "—", "met,", *how]
    return Text("  ✗ ", "red bold"), [*said, value, "—", "not", "met,", "off", "by", amount]


def budget_section(result: Evaluation, width: int) -> RenderableType:
    """Each budget: whether each contract meets it, then each requirement as a sentence."""
    parts: list[RenderableType] = []
    for budget in result.budgets:
        parts.append(Text(f"\nbudget “{printable(budget.name)}”", style="bold"))
        for c in result.contracts:
            b = next(x for x in c.budgets if x.name == budget.name)
            verdict = (
                Text("meets it", style="green") if b.met else Text("does not meet it", style="red")
            )
            parts.append(Text.assemble(f"{printable(c.name)} ", verdict))
            for r in b.requirements:
                mark, chunks = requirement_line(r, c.settings.precision)
                said = [printable(x) for x in chunks]
                said[0] = mark.plain + said[0]
                line = Text("\n".join(wrap(said, width, indent=len(mark))))
                line.stylize(mark.style, 0, len(mark))
                parts.append(line)
    return Group(*parts)


def verdict_line(result: Evaluation, width: int) -> Text:
    """The verdict over every budget, with its exit code."""
    if not result.budgets:
        return Text(
            "\n" + "\n".join(wrap(words("no budget given: nothing to meet (exit 0)."), width))
        )
    meeting = [printable(c.name) for c in result.contracts if c.budgets_met]
    total = len(result.contracts)
    if len(meeting) == total:
        said = words(f"verdict: every contract meets every budget ({total} of {total}; exit 0).")
        return Text("\n" + "\n".join(wrap(said, width)), style="green bold")
    which = [f"({', '.join(meeting)});"] if meeting else []
    said = [
        *words(
            f"verdict: {len(meeting)} of {total} contracts meet every budget"
            + ("" if which else ";")
        ),
        *which,
        *words("exit 1: a budget is not met."),
    ]
    return Text("\n" + "\n".join(wrap(said, width)), style="red bold")


HINTS = [
    "line items: --ledger PATH ·",
    "per-run figures: --runs PATH ·",
    "one run's bill: contractlang explain TERMS TRACE --run RUN ·",
    "data: --format json",
]


def trace_headline(n: int, noun: str, s: TraceSummary) -> list[str]:
    """The chunks of the line that says what was evaluated over what trace.

    >>> from datetime import UTC, datetime
    >>> from contractlang.trace.schema import TraceSummary
    >>> s = TraceSummary(rows_read=2, rows_used=2, not_used=(), runs=1, allocations=1,
    ...     closed_at_open_at=0, first_ts=datetime(2025, 1, 1, tzinfo=UTC),
    ...     last_ts=datetime(2025, 1, 2, tzinfo=UTC), events={}, extra_columns=(), warnings=0)
    >>> " ".join(trace_headline(2, "draft", s))
    '2 drafts over 1 run, 1 allocation, 2025-01-01 00:00 → 2025-01-02 00:00 UTC'
    """
    head = words(
        f"{counted(n, noun)} over {counted(s.runs, 'run')}, {counted(s.allocations, 'allocation')}"
    )
    if s.first_ts is not None and s.last_ts is not None:
        head[-1] += ","
        head.append(f"{s.first_ts:%Y-%m-%d %H:%M} → {s.last_ts:%Y-%m-%d %H:%M} UTC")
    return head


def render_summary(result: Evaluation, console: Console, hints: bool = True) -> None:
    """The whole summary on ``console``, fitted to its width."""
    width = console.width
    head = trace_headline(len(result.contracts), "contract", result.trace.summary)
    console.print("\n".join(wrap(head, width)), markup=False, soft_wrap=True)
    if result.trace.quarantine is not None:
        aside = f"({set_aside(result.trace.quarantine)})"
        console.print("\n".join(wrap(words(aside), width)), markup=False, soft_wrap=True)
    names = [printable(c.name) for c in result.contracts]
    for part in lay_out(names, figures(result), width):
        console.print(part)
    if result.budgets:
        console.print(budget_section(result, width), soft_wrap=True)
    console.print(verdict_line(result, width), soft_wrap=True)
    if hints:
        console.print("\n".join(wrap(HINTS, width)), style="dim", markup=False, soft_wrap=True)
