"""`rehearse` end to end on the bundled mock: two interrupts with a short notice, the second
during a slow checkpoint save. Every expectation is computed here, independently of the
engine: from the trace's raw rows, from the mock's own log, and by the arithmetic docs/trace.md
and docs/evaluate.md define.

The mock runs 60 steps (3 epochs of 20, a checkpoint after each), 40 ms a step at least; the
interrupts come at 1/3 and 2/3 of the progress (steps 20 and 40, each just before its
checkpoint is saved); the notice is 30 s against a promised 2 minutes, at time scale 60: 0.5 s
of real time, in which the job, still short of its next checkpoint 0.8 s away, runs a few
steps that the reclaim then throws away. The checkpoint of step 40 takes 1.5 s to write, so
the second reclaim lands in the middle of it. The margins hold on a loaded machine: a slow
machine only makes the steps slower, which keeps the next checkpoint further away.

One command-line run (`--format json`, `--trace-out`, `--ledger`, `--runs`, `--workdir`)
serves every test; the report it made is kept for the tests that read the record.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import math
import shlex
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from support.cli import no_traceback, run
from typer.testing import Result

from contractlang.cli import rehearse as cli_rehearse
from contractlang.rehearse import RehearsalReport, RehearsalSettings, rehearse
from contractlang.rehearse.settings import evenly

PRICE = Decimal("2.50")  # USD per GPU-hour, the trace's `price` (the default of `--price`)
GPUS = 8
NOTICE_US = 30_000_000  # 30 s of notice, short of the 2 minutes promised

DRAFTS = """
contract "replay-billed" {
  currency USD
  rate trace.price per gpu_hour
  promise reclaim notice 2 minutes
  promise restart within 30 seconds
}
contract "replay-excluded" {
  currency USD
  rate trace.price per gpu_hour
  promise reclaim notice 2 minutes
  promise restart within 30 seconds
  exclude "replay after short notice" replayed_time
    when end_reason == reclaimed and notice_lead < promised_notice
}
"""


def mock_argv(log: Path, paced: bool = True) -> tuple[str, ...]:
    """The mock of this module; ``paced``: 40 ms a step and the slow save of step 40 (what
    the rehearsal's timing needs; the model it trains is the same either way), else as fast
    as it goes."""
    pace = ("--step-seconds", "0.04", "--slow-checkpoint", "40", "--slow-seconds", "1.5")
    return (
        *(sys.executable, "-m", "contractlang.mock_trainer"),
        *("--epochs", "3", "--steps-per-epoch", "20"),
        *("--width", "16", "--batch", "32", "--features", "8"),
        *(pace if paced else ("--step-seconds", "0")),
        *("--log", str(log)),
    )


@dataclass(frozen=True)
class Rehearsed:
    report: RehearsalReport
    log: list[dict[str, Any]]
    workdir: Path
    result: Result  # of the command line
    tmp: Path


@pytest.fixture(scope="module")
def rehearsed(tmp_path_factory: pytest.TempPathFactory) -> Rehearsed:
    tmp = tmp_path_factory.mktemp("rehearse")
    (tmp / "drafts.spot").write_text(DRAFTS)
    log = tmp / "mock.log"
    kept: list[RehearsalReport] = []

    def keeping(*args: Any, **kwargs: Any) -> RehearsalReport:
        kept.append(rehearse(*args, **kwargs))
        return kept[-1]

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(cli_rehearse, "rehearse", keeping)
        result = run(
            "rehearse",
            tmp / "drafts.spot",
            "--command",
            shlex.join(mock_argv(log)),
            "--interrupts",
            "2",
            "--notice",
            "30s",
            "--time-scale",
            "60",
            "--format",
            "json",
            "--workdir",
            tmp / "work",
            "--trace-out",
            tmp / "traces",
            "--ledger",
            tmp / "ledger.csv",
            "--runs",
            tmp / "runs.parquet",
            "--report",
            tmp / "report.md",
        )
    no_traceback(result)
    assert result.exit_code == 0, result.output
    (report,) = kept
    records = [json.loads(x) for x in log.read_text().splitlines()]
    return Rehearsed(report, records, tmp / "work", result, tmp)


# --------------------------------------------------------------------------- independent readers


def us(t: datetime, t0: datetime) -> int:
    d = t - t0
    return (d.days * 86_400 + d.seconds) * 1_000_000 + d.microseconds


@dataclass(frozen=True)
class Alloc:
    """An allocation read straight from the trace's rows."""

    alloc_id: str
    start: int
    end: int
    reason: str
    end_step: int | None
    notice: int | None


def allocations(trace: pl.DataFrame) -> list[Alloc]:
    t0 = trace["ts"].min()
    rows = trace.to_dicts()
    found = []
    for s in (r for r in rows if r["event"] == "started"):
        a = s["alloc_id"]
        (end,) = [
            r
            for r in rows
            if r["alloc_id"] == a and r["event"] in ("released", "reclaimed", "failed")
        ]
        notices = [us(r["ts"], t0) for r in rows if r["alloc_id"] == a and r["event"] == "notice"]
        found.append(
            Alloc(
                a,
                us(s["ts"], t0),
                us(end["ts"], t0),
                end["event"],
                end["step"],
                min(notices) if notices else None,
            )
        )
    return sorted(found, key=lambda x: x.start)


def valid_checkpoints(trace: pl.DataFrame) -> list[tuple[int, int]]:
    t0 = trace["ts"].min()
    rows = trace.filter((pl.col("event") == "checkpoint") & pl.col("valid")).to_dicts()
    return [(us(r["ts"], t0), r["step"]) for r in rows]


def last_valid(trace: pl.DataFrame, at: int) -> tuple[int, int] | None:
    before = [c for c in valid_checkpoints(trace) if c[0] <= at]
    return max(before, default=None)


def replayed_us(trace: pl.DataFrame, a: Alloc) -> int:
    """``replayed_time`` (docs/trace.md, "Per allocation"): end − max(start, time of the last
    valid checkpoint at or before the end)."""
    ckpt = last_valid(trace, a.end)
    return a.end - max(a.start, ckpt[0] if ckpt else a.start)


def recomputed_by_mock(log: list[dict[str, Any]]) -> dict[str, int]:
    """Per allocation, the steps the mock computed that an earlier allocation had already
    computed: what it really did again."""
    done: set[int] = set()
    again: dict[str, int] = {}
    for alloc in dict.fromkeys(r["alloc"] for r in log if r["event"] == "step"):
        steps = {r["step"] for r in log if r["event"] == "step" and r["alloc"] == alloc}
        again[alloc] = len(steps & done)
        done |= steps
    return again


def cents(x: Fraction) -> Decimal:
    """A non-negative amount rounded half up to the cent, exactly, as the ledger rounds each
    line (docs/evaluate.md, "Order of evaluation")."""
    return Decimal(math.floor(x * 100 + Fraction(1, 2))) / 100


def ceil_seconds(t_us: int) -> int:
    return math.ceil(Fraction(t_us, 1_000_000)) * 1_000_000


# --------------------------------------------------------------------------- the tests


def test_drafts_with_the_same_promises_share_one_rehearsal(rehearsed: Rehearsed) -> None:
    (only,) = rehearsed.report.rehearsals
    assert only.record.plan.contracts == ("replay-billed", "replay-excluded")
    assert only.trace["run_id"].unique().to_list() == ["rehearsal"]
    assert not only.trace["source"].is_in(["invoice"]).any()


def test_two_reclaimed_allocations_and_one_released(rehearsed: Rehearsed) -> None:
    (r,) = rehearsed.report.rehearsals
    allocs = allocations(r.trace)
    assert [a.reason for a in allocs] == ["reclaimed", "reclaimed", "released"]
    # each reclaim came 6 s (recorded) after its notice, exactly; the release had no notice
    assert [a.end - a.notice for a in allocs[:2] if a.notice is not None] == [NOTICE_US] * 2
    assert allocs[2].notice is None
    # each replacement started 30 s after the reclaim: the promised restart, kept exactly
    assert [b.start - a.end for a, b in itertools.pairwise(allocs)] == [30_000_000] * 2
    assert r.record.result == "accepted"
    assert r.trace.filter(pl.col("event") == "accepted").height == 1


def test_the_checkpoint_cut_short_is_invalid_and_the_replay_starts_before_it(
    rehearsed: Rehearsed,
) -> None:
    (r,) = rehearsed.report.rehearsals
    invalid = r.trace.filter((pl.col("event") == "checkpoint") & ~pl.col("valid"))
    assert invalid["step"].to_list() == [40]
    (bad,) = [c for c in r.record.checkpoints if not c.valid]
    assert "ckpt-000040.npz.tmp" in (bad.reason or "")  # the partial file the reclaim left
    a2 = allocations(r.trace)[1]
    assert a2.end_step == 40  # the mock was saving step 40 when it was killed
    ckpt = last_valid(r.trace, a2.end)
    assert ckpt is not None
    assert ckpt[1] < 40  # the replay is measured from the previous valid checkpoint
    facts = r.contracts[0].allocations.filter(pl.col("alloc_id") == a2.alloc_id).row(0, named=True)
    assert facts["last_checkpoint_step"] == ckpt[1]
    assert facts["replayed_steps"] == 40 - ckpt[1]


def test_replayed_steps_are_what_the_mock_recomputed(rehearsed: Rehearsed) -> None:
    (r,) = rehearsed.report.rehearsals
    again = recomputed_by_mock(rehearsed.log)
    facts = r.contracts[0].allocations.sort("attempt")
    ids = facts["alloc_id"].to_list()
    # the steps replayed after allocation k's reclaim are recomputed by allocation k + 1
    for k in range(2):
        assert facts["replayed_steps"][k] == again[ids[k + 1]] > 0
    assert r.contracts[0].totals.lost_steps == sum(again.values())
    # and the mock's own log agrees with the trace on where each allocation stopped
    for a in allocations(r.trace):
        steps = [
            x["step"] for x in rehearsed.log if x["event"] == "step" and x["alloc"] == a.alloc_id
        ]
        assert max(steps) == a.end_step


def test_the_interrupted_mock_trains_the_model_an_uninterrupted_one_does(
    rehearsed: Rehearsed, tmp_path: Path
) -> None:
    # the same mock, run once without rehearse: its validation loss is the rehearsed run's,
    # to the last bit, so each restore resumed the very state the checkpoint held
    log = tmp_path / "alone.log"
    argv = mock_argv(log, paced=False)
    done = subprocess.run(
        [*argv, "--checkpoint-dir", str(tmp_path / "ck")], capture_output=True, check=True
    )
    assert b"contractlang: accepted" in done.stdout
    alone = [json.loads(x) for x in log.read_text().splitlines() if '"validation"' in x]
    rehearsed_val = [r for r in rehearsed.log if r["event"] == "validation"]
    assert [r["loss"] for r in rehearsed_val] == [r["loss"] for r in alone]


def test_excluding_replay_after_short_notice_bills_exactly_the_replay_less(
    rehearsed: Rehearsed,
) -> None:
    (r,) = rehearsed.report.rehearsals
    billed, excluded = r.contracts
    allocs = allocations(r.trace)
    replay = {a.alloc_id: replayed_us(r.trace, a) if a.reason == "reclaimed" else 0 for a in allocs}
    # usage: billable GPU-time differs by exactly Σ gpus × replayed time, to the microsecond,
    # once each draft's per-second rounding is applied to what it bills
    a_us = [ceil_seconds(a.end - a.start) for a in allocs]
    b_us = [ceil_seconds(a.end - a.start - replay[a.alloc_id]) for a in allocs]
    assert billed.totals.billable_gpu_us == GPUS * sum(a_us)
    assert excluded.totals.billable_gpu_us == GPUS * sum(b_us)
    assert billed.totals.excluded_gpu_us == 0
    assert excluded.totals.excluded_gpu_us == GPUS * sum(replay.values())
    # money: each allocation's charge line is price × gpus × billable seconds / 3600, rounded
    # half up to the cent; the nets differ by the sum of the per-line differences
    line = lambda t_us: cents(Fraction(PRICE) * GPUS * Fraction(t_us, 3_600_000_000))  # noqa: E731
    expected = sum((line(x) - line(y) for x, y in zip(a_us, b_us, strict=True)), Decimal(0))
    net_a, net_b = billed.money(billed.totals.net_minor), excluded.money(excluded.totals.net_minor)
    assert net_a - net_b == expected
    # the assertion above is the exact one, line by line. This one only relates it to the
    # replayed GPU-time × the rate: on each of the two reclaimed lines, the two drafts round
    # their seconds up (the difference moves by less than a second's price, 8 × 2.50 / 3600
    # = 0.56 cent) and their amounts to the cent (half a cent each): so the nets differ from
    # it by less than 2 × (0.56 + 1) cents
    exact = Fraction(PRICE) * GPUS * Fraction(sum(replay.values()), 3_600_000_000)
    bound = 2 * (Fraction(PRICE) * GPUS / 3600 + Fraction(1, 100))
    assert abs(Fraction(net_a - net_b) - exact) < bound
    assert replay[allocs[0].alloc_id] > 0
    assert replay[allocs[1].alloc_id] > 0


def test_the_ledgers_sum_to_their_nets(rehearsed: Rehearsed) -> None:
    for c, _ in rehearsed.report.drafts():
        assert sum(c.ledger()["amount"].to_list(), Decimal(0)) == c.money(c.totals.net_minor)


def test_the_workdir_keeps_what_the_job_left(rehearsed: Rehearsed) -> None:
    work = rehearsed.workdir / "rehearsal-1"
    assert (work / "checkpoints" / "ckpt-000060.npz").is_file()
    assert (work / "rehearsal-a1.out").read_text().startswith("contractlang: total 60")


# --------------------------------------------------------------------------- the command line


def test_json_describes_the_rehearsal_relative_to_its_start(rehearsed: Rehearsed) -> None:
    result, tmp = rehearsed.result, rehearsed.tmp
    doc = json.loads(result.stdout)
    assert doc["schema"] == "contractlang.rehearse/1"
    (r,) = doc["rehearsals"]
    assert [a["end_reason"] for a in r["allocations"]] == ["reclaimed", "reclaimed", "released"]
    assert r["notice"] == {"seconds": "30", "from": "flag", "signal": "SIGTERM"}
    assert r["replacement_wait"] == {"seconds": "30", "from": "promise"}
    assert r["allocations"][0]["start_seconds"] == "0"
    assert [d["name"] for d in r["drafts"]] == ["replay-billed", "replay-excluded"]
    text = result.stdout
    assert str(tmp) not in text
    assert "/tmp" not in text
    assert datetime.now().strftime("%Y-%m-%d") not in text  # no clock times
    # exact numbers are strings
    assert all(isinstance(d["totals"]["net"], str) for d in r["drafts"])


def test_trace_out_writes_one_trace_per_draft_that_evaluates_the_same(
    rehearsed: Rehearsed,
) -> None:
    result, tmp = rehearsed.result, rehearsed.tmp
    doc = json.loads(result.stdout)
    for draft in doc["rehearsals"][0]["drafts"]:
        path = tmp / "traces" / f"{draft['name']}.parquet"
        assert path.is_file()
        again = run("evaluate", tmp / "drafts.spot", path, "--format", "json")
        assert again.exit_code == 0, again.output
        (same,) = [c for c in json.loads(again.stdout)["contracts"] if c["name"] == draft["name"]]
        assert same["totals"] == draft["totals"]
    assert pl.read_csv(tmp / "ledger.csv")["contract"].unique().len() == 2
    assert pl.read_parquet(tmp / "runs.parquet").height == 2


# --------------------------------------------------------------------------- a job that finishes


def test_a_job_that_finishes_within_the_notice_is_not_started_again_nor_billed(
    tmp_path: Path,
) -> None:
    # the interrupt at 100% comes with the last step (4 of 4); the mock saves, validates and
    # exits within the 10-minute lead (10 s of real time at scale 60): its allocation is
    # released at the exit, before the reclaim, and no other allocation starts. The interrupt
    # asked for was never delivered as a reclaim, so the rehearsal says so and bills nothing
    (tmp_path / "drafts.spot").write_text(DRAFTS)
    log = tmp_path / "mock.log"
    argv = [*mock_argv(log, paced=False), "--epochs", "1", "--steps-per-epoch", "4"]
    argv += ["--accept-loss", "9"]
    result = run(
        "rehearse",
        tmp_path / "drafts.spot",
        "--command",
        shlex.join(argv),
        "--at",
        "100%",
        "--notice",
        "10 min",
        "--time-scale",
        "60",
        "--format",
        "json",
    )
    no_traceback(result)
    assert result.exit_code == 2, result.output
    (d,) = json.loads(result.stdout)["diagnostics"]
    assert (d["code"], d["severity"]) == ("E706", "error")
    assert d["message"] == (
        "the rehearsal of `replay-billed`, `replay-excluded` could not deliver interrupt 1 of 1 "
        "(at 100% of the progress, step 4): its notice came in allocation `rehearsal-a1`, but "
        "the job finished its work within the notice lead (released at step 4), so it was "
        "never reclaimed"
    )
    assert "a larger `--time-scale`" in d["help"]
    mock_log = [json.loads(x)["event"] for x in log.read_text().splitlines()]
    assert mock_log.count("start") == 1  # it was not started again
    assert mock_log.count("validation") == 1  # and validated once, within the lead


# --------------------------------------------------------------------------- under load

#: Two drafts whose promises differ, so each has a rehearsal of its own: notice leads of 20 s
#: and 10 s, replacement waits of 0 s and 20 s.
PROMISES = """
contract "short-notice" {
  currency USD
  rate trace.price per gpu_hour
  promise reclaim notice 20 seconds
}
contract "shorter-notice" {
  currency USD
  rate trace.price per gpu_hour
  promise reclaim notice 10 seconds
  promise restart within 20 seconds
}
"""


@contextlib.contextmanager
def cpu_hogs(n: int = 2) -> Iterator[None]:
    """``n`` busy processes (``while True: pass``), as long as the block runs."""
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]
    try:
        yield
    finally:
        for h in hogs:
            h.kill()
            h.wait()


@pytest.mark.parametrize(("interrupts", "runs"), [(2, 2), (3, 2)])
def test_every_interrupt_is_delivered_under_a_cpu_hog(
    tmp_path: Path, interrupts: int, runs: int
) -> None:
    # the mock of this module cut to 36 steps (3 epochs of 12), 40 ms a step at least: the
    # interrupts come 9 or 12 steps apart (360 ms or more), and the job has as many steps
    # left after the last; at time scale 300 the leads last 67 ms and 33 ms of real time, so
    # the job never finishes within one. Two busy processes keep both cores loaded; whatever
    # rehearse and the job get of them, each draft gets every interrupt, each a reclaim
    (tmp_path / "t.spot").write_text(PROMISES)
    with cpu_hogs():
        for run_number in range(runs):
            log = tmp_path / f"mock-{run_number}.log"
            argv = (*mock_argv(log), "--steps-per-epoch", "12")
            settings = RehearsalSettings(
                argv, "mock", interrupts=evenly(interrupts), time_scale=Fraction(300)
            )
            report = rehearse([tmp_path / "t.spot"], settings)
            assert [c.name for c, _ in report.drafts()] == ["short-notice", "shorter-notice"]
            for c, r in report.drafts():
                ends = [(a.end_reason, a.interrupt) for a in r.record.allocations]
                assert ends == [
                    *(("reclaimed", k) for k in range(1, interrupts + 1)),
                    ("released", None),
                ], (c.name, run_number)
                assert r.trace.filter(pl.col("event") == "reclaimed").height == interrupts
                assert r.record.result == "accepted"


def test_the_rehearsal_report_bills_each_draft(rehearsed: Rehearsed) -> None:
    result, tmp = rehearsed.result, rehearsed.tmp
    assert result.exit_code == 0, result.output
    text = (tmp / "report.md").read_text(encoding="utf-8")
    assert "Rehearsed: each draft is evaluated on the record of a rehearsal" in text
    doc = json.loads(result.stdout)
    for draft in doc["rehearsals"][0]["drafts"]:
        assert draft["name"] in text
        net = draft["totals"]["net"]  # the report's figure is the rehearsal's own
        assert f"{Decimal(net):,.2f}" in text
