"""`trace generate` of many runs: in batches, never the whole trace in memory, one valid trace
in any format; up to a batch, the same bytes as before."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import polars as pl
import pytest
from support.cli import no_traceback, run

from contractlang.trace import generate as gen
from contractlang.trace import load_trace
from contractlang.trace.generate import generate_batches, generate_trace, write_trace


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


def test_one_run_is_said_in_the_singular(tmp_path: Path) -> None:
    result = run("trace", "generate", "--runs", "1", "--seed", "3", "--out", tmp_path / "o.csv")
    assert result.exit_code == 0, result.output
    assert " (1 run, " in result.output
