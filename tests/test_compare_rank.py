"""`compare`'s ranking keeps tied drafts in the order given (docs/compare.md, Ranking: budgets
met first, then the headline's margin, largest first; not measurable last; ties keep the order
given; without a budget, by net billed, lowest first) — in the Python result and in
`compare --format json`, with the drafts given in one order and in the reverse one.

Three drafts tie exactly: two at the same rate under different names, one at twice the rate
with a credit of half its charge (the same net by another route); a fourth differs. The names
are in neither given order alphabetical, so a sort by name breaks a tie in both orders; a
reversed tie-breaker or a sort that does not keep the order given breaks it in one at least.
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

from contractlang.compare import compare
from contractlang.pipeline.language import terms_from_text

# The run of 100 GPU-hours (support/ties.py) under each draft:
CONTRACTS = {
    # 2 USD × 100 GPU-hours = 200.00
    "zeta": 'contract "zeta" {\n  currency USD\n  rate 2 USD per gpu_hour\n}\n',
    # the same rate under another name: 200.00
    "alpha": 'contract "alpha" {\n  currency USD\n  rate 2 USD per gpu_hour\n}\n',
    # 1 USD × 100 GPU-hours = 100.00: the one that differs (lower net, larger margin)
    "cheap": 'contract "cheap" {\n  currency USD\n  rate 1 USD per gpu_hour\n}\n',
    # gross 4 USD × 100 = 400.00, credit 50% of it = −200.00: net 200.00, by another route
    "mid": (
        'contract "mid" {\n  currency USD\n  rate 4 USD per gpu_hour\n'
        '  credit "half" 50% of charge when end_reason == released\n}\n'
    ),
}
BUDGETS = {
    # every draft meets it: cheap's margin 250 − 100 = 150, the tied ones' 250 − 200 = 50
    "all meet": 'budget "b" {\n  require sum(net) <= 250 USD\n}\n',
    # only cheap meets it (150 − 100 = 50); the tied ones fail by 150 − 200 = −50
    "tied fail": 'budget "b" {\n  require sum(net) <= 150 USD\n}\n',
}


def expected_ranks(order: tuple[str, ...], trace_decides_nothing: bool = False) -> dict[str, int]:
    """cheap first (the lowest net, the largest margin, the only one to meet `tied fail`),
    then the three tied drafts in the order given; with a headline no draft can measure,
    every draft ties and all keep the order given."""
    return ranks(expected_order(order, trace_decides_nothing))


def spot(order: tuple[str, ...], budget: str | None) -> str:
    return tied_terms(CONTRACTS, order, budget)


def test_the_tied_drafts_are_tied() -> None:
    """The premise: the three tied drafts bill exactly 200.00 each, cheap 100.00."""
    cmp = compare(terms_from_text(spot(GIVEN, None)), trace_frame(HUNDRED_GPU_HOURS))
    nets = {c.name: c.result.totals.net_minor for c in cmp.contracts}
    assert nets == {"zeta": 20000, "alpha": 20000, "cheap": 10000, "mid": 20000}
    mid = cmp.contract("mid").result.totals
    assert (mid.gross_minor, mid.credits_minor) == (40000, -20000)


@pytest.mark.parametrize("order", [GIVEN, REVERSED], ids=["given", "reversed"])
@pytest.mark.parametrize("budget", [None, *BUDGETS], ids=["no budget", *BUDGETS])
def test_tied_drafts_keep_the_order_given(order: tuple[str, ...], budget: str | None) -> None:
    text = spot(order, BUDGETS[budget] if budget else None)
    cmp = compare(terms_from_text(text), trace_frame(HUNDRED_GPU_HOURS))
    assert [c.name for c in cmp.contracts] == list(order)
    want = expected_ranks(order)
    assert {c.name: c.rank for c in cmp.contracts} == want
    assert [c.name for c in cmp.ranked] == sorted(order, key=want.__getitem__)


@pytest.mark.parametrize("order", [GIVEN, REVERSED], ids=["given", "reversed"])
def test_drafts_whose_headline_is_not_measurable_keep_the_order_given(
    order: tuple[str, ...],
) -> None:
    # no run is accepted: p95(cost_per_accepted_run) is none under every draft, so every
    # draft fails the budget with no margin, and all four tie, cheap too
    budget = 'budget "b" {\n  require p95(cost_per_accepted_run) <= 250 USD\n}\n'
    cmp = compare(terms_from_text(spot(order, budget)), trace_frame(NEVER_ACCEPTED))
    assert {c.result.budgets[0].requirements[0].verdict for c in cmp.contracts} == {
        "not measurable"
    }
    assert {c.name: c.rank for c in cmp.contracts} == expected_ranks(order, True)


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Each draft in its own file, each budget in its own, and the trace as Parquet."""
    d = tmp_path_factory.mktemp("tied")
    write_drafts(d, CONTRACTS, BUDGETS)
    trace_frame(HUNDRED_GPU_HOURS).write_parquet(d / "trace.parquet")
    return d


@pytest.mark.parametrize("order", [GIVEN, REVERSED], ids=["given", "reversed"])
@pytest.mark.parametrize(
    ("budget", "exit_code"),
    # exit 0: some draft (cheap) meets every budget, or no budget is given
    [(None, 0), ("budget0.spot", 0), ("budget1.spot", 0)],
    ids=["no budget", *BUDGETS],
)
def test_the_json_ranks_tied_drafts_in_the_order_given_on_the_command_line(
    files: Path, order: tuple[str, ...], budget: str | None, exit_code: int
) -> None:
    drafts = [files / f"{name}.spot" for name in order]
    flags = ["--budget", files / budget] if budget else []
    result = run("compare", *drafts, files / "trace.parquet", *flags, "--format", "json")
    no_traceback(result)
    assert result.exit_code == exit_code, result.output
    doc = json.loads(result.stdout)
    assert [c["name"] for c in doc["contracts"]] == list(order)
    assert {c["name"]: c["rank"] for c in doc["contracts"]} == expected_ranks(order)
