"""Evaluate contracts over derived facts: per contract the ledger's columns, per-run figures,
caps, totals, promise breaches and budget verdicts.

Facts are derived once per trace and shared by every contract (design §10). Per contract, in
the order of design §6: allocation terms (:mod:`~contractlang.evaluate.billing`), allocation
caps, run sums (:mod:`~contractlang.evaluate.runs`), caps above the allocation
(:mod:`~contractlang.evaluate.caps`), then budgets (:mod:`~contractlang.evaluate.budget`).
Example::

    >>> from contractlang import generate_trace, load_trace, derive_facts, terms_from_text
    >>> terms = terms_from_text('contract "c" { currency USD rate 2 USD per gpu_hour }')
    >>> trace = load_trace(generate_trace(3, seed=1))
    >>> result = evaluate_contracts(terms, trace, derive_facts(trace), terms.contracts)
    >>> c = result.contracts[0]
    >>> c.ledger()["amount"].sum() == c.money(c.totals.net_minor)  # the ledger sums to net
    True
    >>> result.verdict
    'no budget'
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import polars as pl

from contractlang.diagnostics import Diagnostic
from contractlang.evaluate.billing import apply_contract
from contractlang.evaluate.budget import evaluate_budget
from contractlang.evaluate.caps import apply_allocation_caps, apply_caps_above
from contractlang.evaluate.contract_run import ContractRun
from contractlang.evaluate.plan import AllocationPlan
from contractlang.evaluate.results import ContractResult, Evaluation, PromiseBreaches
from contractlang.evaluate.runs import SUMS, promises, run_sums, settle, totals
from contractlang.evaluate.trace_checks import (
    MAX_NAMED,
    amounts_kept,
    check_against_trace,
    check_priced,
    collect_amounts,
    exact_on_overflow,
    fit_sums,
    negative_credit_warnings,
    negative_credits,
    unpriced_allocations,
)
from contractlang.lang import ast
from contractlang.lang.terms import Terms
from contractlang.trace.derive import Facts
from contractlang.trace.model import Trace

#: Called with a short description of each phase as it starts (for a progress display).
Progress = Callable[[str], None]


def evaluate_contracts(
    terms: Terms,
    trace: Trace,
    facts: Facts,
    contracts: Sequence[ast.Contract],
    *,
    progress: Progress | None = None,
) -> Evaluation:
    """Evaluate ``contracts`` (of ``terms``, chosen by the caller: E502 is the driver's,
    :func:`~contractlang.pipeline.chosen.check_chosen`) over ``facts``, the facts of
    ``trace``, and measure every budget against each."""
    step = progress or (lambda _msg: None)
    allocations, runs = facts.collect()
    check_against_trace(terms, contracts, allocations)
    budgets = [(b, terms.source_of(b)) for b in terms.budgets]
    results = []
    for contract in contracts:
        step(f"evaluating {contract.name}")
        run = ContractRun.of(contract, terms.file_of(contract), terms.source_of(contract))
        results.append(evaluate_contract(run, allocations, runs, budgets))
    return Evaluation(
        tuple(results),
        terms.budgets,
        trace,
        (*terms.warnings, *trace.warnings),
        terms.sources,
    )


@exact_on_overflow
def evaluate_contract(
    run: ContractRun,
    allocations: pl.DataFrame,
    run_facts: pl.DataFrame,
    budgets: Sequence[tuple[ast.Budget, str | None]],
) -> ContractResult:
    """One contract over collected facts; ``budgets`` pairs each budget with its source text.

    The same stages a sharded evaluation takes (:mod:`contractlang.pipeline.shards`):
    :func:`bill_allocations` and :func:`run_money` for each shard of runs, then
    :func:`conclude` once over every run."""
    with amounts_kept(run):
        lf, plan = apply_contract(allocations.lazy(), run)
        wide, plan, warnings = allocation_amounts(lf, plan, run)
    sums = contract_run_sums(wide, run_facts, plan, run)
    return settle_contract(run, wide, plan, sums, budgets, warnings)


def allocation_amounts(
    lf: pl.LazyFrame, plan: AllocationPlan, run: ContractRun, *, priced: bool = False
) -> tuple[pl.DataFrame, AllocationPlan, list[Diagnostic]]:
    """Step (7a) on the allocations after step (6): the allocation caps, then every amount
    collected and checked (E405, E401, W401). ``priced``: the rates and the billable time are
    those of an evaluation already checked (a variant that changed neither), or are checked
    by the caller over every shard, so E401 and W401 are not looked for here."""
    lf, allocation_caps = apply_allocation_caps(lf, run.caps["allocation"], run.settings)
    plan = replace(plan, caps=allocation_caps)
    wide = collect_amounts(lf, run)
    if priced:
        return wide, plan, []
    unpriced = unpriced_allocations(wide)
    check_priced(run, unpriced.head(MAX_NAMED), unpriced.height)
    return wide, plan, negative_credit_warnings(negative_credits(wide, plan), plan, run.file)


def contract_run_sums(
    wide: pl.DataFrame, run_facts: pl.DataFrame, plan: AllocationPlan, run: ContractRun
) -> pl.DataFrame:
    """The run sums of a contract's allocations (before the caps above the allocation),
    checked to fit 64 bits (E405)."""
    return fit_sums(run_sums(wide, run_facts, plan, run.settings), SUMS, run)


def settle_contract(
    run: ContractRun,
    wide: pl.DataFrame,
    plan: AllocationPlan,
    sums: pl.DataFrame,
    budgets: Sequence[tuple[ast.Budget, str | None]],
    warnings: Sequence[Diagnostic] = (),
    breaches: PromiseBreaches | None = None,
    *,
    allocations: int | None = None,
) -> ContractResult:
    """Steps (7b–d) on the run sums (``sums``, in ``run_id`` order), then net, totals,
    promise breaches (``breaches`` when already known) and budgets. ``allocations``: how many
    allocations the contract billed, when ``wide`` does not hold them all (a sharded run)."""
    s = run.settings
    runs, cuts = apply_caps_above(sums, run.caps, s)
    runs = settle(runs, cuts, s)
    return ContractResult(
        contract=run.contract,
        settings=s,
        plan=plan,
        allocations=wide,
        runs=runs,
        run_cuts=cuts,
        budgets=tuple(evaluate_budget(b, runs, text) for b, text in budgets),
        totals=totals(runs, wide.height if allocations is None else allocations),
        promises=breaches if breaches is not None else promises(wide, s),
        warnings=tuple(warnings),
        source_text=run.source_text,
    )


@dataclass(frozen=True)
class Billed:
    """One contract applied to allocations (all of a trace's, or a shard's): steps (2)–(7a)
    of design §6, every allocation's money in ``wide``."""

    run: ContractRun
    plan: AllocationPlan
    wide: pl.DataFrame


@exact_on_overflow
def bill_allocations(run: ContractRun, allocations: pl.DataFrame) -> Billed:
    """Steps (2)–(6) and the allocation caps (7a) on a shard's allocations, collected (E405
    when an amount cannot be kept exactly); E401 and W401 are the caller's, over every
    shard."""
    with amounts_kept(run):
        lf, plan = apply_contract(allocations.lazy(), run)
        wide, plan, _ = allocation_amounts(lf, plan, run, priced=True)
    return Billed(run, plan, wide)


def run_money(billed: Billed, run_facts: pl.DataFrame) -> pl.DataFrame:
    """The run facts of ``billed``'s runs with their sums (:data:`~contractlang.evaluate.
    runs.SUMS`, E405 when one does not fit 64 bits) and settlement month."""
    return contract_run_sums(billed.wide, run_facts, billed.plan, billed.run)


def conclude(
    billed: Billed,
    sums: pl.DataFrame,
    budgets: Sequence[tuple[ast.Budget, str | None]],
    *,
    allocations: int,
    promises: PromiseBreaches,
    warnings: Sequence[Diagnostic],
) -> ContractResult:
    """The global step of a sharded evaluation: :func:`settle_contract` over every run's
    sums (``sums``, in ``run_id`` order), with the counts over every allocation; ``billed``
    holds the allocations the ledger reads, or none."""
    b = billed
    return settle_contract(
        b.run, b.wide, b.plan, sums, budgets, warnings, promises, allocations=allocations
    )
