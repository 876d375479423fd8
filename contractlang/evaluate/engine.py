"""Evaluate contracts over derived facts: per contract the ledger's columns, per-run figures,
caps, totals, promise breaches and budget verdicts.

Facts are derived once per trace and shared by every contract (design §10). Per contract,
every stage of :data:`~contractlang.evaluate.stages.STAGES` in the order of design §6, then
budgets (:mod:`~contractlang.evaluate.budget`). Example::

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
from dataclasses import replace

import polars as pl

from contractlang.errors import ContractlangError
from contractlang.evaluate.budget import evaluate_budget
from contractlang.evaluate.contract_run import ContractRun
from contractlang.evaluate.results import ContractResult, Evaluation
from contractlang.evaluate.stages import Stage, Staged, through
from contractlang.evaluate.trace_checks import check_against_trace
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


def run_stages(staged: Staged, first: Stage | None = None, until: Stage | None = None) -> Staged:
    """``staged`` through the stages from ``first`` up to ``until``
    (:func:`~contractlang.evaluate.stages.through`) in its run's arithmetic; where the quick
    way overflows (E405), the same stages again the careful way, whose E405 stands. Either
    way the figures are the same exact ones: the quick way fails only loudly."""
    try:
        return through(staged, first, until)
    except ContractlangError as exc:
        if staged.run.arithmetic == "careful" or all(d.code != "E405" for d in exc.diagnostics):
            raise
    careful = replace(staged, run=replace(staged.run, arithmetic="careful"))
    return through(careful, first, until)


def stage_contract(run: ContractRun, allocations: pl.DataFrame, run_facts: pl.DataFrame) -> Staged:
    """Every stage of ``run``'s contract over collected facts."""
    return run_stages(Staged(run, allocations, run_facts))


def evaluate_contract(
    run: ContractRun,
    allocations: pl.DataFrame,
    run_facts: pl.DataFrame,
    budgets: Sequence[tuple[ast.Budget, str | None]],
) -> ContractResult:
    """One contract over collected facts; ``budgets`` pairs each budget with its source
    text."""
    return contract_result(stage_contract(run, allocations, run_facts), budgets)


def contract_result(
    staged: Staged, budgets: Sequence[tuple[ast.Budget, str | None]]
) -> ContractResult:
    """The result of a contract whose stages have all run, with every budget measured."""
    result = staged.result()
    measured = tuple(evaluate_budget(b, result.runs, text) for b, text in budgets)
    return replace(result, budgets=measured)
