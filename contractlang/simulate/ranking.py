"""The ranking of simulated drafts, as ``compare`` ranks drafts on a real trace: those that
meet every budget first, then by the headline — the first budget's first requirement — its
largest margin first (a lower value under ``<=``, a higher one under ``>=``); without a budget,
by the p95 cost per accepted run, lowest first. A figure that is none comes last; ties keep
the order of the terms.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

from contractlang.evaluate.results import ContractResult
from contractlang.lang import ast
from contractlang.simulate.results import Ranking

NO_BUDGET_HEADLINE = "p95(cost_per_accepted_run)"


def rank(results: Sequence[ContractResult], budgets: Sequence[ast.Budget]) -> Ranking:
    """The contracts of ``results`` best first (see the module's docstring)."""
    headline = next((b for b in budgets if b.requires), None)

    def key(item: tuple[int, ContractResult]) -> tuple[bool, bool, Fraction, int]:
        i, c = item
        if headline is None:
            worth = c.totals.cost_per_accepted_run.get("p95")
            return (False, worth is None, worth if worth is not None else Fraction(0), i)
        b = next(x for x in c.budgets if x.name == headline.name)
        margin = b.requirements[0].margin
        return (
            not c.budgets_met,
            margin is None,
            -margin if margin is not None else Fraction(0),
            i,
        )

    order = tuple(c.name for _, c in sorted(enumerate(results), key=key))
    if headline is None or not results:
        return Ranking(NO_BUDGET_HEADLINE, None, order)
    first = next(x for x in results[0].budgets if x.name == headline.name).requirements[0]
    return Ranking(first.text, headline.name, order)
