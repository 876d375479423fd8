"""One test per validation rule (codes T001–T019, W101, W102), the bad path and the good one.

Row numbers are 1-based data rows in file order; a diagnostic for row N has ``span.line == N``
and renders as ``file: row N: error[CODE]: message``.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from support import events
from support.events import T0, schema, started
from support.events import event as ev

from contractlang.codes import CODES
from contractlang.diagnostics import Diagnostic
from contractlang.errors import ContractlangError
from contractlang.trace import asof, load_trace
from contractlang.trace.model import Trace
from contractlang.trace.problems import TraceInvalid

#: The trace's columns without the optional `sku` and `zone` (the package's types).
SCHEMA = schema(without=("sku", "zone"))


def start(run: str, alloc: str, minute: float, gpus: int = 8) -> dict[str, Any]:
    return started(run, alloc, minute, gpus)


def frame(rows: list[dict[str, Any]], schema: dict[str, pl.DataType] | None = None) -> pl.DataFrame:
    return events.frame(rows, schema or SCHEMA)


def valid_rows() -> list[dict[str, Any]]:
    return [
        ev("r1", None, 0, "requested"),  # row 1
        ev("r1", "a1", 1, "requested"),  # row 2: its own request, before its start
        start("r1", "a1", 5),  # row 3
        ev("r1", "a1", 10, "notice"),  # row 4
        ev("r1", None, 12, "checkpoint", step=10),  # row 5
        ev("r1", "a1", 20, "reclaimed", step=12),  # row 6
        ev("r1", "a1", 600, "charge", quantity=Decimal("2"), amount=Decimal("4.20")),  # row 7
        ev("r1", None, 700, "accepted"),  # row 8
    ]


def load(rows: list[dict[str, Any]], **kw: Any) -> Trace:
    return load_trace(frame(rows), **kw)


def problems(data: pl.DataFrame | list[dict[str, Any]], **kw: Any) -> list[Diagnostic]:
    df = data if isinstance(data, pl.DataFrame) else frame(data)
    with pytest.raises(ContractlangError) as info:
        load_trace(df, **kw)
    return info.value.diagnostics


def found(diags: list[Diagnostic]) -> list[tuple[str, int]]:
    """(code, row) of each error, in order."""
    return [(d.code, d.span.line) for d in diags if d.is_error]


def test_the_base_trace_is_valid() -> None:
    trace = load(valid_rows())
    assert trace.warnings == ()
    assert trace.summary.rows_read == 8
    assert trace.summary.allocations == 1


# --------------------------------------------------------------------------- columns and types


@pytest.mark.parametrize("column", ["run_id", "alloc_id", "ts", "source", "event", "gpus"])
def test_t001_missing_required_column(column: str) -> None:
    diags = problems(frame(valid_rows()).drop(column))
    assert found(diags) == [("T001", 0)]
    assert diags[0].message == f"missing required column `{column}`"
    assert diags[0].headline() == f"<frame>: error[T001]: missing required column `{column}`"


def test_t001_suggests_a_close_column_name() -> None:
    diags = problems(frame(valid_rows()).rename({"event": "events"}))
    assert diags[0].help == "did you mean `events`?"


def test_optional_columns_may_be_absent() -> None:
    rows = [start("r1", "a1", 0), ev("r1", "a1", 9, "released")]
    df = frame(rows).select("run_id", "alloc_id", "ts", "source", "event", "gpus")
    trace = load_trace(df)
    assert trace.summary.allocations == 1
    assert trace.extras == ()


def test_t002_column_of_the_wrong_type() -> None:
    df = frame(valid_rows()).with_columns(
        pl.col("ts").dt.epoch("s"), pl.col("run_id").cast(pl.Float64, strict=False)
    )
    diags = problems(df)
    assert found(diags) == [("T002", 0), ("T002", 0)]
    messages = sorted(d.message for d in diags)
    assert messages == [
        "`run_id` must hold text, not floating-point numbers",
        "`ts` must hold timestamps with a time zone or ISO 8601 text, not integers",
    ]


def test_t002_value_of_the_wrong_type() -> None:
    schema = SCHEMA | {"gpus": pl.String(), "valid": pl.String(), "price": pl.String()}
    rows = valid_rows()
    rows[2] = rows[2] | {"gpus": "eight", "price": "2.1234567890123456789"}  # row 3
    rows[4] = rows[4] | {"valid": "maybe"}  # row 5
    diags = problems(frame(rows, schema))
    assert found(diags) == [("T002", 3), ("T002", 3), ("T002", 5)]
    assert [d.message for d in diags] == [
        "`gpus` value `eight` is not a whole number",
        "`price` value `2.1234567890123456789` has more than 18 decimal places",
        "`valid` value `maybe` is not true or false",
    ]


def test_t002_unknown_capacity_suggests_the_closest() -> None:
    rows = valid_rows()
    rows[2]["capacity"] = "on-demand"
    diags = problems(rows)
    assert found(diags) == [("T002", 3)]
    assert diags[0].message == "unknown capacity `on-demand`"
    assert diags[0].help == "did you mean `on_demand`?"


# --------------------------------------------------------------------------- sources and events


def test_t003_unknown_source() -> None:
    rows = valid_rows()
    rows[0]["source"] = "schedular"
    diags = problems(rows)
    assert found(diags) == [("T003", 1)]
    assert diags[0].message == "unknown source `schedular`"
    assert diags[0].help == "did you mean `scheduler`?"
    assert diags[0].headline() == "<frame>: row 1: error[T003]: unknown source `schedular`"


def test_t004_unknown_event() -> None:
    rows = valid_rows()
    rows[5]["event"] = "reclaim"
    diags = problems(rows)
    # the allocation's other problems (it now never ends) are not reported as a cascade
    assert found(diags) == [("T004", 6)]
    assert diags[0].message == "unknown event `reclaim`"
    assert diags[0].help == "did you mean `reclaimed`?"


def test_t004_a_word_far_from_any_event_lists_them() -> None:
    rows = valid_rows()
    rows[7]["event"] = "shipped"
    diags = problems(rows)
    assert diags[0].help is not None
    assert diags[0].help.startswith("expected one of `requested`, `started`")


def test_t005_event_from_the_wrong_source() -> None:
    rows = valid_rows()
    rows[4]["source"] = "scheduler"  # a checkpoint is the job's
    diags = problems(rows)
    assert found(diags) == [("T005", 5)]
    assert diags[0].message == "`checkpoint` events come from `job`, not `scheduler`"


# --------------------------------------------------------------------------- timestamps


def _text_ts(rows: list[dict[str, Any]]) -> pl.DataFrame:
    df = frame(rows)
    return df.with_columns(pl.col("ts").dt.strftime("%Y-%m-%dT%H:%M:%SZ"))


def test_t006_naive_timestamp_text_is_rejected() -> None:
    df = _text_ts(valid_rows())
    df = df.with_columns(
        pl.when(pl.int_range(pl.len()) == 3)
        .then(pl.lit("2025-01-01T00:10:00"))
        .otherwise(pl.col("ts"))
        .alias("ts")
    )
    diags = problems(df)
    assert found(diags) == [("T006", 4)]
    assert diags[0].message == "timestamp `2025-01-01T00:10:00` has no UTC offset"


def test_t006_text_that_is_not_a_timestamp() -> None:
    df = _text_ts(valid_rows()).with_columns(
        pl.when(pl.int_range(pl.len()) == 0).then(pl.lit("yesterday")).otherwise("ts").alias("ts")
    )
    diags = problems(df)
    assert found(diags) == [("T006", 1)]
    assert diags[0].message == "timestamp `yesterday` is not ISO 8601 with an offset"


def test_t006_a_naive_timestamp_column_is_rejected(tmp_path: Path) -> None:
    path = tmp_path / "naive.parquet"
    frame(valid_rows()).with_columns(pl.col("ts").dt.replace_time_zone(None)).write_parquet(path)
    diags = problems_at(path)
    assert found(diags) == [("T006", 0)]
    assert diags[0].message == "`ts` holds timestamps without a time zone"


def problems_at(path: Path, **kw: Any) -> list[Diagnostic]:
    with pytest.raises(ContractlangError) as info:
        load_trace(path, **kw)
    return info.value.diagnostics


def test_open_at_must_have_an_offset() -> None:
    with pytest.raises(ContractlangError) as info:
        load(valid_rows(), open_at=datetime(2025, 1, 1))
    (d,) = info.value.diagnostics
    assert (d.code, d.message) == ("T006", "`open_at` needs a UTC offset")


# --------------------------------------------------------------------------- allocation rules


def test_t007_allocation_started_twice() -> None:
    rows = valid_rows()
    rows.insert(3, start("r1", "a1", 6))  # row 4
    diags = problems(rows)
    assert found(diags) == [("T007", 4)]
    assert diags[0].message == "allocation `a1` starts again; it started at row 3"


def test_t008_allocation_ended_more_than_once() -> None:
    rows = valid_rows()
    rows.append(ev("r1", "a1", 25, "released"))  # row 9
    diags = problems(rows)
    assert found(diags) == [("T008", 9)]
    assert diags[0].message == (
        "allocation `a1` ends again (`released`); it ended at row 6 (`reclaimed`)"
    )


def test_t009_end_before_start() -> None:
    rows = valid_rows()
    rows[5]["ts"] = T0 + timedelta(minutes=4)  # reclaimed at 4, started at 5
    diags = problems(rows)
    assert ("T009", 6) in found(diags)
    t009 = next(d for d in diags if d.code == "T009")
    assert t009.message == (
        "allocation `a1` ends at 2025-01-01T00:04:00Z, before it starts at "
        "2025-01-01T00:05:00Z (row 3)"
    )


def test_t009_open_at_before_an_open_allocations_start() -> None:
    rows = [start("r1", "a1", 5)]
    diags = problems(rows, open_at=T0)
    assert found(diags) == [("T009", 1)]
    assert "starts after `--open-at`" in diags[0].message


@pytest.mark.parametrize(
    ("row", "message"),
    [
        (
            ev("r1", "a1", 4, "notice"),
            "`notice` of allocation `a1` at 2025-01-01T00:04:00Z is outside its lifetime "
            "(2025-01-01T00:05:00Z to 2025-01-01T00:20:00Z)",
        ),
        (
            ev("r1", "a1", 21, "checkpoint", step=1),
            "`checkpoint` of allocation `a1` at 2025-01-01T00:21:00Z is outside its lifetime "
            "(2025-01-01T00:05:00Z to 2025-01-01T00:20:00Z)",
        ),
        (
            ev("r1", "a1", 6, "requested"),
            "`requested` for allocation `a1` at 2025-01-01T00:06:00Z comes after its start "
            "(2025-01-01T00:05:00Z)",
        ),
        (
            ev("r1", "a1", 4, "charge", amount=Decimal("1")),
            "invoice line for allocation `a1` at 2025-01-01T00:04:00Z comes before its start "
            "(2025-01-01T00:05:00Z)",
        ),
    ],
)
def test_t010_event_outside_the_allocations_lifetime(row: dict[str, Any], message: str) -> None:
    rows = [*valid_rows(), row]  # row 9
    diags = problems(rows)
    assert found(diags) == [("T010", 9)]
    assert diags[0].message == message


def test_t010_events_at_the_edges_of_the_lifetime_are_inside() -> None:
    rows = [
        *valid_rows(),
        ev("r1", "a1", 5, "progress", step=0),  # at the start
        ev("r1", "a1", 20, "checkpoint", step=12),  # at the end
        ev("r1", "a1", 5, "requested"),  # its own request at its start
        ev("r1", "a1", 20, "credit", amount=Decimal("-1.00")),  # invoice at its end
    ]
    assert load(rows).summary.rows_read == 12


@pytest.mark.parametrize("gpus", [0, -8])
def test_t011_gpus_not_positive(gpus: int) -> None:
    rows = valid_rows()
    rows[2]["gpus"] = gpus
    diags = problems(rows)
    assert found(diags) == [("T011", 3)]
    assert diags[0].message == f"`gpus` must be positive, not `{gpus}`"


def test_t012_duplicate_row() -> None:
    rows = valid_rows()
    rows.append(dict(rows[4]))  # row 9 repeats row 5 (a checkpoint)
    rows.append(rows[4] | {"step": 11})  # differs in one column: not a duplicate
    diags = problems(rows)
    assert found(diags) == [("T012", 9)]
    assert diags[0].message == "this row repeats row 5 exactly"


def test_t013_allocation_under_two_runs() -> None:
    rows = valid_rows()
    rows[3]["run_id"] = "r2"  # the notice names another run
    diags = problems(rows)
    assert found(diags) == [("T013", 4)]
    assert diags[0].message == (
        "allocation `a1` belongs to run `r1` (started at row 3), but this row names run `r2`"
    )


def test_t014_allocation_never_ends() -> None:
    rows = [r for r in valid_rows() if r["event"] != "reclaimed"]
    diags = problems(rows)
    assert found(diags) == [("T014", 3)]
    assert diags[0].message == "allocation `a1` never ends"
    assert diags[0].help is not None
    assert "--open-at" in diags[0].help


def test_t014_open_at_closes_open_allocations() -> None:
    rows = [r for r in valid_rows() if r["event"] != "reclaimed"]
    trace = load(rows, open_at=T0 + timedelta(hours=1))
    assert trace.summary.closed_at_open_at == 1


@pytest.mark.parametrize(
    ("change", "row", "message"),
    [
        ({"run_id": None}, 1, "missing `run_id`"),
        ({"ts": None}, 1, "missing `ts`"),
        ({"event": None}, 1, "missing `event`"),
        ({"source": None}, 1, "missing `source`"),
    ],
)
def test_t015_missing_required_value(change: dict[str, Any], row: int, message: str) -> None:
    rows = valid_rows()
    rows[row - 1] = rows[row - 1] | change
    diags = problems(rows)
    assert found(diags) == [("T015", row)]
    assert diags[0].message == message


def test_t015_missing_values_an_event_needs() -> None:
    rows = valid_rows()
    rows[2]["gpus"] = None  # row 3: started without gpus
    rows[3]["alloc_id"] = None  # row 4: notice without alloc_id
    rows[6]["amount"] = None  # row 7: charge without amount
    diags = problems(rows)
    assert found(diags) == [("T015", 3), ("T015", 4), ("T015", 7)]
    assert [d.message for d in diags] == [
        "`started` needs `gpus`",
        "`notice` needs an `alloc_id`",
        "invoice line `charge` needs an `amount`",
    ]


def test_t016_allocation_events_without_a_start() -> None:
    rows = [*valid_rows(), ev("r1", "a9", 8, "progress", step=3), ev("r1", "a9", 9, "failed")]
    diags = problems(rows)
    assert found(diags) == [("T016", 9)]  # once per allocation, at its first row
    assert diags[0].message == "allocation `a9` has events but never starts"


def test_t016_a_request_that_never_started_is_fine() -> None:
    trace = load([*valid_rows(), ev("r1", "a9", 30, "requested")])
    assert trace.summary.allocations == 1


def test_t018_reserved_column_name() -> None:
    diags = problems(frame(valid_rows()).with_columns(pl.lit(1).alias("row")))
    assert found(diags) == [("T018", 0)]
    assert "`row`" in diags[0].message


# --------------------------------------------------------------------------- many problems


def test_t019_problems_beyond_the_limit_are_counted() -> None:
    rows = [ev("r1", None, i, "progres", step=i) for i in range(120)]  # 120 unknown events
    diags = problems(rows, max_problems=10)
    errors = [d for d in diags if d.code == "T004"]
    assert [d.span.line for d in errors] == list(range(1, 11))  # the first 10, by row
    (note,) = [d for d in diags if d.code == "T019"]
    assert note.message == "found 120 problems; the first 10 are shown"


def test_every_problem_is_reported_not_just_the_first() -> None:
    rows = valid_rows()
    rows[0]["source"] = "nobody"  # row 1: T003
    rows[2]["gpus"] = -1  # row 3: T011
    rows.append(dict(rows[7]))  # row 9: T012 (repeats row 8)
    diags = problems(rows)
    assert found(diags) == [("T003", 1), ("T011", 3), ("T012", 9)]


# --------------------------------------------------------------------------- bad values


def invalid(data: pl.DataFrame | list[dict[str, Any]], **kw: Any) -> TraceInvalid:
    df = data if isinstance(data, pl.DataFrame) else frame(data)
    with pytest.raises(TraceInvalid) as info:
        load_trace(df, **kw)
    return info.value


def test_a_bad_value_hides_no_other_error_of_its_allocation() -> None:
    rows = [
        start("r1", "a1", 5),  # row 1
        start("r1", "a1", 6),  # row 2: T007, a1 started at row 1
        ev("r1", "a1", 20, "released"),  # row 3
        ev("r1", "a1", 30, "reclaimed"),  # row 4: T008, a1 ended at row 3
        # row 5: T002 (`valid`), and T013: a1 is r1's; at minute 10 it is inside a1's lifetime
        # (5 to 20), so no T010
        ev("r2", "a1", 10, "checkpoint", step=1, valid="maybe"),
    ]
    exc = invalid(frame(rows, SCHEMA | {"valid": pl.String()}))
    assert found(exc.diagnostics) == [("T007", 2), ("T008", 4), ("T002", 5), ("T013", 5)]
    assert exc.diagnostics[3].message == (
        "allocation `a1` belongs to run `r1` (started at row 1), but this row names run `r2`"
    )
    # 5 rows; 4 errors on rows 2, 4 and 5
    assert (exc.rows, exc.errors, exc.error_rows, exc.warnings) == (5, 4, 3, 0)


def test_gpus_zero_on_the_start_hides_no_end_before_start() -> None:
    rows = [start("r1", "a2", 5, gpus=0), ev("r1", "a2", 4, "released")]
    diags = problems(rows)
    assert found(diags) == [("T011", 1), ("T009", 2)]  # ends at minute 4, starts at 5


def test_an_unknown_event_skips_only_never_ends_for_its_allocation() -> None:
    rows = valid_rows()
    rows[3]["ts"] = T0 + timedelta(minutes=4)  # row 4: the notice, before the start at 5: T010
    rows[5]["event"] = "reclaim"  # row 6: T004; it may be the end, so no T014 for a1
    diags = problems(rows)
    assert found(diags) == [("T010", 4), ("T004", 6)]


def test_an_unknown_event_skips_never_starts_for_its_allocation() -> None:
    rows = [*valid_rows(), ev("r1", "a9", 30, "strated"), ev("r1", "a9", 40, "released")]
    assert found(problems(rows)) == [("T004", 9)]  # row 10 is not T016: row 9 may be its start


def _ts_of(df: pl.DataFrame, text: dict[int, str]) -> pl.DataFrame:
    """The frame with `ts` as ISO text, and the given rows (1-based) set to other text."""
    df = df.with_columns(pl.col("ts").dt.strftime("%Y-%m-%dT%H:%M:%SZ"))
    for row, value in text.items():
        df = df.with_columns(
            pl.when(pl.int_range(pl.len()) == row - 1)
            .then(pl.lit(value))
            .otherwise("ts")
            .alias("ts")
        )
    return df


def test_an_unreadable_start_time_skips_only_the_time_rules() -> None:
    rows = [
        start("r1", "a1", 5),  # row 1: its `ts` becomes `yesterday`: T006
        ev("r1", "a1", 4, "released"),  # row 2: before or after the start? cannot tell: no T009
        ev("r1", "a1", 3, "notice"),  # row 3: inside the lifetime? cannot tell: no T010
        ev("r2", "a1", 4, "progress", step=1),  # row 4: under another run: T013 all the same
    ]
    diags = problems(_ts_of(frame(rows), {1: "yesterday"}))
    assert found(diags) == [("T006", 1), ("T013", 4)]


def test_a_start_with_an_unreadable_time_still_counts_as_a_start() -> None:
    rows = [start("r1", "a1", 0), start("r1", "a1", 5), ev("r1", "a1", 20, "released")]
    diags = problems(_ts_of(frame(rows), {1: "yesterday"}))
    # two starts: the one that cannot be placed in time is the second
    assert found(diags) == [("T006", 1), ("T007", 1)]
    assert diags[1].message == "allocation `a1` starts again; it started at row 2"


def test_an_allocation_whose_only_start_has_an_unreadable_time_never_ends() -> None:
    rows = [start("r1", "a1", 5), ev("r1", None, 6, "accepted")]
    df = _ts_of(frame(rows), {1: "soon"})
    assert found(problems(df)) == [("T006", 1), ("T014", 1)]  # it has no end at all
    # with --open-at it is closed there; whether it started after that cannot be told
    assert found(problems(df, open_at=T0)) == [("T006", 1)]


def test_a_bad_amount_is_not_a_missing_amount() -> None:
    rows = valid_rows()
    rows[6]["amount"] = "12,5"  # row 7: the charge
    diags = problems(frame(rows, SCHEMA | {"amount": pl.String()}))
    assert found(diags) == [("T002", 7)]  # not also "invoice line `charge` needs an `amount`"


def test_a_checkpoint_with_a_bad_valid_is_left_out_of_rollbacks() -> None:
    rows = valid_rows()
    # row 6: step 8 < 10 (row 5) would be W101 if it were valid; its validity is unknown
    rows.insert(5, ev("r1", None, 13, "checkpoint", step=8, valid="maybe"))
    exc = invalid(frame(rows, SCHEMA | {"valid": pl.String()}))
    assert [(d.code, d.span.line) for d in exc.diagnostics] == [("T002", 6)]
    assert exc.warnings == 0


def test_problems_beyond_the_limit_are_counted_with_their_rows() -> None:
    # 12 rows with an unknown event (T004 each), and row 13 a start with gpus 0 (T011)
    rows = [ev("r1", None, i, "progres", step=i) for i in range(12)]
    rows.append(start("r1", "a1", 20, gpus=0) | {"event": "started"})
    rows.append(ev("r1", "a1", 30, "released"))
    exc = invalid(rows, max_problems=5)
    assert len([d for d in exc.diagnostics if d.code != "T019"]) == 5
    assert (exc.rows, exc.errors, exc.error_rows) == (14, 13, 13)  # 12 + 1 errors, rows 1–13


# --------------------------------------------------------------------------- warnings


def test_w101_a_rollback_is_a_warning_not_an_error() -> None:
    rows = valid_rows()
    rows.insert(5, ev("r1", None, 13, "checkpoint", step=8))  # row 6: 8 < 10 at row 5
    rows.insert(6, ev("r1", None, 14, "checkpoint", step=9, valid=False))  # invalid: ignored
    trace = load(rows)
    assert [(w.code, w.span.line) for w in trace.warnings] == [("W101", 6)]
    assert trace.warnings[0].message == (
        "checkpoint step 8 is below an earlier valid checkpoint's step 10"
    )
    assert trace.summary.warnings == 1


@pytest.mark.parametrize("packed", [True, False], ids=["packed keys", "unpacked"])
def test_w101_follows_time_not_file_order(packed: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    if not packed:  # as when (run, time) or (run, step) does not fit 62 bits
        monkeypatch.setattr(asof, "MAX_KEY_BITS", 0)
    rows = valid_rows()
    # row 5 is the checkpoint at minute 12 with step 10; insert, before it in the file, one at
    # minute 13 with step 8 (row 5), and one at minute 11 with step 9 (row 6)
    rows.insert(4, ev("r1", None, 13, "checkpoint", step=8))
    rows.insert(5, ev("r1", None, 11, "checkpoint", step=9))
    trace = load(rows)
    # in time order: 9 (minute 11), 10 (minute 12), 8 (minute 13): only step 8 goes back
    assert [(w.code, w.span.line) for w in trace.warnings] == [("W101", 5)]
    assert trace.warnings[0].message.endswith("step 10")


def test_w101_no_warning_when_steps_only_go_up() -> None:
    rows = [*valid_rows(), ev("r1", None, 15, "checkpoint", step=10)]  # equal is not below
    assert load(rows).warnings == ()


def test_w102_float_money_is_read_by_its_shortest_text() -> None:
    df = frame(valid_rows()).with_columns(
        pl.col("amount").cast(pl.Float64), pl.col("price").cast(pl.Float64)
    )
    df = df.with_columns(
        pl.when(pl.col("event") == "started").then(pl.lit(2.1)).otherwise("price").alias("price")
    )
    trace = load_trace(df)
    assert sorted(w.code for w in trace.warnings) == ["W102", "W102"]
    started = trace.events.filter(pl.col("event") == "started")
    assert started["price"].item() == Decimal("2.1")  # not 2.100000000000000088…
    assert trace.events["price"].dtype == pl.Decimal(38, 18)


def test_every_trace_code_is_documented() -> None:
    doc = (Path(__file__).resolve().parents[1] / "docs" / "trace.md").read_text(encoding="utf-8")
    trace_codes = [c for c in CODES if c.startswith(("T", "W1"))]
    assert trace_codes
    missing = [c for c in trace_codes if f"| {c} |" not in doc]
    assert missing == []
