"""Ranking drafts and their deltas against the baseline.

Drafts are ranked by the ranking budget: those that meet it first, then by the margin of its
headline (first) requirement, largest first; drafts whose headline is not measurable come
last; ties keep the order given. Without a budget, by net billed, lowest first.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

from contractlang.compare.model import Delta
from contractlang.evaluate.results import BudgetResult, ContractResult


def ranking_budget(r: ContractResult, name: str) -> BudgetResult:
    return next(b for b in r.budgets if b.name == name)


def rank_key(r: ContractResult, ranking: str | None) -> tuple[int, int, Fraction]:
    if ranking is None:
        return (0, 0, Fraction(r.totals.net_minor, r.settings.minor))
    b = ranking_budget(r, ranking)
    margin = b.headline.margin if b.headline is not None else None
    return (0 if b.met else 1, 0 if margin is not None else 1, -(margin or Fraction(0)))


def ranks(results: Sequence[ContractResult], ranking: str | None) -> list[int]:
    """Each contract's rank (1 = best), in the order of ``results``."""
    order = sorted(range(len(results)), key=lambda i: (rank_key(results[i], ranking), i))
    out = [0] * len(results)
    for position, i in enumerate(order, start=1):
        out[i] = position
    return out


def delta(r: ContractResult, base: ContractResult) -> Delta:
    """``r`` − ``base``."""
    t, b = r.totals, base.totals
    usage = {
        "metered": t.metered_gpu_us - b.metered_gpu_us,
        "excluded": t.excluded_gpu_us - b.excluded_gpu_us,
        "billable": t.billable_gpu_us - b.billable_gpu_us,
        "lost": t.lost_gpu_us - b.lost_gpu_us,
    }
    same = r.settings.currency == base.settings.currency
    money = None
    dist = None
    if same:

        def cash(minor: int, other: int) -> Fraction:
            return Fraction(minor, r.settings.minor) - Fraction(other, base.settings.minor)

        money = {
            "gross": cash(t.gross_minor, b.gross_minor),
            "credits": cash(t.credits_minor, b.credits_minor),
            "cap_cuts": cash(t.cap_cuts_minor, b.cap_cuts_minor),
            "net": cash(t.net_minor, b.net_minor),
        }
        theirs = b.cost_per_accepted_run
        dist = {k: _minus(v, theirs.get(k)) for k, v in t.cost_per_accepted_run.items()}
    reqs = {}
    for budget in r.budgets:
        other = ranking_budget(base, budget.name)
        reqs[budget.name] = tuple(
            _minus(x.value, y.value)
            for x, y in zip(budget.requirements, other.requirements, strict=True)
        )
    return Delta(usage, t.lost_steps - b.lost_steps, money, dist, reqs)


def _minus(a: Fraction | None, b: Fraction | None) -> Fraction | None:
    return None if a is None or b is None else a - b
