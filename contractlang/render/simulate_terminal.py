"""The terminal summary of ``contractlang simulate``, within 80 columns: what was simulated,
then per contract its figures with their Monte Carlo error (``p95 1,733 USD ± 41``), its
promises, and each budget requirement with its verdict — marked where the verdict flips
inside the interval ("needs more runs")."""

from __future__ import annotations

from fractions import Fraction

from rich.console import Console
from rich.text import Text

from contractlang.evaluate.results import DisplayUnit
from contractlang.lang.numbers import MICROS_PER_HOUR, round_fraction
from contractlang.render.numbers import money
from contractlang.render.uncertainty import plus_minus
from contractlang.simulate.results import RequirementInterval, SimulatedContract, Simulation
from contractlang.simulate.workload import Workload

WIDTH = 80


def describe_workload(sim: Simulation) -> list[str]:
    """A few lines saying what was simulated."""
    w: Workload = sim.workload
    hours = Fraction(w.total_steps * w.step_us, MICROS_PER_HOUR)
    n, k = len(sim.traces), len(sim.contracts)
    resamples = sim.contracts[0].monte_carlo.resamples if sim.contracts else 0
    return [
        f"simulated {w.runs:,} runs (seed {w.seed}) of a {w.gpus}-GPU {w.sku} job",
        f"  {w.total_steps:,} steps ({round_fraction(hours, 1)} h of training), a checkpoint "
        f"every {w.checkpoint_every_steps:,} steps",
        f"  {_process(sim)}",
        f"  {n} trace(s) for {k} contract(s); ± is half the 95% interval ({resamples:,} resamples)",
    ]


def _process(sim: Simulation) -> str:
    w = sim.workload
    rep = w.replacement
    if w.reclaims.rate_per_hour is not None and rep is not None:
        scale = {"exponential": "mean ", "lognormal": "median ", "fixed": ""}[rep.distribution]
        return (
            f"reclaims: {w.reclaims.rate_per_hour} per allocation-hour; replacement: "
            f"{rep.distribution}, {scale}{rep.scale_minutes} min"
        )
    a = sim.availability
    nodes = w.reclaims.nodes
    what = "1 instance" if nodes == 1 else f"{nodes} instances"
    if a is None:
        return f"reclaims: an availability trace replayed (needing {what})"
    share = round_fraction(a.available_fraction(nodes) * 100, 1)
    return f"reclaims: an availability trace replayed; {what} available {share}% of the time"


def contract_lines(c: SimulatedContract) -> list[Text]:
    r, mc = c.result, c.monte_carlo
    s, t = r.settings, r.totals
    cur = DisplayUnit(s.currency, Fraction(1), "money")
    head = f"\n{c.name}  (trace {c.trace.index}: {c.trace.promises.describe()})"
    out = [Text(head, style="bold")]

    def row(label: str, value: str) -> None:
        out.append(Text(f"  {label:<23}{value}"))

    share = Fraction(t.accepted_runs, t.runs) if t.runs else Fraction(0)
    row("accepted runs", f"{t.accepted_runs:,} of {t.runs:,} ({round_fraction(share * 100, 2)}%)")
    mean = plus_minus(mc.mean_cost.value, mc.mean_cost.half_width, cur, s.precision)
    p95 = plus_minus(mc.p95_cost.value, mc.p95_cost.half_width, cur, s.precision)
    row("cost per accepted run", f"mean {mean}")
    row("", f"p95  {p95}")
    row("net billed", money(t.net_minor, s.precision, s.currency))
    lost = Fraction(t.lost_gpu_us, t.metered_gpu_us) if t.metered_gpu_us else Fraction(0)
    per_run = Fraction(r.promises.reclaims, t.runs) if t.runs else Fraction(0)
    row("reclaims per run", f"{round_fraction(per_run, 2)}")
    row("lost GPU-time", f"{round_fraction(lost * 100, 2)}% of metered")
    row("promises", _promises(c))
    for budget in r.budgets:
        verdict = "meets it" if budget.met else "does not meet it"
        out.append(Text(f"  budget “{budget.name}”: {verdict}"))
        for ri in mc.requirements:
            if ri.budget == budget.name:
                out.append(requirement_line(ri, s.precision))
    return out


def _promises(c: SimulatedContract) -> str:
    p = c.result.promises
    parts = []
    if p.notice_us is not None:
        parts.append(f"notice {p.notice_breaches:,} of {p.reclaims:,} short")
    if p.restart_us is not None:
        parts.append(f"restart {p.restart_breaches:,} of {p.replacements:,} late")
    return " · ".join(parts) if parts else "none made"


def requirement_line(ri: RequirementInterval, precision: int) -> Text:
    r = ri.requirement
    shown = plus_minus(r.value, ri.interval.half_width, r.unit, precision)
    if r.verdict == "not measurable":
        return Text.assemble(("    ? ", "yellow bold"), f"{r.text}: not measurable — not met")
    mark, style = ("✓", "green bold") if r.met else ("✗", "red bold")
    tail = f"{r.verdict}"
    if ri.needs_more_runs:
        mark, style, tail = "~", "yellow bold", f"{r.verdict}, needs more runs"
    rest = f"{shown} — {tail}"
    if len(r.text) + len(rest) + 8 > WIDTH:  # the value on a line of its own
        return Text.assemble((f"    {mark} ", style), f"{r.text}:\n        {rest}")
    return Text.assemble((f"    {mark} ", style), f"{r.text}: {rest}")


def render_simulation(sim: Simulation, console: Console, hints: bool = True) -> None:
    for text in describe_workload(sim):
        console.print(text, markup=False)
    for c in sim.contracts:
        for line in contract_lines(c):
            console.print(line)
    console.print(verdict_line(sim))
    if hints:
        console.print(
            "per-run figures: --runs PATH · line items: --ledger PATH\n"
            "the traces: --trace-out DIR · data: --format json",
            style="dim",
            markup=False,
        )


def verdict_line(sim: Simulation) -> Text:
    if not sim.budgets:
        return Text("\nno budget given: nothing to meet (exit 0).")
    meeting = [c.name for c in sim.contracts if c.result.budgets_met]
    total = len(sim.contracts)
    unsure = sum(1 for c in sim.contracts if c.monte_carlo.needs_more_runs)
    note = f"; {unsure} verdict(s) need more runs" if unsure else ""
    style = "green bold" if len(meeting) == total else "red bold"
    which = f" ({', '.join(meeting)})" if meeting and len(meeting) < total else ""
    return Text(
        f"\nverdict: {len(meeting)} of {total} contracts meet every budget{which}{note}.",
        style=style,
    )
