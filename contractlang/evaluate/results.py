"""What evaluation returns: per contract its totals, promise breaches, budget verdicts and the
frames behind them; per evaluation every contract and the trace.

Money is in integer minor units (cents) and time in microseconds; budget measures are exact
``Fraction``s. Renderers read these and nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction
from typing import Literal

import polars as pl

from contractlang.diagnostics import Diagnostic, Source
from contractlang.errors import InternalError
from contractlang.evaluate.ledger import build_ledger, runs_table
from contractlang.evaluate.plan import AllocationPlan, CapCut
from contractlang.evaluate.settings import Settings, round_up
from contractlang.lang import ast
from contractlang.lang.numbers import scaled
from contractlang.trace.model import Trace

Verdict = Literal["met", "not met", "not measurable"]


@dataclass(frozen=True)
class DisplayUnit:
    """How a requirement's value and limit are shown: in the unit its limit is written in."""

    label: str
    factor: Fraction  # base units per displayed unit
    kind: Literal["money", "percent", "plain", "quantity"]


@dataclass(frozen=True)
class RequirementResult:
    text: str
    line: int
    op: str
    value: Fraction | None
    limit: Fraction
    unit: DisplayUnit
    verdict: Verdict

    @property
    def margin(self) -> Fraction | None:
        """How far the value is inside (positive) or outside (negative) its limit."""
        if self.value is None:
            return None
        if self.op in ("<", "<="):
            return self.limit - self.value
        if self.op in (">", ">="):
            return self.value - self.limit
        return -abs(self.value - self.limit) if self.op == "==" else abs(self.value - self.limit)

    @property
    def met(self) -> bool:
        return self.verdict == "met"


@dataclass(frozen=True)
class BudgetResult:
    name: str
    line: int
    requirements: tuple[RequirementResult, ...]

    @property
    def met(self) -> bool:
        return all(r.met for r in self.requirements)

    @property
    def headline(self) -> RequirementResult | None:
        return self.requirements[0] if self.requirements else None


@dataclass(frozen=True)
class Totals:
    """A contract's totals over the whole trace. Money in minor units; time in µs."""

    runs: int
    accepted_runs: int
    allocations: int
    metered_gpu_us: int
    excluded_gpu_us: int
    billable_gpu_us: int
    lost_gpu_us: int
    lost_steps: int
    gross_minor: int
    credits_minor: int  # negative
    cap_cuts_minor: int  # positive
    net_minor: int
    cost_per_accepted_run: dict[str, Fraction | None]  # p50, p95, max (currency units)


@dataclass(frozen=True)
class PromiseBreaches:
    """How often the trace breached each promise of a contract."""

    notice_us: int | None
    reclaims: int
    notice_breaches: int
    shortest_notice_us: int | None
    restart_us: int | None
    replacements: int  # reclaimed or failed allocations followed by another
    restart_breaches: int
    never_replaced: int
    longest_wait_us: int | None


@dataclass(frozen=True)
class ContractResult:
    contract: ast.Contract
    settings: Settings
    plan: AllocationPlan
    allocations: pl.DataFrame  # facts + one column per term, per allocation
    runs: pl.DataFrame  # run facts + money, per run
    run_cuts: tuple[CapCut, ...]
    budgets: tuple[BudgetResult, ...]
    totals: Totals
    promises: PromiseBreaches
    warnings: tuple[Diagnostic, ...]
    source_text: str | None = field(default=None, repr=False)
    #: whether ``allocations`` holds every allocation (a sharded evaluation keeps only the
    #: columns the ledger reads, and none when no ledger is wanted)
    allocations_kept: bool = True

    @property
    def name(self) -> str:
        return self.contract.name

    @property
    def budgets_met(self) -> bool:
        return all(b.met for b in self.budgets)

    def money(self, minor: int) -> Decimal:
        """Minor units as an exact Decimal at the contract's precision."""
        return scaled(minor, self.settings.precision)

    def run_allocations(self, run_id: str) -> pl.DataFrame:
        """One run's allocations in attempt order, each with ``rounded_us``: what its
        exclusions left, rounded up to whole billing increments before the minimum (step 4),
        which `explain` shows between the runtime and the billable time."""
        inc = self.settings.increment_us
        return (
            self.allocations.filter(pl.col("run_id") == run_id)
            .sort("attempt", "alloc_id")
            .with_columns(rounded_us=round_up(pl.col("remaining_us"), inc))
        )

    def ledger(self) -> pl.DataFrame:
        """Every line of the bill (:func:`contractlang.evaluate.ledger.build_ledger`)."""
        if not self.allocations_kept:
            raise InternalError("the ledger was asked of an evaluation that kept no allocations")
        return build_ledger(self)

    def runs_table(self) -> pl.DataFrame:
        """The per-run table (:func:`contractlang.evaluate.ledger.runs_table`)."""
        return runs_table(self)


@dataclass(frozen=True)
class Evaluation:
    """The result of :func:`evaluate`: one :class:`ContractResult` per contract."""

    contracts: tuple[ContractResult, ...]
    budgets: tuple[ast.Budget, ...]
    trace: Trace
    warnings: tuple[Diagnostic, ...] = ()  # of the terms and of the trace
    sources: dict[str, Source] = field(default_factory=dict, repr=False)

    @property
    def verdict(self) -> str:
        """``met`` (every budget met by every contract), ``not met``, or ``no budget``."""
        if not self.budgets:
            return "no budget"
        return "met" if all(c.budgets_met for c in self.contracts) else "not met"

    def ledger(self) -> pl.DataFrame:
        return pl.concat([c.ledger() for c in self.contracts], how="vertical_relaxed")

    def runs_table(self) -> pl.DataFrame:
        return pl.concat([c.runs_table() for c in self.contracts], how="vertical_relaxed")

    def contract(self, name: str) -> ContractResult:
        for c in self.contracts:
            if c.name == name:
                return c
        raise KeyError(name)
