"""The loaded trace's two frames (`Trace.dense`, `Trace.sparse`): the sparse columns and the
extras are kept only on the rows with a value in one of them, and `Trace.events` joins them
back to every row, as the input was."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import polars as pl
import pytest

from contractlang.trace import load_trace
from contractlang.trace import normalise as normalise_module
from contractlang.trace.schema import COLUMNS, DENSE_COLUMNS, ROW, RUN_KEY, SPARSE_COLUMNS


def _ts(hour: int) -> datetime:
    return datetime(2025, 1, 1, hour, tzinfo=UTC)


#: One run, one allocation: a sku on the start, an invoice line, a tag on one progress row,
#: a zone on a `notice` (legal, if odd), and rows with no sparse value at all.
ROWS = {
    "run_id": ["r1"] * 6,
    "alloc_id": ["a1", "a1", "a1", "a1", "a1", None],
    "ts": [_ts(h) for h in (0, 1, 2, 3, 3, 4)],
    "source": ["scheduler", "job", "scheduler", "scheduler", "invoice", "job"],
    "event": ["started", "progress", "notice", "reclaimed", "charge", "accepted"],
    "gpus": [8, None, None, None, None, None],
    "sku": ["H100", None, None, None, None, None],
    "zone": [None, None, "us-east-1a", None, None, None],
    "step": [None, 10, None, 12, None, None],
    "amount": [None, None, None, None, "12.50", None],
    "team": [None, "ml", None, None, None, None],
}


def test_sparse_holds_only_the_rows_with_a_value_and_events_joins_them_back() -> None:
    frame = pl.DataFrame(ROWS).with_columns(pl.col("amount").cast(pl.Decimal(38, 2)))
    trace = load_trace(frame)
    # the dense frame: every row, none of the sparse columns or extras
    assert trace.dense.height == 6
    assert set(trace.dense.columns) == {ROW, RUN_KEY, *DENSE_COLUMNS}
    # the sparse frame: rows 1 (sku), 2 (team), 3 (zone) and 5 (amount); rows 4 and 6
    # have no sparse value
    assert trace.sparse.columns == [ROW, *SPARSE_COLUMNS, "team"]
    assert trace.sparse.get_column(ROW).to_list() == [1, 2, 3, 5]
    # joined: the input's values on every row, in file order
    events = trace.events
    assert events.get_column(ROW).to_list() == [1, 2, 3, 4, 5, 6]
    assert events.get_column("sku").to_list() == ROWS["sku"]
    assert events.get_column("zone").to_list() == ROWS["zone"]
    assert events.get_column("team").to_list() == ROWS["team"]
    assert events.get_column("amount").to_list() == [
        None if a is None else Decimal(a) for a in ROWS["amount"]
    ]
    assert events.get_column("price").null_count() == 6  # absent: a null column of its type
    assert trace.columns == events.columns
    assert events.columns == [ROW, RUN_KEY, *COLUMNS, "team"]  # the schema's order, then extras


def test_several_files_number_their_sparse_rows_on(tmp_path: Path) -> None:
    frame = pl.DataFrame(ROWS).with_columns(pl.col("amount").cast(pl.Decimal(38, 2)))
    head, tail = tmp_path / "a.parquet", tmp_path / "b.csv"
    frame.head(3).write_parquet(head)
    frame.tail(3).drop("team").write_csv(tail)
    trace = load_trace([head, tail])
    # rows 1–3 from the first file, 4–6 from the second; the second has no `team`
    assert trace.sparse.get_column(ROW).to_list() == [1, 2, 3, 5]
    assert trace.events.get_column("team").to_list() == ROWS["team"]
    assert trace.events.get_column("sku").to_list() == ROWS["sku"]


@pytest.mark.parametrize("batch", [1, 2, 5, 1000])
def test_batches_of_any_size_give_the_same_frames(
    monkeypatch: pytest.MonkeyPatch, batch: int
) -> None:
    frame = pl.DataFrame(ROWS).with_columns(pl.col("amount").cast(pl.Decimal(38, 2)))
    whole = load_trace(frame)
    monkeypatch.setattr(normalise_module, "BATCH_ROWS", batch)
    cut = load_trace(frame)
    assert cut.dense.equals(whole.dense)
    assert cut.sparse.equals(whole.sparse)


def _one_run(run: str, hour: int) -> dict[str, list[object]]:
    return {
        "run_id": [run, run],
        "alloc_id": [f"{run}-a", f"{run}-a"],
        "ts": [_ts(hour), _ts(hour + 1)],
        "source": ["scheduler", "scheduler"],
        "event": ["started", "released"],
        "gpus": [8, None],
    }


def test_run_ids_are_held_as_keys_into_the_sorted_ids_of_every_file(tmp_path: Path) -> None:
    first, second = tmp_path / "a.csv", tmp_path / "b.csv"
    # first file: runs r2 then r1; second: r3 then r1 (r1's rows in both files)
    pl.concat([pl.DataFrame(_one_run("r2", 0)), pl.DataFrame(_one_run("r1", 2))]).write_csv(first)
    pl.concat([pl.DataFrame(_one_run("r3", 4)), pl.DataFrame(_one_run("r1x", 6))]).with_columns(
        pl.col("run_id").str.replace("r1x", "r1")
    ).with_columns(pl.col("alloc_id").str.replace("r1x", "r1b")).write_csv(second)
    trace = load_trace([first, second])
    assert "run_id" not in trace.dense.columns
    assert trace.run_ids.to_list() == ["r1", "r2", "r3"]
    # each row's key is its run's position in the sorted ids of both files together
    assert trace.dense.get_column(RUN_KEY).to_list() == [1, 1, 0, 0, 2, 2, 0, 0]
    assert trace.events.get_column("run_id").to_list() == [
        "r2",
        "r2",
        "r1",
        "r1",
        "r3",
        "r3",
        "r1",
        "r1",
    ]
