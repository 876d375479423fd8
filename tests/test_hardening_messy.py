"""Real traces are messy: several files make one trace, clocks differ a little, and a few bad
runs need not stop the evaluation of the rest — while nothing is ever dropped silently."""

from __future__ import annotations

import json
from datetime import timedelta
from decimal import Decimal
from pathlib import Path

import polars as pl
import pytest
from support.cli import no_traceback, run
from support.events import (
    accepted,
    checkpoint,
    event,
    frame,
    reclaimed,
    released,
    requested,
    started,
)

from contractlang.errors import ContractlangError
from contractlang.trace import derive_facts, generate_trace, load_trace

CONTRACT = 'contract "c" {\n  currency USD\n  rate 2.10 USD per gpu_hour\n}\n'


@pytest.fixture
def spot(tmp_path: Path) -> Path:
    path = tmp_path / "c.spot"
    path.write_text(CONTRACT)
    return path


def evaluate_json(*args: object) -> dict:  # type: ignore[type-arg]
    result = run("evaluate", *args, "--format", "json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)  # type: ignore[no-any-return]


# --------------------------------------------------------------------------- several files


def test_a_trace_in_two_files_is_the_trace_in_one(spot: Path, tmp_path: Path) -> None:
    whole = generate_trace(25, seed=11)
    one = tmp_path / "one.parquet"
    whole.write_parquet(one)
    sched, invoice = tmp_path / "sched.csv", tmp_path / "invoice.ndjson"
    whole.filter(pl.col("source") != "invoice").write_csv(sched)
    whole.filter(pl.col("source") == "invoice").write_ndjson(invoice)
    assert evaluate_json(spot, sched, invoice) == evaluate_json(spot, one)
    merged = tmp_path / "merged.csv"
    result = run("trace", "merge", sched, invoice, "--out", merged)
    assert result.exit_code == 0, result.output
    assert evaluate_json(spot, merged) == evaluate_json(spot, one)
    # every row accounted for: the two files' rows are the merged file's rows
    assert pl.read_csv(merged).height == whole.height


def test_an_allocation_may_start_in_one_file_and_end_in_another(tmp_path: Path) -> None:
    a, b = tmp_path / "a.parquet", tmp_path / "b.parquet"
    frame([started("r1", "a1", 0), accepted("r1", 90)]).write_parquet(a)
    frame([released("r1", "a1", 60)]).write_parquet(b)
    allocations, _ = derive_facts(load_trace([a, b])).collect()
    assert allocations["runtime"].to_list() == [timedelta(minutes=60)]


def test_a_problem_names_its_own_file_and_row(tmp_path: Path) -> None:
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    frame([started("r1", "a1", 0), released("r1", "a1", 60)]).write_csv(a)
    # row 2 of b.csv repeats row 2 of a.csv exactly
    frame([started("r2", "a2", 0), released("r1", "a1", 60)]).write_csv(b)
    with pytest.raises(ContractlangError) as info:
        load_trace([a, b])
    errors = [d for d in info.value.diagnostics if d.is_error]
    # a2 starts in b.csv and never ends; b.csv's row 2 ends a1 again, and repeats a.csv's row 2
    assert [(d.file, d.span.line, d.code) for d in errors] == [
        (str(b), 1, "T014"),
        (str(b), 2, "T008"),
        (str(b), 2, "T012"),
    ]
    (dup,) = [d for d in errors if d.code == "T012"]
    assert dup.message == f"this row repeats row 2 of `{a}` exactly"


def test_merge_may_not_overwrite_an_input(tmp_path: Path) -> None:
    a = tmp_path / "a.csv"
    frame([started("r1", "a1", 0), released("r1", "a1", 60)]).write_csv(a)
    result = run("trace", "merge", a, "--out", a)
    assert result.exit_code == 2
    assert "would overwrite the input" in result.stderr


# --------------------------------------------------------------------------- clock skew

SKEWED = [
    requested("r1", 0),
    started("r1", "a1", 0, 8),
    checkpoint("r1", 30, step=100),
    reclaimed("r1", "a1", 60, step=150),
    accepted("r1", 100),
]


def with_late_checkpoint(micros: int) -> pl.DataFrame:
    """The story above, plus a checkpoint (of the allocation) ``micros`` after its end."""
    late = event("r1", "a1", 60, "checkpoint", step=150, valid=True)
    late["ts"] = late["ts"] + timedelta(microseconds=micros)
    return frame([*SKEWED, late])


def test_a_checkpoint_3_us_after_the_end_is_taken_as_at_the_end() -> None:
    trace = load_trace(with_late_checkpoint(3))
    assert [w.code for w in trace.warnings] == ["W106"]
    assert trace.warnings[0].message.startswith("1 job or invoice event fell up to 1 s outside")
    allocations, _ = derive_facts(trace).collect()
    # the checkpoint now stands at the reclaim (minute 60), so nothing is replayed: the last
    # valid checkpoint is at the end, and replayed time = end − max(start, end) = 0
    assert allocations["last_checkpoint_step"].to_list() == [150]
    assert allocations["replayed_time"].to_list() == [timedelta(0)]


@pytest.mark.parametrize(("skew", "micros"), [(timedelta(0), 3), (timedelta(seconds=1), 2_000_000)])
def test_beyond_the_skew_it_is_still_an_error(skew: timedelta, micros: int) -> None:
    with pytest.raises(ContractlangError) as info:
        load_trace(with_late_checkpoint(micros), clock_skew=skew)
    assert [d.code for d in info.value.diagnostics if d.is_error] == ["T010"]


def test_scheduler_events_are_never_moved() -> None:
    late_notice = event("r1", "a1", 60, "notice")
    late_notice["ts"] = late_notice["ts"] + timedelta(milliseconds=500)
    with pytest.raises(ContractlangError) as info:
        load_trace(frame([*SKEWED, late_notice]))
    assert [d.code for d in info.value.diagnostics if d.is_error] == ["T010"]


def test_clock_skew_on_the_command_line(spot: Path, tmp_path: Path) -> None:
    trace = tmp_path / "t.parquet"
    with_late_checkpoint(3).write_parquet(trace)
    assert run("evaluate", spot, trace).exit_code == 0
    strict = run("evaluate", spot, trace, "--clock-skew", "0")
    assert strict.exit_code == 2
    assert "error[T010]" in strict.stderr
    bad = run("evaluate", spot, trace, "--clock-skew", "soon")
    assert bad.exit_code == 2
    assert "`--clock-skew soon` is not a duration" in bad.stderr
    # longer than 1900-01-01 to 2200-01-01 (109,573 days = 2,629,752 h): it was an
    # OverflowError, exit 3; the longest itself is fine
    for value, code in (("99999999999999999999s", 2), ("2629753h", 2), ("2629752h", 0)):
        long = run("evaluate", spot, trace, "--clock-skew", value)
        no_traceback(long)
        assert long.exit_code == code, long.stderr
        if code:
            assert f"`--clock-skew {value}` is longer than the times a trace holds" in long.stderr


# --------------------------------------------------------------------------- quarantine


def messy() -> pl.DataFrame:
    """Three runs: r-clean is fine; r-dup repeats a row (T012); r-late has a checkpoint an
    hour after its allocation ended (T010)."""
    clean = [started("r-clean", "c1", 0, 8), released("r-clean", "c1", 60), accepted("r-clean", 70)]
    dup = [started("r-dup", "d1", 0, 4), released("r-dup", "d1", 30), released("r-dup", "d1", 30)]
    late = [
        started("r-late", "l1", 0, 2),
        released("r-late", "l1", 60),
        event("r-late", "l1", 120, "checkpoint", step=5),
    ]
    return frame([*clean, *dup, *late])


def test_strict_is_the_default(spot: Path, tmp_path: Path) -> None:
    trace = tmp_path / "t.parquet"
    messy().write_parquet(trace)
    assert run("evaluate", spot, trace).exit_code == 2


def test_quarantine_evaluates_the_valid_runs_and_sets_the_others_aside(
    spot: Path, tmp_path: Path
) -> None:
    trace = tmp_path / "t.parquet"
    messy().write_parquet(trace)
    aside = tmp_path / "aside.csv"
    doc = evaluate_json(spot, trace, "--on-invalid", f"quarantine={aside}")
    # r-dup (3 rows) and r-late (3 rows) set aside: 2 runs, 6 rows; r-clean (3 rows) kept
    assert doc["trace"]["quarantine"] == {
        "runs": 2,
        "rows": 6,
        "problems": {"T008": 1, "T010": 1, "T012": 1},
    }
    assert doc["trace"]["events"] == 3
    (contract,) = doc["contracts"]
    # only r-clean is billed: 8 GPUs × 1 h × 2.10 = 16.80
    assert contract["totals"]["runs"] == 1
    assert contract["totals"]["gross"] == "16.80"
    rows = pl.read_csv(aside)
    assert rows.height == 6
    assert set(rows["run_id"]) == {"r-dup", "r-late"}
    # every row of a set-aside run carries its run's first problem
    late_run = rows.filter(pl.col("run_id") == "r-late")
    assert late_run["run_problem"].n_unique() == 1
    assert late_run["run_problem"][0].startswith("T010: ")
    late = rows.filter(pl.col("event") == "checkpoint")
    assert late["row"].to_list() == [9]
    assert late["problems"][0].startswith("T010: `checkpoint` of allocation `l1`")


def test_the_terminal_says_what_was_set_aside(spot: Path, tmp_path: Path) -> None:
    trace = tmp_path / "t.parquet"
    messy().write_parquet(trace)
    aside = tmp_path / "aside.parquet"
    result = run("evaluate", spot, trace, "--on-invalid", f"quarantine={aside}")
    assert result.exit_code == 0, result.output
    assert "2 runs (6 rows) set aside: 1 × T008" in result.stdout
    assert f"wrote the 2 runs set aside (6 rows) to {aside}" in result.stderr
    validate = run("trace", "validate", trace, "--on-invalid", f"quarantine={aside}")
    assert validate.exit_code == 0
    assert "3 rows: valid; 2 runs (6 rows) set aside" in validate.stdout


def test_a_row_without_a_run_is_set_aside_alone() -> None:
    orphan = event(None, None, 5, "accepted")
    trace = load_trace(frame([*messy()[:3].to_dicts(), orphan]), quarantine=True)
    assert trace.quarantine is not None
    assert (trace.quarantine.runs, trace.quarantine.rows) == (1, 1)
    assert trace.summary.rows_read == 3


def test_whole_file_problems_still_stop_everything(tmp_path: Path) -> None:
    with pytest.raises(ContractlangError) as info:
        load_trace(messy().drop("gpus"), quarantine=True)
    assert [d.code for d in info.value.diagnostics] == ["T001"]


def test_nothing_set_aside_is_said_too() -> None:
    trace = load_trace(frame(SKEWED), quarantine=True)
    assert trace.quarantine is not None
    assert (trace.quarantine.runs, trace.quarantine.rows) == (0, 0)


def test_every_row_is_accounted_for_on_a_large_messy_trace() -> None:
    df = generate_trace(200, seed=4)
    bad = df.filter(
        pl.col("run_id").is_in(["run-000010", "run-000020"]) & (pl.col("event") == "started")
    ).head(2)
    messy_df = pl.concat([df, bad])
    trace = load_trace(messy_df, quarantine=True)
    q = trace.quarantine
    assert q is not None
    assert trace.summary.rows_read + q.rows == messy_df.height
    assert q.frame.height == q.rows
    assert set(q.frame["run_id"]) <= {"run-000010", "run-000020"}
    assert Decimal(q.rows) > 0
