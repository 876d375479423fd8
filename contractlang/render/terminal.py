"""The terminal summary of `contractlang evaluate`: contracts side by side, metered next to net
billed, lost progress, promise breaches, then each budget requirement in plain words."""

from __future__ import annotations

from fractions import Fraction

from rich import box
from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text

from contractlang.evaluate.results import ContractResult, DisplayUnit, Evaluation, RequirementResult
from contractlang.render.numbers import (
    duration_human,
    gpu_hours_human,
    measure_human,
    money,
)
from contractlang.render.trace_summary import set_aside


def summary_table(result: Evaluation) -> Table:
    table = Table(title=None, show_lines=False, header_style="bold", box=box.SIMPLE_HEAD)
    table.add_column("", style="dim", no_wrap=True)
    for c in result.contracts:
        table.add_column(c.name, justify="right", overflow="fold")
    rows: list[tuple[str, list[str]]] = []

    def row(label: str, fn: object) -> None:
        rows.append((label, [fn(c) for c in result.contracts]))  # type: ignore[operator]

    row("runs (accepted)", lambda c: f"{c.totals.runs:,} ({c.totals.accepted_runs:,})")
    row("allocations", lambda c: f"{c.totals.allocations:,}")
    row("metered GPU-hours", lambda c: gpu_hours_human(c.totals.metered_gpu_us))
    row("excluded GPU-hours", lambda c: gpu_hours_human(c.totals.excluded_gpu_us))
    row("billable GPU-hours", lambda c: gpu_hours_human(c.totals.billable_gpu_us))
    row("gross", lambda c: _money(c, c.totals.gross_minor))
    row("credits", lambda c: _money(c, c.totals.credits_minor))
    row("cap cuts", lambda c: _money(c, c.totals.cap_cuts_minor))
    row("net billed", lambda c: _money(c, c.totals.net_minor))
    row("lost GPU-hours", lambda c: gpu_hours_human(c.totals.lost_gpu_us))
    row("lost steps", lambda c: f"{c.totals.lost_steps:,}")
    for key in ("p50", "p95", "max"):
        row(f"cost per accepted run {key}", lambda c, k=key: _dist(c, k))
    row("notice breaches", _notice)
    row("restart breaches", _restart)
    for label, cells in rows:
        bold = label == "net billed"
        table.add_row(Text(label), *[Text(x, style="bold" if bold else "") for x in cells])
    return table


def _money(c: ContractResult, minor: int) -> str:
    return money(minor, c.settings.precision, c.settings.currency)


def _dist(c: ContractResult, key: str) -> str:
    value = c.totals.cost_per_accepted_run.get(key)
    unit = DisplayUnit(c.settings.currency, Fraction(1), "money")
    return measure_human(value, unit, c.settings.precision) if value is not None else "none"


def _notice(c: ContractResult) -> str:
    p = c.promises
    if p.notice_us is None:
        return "no promise"
    promised = duration_human(p.notice_us)
    return f"{p.notice_breaches} of {p.reclaims} reclaims had < {promised} notice"


def _restart(c: ContractResult) -> str:
    p = c.promises
    if p.restart_us is None:
        return "no promise"
    promised = duration_human(p.restart_us)
    return f"{p.restart_breaches} of {p.replacements} restarts took > {promised}"


def requirement_line(r: RequirementResult, precision: int) -> Text:
    value = measure_human(r.value, r.unit, precision)
    if r.verdict == "not measurable":
        return Text.assemble(
            ("  ? ", "yellow bold"),
            f"{r.text}: not measurable (the measured value is none: no runs to measure, "
            "or a division by zero) — not met",
        )
    margin = r.margin
    assert margin is not None
    amount = measure_human(abs(margin), r.unit, precision)
    if r.verdict == "met":
        how = f"{amount} to spare" if margin else "exactly at the limit"
        return Text.assemble(("  ✓ ", "green bold"), f"{r.text}: {value} — met, {how}")
    return Text.assemble(("  ✗ ", "red bold"), f"{r.text}: {value} — not met, off by {amount}")


def budget_section(result: Evaluation) -> RenderableType:
    parts: list[RenderableType] = []
    for budget in result.budgets:
        parts.append(Text(f"\nbudget “{budget.name}”", style="bold"))
        for c in result.contracts:
            b = next(x for x in c.budgets if x.name == budget.name)
            verdict = (
                Text("meets it", style="green") if b.met else Text("does not meet it", style="red")
            )
            parts.append(Text.assemble(f"{c.name} ", verdict))
            parts.extend(requirement_line(r, c.settings.precision) for r in b.requirements)
    return Group(*parts)


def verdict_line(result: Evaluation) -> Text:
    if not result.budgets:
        return Text("\nno budget given: nothing to meet (exit 0).")
    meeting = [c.name for c in result.contracts if c.budgets_met]
    total = len(result.contracts)
    if len(meeting) == total:
        return Text(
            f"\nverdict: every contract meets every budget ({total} of {total}).",
            style="green bold",
        )
    which = f" ({', '.join(meeting)})" if meeting else ""
    return Text(
        f"\nverdict: {len(meeting)} of {total} contracts meet every budget{which}.",
        style="red bold",
    )


def render_summary(result: Evaluation, console: Console, hints: bool = True) -> None:
    s = result.trace.summary
    span = ""
    if s.first_ts is not None and s.last_ts is not None:
        span = f", {s.first_ts:%Y-%m-%d %H:%M} → {s.last_ts:%Y-%m-%d %H:%M} UTC"
    console.print(
        f"{len(result.contracts)} contract(s) over {s.runs:,} runs, "
        f"{s.allocations:,} allocations{span}",
        markup=False,
    )
    if result.trace.quarantine is not None:
        console.print(f"({set_aside(result.trace.quarantine)})", markup=False)
    console.print(summary_table(result))
    if result.budgets:
        console.print(budget_section(result))
    console.print(verdict_line(result))
    if hints:
        console.print(
            "line items: --ledger PATH · per-run figures: --runs PATH · "
            "one run's bill: contractlang explain TERMS TRACE --run RUN · data: --format json",
            style="dim",
            markup=False,
        )
