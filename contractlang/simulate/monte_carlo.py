"""The Monte Carlo error of every contract's figures (:mod:`~contractlang.simulate.bootstrap`):
mean and p95 cost per accepted run, and each budget requirement's value, with a warning
(``W601``) wherever a verdict flips inside its interval; and each contract's differences from
the baseline, with the intervals of the paired bootstrap.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from contractlang.diagnostics import Diagnostic, warning
from contractlang.errors import InternalError
from contractlang.evaluate.results import ContractResult
from contractlang.lang import ast
from contractlang.lang.show import show
from contractlang.lang.terms import Terms
from contractlang.simulate.bootstrap import Figure, run_bootstrap
from contractlang.simulate.results import Delta, Interval, MonteCarlo, RequirementInterval

COST = ast.Name("cost_per_accepted_run")


def value_side(req: ast.Require) -> ast.Expr:
    """The side of a ``require`` that aggregates (the other is its constant limit), as
    :func:`contractlang.evaluate.budget.evaluate_budget` reads it."""
    if not isinstance(req.expr, ast.Compare):
        raise InternalError("a checked `require` is not a comparison")
    cmp = req.expr
    return cmp.left if ast.has_aggregate(cmp.left) else cmp.right


@dataclass(frozen=True)
class _Plan:
    """One contract's figures, bootstrapped together with every other contract's."""

    result: ContractResult
    mean: Figure
    p95: Figure
    requirements: list[tuple[ast.Budget, ast.Require, Figure]]


def monte_carlo(
    results: Sequence[ContractResult],
    terms: Terms,
    resamples: int,
    seed: int,
    baseline: int = 0,
) -> list[tuple[MonteCarlo, Delta | None]]:
    """Per contract, its :class:`MonteCarlo` and its :class:`Delta` against
    ``results[baseline]`` (None for the baseline itself), all on the same resamples."""
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
        plans.append(_Plan(c, mean, p95, reqs))
    figures = [f for p in plans for f in (p.mean, p.p95, *(r[2] for r in p.requirements))]
    run_bootstrap(figures, len(run_ids), resamples, seed)
    errors = [_errors(p, terms, len(run_ids), resamples) for p in plans]
    base = plans[baseline]
    return [
        (mc, None if i == baseline else _delta(p, base, mc, errors[baseline]))
        for i, (p, mc) in enumerate(zip(plans, errors, strict=True))
    ]


def _errors(plan: _Plan, terms: Terms, runs: int, resamples: int) -> MonteCarlo:
    """One contract's figures with their intervals."""
    c, mean, p95 = plan.result, plan.mean, plan.p95
    budgets = {b.name: b for b in c.budgets}
    found = []
    for budget, req, fig in plan.requirements:
        result = budgets[budget.name].requirements[budget.requires.index(req)]
        found.append(
            RequirementInterval(
                budget.name,
                result,
                _interval(result.value, fig),
                span=req.span,
                file=terms.file_of(budget),
                figure=show(value_side(req)),
            )
        )
    return MonteCarlo(
        runs=runs,
        resamples=resamples,
        mean_cost=_interval(_fraction(mean.point_value()), mean),
        p95_cost=_interval(c.totals.cost_per_accepted_run["p95"], p95),
        requirements=tuple(found),
    )


def _delta(plan: _Plan, base: _Plan, mc: MonteCarlo, base_mc: MonteCarlo) -> Delta:
    """``plan``'s figures minus ``base``'s, each with its paired interval."""
    same_money = plan.result.settings.currency == base.result.settings.currency
    none = Interval(None, None, None)
    mean = _difference(mc.mean_cost, base_mc.mean_cost, plan.mean, base.mean)
    p95 = _difference(mc.p95_cost, base_mc.p95_cost, plan.p95, base.p95)
    return Delta(
        baseline=base.result.name,
        mean_cost=mean if same_money else none,
        p95_cost=p95 if same_money else none,
        requirements=tuple(
            _difference(r.interval, b.interval, f, g)
            for r, b, (_, _, f), (_, _, g) in zip(
                mc.requirements,
                base_mc.requirements,
                plan.requirements,
                base.requirements,
                strict=True,
            )
        ),
    )


def _difference(value: Interval, base: Interval, fig: Figure, base_fig: Figure) -> Interval:
    if value.value is None or base.value is None:
        return Interval(None, None, None)
    bounds = fig.paired_interval(base_fig)
    low, high = bounds if bounds is not None else (None, None)
    return Interval(value.value - base.value, low, high)


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
