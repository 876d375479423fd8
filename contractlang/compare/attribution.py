"""Clause attribution: each removable clause of a contract taken out in turn, and what it
would take for the draft to meet the ranking budget (docs/compare.md, "Clause attribution",
"What it takes to pass").

Each variant restarts at the stage its clause acts in
(:func:`~contractlang.compare.variants.without`) and measures only the requirements the terms
move (:class:`~.budgets.BudgetMeter`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from fractions import Fraction

import polars as pl

from contractlang.compare.budgets import BudgetMeter
from contractlang.compare.model import Attribution, ContractFigures, RunAttribution, ToPass
from contractlang.compare.price import price_to_pass
from contractlang.compare.variants import Removable, removable_clauses, without
from contractlang.errors import ContractlangError
from contractlang.evaluate.results import ContractResult
from contractlang.evaluate.stages import Staged


def attribute(
    staged: Staged, meter: BudgetMeter, progress: Callable[[str], None] | None = None
) -> tuple[Attribution, ...]:
    """Every removable clause of ``staged``'s contract, with the contract evaluated without
    it. A variant that cannot be evaluated (say, an allocation no rate prices once an
    exclusion is gone) is kept with its error's message."""
    step = progress or (lambda _msg: None)
    run = staged.run
    out = []
    for rem in removable_clauses(run.contract, run.source_text):
        step(f"attributing {run.contract.name}: without {rem.label}")
        v, error = without_or_error(staged, rem)
        if v is None:
            out.append(Attribution(rem, None, error))
            continue
        out.append(Attribution(rem, ContractFigures.of(v, meter.measure(v.runs))))
    return tuple(out)


def without_or_error(staged: Staged, rem: Removable) -> tuple[ContractResult | None, str | None]:
    """The contract without the clause, or why it cannot be evaluated without it."""
    try:
        return without(staged, rem.clause), None
    except ContractlangError as exc:
        return None, exc.diagnostics[0].message if exc.diagnostics else str(exc)


def what_it_takes(
    staged: Staged,
    meter: BudgetMeter,
    budget: str,
    base: ContractFigures,
    attribution: Sequence[Attribution],
    progress: Callable[[str], None] | None = None,
) -> ToPass:
    """For a draft that fails ``budget``: the single clauses whose removal makes it pass and
    its price to pass; for one that meets it, its headroom (the same multiplier). When a
    requirement only the trace decides fails, no clause can help and the price is searched
    over the requirements the terms move."""
    met = base.met(budget)
    fixed = meter.fixed_failures(budget)
    clauses = tuple(
        a.clause for a in attribution if not met and a.without is not None and a.without.met(budget)
    )
    price = None
    if meter.moved(budget):
        price = price_to_pass(staged, meter, budget, base, "terms" if fixed else "budget", progress)
    return ToPass(budget, met, fixed, clauses, price)


def headline_change(a: Attribution, base: ContractFigures, ranking: str | None) -> Fraction | None:
    """How much the clause moves the ranking budget's headline value: with − without (None
    without a ranking budget, or where either is not measurable)."""
    if ranking is None or a.without is None:
        return None
    mine, theirs = base.budget(ranking), a.without.budget(ranking)
    if mine is None or theirs is None or mine.headline is None or theirs.headline is None:
        return None
    if mine.headline.value is None or theirs.headline.value is None:
        return None
    return mine.headline.value - theirs.headline.value


def ranked(
    attribution: Sequence[Attribution], base: ContractFigures, ranking: str | None
) -> list[Attribution]:
    """The clauses by how much they move the headline (then the net), most first; clauses
    whose variant could not be evaluated last; ties in file order."""

    def key(a: Attribution) -> tuple[int, Fraction, int]:
        if a.without is None:
            return (1, Fraction(0), 0)
        moved = headline_change(a, base, ranking)
        return (0, -abs(moved or Fraction(0)), -abs(base.net_minor - a.without.net_minor))

    return sorted(attribution, key=key)


def attribute_run(staged: Staged, run_id: str) -> tuple[RunAttribution, ...]:
    """Every removable clause of ``staged``'s contract, with ``run_id``'s net without it (the
    whole trace is evaluated again: a month or contract cap shares its cut among every run)."""
    run = staged.run
    out = []
    for rem in removable_clauses(run.contract, run.source_text):
        v, error = without_or_error(staged, rem)
        if v is None:
            out.append(RunAttribution(rem, None, error))
            continue
        net = v.runs.filter(pl.col("run_id") == run_id)["net_minor"]
        out.append(RunAttribution(rem, int(net[0]) if net.len() else None))
    return tuple(out)
