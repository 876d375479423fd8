"""Several drafts: each measured against the baseline (the first, or `--baseline NAME`), with
the Monte Carlo interval of each difference from the paired bootstrap — the differences per
resample, checked against an independent computation from the per-run table — and ranked as
`compare` ranks drafts: meeting every budget first, then by the headline's margin."""

from __future__ import annotations

import json
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from support.cli import no_traceback, run

from contractlang.simulate import Simulation, simulate
from contractlang.simulate.bootstrap import resample_counts

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "simulate"
RESAMPLES = 400


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The worked example's drafts and budget, with 300 runs."""
    d = tmp_path_factory.mktemp("drafts")
    text = (EXAMPLE / "workload.toml").read_text(encoding="utf-8")
    assert "runs = 2000\n" in text
    (d / "w.toml").write_text(text.replace("runs = 2000\n", "runs = 300\n"))
    for name in ("drafts.spot", "budget.spot"):
        (d / name).write_text((EXAMPLE / name).read_text(encoding="utf-8"))
    return d


@pytest.fixture(scope="module")
def sim(files: Path) -> Simulation:
    return simulate([files / "drafts.spot", files / "budget.spot"], files / "w.toml",
                    resamples=RESAMPLES, baseline="basic")  # fmt: skip


def per_resample_means(sim: Simulation, name: str) -> np.ndarray:
    """The mean cost per accepted run on each resample, computed here from the per-run table
    and the resamples' draw counts (not by the bootstrap's own code)."""
    runs = sim.contract(name).result.runs
    cost = np.array([float(x) if x is not None else np.nan for x in runs["cost_per_accepted_run"]])
    known = ~np.isnan(cost)
    out = []
    for counts in resample_counts(runs.height, RESAMPLES, sim.workload.seed):
        c = counts[:, known]
        out.append((c @ cost[known]) / c.sum(axis=1))
    return np.concatenate(out)


def test_each_difference_has_the_interval_of_the_paired_differences(sim: Simulation) -> None:
    base = per_resample_means(sim, "basic")
    for name in ("priority", "priority-at-par"):
        d = sim.contract(name).delta
        assert d is not None
        assert d.baseline == "basic"
        # the difference itself: the two exact means (7,304.60 → 8,032.84 in the worked example)
        mine, theirs = sim.contract(name).monte_carlo.mean_cost, sim.contract("basic").monte_carlo
        assert mine.value is not None
        assert theirs.mean_cost.value is not None
        assert d.mean_cost.value == mine.value - theirs.mean_cost.value
        # its interval: the 2.5th and 97.5th percentiles (linear, as numpy) of the per-resample
        # differences
        low, high = np.percentile(per_resample_means(sim, name) - base, [2.5, 97.5])
        assert d.mean_cost.low is not None
        assert d.mean_cost.high is not None
        assert float(d.mean_cost.low) == pytest.approx(low, abs=1e-6)
        assert float(d.mean_cost.high) == pytest.approx(high, abs=1e-6)
        assert d.mean_cost.low < d.mean_cost.value < d.mean_cost.high


def test_drafts_that_differ_only_in_price_differ_by_the_price_with_a_narrow_interval(
    files: Path,
) -> None:
    """`priority` and `priority-at-par` share a trace and differ only in price (2.415 vs 2.10):
    on every resample the difference is 15 % of priority-at-par's mean (up to the cent rounding
    of each line), so the paired interval is 0.15 × its interval — far narrower than the two
    intervals combined, which would treat the same runs as independent noise."""
    sim = simulate([files / "drafts.spot"], files / "w.toml", resamples=RESAMPLES,
                   baseline="priority-at-par")  # fmt: skip
    d = sim.contract("priority").delta
    base = sim.contract("priority-at-par").monte_carlo.mean_cost
    mine = sim.contract("priority").monte_carlo.mean_cost
    assert d is not None
    assert d.mean_cost.value is not None
    assert base.value is not None
    assert d.mean_cost.half_width is not None
    assert base.half_width is not None
    assert mine.half_width is not None
    # 2.415 / 2.10 = 1.15: the difference is 0.15 × the base, within a cent a line (about 11
    # charge lines a run, so 0.11 USD on a mean)
    assert abs(d.mean_cost.value - Fraction(15, 100) * base.value) <= Fraction(11, 100)
    paired = float(d.mean_cost.half_width)
    assert paired == pytest.approx(0.15 * float(base.half_width), rel=0.05)
    combined = float(mine.half_width**2 + base.half_width**2) ** 0.5
    assert paired < combined / 5


def test_the_baseline_is_the_first_draft_unless_named(files: Path) -> None:
    result = run("simulate", files / "drafts.spot", "--workload", files / "w.toml",
                 "--resamples", 100, "--format", "json")  # fmt: skip
    no_traceback(result)
    doc = json.loads(result.stdout)
    assert doc["baseline"] == "priority"
    deltas = {c["name"]: c["delta"] for c in doc["contracts"]}
    assert deltas["priority"] is None
    assert {deltas["basic"]["baseline"], deltas["priority-at-par"]["baseline"]} == {"priority"}


def test_a_baseline_that_is_not_simulated_is_e502(files: Path) -> None:
    result = run("simulate", files / "drafts.spot", "--workload", files / "w.toml",
                 "--baseline", "basik")  # fmt: skip
    no_traceback(result)
    assert result.exit_code == 2
    assert "error[E502]: the terms have no contract `basik`" in result.stderr
    assert "did you mean `basic`?" in result.stderr
    result = run(
        "simulate",
        files / "drafts.spot",
        "--workload",
        files / "w.toml",
        "--contract",
        "priority",
        "--contract",
        "priority-at-par",
        "--baseline",
        "basic",
    )
    no_traceback(result)
    assert result.exit_code == 2
    assert (
        "error[E502]: `--baseline basic` is not among the contracts simulated (`priority`, "
        "`priority-at-par`)" in result.stderr
    )


def test_the_json_gives_each_difference_with_its_interval(files: Path, sim: Simulation) -> None:
    result = run("simulate", files / "drafts.spot", files / "budget.spot", "--workload",
                 files / "w.toml", "--resamples", RESAMPLES, "--baseline", "basic",
                 "--format", "json")  # fmt: skip
    no_traceback(result)
    doc = json.loads(result.stdout)
    assert doc["ranking"] == {
        "by": "p95(cost_per_accepted_run) <= 7700 USD",
        "budget": "pretraining",
        "order": list(sim.ranking.order) if sim.ranking else [],
    }
    by_name = {c["name"]: c for c in doc["contracts"]}
    for name, c in by_name.items():
        assert c["rank"] == sim.contract(name).rank
        if name == "basic":
            assert c["delta"] is None
            continue
        base = by_name["basic"]
        d = c["delta"]
        for key in ("mean", "p95"):
            fig = d["cost_per_accepted_run"][key]
            mine = Decimal(c["monte_carlo"]["cost_per_accepted_run"][key]["value"])
            theirs = Decimal(base["monte_carlo"]["cost_per_accepted_run"][key]["value"])
            # each value is rounded to the cent, so their difference is within a cent of it
            assert abs(Decimal(fig["value"]) - (mine - theirs)) <= Decimal("0.01")
            low, high = map(Decimal, fig["ci95"])
            assert low <= Decimal(fig["value"]) <= high
            assert fig["within_noise"] == (low <= 0 <= high)
        assert [r["require"] for r in d["requirements"]] == [
            r["require"] for r in c["monte_carlo"]["requirements"]
        ]


def test_a_difference_within_the_noise_says_so(tmp_path: Path, files: Path) -> None:
    # two copies of one draft: the same trace and the same bill, so every difference is 0
    twin = (
        'contract "basic-twin" {\n  currency USD\n  rate 2.10 USD per gpu_hour\n'
        "  promise reclaim notice 30 seconds\n}\n"
    )
    (tmp_path / "t.spot").write_text((files / "drafts.spot").read_text() + twin)
    sim = simulate([tmp_path / "t.spot"], files / "w.toml", resamples=100, baseline="basic")
    d = sim.contract("basic-twin").delta
    assert d is not None
    assert (d.mean_cost.value, d.mean_cost.low, d.mean_cost.high) == (0, 0, 0)
    assert d.mean_cost.holds_zero


def test_the_ranking_meets_budgets_first_then_by_the_headline_margin(sim: Simulation) -> None:
    assert sim.ranking is not None
    assert sim.ranking.by == "p95(cost_per_accepted_run) <= 7700 USD"

    def key(name: str) -> tuple[bool, Fraction]:
        r = sim.contract(name).result
        margin = r.budgets[0].requirements[0].margin
        assert margin is not None
        return (not r.budgets_met, -margin)

    names = [c.name for c in sim.contracts]
    assert list(sim.ranking.order) == sorted(names, key=key)
    assert [c.rank for c in sim.ranked()] == [1, 2, 3]
    assert sim.ranking.order[0] == "priority-at-par"  # the only one to meet the budget


def test_without_a_budget_the_ranking_is_by_the_p95_cost(files: Path) -> None:
    sim = simulate([files / "drafts.spot"], files / "w.toml", resamples=100)
    assert sim.ranking is not None
    assert (sim.ranking.by, sim.ranking.budget) == ("p95(cost_per_accepted_run)", None)

    def p95(name: str) -> Fraction:
        value = sim.contract(name).result.totals.cost_per_accepted_run["p95"]
        assert value is not None
        return value

    assert list(sim.ranking.order) == sorted(sim.ranking.order, key=p95)


def test_a_budget_met_ranks_first_even_with_a_worse_headline(tmp_path: Path, files: Path) -> None:
    # a loose cost limit every draft meets, and lost GPU-time at most 4 %, which only the
    # 2-minute notice keeps: both priority drafts meet the budget, basic does not
    (tmp_path / "b.spot").write_text(
        'budget "b" {\n  require p95(cost_per_accepted_run) <= 9000 USD\n'
        "  require mean(lost_gpu_time / metered_gpu_time) <= 4%\n}\n"
    )
    sim = simulate([files / "drafts.spot", tmp_path / "b.spot"], files / "w.toml", resamples=100)
    assert sim.ranking is not None
    # basic has the largest cost margin after priority-at-par, yet misses the budget: last
    assert list(sim.ranking.order) == ["priority-at-par", "priority", "basic"]
    basic = sim.contract("basic").result.budgets[0].requirements[0].margin
    dear = sim.contract("priority").result.budgets[0].requirements[0].margin
    assert basic is not None
    assert dear is not None
    assert basic > dear
