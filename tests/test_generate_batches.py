"""`trace generate` of many runs: in batches, never the whole trace in memory, one valid trace
in any format; up to a batch, the same bytes as before; stopped at once by Ctrl-C, SIGTERM or
SIGHUP, leaving no file behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from types import FrameType
from typing import cast

import numpy as np
import numpy.typing as npt
import polars as pl
import pytest
from support.cli import no_traceback, run

from contractlang.trace import generate as gen
from contractlang.trace import load_trace, sink
from contractlang.trace.generate import (
    generate_batches,
    generate_trace,
    write_generated,
    write_trace,
)


def test_up_to_a_batch_the_trace_is_the_same_bytes(tmp_path: Path) -> None:
    one, whole = tmp_path / "one.parquet", tmp_path / "whole.parquet"
    result = run("trace", "generate", "--runs", "30", "--seed", "4", "--out", one)
    assert result.exit_code == 0, result.output
    write_trace(generate_trace(30, seed=4), whole)
    assert one.read_bytes() == whole.read_bytes()


@pytest.mark.parametrize("suffix", [".parquet", ".csv", ".ndjson"])
def test_more_runs_come_in_batches_as_one_valid_trace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, suffix: str
) -> None:
    monkeypatch.setattr(gen, "BATCH_RUNS", 3)
    out = tmp_path / f"t{suffix}"
    result = run("trace", "generate", "--runs", "7", "--seed", "5", "--out", out)
    no_traceback(result)
    assert result.exit_code == 0, result.output
    # batches of 3, 3 and 1 runs, drawn with seeds 5, 6 and 7, each 90 days after the one
    # before, their ids prefixed b00-, b01-, b02-
    start = gen.DEFAULT_START
    expected = pl.concat(
        [
            generate_trace(n, seed=5 + k, start=start + timedelta(days=90 * k)).with_columns(
                pl.concat_str(pl.lit(f"b{k:02d}-"), c).alias(c) for c in ("run_id", "alloc_id")
            )
            for k, n in enumerate([3, 3, 1])
        ]
    )
    trace = load_trace(out)
    assert trace.summary.runs == 7
    assert trace.events.height == expected.height
    got = trace.as_frame().select("run_id", "alloc_id", "ts", "event", "amount")
    want = expected.select("run_id", "alloc_id", "ts", "event", "amount")
    assert got.sort(got.columns).equals(
        want.cast(got.schema).sort(got.columns)  # type: ignore[arg-type]
    )
    started = int((expected["event"] == "started").sum())
    assert f"wrote {expected.height:,} events (7 runs, {started:,} allocations)" in result.output
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no parts left


def test_batches_never_hold_more_than_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gen, "BATCH_RUNS", 2)
    sizes = [b.get_column("run_id").n_unique() for b in generate_batches(5, seed=1)]
    assert sizes == [2, 2, 1]


@pytest.mark.parametrize(
    "start", ["2199-12-01T00:00Z", "1899-01-01T00:00Z", "9999-12-01T00:00Z", "0001-01-01T00:00Z"]
)
def test_a_start_that_puts_events_out_of_range_writes_nothing(tmp_path: Path, start: str) -> None:
    # a trace holds 1900-01-01 to 2199-12-31: a trace written beyond would fail every command
    out = tmp_path / "t.parquet"
    result = run("trace", "generate", "--runs", "2", "--start", start, "--out", out)
    no_traceback(result)
    assert result.exit_code == 2, result.output
    assert "outside the times a trace holds (1900-01-01 to 2199-12-31)" in result.output
    assert list(tmp_path.iterdir()) == []


def test_runs_that_could_pass_2199_are_e502_at_once_naming_the_flags(tmp_path: Path) -> None:
    out = tmp_path / "t.parquet"
    began = time.monotonic()
    result = run("trace", "generate", "--runs", "200000", "--start", "2199-06-01T00:00Z")
    took = time.monotonic() - began
    no_traceback(result)
    assert result.exit_code == 2
    assert took < 2  # not after generating a batch (45 s here)
    # two batches: the second starts 90 days after 2199-06-01 and reaches at most 376 days
    # 12:01:31.000001 further (75 + 3 + 30 × 7 + 29 × 3 days, 36 h, 90 s, 1 s, 1 µs): 466
    # days after 2199-06-01 (213 days to 2199-12-31, 2200-01-01 is day 214, then 252 more:
    # 2200-09-10), at 12:01:31
    said = " ".join(result.stderr.split())
    assert (
        "error[E502]: `--runs 200000` from `--start 2199-06-01T00:00Z` could put generated "
        "events as late as 2200-09-10T12:01:31Z, outside the times a trace holds (1900-01-01 "
        "to 2199-12-31)"
    ) in said
    # 2200-01-01 − (466 days 12:01:31.000001) − 1 µs = 2198-09-21T11:58:28.999998, to the second
    assert "give a `--start` no later than 2198-09-21T11:58:28Z, or fewer `--runs`" in said
    assert "a run has at most 30 segments of at most 7 days" in said
    assert not out.exists()
    result = run("trace", "generate", "--runs", str(10**15))
    assert result.exit_code == 2
    assert "from the default `--start` could put generated events past the year 9999" in (
        " ".join(result.stderr.split())
    )


def test_a_start_just_inside_the_bound_still_works(tmp_path: Path) -> None:
    # 2200-01-01 − 376 days = 2198-12-21 (2199 has 365), − 12:01:31.000001 − 1 µs:
    # 2198-12-20T11:58:28.999998 is the latest start; 11:58:29 is one too late
    out = tmp_path / "t.parquet"
    result = run(
        "trace", "generate", "--runs", "5", "--start", "2198-12-20T11:58:28Z", "--out", out
    )
    assert result.exit_code == 0, result.output
    assert load_trace(out).summary.runs == 5  # every event within the times a trace holds
    late = tmp_path / "late.parquet"
    result = run(
        "trace", "generate", "--runs", "5", "--start", "2198-12-20T11:58:29Z", "--out", late
    )
    assert result.exit_code == 2
    assert "as late as 2200-01-01T00:00:00Z" in result.stderr
    assert not late.exists()


class Extreme:
    """A random generator whose every draw that sets a time is at its largest (a run's start
    at the end of the span, the longest waits and runtimes, the most segments, the latest
    teardowns and invoice lines); the other draws are a real generator's."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.Generator(np.random.PCG64(seed))

    def random(self, size: int) -> npt.NDArray[np.float64]:
        return np.full(size, 1 - 2.0**-53)  # the largest value below 1

    def exponential(self, scale: float, size: int) -> npt.NDArray[np.float64]:
        return np.full(size, 1e12)

    def poisson(self, lam: float, size: int) -> npt.NDArray[np.int64]:
        return np.full(size, 10**6, dtype=np.int64)

    def normal(self, loc: float, scale: float, size: int) -> npt.NDArray[np.float64]:
        return np.full(size, loc + 10 * scale)  # a runtime of e^17.9 s: past the week

    def uniform(self, low: float, high: float, size: int) -> npt.NDArray[np.float64]:
        return np.full(size, np.nextafter(float(high), -np.inf))

    def __getattr__(self, name: str) -> object:
        return getattr(self.rng, name)


def test_the_bound_holds_and_is_reached_when_every_draw_is_at_its_extreme() -> None:
    start = gen.DEFAULT_START
    frame = gen._Gen(cast(np.random.Generator, Extreme(3)), 20, gen._epoch_us(start)).frame()
    latest = frame["ts"].max()
    # no credit (drawn below 0.2: never here), so the last event is a charge line, 1 µs
    # before the bound: a run started 75 days in, 3 days + 1 s of first wait, 30 segments of
    # 7 days with 29 waits of 3 days between, a node torn down 90 s after, charged 36 h later
    assert latest == start + timedelta(days=75 + 3 + 30 * 7 + 29 * 3, hours=36, seconds=91)
    assert latest == gen.latest_time(20, start) - timedelta(microseconds=1)
    assert gen.BATCH_REACH == (376 * 86_400 + 12 * 3600 + 60 + 31) * 1_000_000 + 1


def test_one_run_is_said_in_the_singular(tmp_path: Path) -> None:
    result = run("trace", "generate", "--runs", "1", "--seed", "3", "--out", tmp_path / "o.csv")
    assert result.exit_code == 0, result.output
    assert " (1 run, " in result.output


def test_a_failed_write_says_the_systems_reason(tmp_path: Path) -> None:
    for suffix in (".parquet", ".csv"):
        full = tmp_path / f"full{suffix}"
        full.symlink_to("/dev/full")  # a device: written directly, every write refused
        result = run("trace", "generate", "--runs", "30", "--out", full)
        no_traceback(result)
        assert result.exit_code == 2
        assert f"error[E501]: cannot write `{full}`: no space left on device" in result.stderr


# --------------------------------------------------------------------------- signals


class Stop(Exception):
    """What the test's signal handler raises (as the command line's raises ``Interrupted``)."""


@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_a_stopped_write_writes_nothing_more_and_says_it_is_still_at_work(
    tmp_path: Path, suffix: str
) -> None:
    release = threading.Event()
    made: list[int] = []

    def batches() -> Iterator[pl.DataFrame]:
        yield generate_trace(2, seed=1)
        made.append(1)
        release.wait(20)  # the next batch takes long to make
        yield generate_trace(2, seed=2)
        made.append(2)

    def stop(signum: int, frame: FrameType | None) -> None:
        raise Stop

    out = tmp_path / f"t{suffix}"
    previous = signal.signal(signal.SIGUSR1, stop)
    timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGUSR1))
    try:
        began = time.monotonic()
        timer.start()
        with pytest.raises(Stop):
            write_generated(batches(), out)
        took = time.monotonic() - began
    finally:
        timer.cancel()
        signal.signal(signal.SIGUSR1, previous)
    assert took < 0.5 + sink.GRACE_SECONDS + 1.0  # not after the batch being made
    assert made == [1]
    assert sink.stopped_writes_running()  # the second batch is still being made
    written = out.stat().st_size
    release.set()
    deadline = time.monotonic() + 20
    while sink.stopped_writes_running() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not sink.stopped_writes_running()
    assert made == [1]  # the batch made after the stop was never asked for (or written)
    assert out.stat().st_size == written  # no byte reached the file after the stop


@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_a_failed_write_is_raised_once_no_batch_is_being_made(tmp_path: Path, suffix: str) -> None:
    # a failure has no hurry: the write leaves no thread at work behind it (whose polars
    # call would abort the interpreter's teardown), so the command exits 2 as usual
    release = threading.Timer(2 * sink.GRACE_SECONDS, lambda: None)

    def batches() -> Iterator[pl.DataFrame]:
        yield generate_trace(2, seed=1)
        release.join(10)  # the next batch takes longer to make than a signal is given
        yield generate_trace(2, seed=2)

    full = tmp_path / f"full{suffix}"
    full.symlink_to("/dev/full")
    release.start()
    with pytest.raises(OSError, match="No space left on device") as failed:
        write_generated(batches(), full)
    assert failed.value.strerror == "No space left on device"  # the system's, not polars'
    assert not sink.stopped_writes_running()


def _generate_then(tmp_path: Path, signum: int, *, written: bool = False) -> float:
    """Start ``trace generate`` of 200,000 runs (a minute or more here), send ``signum`` once
    its temporary file is there (with ``written``: once the first batch's bytes are in it),
    and return how long the command took to exit after the signal; it must exit 130, and
    leave neither the temporary file nor the trace."""
    out = tmp_path / "x.parquet"
    command = ["trace", "generate", "--runs", "200000", "--out", str(out)]
    with subprocess.Popen(
        [sys.executable, "-m", "contractlang", *command],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    ) as child:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and child.poll() is None:
            temporary = list(tmp_path.glob(".x.parquet.*.tmp"))
            if temporary and (not written or temporary[0].stat().st_size > 0):
                break
            time.sleep(0.05)
        assert child.poll() is None, child.communicate()[1]
        time.sleep(0.5)  # well inside the first batch, or its write
        sent = time.monotonic()
        child.send_signal(signum)
        try:
            _, stderr = child.communicate(timeout=5)
        except subprocess.TimeoutExpired:
            child.kill()
            child.communicate()
            pytest.fail(f"{signal.Signals(signum).name} did not stop the command within 5 s")
        took = time.monotonic() - sent
        code = child.returncode
    assert code == 130, stderr  # not -6: the process did not abort on its way out
    assert "Traceback" not in stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == []
    time.sleep(1.0)  # and nothing appears after: no writer is left to make the file again
    assert sorted(p.name for p in tmp_path.iterdir()) == []
    return took


@pytest.mark.parametrize(
    "signum", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP], ids=["SIGINT", "SIGTERM", "SIGHUP"]
)
def test_a_signal_stops_a_streamed_write_within_seconds_and_leaves_no_file(
    tmp_path: Path, signum: int
) -> None:
    # SIGTERM and SIGHUP waited until the whole file was written (a minute and more); Ctrl-C
    # stopped at once but left the temporary file, its writer writing after the unlink
    assert _generate_then(tmp_path, signum) < 5


@pytest.mark.slow
def test_sigterm_stops_the_write_of_a_batch_and_removes_what_it_wrote(tmp_path: Path) -> None:
    # a supervisor's SIGTERM while the first batch's bytes are being written (its SIGKILL
    # after a grace would have left the temporary file, a hundred MB at the end)
    assert _generate_then(tmp_path, signal.SIGTERM, written=True) < 5
