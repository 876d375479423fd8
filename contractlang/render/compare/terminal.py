"""The terminal summary of `contractlang compare`: the verdict in one plain sentence, the drafts'
figures best first with their deltas against the baseline, each budget requirement across the
drafts, and with attribution each draft's clauses by how much they move the headline and what
it would take to pass. Fits any width: figures through :func:`~..common.layout.lay_out`, prose
through :func:`~..common.layout.wrap` — no figure or name is ever split."""

from __future__ import annotations

from dataclasses import replace

from rich.console import Console
from rich.text import Text

from contractlang.compare.model import ComparedContract, Comparison, ContractFigures
from contractlang.diagnostics import printable
from contractlang.evaluate.results import BudgetResult, ContractResult, RequirementResult
from contractlang.render.common.layout import Figure, lay_out, words, wrap
from contractlang.render.common.numbers import gpu_hours_human, measure_human
from contractlang.render.compare.words import (
    PRICE_NOTE,
    attribution_chunks,
    cash,
    requirement_value,
    to_pass_chunks,
    verdict_chunks,
)
from contractlang.render.evaluate.terminal import figures, trace_headline
from contractlang.render.trace.terminal import set_aside


def _print(console: Console, chunks: list[str], *, style: str = "", indent: int = 0) -> None:
    said = [printable(c) for c in chunks]
    if said and indent:
        said[0] = " " * indent + said[0]
    lines = wrap(said, console.width, indent=indent + 2)
    console.print(Text("\n".join(lines), style=style), soft_wrap=True)


def comparison_figures(cmp: Comparison) -> list[Figure]:
    """The rank and the deltas against the baseline, then every figure of `evaluate`'s
    summary, one cell per draft, best first."""
    cs = [c.result for c in cmp.ranked]
    ranking = [
        Figure("ranking", "rank", "rank", tuple(str(c.rank) for c in cmp.ranked), bold=True),
    ]
    deltas = [c.delta for c in cmp.ranked]
    vs = f"vs {printable(cmp.baseline)}"
    ranking.append(
        Figure(
            "ranking",
            f"Δ net billed {vs}",
            "Δ net",
            tuple(
                "—" if d.money is None else cash(c, d.money["net"], sign=True)
                for c, d in zip(cs, deltas, strict=True)
            ),
        )
    )
    ranking.append(
        Figure(
            "ranking",
            f"Δ p95 cost per accepted run {vs}",
            "Δ p95",
            tuple(
                "—"
                if d.cost_per_accepted_run is None or d.cost_per_accepted_run["p95"] is None
                else cash(c, d.cost_per_accepted_run["p95"], sign=True)
                for c, d in zip(cs, deltas, strict=True)
            ),
        )
    )
    ranking.append(
        Figure(
            "ranking",
            f"Δ billable GPU-hours {vs}",
            "Δ billable",
            tuple(_signed_hours(d.usage_us["billable"]) for d in deltas),
        )
    )
    ordered = replace(cmp.evaluation, contracts=tuple(cs))
    return [*ranking, *figures(ordered)]


def _signed_hours(us: int) -> str:
    text = gpu_hours_human(us)
    return text if text.startswith("-") else "+" + text


def budget_lines(cmp: Comparison, console: Console) -> None:
    """Each requirement, then each draft's value and verdict (one line for all drafts when
    the trace alone decides it)."""
    cs = [c.result for c in cmp.ranked]
    for budget in cmp.evaluation.budgets:
        met = [c for c in cs if _budget(c, budget.name).met]
        ranks = " (ranks the drafts)" if cmp.ranking == budget.name else ""
        console.print()
        console.print(Text(printable(f"budget “{budget.name}”{ranks}"), style="bold"))
        who = [f"{c.name}," for c in met[:-1]] + [met[-1].name] if met else ["none"]
        _print(console, [*words(f"met by {len(met)} of {len(cs)}:"), *who])
        for i in range(len(budget.requires)):
            rows = [(c, _budget(c, budget.name).requirements[i]) for c in cs]
            text = rows[0][1].text
            values = {(r.value, r.verdict) for _, r in rows}
            if len(values) == 1:
                c, r = rows[0]
                said = [_mark(r.verdict), *words(text + ":"), *_value_chunks(c, r)]
                _print(console, [*said, *words("(every draft)")], indent=2)
                continue
            _print(console, words(text), indent=2)
            for c, r in rows:
                _print(console, [_mark(r.verdict), c.name, *_value_chunks(c, r)], indent=4)


def _budget(c: ContractResult, name: str) -> BudgetResult:
    return next(b for b in c.budgets if b.name == name)


def _mark(verdict: str) -> str:
    return {"met": "✓", "not met": "✗"}.get(verdict, "?")


def _value_chunks(c: ContractResult, r: RequirementResult) -> list[str]:
    p = c.settings.precision
    if r.margin is None:
        return [*words("not measurable")]
    value = requirement_value(r, p)
    amount = measure_human(abs(r.margin), r.unit, p)
    if r.met:
        return (
            [value, "—", amount, "to", "spare"] if r.margin else [value, *words("— at the limit")]
        )
    return [value, "—", "off", "by", amount]


def attribution_section(cc: ComparedContract, cmp: Comparison, console: Console) -> None:
    """One draft's clauses by how much they move the headline, then what it takes to pass."""
    r = cc.result
    console.print()
    console.print(Text(printable(r.name), style="bold"), soft_wrap=True)
    if cc.attribution is not None:
        base = ContractFigures.of(r, r.budgets)
        moving = [
            a
            for a in cc.ranked_attribution
            if a.without is None
            or a.without.net_minor != base.net_minor
            or _moves_budget(a.without, base)
        ]
        idle = [a for a in cc.attribution if a not in moving]
        if not cc.attribution:
            none = "no removable clause (exclusions, credits, caps, billing settings)."
            _print(console, words(none), indent=2)
        for a in moving:
            said = attribution_chunks(a, r, base, cmp.ranking, cmp.headline)
            _print(console, ["•", *said], indent=2)
        if idle:
            names = [f"“{a.clause.label}”," for a in idle]
            names[-1] = names[-1][:-1] + "."
            _print(console, ["•", *words("no effect on this trace:"), *names], indent=2)
    for sentence in to_pass_chunks(cc):
        _print(console, ["→", *sentence], indent=2)


def _moves_budget(w: ContractFigures, base: ContractFigures) -> bool:
    return any(
        x.value != y.value
        for b, o in zip(base.budgets, w.budgets, strict=True)
        for x, y in zip(b.requirements, o.requirements, strict=True)
    )


HINTS = [
    "data: --format json|csv ·",
    "every clause's effect and the price to pass: --attribute ·",
    "a report: --report PATH.html|PATH.md",
]


def render_comparison(cmp: Comparison, console: Console, hints: bool = True) -> None:
    """The whole summary on ``console``, fitted to its width."""
    width = console.width
    _print(console, verdict_chunks(cmp), style="bold")
    head = trace_headline(len(cmp.contracts), "draft", cmp.evaluation.trace.summary)
    head += words(f"(deltas against {cmp.baseline})")
    _print(console, head)
    if cmp.evaluation.trace.quarantine is not None:
        _print(console, words(f"({set_aside(cmp.evaluation.trace.quarantine)})"))
    names = [printable(c.name) for c in cmp.ranked]
    for part in lay_out(names, comparison_figures(cmp), width):
        console.print(part)
    budget_lines(cmp, console)
    if cmp.attributed:
        console.print(Text("\nwhat each clause does, and what it takes to pass", style="bold"))
        how = (
            f"(clauses by how much they move {cmp.headline or 'net billed'}; “without it” is "
            f"the draft evaluated with the clause deleted; {PRICE_NOTE})"
        )
        _print(console, words(how), style="dim")
        for cc in cmp.ranked:
            attribution_section(cc, cmp, console)
    console.print()
    _print(console, verdict_line(cmp), style="bold")
    if hints:
        console.print("\n".join(wrap(HINTS, width)), style="dim", markup=False, soft_wrap=True)


def verdict_line(cmp: Comparison) -> list[str]:
    """The exit code and why."""
    if not cmp.evaluation.budgets:
        return words("no budget given: nothing to meet (exit 0).")
    every = [c for c in cmp.contracts if c.result.budgets_met]
    if every:
        return words(f"{len(every)} of {len(cmp.contracts)} drafts meet every budget (exit 0).")
    return words("no draft meets every budget (exit 1).")
