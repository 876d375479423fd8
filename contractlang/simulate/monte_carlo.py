"""The Monte Carlo error of every contract's figures (:mod:`~contractlang.simulate.bootstrap`):
mean and p95 cost per accepted run, and each budget requirement's value, with a warning
(``W601``) wherever a verdict flips inside its interval.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

from contractlang.diagnostics import Diagnostic, warning
from contractlang.errors import InternalError
from contractlang.evaluate.results import ContractResult
from contractlang.lang import ast
from contractlang.lang.terms import Terms
from contractlang.simulate.bootstrap import Figure, run_bootstrap
from contractlang.simulate.results import Interval, MonteCarlo, RequirementInterval

COST = ast.Name("cost_per_accepted_run")


def value_side(req: ast.Require) -> ast.Expr:
    """The side of a ``require`` that aggregates (the other is its constant limit), as
    :func:`contractlang.evaluate.budget.evaluate_budget` reads it."""
    if not isinstance(req.expr, ast.Compare):
        raise InternalError("a checked `require` is not a comparison")
    cmp = req.expr
    return cmp.left if ast.has_aggregate(cmp.left) else cmp.right


def monte_carlo(
    results: Sequence[ContractResult], terms: Terms, resamples: int, seed: int
) -> list[MonteCarlo]:
    """One :class:`MonteCarlo` per contract, all on the same resamples of the runs."""
    if not results:
        return []
    run_ids = results[0].runs["run_id"]
    plans = []
    for c in results:
        if not c.runs["run_id"].equals(run_ids):
            raise InternalError("simulated contracts do not have the same runs")
        mean = Figure(ast.Call("mean", (COST,)), c.runs)
        p95 = Figure(ast.Call("p95", (COST,)), c.runs)
        reqs = [
            (budget, req, Figure(value_side(req), c.runs))
            for budget in terms.budgets
            for req in budget.requires
        ]
        plans.append((c, mean, p95, reqs))
    figures = [f for _, m, p, rs in plans for f in (m, p, *(r[2] for r in rs))]
    run_bootstrap(figures, len(run_ids), resamples, seed)
    out = []
    for c, mean, p95, reqs in plans:
        budgets = {b.name: b for b in c.budgets}
        found = []
        for budget, req, fig in reqs:
            result = budgets[budget.name].requirements[budget.requires.index(req)]
            found.append(
                RequirementInterval(
                    budget.name,
                    result,
                    _interval(result.value, fig),
                    span=req.span,
                    file=terms.file_of(budget),
                )
            )
        out.append(
            MonteCarlo(
                runs=len(run_ids),
                resamples=resamples,
                mean_cost=_interval(_fraction(mean.point_value()), mean),
                p95_cost=_interval(c.totals.cost_per_accepted_run["p95"], p95),
                requirements=tuple(found),
            )
        )
    return out


def _fraction(v: object) -> Fraction | None:
    return v if isinstance(v, Fraction) else None


def _interval(value: Fraction | None, fig: Figure) -> Interval:
    bounds = fig.interval()
    low, high = bounds if bounds is not None else (None, None)
    return Interval(value, low, high)


def flip_warnings(contract: str, mc: MonteCarlo) -> list[Diagnostic]:
    """``W601`` for each requirement whose verdict flips inside its interval."""
    out = []
    for r in mc.requirements:
        if not r.needs_more_runs or r.span is None:
            continue
        req = r.requirement
        out.append(
            warning(
                "W601",
                f"contract `{contract}`: `{req.text}` is {req.verdict} on {mc.runs:,} runs, but "
                "the limit lies inside its 95% interval: needs more runs",
                r.span,
                file=r.file,
                help="raise `runs` in the workload: the interval narrows about as 1/√runs",
            )
        )
    return out
