"""What :func:`contractlang.simulate.simulate` returns: per contract its evaluation on its
simulated trace and the Monte Carlo error of its figures; per simulation the workload, the
traces and every contract. Renderers read these.

Figures are exact ``Fraction`` s in base units (money in currency units), as budget measures
are; an :class:`Interval` is a bootstrap 95 % interval around one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

import polars as pl

from contractlang.diagnostics import Diagnostic, Source, Span
from contractlang.evaluate.results import ContractResult, Evaluation, RequirementResult
from contractlang.importers.availability.read import Availability
from contractlang.lang import ast
from contractlang.lang.vocabulary import COMPARE
from contractlang.simulate.provider import Promises
from contractlang.simulate.workload import Workload


@dataclass(frozen=True)
class Interval:
    """A figure and its 95 % interval (``low``/``high`` None when it cannot be bounded)."""

    value: Fraction | None
    low: Fraction | None
    high: Fraction | None

    @property
    def half_width(self) -> Fraction | None:
        """Half the interval's width: the ``±`` shown beside the value."""
        if self.low is None or self.high is None:
            return None
        return (self.high - self.low) / 2

    @property
    def holds_zero(self) -> bool:
        """For a difference: the interval reaches zero, so its sign is within the noise."""
        return self.low is not None and self.high is not None and self.low <= 0 <= self.high


@dataclass(frozen=True)
class RequirementInterval:
    """One budget requirement's measured value with its interval."""

    budget: str
    requirement: RequirementResult
    interval: Interval
    span: Span | None = None  # where the requirement is written
    file: str = "<input>"
    figure: str = ""  # what it measures: the side that aggregates, `p95(time_to_accept)`

    @property
    def needs_more_runs(self) -> bool:
        """The verdict flips inside the interval: it differs at its two ends."""
        r, i = self.requirement, self.interval
        if r.verdict == "not measurable" or i.low is None or i.high is None:
            return False
        compare = COMPARE[r.op]
        return bool(compare(i.low, r.limit)) != bool(compare(i.high, r.limit))


@dataclass(frozen=True)
class MonteCarlo:
    """The Monte Carlo error of one contract's figures: bootstrap over ``runs`` runs."""

    runs: int
    resamples: int
    mean_cost: Interval  # mean cost per accepted run
    p95_cost: Interval  # p95 cost per accepted run
    requirements: tuple[RequirementInterval, ...]

    @property
    def needs_more_runs(self) -> bool:
        return any(r.needs_more_runs for r in self.requirements)


@dataclass(frozen=True)
class Delta:
    """A contract's figures minus the baseline's, each with the 95 % interval of the
    difference from the paired bootstrap (the same resamples for both); money differences are
    None between contracts of different currencies."""

    baseline: str
    mean_cost: Interval
    p95_cost: Interval
    requirements: tuple[Interval, ...]  # one per MonteCarlo.requirements, in their order


@dataclass(frozen=True)
class Ranking:
    """How the contracts are ranked: meeting every budget first, then by the headline
    (the first budget's first requirement: the largest margin first), or without a budget by
    the p95 cost per accepted run (lowest first); ties keep the order of the terms."""

    by: str  # the headline requirement's text, or `p95(cost_per_accepted_run)`
    budget: str | None  # the headline's budget
    order: tuple[str, ...]  # contract names, best first


@dataclass(frozen=True)
class SimulatedTrace:
    """One simulated trace, shared by the contracts that make the same promises."""

    index: int  # 1, 2, … in the order the groups first appear
    promises: Promises
    contracts: tuple[str, ...]
    events: int
    gave_up: int  # runs that reached `max_allocations`
    paths: tuple[Path, ...] = ()  # where it was kept (`--trace-out`), one file per contract


@dataclass(frozen=True)
class SimulatedContract:
    result: ContractResult
    trace: SimulatedTrace
    monte_carlo: MonteCarlo
    rank: int = 1  # 1 is the best (:class:`Ranking`)
    delta: Delta | None = None  # against the baseline; None for the baseline itself

    @property
    def name(self) -> str:
        return self.result.name


@dataclass(frozen=True)
class Simulation:
    """Every contract evaluated on the trace its promises imply, with its Monte Carlo error."""

    workload: Workload
    availability: Availability | None
    traces: tuple[SimulatedTrace, ...]
    contracts: tuple[SimulatedContract, ...]
    evaluations: tuple[Evaluation, ...]  # one per trace
    budgets: tuple[ast.Budget, ...]
    warnings: tuple[Diagnostic, ...] = ()
    sources: dict[str, Source] = field(default_factory=dict, repr=False)
    baseline: str | None = None  # the contract the others are measured against
    ranking: Ranking | None = None

    def ranked(self) -> list[SimulatedContract]:
        """The contracts best first."""
        return sorted(self.contracts, key=lambda c: c.rank)

    @property
    def verdict(self) -> str:
        """``met`` (every budget met by every contract), ``not met``, or ``no budget``."""
        if not self.budgets:
            return "no budget"
        return "met" if all(c.result.budgets_met for c in self.contracts) else "not met"

    def ledger(self) -> pl.DataFrame:
        """Every contract's line items (the ``contract`` column names each)."""
        return pl.concat([c.result.ledger() for c in self.contracts], how="vertical_relaxed")

    def runs_table(self) -> pl.DataFrame:
        """Every contract's per-run table (the ``contract`` column names each)."""
        return pl.concat([c.result.runs_table() for c in self.contracts], how="vertical_relaxed")

    def contract(self, name: str) -> SimulatedContract:
        for c in self.contracts:
            if c.name == name:
                return c
        raise KeyError(name)
