"""The driver of `compare`: terms and one trace → the facts, derived once → every contract
evaluated, ranked and set against the baseline → with attribution, every removable clause of
every contract taken out in turn and the price to pass searched."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime, timedelta

from contractlang.compare.attribution import (
    attribute,
    attribute_run,
    headline_change,
    ranked,
    what_it_takes,
)
from contractlang.compare.budgets import BudgetMeter
from contractlang.compare.model import ComparedContract, Comparison, ContractFigures, RunAttribution
from contractlang.compare.rank import delta, ranks
from contractlang.diagnostics import NO_SPAN, did_you_mean, error
from contractlang.errors import ContractlangError
from contractlang.evaluate.contract_run import ContractRun
from contractlang.evaluate.engine import stage_contract
from contractlang.evaluate.results import ContractResult, Evaluation
from contractlang.evaluate.stages import Staged
from contractlang.evaluate.trace_checks import check_against_trace
from contractlang.lang import ast
from contractlang.lang.show import source_text
from contractlang.lang.terms import Terms
from contractlang.pipeline.chosen import check_chosen
from contractlang.pipeline.evaluation import TermsLike, TraceLike, load_inputs
from contractlang.trace.digest import with_digest
from contractlang.trace.load import DEFAULT_CLOCK_SKEW

Progress = Callable[[str], None]


def compare(
    terms: TermsLike,
    trace: TraceLike,
    *,
    ranking: str | None = None,
    baseline: str | None = None,
    attribute_clauses: bool = False,
    open_at: datetime | None = None,
    clock_skew: timedelta = DEFAULT_CLOCK_SKEW,
    quarantine: bool = False,
    progress: Progress | None = None,
    digest: bool = False,
) -> Comparison:
    """Every contract of ``terms`` over one derivation of the facts of ``trace``, ranked by
    the budget ``ranking`` (default: the first budget), with deltas against ``baseline``
    (default: the first contract); with ``attribute_clauses``, each removable clause's effect
    and what it takes to pass; with ``digest``, the trace's digest taken
    (:mod:`~contractlang.trace.digest`, for the JSON document).

    Raises :class:`~contractlang.errors.ContractlangError` on bad terms, a bad trace, or a
    baseline or budget the terms do not define (exit code 2).

    >>> from contractlang import generate_trace, terms_from_text
    >>> terms = terms_from_text('''contract "a" { currency USD rate 2 USD per gpu_hour }
    ... contract "b" { currency USD rate 3 USD per gpu_hour }''')
    >>> c = compare(terms, generate_trace(3, seed=1))
    >>> [(x.name, x.rank) for x in c.contracts], c.baseline
    ([('a', 1), ('b', 2)], 'a')
    """
    step = progress or (lambda _msg: None)

    def checks(t: Terms) -> None:
        check_chosen(t, [baseline] if baseline is not None else None)
        check_ranking(t, ranking)

    t, tr, facts = load_inputs(
        terms, trace, open_at=open_at, clock_skew=clock_skew, quarantine=quarantine,
        progress=step, check=checks,
    )  # fmt: skip
    if digest:
        step("taking the trace's digest")
        tr = with_digest(tr)
    allocations, run_facts = facts.collect()
    check_against_trace(t, t.contracts, allocations)
    meter = BudgetMeter([(b, t.source_of(b)) for b in t.budgets])
    staged: list[Staged] = []
    results: list[ContractResult] = []
    for contract in t.contracts:
        step(f"evaluating {contract.name}")
        run = ContractRun.of(contract, t.file_of(contract), t.source_of(contract))
        s = stage_contract(run, allocations, run_facts)
        staged.append(s)
        result = s.result()
        results.append(replace(result, budgets=meter.measure(result.runs)))
    evaluation = Evaluation(tuple(results), t.budgets, tr, (*t.warnings, *tr.warnings), t.sources)
    rank_by = ranking if ranking is not None else (t.budgets[0].name if t.budgets else None)
    order = ranks(results, rank_by)
    base_name = baseline if baseline is not None else results[0].name
    base_result = evaluation.contract(base_name)
    compared = []
    for s, r, rank in zip(staged, results, order, strict=True):
        d = delta(r, base_result)
        if not attribute_clauses:
            compared.append(ComparedContract(r, rank, d))
            continue
        mine = ContractFigures.of(r, r.budgets)
        attribution = tuple(
            replace(a, headline_change=headline_change(a, mine, rank_by))
            for a in attribute(s, meter, step)
        )
        to_pass = None
        if rank_by is not None:
            to_pass = what_it_takes(s, meter, rank_by, mine, attribution, step)
        by_effect = tuple(ranked(attribution, mine, rank_by))
        compared.append(ComparedContract(r, rank, d, attribution, to_pass, by_effect))
    return Comparison(
        evaluation,
        tuple(compared),
        base_name,
        rank_by,
        attribute_clauses,
        headline_measure(t, rank_by),
        {b.name: meter.moved(b.name) for b in t.budgets},
    )


def headline_measure(terms: Terms, ranking: str | None) -> str | None:
    """The measured side of the ranking budget's first requirement, as written
    (``p95(cost_per_accepted_run)``)."""
    budget = next((b for b in terms.budgets if b.name == ranking), None)
    if budget is None or not budget.requires:
        return None
    cmp = budget.requires[0].expr
    if not isinstance(cmp, ast.Compare):
        return None
    side = cmp.left if ast.has_aggregate(cmp.left) else cmp.right
    return source_text(side.span, terms.source_of(budget))


def check_ranking(terms: Terms, ranking: str | None) -> None:
    """The ranking budget, when one is named, is one of the terms' budgets (E502)."""
    names = [b.name for b in terms.budgets]
    if ranking is None or ranking in names:
        return
    guess = did_you_mean(ranking, names)
    listing = ", ".join(f"`{n}`" for n in names) or "none"
    raise ContractlangError(
        [
            error(
                "E502",
                f"the terms have no budget `{ranking}` to rank the drafts by",
                NO_SPAN,
                file="contractlang",
                help=f"did you mean `{guess}`?" if guess else f"the budgets are: {listing}",
            )
        ],
        terms.sources,
    )


def from_evaluation(
    evaluation: Evaluation, notes: tuple[str, ...] = (), baseline: str | None = None
) -> Comparison:
    """An evaluation seen as a comparison without attribution (for `evaluate --report`): the
    contracts ranked by the first budget, deltas against ``baseline`` (the first contract
    unless named). ``notes`` say where the figures come from when the contracts were not
    evaluated on one trace."""
    meter = BudgetMeter([(b, None) for b in evaluation.budgets])
    rank_by = evaluation.budgets[0].name if evaluation.budgets else None
    order = ranks(list(evaluation.contracts), rank_by)
    base_name = baseline or evaluation.contracts[0].name
    base = evaluation.contract(base_name)
    return Comparison(
        evaluation,
        tuple(
            ComparedContract(r, k, delta(r, base))
            for r, k in zip(evaluation.contracts, order, strict=True)
        ),
        base_name,
        rank_by,
        False,
        None,
        {b.name: meter.moved(b.name) for b in evaluation.budgets},
        notes,
    )


def attribute_for_run(
    terms: TermsLike,
    trace: TraceLike,
    run_id: str,
    *,
    contracts: Sequence[str] | None = None,
    open_at: datetime | None = None,
    clock_skew: timedelta = DEFAULT_CLOCK_SKEW,
    progress: Progress | None = None,
) -> tuple[Evaluation, dict[str, tuple[RunAttribution, ...]]]:
    """For `explain --attribute`: every contract (or those in ``contracts``) evaluated over
    one derivation of the facts, and each removable clause's effect on the run ``run_id``."""
    step = progress or (lambda _msg: None)
    t, tr, facts = load_inputs(
        terms, trace, open_at=open_at, clock_skew=clock_skew, progress=step,
        check=lambda t: check_chosen(t, contracts),
    )  # fmt: skip
    allocations, run_facts = facts.collect()
    chosen = [c for c in t.contracts if contracts is None or c.name in contracts]
    check_against_trace(t, chosen, allocations)
    meter = BudgetMeter([(b, t.source_of(b)) for b in t.budgets])
    results, found = [], {}
    known = set(run_facts["run_id"].to_list())
    for contract in chosen:
        step(f"attributing {contract.name}")
        run = ContractRun.of(contract, t.file_of(contract), t.source_of(contract))
        s = stage_contract(run, allocations, run_facts)
        result = s.result()
        results.append(replace(result, budgets=meter.measure(result.runs)))
        found[contract.name] = attribute_run(s, run_id) if run_id in known else ()
    evaluation = Evaluation(tuple(results), t.budgets, tr, (*t.warnings, *tr.warnings), t.sources)
    return evaluation, found
