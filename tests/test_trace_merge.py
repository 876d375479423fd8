"""Several trace files read as one: an extra column holds one type in every file, or widens
without changing a value (whole numbers of any width; whole numbers with decimals); anything
else is T002 on the later file's row, naming both files and types (docs/trace.md, "Several
files, one trace"). Schema columns are read into the schema's types in every file."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from support.cli import no_traceback, run

from contractlang.trace import load_trace

CONTRACT = 'contract "c" {\n  currency USD\n  rate 2.10 USD per gpu_hour\n}\n'


def rows(run_id: str, values: tuple[Any, Any]) -> list[dict[str, Any]]:
    """One allocation of run ``run_id``: its start and its end, the extra `prio` on each."""
    alloc = run_id + "-a"
    return [
        {"run_id": run_id, "alloc_id": alloc, "ts": "2025-03-03T09:00:00Z",
         "source": "scheduler", "event": "started", "gpus": 8, "prio": values[0]},
        {"run_id": run_id, "alloc_id": alloc, "ts": "2025-03-03T10:00:00Z",
         "source": "scheduler", "event": "released", "gpus": None, "prio": values[1]},
    ]  # fmt: skip


def csv_file(path: Path, run_id: str, values: tuple[str, str]) -> Path:
    lines = ["run_id,alloc_id,ts,source,event,gpus,prio"]
    for r in rows(run_id, values):
        lines.append(",".join("" if v is None else str(v) for v in r.values()))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def ndjson_file(path: Path, run_id: str, values: tuple[Any, Any]) -> Path:
    text = "".join(json.dumps(r) + "\n" for r in rows(run_id, values))
    path.write_text(text, encoding="utf-8")
    return path


def parquet_file(path: Path, run_id: str, prio: pl.Series, **columns: pl.Series) -> Path:
    frame = pl.DataFrame(
        [{k: v for k, v in r.items() if k != "prio"} for r in rows(run_id, ("", ""))]
    )
    frame.with_columns(prio.alias("prio"), *(s.alias(k) for k, s in columns.items())).write_parquet(
        path
    )
    return path


def merged(tmp_path: Path, *files: Path) -> pl.DataFrame:
    out = tmp_path / "merged.parquet"
    result = run("trace", "merge", *files, "--out", out)
    no_traceback(result)
    assert result.exit_code == 0, result.output
    return pl.read_parquet(out)


def refused(tmp_path: Path, *files: Path) -> str:
    out = tmp_path / ("refused-" + "-".join(f.stem for f in files) + ".parquet")
    result = run("trace", "merge", *files, "--out", out)
    no_traceback(result)
    assert result.exit_code == 2, result.output
    assert not out.exists()
    return result.stderr


# --------------------------------------------------------------------------- conflicts


def test_numbers_in_one_file_and_booleans_in_another_are_a_type_error(tmp_path: Path) -> None:
    """They were merged as 1 and 0 without a word."""
    a = csv_file(tmp_path / "a.csv", "r1", ("1", "0"))
    b = ndjson_file(tmp_path / "b.ndjson", "r2", (True, False))
    said = refused(tmp_path, a, b)
    assert f"{b}: row 1: error[T002]: the column `prio` holds booleans in `{b}` but whole " in said
    assert f"numbers in `{a}`" in said
    # in the other order, the other file's row
    assert f"{a}: row 1: error[T002]: the column `prio` holds whole numbers in `{a}` but " in (
        refused(tmp_path, b, a)
    )


def test_numbers_and_text_are_a_type_error(tmp_path: Path) -> None:
    a = csv_file(tmp_path / "a.csv", "r1", ("1", "2"))
    b = csv_file(tmp_path / "b.csv", "r2", ("", "high"))  # its first value is on row 2
    said = refused(tmp_path, a, b)
    assert f"{b}: row 2: error[T002]: the column `prio` holds text in `{b}` but " in said
    assert "help: a column holds one type in every file" in said


def test_dates_and_text_are_a_type_error(tmp_path: Path) -> None:
    a = csv_file(tmp_path / "a.csv", "r1", ("2025-01-01", "soon"))
    b = parquet_file(tmp_path / "b.parquet", "r2", pl.Series([date(2025, 1, 1), None]))
    said = refused(tmp_path, a, b)
    assert f"the column `prio` holds dates in `{b}` but text in `{a}`" in said


def test_timestamps_in_other_units_say_so(tmp_path: Path) -> None:
    t = datetime(2025, 1, 1, tzinfo=UTC)
    a = parquet_file(tmp_path / "a.parquet", "r1", pl.Series([t, None]).dt.cast_time_unit("ns"))
    b = parquet_file(tmp_path / "b.parquet", "r2", pl.Series([t, None]))
    said = refused(tmp_path, a, b)
    assert (
        f"holds timestamps in microseconds (UTC) in `{b}` but timestamps in nanoseconds (UTC) "
        f"in `{a}`"
    ) in said


def test_every_command_reading_several_files_refuses_them_sharded_or_not(tmp_path: Path) -> None:
    a = csv_file(tmp_path / "a.csv", "r1", ("1", "0"))
    b = ndjson_file(tmp_path / "b.ndjson", "r2", (True, False))
    spot = tmp_path / "c.spot"
    spot.write_text(CONTRACT, encoding="utf-8")
    for args in (
        ("trace", "validate", a, b),
        ("evaluate", spot, a, b),
        ("evaluate", spot, a, b, "--shards", "2"),
        ("reconcile", spot, a, b),
    ):
        result = run(*args)
        no_traceback(result)
        assert result.exit_code == 2, (args, result.output)
        assert f"{b}: row 1: error[T002]: the column `prio` holds booleans" in result.stderr


# --------------------------------------------------------------------------- widenings


def test_whole_numbers_and_decimals_are_read_as_decimals_exactly(tmp_path: Path) -> None:
    a = csv_file(tmp_path / "a.csv", "r1", ("1", "2"))
    b = csv_file(tmp_path / "b.csv", "r2", ("1.5", ""))
    frame = merged(tmp_path, a, b)
    assert frame.schema["prio"] == pl.Decimal(38, 18)
    assert frame.get_column("prio").to_list() == [Decimal(1), Decimal(2), Decimal("1.5"), None]


def test_whole_numbers_of_any_width_are_read_together(tmp_path: Path) -> None:
    a = parquet_file(tmp_path / "a.parquet", "r1", pl.Series([5, None], dtype=pl.Int32))
    b = csv_file(tmp_path / "b.csv", "r2", ("1", "2"))
    frame = merged(tmp_path, a, b)
    assert frame.schema["prio"] == pl.Int64
    assert frame.get_column("prio").to_list() == [5, None, 1, 2]
    # an unsigned 64-bit value needs 128 bits beside signed ones: every value exact
    c = parquet_file(tmp_path / "c.parquet", "r3", pl.Series([2**64 - 1, None], dtype=pl.UInt64))
    frame = merged(tmp_path, c, b)
    assert frame.schema["prio"] == pl.Int128
    assert frame.get_column("prio").to_list() == [2**64 - 1, None, 1, 2]


def test_a_decimal_too_large_for_the_places_of_another_file_is_an_error_on_its_row(
    tmp_path: Path,
) -> None:
    # Decimal(38, 2) beside decimal text (18 places): read as Decimal(38, 18), whose 20 whole
    # digits hold 12.50 but not a 30-digit whole part
    small = pl.Series([Decimal("12.50"), None], dtype=pl.Decimal(38, 2))
    a = parquet_file(tmp_path / "a.parquet", "r1", small)
    b = csv_file(tmp_path / "b.csv", "r2", ("1.5", ""))
    frame = merged(tmp_path, a, b)
    assert frame.get_column("prio").to_list() == [Decimal("12.5"), None, Decimal("1.5"), None]
    wide = pl.Series([None, Decimal("1" * 30 + ".50")], dtype=pl.Decimal(38, 2))
    c = parquet_file(tmp_path / "c.parquet", "r3", wide)
    said = refused(tmp_path, c, b)
    assert f"{c}: row 2: error[T002]: `prio` value `{'1' * 30}.50` is too large" in said
    assert "help: `prio` is read as decimals of 38 digits, 18 after the point" in said


def test_a_column_with_no_value_in_a_file_takes_the_other_files_type(tmp_path: Path) -> None:
    a = csv_file(tmp_path / "a.csv", "r1", ("", ""))  # the export's column, never filled
    b = csv_file(tmp_path / "b.csv", "r2", ("1", "2"))
    for files in ((a, b), (b, a)):
        frame = merged(tmp_path, *files)
        assert frame.schema["prio"] == pl.Int64
        starts = frame.filter(pl.col("event") == "started")
        assert dict(starts.select("run_id", "prio").iter_rows()) == {"r1": None, "r2": 1}
    c = ndjson_file(tmp_path / "c.ndjson", "r3", (None, None))  # JSON null throughout
    assert merged(tmp_path, c, b).schema["prio"] == pl.Int64
    # a Parquet column has a type even with no value in it: booleans were T002 without a row
    # (no row holds one), floating point made the other file's whole numbers decimals
    for dtype in (pl.Boolean, pl.Float64, pl.Date):
        d = parquet_file(tmp_path / "d.parquet", "r4", pl.Series([None, None], dtype=dtype))
        for files in ((b, d), (d, b)):
            frame = merged(tmp_path, *files)
            assert frame.schema["prio"] == pl.Int64, dtype
            starts = frame.filter(pl.col("event") == "started")
            assert dict(starts.select("run_id", "prio").iter_rows()) == {"r2": 1, "r4": None}


def test_text_of_any_kind_is_text(tmp_path: Path) -> None:
    a = parquet_file(tmp_path / "a.parquet", "r1", pl.Series(["x", None], dtype=pl.Categorical))
    b = csv_file(tmp_path / "b.csv", "r2", ("high", "low"))
    frame = merged(tmp_path, a, b)
    assert frame.schema["prio"] == pl.String
    assert frame.get_column("prio").to_list() == ["x", None, "high", "low"]


def test_schema_columns_are_read_into_their_types_in_every_file(tmp_path: Path) -> None:
    """`gpus` as floats in one file and text in another, `price` as floats (W102) and as text:
    each file's values are read into the schema's types, so they always agree."""
    a = parquet_file(
        tmp_path / "a.parquet",
        "r1",
        pl.Series([1, None]),
        gpus=pl.Series([8.0, None]),
        price=pl.Series([2.1, None]),
    )
    b = csv_file(tmp_path / "b.csv", "r2", ("1", "2"))
    b.write_text(
        b.read_text().replace("gpus,prio", "gpus,prio,price").replace(",8,1\n", ",8,1,2.10\n")
        .replace(",,2\n", ",,2,\n"),
        encoding="utf-8",
    )  # fmt: skip
    trace = load_trace([a, b])
    starts = trace.as_frame().filter(pl.col("event") == "started")
    assert starts.get_column("gpus").to_list() == [8, 8]
    assert starts.get_column("price").to_list() == [Decimal("2.1"), Decimal("2.1")]


@pytest.mark.parametrize("suffix", [".csv", ".ndjson", ".parquet"])
def test_the_merged_file_reads_back_the_same(tmp_path: Path, suffix: str) -> None:
    a = csv_file(tmp_path / "a.csv", "r1", ("1", "2"))
    b = csv_file(tmp_path / "b.csv", "r2", ("1.5", ""))
    out = tmp_path / f"merged{suffix}"
    assert run("trace", "merge", a, b, "--out", out).exit_code == 0
    back = load_trace(out).as_frame().get_column("prio").to_list()
    assert back == [Decimal(1), Decimal(2), Decimal("1.5"), None]
