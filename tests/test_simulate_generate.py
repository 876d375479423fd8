"""Simulated traces: the job's timeline computed by hand, the replay of an availability trace,
the same seed giving the same bytes, valid traces, promises kept (or breached at the asked
rate), and common random numbers across drafts."""

from __future__ import annotations

import json
import math
from decimal import Decimal
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from support.cli import no_traceback, run
from support.workloads import workload, write_workload

from contractlang.importers.availability.read import parse_availability
from contractlang.simulate import Simulation, simulate
from contractlang.simulate.generate import Simulator, _Allocation
from contractlang.simulate.job import Job, Schedule
from contractlang.simulate.provider import Promises
from contractlang.simulate.reclaims import NEVER, Replay
from contractlang.simulate.streams import Streams
from contractlang.simulate.workload import parse_workload

S = 1_000_000
MIN = 60 * S


def a(*xs: int) -> np.ndarray:
    return np.array(xs, dtype=np.int64)


# --------------------------------------------------------------------------- the job, by hand

# 10 steps of 60 s, a checkpoint every 4 steps, 30 s saves: saves end at 4·60 + 30 = 270 s
# (step 4), 8·60 + 2·30 = 540 s (step 8) and 10·60 + 3·30 = 690 s (step 10: the finish)
JOB = Job(steps=10, every=4, step_us=60 * S, save_us=30 * S, restore_us=100 * S)


def test_schedule_from_step_0() -> None:
    s = Schedule(JOB, a(0))
    assert s.finish.tolist() == [690 * S]
    assert [int(s.save_end(a(j))[0]) for j in (1, 2, 3)] == [270 * S, 540 * S, 690 * S]
    assert [int(s.save_step(a(j))[0]) for j in (1, 2, 3)] == [4, 8, 10]
    # at 400 s: one save done (270), 6 steps: (400 − 30) // 60 = 6, not saving (next at 510)
    assert s.saves_by(a(400 * S)).tolist() == [1]
    assert s.steps_at(a(400 * S)).tolist() == [6]
    assert s.in_save(a(400 * S), a(1)).tolist() == [False]
    # at 520 s: saving step 8 (510–540 s)
    assert s.steps_at(a(520 * S)).tolist() == [8]
    assert s.in_save(a(520 * S), a(1)).tolist() == [True]


def test_schedule_after_a_restore() -> None:
    # resuming at step 4: restore 100 s, then steps 5–8 (240 s) and a save: 100 + 240 + 30 =
    # 370 s; steps 9–10 (120 s) and the last save: 370 + 120 + 30 = 520 s, the finish
    s = Schedule(JOB, a(4))
    assert s.finish.tolist() == [520 * S]
    assert [int(s.save_end(a(j))[0]) for j in (1, 2)] == [370 * S, 520 * S]
    assert s.steps_at(a(50 * S)).tolist() == [4]  # still restoring
    # a notice checkpoint at step 6 resumes off the grid: 100 + 2·60 + 30 = 250 s (step 8)
    off = Schedule(JOB, a(6))
    assert off.save_end(a(1)).tolist() == [250 * S]
    assert off.save_step(a(1)).tolist() == [8]


def outcome(end: int, notice: int, has: bool, on_notice: bool, b: int = 0) -> _Allocation:
    return _Allocation(JOB, Schedule(JOB, a(b)), a(end), a(notice), np.array([has]), on_notice)


def test_a_reclaim_without_notice() -> None:
    r = outcome(400 * S, 0, False, True)
    assert (r.finished[0], r.end[0], r.saves[0], r.end_step[0]) == (False, 400 * S, 1, 6)
    assert not r.partial[0]
    assert not r.on_notice[0]


def test_a_reclaim_while_saving_leaves_a_partial_checkpoint() -> None:
    r = outcome(520 * S, 0, False, False)  # during the save of step 8 (510–540 s)
    assert (r.saves[0], r.end_step[0], r.partial[0], r.stop_step[0]) == (1, 8, True, 8)


def test_a_save_on_notice_succeeds_when_the_lead_is_long_enough() -> None:
    # notice at 400 s (6 steps done), reclaim at 460 s: a lead of 60 s ≥ 30 s, so the save
    # of step 6 ends at 430 s; training stopped at the notice
    r = outcome(460 * S, 400 * S, True, True)
    assert (r.on_notice[0], r.on_notice_at[0], r.stop_step[0]) == (True, 430 * S, 6)
    assert (r.end[0], r.end_step[0], r.partial[0], r.finished[0]) == (460 * S, 6, False, False)


def test_a_save_on_notice_fails_when_the_lead_is_short() -> None:
    r = outcome(420 * S, 400 * S, True, True)  # lead 20 s < 30 s
    assert (r.on_notice[0], r.partial[0], r.stop_step[0], r.end[0]) == (False, True, 6, 420 * S)


def test_a_notice_during_the_last_save() -> None:
    # the last save runs 660–690 s: a notice at 670 s lets it finish when the reclaim is
    # at 700 s (released at 690 s), and cuts it short when the reclaim is at 680 s
    done = outcome(700 * S, 670 * S, True, True)
    assert (done.finished[0], done.end[0], done.saves[0]) == (True, 690 * S, 3)
    cut = outcome(680 * S, 670 * S, True, True)
    assert (cut.finished[0], cut.end[0], cut.partial[0], cut.stop_step[0]) == (
        False,
        680 * S,
        True,
        10,
    )


def test_without_saving_on_notice_the_job_finishes_inside_the_notice() -> None:
    r = outcome(700 * S, 650 * S, True, False)  # finish at 690 s, before the reclaim
    assert (r.finished[0], r.end[0], r.end_step[0], r.saves[0]) == (True, 690 * S, 10, 3)


def test_one_run_without_a_reclaim_by_hand() -> None:
    text = workload(
        runs=1,
        total_steps=10,
        step_seconds=60,
        checkpoint_every_steps=4,
        save_seconds=30,
        invalid_checkpoint_chance=0,
        accept_chance=1,
        max_attempts=1,
        rate_per_hour="0.000000001",  # a decision within an hour: chance 1e-9 (seed 7: none)
    )
    w = parse_workload(text, "w.toml").workload
    frame = Simulator(w, None, Promises(None, None)).batch(0, 1)
    got = frame.select(
        "event",
        (pl.col("ts") - pl.col("ts").min()).dt.total_seconds().alias("s"),
        "step",
        "valid",
        "alloc_id",
    ).rows()
    assert got == [
        ("requested", 0, None, None, "run-000001-a0001"),
        ("started", 0, None, None, "run-000001-a0001"),
        ("checkpoint", 270, 4, True, "run-000001-a0001"),
        ("checkpoint", 540, 8, True, "run-000001-a0001"),
        ("checkpoint", 690, 10, True, "run-000001-a0001"),
        ("released", 690, 10, None, "run-000001-a0001"),
        ("accepted", 690, None, None, None),
    ]
    started = frame.filter(pl.col("event") == "started").row(0, named=True)
    assert (started["gpus"], started["sku"], started["capacity"]) == (64, "H100-80G", "spot")
    assert started["price"] == Decimal("2.10")
    assert frame.schema["price"] == pl.Decimal(38, 2)


# --------------------------------------------------------------------------- availability replay


def test_replay_finds_capacity_and_its_end_around_the_cycle() -> None:
    # ticks of 100 s: 1 0 0 1 0 → held [0, 100) and [300, 400) of a 500 s cycle
    avail = parse_availability('{"metadata": {"gap_seconds": 100}, "data": [1, 0, 0, 1, 0]}', "t")
    r = Replay(avail, 1, Streams(1))
    assert r.next_up(a(50 * S, 150 * S, 450 * S, 950 * S)).tolist() == [
        50 * S,  # held already
        300 * S,
        500 * S,  # the next lap's first tick
        1000 * S,
    ]
    assert r.next_down(a(50 * S, 350 * S, 1350 * S)).tolist() == [100 * S, 400 * S, 1400 * S]
    # 1 0 1: the last tick joins the first, so capacity held at 250 s lasts until 400 s
    wrap = Replay(parse_availability('{"metadata": {"gap_seconds": 100}, "data": [1, 0, 1]}', "t"),
                  1, Streams(1))  # fmt: skip
    assert wrap.next_down(a(250 * S)).tolist() == [400 * S]
    always = Replay(parse_availability('{"metadata": {"gap_seconds": 9}, "data": [2]}', "t"),
                    1, Streams(1))  # fmt: skip
    assert always.next_down(a(5)).tolist() == [NEVER]
    offsets = r.offsets(np.arange(1000, dtype=np.int64))
    assert offsets.min() >= 0
    assert offsets.max() < 500 * S


# --------------------------------------------------------------------------- determinism, validity

TERMS = """\
contract "priority" {
  currency USD
  rate 2.415 USD per gpu_hour
  promise reclaim notice 2 minutes
  promise restart within 10 minutes
}
contract "plain" {
  currency USD
  rate 2.10 USD per gpu_hour
  promise reclaim notice 30 seconds
}
contract "plain-dear" {
  currency USD
  rate 2.415 USD per gpu_hour
  promise reclaim notice 30 seconds
}
contract "plain-at-the-market" {
  currency USD
  rate trace.price per gpu_hour
  promise reclaim notice 30 seconds
}
budget "b" {
  require p95(cost_per_accepted_run) <= 9000 USD
  require share(accepted) >= 99%
}
"""


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("sim")
    (d / "terms.spot").write_text(TERMS)
    write_workload(d, runs=300)
    return d


def test_same_seed_same_bytes(files: Path, tmp_path: Path) -> None:
    outs = []
    for name in ("one", "two"):
        result = run(
            "simulate", files / "terms.spot", "--workload", files / "w.toml",
            "--format", "json", "--trace-out", tmp_path / name, "--resamples", 200,
        )  # fmt: skip
        no_traceback(result)
        assert result.exit_code in (0, 1)
        outs.append(result.stdout)
    assert outs[0] == outs[1]
    for contract in ("priority", "plain", "plain-at-the-market"):
        one = (tmp_path / "one" / f"{contract}.parquet").read_bytes()
        assert one == (tmp_path / "two" / f"{contract}.parquet").read_bytes()
    # the two drafts with a 30 s notice and no restart promise share one trace
    assert (tmp_path / "one" / "plain.parquet").read_bytes() == (
        tmp_path / "one" / "plain-at-the-market.parquet"
    ).read_bytes()
    # another seed, other bytes
    write_workload(tmp_path, runs=300, seed=8)
    other = run("simulate", files / "terms.spot", "--workload", tmp_path / "w.toml",
                "--format", "json", "--resamples", 200)  # fmt: skip
    assert other.stdout != outs[0]


def test_batches_do_not_change_the_trace(files: Path) -> None:
    w = parse_workload(workload(runs=60), "w.toml").workload
    sim = Simulator(w, None, Promises(120 * S, 10 * MIN))
    whole = sim.batch(0, 60)
    parts = pl.concat(list(sim.batches(size=7)))
    assert whole.equals(parts)


@pytest.fixture(scope="module")
def simulated(files: Path) -> Simulation:
    return simulate([files / "terms.spot"], files / "w.toml", resamples=200)


def test_the_trace_is_valid_and_complete(simulated: Simulation) -> None:
    assert [t.contracts for t in simulated.traces] == [
        ("priority",),
        ("plain", "plain-dear", "plain-at-the-market"),
    ]
    for ev in simulated.evaluations:
        assert ev.trace.warnings == ()  # no W101: steps never go back, even across attempts
        summary = ev.trace.summary
        assert summary.runs == 300
        assert summary.rows_read == summary.rows_used + sum(n.rows for n in summary.not_used)
    for t in simulated.traces:
        assert t.gave_up == 0


def test_promises_are_kept_without_breach_chances(simulated: Simulation) -> None:
    for c in simulated.contracts:
        p = c.result.promises
        assert p.reclaims > 1000  # about 11 a run
        assert p.notice_breaches == 0
        assert p.restart_breaches == 0
        assert p.never_replaced == 0
    priority = simulated.contract("priority").result
    lost = priority.allocations.filter(pl.col("end_reason") == "reclaimed")
    assert lost["notice_lead"].dt.total_seconds().unique().to_list() == [120]  # exactly kept
    assert lost["replacement_wait"].max().total_seconds() <= 600  # capped at the promise


def test_drafts_differing_only_in_price_bill_in_the_ratio_of_their_prices(
    simulated: Simulation,
) -> None:
    plain = simulated.contract("plain").result
    market = simulated.contract("plain-at-the-market").result
    # `rate trace.price` reads the workload's 2.10 on every start: the same bill to the cent
    assert plain.runs["gross_minor"].to_list() == market.runs["gross_minor"].to_list()
    # 2.10 vs 2.415 on the same trace: run by run, gross ÷ price agrees up to half a cent per
    # charge line of each (|gross − price × GPU-hours| ≤ 0.005 per line)
    dear = simulated.contract("plain-dear").result
    assert simulated.contract("plain-dear").trace is simulated.contract("plain").trace
    lines = plain.allocations.group_by("run_id").len().sort("run_id")["len"].to_list()
    pairs = zip(plain.runs["gross_minor"], dear.runs["gross_minor"], lines, strict=True)
    worst = Decimal(0)
    for g1, g2, n in pairs:
        gap = abs(Decimal(g1) / 100 / Decimal("2.10") - Decimal(g2) / 100 / Decimal("2.415"))
        bound = Decimal("0.005") * n * (1 / Decimal("2.10") + 1 / Decimal("2.415"))
        assert gap <= bound
        worst = max(worst, gap)
    assert worst > 0  # the lines do round: the bound is what makes the test pass, not luck


def test_common_random_numbers_keep_drafts_in_step(simulated: Simulation) -> None:
    """Each run's first allocation is marked for reclaim at the same moment under every
    draft (the same draw), and its first replacement waits the same draw, capped at 10 min
    under the draft that promises a 10-minute restart."""

    def first(c: str) -> pl.DataFrame:
        al = simulated.contract(c).result.allocations
        return al.filter(pl.col("attempt") == 1).sort("run_id")

    p, q = first("priority"), first("plain")
    decided_p = (p["notice_at"] - p["start"]).dt.total_microseconds()
    decided_q = (q["notice_at"] - q["start"]).dt.total_microseconds()
    assert decided_p.null_count() < 30  # most first allocations are reclaimed
    assert decided_p.to_list() == decided_q.to_list()
    wp = p["replacement_wait"].dt.total_microseconds().to_list()
    wq = q["replacement_wait"].dt.total_microseconds().to_list()
    assert all(x == min(y, 10 * MIN) for x, y in zip(wp, wq, strict=True) if x is not None)


def test_breach_chances_breach_at_their_rate(tmp_path: Path) -> None:
    path = write_workload(
        tmp_path, runs=300, notice_breach_chance="0.3", restart_breach_chance="0.5"
    )
    (tmp_path / "t.spot").write_text(TERMS.split('contract "plain"', maxsplit=1)[0])
    c = simulate([tmp_path / "t.spot"], path, resamples=100).contracts[0].result
    p = c.promises
    # notice: a breach with chance 0.3 per reclaim
    share = p.notice_breaches / p.reclaims
    assert abs(share - 0.3) <= 4 * math.sqrt(0.3 * 0.7 / p.reclaims)
    # restart: breached with chance 0.5, and then a breach only when the lognormal draw
    # (median 12 min, sigma 1) exceeds 10 min: P = 1 − Φ(ln(10/12)) = 0.5723
    over = 1 - 0.5 * (1 + math.erf(math.log(10 / 12) / math.sqrt(2)))
    expected = 0.5 * over
    share = p.restart_breaches / p.replacements
    assert abs(share - expected) <= 4 * math.sqrt(expected * (1 - expected) / p.replacements)


def test_json_holds_the_workload_without_paths(files: Path) -> None:
    result = run("simulate", files / "terms.spot", "--workload", files / "w.toml",
                 "--format", "json", "--resamples", 100)  # fmt: skip
    doc = json.loads(result.stdout)
    assert doc["schema"] == "contractlang.simulate/1"
    assert doc["workload"]["price"] == "2.10"
    assert str(files) not in result.stdout


def test_runs_that_cannot_finish_give_up_with_a_warning(tmp_path: Path) -> None:
    # reclaimed about every 6 minutes (10 an hour) with checkpoints every 2 hours: the job
    # almost never reaches a checkpoint, so every run uses its 20 allocations and gives up
    path = write_workload(tmp_path, runs=20, rate_per_hour=10, max_allocations=20,
                          checkpoint_every_steps=800)  # fmt: skip
    (tmp_path / "t.spot").write_text(TERMS.split('contract "plain"', maxsplit=1)[0])
    sim = simulate([tmp_path / "t.spot"], path, resamples=100)
    (trace,) = sim.traces
    assert trace.gave_up == 20
    c = sim.contracts[0].result
    assert c.totals.accepted_runs == 0
    assert c.totals.allocations == 20 * 20
    (w,) = [d for d in sim.warnings if d.code == "W602"]
    assert w.message.startswith("20 of 20 runs gave up after 20 allocations under notice 2 min")
    assert w.span.line == 16  # `max_allocations`, the last top-level key written
