"""Budgets measured over many evaluations of the same trace: once per contract, and again for
every variant of attribution and price to pass.

A requirement that reads only the trace's per-run facts (``accepted``, ``lost_gpu_time``,
``reclaims``, …) has the same value under every contract and every variant of one, so it is
measured once; only the requirements that read a fact the terms change
(:data:`TERM_FACTS`: the money, billable and excluded GPU-time) are measured again. The
results are exactly those of :func:`~contractlang.evaluate.budget.evaluate_budget`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import polars as pl

from contractlang.evaluate.budget import evaluate_budget
from contractlang.evaluate.results import BudgetResult, RequirementResult
from contractlang.lang import ast

#: The per-run facts a contract's terms decide; every other per-run fact is the trace's own.
TERM_FACTS = frozenset(
    {
        "billable_gpu_time",
        "excluded_gpu_time",
        "gross",
        "credits",
        "cap_cuts",
        "net",
        "cost_per_accepted_run",
    }
)


def moved_by_terms(req: ast.Require) -> bool:
    """Whether a requirement reads a fact the terms decide (its value can differ between
    contracts on one trace)."""
    return any(isinstance(n, ast.Name) and n.name in TERM_FACTS for n in ast.walk(req.expr))


class BudgetMeter:
    """Every budget measured over a contract's runs, the trace-only requirements once.

    >>> from contractlang.pipeline.language import terms_from_text
    >>> terms = terms_from_text('budget "b" { require share(accepted) >= 90% '
    ...                         'require sum(net) <= 10 USD }')
    >>> meter = BudgetMeter([(b, terms.source_of(b)) for b in terms.budgets])
    >>> [moved_by_terms(r) for r in terms.budgets[0].requires]
    [False, True]
    """

    def __init__(self, budgets: Sequence[tuple[ast.Budget, str | None]]) -> None:
        self.budgets = tuple(budgets)
        self._fixed: dict[str, dict[int, RequirementResult]] | None = None

    def measure(self, runs: pl.DataFrame, *, moved_only: bool = False) -> tuple[BudgetResult, ...]:
        """Every budget over ``runs`` (a contract's settled runs). With ``moved_only``, the
        trace-only requirements are left out of the results."""
        if self._fixed is None:
            self._fixed = {b.name: self._measure_fixed(b, text, runs) for b, text in self.budgets}
        out = []
        for budget, text in self.budgets:
            moved = [i for i, r in enumerate(budget.requires) if moved_by_terms(r)]
            measured = evaluate_budget(
                replace(budget, requires=tuple(budget.requires[i] for i in moved)), runs, text
            )
            found = dict(zip(moved, measured.requirements, strict=True))
            if not moved_only:
                found.update(self._fixed[budget.name])
            reqs = tuple(found[i] for i in sorted(found))
            out.append(BudgetResult(budget.name, budget.span.line, reqs))
        return tuple(out)

    @staticmethod
    def _measure_fixed(
        budget: ast.Budget, text: str | None, runs: pl.DataFrame
    ) -> dict[int, RequirementResult]:
        fixed = [i for i, r in enumerate(budget.requires) if not moved_by_terms(r)]
        measured = evaluate_budget(
            replace(budget, requires=tuple(budget.requires[i] for i in fixed)), runs, text
        )
        return dict(zip(fixed, measured.requirements, strict=True))

    def fixed_failures(self, budget: str) -> tuple[RequirementResult, ...]:
        """The trace-only requirements of ``budget`` that are not met: no clause and no price
        can change them (empty before the first :meth:`measure`)."""
        fixed = (self._fixed or {}).get(budget, {})
        return tuple(r for _, r in sorted(fixed.items()) if not r.met)

    def moved(self, budget: str) -> tuple[int, ...]:
        """The positions of the requirements of ``budget`` that the terms move."""
        b = next(b for b, _ in self.budgets if b.name == budget)
        return tuple(i for i, r in enumerate(b.requires) if moved_by_terms(r))
