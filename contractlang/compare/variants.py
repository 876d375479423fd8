"""A contract evaluated again from one stage on — without one of its clauses, or with the price
of every rate multiplied — for `compare`'s attribution and price to pass (design §8).

The facts are never derived again: each variant changes the contract's
:class:`~contractlang.evaluate.contract_run.ContractRun` (or what a stage reads) and runs the
stages (:data:`~contractlang.evaluate.stages.STAGES`) again from the one its change acts in,
reusing what the stages before it computed:

- without a whole-allocation or duration exclusion: from step (2), on the facts;
- without the billing increment or minimum (back to 1 second, no minimum): from step (4), on
  the exclusions' columns;
- every rate's price × m: from step (5), the charge;
- without a credit: from the credit pool of step (6), the other credits' lines as they were;
- without an allocation cap: from the credit pool, for step (7a);
- without a run, month or contract cap: from the caps above the allocation, on the run sums;
- without the billing period (back to midnight UTC): from the month each run settles in.

Example::

    >>> from contractlang import generate_trace, load_trace, derive_facts, terms_from_text
    >>> terms = terms_from_text('''contract "c" { currency USD rate 2 USD per gpu_hour
    ...   billing increment 1 hour }''')
    >>> from contractlang.evaluate.engine import stage_contract
    >>> allocations, runs = derive_facts(load_trace(generate_trace(3, seed=1))).collect()
    >>> run = ContractRun.of(terms.contracts[0], "c.spot", terms.source_of(terms.contracts[0]))
    >>> staged = stage_contract(run, allocations, runs)
    >>> [r.label for r in removable_clauses(run.contract, run.source_text)]
    ['billing increment 1 hour']
    >>> base = staged.result().totals.gross_minor
    >>> without(staged, run.contract.clauses[-1]).totals.gross_minor < base
    True
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import time
from fractions import Fraction
from typing import Literal

import polars as pl

from contractlang.decimals import dec
from contractlang.errors import InternalError
from contractlang.evaluate.billing import pick_rate
from contractlang.evaluate.caps import caps_by_level
from contractlang.evaluate.contract_run import ContractRun
from contractlang.evaluate.engine import run_stages
from contractlang.evaluate.plan import term_label
from contractlang.evaluate.results import ContractResult
from contractlang.evaluate.stages import (
    Stage,
    Staged,
    billable_time,
    caps_above,
    charge,
    credit_pools,
    exclusions,
    need,
    settle_month,
)
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


def without(staged: Staged, clause: ast.Clause) -> ContractResult:
    """The contract evaluated without ``clause`` (one of its :func:`removable_clauses`),
    restarting at the stage the clause acts in."""
    clauses = staged.run.contract.clauses
    contract = replace(staged.run.contract, clauses=tuple(c for c in clauses if c is not clause))
    if len(contract.clauses) == len(clauses):
        raise InternalError("the clause to remove is not the contract's")
    run = replace(staged.run, contract=contract)
    s = run.settings
    # the allocations as the staged evaluation left them, for the stages to extend again
    lazy = need(staged.wide, "the allocations' amounts").lazy()
    match clause:
        case ast.ExcludeAllocation() | ast.ExcludeDuration():
            return _from(replace(staged, run=run), exclusions)
        case ast.BillingIncrement():
            run = replace(run, settings=replace(s, increment_us=MICROS_PER_SECOND))
            return _from(replace(staged, run=run, lazy=lazy), billable_time)
        case ast.BillingMinimum():
            run = replace(run, settings=replace(s, minimum_us=0))
            return _from(replace(staged, run=run, lazy=lazy), billable_time)
        case ast.BillingPeriod():
            run = replace(run, settings=replace(s, period_end=time(0), period_zone="UTC"))
            return _from(replace(staged, run=run), settle_month)
        case ast.Credit():
            kept = tuple(t for t in staged.plan.credits if t.clause is not clause)
            plan = replace(staged.plan, credits=kept)
            return _from(replace(staged, run=run, lazy=lazy, plan=plan), credit_pools)
        case ast.Cap():
            run = replace(run, caps=caps_by_level(contract, run.source_text))
            if clause.cap_level == "allocation":
                return _from(replace(staged, run=run, lazy=lazy), credit_pools)
            return _from(replace(staged, run=run), caps_above)
    raise InternalError(f"a {type(clause).__name__} clause is not removable")


def priceable(staged: Staged) -> Staged:
    """``staged`` with the decimal places its picked prices need, which every price
    multiplier reads: found once (:func:`price_places`)."""
    if staged.run.price_places is not None:
        return staged
    places = price_places(need(staged.wide, "the allocations' amounts").lazy(), staged.run)
    return replace(staged, run=replace(staged.run, price_places=places))


def price_places(lf: pl.LazyFrame, run: ContractRun) -> int:
    """The fewest decimal places at which every picked price is exact. Prices are held at the
    scale of the finest rate (a `trace.<column>` has 18 places); multiplying them by a
    multiplier of its own places needs that many more digits, so the price search first
    drops the places no price uses — losslessly."""
    lf, price = pick_rate(lf, run.clauses, run.settings, chosen=True)
    col = pl.col("_price")
    exact = [
        (col.cast(dec(k)).cast(dec(price.scale)) == col).fill_null(True).all().alias(str(k))
        for k in range(price.scale)
    ]
    if not exact:
        return price.scale
    row = lf.select(exact).collect().row(0)
    return next((k for k, ok in enumerate(row) if ok), price.scale)


def at_multiplier(staged: Staged, multiplier: Fraction) -> ContractResult:
    """The contract with the price of every rate multiplied by ``multiplier`` (a terminating
    decimal), restarting at the charge; credits' and caps' money constants are unchanged."""
    staged = priceable(staged)
    run = replace(staged.run, multiplier=multiplier)
    wide = need(staged.wide, "the allocations' amounts")
    return _from(replace(staged, run=run, lazy=wide.lazy()), charge)


def _from(staged: Staged, first: Stage) -> ContractResult:
    """``staged`` through the stages from ``first`` on, as a result (budgets are measured by
    the caller)."""
    return run_stages(staged, first=first).result()
