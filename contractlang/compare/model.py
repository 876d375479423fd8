"""What `compare` returns: every contract's evaluation over one derivation of the facts, its
rank and its deltas against the baseline, and with attribution each removable clause's effect
and what it would take for the draft to pass."""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Literal

from contractlang.compare.variants import Removable
from contractlang.evaluate.results import (
    BudgetResult,
    ContractResult,
    Evaluation,
    RequirementResult,
    Totals,
)


@dataclass(frozen=True)
class ContractFigures:
    """The figures of one evaluation of a contract (as written, without a clause, or at a
    price multiplier). Money in minor units; ``credits_minor`` is after caps (credit lines +
    cap lines, ≤ 0), so gross + credits = net."""

    gross_minor: int
    credits_minor: int
    cap_cuts_minor: int
    net_minor: int
    p95: Fraction | None  # p95 cost per accepted run, currency units
    budgets: tuple[BudgetResult, ...]

    @classmethod
    def of(cls, r: ContractResult, budgets: tuple[BudgetResult, ...]) -> ContractFigures:
        return cls.of_totals(r.totals, budgets)

    @classmethod
    def of_totals(cls, t: Totals, budgets: tuple[BudgetResult, ...]) -> ContractFigures:
        return cls(
            t.gross_minor,
            t.credits_minor + t.cap_cuts_minor,
            t.cap_cuts_minor,
            t.net_minor,
            t.cost_per_accepted_run["p95"],
            budgets,
        )

    def budget(self, name: str) -> BudgetResult | None:
        return next((b for b in self.budgets if b.name == name), None)

    def met(self, name: str) -> bool:
        b = self.budget(name)
        return b is not None and b.met


@dataclass(frozen=True)
class Attribution:
    """One removable clause: the contract evaluated without it (``None`` with ``error`` when
    the contract cannot be evaluated without it, e.g. an allocation no rate prices)."""

    clause: Removable
    without: ContractFigures | None
    error: str | None = None
    #: how much the clause moves the ranking budget's headline value: with − without (None
    #: without a ranking budget, or where either is not measurable)
    headline_change: Fraction | None = None


@dataclass(frozen=True)
class RunAttribution:
    """One removable clause's effect on one run: the run's net without it (``None`` with
    ``error`` when the contract cannot be evaluated without it)."""

    clause: Removable
    net_minor: int | None
    error: str | None = None


@dataclass(frozen=True)
class Probe:
    """One evaluation at a price multiplier: whether the requirements searched were met, and
    which were not."""

    multiplier: Fraction
    met: bool
    failing: tuple[str, ...]
    figures: ContractFigures


PriceScope = Literal["budget", "terms"]


@dataclass(frozen=True)
class PriceToPass:
    """The multipliers m in [0, 10] on every rate's price at which a draft meets the
    requirements searched (``scope``: the whole budget, or only the requirements the terms
    move when one the trace alone decides fails). ``intervals`` are the passing ranges, their
    ends found by bisection to 0.1 %; ``largest`` is the largest passing m, evaluated exactly
    (``at_largest``); ``never`` the requirements failing at every multiplier tried when none
    passes."""

    scope: PriceScope
    monotone: bool
    intervals: tuple[tuple[Fraction, Fraction], ...]
    largest: Fraction | None
    at_largest: ContractFigures | None
    never: tuple[str, ...]
    probes: tuple[Probe, ...]

    @property
    def headroom(self) -> Fraction | None:
        """The end of the passing interval holding m = 1 (the draft as written), if any."""
        return next((hi for lo, hi in self.intervals if lo <= 1 <= hi), None)


@dataclass(frozen=True)
class ToPass:
    """What it takes for one draft to meet ``budget``: the single clauses whose removal makes
    it pass, the price multiplier, and the failing requirements no term can change."""

    budget: str
    met: bool
    fixed_failures: tuple[RequirementResult, ...]
    clauses: tuple[Removable, ...]
    price: PriceToPass | None


@dataclass(frozen=True)
class Delta:
    """A contract's figures minus the baseline's: GPU-time in GPU-microseconds, money in
    currency units (``None`` when the currencies differ), budget measures in their base units
    (``None`` where either is not measurable)."""

    usage_us: dict[str, int]
    lost_steps: int
    money: dict[str, Fraction] | None
    cost_per_accepted_run: dict[str, Fraction | None] | None
    requirements: dict[str, tuple[Fraction | None, ...]]


@dataclass(frozen=True)
class ComparedContract:
    """One contract of a comparison: its rank, its :class:`Delta` against the baseline, and
    with attribution each removable clause's effect — in file order, and in
    ``ranked_attribution`` by how much it moves the headline, then the net, most first (those
    that could not be evaluated without it last) — and what it takes to pass."""

    result: ContractResult
    rank: int
    delta: Delta
    attribution: tuple[Attribution, ...] | None = None
    to_pass: ToPass | None = None
    ranked_attribution: tuple[Attribution, ...] = ()

    @property
    def name(self) -> str:
        return self.result.name


@dataclass(frozen=True)
class Comparison:
    """Every contract over one trace, in the order given; ``ranking`` is the budget drafts are
    ranked by (its first requirement is the headline), ``baseline`` the contract deltas are
    taken against."""

    evaluation: Evaluation
    contracts: tuple[ComparedContract, ...]
    baseline: str
    ranking: str | None
    attributed: bool
    headline: str | None = None  # the ranking budget's headline measure, as written
    #: per budget, the positions of the requirements the terms move (the others the trace
    #: alone decides)
    moved: dict[str, tuple[int, ...]] = field(default_factory=dict)
    #: what a report says about where the figures come from, when not from one trace
    #: (`simulate`, `rehearse`: each draft on its own trace)
    notes: tuple[str, ...] = ()

    @property
    def headline_requirement(self) -> RequirementResult | None:
        """The baseline's result of the ranking budget's headline requirement."""
        if self.ranking is None:
            return None
        b = next((b for b in self.base.result.budgets if b.name == self.ranking), None)
        return b.headline if b is not None else None

    def contract(self, name: str) -> ComparedContract:
        return next(c for c in self.contracts if c.name == name)

    @property
    def base(self) -> ComparedContract:
        return self.contract(self.baseline)

    @property
    def ranked(self) -> tuple[ComparedContract, ...]:
        return tuple(sorted(self.contracts, key=lambda c: c.rank))
