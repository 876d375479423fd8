"""Loading Parquet, CSV and NDJSON: types, time zones, exact decimals, extras, unreadable files,
and the summary that accounts for every row."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from contractlang.errors import ContractlangError
from contractlang.trace import derive_facts, generate_trace, load_trace, write_trace
from contractlang.trace.read import _invalid_utf8_at

HEADER = (
    "run_id,alloc_id,ts,source,event,gpus,capacity,price,step,valid,amount,pool,retries,ok,discount"
)
CSV_ROWS = [
    "r1,,2025-01-01T00:00:00Z,scheduler,requested,,,,,,,,,,",
    # 01:05 at +01:00 is 00:05 UTC
    "r1,a1,2025-01-01T01:05:00+01:00,scheduler,started,8,spot,2.10,,,,blue,3,true,0.25",
    # a space instead of T and an offset without a colon: 00:35 UTC
    "r1,,2025-01-01 00:35:00+0000,job,checkpoint,,,,100,true,,,,,",
    # 22:50 the day before at −02:00 is 00:50 UTC
    "r1,a1,2024-12-31T22:50:00.000-02:00,scheduler,reclaimed,,,,130,,,,,,",
    "r1,a1,2025-01-02T00:00:00Z,invoice,charge,,,,,,0.1,,,,",
    "r1,a1,2025-01-02T00:00:01Z,invoice,credit,,,,,,-0.123456789012345678,,,,",
    "r1,,2025-01-02T01:00:00Z,job,accepted,,,,,,,,,,",
]


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def csv_trace(tmp_path: Path) -> Path:
    return write(tmp_path, "trace.csv", "\n".join([HEADER, *CSV_ROWS]) + "\n")


def test_csv_loads_with_offsets_exact_decimals_and_typed_extras(tmp_path: Path) -> None:
    trace = load_trace(csv_trace(tmp_path))
    ev = trace.events
    assert ev["ts"].dtype == pl.Datetime("us", "UTC")
    t0 = datetime(2025, 1, 1, tzinfo=UTC)
    assert ev["ts"].to_list()[:4] == [
        t0,
        t0 + timedelta(minutes=5),
        t0 + timedelta(minutes=35),
        t0 + timedelta(minutes=50),
    ]
    assert ev["price"].dtype == pl.Decimal(38, 18)
    assert ev["price"][1] == Decimal("2.10")
    # exact, never through a float: 0.1 + (−0.123456789012345678) = −0.023456789012345678
    assert ev["amount"].sum() == Decimal("-0.023456789012345678")
    assert ev["row"].to_list() == [1, 2, 3, 4, 5, 6, 7]
    # extras are typed by their text
    assert ev["pool"].dtype == pl.String
    assert ev["retries"].dtype == pl.Int64
    assert ev["ok"].dtype == pl.Boolean
    assert ev["discount"].dtype == pl.Decimal(38, 18)
    assert trace.extras == ("discount", "ok", "pool", "price", "retries")

    allocations, runs = derive_facts(trace).collect()
    a1 = allocations.row(0, named=True)
    assert a1["runtime"] == timedelta(minutes=45)  # 00:50 − 00:05
    assert a1["queue_wait"] == timedelta(minutes=5)  # 00:05 − 00:00
    assert a1["replayed_time"] == timedelta(minutes=15)  # 00:50 − 00:35
    assert a1["replayed_steps"] == 30  # 130 − 100
    assert a1["trace.discount"] == Decimal("0.25")
    assert a1["trace.pool"] == "blue"
    assert runs["time_to_accept"].item() == timedelta(hours=25)  # 01:00 next day − 00:00


def test_ndjson_loads_with_exact_decimals(tmp_path: Path) -> None:
    lines = [
        {"run_id": "r1", "alloc_id": "a1", "ts": "2025-01-01T00:00:00+00:00",
         "source": "scheduler", "event": "started", "gpus": 8, "price": 2.10},
        {"run_id": "r1", "alloc_id": "a1", "ts": "2025-01-01T01:00:00Z",
         "source": "scheduler", "event": "released", "step": 10},
        {"run_id": "r1", "alloc_id": "a1", "ts": "2025-01-01T02:00:00Z", "source": "invoice",
         "event": "charge", "amount": "0.123456789012345678", "quantity": 8},
    ]  # fmt: skip
    path = write(tmp_path, "t.ndjson", "\n".join(json.dumps(x) for x in lines) + "\n")
    trace = load_trace(path)
    assert trace.events["price"][0] == Decimal("2.1")  # the JSON number 2.10, exactly
    assert trace.events["amount"][2] == Decimal("0.123456789012345678")
    assert trace.events["quantity"][2] == Decimal("8")
    allocations, _ = derive_facts(trace).collect()
    assert allocations["runtime"].item() == timedelta(hours=1)


def test_naive_timestamps_in_csv_are_rejected_with_their_rows(tmp_path: Path) -> None:
    rows = list(CSV_ROWS)
    rows[2] = rows[2].replace("2025-01-01 00:35:00+0000", "2025-01-01 00:35:00")
    with pytest.raises(ContractlangError) as info:
        load_trace(write(tmp_path, "t.csv", "\n".join([HEADER, *rows]) + "\n"))
    (d,) = info.value.diagnostics
    assert d.code == "T006"
    assert d.headline().endswith(
        "t.csv: row 3: error[T006]: timestamp `2025-01-01 00:35:00` has no UTC offset"
    )


def test_a_text_value_in_a_number_column_names_its_row(tmp_path: Path) -> None:
    rows = list(CSV_ROWS)
    rows[1] = rows[1].replace(",8,", ",8.5,")
    with pytest.raises(ContractlangError) as info:
        load_trace(write(tmp_path, "t.csv", "\n".join([HEADER, *rows]) + "\n"))
    (d,) = info.value.diagnostics
    assert (d.code, d.span.line, d.message) == (
        "T002",
        2,
        "`gpus` value `8.5` is not a whole number",
    )


def test_parquet_in_another_time_zone_is_converted(tmp_path: Path) -> None:
    df = generate_trace(3, seed=5)
    path = tmp_path / "t.parquet"
    df.with_columns(pl.col("ts").dt.convert_time_zone("Asia/Kolkata")).write_parquet(path)
    trace = load_trace(path)
    assert trace.events["ts"].dtype == pl.Datetime("us", "UTC")
    assert trace.events["ts"].to_list() == df["ts"].to_list()


@pytest.mark.parametrize("ext", [".csv", ".ndjson"])
def test_every_format_gives_the_same_facts(tmp_path: Path, ext: str) -> None:
    df = generate_trace(8, seed=11)
    write_trace(df, tmp_path / "t.parquet")
    write_trace(df, tmp_path / f"t{ext}")
    a_parquet, r_parquet = derive_facts(load_trace(tmp_path / "t.parquet")).collect()
    a_other, r_other = derive_facts(load_trace(tmp_path / f"t{ext}")).collect()
    assert a_parquet.equals(a_other)
    assert r_parquet.equals(r_other)


def test_a_lazy_frame_is_accepted() -> None:
    df = generate_trace(2, seed=2)
    assert load_trace(df.lazy()).summary.rows_read == df.height


# --------------------------------------------------------------------------- unreadable


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("t.txt", "x", "cannot read `{p}`: unknown trace format `.txt`"),
        ("t.csv", None, "cannot read `{p}`: no such file"),
        ("t.parquet", "not parquet at all", "cannot read `{p}` as Parquet: it is not a Parquet"),
        ("t.csv", "", "cannot read `{p}` as CSV: the file is empty"),
    ],
)
def test_t017_unreadable_trace(
    tmp_path: Path, name: str, content: str | None, message: str
) -> None:
    path = tmp_path / name
    if content is not None:
        path.write_text(content, encoding="utf-8")
    with pytest.raises(ContractlangError) as info:
        load_trace(path)
    (d,) = info.value.diagnostics
    assert d.code == "T017"
    assert d.message.startswith(message.format(p=path))
    assert "Error" not in d.message  # no Python class names


def test_t017_a_directory(tmp_path: Path) -> None:
    (tmp_path / "d.parquet").mkdir()
    with pytest.raises(ContractlangError) as info:
        load_trace(tmp_path / "d.parquet")
    assert info.value.diagnostics[0].message.endswith("not a file")


def test_t017_csv_that_is_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_bytes((HEADER + "\n").encode() + b"r1,,\xff\xfe,scheduler,requested,,,,,,,,,,\n")
    with pytest.raises(ContractlangError) as info:
        load_trace(path)
    (d,) = info.value.diagnostics
    assert (d.code, d.span.line) == ("T017", 1)  # data row 1
    # the header and its newline, then `r1,,` (4 bytes): the bad byte is at offset len + 4
    offset = len(HEADER) + 1 + 4
    assert d.message == f"cannot read `{path}`: invalid utf-8 at line 2, byte offset {offset}"
    assert d.headline().startswith(f"{path}: row 1: error[T017]")


def test_t017_invalid_utf8_row_counts_csv_rows_not_lines(tmp_path: Path) -> None:
    head = "run_id,alloc_id,ts,source,event,gpus,note\n"
    row1 = "r1,,2025-01-01T00:00:00Z,scheduler,requested,,plain\n"
    row2 = 'r1,,2025-01-01T00:01:00Z,scheduler,requested,,"two\nlines, ""quoted"""\n'
    row3 = "r1,,2025-01-01T00:02:00Z,scheduler,requested,,caf"
    path = tmp_path / "t.csv"
    path.write_bytes((head + row1 + row2 + row3).encode() + b"\xe9\n")  # Latin-1 é
    with pytest.raises(ContractlangError) as info:
        load_trace(path)
    (d,) = info.value.diagnostics
    # data row 3 is on line 5: line 1 the header, line 2 row 1, lines 3–4 row 2 (a quoted
    # newline); the bad byte follows all of row 3's text
    offset = len(head) + len(row1) + len(row2) + len(row3)
    assert d.span.line == 3
    assert d.message.endswith(f"invalid utf-8 at line 5, byte offset {offset:,}")


def test_t017_invalid_utf8_in_the_header(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_bytes(b"run_id,\xffalloc_id,ts,source,event,gpus\n")
    with pytest.raises(ContractlangError) as info:
        load_trace(path)
    (d,) = info.value.diagnostics
    assert d.span.line == 0  # a whole-file problem: no row
    # `run_id,` is 7 bytes
    assert d.message == f"cannot read `{path}`: invalid utf-8 in the header (line 1, byte offset 7)"


def test_invalid_utf8_is_found_across_chunks(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    # `é` (2 bytes) straddles the 1 MiB chunk boundary: valid; then a newline and a bad byte
    mib = 1 << 20
    path.write_bytes(b"a" * (mib - 1) + "é".encode() + b"\n" + b"\xff")
    # offset: (mib − 1) + 2 + 1; one newline before it: line 2; record 1
    assert _invalid_utf8_at(path) == (mib + 2, 2, 1)
    path.write_bytes(b"ab\xc3")  # cut short at the end of the file
    assert _invalid_utf8_at(path) == (2, 1, 0)
    path.write_bytes("ok\né\n".encode())
    assert _invalid_utf8_at(path) is None


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("junk.csv", "random", "not a CSV file (binary content)"),
        ("junk.ndjson", "random", "not an NDJSON file (binary content)"),
        ("t.csv", "parquet", "not a CSV file (binary content)"),
        ("t.csv", "utf16", "it is UTF-16 text, not UTF-8"),
    ],
)
def test_t017_binary_content_is_one_clear_error(
    tmp_path: Path, name: str, content: str, message: str
) -> None:
    path = tmp_path / name
    if content == "random":
        path.write_bytes(random.Random(7).randbytes(5000))
    elif content == "parquet":
        pl.DataFrame({"run_id": ["r1"], "event": ["started"]}).write_parquet(path)
    else:
        path.write_bytes((HEADER + "\n" + CSV_ROWS[0] + "\n").encode("utf-16"))
    with pytest.raises(ContractlangError) as info:
        load_trace(path)
    (d,) = info.value.diagnostics  # one error, not six missing columns
    assert (d.code, d.message) == ("T017", f"cannot read `{path}`: {message}")


def test_t017_a_csv_with_cr_only_line_endings_is_one_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "mac.csv"
    path.write_bytes(("\r".join([HEADER, *CSV_ROWS]) + "\r").encode())
    with pytest.raises(ContractlangError) as info:
        load_trace(path)  # not a header-only trace of 0 rows
    (d,) = info.value.diagnostics
    assert (d.code, d.message, d.help) == (
        "T017",
        f"cannot read `{path}`: its line endings are CR only (old Mac), not LF or CRLF",
        "save it as CSV with LF or CRLF line endings",
    )


def test_t017_a_csv_header_that_names_a_column_twice_names_it(tmp_path: Path) -> None:
    path = write(tmp_path, "t.csv", HEADER + ",gpus\n" + CSV_ROWS[0] + ",\n")
    with pytest.raises(ContractlangError) as info:
        load_trace(path)  # not a second column `gpus_duplicated_0`
    (d,) = info.value.diagnostics
    assert (d.code, d.message) == (
        "T017",
        f"cannot read `{path}`: the header names the column `gpus` more than once",
    )


def test_t017_ndjson_nested_too_deeply_names_its_line(tmp_path: Path) -> None:
    deep = '{"run_id": ' + "[" * 100_000 + "]" * 100_000 + "}"
    path = write(tmp_path, "t.ndjson", '{"run_id": "r1"}\n' + deep + "\n")
    with pytest.raises(ContractlangError) as info:
        load_trace(path)  # not a RecursionError
    (d,) = info.value.diagnostics
    assert (d.code, d.span.line) == ("T017", 2)
    assert d.message == (
        f"cannot read `{path}`: line 2 is not valid JSON: lists or objects nested too deeply"
    )


def test_t017_a_parquet_file_naming_a_column_twice_names_it(tmp_path: Path) -> None:
    path = tmp_path / "t.parquet"
    columns = [pa.array(["r1"]), pa.array(["8"]), pa.array(["8"])]
    pq.write_table(pa.table(columns, names=["run_id", "gpus", "gpus"]), path)
    with pytest.raises(ContractlangError) as info:
        load_trace(path)  # not "not a Parquet file, or it is damaged"
    (d,) = info.value.diagnostics
    assert (d.code, d.message) == (
        "T017",
        f"cannot read `{path}`: the file names the column `gpus` more than once",
    )


def test_text_with_accents_and_control_characters_is_not_binary(tmp_path: Path) -> None:
    # gpus … amount (6 columns) empty, then pool, then retries, ok, discount empty
    rows = ["r1,,2025-01-01T00:00:00Z,scheduler,requested" + "," * 7 + "café\tnoël,,,"]
    trace = load_trace(write(tmp_path, "t.csv", "\n".join([HEADER, *rows]) + "\r\n"))
    assert trace.events["pool"].item() == "café\tnoël"


def test_a_header_only_csv_is_an_empty_valid_trace(tmp_path: Path) -> None:
    trace = load_trace(write(tmp_path, "t.csv", HEADER + "\n"))
    assert (trace.summary.rows_read, trace.summary.runs, trace.summary.allocations) == (0, 0, 0)
    allocations, runs = derive_facts(trace).collect()
    assert (allocations.height, runs.height) == (0, 0)


# --------------------------------------------------------------------------- the summary


def test_the_summary_accounts_for_every_row(tmp_path: Path) -> None:
    extra = [
        "r1,a1,2025-01-01T00:10:00Z,job,progress,,,,50,,,,,,",
        "r1,a1,2025-01-01T00:11:00Z,job,restored,,,,0,,,,,,",
        "r1,,2025-01-01T00:12:00Z,job,checkpoint,,,,60,false,,,,,",
        "r2,,2025-01-01T00:00:00Z,scheduler,requested,,,,,,,,,,",
        "r2,,2025-01-01T03:00:00Z,job,rejected,,,,,,,,,,",
    ]
    path = write(tmp_path, "t.csv", "\n".join([HEADER, *CSV_ROWS, *extra]) + "\n")
    s = load_trace(path).summary
    assert s.rows_read == 12  # 7 + 5
    not_used = {n.reason: n.rows for n in s.not_used}
    assert not_used == {
        "restore events are informational": 1,
        "progress events are informational": 1,
        "rejections are informational": 1,
        "invoice lines are kept for reconciliation": 2,  # the charge and the credit
        "invalid checkpoints are skipped by `last_checkpoint`": 1,
    }
    assert s.rows_used == 6  # 12 − 6 not used
    assert s.rows_used + sum(not_used.values()) == s.rows_read
    assert (s.runs, s.allocations) == (2, 1)
    assert s.first_ts == datetime(2025, 1, 1, tzinfo=UTC)
    assert s.last_ts == datetime(2025, 1, 2, 1, tzinfo=UTC)
    assert s.events["checkpoint"] == 2
