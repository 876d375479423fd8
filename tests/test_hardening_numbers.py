"""Numbers are never silently wrong: no product or sum of trace values wraps (beyond the range
kept exactly it is an error naming the row), impossible values are rejected and implausible
ones warned about, and every figure prints as plain digits (docs/trace.md, "Limits")."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.cli import run
from support.events import frame, released, started
from support.scenario import evaluate_text, json_document

from contractlang.errors import ContractlangError
from contractlang.evaluate.results import DisplayUnit
from contractlang.lang.numbers import MICROS_PER_HOUR, plain, scaled
from contractlang.render.common.numbers import measure, minor_to_str, money
from contractlang.trace import derive_facts, load_trace
from contractlang.trace.limits import MAX_GPU_US, MAX_GPUS, MAX_TS, MIN_TS

CONTRACT = 'contract "c" {\n  currency USD\n  rate 2.10 USD per gpu_hour\n}\n'


def codes(exc: pytest.ExceptionInfo[ContractlangError]) -> list[tuple[str, int]]:
    return [(d.code, d.span.line) for d in exc.value.diagnostics]


def allocation(
    run: str, alloc: str, start: datetime, end: datetime, gpus: int
) -> list[dict[str, Any]]:
    return [
        {**started(run, alloc, 0, gpus), "ts": start},
        {**released(run, alloc, 0), "ts": end},
    ]


# --------------------------------------------------------------------------- wrapping

T0 = datetime(2025, 1, 1, tzinfo=UTC)


def test_a_64_gpu_allocation_from_year_1_to_9999_is_rejected_not_wrapped() -> None:
    rows = allocation(
        "r1", "a1", datetime(1, 1, 1, tzinfo=UTC), datetime(9999, 1, 1, tzinfo=UTC), 64
    )
    with pytest.raises(ContractlangError) as exc:
        load_trace(frame(rows))
    # row 1: the allocation's GPU-time (64 × 9,998 years > 2^63 GPU-µs) and its timestamp;
    # row 2: its end's timestamp
    assert codes(exc) == [("T020", 1), ("T020", 1), ("T020", 2), ("W104", 1)]
    message = exc.value.diagnostics[0].message
    # 64 × (9999-01-01 − 0001-01-01): 3,651,694 days × 24 h = 87,640,656 hours; × 64 GPUs
    assert "64 GPUs for 87,640,656 hours, 5,609,001,984 GPU-hours" in message


WEEK = timedelta(days=7)


def test_a_run_holding_more_than_64_bits_of_gpu_time_is_rejected() -> None:
    # each allocation fits: 10,000,000 GPUs × 7 days = 10^7 × 6.048 × 10^11 µs
    # = 6.048 × 10^18 GPU-µs ≤ 2^63 − 1 ≈ 9.22 × 10^18; run r1's two hold 1.2096 × 10^19,
    # more than a run may hold; r2's one does not
    rows = [
        *allocation("r1", "a1", T0, T0 + WEEK, MAX_GPUS),
        *allocation("r1", "a2", T0 + WEEK, T0 + 2 * WEEK, MAX_GPUS),
        *allocation("r2", "b1", T0, T0 + WEEK, MAX_GPUS),
    ]
    with pytest.raises(ContractlangError) as exc:
        load_trace(frame(rows))
    errors = [d for d in exc.value.diagnostics if d.is_error]
    assert [(d.code, d.span.line) for d in errors] == [("T020", 1)]  # r1's first start row
    # 2 × 10^7 GPUs × 168 hours = 3,360,000,000 GPU-hours; the limit, (2^63 − 1) µs in hours
    assert errors[0].message == (
        "the run of this allocation holds 3,360,000,000 GPU-hours in 2 allocations: "
        "more than one run may hold (2,562,047,788 GPU-hours)"
    )


def test_an_allocation_ending_before_it_starts_does_not_hide_a_run_too_large() -> None:
    # r1 holds 2 × 6.048 × 10^18 GPU-µs, too much; b1 ends a week before it starts (T009),
    # −6.048 × 10^18: all three sum to 6.048 × 10^18, within 64 bits, but a negative span
    # must not count against the others (only GPU-time at least 0 is summed to skip the runs)
    rows = [
        *allocation("r1", "a1", T0, T0 + WEEK, MAX_GPUS),
        *allocation("r1", "a2", T0 + WEEK, T0 + 2 * WEEK, MAX_GPUS),
        *allocation("r2", "b1", T0 + WEEK, T0, MAX_GPUS),
    ]
    with pytest.raises(ContractlangError) as exc:
        load_trace(frame(rows))
    assert ("T020", 1) in codes(exc)  # r1, at its first start row
    assert ("T009", 6) in codes(exc)  # b1's end row


def test_runs_that_each_fit_are_valid_when_all_together_do_not() -> None:
    # 6.048 × 10^18 GPU-µs in each of two runs: each fits, the two together (1.2096 × 10^19)
    # would not; only a run's own allocations count
    rows = [
        *allocation("r1", "a1", T0, T0 + WEEK, MAX_GPUS),
        *allocation("r2", "b1", T0, T0 + WEEK, MAX_GPUS),
    ]
    trace = load_trace(frame(rows))
    assert trace.summary.runs == 2
    assert MAX_GPUS * (WEEK // timedelta(microseconds=1)) * 2 > MAX_GPU_US


def test_validate_says_invalid_on_the_command_line(tmp_path: Path) -> None:
    path = tmp_path / "wide.parquet"
    frame(
        allocation("r1", "a1", datetime(1, 1, 1, tzinfo=UTC), datetime(9999, 1, 1, tzinfo=UTC), 64)
    ).write_parquet(path)
    result = run("trace", "validate", path)
    assert result.exit_code == 2
    assert "error[T020]" in result.stderr
    assert "valid" not in result.stdout


@pytest.mark.parametrize("ts", ["-2025-03-03T09:00:00Z", "+12025-03-03T09:00:00Z"])
def test_a_year_before_1_or_after_9999_is_out_of_range(tmp_path: Path, ts: str) -> None:
    """Polars reads a signed or five-digit year, which no Python datetime holds: the checks
    that took the trace's first and last times as datetimes raised ValueError (exit 3)."""
    path = tmp_path / "t.csv"
    path.write_text(
        "run_id,alloc_id,ts,source,event,gpus\n"
        f"r1,a1,{ts},scheduler,started,8\n"
        "r1,a1,2025-03-03T10:00:00Z,scheduler,released,\n",
        encoding="utf-8",
    )
    result = run("trace", "validate", path)
    assert result.exit_code == 2, result.output
    assert f"row 1: error[T020]: timestamp `{ts}` is outside the range" in result.stderr


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(
            st.integers(min_value=1, max_value=2 * MAX_GPUS),
            st.datetimes(min_value=datetime(1850, 1, 1), max_value=datetime(2250, 1, 1)),
            st.integers(min_value=0, max_value=400 * 365 * 86_400 * 10**6),
            st.sampled_from(["r1", "r2"]),
        ),
        min_size=1,
        max_size=4,
    )
)
def test_gpu_time_is_exact_or_an_error(allocs: list[tuple[int, datetime, int, str]]) -> None:
    """Whatever the GPUs and times, the facts hold the exact GPU-time, computed here with
    Python integers — or the trace is rejected with T020. Never a wrapped figure."""
    rows: list[dict[str, Any]] = []
    exact: dict[str, int] = {}
    out_of_range = False
    for k, (gpus, start, length, run_id) in enumerate(allocs):
        t0 = start.replace(tzinfo=UTC)
        t1 = t0 + timedelta(microseconds=length)
        rows += allocation(run_id, f"a{k}", t0, t1, gpus)
        exact[run_id] = exact.get(run_id, 0) + gpus * length
        out_of_range |= not (MIN_TS <= t0 < MAX_TS and MIN_TS <= t1 < MAX_TS)
        out_of_range |= gpus > MAX_GPUS or gpus * length > MAX_GPU_US
    out_of_range |= any(v > MAX_GPU_US for v in exact.values())
    if out_of_range:
        with pytest.raises(ContractlangError) as exc:
            load_trace(frame(rows))
        assert {d.code for d in exc.value.diagnostics if d.is_error} == {"T020"}
        return
    trace = load_trace(frame(rows))
    _, runs = derive_facts(trace).collect()
    got = {r["run_id"]: r["metered_gpu_time"] for r in runs.iter_rows(named=True)}
    assert {k: v // timedelta(microseconds=1) for k, v in got.items()} == exact


def test_totals_beyond_64_bits_stay_exact() -> None:
    # two runs of 10,000,000 GPUs for 900,000,000,000 µs (250 h) each: 9 × 10^18 GPU-µs a run,
    # inside 2^63 − 1 ≈ 9.22 × 10^18; together 1.8 × 10^19, which a 64-bit total would wrap
    length = 900_000_000_000
    t0 = datetime(2025, 1, 1, tzinfo=UTC)
    rows = allocation("r1", "a1", t0, t0 + timedelta(microseconds=length), MAX_GPUS)
    rows += allocation("r2", "a2", t0, t0 + timedelta(microseconds=length), MAX_GPUS)
    spot = 'contract "c" {\n  currency USD\n  rate 0.0001 USD per gpu_hour\n}\n'
    result = evaluate_text(spot, frame(rows))
    total = 2 * MAX_GPUS * length
    assert total > 2**63 - 1
    assert result.contracts[0].totals.metered_gpu_us == total
    doc = json.loads(json_document(result))
    # 1.8 × 10^19 GPU-µs ÷ 3.6 × 10^9 = 5,000,000,000 GPU-hours exactly
    assert Fraction(total, MICROS_PER_HOUR) == 5_000_000_000
    assert doc["contracts"][0]["totals"]["metered_gpu_hours"] == "5000000000.000000"
    # 0.0001 USD × 5 × 10^9 GPU-hours = 500,000.00 USD
    assert doc["contracts"][0]["totals"]["gross"] == "500000.00"


@pytest.mark.parametrize(
    "clause",
    [
        "promise reclaim notice 99999999999999999 hours",
        "promise restart within 110000 days",
        "billing increment 109574 days",
        "billing minimum 9999999999 days",
    ],
)
def test_a_duration_longer_than_any_trace_is_a_checker_error(clause: str) -> None:
    # 1900-01-01 to 2200-01-01 is 109,573 days (73 leap years among the 300): a duration
    # beyond it is E213 at the clause, never an overflow in evaluation
    spot = f'contract "c" {{\n  currency USD\n  rate 2 USD per gpu_hour\n  {clause}\n}}\n'
    with pytest.raises(ContractlangError) as exc:
        evaluate_text(spot, frame(allocation("r1", "a1", T0, T0 + timedelta(hours=1), 1)))
    assert codes(exc) == [("E213", 4)]
    assert "longer than any trace can be" in exc.value.diagnostics[0].message


def test_the_longest_duration_is_allowed() -> None:
    # 109,573 days exactly is the whole range: allowed (a minimum that long bills each
    # allocation 109,573 × 24 = 2,629,752 GPU-hours at 2 USD = 5,259,504.00 USD)
    spot = (
        'contract "c" {\n  currency USD\n  rate 2 USD per gpu_hour\n'
        "  billing minimum 109573 days\n}\n"
    )
    result = evaluate_text(spot, frame(allocation("r1", "a1", T0, T0 + timedelta(hours=1), 1)))
    assert result.contracts[0].totals.gross_minor == 525_950_400


def test_a_huge_billing_minimum_is_a_clean_error_naming_the_allocation() -> None:
    spot = (
        'contract "c" {\n  currency USD\n  rate 0.01 USD per gpu_hour\n'
        "  billing minimum 100000 days\n}\n"
    )
    t0 = datetime(2025, 1, 1, tzinfo=UTC)
    rows = allocation("r1", "a1", t0, t0 + timedelta(seconds=1), MAX_GPUS)
    # 10^7 GPUs × 100,000 days × 86,400 s × 10^6 µs = 8.64 × 10^22 GPU-µs: beyond 64 bits,
    # and 0.01 × that beyond 38 decimal digits
    with pytest.raises(ContractlangError) as exc:
        evaluate_text(spot, frame(rows))
    (diag,) = exc.value.diagnostics
    assert diag.code == "E405"
    assert "allocation `a1` of run `r1`" in diag.message or "run `r1`" in diag.message


# --------------------------------------------------------------------------- impossible values


def test_negative_prices_and_steps_are_errors_with_their_rows() -> None:
    t0 = datetime(2025, 1, 1, tzinfo=UTC)
    rows = [
        {**started("r1", "a1", 0, 8, price="-2.10"), "ts": t0},
        {**released("r1", "a1", 0, step=-5), "ts": t0 + timedelta(hours=1)},
        {**started("r2", "a2", 0, 8, price="2.10"), "ts": t0},
        {**released("r2", "a2", 0, step=5), "ts": t0 + timedelta(hours=1)},
    ]
    with pytest.raises(ContractlangError) as exc:
        load_trace(frame(rows))
    assert codes(exc) == [("T021", 1), ("T021", 2)]
    assert exc.value.diagnostics[0].message == (
        "`price` value `-2.1` is negative; a price per GPU-hour cannot be"
    )


@pytest.mark.parametrize(
    ("gpus", "hours", "price", "warning"),
    [
        (250_000, 1, "2.10", "W103"),  # more than 100,000 GPUs
        (8, 24 * 400, "2.10", "W104"),  # 400 days
        (8, 1, "2100", "W105"),  # over 1,000 per GPU-hour
    ],
)
def test_implausible_values_are_warnings_with_their_rows(
    gpus: int, hours: int, price: str, warning: str
) -> None:
    t0 = datetime(2025, 1, 1, tzinfo=UTC)
    rows = [
        {**released("r0", "a0", 0), "ts": t0 + timedelta(hours=1)},
        {**started("r0", "a0", 0, 8), "ts": t0},
        {**started("r1", "a1", 0, gpus, price=price), "ts": t0},
        {**released("r1", "a1", 0), "ts": t0 + timedelta(hours=hours)},
    ]
    trace = load_trace(frame(rows))
    assert [(w.code, w.span.line) for w in trace.warnings] == [(warning, 3)]


def test_the_limits_are_the_documented_ones() -> None:
    assert MAX_GPU_US == 2**63 - 1
    assert MAX_GPU_US // MICROS_PER_HOUR == 2_562_047_788  # GPU-hours, as docs/trace.md says
    assert (MIN_TS.year, MAX_TS.year) == (1900, 2200)


# --------------------------------------------------------------------------- plain digits

PLAIN = re.compile(r"^[+-]?\d{1,3}(,\d{3})*(\.\d+)?$|^[+-]?\d+(\.\d+)?$")


@given(st.integers(min_value=-(10**20), max_value=10**20), st.integers(min_value=0, max_value=10))
def test_money_is_plain_digits_at_every_precision(minor: int, precision: int) -> None:
    for text in (minor_to_str(minor, precision), money(minor, precision, sign=True)):
        assert PLAIN.match(text), text
        assert "E" not in text
    assert Decimal(minor_to_str(minor, precision)) == Decimal(minor) / 10**precision
    if precision:
        assert len(minor_to_str(minor, precision).split(".")[1]) == precision


def test_measures_and_decimals_never_use_exponents() -> None:
    assert plain(scaled(0, 8)) == "0.00000000"
    assert plain(Decimal("4E-10")) == "0.0000000004"
    assert plain(Decimal("1E+3"), grouped=True) == "1,000"
    money_unit = DisplayUnit("USD", Fraction(1), "money")
    assert measure(Fraction(0), money_unit, 8) == "0.00000000"
    assert measure(Fraction(4, 10**10), money_unit, 10) == "0.0000000004"


@pytest.mark.parametrize("precision", [0, 2, 8, 10])
def test_evaluate_prints_plain_digits_at_any_precision(tmp_path: Path, precision: int) -> None:
    spot = tmp_path / "c.spot"
    spot.write_text(
        f'contract "c" {{\n  currency USD\n  precision {precision}\n'
        "  rate 0.000000001 USD per gpu_hour\n"
        '  credit "none" 0 USD when end_reason == reclaimed\n}\n'
        'budget "b" {\n  require p95(cost_per_accepted_run) <= 0 USD\n}\n'
    )
    t0 = datetime(2025, 1, 1, tzinfo=UTC)
    trace = tmp_path / "t.parquet"
    frame(allocation("r1", "a1", t0, t0 + timedelta(seconds=1), 1)).write_parquet(trace)
    for fmt in ("json", "text"):
        result = run("evaluate", spot, trace, "--format", fmt)
        assert result.exit_code in (0, 1), result.output
        # the SHA-256 digests naming the inputs are hex (`…9e5…`), not numbers
        numbers = re.sub(r"\b[0-9a-f]{64}\b", "<sha256>", result.stdout)
        assert not re.search(r"\d[eE][+-]?\d", numbers), result.stdout


# --------------------------------------------------------------------------- unreadable numbers

#: A valid trace of three rows, as text: row 1 starts an allocation (`gpus`, `price`), row 2
#: ends it (`step`), row 3 is its invoice line (`quantity`, `amount`).
ROWS: list[dict[str, str]] = [
    {"run_id": "r1", "alloc_id": "a1", "ts": "2025-03-03T09:00:00Z", "source": "scheduler",
     "event": "started", "gpus": "8", "price": "2.10"},
    {"run_id": "r1", "alloc_id": "a1", "ts": "2025-03-03T10:00:00Z", "source": "scheduler",
     "event": "released", "step": "100"},
    {"run_id": "r1", "alloc_id": "a1", "ts": "2025-03-03T10:00:00Z", "source": "invoice",
     "event": "charge", "quantity": "8", "amount": "16.80"},
]  # fmt: skip
HEADER = ["run_id", "alloc_id", "ts", "source", "event", "gpus", "price", "step", "quantity",
          "amount"]  # fmt: skip
ROW_OF = {"gpus": 1, "price": 1, "step": 2, "quantity": 3, "amount": 3}
DIGITS = "5" * 5000  # more digits than Python converts to an int (4,300)
SHOWN = "55555555555555555555… (5,000 characters)"


def text_trace(path: Path, column: str, value: str, *, raw: bool = False) -> Path:
    """The trace with ``value`` in ``column`` of its row: CSV, or NDJSON (a JSON string, or
    with ``raw`` the text written as it is, a JSON number)."""
    rows = [dict(r) for r in ROWS]
    rows[ROW_OF[column] - 1][column] = value
    if path.suffix == ".csv":
        lines = [",".join(HEADER), *(",".join(r.get(h, "") for h in HEADER) for r in rows)]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return path
    out = []
    for r in rows:
        fields = [
            f'"{k}": {v}' if raw and k == column and v == value else f'"{k}": {json.dumps(v)}'
            for k, v in r.items()
        ]
        out.append("{" + ", ".join(fields) + "}")
    path.write_text("\n".join(out) + "\n", encoding="utf-8")
    return path


def parquet_trace(path: Path, column: str, series: pl.Series) -> Path:
    """The trace with ``column`` the Parquet column ``series`` (nulls but on its row)."""
    values = [None] * len(ROWS)
    values[ROW_OF[column] - 1] = series[0]
    text = pl.DataFrame(
        [{h: r.get(h) for h in HEADER} for r in ROWS], schema=dict.fromkeys(HEADER, pl.String)
    )
    text.with_columns(pl.Series(column, values, dtype=series.dtype)).write_parquet(path)
    return path


MAX_38 = 10**38 - 1  # 38 nines: the most a Parquet Decimal(38, 0) holds
#: (file, column, value, how it is written, the message's end): every number no reader holds
UNREADABLE = [
    ("csv", "price", "1e1000000", "text", "`price` value `1e1000000` is too large"),
    ("csv", "price", "-1e1000000", "text", "`price` value `-1e1000000` is too large"),
    ("csv", "price", "1e-1000000", "text", "value `1e-1000000` has more than 18 decimal places"),
    ("csv", "price", "NaN", "text", "`price` value `NaN` is not a number"),
    ("csv", "price", "Infinity", "text", "`price` value `Infinity` is not a number"),
    ("csv", "price", "sNaN", "text", "`price` value `sNaN` is not a number"),
    ("csv", "price", "123456789012345678901", "text", "value `123456789012345678901` is too large"),
    ("csv", "amount", "1e1000000", "text", "`amount` value `1e1000000` is too large"),
    ("csv", "quantity", "-1e1000000", "text", "`quantity` value `-1e1000000` is too large"),
    ("csv", "gpus", DIGITS, "text", f"`gpus` value `{SHOWN}` is too large"),
    # digits of other scripts are no number a reader takes, not a number too large
    ("csv", "price", "\u0662.10", "text", "`price` value `\u0662.10` is not a number"),
    ("csv", "amount", "1.5e\u0661", "text", "`amount` value `1.5e\u0661` is not a number"),
    ("csv", "gpus", "\uff18", "text", "`gpus` value `\uff18` is not a whole number"),
    ("csv", "step", DIGITS, "text", f"`step` value `{SHOWN}` is too large"),
    ("csv", "step", "9223372036854775808", "text", "value `9223372036854775808` is too large"),
    ("ndjson", "price", "1e1000000", "text", "`price` value `1e1000000` is too large"),
    ("ndjson", "amount", DIGITS, "text", f"`amount` value `{SHOWN}` is too large"),
    ("ndjson", "price", "1e1000000", "raw", "`price` value `1e1000000` is too large"),
    ("ndjson", "price", "-1e1000000", "raw", "`price` value `-1e1000000` is too large"),
    ("ndjson", "price", "1e-1000000", "raw", "value `1e-1000000` has more than 18 decimal places"),
    ("ndjson", "price", "NaN", "raw", "`price` value `NaN` is not a number"),
    ("ndjson", "quantity", "Infinity", "raw", "`quantity` value `Infinity` is not a number"),
    ("ndjson", "gpus", DIGITS, "raw", f"`gpus` value `{SHOWN}` is too large"),
    ("ndjson", "step", "1" * 40, "raw", f"`step` value `{'1' * 40}` is too large"),
    ("parquet", "price", pl.Series([Decimal(MAX_38)], dtype=pl.Decimal(38, 0)), "typed",
     f"`price` value `{MAX_38}` is too large"),
    ("parquet", "amount", pl.Series([Decimal(-MAX_38)], dtype=pl.Decimal(38, 0)), "typed",
     f"`amount` value `-{MAX_38}` is too large"),
    ("parquet", "price", pl.Series([float("inf")]), "typed", "`price` value `inf` is not a number"),
    ("parquet", "price", pl.Series([float("nan")]), "typed", "`price` value `NaN` is not a number"),
    ("parquet", "price", pl.Series([1e300]), "typed", "`price` value `1e+300` is too large"),
    ("parquet", "gpus", pl.Series([2**64 - 1], dtype=pl.UInt64), "typed",
     "`gpus` value `18446744073709551615` is too large"),
    ("parquet", "step", pl.Series([2**64 - 1], dtype=pl.UInt64), "typed",
     "`step` value `18446744073709551615` is too large"),
    ("parquet", "gpus", pl.Series([float("nan")]), "typed",
     "`gpus` value `NaN` is not a whole number"),
    ("parquet", "step", pl.Series([1e300]), "typed", "`step` value `1e+300` is too large"),
]  # fmt: skip


def unreadable_trace(tmp_path: Path, kind: str, column: str, value: Any, how: str) -> Path:
    path = tmp_path / f"t.{kind}"
    if kind == "parquet":
        return parquet_trace(path, column, value)
    return text_trace(path, column, value, raw=how == "raw")


def test_the_trace_those_numbers_go_in_is_valid(tmp_path: Path) -> None:
    for kind in ("csv", "ndjson"):
        result = run("trace", "validate", text_trace(tmp_path / f"t.{kind}", "price", "2.10"))
        assert result.exit_code == 0, result.output
    path = parquet_trace(tmp_path / "t.parquet", "price", pl.Series([Decimal("2.10")]))
    assert run("trace", "validate", path).exit_code == 0


@pytest.mark.parametrize("command", ["validate", "evaluate", "reconcile"])
@pytest.mark.parametrize(
    ("kind", "column", "value", "how", "message"),
    UNREADABLE,
    ids=[
        f"{k}-{c}-{v.dtype if isinstance(v, pl.Series) else v[:12]}" for k, c, v, _, _ in UNREADABLE
    ],
)
def test_a_number_no_reader_holds_is_an_error_on_its_row(
    tmp_path: Path, command: str, kind: str, column: str, value: Any, how: str, message: str
) -> None:
    """`decimal.Overflow` (`1e1000000`), Python's limit on the digits of an int (5,000), a
    JSON number beyond a double, an unsigned 64-bit value: each was exit 3, or a value
    silently missing (a `step` of 2⁶⁴ − 1 read as none)."""
    trace = unreadable_trace(tmp_path, kind, column, value, how)
    spot = tmp_path / "c.spot"
    spot.write_text(CONTRACT)
    args = {
        "validate": ("trace", "validate", trace),
        "evaluate": ("evaluate", spot, trace),
        "reconcile": ("reconcile", spot, trace),
    }[command]
    result = run(*args)
    assert "Traceback" not in result.output
    assert result.exit_code == 2, result.output
    assert f"{trace}: row {ROW_OF[column]}: error[T002]: " in result.stderr
    assert message in result.stderr


def test_an_extra_column_of_digits_of_another_script_is_text(tmp_path: Path) -> None:
    """An extra column whose values are Arabic-Indic digits (a job named `١٢٣`) was typed as
    decimals by polars' Unicode `\\d`, and every value of it was then T002 `is too large`."""
    rows = [dict(r) for r in ROWS]
    rows[0]["job_name"] = "\u0661\u0662\u0663"
    header = [*HEADER, "job_name"]
    path = tmp_path / "t.csv"
    lines = [",".join(header), *(",".join(r.get(h, "") for h in header) for r in rows)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    trace = load_trace(path)
    assert trace.events.schema["job_name"] == pl.String
    assert trace.events["job_name"].to_list()[0] == "\u0661\u0662\u0663"
