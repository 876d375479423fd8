"""A contract evaluated again from one stage on — without one of its clauses, or with the price
of every rate multiplied — for `compare`'s attribution and price to pass (design §8).

The facts are never derived again, and each variant restarts at the stage of design §6 that
its change affects, reusing what the stages before it computed:

- without a whole-allocation or duration exclusion: from step (2), on the facts;
- without the billing increment or minimum (back to 1 second, no minimum): from step (4), on
  the exclusions' columns;
- every rate's price × m: from step (5), the charge;
- without a credit: from the credit pool of step (6), the other credits' lines as they were;
- without an allocation cap: from step (7a), on the credit lines;
- without a run, month or contract cap, or the billing period (back to midnight UTC): from the
  run sums.

Example::

    >>> from contractlang import generate_trace, load_trace, derive_facts, terms_from_text
    >>> terms = terms_from_text('''contract "c" { currency USD rate 2 USD per gpu_hour
    ...   billing increment 1 hour }''')
    >>> allocations, runs = derive_facts(load_trace(generate_trace(3, seed=1))).collect()
    >>> run = ContractRun.of(terms.contracts[0], "c.spot", terms.source_of(terms.contracts[0]))
    >>> staged = stage_contract(run, allocations, runs)
    >>> [r.label for r in removable_clauses(staged.result.contract, staged.result.source_text)]
    ['billing increment 1 hour']
    >>> base = staged.result.totals.gross_minor
    >>> without(staged, removable_clauses(staged.result.contract, None)[0].clause
    ...         ).totals.gross_minor < base
    True
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, replace
from datetime import time
from fractions import Fraction
from typing import Literal

import polars as pl

from contractlang.errors import InternalError
from contractlang.evaluate.billing import (
    apply_billable,
    apply_contract,
    apply_credits,
    apply_rates,
    credit_pool,
    price_places,
)
from contractlang.evaluate.caps import caps_by_level
from contractlang.evaluate.contract_run import ContractRun
from contractlang.evaluate.engine import allocation_amounts, contract_run_sums, settle_contract
from contractlang.evaluate.plan import AllocationPlan, term_label
from contractlang.evaluate.results import ContractResult
from contractlang.evaluate.trace_checks import amounts_kept, exact_on_overflow
from contractlang.lang import ast
from contractlang.lang.numbers import MICROS_PER_SECOND

RemovableKind = Literal["exclusion", "credit", "cap", "billing"]


@dataclass(frozen=True)
class Removable:
    """A clause attribution can take out: its kind, its ledger label (its name, or its source
    text when it has none) and its first source line."""

    clause: ast.Clause
    kind: RemovableKind
    label: str
    line: int


def removable_clauses(contract: ast.Contract, source_text: str | None) -> list[Removable]:
    """Every exclusion, credit and cap, and the billing increment, minimum and period, in file
    order. Rates, promises and the currency settings are not removable."""
    out = []
    for c in contract.clauses:
        kind: RemovableKind | None
        match c:
            case ast.ExcludeAllocation() | ast.ExcludeDuration():
                kind = "exclusion"
            case ast.Credit():
                kind = "credit"
            case ast.Cap():
                kind = "cap"
            case ast.BillingIncrement() | ast.BillingMinimum() | ast.BillingPeriod():
                kind = "billing"
            case _:
                kind = None
        if kind is not None:
            out.append(Removable(c, kind, term_label(c, source_text), c.span.line))
    return out


@dataclass(frozen=True)
class Staged:
    """A contract's evaluation (without budgets) and what a variant restarts from: the facts,
    the run sums before the caps above the allocation, the contract as run."""

    result: ContractResult
    facts: pl.DataFrame
    run_facts: pl.DataFrame
    sums: pl.DataFrame
    run: ContractRun

    @functools.cached_property
    def price_places(self) -> int:
        """The decimal places the contract's picked prices need (for the price search)."""
        return price_places(self.result.allocations.lazy(), self.run)


@exact_on_overflow
def stage_contract(run: ContractRun, allocations: pl.DataFrame, run_facts: pl.DataFrame) -> Staged:
    """``run``'s contract evaluated over collected facts as
    :func:`~contractlang.evaluate.engine.evaluate_contract` does (budgets are measured by the
    caller), keeping what its variants reuse."""
    with amounts_kept(run):
        lf, plan = apply_contract(allocations.lazy(), run)
        wide, plan, warnings = allocation_amounts(lf, plan, run)
    sums = contract_run_sums(wide, run_facts, plan, run)
    result = settle_contract(run, wide, plan, sums, (), warnings)
    return Staged(result, allocations, run_facts, sums, run)


@exact_on_overflow
def without(staged: Staged, clause: ast.Clause) -> ContractResult:
    """The contract evaluated without ``clause`` (one of its :func:`removable_clauses`),
    restarting at the stage the clause acts in."""
    r = staged.result
    contract = replace(r.contract, clauses=tuple(c for c in r.contract.clauses if c is not clause))
    if len(contract.clauses) == len(r.contract.clauses):
        raise InternalError("the clause to remove is not the contract's")
    run = replace(staged.run, contract=contract)
    s = run.settings
    match clause:
        case ast.ExcludeAllocation() | ast.ExcludeDuration():
            lf, plan = apply_contract(staged.facts.lazy(), run)
            return _from_allocations(staged, run, lf, plan)
        case ast.BillingIncrement():
            return _rebill(
                staged, replace(run, settings=replace(s, increment_us=MICROS_PER_SECOND))
            )
        case ast.BillingMinimum():
            return _rebill(staged, replace(run, settings=replace(s, minimum_us=0)))
        case ast.BillingPeriod():
            midnight_utc = replace(s, period_end=time(0), period_zone="UTC")
            return _without_period(staged, replace(run, settings=midnight_utc))
        case ast.Credit():
            kept = tuple(t for t in r.plan.credits if t.clause is not clause)
            lf = r.allocations.lazy().with_columns(credit_pool_minor=credit_pool(kept))
            plan = replace(r.plan, credits=kept, caps=())
            return _from_allocations(staged, run, lf, plan, priced=True)
        case ast.Cap():
            run = replace(run, caps=caps_by_level(contract, r.source_text))
            if clause.cap_level == "allocation":
                lf = r.allocations.lazy().with_columns(
                    credit_pool_minor=credit_pool(r.plan.credits)
                )
                plan = replace(r.plan, caps=())
                return _from_allocations(staged, run, lf, plan, priced=True)
            return settle_contract(
                run, r.allocations, r.plan, staged.sums, (), r.warnings, r.promises
            )
    raise InternalError(f"a {type(clause).__name__} clause is not removable")


@exact_on_overflow
def at_multiplier(staged: Staged, multiplier: Fraction) -> ContractResult:
    """The contract with the price of every rate multiplied by ``multiplier`` (a terminating
    decimal), restarting at the charge; credits' and caps' money constants are unchanged."""
    r = staged.result
    run = replace(staged.run, multiplier=multiplier, price_places=staged.price_places)
    lf, rates = apply_rates(r.allocations.lazy(), run)
    lf, credits = apply_credits(lf, run)
    plan = replace(r.plan, rates=rates, credits=credits, caps=())
    return _from_allocations(staged, run, lf, plan, priced=True)


def _rebill(staged: Staged, run: ContractRun) -> ContractResult:
    """From step (4): billable time under new settings, then rates and credits."""
    r = staged.result
    lf = apply_billable(r.allocations.lazy(), run.settings)
    lf, rates = apply_rates(lf, run)
    lf, credits = apply_credits(lf, run)
    plan = replace(r.plan, rates=rates, credits=credits, caps=())
    return _from_allocations(staged, run, lf, plan)


def _without_period(staged: Staged, run: ContractRun) -> ContractResult:
    """From the run sums: each run settles in its month by the default period."""
    r = staged.result
    sums = staged.sums.with_columns(settle_month=run.settings.billing_month(pl.col("last_end")))
    return settle_contract(run, r.allocations, r.plan, sums, (), r.warnings, r.promises)


def _from_allocations(
    staged: Staged,
    run: ContractRun,
    lf: pl.LazyFrame,
    plan: AllocationPlan,
    *,
    priced: bool = False,
) -> ContractResult:
    """From the allocation caps on: amounts collected, run sums, caps above, settlement
    (``priced``: rates and billable time as in the staged evaluation, already checked)."""
    wide, plan, warnings = allocation_amounts(lf, plan, run, priced=priced)
    sums = contract_run_sums(wide, staged.run_facts, plan, run)
    return settle_contract(run, wide, plan, sums, (), warnings, staged.result.promises)
