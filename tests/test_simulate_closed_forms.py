"""The simulation against closed forms, within the Monte Carlo error:

- Poisson reclaims at rate λ, no notice, checkpoints every τ, no save or restore time and no
  invalid checkpoints: the mean replayed time per reclaim is 1/λ − τ/(e^{λτ} − 1), exactly when
  the work is a multiple of τ (T mod τ is independent of ⌊T/τ⌋ for an exponential T);
- the mean number of reclaims per run is λ × the run's time on capacity (with a notice: the
  mean number of notices is λ × the time held with no notice pending);
- with an availability trace, the number of reclaims is the number of 1→0 transitions inside
  the stretches where the job held capacity — exactly, counted here from the raw data.

Every figure is measured by `evaluate` on the simulated trace (its facts), not by the
simulator.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from support.workloads import write_workload

from contractlang.importers.availability.read import read_availability
from contractlang.simulate import simulate
from contractlang.simulate.reclaims import Replay
from contractlang.simulate.streams import Streams

LAMBDA = 1.0  # reclaims per allocation-hour
TAU_S = 60 * 60  # 60 steps of 60 s between checkpoints: λτ = 1, where the closed form is far
# from the τ/2 a replay would average if checkpoints were not every τ of allocation time
JOB = {
    "runs": 400,
    "gpus": 8,
    "price": None,
    "total_steps": 600,  # 10 h of work: 10 × τ, a multiple of τ
    "step_seconds": 60,
    "checkpoint_every_steps": 60,
    "save_seconds": 0,
    "restore_seconds": 0,
    "checkpoint_on_notice": False,
    "invalid_checkpoint_chance": 0,
    "accept_chance": 1,
    "max_attempts": 1,
}


def contract(notice: str | None = None) -> str:
    promise = f"\n  promise reclaim notice {notice}" if notice else ""
    return f'contract "c" {{\n  currency USD\n  rate 2 USD per gpu_hour{promise}\n}}\n'


def within(sample: np.ndarray, expected: float, sigmas: float = 4.0) -> None:
    """The sample's mean is ``expected`` within ``sigmas`` standard errors."""
    se = sample.std(ddof=1) / math.sqrt(len(sample))
    assert abs(sample.mean() - expected) <= sigmas * se, (sample.mean(), expected, se)


@pytest.fixture(scope="module")
def poisson(tmp_path_factory: pytest.TempPathFactory) -> pl.DataFrame:
    d = tmp_path_factory.mktemp("poisson")
    (d / "c.spot").write_text(contract())
    w = write_workload(d, rate_per_hour=LAMBDA, distribution="fixed", minutes=5, **JOB)
    return simulate([d / "c.spot"], w, resamples=100).contracts[0].result.allocations


def test_mean_replayed_time_per_reclaim(poisson: pl.DataFrame) -> None:
    lost = poisson.filter(pl.col("end_reason") == "reclaimed")
    replayed = lost["replayed_time"].dt.total_microseconds().to_numpy() / 3.6e9  # hours
    assert len(replayed) > 5000  # about 17 reclaims in each of 400 runs
    # 1/λ − τ/(e^{λτ} − 1) = 1 − 1/(e − 1) = 1 − 1/1.7182818 = 1 − 0.5819767 = 0.4180233 h
    tau = TAU_S / 3600
    expected = 1 / LAMBDA - tau / math.expm1(LAMBDA * tau)
    assert expected == pytest.approx(0.4180233, abs=1e-7)
    within(replayed, expected)
    # and no replay is ever longer than one checkpoint interval
    assert replayed.max() < tau


def test_mean_reclaims_per_run_is_rate_times_time_on_capacity(poisson: pl.DataFrame) -> None:
    per_run = poisson.group_by("run_id").agg(
        reclaims=(pl.col("end_reason") == "reclaimed").sum(),
        hours=pl.col("runtime").dt.total_microseconds().sum() / 3.6e9,
    )
    # E[reclaims − λ × hours] = 0, run by run (a martingale stopped at the run's end)
    diff = per_run["reclaims"].to_numpy() - LAMBDA * per_run["hours"].to_numpy()
    within(diff, 0.0)
    assert per_run["reclaims"].mean() > 10  # about λ × 27 h: 10 h of work, much replayed


def test_with_a_notice_decisions_are_poisson_in_the_time_without_one(tmp_path: Path) -> None:
    (tmp_path / "c.spot").write_text(contract("10 minutes"))
    w = write_workload(tmp_path, rate_per_hour=LAMBDA, distribution="fixed", minutes=5,
                       **{**JOB, "runs": 300})  # fmt: skip
    al = simulate([tmp_path / "c.spot"], w, resamples=100).contracts[0].result.allocations
    pending = (pl.col("end") - pl.col("notice_at")).dt.total_microseconds().fill_null(0)
    per_run = al.group_by("run_id").agg(
        notices=pl.col("notice_at").is_not_null().sum(),
        at_risk=(pl.col("runtime").dt.total_microseconds() - pending).sum() / 3.6e9,
    )
    diff = per_run["notices"].to_numpy() - LAMBDA * per_run["at_risk"].to_numpy()
    within(diff, 0.0)
    # every reclaim came with exactly the promised notice
    lost = al.filter(pl.col("end_reason") == "reclaimed")
    assert lost["notice_lead"].dt.total_seconds().unique().to_list() == [600]


# --------------------------------------------------------------------------- availability


def markov_ticks(n: int, stay_up: float, stay_down: float, seed: int, high: int = 1) -> list[int]:
    """A 0/1 (or 0/``high``) availability pattern with long stretches."""
    rng = np.random.default_rng(seed)
    out, up = [], True
    for _ in range(n):
        out.append(int(rng.integers(1, high + 1)) if up else 0)
        up = rng.random() < (stay_up if up else 1 - stay_down)
    return out


def down_transitions(ticks: list[int], nodes: int, gap_us: int, lo: int, hi: int) -> list[int]:
    """Times t in (lo, hi] (trace time, any lap) where the count falls below ``nodes``."""
    n = len(ticks)
    out = []
    for i in range(lo // gap_us, hi // gap_us + 2):
        t = i * gap_us
        was, now = ticks[(i - 1) % n] >= nodes, ticks[i % n] >= nodes
        if was and not now and lo < t <= hi:
            out.append(t)
    return out


@pytest.mark.parametrize(("nodes", "high"), [(1, 1), (4, 16)])
def test_reclaims_are_the_transitions_while_capacity_was_held(
    tmp_path: Path, nodes: int, high: int
) -> None:
    gap_s = 600
    ticks = markov_ticks(2000, stay_up=0.93, stay_down=0.6, seed=nodes, high=high)
    (tmp_path / "a.json").write_text(
        json.dumps({"metadata": {"gap_seconds": gap_s}, "data": ticks})
    )
    (tmp_path / "c.spot").write_text(contract())
    extra = {"nodes": nodes} if nodes > 1 else {}
    w = write_workload(tmp_path, rate_per_hour=None, trace="a.json", replacement=False,
                       **{**JOB, "runs": 150}, **extra)  # fmt: skip
    sim = simulate([tmp_path / "c.spot"], w, resamples=100)
    al = sim.contracts[0].result.allocations
    t0 = sim.workload.start
    offsets = Replay(read_availability(tmp_path / "a.json"), nodes, Streams(7)).offsets(
        np.arange(150, dtype=np.int64)
    )
    gap_us, total = gap_s * 1_000_000, 0
    for r, run in al.sort("run_id", "attempt").group_by("run_id", maintain_order=True):
        number = int(str(r[0]).removeprefix("run-")) - 1
        o = int(offsets[number])
        rel = (run["start"] - t0).dt.total_microseconds().to_list()
        ends = (run["end"] - t0).dt.total_microseconds().to_list()
        reasons = run["end_reason"].to_list()
        # the run asked for capacity at 0 and held it whenever the trace had it, until it
        # finished: so its reclaims are the drops in (first start, last end]
        drops = down_transitions(ticks, nodes, gap_us, o + rel[0], o + ends[-1])
        if reasons[-1] == "released" and drops and drops[-1] == o + ends[-1]:
            drops.pop()  # finished at the very instant of a drop: released, not reclaimed
        assert reasons.count("reclaimed") == len(drops), r
        # and each reclaim is at one of those drops
        assert [o + e for e, why in zip(ends, reasons, strict=True) if why == "reclaimed"] == drops
        total += len(drops)
    assert total > 100  # the trace does take capacity away


def test_a_promise_the_trace_cannot_keep_is_a_breach(tmp_path: Path) -> None:
    ticks = markov_ticks(2000, stay_up=0.9, stay_down=0.5, seed=3)
    (tmp_path / "a.json").write_text(json.dumps({"metadata": {"gap_seconds": 300}, "data": ticks}))
    (tmp_path / "c.spot").write_text(
        'contract "c" {\n  currency USD\n  rate 2 USD per gpu_hour\n'
        "  promise reclaim notice 10 minutes\n  promise restart within 10 minutes\n}\n"
    )
    w = write_workload(tmp_path, rate_per_hour=None, trace="a.json", replacement=False,
                       **{**JOB, "runs": 100})  # fmt: skip
    c = simulate([tmp_path / "c.spot"], w, resamples=100).contracts[0].result
    lost = c.allocations.filter(pl.col("end_reason") == "reclaimed")
    runtime = lost["runtime"].dt.total_seconds().to_numpy()
    lead = lost["notice_lead"].dt.total_seconds().to_numpy()
    # the notice comes 10 min before the drop, or at the start of a shorter allocation
    assert (lead == np.minimum(runtime, 600)).all()
    assert c.promises.notice_breaches == int((runtime < 600).sum()) > 0
    # replacement comes when the trace has capacity again: whole ticks of 300 s of outage,
    # so a wait of 900 s or more breaks the 10-minute promise
    wait = lost["replacement_wait"].dt.total_seconds().drop_nulls().to_numpy()
    assert (wait % 300 == 0).all()
    assert c.promises.restart_breaches == int((wait > 600).sum()) > 0
