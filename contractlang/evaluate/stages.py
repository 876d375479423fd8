"""One contract's evaluation, written once as data: :data:`STAGES`, in the order of design §6,
each a function from one :class:`Staged` to the next.

    promise_breaches  how often the allocations breached each promise (from the facts)
    exclusions        (2) whole-allocation and (3) duration exclusions, on the facts
    billable_time     (4) the increment and the minimum
    charge            (5) the first rate that prices an allocation: its charge
    credit_lines      (6) each credit where its condition holds
    credit_pools      (6) their sum: each allocation's pool
    allocation_caps   (7a) the allocation caps
    amounts           every allocation's money collected (E405 naming the allocation)
    priced            E401 and W401 (a shard's are counted for the global step)
    run_sums          each run's sums
    settle_month      the month each run settles in
    fit_sums          the sums as 64-bit integers (E405 naming the run)
    caps_above        (7b–d) run, month and contract caps; each run's net and money facts
    totals            the contract's totals

The engine runs them all (:func:`~contractlang.evaluate.engine.stage_contract`); a sharded
evaluation runs them up to the runs' sums in each shard and the rest once over every run's
sums (:mod:`contractlang.pipeline.shards`); ``compare`` runs them again from the stage a
clause or a price multiplier acts in, with the :class:`~.contract_run.ContractRun` or the
:class:`Staged` changed (``compare/variants.py``).

Example::

    >>> from contractlang import generate_trace, load_trace, derive_facts, terms_from_text
    >>> from contractlang.evaluate.contract_run import ContractRun
    >>> terms = terms_from_text('contract "c" { currency USD rate 2 USD per gpu_hour }')
    >>> allocations, runs = derive_facts(load_trace(generate_trace(3, seed=1))).collect()
    >>> start = Staged(ContractRun.of(terms.contracts[0], "c.spot", None), allocations, runs)
    >>> billed = through(start, until=run_sums)
    >>> billed.sums is None, billed.wide.height == allocations.height
    (True, True)
    >>> done = through(billed, first=run_sums)
    >>> done.totals.gross_minor == done.wide["charge_minor"].sum()
    True
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TypeVar

import polars as pl

from contractlang.diagnostics import Diagnostic
from contractlang.errors import InternalError
from contractlang.evaluate import billing, caps, runs, trace_checks
from contractlang.evaluate.contract_run import ContractRun
from contractlang.evaluate.plan import AllocationPlan, CapCut
from contractlang.evaluate.results import BudgetResult, ContractResult, PromiseBreaches, Totals

T = TypeVar("T")

#: The plan before any stage: no terms.
NO_TERMS = AllocationPlan((), (), (), ())


@dataclass(frozen=True)
class Staged:
    """A contract's evaluation as far as its stages have gone: what each stage reads and
    writes, by name. A field no stage has written yet is none (or empty)."""

    run: ContractRun
    #: the allocations' facts and the runs' (none in a sharded evaluation's global step)
    facts: pl.DataFrame | None = None
    run_facts: pl.DataFrame | None = None
    #: ``promise_breaches``
    promises: PromiseBreaches | None = None
    #: the terms so far, each with the column that holds its amounts
    plan: AllocationPlan = NO_TERMS
    #: ``exclusions`` to ``allocation_caps``: the allocations with the columns so far, lazily
    lazy: pl.LazyFrame | None = field(default=None, repr=False)
    #: ``amounts``: every allocation with its money, and how many allocations were billed
    #: (over every shard, in a sharded evaluation's global step)
    wide: pl.DataFrame | None = field(default=None, repr=False)
    allocation_count: int = 0
    #: ``priced``: the first unpriced allocations (E401 names them) and how many there are;
    #: for each credit, how many allocations computed it below zero; W401
    unpriced: pl.DataFrame | None = field(default=None, repr=False)
    unpriced_count: int = 0
    negative: tuple[int, ...] = ()
    warnings: tuple[Diagnostic, ...] = ()
    #: ``run_sums`` to ``fit_sums``: the run facts with each run's sums and settlement month
    sums: pl.DataFrame | None = field(default=None, repr=False)
    #: ``caps_above``: the settled runs and the cuts above the allocation; ``totals``
    runs: pl.DataFrame | None = field(default=None, repr=False)
    cuts: tuple[CapCut, ...] = ()
    totals: Totals | None = None

    def result(self, budgets: tuple[BudgetResult, ...] = ()) -> ContractResult:
        """The contract's result, once every stage has run, with the ``budgets`` measured
        over its runs."""
        return ContractResult(
            contract=self.run.contract,
            settings=self.run.settings,
            plan=self.plan,
            allocations=need(self.wide, "the allocations' amounts"),
            runs=need(self.runs, "the settled runs"),
            run_cuts=self.cuts,
            budgets=budgets,
            totals=need(self.totals, "the totals"),
            promises=need(self.promises, "the promise breaches"),
            warnings=self.warnings,
            source_text=self.run.source_text,
        )


#: A stage: what it reads of a :class:`Staged`, with what it writes.
Stage = Callable[[Staged], Staged]


def need(value: T | None, what: str) -> T:
    """``value``, written by an earlier stage; an internal error where none has."""
    if value is None:
        raise InternalError(f"a stage read {what} before the stage that writes them")
    return value


def promise_breaches(st: Staged) -> Staged:
    """How often the allocations breached each promise: read from the facts, which no stage
    changes."""
    facts = need(st.facts, "the allocations' facts")
    return replace(st, promises=runs.promises(facts, st.run.settings))


def exclusions(st: Staged) -> Staged:
    """Steps (2) and (3) on the facts: a new plan, its exclusion terms."""
    facts = need(st.facts, "the allocations' facts")
    lazy, whole, durations = billing.apply_exclusions(facts.lazy(), st.run)
    return replace(st, lazy=lazy, plan=AllocationPlan(whole, durations, (), ()))


def billable_time(st: Staged) -> Staged:
    """Step (4): each allocation's billable time under the run's settings."""
    lazy = need(st.lazy, "the allocations")
    return replace(st, lazy=billing.apply_billable(lazy, st.run.settings))


def charge(st: Staged) -> Staged:
    """Step (5): the rates and the charge (at the run's price multiplier, if any)."""
    lazy, rates = billing.apply_rates(need(st.lazy, "the allocations"), st.run)
    return replace(st, lazy=lazy, plan=replace(st.plan, rates=rates))


def credit_lines(st: Staged) -> Staged:
    """Step (6): each credit's line."""
    lazy, credits = billing.apply_credits(need(st.lazy, "the allocations"), st.run)
    return replace(st, lazy=lazy, plan=replace(st.plan, credits=credits))


def credit_pools(st: Staged) -> Staged:
    """Step (6): each allocation's pool, the sum of the plan's credit lines."""
    pool = billing.credit_pool(st.plan.credits)
    lazy = need(st.lazy, "the allocations").with_columns(credit_pool_minor=pool)
    return replace(st, lazy=lazy)


def allocation_caps(st: Staged) -> Staged:
    """Step (7a): the allocation caps, each cutting what the one before left of the pool."""
    s, limits = st.run.settings, st.run.caps["allocation"]
    lazy, cut = caps.apply_allocation_caps(need(st.lazy, "the allocations"), limits, s)
    return replace(st, lazy=lazy, plan=replace(st.plan, caps=cut))


def amounts(st: Staged) -> Staged:
    """Every allocation's columns collected (E405 naming the allocation whose amount cannot
    be kept exactly)."""
    wide = trace_checks.collect_amounts(need(st.lazy, "the allocations"), st.run)
    return replace(st, lazy=None, wide=wide, allocation_count=wide.height)


def priced(st: Staged) -> Staged:
    """E401 for allocations that bill time but that no rate prices, W401 for credits that
    computed below zero; in a shard, both only counted (the global step sees every shard's)."""
    wide = need(st.wide, "the allocations' amounts")
    unpriced = trace_checks.unpriced_allocations(wide)
    st = replace(
        st,
        unpriced=unpriced.head(trace_checks.MAX_NAMED),
        unpriced_count=unpriced.height,
        negative=tuple(trace_checks.negative_credits(wide, st.plan)),
    )
    if st.run.shard:
        return st
    trace_checks.check_priced(st.run, unpriced, st.unpriced_count)
    warnings = trace_checks.negative_credit_warnings(st.negative, st.plan, st.run.file)
    return replace(st, warnings=tuple(warnings))


def run_sums(st: Staged) -> Staged:
    """Each run's sums (:data:`~contractlang.evaluate.runs.SUMS`), beside its facts."""
    wide = need(st.wide, "the allocations' amounts")
    sums = runs.run_sums(wide, need(st.run_facts, "the runs' facts"), st.plan)
    return replace(st, sums=sums)


def settle_month(st: Staged) -> Staged:
    """The month each run settles in: the one its last allocation ends in, by the billing
    period."""
    month = st.run.settings.billing_month(pl.col("last_end"))
    return replace(st, sums=need(st.sums, "the runs' sums").with_columns(settle_month=month))


def fit_sums(st: Staged) -> Staged:
    """The runs' sums as 64-bit integers (E405 naming the first run whose sum is larger)."""
    sums = trace_checks.fit_sums(need(st.sums, "the runs' sums"), runs.SUMS, st.run)
    return replace(st, sums=sums)


def caps_above(st: Staged) -> Staged:
    """Steps (7b–d), the caps above the allocation, then each run's net and money facts."""
    s = st.run.settings
    capped, cuts = caps.apply_caps_above(need(st.sums, "the runs' sums"), st.run.caps, s)
    return replace(st, runs=runs.settle(capped, cuts, s), cuts=cuts)


def totals(st: Staged) -> Staged:
    """The contract's totals over its runs and allocations."""
    settled = need(st.runs, "the settled runs")
    return replace(st, totals=runs.totals(settled, st.allocation_count))


#: Every stage, in order (design §6).
STAGES: tuple[Stage, ...] = (
    promise_breaches,
    exclusions,
    billable_time,
    charge,
    credit_lines,
    credit_pools,
    allocation_caps,
    amounts,
    priced,
    run_sums,
    settle_month,
    fit_sums,
    caps_above,
    totals,
)


def through(staged: Staged, first: Stage | None = None, until: Stage | None = None) -> Staged:
    """``staged`` through the stages from ``first`` (the first when none) up to ``until``,
    not included (the last when none). An amount too large to keep exactly that polars
    finds as it plans a stage's columns — a constant of the terms, before any row is read —
    is E405 (:func:`~contractlang.evaluate.trace_checks.amounts_kept`)."""
    start = 0 if first is None else STAGES.index(first)
    stop = len(STAGES) if until is None else STAGES.index(until)
    with trace_checks.amounts_kept(staged.run):
        for stage in STAGES[start:stop]:
            staged = stage(staged)
    return staged
