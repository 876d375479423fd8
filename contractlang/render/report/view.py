"""What a report says, built once from a comparison and filled into the HTML and the Markdown
templates: the verdict, what it takes each draft to pass, the figures, the budget table with
margins, promise breaches, the clauses' effects, the price to pass and the most expensive
runs — every figure formatted exactly, every string from a trace or a contract passed through
``text`` (the Markdown escape; the HTML template escapes by itself) after its control
characters are made visible."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction

import polars as pl

from contractlang.compare.model import ComparedContract, Comparison, ContractFigures
from contractlang.diagnostics import printable
from contractlang.evaluate.results import ContractResult, DisplayUnit, RequirementResult
from contractlang.lang.numbers import micros
from contractlang.render.common.numbers import (
    counted,
    duration_human,
    gpu_hours_human,
    measure_human,
)
from contractlang.render.compare.terminal import comparison_figures
from contractlang.render.compare.words import (
    PRICE_NOTE,
    minor_cash,
    multiplier_text,
    percent_change,
    signed_measure,
    to_pass_chunks,
    verdict_chunks,
)
from contractlang.render.explain.terminal import explain_run
from contractlang.version import __version__

Escape = Callable[[str], str]

#: How many of the most expensive runs a report shows, and explains.
TOP_RUNS = 5
#: How many clauses per draft the Markdown report lists (the HTML lists every one).
TOP_CLAUSES = 6


@dataclass(frozen=True)
class Cell:
    text: str
    verdict: str = ""  # "met", "not met", "not measurable" or ""
    sub: str = ""  # a second line (a requirement's margin)


@dataclass(frozen=True)
class Table:
    title: str
    header: list[str]
    rows: list[list[Cell]]
    note: str = ""


@dataclass(frozen=True)
class DraftNotes:
    """One draft's findings: what it takes to pass, and its clauses by effect."""

    name: str
    rank: int
    to_pass: list[str]
    clauses: Table | None
    idle: list[str] = field(default_factory=list)

    @property
    def top(self) -> Table | None:
        """The clauses that move the most (:data:`TOP_CLAUSES`)."""
        if self.clauses is None:
            return None
        return Table(self.clauses.title, self.clauses.header, self.clauses.rows[:TOP_CLAUSES])

    @property
    def more(self) -> int:
        return max(0, len(self.clauses.rows) - TOP_CLAUSES) if self.clauses is not None else 0


@dataclass(frozen=True)
class Explained:
    run: str
    draft: str
    text: str


@dataclass(frozen=True)
class ReportView:
    title: str
    verdict: str
    about: list[str]
    drafts: list[str]
    summary: Table
    budgets: list[Table]
    promises: Table
    notes: list[DraftNotes]
    price: Table | None
    runs: Table
    explained: list[Explained]
    method: list[str]
    generator: str
    attributed: bool
    good: bool  # some draft meets every budget (or there is none)


def build_view(cmp: Comparison, text: Escape) -> ReportView:
    """The report's content. ``text`` escapes a string for the output format."""

    def t(s: str) -> str:
        return text(printable(s))

    ranked_cs = list(cmp.ranked)
    names = [t(c.name) for c in ranked_cs]
    s = cmp.evaluation.trace.summary
    span = (
        f"{s.first_ts:%Y-%m-%d %H:%M} → {s.last_ts:%Y-%m-%d %H:%M} UTC"
        if s.first_ts is not None and s.last_ts is not None
        else "no events"
    )
    about = [
        t(
            f"Trace: {counted(s.runs, 'run')}, {counted(s.allocations, 'allocation')}, "
            f"{counted(s.rows_read, 'event')},"
        )
        + t(f" {span}."),
        t(
            f"Ranked by budget “{cmp.ranking}”"
            + (f", headline {cmp.headline_requirement.text}." if cmp.headline_requirement else ".")
            if cmp.ranking is not None
            else "No budget given: drafts ranked by net billed."
        ),
        t(f"Deltas (Δ) are against {cmp.baseline}."),
        *(t(n) for n in cmp.notes),
    ]
    title = (
        f"{len(ranked_cs)} drafts against budget “{cmp.ranking}”"
        if cmp.ranking is not None and len(ranked_cs) > 1
        else f"“{ranked_cs[0].name}”" + (f" against budget “{cmp.ranking}”" if cmp.ranking else "")
        if len(ranked_cs) == 1
        else f"{len(ranked_cs)} drafts compared"
    )
    return ReportView(
        title=t(title),
        verdict=t(_capitalised(" ".join(verdict_chunks(cmp)))),
        about=about,
        drafts=names,
        summary=_summary(cmp, names, t),
        budgets=_budgets(cmp, names, t),
        promises=_promises(ranked_cs, t),
        notes=[_notes(cc, cmp, t) for cc in ranked_cs],
        price=_price_table(ranked_cs, t) if cmp.attributed and cmp.ranking else None,
        runs=_runs(cmp, names, t),
        explained=_explained(cmp, t),
        method=[t(x) for x in _method(cmp)],
        generator=t(f"contractlang {__version__}"),
        attributed=cmp.attributed,
        good=not cmp.evaluation.budgets or any(c.result.budgets_met for c in ranked_cs),
    )


def _capitalised(text: str) -> str:
    return text[:1].upper() + text[1:]


def _summary(cmp: Comparison, names: list[str], t: Escape) -> Table:
    rows = []
    alone = len(cmp.contracts) == 1
    for f in comparison_figures(cmp):
        if (f.group == "runs" and f.label == "allocations") or (alone and f.group == "ranking"):
            continue
        rows.append([Cell(t(f.label)), *(Cell(t(c)) for c in f.cells)])
    return Table("The drafts, best first", ["", *names], rows)


def _budgets(cmp: Comparison, names: list[str], t: Escape) -> list[Table]:
    cs = [c.result for c in cmp.ranked]
    tables = []
    for budget in cmp.evaluation.budgets:
        rows: list[list[Cell]] = []
        results = [next(b for b in c.budgets if b.name == budget.name) for c in cs]
        moved = set(cmp.moved.get(budget.name, ()))
        for i, first in enumerate(results[0].requirements):
            label = first.text + ("" if i in moved else " (trace)")
            cells = [Cell(t(label))]
            for c, b in zip(cs, results, strict=True):
                cells.append(_requirement_cell(b.requirements[i], c, t))
            rows.append(cells)
        verdicts = [
            Cell(t("budget met")),
            *(Cell("met" if b.met else "not met", "met" if b.met else "not met") for b in results),
        ]
        rows.append(verdicts)
        ranks = " — ranks the drafts" if cmp.ranking == budget.name else ""
        note = ""
        if len(moved) < len(results[0].requirements):
            note = "(trace): measured on the trace alone; the same for every draft."
        title = t(f"Budget “{budget.name}”{ranks}")
        tables.append(Table(title, ["requirement", *names], rows, note))
    return tables


def _requirement_cell(r: RequirementResult, c: ContractResult, t: Escape) -> Cell:
    p = c.settings.precision
    if r.margin is None:
        return Cell(t("not measurable"), r.verdict)
    value = measure_human(r.value, r.unit, p)
    margin = signed_measure(r.margin, r.unit, p)
    return Cell(t(value), r.verdict, t(f"margin {margin}"))


def _promises(cs: list[ComparedContract], t: Escape) -> Table:
    rows = []
    for cc in cs:
        p = cc.result.promises
        notice = "none" if p.notice_us is None else duration_human(p.notice_us)
        nb = "—" if p.notice_us is None else f"{p.notice_breaches:,} of {p.reclaims:,} reclaims"
        restart = "none" if p.restart_us is None else duration_human(p.restart_us)
        rb = "—" if p.restart_us is None else f"{p.restart_breaches:,} of {p.replacements:,}"
        shortest = duration_human(p.shortest_notice_us) if p.shortest_notice_us is not None else "—"
        longest = duration_human(p.longest_wait_us) if p.longest_wait_us is not None else "—"
        rows.append([Cell(t(x)) for x in (cc.name, notice, nb, shortest, restart, rb, longest)])
    header = [
        "draft",
        "notice promised",
        "notice breached",
        "shortest notice",
        "restart promised",
        "restart breached",
        "longest wait",
    ]
    return Table("Promise breaches", header, rows)


def _notes(cc: ComparedContract, cmp: Comparison, t: Escape) -> DraftNotes:
    r = cc.result
    sentences = [t(" ".join(s)) for s in to_pass_chunks(cc)]
    if cc.attribution is None:
        return DraftNotes(t(r.name), cc.rank, sentences, None)
    base = ContractFigures.of(r, r.budgets)
    rows = []
    idle = []
    for a in cc.ranked_attribution:
        if a.without is None:
            rows.append(
                [
                    Cell(t(a.clause.label)),
                    Cell(t(a.clause.kind)),
                    Cell(str(a.clause.line)),
                    Cell(t(f"cannot be evaluated without it: {a.error}")),
                    Cell(""),
                    Cell(""),
                ]
            )
            continue
        w = a.without
        change = base.net_minor - w.net_minor
        moved = a.headline_change
        head = ranking_req(r, cmp.ranking)
        if change == 0 and not moved:
            idle.append(t(a.clause.label))
            continue
        head_text = "—"
        if moved and head is not None:
            head_text = signed_measure(moved, head.unit, r.settings.precision)
        flip = ""
        if cmp.ranking is not None and base.met(cmp.ranking) != w.met(cmp.ranking):
            flip = "passes without it" if w.met(cmp.ranking) else "fails without it"
        rows.append(
            [
                Cell(t(a.clause.label)),
                Cell(t(a.clause.kind)),
                Cell(str(a.clause.line)),
                Cell(t(minor_cash(r, change, sign=True))),
                Cell(t(head_text)),
                Cell(t(flip)),
            ]
        )
    header = [
        "clause",
        "kind",
        "line",
        "net: with − without",
        f"{cmp.headline or 'headline'}: with − without",
        "budget",
    ]
    table = Table(t(f"{r.name}: what each clause does"), [t(h) for h in header], rows)
    return DraftNotes(t(r.name), cc.rank, sentences, table, idle)


def ranking_req(r: ContractResult, ranking: str | None) -> RequirementResult | None:
    b = next((b for b in r.budgets if b.name == ranking), None)
    return b.headline if b is not None else None


def _price_table(cs: list[ComparedContract], t: Escape) -> Table:
    rows = []
    for cc in cs:
        tp = cc.to_pass
        p = tp.price if tp is not None else None
        if tp is None or p is None:
            rows.append([Cell(t(cc.name)), Cell("—"), Cell("—"), Cell("—"), Cell("—")])
            continue
        spans = ", ".join(
            f"[{multiplier_text(lo, up=True)[:-1]}, {multiplier_text(hi)[:-1]}]"
            for lo, hi in p.intervals
        )
        largest = "—"
        if p.largest is not None:
            largest = f"{multiplier_text(p.largest)} ({percent_change(p.largest)})"
        at = p.at_largest
        p95 = "—"
        if at is not None and at.p95 is not None:
            p95 = measure_human(at.p95, _money(cc.result), cc.result.settings.precision)
        scope = "whole budget" if p.scope == "budget" else "requirements the terms move"
        ok = "met" if p.largest is not None and p.largest >= 1 else "not met"
        rows.append(
            [
                Cell(t(cc.name)),
                Cell(t(largest), ok),
                Cell(t(spans or "none")),
                Cell(t(p95)),
                Cell(t(scope)),
            ]
        )
    header = [
        "draft",
        "largest m that passes",
        "passing intervals of m",
        "p95 cost at that m",
        "searched over",
    ]
    return Table("Price to pass", header, rows, PRICE_NOTE + ".")


def _money(c: ContractResult) -> DisplayUnit:
    return DisplayUnit(c.settings.currency, Fraction(1), "money")


def _top_runs(cmp: Comparison) -> list[str]:
    best = cmp.ranked[0].result
    top = best.runs.sort(["net_minor", "run_id"], descending=[True, False]).head(TOP_RUNS)
    return [str(x) for x in top["run_id"].to_list()]


def _runs(cmp: Comparison, names: list[str], t: Escape) -> Table:
    best = cmp.ranked[0].result
    ids = _top_runs(cmp)
    facts = best.runs.filter(pl.col("run_id").is_in(ids))
    nets = {cc.name: _nets(cc.result, ids) for cc in cmp.ranked}
    rows = []
    for run in ids:
        row = facts.filter(pl.col("run_id") == run).row(0, named=True)
        lost = micros(row["lost_gpu_time"]) if row["lost_gpu_time"] is not None else 0
        metered = micros(row["metered_gpu_time"])
        cells = [
            Cell(t(run)),
            Cell("yes" if row["accepted"] else "no"),
            Cell(f"{row['allocations']:,}"),
            Cell(f"{row['reclaims']:,}"),
            Cell(gpu_hours_human(metered)),
            Cell(gpu_hours_human(lost)),
        ]
        for cc in cmp.ranked:
            net = nets[cc.name].get(run)
            cells.append(Cell("—" if net is None else t(minor_cash(cc.result, net))))
        rows.append(cells)
    header = [
        "run",
        "accepted",
        "allocations",
        "reclaims",
        "metered GPU-h",
        "lost GPU-h",
        *[f"net: {n}" for n in names],
    ]
    return Table(t(f"The {len(ids)} most expensive runs under {best.name}"), header, rows)


def _nets(r: ContractResult, ids: list[str]) -> dict[str, int]:
    picked = r.runs.filter(pl.col("run_id").is_in(ids)).select("run_id", "net_minor")
    return {str(k): int(v) for k, v in picked.iter_rows()}


def _explained(cmp: Comparison, t: Escape) -> list[Explained]:
    best = cmp.ranked[0].result
    return [Explained(t(run), t(best.name), t(explain_run(best, run))) for run in _top_runs(cmp)]


def _method(cmp: Comparison) -> list[str]:
    out = [
        "Every figure is exact: money in the contract's minor units, each ledger line rounded "
        "once, totals summed from the lines; budget measures in exact fractions. Charts are "
        "drawn from those figures and are for the eye; quote the tables.",
        "The facts (runtimes, notices, replacement waits, lost progress) were derived once from "
        "the trace and shared by every draft.",
    ]
    if cmp.attributed:
        out += [
            "“Without it” is the draft evaluated again with that one clause deleted (a billing "
            "increment, minimum or period reverts to 1 second, no minimum, midnight UTC); rates "
            "and promises are not removable.",
            f"Price to pass: {PRICE_NOTE}. Pass/fail is checked at m = 0, 0.5, …, 10, then each "
            "change of verdict is bisected to 0.1 %; the multiplier shown is one the draft was "
            "evaluated at exactly.",
        ]
    return out
