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
from dataclasses import replace

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
    check_against_trace,
    check_chosen,
    check_priced,
    collect_amounts,
    fit_sums,
    negative_credit_warnings,
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
    """One contract over collected facts; ``budgets`` pairs each budget with its source text."""
    s = read_settings(contract)
    caps = caps_by_level(contract, source_text)
    lf, plan = apply_contract(allocations.lazy(), contract, s, source_text)
    wide, plan, warnings = allocation_amounts(lf, plan, caps, s, contract, file, source_text)
    sums = contract_run_sums(wide, run_facts, plan, s, contract, file, source_text)
    return settle_contract(contract, s, wide, plan, sums, caps, budgets, source_text, warnings)


def allocation_amounts(
    lf: pl.LazyFrame,
    plan: AllocationPlan,
    caps: Caps,
    s: Settings,
    contract: ast.Contract,
    file: str,
    source_text: str | None,
    *,
    priced: bool = False,
) -> tuple[pl.DataFrame, AllocationPlan, list[Diagnostic]]:
    """Step (7a) on the allocations after step (6): the allocation caps, then every amount
    collected and checked (E405, E401, W401). ``priced``: the rates and the billable time are
    those of an evaluation already checked (a variant that changed neither), so E401 and W401
    cannot change and are not looked for again."""
    lf, allocation_caps = apply_allocation_caps(lf, caps["allocation"], s)
    plan = replace(plan, caps=allocation_caps)
    wide = collect_amounts(lf, contract, file, source_text)
    if priced:
        return wide, plan, []
    check_priced(contract, wide, file, source_text)
    return wide, plan, negative_credit_warnings(wide, plan, file)


def contract_run_sums(
    wide: pl.DataFrame,
    run_facts: pl.DataFrame,
    plan: AllocationPlan,
    s: Settings,
    contract: ast.Contract,
    file: str,
    source_text: str | None,
) -> pl.DataFrame:
    """The run sums of a contract's allocations (before the caps above the allocation),
    checked to fit 64 bits (E405)."""
    return fit_sums(run_sums(wide, run_facts, plan, s), SUMS, contract, file, source_text)


def settle_contract(
    contract: ast.Contract,
    s: Settings,
    wide: pl.DataFrame,
    plan: AllocationPlan,
    sums: pl.DataFrame,
    caps: Caps,
    budgets: Sequence[tuple[ast.Budget, str | None]],
    source_text: str | None,
    warnings: Sequence[Diagnostic] = (),
    breaches: PromiseBreaches | None = None,
) -> ContractResult:
    """Steps (7b–d) on the run sums, then net, totals, promise breaches (``breaches`` when
    already known) and budgets."""
    runs, cuts = apply_caps_above(sums, caps, s)
    runs = settle(runs, cuts, s)
    return ContractResult(
        contract=contract,
        settings=s,
        plan=plan,
        allocations=wide,
        runs=runs,
        run_cuts=cuts,
        budgets=tuple(evaluate_budget(b, runs, text) for b, text in budgets),
        totals=totals(runs, wide),
        promises=breaches if breaches is not None else promises(wide, s),
        warnings=tuple(warnings),
        source_text=source_text,
    )
