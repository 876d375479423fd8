"""Facts of hand-built traces, every expected value computed by hand from the definitions of
docs/trace.md ("Facts").

Times are minutes after 2025-01-01T00:00Z (``at(m)``); GPU-time is GPU-microseconds held as a
duration, so 8 GPUs × 85 minutes is ``timedelta(minutes=680)``.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from datetime import timedelta
from decimal import Decimal
from typing import Any

import polars as pl
import pytest
from support import events
from support.events import TRACE_SCHEMA, at
from support.events import event as ev
from support.events import started as start

from contractlang.lang.frames import ALLOCATION_SCHEMA, RUN_SCHEMA
from contractlang.trace import asof, derive_facts, generate_trace, load_trace

#: Whether :func:`facts` derives without what validation found (``Trace.index``).
WITHOUT_INDEX = False


@pytest.fixture(autouse=True, params=["packed keys", "by-run joins", "without the index"])
def asof_strategy(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every test runs with both ways of joining within a run (asof.Keys; the checkpoints'
    sort by run and time follows the same bound), and without the validation's index (its
    end rows and its checkpoints sorted by run)."""
    if request.param == "by-run joins":
        monkeypatch.setattr(asof, "MAX_KEY_BITS", 0)
    if request.param == "without the index":
        monkeypatch.setattr(sys.modules[__name__], "WITHOUT_INDEX", True)
    return str(request.param)


def mins(m: float) -> timedelta:
    return timedelta(minutes=m)


def frame(rows: list[dict[str, Any]], extra: dict[str, pl.DataType] | None = None) -> pl.DataFrame:
    return events.frame(rows, TRACE_SCHEMA | (extra or {}))


def facts(
    rows: list[dict[str, Any]], **kw: Any
) -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]]]:
    trace = load_trace(frame(rows), **kw)
    if WITHOUT_INDEX:
        trace = replace(trace, index=None)
    allocations, runs = derive_facts(trace).collect()
    return (
        {r["alloc_id"]: r for r in allocations.iter_rows(named=True)},
        {r["run_id"]: r for r in runs.iter_rows(named=True)},
    )


# --------------------------------------------------------------------------- the main story


STORY = [
    ev("r1", None, 0, "requested"),
    start("r1", "a1", 5),
    ev("r1", "a1", 35, "checkpoint", step=100),
    ev("r1", "a1", 65, "checkpoint", step=200),
    ev("r1", "a1", 89.5, "notice"),
    ev("r1", "a1", 89.8, "checkpoint", step=290, valid=False),  # cut short by the reclaim
    ev("r1", "a1", 90, "reclaimed", step=295),
    ev("r1", None, 90, "requested"),
    start("r1", "a2", 102),
    ev("r1", "a2", 104, "restored", step=200),  # resumes from the older snapshot
    ev("r1", "a2", 134, "checkpoint", step=300),
    ev("r1", "a2", 150, "released", step=350),
    ev("r1", None, 160, "accepted"),
    ev("r1", "a1", 200, "charge", quantity=Decimal("11.333333"), amount=Decimal("23.80")),
]


def test_reclaimed_just_before_a_checkpoint_resumes_from_an_older_snapshot() -> None:
    a, r = facts(STORY)
    a1, a2 = a["a1"], a["a2"]
    assert a1["attempt"] == 1
    assert a1["end_reason"] == "reclaimed"
    assert a1["runtime"] == mins(85)  # 90 − 5
    assert a1["gpu_time"] == mins(680)  # 8 × 85
    assert a1["queue_wait"] == mins(5)  # first allocation: 5 − the run's request at 0
    assert a1["notice_at"] == at(89.5)
    assert a1["notice_lead"] == timedelta(seconds=30)  # 90 − 89.5 minutes
    assert a1["replacement_wait"] == mins(12)  # a2 starts at 102; 102 − 90
    # the checkpoint at 89.8 is invalid, so the last valid one is at 65 (step 200)
    assert a1["last_checkpoint_at"] == at(65)
    assert a1["last_checkpoint_step"] == 200
    assert a1["end_step"] == 295
    assert a1["replayed_time"] == mins(25)  # 90 − max(5, 65)
    assert a1["replayed_steps"] == 95  # 295 − 200

    assert a2["attempt"] == 2
    assert a2["runtime"] == mins(48)  # 150 − 102
    assert a2["gpu_time"] == mins(384)  # 8 × 48
    # the run-level request at 90 is at the previous allocation's end: 102 − 90
    assert a2["queue_wait"] == mins(12)
    assert a2["notice_lead"] is None  # released, not reclaimed
    assert a2["replacement_wait"] is None
    assert a2["last_checkpoint_at"] == at(134)
    assert a2["replayed_time"] == timedelta(0)  # released
    assert a2["replayed_steps"] == 0

    run = r["r1"]
    assert run["accepted"] is True
    assert run["time_to_accept"] == mins(160)  # first accepted 160 − first requested 0
    assert (run["reclaims"], run["failures"], run["allocations"]) == (1, 0, 2)
    assert run["metered_gpu_time"] == mins(1064)  # 680 + 384
    assert run["lost_gpu_time"] == mins(200)  # 8 × 25
    assert run["lost_steps"] == 95
    assert run["first_start"] == at(5)
    assert run["last_end"] == at(150)


def test_a_reclaim_without_notice_has_zero_lead() -> None:
    a, _ = facts(
        [
            start("r1", "a1", 0),
            ev("r1", "a1", 30, "reclaimed"),
        ]
    )
    assert a["a1"]["notice_at"] is None
    assert a["a1"]["notice_lead"] == timedelta(0)  # docs/trace.md: 0 s when no notice came
    # no checkpoint at all: the whole runtime is replayed; no step on the end: none
    assert a["a1"]["replayed_time"] == mins(30)
    assert a["a1"]["replayed_steps"] is None


def test_several_notices_use_the_earliest() -> None:
    a, _ = facts(
        [
            start("r1", "a1", 0),
            ev("r1", "a1", 20, "notice"),
            ev("r1", "a1", 28, "notice"),
            ev("r1", "a1", 30, "reclaimed"),
        ]
    )
    assert a["a1"]["notice_at"] == at(20)
    assert a["a1"]["notice_lead"] == mins(10)  # 30 − 20 (not 30 − 28)


def test_a_failure_whose_checkpoint_predates_its_start_replays_everything() -> None:
    a, r = facts(
        [
            start("r1", "a1", 0, gpus=4),
            ev("r1", None, 10, "checkpoint", step=500),  # run-level: no alloc_id
            ev("r1", "a1", 20, "released", step=600),
            start("r1", "a2", 25, gpus=4),
            ev("r1", "a2", 26, "restored", step=500),
            ev("r1", "a2", 45, "failed", step=690),
            start("r1", "a3", 55, gpus=4),
            ev("r1", "a3", 80, "released", step=800),
        ]
    )
    a2 = a["a2"]
    assert a2["end_reason"] == "failed"
    assert a2["notice_lead"] is None  # not reclaimed
    assert a2["last_checkpoint_at"] == at(10)  # before a2 started
    assert a2["replayed_time"] == mins(20)  # 45 − max(25, 10): the whole runtime
    assert a2["replayed_steps"] == 190  # 690 − 500
    assert a2["replacement_wait"] == mins(10)  # a3 starts at 55; 55 − 45
    assert a2["queue_wait"] is None  # nothing was requested
    assert r["r1"]["failures"] == 1
    assert r["r1"]["lost_gpu_time"] == mins(80)  # 4 GPUs × 20
    assert r["r1"]["lost_steps"] == 190
    # released allocations replay nothing, whatever their checkpoints
    assert a["a1"]["replayed_time"] == timedelta(0)
    assert a["a1"]["replayed_steps"] == 0


def test_a_run_never_accepted() -> None:
    _, r = facts(
        [
            ev("r1", None, 0, "requested"),
            start("r1", "a1", 10),
            ev("r1", "a1", 70, "released", step=10),
            ev("r1", None, 80, "rejected"),
            ev("r2", None, 0, "requested"),  # a run that never got capacity
        ]
    )
    assert r["r1"]["accepted"] is False
    assert r["r1"]["time_to_accept"] is None
    r2 = r["r2"]
    assert (r2["accepted"], r2["allocations"], r2["reclaims"]) == (False, 0, 0)
    assert r2["metered_gpu_time"] == timedelta(0)
    assert r2["lost_steps"] == 0
    assert r2["first_start"] is None


def test_time_to_accept_without_a_request_counts_from_the_first_start() -> None:
    _, r = facts(
        [
            start("r1", "a1", 10),
            ev("r1", "a1", 70, "released"),
            ev("r1", None, 100, "accepted"),
            ev("r1", None, 130, "accepted"),
        ]
    )
    assert r["r1"]["time_to_accept"] == mins(90)  # first accepted 100 − first start 10


# --------------------------------------------------------------------------- queue waits


def test_queue_waits_with_run_level_and_allocation_requests() -> None:
    a, r = facts(
        [
            ev("r1", None, 0, "requested"),
            ev("r1", None, 3, "requested"),  # a re-request: the latest before the start counts
            start("r1", "a1", 10),
            ev("r1", None, 20, "requested"),  # before a1's end: not a request for a2
            ev("r1", "a1", 40, "reclaimed"),
            start("r1", "a2", 55),  # nothing requested after a1's end
            ev("r1", "a2", 60, "reclaimed"),
            ev("r1", "a3", 61, "requested"),  # a3's own requests: the earliest counts
            ev("r1", "a3", 63, "requested"),
            ev("r1", None, 62, "requested"),  # run-level, but a3 has its own
            start("r1", "a3", 70),
            ev("r1", "a3", 90, "released"),
            ev("r1", None, 90, "requested"),  # at a3's end: counts for a4
            start("r1", "a4", 97),
            ev("r1", "a4", 99, "released"),
        ]
    )
    assert a["a1"]["queue_wait"] == mins(7)  # 10 − 3
    assert a["a2"]["queue_wait"] is None  # the request at 20 is before a1's end at 40
    assert a["a3"]["queue_wait"] == mins(9)  # 70 − 61, its own earliest request
    assert a["a4"]["queue_wait"] == mins(7)  # 97 − 90
    assert r["r1"]["time_to_accept"] is None


def test_the_first_allocation_without_any_request_has_no_queue_wait() -> None:
    a, _ = facts(
        [
            start("r1", "a1", 10),
            ev("r1", None, 12, "requested"),  # after the start: not its request
            ev("r1", "a1", 40, "released"),
        ]
    )
    assert a["a1"]["queue_wait"] is None


# --------------------------------------------------------------------------- overlapping


def test_overlapping_allocations_attempts_and_replacement() -> None:
    a, r = facts(
        [
            ev("r1", None, 0, "requested"),
            start("r1", "n2", 5, gpus=8),  # two nodes start together: ordered by alloc_id
            start("r1", "n1", 5, gpus=8),
            ev("r1", None, 20, "checkpoint", step=1000),
            ev("r1", "n1", 30, "reclaimed", step=1500),
            ev("r1", "n2", 31, "released", step=1500),
            start("r1", "n3", 30, gpus=8),  # starts at n1's end: a replacement wait of 0
            ev("r1", "n3", 50, "released", step=2500),
        ]
    )
    assert (a["n1"]["attempt"], a["n2"]["attempt"], a["n3"]["attempt"]) == (1, 2, 3)
    assert a["n1"]["queue_wait"] == mins(5)  # 5 − 0
    # n2's previous allocation (n1) ends at 30, after n2 starts: no request qualifies
    assert a["n2"]["queue_wait"] is None
    assert a["n1"]["replacement_wait"] == timedelta(0)  # n3 starts at 30 = n1's end
    assert a["n1"]["replayed_time"] == mins(10)  # 30 − max(5, 20)
    assert a["n1"]["replayed_steps"] == 500  # 1500 − 1000
    assert r["r1"]["metered_gpu_time"] == mins(8 * 25 + 8 * 26 + 8 * 20)  # 200 + 208 + 160
    assert r["r1"]["lost_gpu_time"] == mins(80)  # 8 × 10, n1 only


def test_a_zero_length_allocation_does_not_replace_itself() -> None:
    a, _ = facts(
        [
            start("r1", "a1", 10),
            ev("r1", "a1", 10, "failed"),  # fails at its start
            start("r1", "a2", 16),
            ev("r1", "a2", 20, "failed"),
            start("r1", "b1", 20),  # b1 and b2 start at a2's end
            ev("r1", "b1", 20, "failed"),  # b1 is zero-length; b2 replaces it
            start("r1", "b2", 20),
            ev("r1", "b2", 30, "released"),
        ]
    )
    assert a["a1"]["runtime"] == timedelta(0)
    assert a["a1"]["gpu_time"] == timedelta(0)
    assert a["a1"]["replayed_time"] == timedelta(0)  # 10 − max(10, none)
    assert a["a1"]["replacement_wait"] == mins(6)  # a2 at 16, not a1 itself: 16 − 10
    assert a["a2"]["replacement_wait"] == timedelta(0)  # b1 and b2 start at 20
    assert a["b1"]["replacement_wait"] == timedelta(0)  # b2 starts at 20 too


# --------------------------------------------------------------------------- checkpoints


def test_equal_timestamps_the_later_row_wins() -> None:
    a, _ = facts(
        [
            start("r1", "a1", 0),
            ev("r1", None, 10, "checkpoint", step=100),
            ev("r1", None, 10, "checkpoint", step=101),  # same time, later in the file
            ev("r1", None, 30, "checkpoint", step=300),  # at the end: "at or before" holds
            ev("r1", "a1", 30, "reclaimed", step=300),
            start("r2", "b1", 0),
            ev("r2", None, 10, "checkpoint", step=100),
            ev("r2", None, 10, "checkpoint", step=101),
            ev("r2", "b1", 20, "reclaimed", step=150),
        ]
    )
    assert a["a1"]["last_checkpoint_at"] == at(30)
    assert a["a1"]["replayed_time"] == timedelta(0)  # 30 − max(0, 30)
    assert a["a1"]["replayed_steps"] == 0  # 300 − 300
    assert a["b1"]["last_checkpoint_step"] == 101
    assert a["b1"]["replayed_steps"] == 49  # 150 − 101


def test_checkpoints_of_another_run_do_not_count() -> None:
    a, _ = facts(
        [
            start("r1", "a1", 0),
            ev("r2", None, 10, "checkpoint", step=100),
            ev("r1", "a1", 30, "reclaimed", step=50),
        ]
    )
    assert a["a1"]["last_checkpoint_at"] is None
    assert a["a1"]["replayed_time"] == mins(30)  # the whole runtime
    assert a["a1"]["replayed_steps"] == 50  # 50 − 0: no checkpoint, from step 0


def test_a_checkpoint_the_clock_skew_moved_is_looked_up_at_its_new_time() -> None:
    # validation sorts the checkpoints by run and time for W101, and derive reuses that
    # order; a checkpoint the skew moves (here 0.5 s after a1's end, to its end) has a new
    # time, so that order is not kept and the lookup sees the moved time
    rows = [
        start("r1", "a1", 0),
        ev("r1", None, 5, "checkpoint", step=3),
        ev("r1", "a1", 10, "reclaimed", step=8),
        ev("r1", "a1", 10 + 0.5 / 60, "checkpoint", step=7),  # 10 min 0.5 s
    ]
    trace = load_trace(frame(rows))
    assert [w.code for w in trace.warnings] == ["W106"]
    assert trace.index is not None
    assert trace.index.checkpoints is None
    a, _ = facts(rows)
    assert a["a1"]["last_checkpoint_at"] == at(10)  # moved to the end: "at or before" holds
    assert a["a1"]["last_checkpoint_step"] == 7
    assert a["a1"]["replayed_steps"] == 1  # 8 − 7 (at its old time it would be 8 − 3 = 5)


def test_a_rollback_never_gives_negative_replayed_steps() -> None:
    tr = load_trace(
        frame(
            [
                start("r1", "a1", 0),
                ev("r1", None, 10, "checkpoint", step=1000),
                ev("r1", None, 11, "restored", step=800),  # deliberate rollback
                ev("r1", None, 15, "checkpoint", step=900),  # below 1000: a warning
                ev("r1", "a1", 20, "reclaimed", step=850),
            ]
        )
    )
    assert [w.code for w in tr.warnings] == ["W101"]
    allocations, _ = derive_facts(tr).collect()
    row = allocations.row(0, named=True)
    assert row["last_checkpoint_step"] == 900  # the latest valid one, not the largest
    assert row["replayed_steps"] == 0  # max(0, 850 − 900)
    assert row["replayed_time"] == mins(5)  # 20 − 15


def test_a_checkpoint_without_a_step_leaves_replayed_steps_unknown() -> None:
    a, r = facts(
        [
            start("r1", "a1", 0),
            ev("r1", None, 10, "checkpoint"),  # valid, but no step recorded
            ev("r1", "a1", 30, "reclaimed", step=300),
        ]
    )
    assert a["a1"]["last_checkpoint_at"] == at(10)
    assert a["a1"]["last_checkpoint_step"] is None
    assert a["a1"]["replayed_time"] == mins(20)  # 30 − max(0, 10)
    assert a["a1"]["replayed_steps"] is None  # 300 − unknown
    assert r["r1"]["lost_steps"] == 0  # a sum skips unknowns, as in SQL


# --------------------------------------------------------------------------- open allocations


def test_open_at_closes_open_allocations_as_released() -> None:
    rows = [
        start("r1", "a1", 0),
        ev("r1", None, 10, "checkpoint", step=10),
        start("r1", "a2", 5),
        ev("r1", "a2", 30, "reclaimed", step=30),
    ]
    a, r = facts(rows, open_at=at(60))
    assert a["a1"]["end"] == at(60)
    assert a["a1"]["end_reason"] == "released"
    assert a["a1"]["runtime"] == mins(60)
    assert a["a1"]["end_step"] is None
    assert a["a1"]["replayed_time"] == timedelta(0)
    assert a["a1"]["replayed_steps"] == 0
    assert a["a2"]["replacement_wait"] is None  # no allocation starts at or after 30
    assert r["r1"]["last_end"] == at(60)
    tr = load_trace(frame(rows), open_at=at(60))
    assert tr.summary.closed_at_open_at == 1


# --------------------------------------------------------------------------- columns


def test_trace_columns_come_from_the_started_row() -> None:
    rows = [
        start("r1", "a1", 0, price=Decimal("2.10"), node_pool="blue", discount=Decimal("0.5")),
        ev("r1", "a1", 30, "released", node_pool="red"),
    ]
    extra = {"node_pool": pl.String(), "discount": pl.Decimal(10, 2)}
    allocations, _ = derive_facts(load_trace(frame(rows, extra))).collect()
    row = allocations.row(0, named=True)
    assert row["trace.price"] == Decimal("2.10")
    assert row["trace.node_pool"] == "blue"
    assert row["trace.discount"] == Decimal("0.5")


def test_frames_have_the_schema_of_the_facts_catalog() -> None:
    rows = [*STORY, start("r2", "b1", 0, price=Decimal("3"))]
    rows.append(ev("r2", "b1", 9, "released"))
    allocations, runs = derive_facts(load_trace(frame(rows, {"team": pl.String()}))).collect()
    expected = {**ALLOCATION_SCHEMA, "trace.price": pl.Decimal(38, 18), "trace.team": pl.String()}
    assert dict(allocations.schema) == expected
    assert dict(runs.schema) == RUN_SCHEMA
    assert allocations["run_id"].to_list() == ["r1", "r1", "r2"]
    assert runs["run_id"].to_list() == ["r1", "r2"]


def test_the_facts_frames_columns_line_up_chunk_for_chunk() -> None:
    # every contract reads these frames eagerly, several times, and polars copies a frame
    # whose columns are chunked differently before each such read (`lang.frames.aligned`);
    # `queue_wait`, computed from a lookup set beside the rows, was chunked apart
    allocations, runs = derive_facts(load_trace(generate_trace(50, seed=1))).collect()
    for f in (allocations, runs):
        assert len({tuple(s.chunk_lengths()) for s in f.get_columns()}) == 1


def test_without_a_price_column_there_is_no_trace_price() -> None:
    rows = [start("r1", "a1", 0), ev("r1", "a1", 30, "released")]
    df = frame(rows).drop("price")
    allocations, _ = derive_facts(load_trace(df)).collect()
    assert "trace.price" not in allocations.columns


@pytest.mark.parametrize("keep", [["r1"], ["r2"], ["r1", "r2"]])
def test_facts_are_a_function_of_each_runs_events(keep: list[str]) -> None:
    other = [
        ev("r2", None, 0, "requested"),
        start("r2", "b1", 1),
        ev("r2", None, 2, "checkpoint", step=5),
        ev("r2", "b1", 50, "failed", step=40),
        start("r2", "b2", 60),
        ev("r2", "b2", 70, "released"),
    ]
    whole, whole_runs = derive_facts(load_trace(frame(STORY + other))).collect()
    part_rows = [row for row in STORY + other if row["run_id"] in keep]
    part, part_runs = derive_facts(load_trace(frame(part_rows))).collect()
    assert whole.filter(pl.col("run_id").is_in(keep)).equals(part)
    assert whole_runs.filter(pl.col("run_id").is_in(keep)).equals(part_runs)


@pytest.mark.parametrize("order", ["in file order", "one run after another", "shuffled"])
def test_the_checkpoints_sorted_while_validating_give_the_same_facts(order: str) -> None:
    # a generated trace with ties and missing steps among its checkpoints, in time order, one
    # run after another (each run's rows in time order, the file's not) or shuffled (then
    # the checkpoints are sorted by run and time): the facts derived with the validation's
    # sorted checkpoints equal those derived without them, and without the whole index
    df = generate_trace(60, seed=4)
    ck = pl.col("event") == "checkpoint"
    df = df.with_columns(
        # every seventh checkpoint without a step; every fifth at its predecessor's time
        pl.when(ck & (pl.int_range(pl.len()) % 7 == 0)).then(None).otherwise("step").alias("step"),
        pl.when(ck & (pl.int_range(pl.len()) % 5 == 0))
        .then(pl.col("ts").shift(1).fill_null(pl.col("ts")))
        .otherwise("ts")
        .alias("ts"),
    )
    if order == "shuffled":
        # (under `asof_strategy`'s "by-run joins" the checkpoints' (run, time) is not packed
        # either: they are sorted on the two columns)
        df = df.sample(fraction=1.0, shuffle=True, seed=2)
    if order == "one run after another":
        df = df.sort("run_id", maintain_order=True)
    trace = load_trace(df)
    assert trace.index is not None
    assert trace.index.checkpoints is not None
    with_order = derive_facts(trace).collect()
    assert with_order[0]["last_checkpoint_at"].null_count() < with_order[0].height
    no_order = replace(trace, index=replace(trace.index, checkpoints=None))
    for other in (no_order, replace(trace, index=None)):
        facts_other = derive_facts(other).collect()
        assert with_order[0].equals(facts_other[0])
        assert with_order[1].equals(facts_other[1])


def test_both_join_strategies_agree_on_a_generated_trace(monkeypatch: pytest.MonkeyPatch) -> None:
    trace = load_trace(generate_trace(40, seed=9))
    packed = derive_facts(trace).collect()
    monkeypatch.setattr(asof, "MAX_KEY_BITS", 0)
    by_run = derive_facts(trace).collect()
    assert packed[0].equals(by_run[0])
    assert packed[1].equals(by_run[1])
