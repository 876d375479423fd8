"""The price to pass: the multipliers m in [0, 10] on the price of every `rate` clause at which
a draft meets its budget, money constants inside credits and caps unchanged (docs/compare.md,
"What it takes to pass").

Pass or fail need not be monotone in m — a fixed-amount credit or cap weighs less as prices
rise — so the verdict is first checked on a grid (m = 0, 0.5, …, 10: 20 steps; m = 1 is the
draft as written and is not evaluated again); each change of verdict between two grid points
is then bisected until the two sides are within 0.1 % of each other, and the passing side is
the interval's end — a multiplier at which the draft was evaluated exactly. A passing interval
narrower than the grid's step can be missed; every evaluation is kept (``probes``).

The multipliers of a round (the whole grid, or one midpoint) are priced together
(:func:`~contractlang.compare.repricing.prices_at`): the allocations no credit can reach in one
pass of exact integers, only the others again from the charge — or, where that cannot be exact,
each multiplier whole from the charge (:func:`~contractlang.compare.variants.at_multiplier`).
Each measures only the requirements the terms move (:class:`~.budgets.BudgetMeter`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from fractions import Fraction

from contractlang.compare.budgets import BudgetMeter
from contractlang.compare.model import ContractFigures, PriceScope, PriceToPass, Probe
from contractlang.compare.repricing import prices_at, repricing
from contractlang.compare.variants import at_multiplier, priceable
from contractlang.evaluate.stages import Staged

#: The grid checked first: 0, 0.5, …, 10.
GRID = tuple(Fraction(k, 2) for k in range(21))
#: Bisection stops when the two sides are this close, relative to the larger.
RELATIVE = Fraction(1, 1000)
#: … or this close in absolute terms (a boundary at m = 0).
ABSOLUTE = Fraction(1, 10**6)
#: Places of a bisection midpoint (a terminating decimal, so the price stays exact).
PLACES = 6


def midpoint(a: Fraction, b: Fraction) -> Fraction:
    """Halfway between ``a`` and ``b``, to :data:`PLACES` decimal places.

    >>> midpoint(Fraction(1), Fraction(3, 2))
    Fraction(5, 4)
    """
    unit = 10**PLACES
    return Fraction(round((a + b) / 2 * unit), unit)


def close_enough(a: Fraction, b: Fraction) -> bool:
    """Whether a bisection between ``a`` and ``b`` is done (within 0.1 %).

    >>> close_enough(Fraction("1.2345"), Fraction("1.2350"))
    True
    >>> close_enough(Fraction(1), Fraction("1.01"))
    False
    """
    return abs(a - b) <= max(RELATIVE * max(a, b), ABSOLUTE)


def price_to_pass(
    staged: Staged,
    meter: BudgetMeter,
    budget: str,
    base: ContractFigures,
    scope: PriceScope,
    progress: Callable[[str], None] | None = None,
) -> PriceToPass:
    """Search the multipliers at which ``staged``'s contract meets ``budget`` (its
    requirements the terms move, when ``scope`` is ``"terms"``)."""
    step = progress or (lambda _msg: None)
    considered = None if scope == "budget" else set(meter.moved(budget))
    probes: dict[Fraction, Probe] = {}
    staged = priceable(staged)  # the places every multiplier reads, found once
    split = repricing(staged)

    def record(m: Fraction, figures: ContractFigures) -> Probe:
        found = figures.budget(budget)
        assert found is not None
        failing = tuple(
            req.text
            for i, req in enumerate(found.requirements)
            if (considered is None or i in considered) and not req.met
        )
        probes[m] = Probe(m, not failing, failing, figures)
        return probes[m]

    def evaluate_at(ms: list[Fraction]) -> None:
        """Evaluate the multipliers not yet probed, together where they can be."""
        todo = [m for m in ms if m not in probes and m != 1]
        if 1 in ms and 1 not in probes:
            record(Fraction(1), base)
        if not todo:
            return
        step(f"pricing {staged.run.contract.name} at {', '.join(f'{float(m):g}×' for m in todo)}")
        batch = prices_at(split, todo)
        if batch is not None:
            for m, (runs, t) in zip(todo, batch, strict=True):
                record(m, ContractFigures.of_totals(t, meter.measure(runs)))
            return
        for m in todo:
            r = at_multiplier(staged, m)
            record(m, ContractFigures.of(r, meter.measure(r.runs)))

    def probe(m: Fraction) -> Probe:
        evaluate_at([m])
        return probes[m]

    evaluate_at(list(GRID))
    grid = [probes[m] for m in GRID]
    intervals = _intervals(grid, probe)
    largest = max((hi for _, hi in intervals), default=None)
    never: tuple[str, ...] = ()
    if not intervals:
        common = set(grid[0].failing).intersection(*(p.failing for p in grid[1:]))
        never = tuple(t for t in grid[0].failing if t in common)
    monotone = not intervals or (len(intervals) == 1 and intervals[0][0] == 0)
    return PriceToPass(
        scope=scope,
        monotone=monotone,
        intervals=tuple(intervals),
        largest=largest,
        at_largest=probes[largest].figures if largest is not None else None,
        never=never,
        probes=tuple(probes[m] for m in sorted(probes)),
    )


def _intervals(
    grid: Sequence[Probe], probe: Callable[[Fraction], Probe]
) -> list[tuple[Fraction, Fraction]]:
    """The passing intervals: each run of passing grid points, its ends bisected."""
    out = []
    k = 0
    while k < len(grid):
        if not grid[k].met:
            k += 1
            continue
        first = k
        while k + 1 < len(grid) and grid[k + 1].met:
            k += 1
        lo = grid[first].multiplier
        if first > 0:
            lo = _boundary(lo, grid[first - 1].multiplier, probe)
        hi = grid[k].multiplier
        if k + 1 < len(grid):
            hi = _boundary(hi, grid[k + 1].multiplier, probe)
        out.append((lo, hi))
        k += 1
    return out


def _boundary(passing: Fraction, failing: Fraction, probe: Callable[[Fraction], Probe]) -> Fraction:
    """Bisect between a passing and a failing multiplier; the last passing one."""
    while not close_enough(passing, failing):
        mid = midpoint(passing, failing)
        if mid in (passing, failing):
            break
        if probe(mid).met:
            passing = mid
        else:
            failing = mid
    return passing
