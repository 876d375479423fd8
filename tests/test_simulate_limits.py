"""A simulated trace is never invalid and nothing overflows: every workload and availability
value whose extremes would leave the trace's range (contractlang.trace.limits) or overflow is a
workload error at its key (E605, E609) — just inside each bound simulates a valid trace, just
outside is the error — and what the trace would warn about on every row is said once, at the
workload's key."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from itertools import pairwise
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from support.cli import no_traceback, run
from support.workloads import Raw, workload, write_workload

from contractlang.diagnostics import Diagnostic
from contractlang.errors import ContractlangError
from contractlang.importers.availability.read import MAX_SPAN_US, parse_availability
from contractlang.simulate import Simulation, generate, simulate
from contractlang.simulate.workload import Workload, parse_workload
from contractlang.trace.limits import MAX_GPU_US, MAX_GPUS, MAX_STEP

S = 1_000_000
TERMS = 'contract "c" {\n  currency USD\n  rate 2.10 USD per gpu_hour\n}\n'
#: One run of 10 steps of 60 s (600 s) with one save of no time at the end, never reclaimed
#: (the lowest rate: a reclaim within the run has a chance of about 10⁻¹⁹), always accepted.
EXACT: dict[str, Any] = {
    "runs": 1, "total_steps": 10, "step_seconds": 60, "checkpoint_every_steps": 10,
    "save_seconds": 0, "restore_seconds": 0, "checkpoint_on_notice": False,
    "invalid_checkpoint_chance": 0, "accept_chance": 1, "max_attempts": 1, "price": None,
    "rate_per_hour": "0.000000000001", "distribution": "fixed", "minutes": 1,
}  # fmt: skip
#: The same job rejected every time, twice: two attempts back to back, 1,200 s in all.
TWICE = {**EXACT, "accept_chance": 0, "max_attempts": 2}


def text(**changes: Any) -> str:
    return workload(**{**EXACT, **changes})


def error_at(source: str, code: str = "E605") -> Diagnostic:
    """The one error of a workload, which must be ``code``."""
    with pytest.raises(ContractlangError) as info:
        parse_workload(source, "w.toml")
    (diag,) = info.value.diagnostics
    assert diag.code == code, diag
    return diag


def line_of(source: str, diag: Diagnostic) -> str:
    return source.splitlines()[diag.span.line - 1]


def simulated(tmp_path: Path, source: str, terms: str = TERMS) -> tuple[Simulation, pl.DataFrame]:
    """Simulate and evaluate (which validates the trace strictly); the trace itself."""
    (tmp_path / "t.spot").write_text(terms)
    (tmp_path / "w.toml").write_text(source)
    (tmp_path / "traces").mkdir(exist_ok=True)
    sim = simulate([tmp_path / "t.spot"], tmp_path / "w.toml", resamples=100,
                   trace_dir=tmp_path / "traces")  # fmt: skip
    return sim, pl.read_parquet(tmp_path / "traces" / "c.parquet")


def last_ts(trace: pl.DataFrame) -> datetime:
    last = trace["ts"].max()
    assert isinstance(last, datetime)
    return last


# --------------------------------------------------------------------------- times: 1900 to 2199


def test_start_at_the_earliest_time_a_trace_holds(tmp_path: Path) -> None:
    _, trace = simulated(tmp_path, text(start=Raw("1900-01-01T00:00:00Z")))
    assert trace["ts"].min() == datetime(1900, 1, 1, tzinfo=UTC)
    source = text(start=Raw("1899-12-31T23:59:59.999999Z"))
    diag = error_at(source)
    assert line_of(source, diag).startswith("start = ")
    assert diag.message == (
        "`start` `1899-12-31T23:59:59.999999Z` is before 1900-01-01, the earliest time a trace "
        "may hold"
    )


def test_start_late_enough_for_one_attempt(tmp_path: Path) -> None:
    # 600 s before 2200-01-01, less a microsecond: the run ends at 23:59:59.999999, in range
    _, trace = simulated(tmp_path, text(start=Raw("2199-12-31T23:49:59.999999Z")))
    assert last_ts(trace) == datetime(2199, 12, 31, 23, 59, 59, 999999, tzinfo=UTC)
    source = text(start=Raw("2199-12-31T23:50:00Z"))  # it would end at 2200-01-01T00:00
    diag = error_at(source)
    assert line_of(source, diag).startswith("start = ")
    assert diag.message.endswith(
        "leaves too little time: a trace ends on 2199-12-31 and one attempt takes 10 min"
    )


def test_a_run_that_goes_on_past_the_range_is_an_error_at_start(tmp_path: Path) -> None:
    # two attempts of 600 s: 1,200 s before 2200-01-01 less a microsecond is the latest start
    source = workload(**{**TWICE, "start": Raw("2199-12-31T23:39:59.999999Z")})
    _, trace = simulated(tmp_path, source)
    assert last_ts(trace) == datetime(2199, 12, 31, 23, 59, 59, 999999, tzinfo=UTC)
    assert trace.filter(pl.col("event") == "rejected").height == 2
    # a microsecond later the one-attempt check passes, but the run's second attempt does not
    late = workload(**{**TWICE, "start": Raw("2199-12-31T23:40:00Z")})
    (tmp_path / "late.toml").write_text(late)
    with pytest.raises(ContractlangError) as info:
        simulate([tmp_path / "t.spot"], tmp_path / "late.toml", resamples=100)
    (diag,) = info.value.diagnostics
    assert diag.code == "E605"
    assert line_of(late, diag).startswith("start = ")
    assert diag.message == (
        "run 1 would go on past 2199-12-31, the last day a trace may hold, after 2 allocations "
        "under no notice, no restart promise"
    )


def test_the_command_reports_it_at_the_line_and_writes_nothing(tmp_path: Path) -> None:
    (tmp_path / "t.spot").write_text(TERMS)
    path = tmp_path / "w.toml"
    path.write_text(workload(**{**TWICE, "start": Raw("2199-12-31T23:40:00Z")}))
    result = run("simulate", tmp_path / "t.spot", "--workload", path, "--trace-out",
                 tmp_path / "td", "--runs", tmp_path / "runs.csv")  # fmt: skip
    no_traceback(result)
    assert result.exit_code == 2
    line = next(n for n, x in enumerate(path.read_text().splitlines(), 1) if x.startswith("start"))
    assert f"{path}:{line}:1: error[E605]: run 1 would go on past 2199-12-31" in result.stderr
    assert "contractlang-simulate-" not in result.stderr  # never a temporary trace's name
    assert not (tmp_path / "td").exists()
    assert not (tmp_path / "runs.csv").exists()


# --------------------------------------------------------------------------- GPU-time

# 1,000,000 GPUs may be held for MAX_GPU_US // 10⁶ = 9,223,372,036,854 µs in a run
HELD = MAX_GPU_US // 1_000_000
# a rate and an increment that keep a bill of 2.56 billion GPU-hours inside exact decimals
# (the default 1 s increment would bill more GPU-time than the run holds: E405)
CHEAP = (
    'contract "c" {\n  currency USD\n  rate 0.000001 USD per gpu_hour\n'
    "  billing increment 0.000001 seconds\n}\n"
)


def test_gpus_for_one_attempt_up_to_the_gpu_time_a_run_holds(tmp_path: Path) -> None:
    assert HELD == 9_223_372_036_854
    inside = text(gpus=1_000_000, total_steps=1, checkpoint_every_steps=1,
                  step_seconds="9223372.036854")  # fmt: skip
    sim, _ = simulated(tmp_path, inside, CHEAP)
    (c,) = sim.contracts
    assert c.result.totals.metered_gpu_us == 1_000_000 * HELD <= MAX_GPU_US
    outside = inside.replace("9223372.036854", "9223372.036855")
    diag = error_at(outside)
    assert line_of(outside, diag).startswith("gpus = ")
    # 9,223,372.036855 s = 106 d (9,158,400 s) + 18 h (64,800 s) + 2 min 52.036855 s
    assert "1,000,000 GPUs for one attempt of 106 d 18 h 2 min 52.036855 s would hold more " in (
        diag.message
    )
    assert diag.message.endswith("2,562,047,788 GPU-hours, the most one run may hold")


def test_a_run_that_would_hold_too_much_gpu_time_is_an_error_at_gpus(tmp_path: Path) -> None:
    # two attempts of 4,611,686,018,427 µs are 9,223,372,036,854 µs: exactly what may be held
    once = {"gpus": 1_000_000, "total_steps": 1, "checkpoint_every_steps": 1}
    inside = workload(**{**TWICE, **once, "step_seconds": "4611686.018427"})
    sim, _ = simulated(tmp_path, inside, CHEAP)
    assert sim.contracts[0].result.totals.metered_gpu_us == 1_000_000 * HELD
    outside = inside.replace("4611686.018427", "4611686.018428")
    (tmp_path / "w.toml").write_text(outside)
    with pytest.raises(ContractlangError) as info:
        simulate([tmp_path / "t.spot"], tmp_path / "w.toml", resamples=100)
    (diag,) = info.value.diagnostics
    assert (diag.code, line_of(outside, diag)[:7]) == ("E605", "gpus = ")
    assert diag.message.startswith(
        "run 1 would hold more than 2,562,047,788 GPU-hours, the most one run may hold, after "
        "2 allocations of 1,000,000 GPUs"
    )


def test_the_static_bounds_keep_steps_and_gpus_in_the_trace_range() -> None:
    def most(model: type[Workload], name: str) -> int:
        (bound,) = [m.le for m in model.model_fields[name].metadata if hasattr(m, "le")]
        return int(bound)

    # a run's steps count over its attempts: at most max_attempts × total_steps
    assert most(Workload, "max_attempts") * most(Workload, "total_steps") <= MAX_STEP
    assert most(Workload, "gpus") <= MAX_GPUS


# --------------------------------------------------------------------------- one value, one bound

BOUNDS = [
    # (key, just inside, just outside, the message's bound)
    ("price", "1000000000000", "1000000000000.000001", "at most 1,000,000,000,000"),
    ("step_seconds", "31536000", "31536000.000001", "at most 31,536,000"),
    ("save_seconds", "31536000", "31536000.000001", "at most 31,536,000"),
    ("restore_seconds", "31536000", "31536000.000001", "at most 31,536,000"),
    ("minutes", "525600", "525600.000001", "at most 525,600"),
    ("rate_per_hour", "0.000000000001", "9.99e-13", "at least 0.000000000001"),
    ("rate_per_hour", "3600000000", "3600000000.1", "at most 3,600,000,000"),
    ("checkpoint_every_steps", "1000000000000", "1000000000001", "at most 1,000,000,000,000"),
    # past int64: the run's steps divide by it in numpy (it overflowed, exit 3)
    ("checkpoint_every_steps", "1", "99999999999999999999", "at most 1,000,000,000,000"),
]


@pytest.mark.parametrize(("key", "inside", "outside", "words"), BOUNDS,
                         ids=[f"{b[0]}-{b[3].split()[1]}" for b in BOUNDS])  # fmt: skip
def test_each_bound_just_inside_reads_and_just_outside_is_an_error(
    key: str, inside: str, outside: str, words: str
) -> None:
    parse_workload(text(**{key: Raw(inside)}), "w.toml")
    source = text(**{key: Raw(outside)})
    diag = error_at(source)
    assert line_of(source, diag).startswith(f"{key} = ")
    assert diag.message.endswith(f"must be {words}, not `{outside}`"), diag.message


@pytest.mark.parametrize("key", ["mean_minutes", "median_minutes"])
def test_a_distributions_scale_is_at_most_a_year(key: str) -> None:
    dist = "exponential" if key == "mean_minutes" else "lognormal"
    parse_workload(text(distribution=dist, minutes=None, **{key: 525600}), "w.toml")
    diag = error_at(text(distribution=dist, minutes=None, **{key: Raw("525600.000001")}))
    assert diag.message == f"`replacement.{key}` must be at most 525,600, not `525600.000001`"


def test_a_year_long_wait_at_the_bound_simulates_a_valid_trace(tmp_path: Path) -> None:
    # reclaimed about every 6 minutes, each replacement a year later: 3 allocations, then the
    # run gives up — two years of waits, every time in range
    source = text(rate_per_hour=10, minutes=525600, max_allocations=3, total_steps=100)
    sim, trace = simulated(tmp_path, source)
    assert sim.traces[0].gave_up == 1
    starts = trace.filter(pl.col("event") == "started")["ts"].to_list()
    gaps = [(b - a).total_seconds() for a, b in pairwise(starts)]
    assert len(starts) == 3
    assert all(g >= 525600 * 60 for g in gaps)  # each start a year (and the allocation) later


def test_the_highest_price_is_a_valid_trace_and_billing_it_a_clean_error(tmp_path: Path) -> None:
    _, trace = simulated(tmp_path, text(price=Raw("1000000000000")))
    assert str(trace["price"].drop_nulls()[0]) == "1000000000000"
    # billed as `rate trace.price`, 64 GPUs × 600 s at 10¹² per GPU-hour goes beyond exact
    # decimals (10¹⁸ for rate × GPUs × µs): E405 at the contract, with the simulated job's size
    market = tmp_path / "m.spot"
    market.write_text('contract "m" {\n  currency USD\n  rate trace.price per gpu_hour\n}\n')
    result = run("simulate", market, "--workload", tmp_path / "w.toml", "--resamples", 100)
    no_traceback(result)
    assert result.exit_code == 2
    assert f"{market}:1:10: error[E405]: contract `m` computes an amount too large" in result.stderr
    assert "help: the simulated allocations hold 64 GPUs for up to 10 min" in result.stderr


# --------------------------------------------------------------------------- warnings at the key


def test_what_the_trace_would_warn_on_every_row_is_said_once_at_the_key(tmp_path: Path) -> None:
    market = 'contract "c" {\n  currency USD\n  rate trace.price per gpu_hour\n}\n'
    source = text(runs=5, price=Raw("2000"), gpus=200_000)
    sim, _ = simulated(tmp_path, source, market)
    by_code = {d.code: d for d in sim.warnings}
    assert sorted(by_code) == ["W103", "W105"]  # once each, not once per `started` row
    for d in sim.warnings:
        assert d.file == str(tmp_path / "w.toml")
    assert line_of(source, by_code["W103"]).startswith("gpus = ")
    assert by_code["W103"].message == (
        "an allocation of 200,000 GPUs: more than 100,000 in one is unusual"
    )
    assert line_of(source, by_code["W105"]).startswith("price = ")
    assert by_code["W105"].message == "`price` `2000` per GPU-hour is over 1,000"
    # an allocation longer than a year: said at `total_steps` (365 days + 60 s here)
    long = text(total_steps=525601, checkpoint_every_steps=525601)
    (w,) = parse_workload(long, "w.toml").warnings
    assert (w.code, line_of(long, w)[:13]) == ("W104", "total_steps =")


# --------------------------------------------------------------------------- promises and draws


def test_a_promise_longer_than_any_trace_is_an_error_not_a_crash(tmp_path: Path) -> None:
    (tmp_path / "t.spot").write_text(
        'contract "c" {\n  currency USD\n  rate 2.10 USD per gpu_hour\n'
        # 200 years each: within what the checker allows (a trace's 300), but a run that waits
        # that long from the workload's start would pass 2199-12-31
        "  promise reclaim notice 1752000 hours\n"
        "  promise restart within 1752000 hours\n}\n"
    )
    write_workload(tmp_path, runs=5)
    result = run("simulate", tmp_path / "t.spot", "--workload", tmp_path / "w.toml",
                 "--resamples", 100)  # fmt: skip
    no_traceback(result)
    assert result.exit_code == 2
    assert "error[E605]: run " in result.stderr
    assert "would go on past 2199-12-31" in result.stderr


def test_too_many_checkpoints_in_a_run_is_an_error_at_the_interval(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(generate, "MAX_INDEX", 5)  # the real bound, 2²⁸ − 1, takes long to reach
    source = text(total_steps=10, checkpoint_every_steps=1)  # 10 saves
    (tmp_path / "t.spot").write_text(TERMS)
    (tmp_path / "w.toml").write_text(source)
    with pytest.raises(ContractlangError) as info:
        simulate([tmp_path / "t.spot"], tmp_path / "w.toml", resamples=100)
    (diag,) = info.value.diagnostics
    assert line_of(source, diag).startswith("checkpoint_every_steps = ")
    assert diag.message.startswith("run 1 would save more than 5 checkpoints")


# --------------------------------------------------------------------------- availability traces

DAYS = MAX_SPAN_US // (86_400 * S)


def skypilot(gap: str, entries: int) -> str:
    return (
        '{"metadata": {"gap_seconds": ' + gap + '}, "data": [' + ", ".join(["1"] * entries) + "]}"
    )


def availability_error(source: str, name: str) -> Diagnostic:
    with pytest.raises(ContractlangError) as info:
        parse_availability(source, name)
    (diag,) = info.value.diagnostics
    assert diag.code == "E609", diag
    return diag


def test_an_availability_trace_spans_at_most_ten_years() -> None:
    assert DAYS == 3650
    # one entry of 3,650 days, or 3,650 entries of a day: in range
    assert parse_availability(skypilot("315360000", 1), "t.json").span_us == MAX_SPAN_US
    assert parse_availability(skypilot("86400", 3650), "t.json").span_us == MAX_SPAN_US
    diag = availability_error(skypilot("315360000.000001", 1), "t.json")
    assert "`gap_seconds` must be a positive number of seconds" in diag.message
    assert (diag.span.line, diag.span.col) == (1, 30)  # at the value
    long = skypilot("86400", 3651)
    diag = availability_error(long, "t.json")
    assert diag.message.startswith("the trace spans more than 3,650 days (3,651 entries")
    assert diag.span.col == long.index("[") + 1  # at `data`
    diag = availability_error(skypilot("1e300", 1), "t.json")  # once an overflow (exit 3)
    assert "not `1E+300`" in diag.message


def test_a_bamboo_time_is_at_most_ten_years() -> None:
    last = MAX_SPAN_US // 1000  # 315,360,000,000 ms
    assert parse_availability(f"0,add,n1\n{last},remove,n1\n", "t.csv").span_us == MAX_SPAN_US
    diag = availability_error(f"0,add,n1\n{last + 1},remove,n1\n", "t.csv")
    assert (diag.span.line, diag.span.col) == (2, 1)
    assert diag.message == (
        f"time `{last + 1}` ms is more than 3,650 days (315,360,000,000 ms), the longest a "
        "trace may span"
    )
    # far more digits than a number holds: the same error, not an overflow
    diag = availability_error("0,add,n1\n" + "9" * 5000 + ",remove,n1\n", "t.csv")
    assert "is more than 3,650 days" in diag.message
    # digits that are not ASCII are not a time
    diag = availability_error("0,add,n1\n²,remove,n1\n", "t.csv")
    assert diag.message == "time `²` is not a whole number of milliseconds"


def test_malformed_json_numbers_and_nesting_are_errors_not_crashes() -> None:
    doc = {"metadata": {"gap_seconds": 60}, "data": [1]}
    huge = json.dumps(doc).replace("[1]", "[" + "1" * 5000 + "]")
    assert availability_error(huge, "t.json").message == (
        "a number in the file has more digits than can be read"
    )
    with pytest.raises(ContractlangError) as info:
        parse_availability('{"a": ' + "[" * 100_000, "t.json")
    assert info.value.diagnostics[0].code == "E608"
