"""`simulate`'s ranking keeps tied drafts in the order of the terms, as `compare`'s does
(docs/simulate.md, Several drafts: every budget met first, then the headline's margin, largest
first; without a budget, the p95 cost per accepted run, lowest first; ties keep the order of the
terms) — in :func:`~contractlang.simulate.ranking.rank` over evaluated contracts, and in a whole
simulation, its Python result and `simulate --format json`, with the drafts given in one order
and in the reverse one.

Three drafts tie exactly and a fourth differs. The names are in neither given order
alphabetical, so a sort by name breaks a tie in both orders; a reversed tie-breaker or a sort
that does not keep the order of the terms breaks it in one at least.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.cli import no_traceback, run
from support.scenario import trace_frame
from support.ties import (
    GIVEN,
    HUNDRED_GPU_HOURS,
    NEVER_ACCEPTED,
    REVERSED,
    expected_order,
    ranks,
    tied_terms,
    write_drafts,
)
from support.workloads import write_workload

from contractlang.pipeline.evaluation import evaluate
from contractlang.pipeline.language import terms_from_text
from contractlang.simulate import simulate
from contractlang.simulate.ranking import rank

# The run of 100 GPU-hours (support/ties.py) under each draft:
CONTRACTS = {
    # 2.10 USD × 100 GPU-hours = 210.00
    "zeta": 'contract "zeta" {\n  currency USD\n  rate 2.10 USD per gpu_hour\n}\n',
    # the same rate under another name: 210.00
    "alpha": 'contract "alpha" {\n  currency USD\n  rate 2.10 USD per gpu_hour\n}\n',
    # 1.05 USD × 100 GPU-hours = 105.00: the one that differs
    "cheap": 'contract "cheap" {\n  currency USD\n  rate 1.05 USD per gpu_hour\n}\n',
    # the same price by another route: a rate no spot allocation reaches before it, and the
    # default increment written out (the simulated capacity is spot, as the trace's): 210.00
    "mid": (
        'contract "mid" {\n  currency USD\n  rate 9 USD per gpu_hour when capacity == on_demand\n'
        "  rate 2.10 USD per gpu_hour\n  billing increment 1 second\n}\n"
    ),
}
BUDGETS = {
    # every draft meets it; cheap's margin is the largest (its cost is half the others')
    "all meet": 'budget "b" {\n  require p95(cost_per_accepted_run) <= 100000000 USD\n}\n',
    # no draft meets it; cheap's margin is the largest (the least negative)
    "none meets": 'budget "b" {\n  require p95(cost_per_accepted_run) <= 1 USD\n}\n',
}


def spot(order: tuple[str, ...], budget: str | None) -> str:
    return tied_terms(CONTRACTS, order, budget)


@pytest.mark.parametrize("order", [GIVEN, REVERSED], ids=["given", "reversed"])
@pytest.mark.parametrize("budget", [None, *BUDGETS], ids=["no budget", *BUDGETS])
def test_rank_keeps_tied_drafts_in_the_order_of_the_terms(
    order: tuple[str, ...], budget: str | None
) -> None:
    terms = terms_from_text(spot(order, BUDGETS[budget] if budget else None))
    results = evaluate(terms, trace_frame(HUNDRED_GPU_HOURS)).contracts
    # the premise: the tied drafts cost exactly 210.00 each, cheap 105.00
    nets = {c.name: c.totals.net_minor for c in results}
    assert nets == {"zeta": 21000, "alpha": 21000, "cheap": 10500, "mid": 21000}
    assert list(rank(results, terms.budgets).order) == expected_order(order)


@pytest.mark.parametrize("order", [GIVEN, REVERSED], ids=["given", "reversed"])
@pytest.mark.parametrize("budget", [None, "all meet"], ids=["no budget", "budget"])
def test_drafts_with_no_figure_to_rank_by_keep_the_order_of_the_terms(
    order: tuple[str, ...], budget: str | None
) -> None:
    # no run is accepted: the p95 cost per accepted run (the figure without a budget, and the
    # budget's headline) is none under every draft, so all four tie, cheap too
    terms = terms_from_text(spot(order, BUDGETS[budget] if budget else None))
    results = evaluate(terms, trace_frame(NEVER_ACCEPTED)).contracts
    assert {c.totals.cost_per_accepted_run["p95"] for c in results} == {None}
    assert list(rank(results, terms.budgets).order) == expected_order(order, all_tie=True)


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Each draft in its own file, the budgets, and a small workload."""
    d = tmp_path_factory.mktemp("tied")
    write_drafts(d, CONTRACTS, BUDGETS)
    write_workload(d, runs=40)
    return d


@pytest.mark.parametrize("order", [GIVEN, REVERSED], ids=["given", "reversed"])
def test_a_simulation_ranks_tied_drafts_in_the_order_of_the_terms(
    files: Path, order: tuple[str, ...]
) -> None:
    # the four drafts make no promise, so they share one simulated trace: the tied ones cost
    # the same on every run, and cheap about half as much (each line rounded to the cent)
    drafts = [files / f"{name}.spot" for name in order]
    sim = simulate([*drafts, files / "budget0.spot"], files / "w.toml", resamples=100)
    assert len(sim.traces) == 1
    costs = {c.name: c.result.totals.net_minor for c in sim.contracts}
    assert costs["zeta"] == costs["alpha"] == costs["mid"] > costs["cheap"] > 0
    assert sim.ranking is not None
    assert list(sim.ranking.order) == expected_order(order)
    assert [c.name for c in sim.ranked()] == expected_order(order)


@pytest.mark.parametrize("order", [GIVEN, REVERSED], ids=["given", "reversed"])
@pytest.mark.parametrize(
    ("budget", "exit_code"),
    # exit 0 when some draft meets every budget (or there is none), 1 when none does
    [(None, 0), ("budget0.spot", 0), ("budget1.spot", 1)],
    ids=["no budget", *BUDGETS],
)
def test_the_json_ranks_tied_drafts_in_the_order_given_on_the_command_line(
    files: Path, order: tuple[str, ...], budget: str | None, exit_code: int
) -> None:
    drafts = [files / f"{name}.spot" for name in order]
    budgets = [files / budget] if budget else []
    result = run(
        "simulate", *drafts, *budgets, "--workload", files / "w.toml",
        "--resamples", "100", "--format", "json",
    )  # fmt: skip
    no_traceback(result)
    assert result.exit_code == exit_code, result.output
    doc = json.loads(result.stdout)
    want = expected_order(order)
    assert doc["ranking"]["order"] == want
    assert {c["name"]: c["rank"] for c in doc["contracts"]} == ranks(want)
