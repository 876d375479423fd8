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
    >>> result = evaluate_facts(terms, trace, derive_facts(trace))
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
from contractlang.evaluate.caps import (
    Caps,
    apply_allocation_caps,
    apply_caps_above,
    caps_by_level,
)
from contractlang.evaluate.plan import AllocationPlan
from contractlang.evaluate.results import ContractResult, Evaluation, PromiseBreaches
from contractlang.evaluate.runs import SUMS, promises, run_sums, settle, totals
from contractlang.evaluate.settings import Settings, read_settings
from contractlang.evaluate.trace_checks import (
    MAX_NAMED,
    check_against_trace,
    check_chosen,
    check_priced,
    collect_amounts,
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


def evaluate_facts(
    terms: Terms,
    trace: Trace,
    facts: Facts,
    *,
    progress: Progress | None = None,
    only: Sequence[str] | None = None,
) -> Evaluation:
    """Evaluate every contract of ``terms`` (or those named in ``only``) over ``facts``, the
    facts of ``trace``, and measure every budget against each."""
    step = progress or (lambda _msg: None)
    check_chosen(terms, only)
    allocations, runs = facts.collect()
    chosen = [c for c in terms.contracts if only is None or c.name in only]
    check_against_trace(terms, chosen, allocations)
    budgets = [(b, terms.source_of(b)) for b in terms.budgets]
    results = []
    for contract in chosen:
        step(f"evaluating {contract.name}")
        results.append(
            evaluate_contract(
                contract,
                allocations,
                runs,
                budgets,
                terms.source_of(contract),
                file=terms.file_of(contract),
            )
        )
    return Evaluation(
        tuple(results),
        terms.budgets,
        trace,
        (*terms.warnings, *trace.warnings),
        terms.sources,
    )


def evaluate_contract(
    contract: ast.Contract,
    allocations: pl.DataFrame,
    run_facts: pl.DataFrame,
    budgets: Sequence[tuple[ast.Budget, str | None]],
    source_text: str | None,
    *,
    file: str = "<input>",
) -> ContractResult:
    """One contract over collected facts; ``budgets`` pairs each budget with its source text.

    The same three steps a sharded evaluation takes (:mod:`contractlang.pipeline.shards`):
    :func:`bill_allocations` and :func:`run_money` for each shard of runs, then
    :func:`conclude` once over every run."""
    billed = bill_allocations(contract, allocations, source_text, file=file)
    unpriced = unpriced_allocations(billed.wide)
    check_priced(contract, unpriced.head(MAX_NAMED), unpriced.height, file, source_text)
    negative = negative_credits(billed.wide, billed.plan)
    warnings = negative_credit_warnings(negative, billed.plan, file)
    return conclude(
        billed,
        run_money(billed, run_facts),
        budgets,
        allocations=billed.wide.height,
        promises=promises(billed.wide, billed.settings),
        warnings=warnings,
        wide=billed.wide,
    )


@dataclass(frozen=True)
class Billed:
    """One contract applied to allocations (all of a trace's, or a shard's): steps (2)–(7a)
    of design §6, every allocation's money in ``wide``."""

    contract: ast.Contract
    settings: Settings
    caps: Caps
    plan: AllocationPlan
    wide: pl.DataFrame
    file: str
    source_text: str | None


def bill_allocations(
    contract: ast.Contract, allocations: pl.DataFrame, source_text: str | None, *, file: str
) -> Billed:
    """Steps (2)–(6) and the allocation caps (7a), collected (E405 when an amount cannot be
    kept exactly)."""
    s = read_settings(contract)
    caps = caps_by_level(contract, source_text)
    lf, plan = apply_contract(allocations.lazy(), contract, s, source_text)
    lf, allocation_caps = apply_allocation_caps(lf, caps["allocation"], s)
    plan = replace(plan, caps=allocation_caps)
    wide = collect_amounts(lf, contract, file, source_text)
    return Billed(contract, s, caps, plan, wide, file, source_text)


def run_money(billed: Billed, run_facts: pl.DataFrame) -> pl.DataFrame:
    """The run facts of ``billed``'s runs with their sums (:data:`~contractlang.evaluate.
    runs.SUMS`, E405 when one does not fit 64 bits) and settlement month."""
    sums = run_sums(billed.wide, run_facts, billed.plan, billed.settings)
    return fit_sums(sums, SUMS, billed.contract, billed.file, billed.source_text)


def conclude(
    billed: Billed,
    sums: pl.DataFrame,
    budgets: Sequence[tuple[ast.Budget, str | None]],
    *,
    allocations: int,
    promises: PromiseBreaches,
    warnings: Sequence[Diagnostic],
    wide: pl.DataFrame,
) -> ContractResult:
    """The caps above the allocation (7b–d), each run's net, the totals and the budgets, from
    every run's sums (``sums``, in ``run_id`` order) and counts over every allocation."""
    s = billed.settings
    runs, cuts = apply_caps_above(sums, billed.caps, s)
    runs = settle(runs, cuts, s)
    return ContractResult(
        contract=billed.contract,
        settings=s,
        plan=billed.plan,
        allocations=wide,
        runs=runs,
        run_cuts=cuts,
        budgets=tuple(evaluate_budget(b, runs, text) for b, text in budgets),
        totals=totals(runs, allocations),
        promises=promises,
        warnings=tuple(warnings),
        source_text=billed.source_text,
    )
