"""The terminal summary of ``contractlang simulate``, fitted to the terminal's width: what was
simulated, then per contract its figures with their Monte Carlo error (``p95 1,733 USD ± 41``),
its promises, and each budget requirement with its verdict — marked where the verdict flips
inside the interval ("needs more runs"); with several drafts, their ranking and each one's
differences from the baseline, with the intervals of the paired bootstrap; then the verdict.

Every line is broken only between chunks (:func:`~contractlang.render.common.layout.wrap`): a figure
with its unit and error, a name, is never split; names from the terms and the workload are
shown with their control characters escaped (:func:`~contractlang.diagnostics.printable`).
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

from rich.cells import cell_len
from rich.console import Console
from rich.text import Text

from contractlang.diagnostics import printable
from contractlang.evaluate.results import DisplayUnit
from contractlang.lang.numbers import MICROS_PER_HOUR, round_fraction
from contractlang.render.common.layout import words, wrap
from contractlang.render.common.numbers import counted, money
from contractlang.render.simulate.uncertainty import plus_minus
from contractlang.simulate.results import (
    Interval,
    RequirementInterval,
    SimulatedContract,
    Simulation,
)
from contractlang.simulate.workload import Workload

#: Where a figure starts after its label (``  accepted runs          2,000 of 2,000``).
LABEL = 25
#: The same, in the differences from the baseline (longer labels).
DELTA_LABEL = 33
HINTS = [
    "per-run figures: --runs PATH ·",
    "line items: --ledger PATH ·",
    "the traces: --trace-out DIR ·",
    "data: --format json",
]


def lines(chunks: Sequence[str], width: int, indent: int) -> str:
    """``chunks`` wrapped to ``width``, continuation lines indented by ``indent`` — or less,
    down to none, where a chunk (a long name) would not fit after the indent."""
    for room in dict.fromkeys((indent, min(indent, 2), 0)):
        shown = wrap(chunks, width, indent=room)
        if all(cell_len(x) <= width for x in shown):
            break
    return "\n".join(shown)


def row(label: str, chunks: Sequence[str], width: int, *, at: int = LABEL, lead: int = 2) -> str:
    """``label`` then its figure from column ``at``; when a line would run past ``width``, the
    figure continues on the next line at ``at``, or nearer the margin when even that is too
    wide."""
    head = " " * lead + label.ljust(at - lead - 1)
    shown = wrap([head, *chunks], width, indent=at)
    if all(cell_len(x) <= width for x in shown):
        return "\n".join(shown)
    return lines([" " * lead + label, *chunks], width, lead + 2)


def describe_workload(sim: Simulation, width: int = 80) -> list[str]:
    """A few lines saying what was simulated."""
    w: Workload = sim.workload
    hours = Fraction(w.total_steps * w.step_us, MICROS_PER_HOUR)
    n, k = len(sim.traces), len(sim.contracts)
    resamples = sim.contracts[0].monte_carlo.resamples if sim.contracts else 0
    first, *process = _process(sim)
    said = [
        [*words(f"simulated {counted(w.runs, 'run')} (seed {w.seed}) of a {w.gpus:,}-GPU"),
         printable(w.sku), "job"],
        ["  " + f"{w.total_steps:,}", "steps", f"({round_fraction(hours, 1)} h", "of",
         "training),", *words(f"a checkpoint every {w.checkpoint_every_steps:,} steps")],
        ["  " + first, *process],
        ["  " + f"{n} trace(s)", "for", f"{k} contract(s);", *words("± is half the 95%"),
         "interval", f"({resamples:,} resamples)"],
    ]  # fmt: skip
    return [lines(chunks, width, 4) for chunks in said]


def _process(sim: Simulation) -> list[str]:
    w = sim.workload
    rep = w.replacement
    if w.reclaims.rate_per_hour is not None and rep is not None:
        scale = {"exponential": ["mean"], "lognormal": ["median"], "fixed": []}[rep.distribution]
        return ["reclaims:", f"{w.reclaims.rate_per_hour} per allocation-hour;", "replacement:",
                f"{rep.distribution},", *scale, f"{rep.scale_minutes} min"]  # fmt: skip
    a = sim.availability
    nodes = w.reclaims.nodes
    what = "1 instance" if nodes == 1 else f"{nodes:,} instances"
    if a is None:
        return [*words("reclaims: an availability trace replayed"), f"(needing {what})"]
    share = round_fraction(a.available_fraction(nodes) * 100, 1)
    return [*words("reclaims: an availability trace replayed;"), what, "available",
            f"{share}%", *words("of the time")]  # fmt: skip


def contract_lines(c: SimulatedContract, width: int = 80) -> list[Text]:
    r, mc = c.result, c.monte_carlo
    s, t = r.settings, r.totals
    cur = DisplayUnit(s.currency, Fraction(1), "money")
    head = [printable(c.name), f" (trace {c.trace.index}:", *_promise_chunks(c)]
    out = [Text("\n" + lines(head, width, 2), style="bold")]

    def add(label: str, *chunks: str) -> None:
        out.append(Text(row(label, chunks, width)))

    share = Fraction(t.accepted_runs, t.runs) if t.runs else Fraction(0)
    add("accepted runs", f"{t.accepted_runs:,} of {t.runs:,}",
        f"({round_fraction(share * 100, 2)}%)")  # fmt: skip
    add("cost per accepted run", "mean", plus_minus(mc.mean_cost.value, mc.mean_cost.half_width,
                                                    cur, s.precision))  # fmt: skip
    add("", "p95 ", plus_minus(mc.p95_cost.value, mc.p95_cost.half_width, cur, s.precision))
    add("net billed", money(t.net_minor, s.precision, s.currency))
    lost = Fraction(t.lost_gpu_us, t.metered_gpu_us) if t.metered_gpu_us else Fraction(0)
    per_run = Fraction(r.promises.reclaims, t.runs) if t.runs else Fraction(0)
    add("reclaims per run", f"{round_fraction(per_run, 2)}")
    add("lost GPU-time", f"{round_fraction(lost * 100, 2)}%", "of", "metered")
    add("promises", *_kept(c))
    for budget in r.budgets:
        verdict = "meets it" if budget.met else "does not meet it"
        said = ["  budget", f"“{printable(budget.name)}”:", *words(verdict)]
        out.append(Text(lines(said, width, 4)))
        for ri in mc.requirements:
            if ri.budget == budget.name:
                out.append(requirement_line(ri, s.precision, width))
    return out


def _promise_chunks(c: SimulatedContract) -> list[str]:
    """``notice 2 min,`` ``restart 10 min)``: each promise whole."""
    notice, restart = c.trace.promises.describe().split(", ")
    return [f"{notice},", f"{restart})"]


def _kept(c: SimulatedContract) -> list[str]:
    p = c.result.promises
    parts: list[list[str]] = []
    if p.notice_us is not None:
        parts.append(["notice", f"{p.notice_breaches:,} of {p.reclaims:,}", "short"])
    if p.restart_us is not None:
        parts.append(["restart", f"{p.restart_breaches:,} of {p.replacements:,}", "late"])
    if not parts:
        return ["none", "made"]
    for part in parts[:-1]:
        part[-1] += " ·"
    return [chunk for part in parts for chunk in part]


def requirement_line(ri: RequirementInterval, precision: int, width: int = 80) -> Text:
    r = ri.requirement
    said = words(f"{printable(r.text)}:")
    if r.verdict == "not measurable":
        mark, style, rest = "?", "yellow bold", ["not", "measurable", "—", "not", "met"]
    else:
        shown = plus_minus(r.value, ri.interval.half_width, r.unit, precision)
        mark, style = ("✓", "green bold") if r.met else ("✗", "red bold")
        tail = words(r.verdict)
        if ri.needs_more_runs:
            mark, style, tail = (
                "~",
                "yellow bold",
                [*words(f"{r.verdict},"), *words("needs more runs")],
            )
        rest = [shown, "—", *tail]
    text = Text(lines([f"    {mark} {said[0]}", *said[1:], *rest], width, 6))
    text.stylize(style, 4, 5)
    return text


def ranking_lines(sim: Simulation, width: int = 80) -> list[Text]:
    """The drafts best first, each with the figure it is ranked by (several drafts only)."""
    if sim.ranking is None or len(sim.contracts) < 2:
        return []
    rk = sim.ranking
    what = ["ranked", "by", f"{printable(rk.by)}" + (":" if rk.budget is None else ",")]
    if rk.budget is not None:
        what += words("meeting every budget first:")
    out = [Text("\n" + lines(what, width, 2), style="bold")]
    ranked = sim.ranked()
    heads = {c.name: _headline(sim, c) for c in ranked}
    pad = max(cell_len(printable(c.name)) for c in ranked) + 1
    if 5 + pad + 1 + max(cell_len(h) for h in heads.values()) > width:
        pad = 0  # names too long to align the figures after them: one space
    for c in ranked:
        name = printable(c.name)
        chunks = [f"  {c.rank}.", name + " " * max(0, pad - cell_len(name)), heads[c.name]]
        if sim.budgets:
            verdict = "meets every budget" if c.result.budgets_met else "misses a budget"
            chunks += ["—", *words(verdict)]
        if c.name == sim.baseline:
            chunks.append("(the baseline)")
        out.append(Text(lines(chunks, width, 5)))
    return out


def _headline(sim: Simulation, c: SimulatedContract) -> str:
    s = c.result.settings
    mc = c.monte_carlo
    if sim.ranking is None or sim.ranking.budget is None:
        cur = DisplayUnit(s.currency, Fraction(1), "money")
        return plus_minus(mc.p95_cost.value, mc.p95_cost.half_width, cur, s.precision)
    ri = next(x for x in mc.requirements if x.budget == sim.ranking.budget)
    return plus_minus(ri.requirement.value, ri.interval.half_width, ri.requirement.unit,
                      s.precision)  # fmt: skip


def delta_lines(sim: Simulation, width: int = 80) -> list[Text]:
    """Each draft's figures minus the baseline's, with half the paired 95 % interval."""
    others = [c for c in sim.contracts if c.delta is not None]
    if not others or sim.baseline is None:
        return []
    head = ["differences", "from", f"{printable(sim.baseline)},", *words("the baseline"),
            *words("(± half the paired 95% interval):")]  # fmt: skip
    out = [Text("\n" + lines(head, width, 2), style="bold")]
    for c in others:
        d = c.delta
        assert d is not None
        s = c.result.settings
        cur = DisplayUnit(s.currency, Fraction(1), "money")
        out.append(Text(lines([f"  {printable(c.name)}"], width, 4), style="bold"))
        figures: list[tuple[str, Interval, DisplayUnit]] = [
            ("mean cost per accepted run", d.mean_cost, cur),
            ("p95 cost per accepted run", d.p95_cost, cur),
        ]
        shown_already = {"mean(cost_per_accepted_run)", "p95(cost_per_accepted_run)"}
        for ri, i in zip(c.monte_carlo.requirements, d.requirements, strict=True):
            if ri.figure not in shown_already:  # each figure once (the JSON has every one)
                shown_already.add(ri.figure)
                figures.append((printable(ri.figure), i, ri.requirement.unit))
        for label, interval, unit in figures:
            shown = plus_minus(interval.value, interval.half_width, unit, s.precision, sign=True)
            noise = ["(within", "the", "noise)"] if interval.holds_zero else []
            out.append(Text(row(label, [shown, *noise], width, at=DELTA_LABEL, lead=4)))
    return out


def render_simulation(sim: Simulation, console: Console, hints: bool = True) -> None:
    """The whole summary on ``console``, fitted to its width."""
    width = console.width
    for text in describe_workload(sim, width):
        console.print(text, markup=False, soft_wrap=True)
    for c in sim.contracts:
        for line in contract_lines(c, width):
            console.print(line, soft_wrap=True)
    for line in [*ranking_lines(sim, width), *delta_lines(sim, width)]:
        console.print(line, soft_wrap=True)
    console.print(verdict_line(sim, width), soft_wrap=True)
    if hints:
        console.print(lines(HINTS, width, 0), style="dim", markup=False, soft_wrap=True)


def verdict_line(sim: Simulation, width: int = 80) -> Text:
    if not sim.budgets:
        return Text("\n" + lines(words("no budget given: nothing to meet (exit 0)."), width, 0))
    meeting = [printable(c.name) for c in sim.contracts if c.result.budgets_met]
    total = len(sim.contracts)
    unsure = sum(1 for c in sim.contracts if c.monte_carlo.needs_more_runs)
    said = words(f"verdict: {len(meeting)} of {total} contracts meet every budget")
    if meeting and len(meeting) < total:
        names = [f"{n}," for n in meeting[:-1]] + [meeting[-1]]
        names[0] = "(" + names[0]
        names[-1] += ")"
        said += names
    said[-1] += ";" if unsure else "."
    if unsure:
        said += words(f"{unsure} verdict(s) need more runs.")
    style = "green bold" if len(meeting) == total else "red bold"
    return Text("\n" + lines(said, width, 2), style=style)
