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
    >>> staged = stage_contract(terms.contracts[0], allocations, runs, terms.source_of(
    ...     terms.contracts[0]))
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
    ContractClauses,
    apply_billable,
    apply_contract,
    apply_credits,
    apply_rates,
    credit_pool,
    price_places,
)
from contractlang.evaluate.caps import Caps, caps_by_level
from contractlang.evaluate.engine import allocation_amounts, contract_run_sums, settle_contract
from contractlang.evaluate.plan import AllocationPlan, term_label
from contractlang.evaluate.results import ContractResult
from contractlang.evaluate.settings import Settings, read_settings
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
    the run sums before the caps above the allocation, the caps by level."""

    result: ContractResult
    facts: pl.DataFrame
    run_facts: pl.DataFrame
    sums: pl.DataFrame
    caps: Caps
    file: str

    @functools.cached_property
    def price_places(self) -> int:
        """The decimal places the contract's picked prices need (for the price search)."""
        r = self.result
        c = ContractClauses.of(r.contract, r.source_text)
        return price_places(r.allocations.lazy(), c, r.settings)


@exact_on_overflow
def stage_contract(
    contract: ast.Contract,
    allocations: pl.DataFrame,
    run_facts: pl.DataFrame,
    source_text: str | None,
    *,
    file: str = "<input>",
) -> Staged:
    """``contract`` evaluated over collected facts as
    :func:`~contractlang.evaluate.engine.evaluate_contract` does (budgets are measured by the
    caller), keeping what its variants reuse."""
    s = read_settings(contract)
    caps = caps_by_level(contract, source_text)
    with amounts_kept(contract, file, source_text):
        lf, plan = apply_contract(allocations.lazy(), contract, s, source_text)
        wide, plan, warnings = allocation_amounts(lf, plan, caps, s, contract, file, source_text)
    sums = contract_run_sums(wide, run_facts, plan, s, contract, file, source_text)
    result = settle_contract(contract, s, wide, plan, sums, caps, (), source_text, warnings)
    return Staged(result, allocations, run_facts, sums, caps, file)


@exact_on_overflow
def without(staged: Staged, clause: ast.Clause) -> ContractResult:
    """The contract evaluated without ``clause`` (one of its :func:`removable_clauses`),
    restarting at the stage the clause acts in."""
    r = staged.result
    contract = replace(r.contract, clauses=tuple(c for c in r.contract.clauses if c is not clause))
    if len(contract.clauses) == len(r.contract.clauses):
        raise InternalError("the clause to remove is not the contract's")
    s = r.settings
    match clause:
        case ast.ExcludeAllocation() | ast.ExcludeDuration():
            lf, plan = apply_contract(staged.facts.lazy(), contract, s, r.source_text)
            return _from_allocations(staged, contract, s, lf, plan, staged.caps)
        case ast.BillingIncrement():
            return _rebill(staged, contract, replace(s, increment_us=MICROS_PER_SECOND))
        case ast.BillingMinimum():
            return _rebill(staged, contract, replace(s, minimum_us=0))
        case ast.BillingPeriod():
            midnight_utc = replace(s, period_end=time(0), period_zone="UTC")
            return _without_period(staged, contract, midnight_utc)
        case ast.Credit():
            kept = tuple(t for t in r.plan.credits if t.clause is not clause)
            lf = r.allocations.lazy().with_columns(credit_pool_minor=credit_pool(kept))
            plan = replace(r.plan, credits=kept, caps=())
            return _from_allocations(staged, contract, s, lf, plan, staged.caps, priced=True)
        case ast.Cap():
            caps = caps_by_level(contract, r.source_text)
            if clause.cap_level == "allocation":
                lf = r.allocations.lazy().with_columns(
                    credit_pool_minor=credit_pool(r.plan.credits)
                )
                plan = replace(r.plan, caps=())
                return _from_allocations(staged, contract, s, lf, plan, caps, priced=True)
            return settle_contract(
                contract, s, r.allocations, r.plan, staged.sums, caps, (), r.source_text,
                r.warnings, r.promises,
            )  # fmt: skip
    raise InternalError(f"a {type(clause).__name__} clause is not removable")


@exact_on_overflow
def at_multiplier(staged: Staged, multiplier: Fraction) -> ContractResult:
    """The contract with the price of every rate multiplied by ``multiplier`` (a terminating
    decimal), restarting at the charge; credits' and caps' money constants are unchanged."""
    r = staged.result
    c = ContractClauses.of(r.contract, r.source_text)
    lf, rates = apply_rates(r.allocations.lazy(), c, r.settings, multiplier, staged.price_places)
    lf, credits = apply_credits(lf, c, r.settings)
    plan = replace(r.plan, rates=rates, credits=credits, caps=())
    return _from_allocations(staged, r.contract, r.settings, lf, plan, staged.caps, priced=True)


def _rebill(staged: Staged, contract: ast.Contract, s: Settings) -> ContractResult:
    """From step (4): billable time under new settings, then rates and credits."""
    r = staged.result
    c = ContractClauses.of(contract, r.source_text)
    lf = apply_billable(r.allocations.lazy(), s)
    lf, rates = apply_rates(lf, c, s)
    lf, credits = apply_credits(lf, c, s)
    plan = replace(r.plan, rates=rates, credits=credits, caps=())
    return _from_allocations(staged, contract, s, lf, plan, staged.caps)


def _without_period(staged: Staged, contract: ast.Contract, s: Settings) -> ContractResult:
    """From the run sums: each run settles in its month by the default period."""
    r = staged.result
    sums = staged.sums.with_columns(settle_month=s.billing_month(pl.col("last_end")))
    return settle_contract(
        contract, s, r.allocations, r.plan, sums, staged.caps, (), r.source_text, r.warnings,
        r.promises,
    )  # fmt: skip


def _from_allocations(
    staged: Staged,
    contract: ast.Contract,
    s: Settings,
    lf: pl.LazyFrame,
    plan: AllocationPlan,
    caps: Caps,
    *,
    priced: bool = False,
) -> ContractResult:
    """From the allocation caps on: amounts collected, run sums, caps above, settlement
    (``priced``: rates and billable time as in the staged evaluation, already checked)."""
    r = staged.result
    file, text = staged.file, r.source_text
    wide, plan, warnings = allocation_amounts(
        lf, plan, caps, s, contract, file, text, priced=priced
    )
    sums = contract_run_sums(wide, staged.run_facts, plan, s, contract, file, text)
    return settle_contract(contract, s, wide, plan, sums, caps, (), text, warnings, r.promises)
