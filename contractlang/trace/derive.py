"""The facts of every allocation and run (docs/trace.md, "Facts"), as one lazy polars plan.

:func:`derive_facts` returns two lazy frames with the columns of
:data:`contractlang.lang.frames.ALLOCATION_SCHEMA` (then ``trace.<column>`` extras) and
:data:`contractlang.lang.frames.RUN_SCHEMA`. Nothing is computed until they are collected; collect
them together (:meth:`Facts.collect`, with the in-memory engine: the allocations once, then
the runs from them), or extend the allocations plan with a contract's columns first.

Every join is by allocation or by run (``run_key``), so facts are a function of each run's
events only (docs/scale.md): the same plan over a shard of runs gives those runs' facts.

How each fact is computed (``docs/trace.md`` has the definitions):

- allocations are the ``started`` rows joined with their end rows (``--open-at`` closes the
  rest as ``released``), sorted by (run, start, ``alloc_id``): ``attempt`` is the position in
  that order and the previous allocation's end a shift masked at run boundaries. The end
  rows, the earliest notice and the earliest own request come from the trace's
  :class:`~contractlang.trace.model.TraceIndex` (found while validating), else from a
  group-by of the allocation rows; the rows stay in attempt order from then on, and each
  lookup below is computed on a narrow frame and set beside them;
- ``queue_wait`` takes the allocation's own earliest ``requested``, else an as-of join (by run)
  finds the latest run-level ``requested`` at or before the start, kept if it is at or after
  the previous allocation's end (any, for attempt 1);
- ``last_checkpoint`` is an as-of join (by run) of valid checkpoints at or before the end;
- ``replacement_wait``: the first start of another allocation of the run at or after the end,
  found by binary search among the allocations' own (run, start) keys (or by forward as-of
  joins when the keys cannot be packed).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

import polars as pl

from contractlang.lang.facts import TRACE_PREFIX
from contractlang.lang.frames import ALLOCATION_SCHEMA, RUN_SCHEMA, aligned
from contractlang.trace.asof import POSITION, Keys, utc
from contractlang.trace.model import Trace, TraceIndex, run_id_of
from contractlang.trace.schema import END_EVENTS, ROW, RUN_KEY

ZERO = pl.duration(microseconds=0, time_unit="us")
#: The polars engine that computes the facts: the plan is sorts, as-of joins and binary
#: searches over whole columns, which the in-memory engine runs about twice as fast here.
ENGINE: Literal["streaming", "in-memory"] = "in-memory"


@dataclass(frozen=True)
class Facts:
    """The facts of a trace as lazy frames: ``allocations`` (one row per allocation, ordered
    by ``run_id`` then ``attempt``) and ``runs`` (one row per run, ordered by ``run_id``)."""

    allocations: pl.LazyFrame
    runs: pl.LazyFrame
    #: the allocations with their ``run_key``, and the run facts computed from such a frame
    #: (:meth:`collect` computes the allocations once and the runs from them)
    keyed: pl.LazyFrame | None = field(default=None, repr=False, compare=False)
    runs_of: Callable[[pl.LazyFrame], pl.LazyFrame] | None = field(
        default=None, repr=False, compare=False
    )

    def collect(self) -> tuple[pl.DataFrame, pl.DataFrame]:
        """Both frames, computed together: the allocations once, then the runs from them."""
        if self.keyed is None or self.runs_of is None:
            allocations, runs = pl.collect_all([self.allocations, self.runs], engine=ENGINE)
            return allocations, runs
        # (`queue_wait`, from a lookup set beside the rows, comes out chunked apart)
        keyed = aligned(self.keyed.collect(engine=ENGINE))
        runs = self.runs_of(keyed.lazy()).collect(engine=ENGINE)
        return keyed.drop(RUN_KEY), runs


def derive_facts(trace: Trace) -> Facts:
    """The facts of every allocation and run of ``trace``, as lazy frames.

    >>> from contractlang.trace import generate_trace, load_trace
    >>> allocations, runs = derive_facts(load_trace(generate_trace(2, seed=3))).collect()
    >>> runs.columns[:3]
    ['run_id', 'accepted', 'time_to_accept']
    """
    ev = trace.dense.lazy()
    event = pl.col("event")
    trace_cols = [pl.col(c).alias(TRACE_PREFIX + c) for c in trace.extras]

    # the `started` rows with what they say of the allocation (their sparse columns joined
    # on); their end, earliest notice and earliest own request are joined on (the
    # validation's index says which rows those are)
    sparse = trace.sparse.lazy()
    started = ev.filter(event == "started").join(sparse, on=ROW, how="left", maintain_order="left")
    starts = started.select(
        RUN_KEY,
        "alloc_id",
        pl.col("ts").alias("start"),
        "gpus",
        run_id_of(trace.run_ids),
        "sku",
        "zone",
        pl.col("capacity").cast(pl.String),
        *trace_cols,
    )
    found = _usable_index(trace)
    per_allocation = _per_allocation(ev, starts, found)
    run_requests = ev.filter((event == "requested") & pl.col("alloc_id").is_null()).select(
        RUN_KEY, pl.col("ts").alias("_run_request")
    )
    # the valid checkpoints: sorted by run already when validation left them so (W101 sorts
    # them), else in file order
    ordered = found.checkpoints if found is not None else None
    valid_checkpoints = (
        ordered.lazy()
        if ordered is not None
        else ev.filter((event == "checkpoint") & pl.col("valid").fill_null(True))
    )
    checkpoints = valid_checkpoints.select(
        RUN_KEY,
        pl.col("ts").alias("last_checkpoint_at"),
        pl.col("step").alias("last_checkpoint_step"),
    )
    keys = Keys.of(trace)

    # sorted once, into attempt order, which the rows keep from here on: every lookup below
    # is computed on a narrow frame and set beside them
    end = pl.col("end")
    if trace.open_at is not None:
        end = end.fill_null(utc(trace.open_at))
    alloc = per_allocation.with_columns(
        end.alias("end"), pl.col("end_reason").cast(pl.String).fill_null("released")
    ).sort([RUN_KEY, "start", "alloc_id"])
    same_run = pl.col(RUN_KEY) == pl.col(RUN_KEY).shift(1)
    index = pl.int_range(pl.len(), dtype=pl.Int64)
    run_first = pl.when(~same_run.fill_null(False)).then(index).forward_fill()
    alloc = alloc.with_columns(
        index.alias(POSITION),
        (index - run_first + 1).alias("attempt"),
        pl.when(same_run).then(pl.col("end").shift(1)).alias("_previous_end"),
    )
    # replacement_wait: the first other allocation of the run starting at or after the end
    next_starts = keys.next_start(alloc, starts)
    # queue_wait: the allocation's own request, else the latest run-level request at or
    # before the start and at or after the previous allocation's end
    requests = keys.lookup(
        alloc, run_requests, "start", "_run_request", "backward", right_in_file_order=True
    )
    # the last valid checkpoint at or before the end (ties: the last in the file)
    last_checkpoints = keys.lookup(
        alloc,
        checkpoints,
        "end",
        "last_checkpoint_at",
        "backward",
        # sorted by run already: the packed keys need no sort; else by time (stable) is cheap
        # on rows from a log in time order, where packed keys would need a full sort
        by_time=ordered is None,
        right_in_file_order=ordered is None,
        right_by_run=ordered is not None,
    )
    alloc = pl.concat([alloc, next_starts, requests, last_checkpoints], how="horizontal")
    run_request = pl.when(
        (pl.col("attempt") == 1) | (pl.col("_run_request") >= pl.col("_previous_end"))
    ).then(pl.col("_run_request"))
    alloc = alloc.with_columns(
        (pl.col("start") - pl.coalesce(pl.col("_own_request"), run_request)).alias("queue_wait")
    )
    next_start = pl.col("_next_start")

    reason = pl.col("end_reason")
    lost = reason.is_in(["reclaimed", "failed"])
    runtime = pl.col("end") - pl.col("start")
    replayed_time = (
        pl.when(lost)
        .then(pl.col("end") - pl.max_horizontal("start", "last_checkpoint_at"))
        .otherwise(ZERO)
    )
    replayed_steps = (
        pl.when(~lost)
        .then(pl.lit(0, dtype=pl.Int64))
        .when(pl.col("last_checkpoint_at").is_null())
        .then(pl.col("end_step"))
        .otherwise((pl.col("end_step") - pl.col("last_checkpoint_step")).clip(lower_bound=0))
    )
    alloc = alloc.with_columns(
        runtime.alias("runtime"),
        (runtime * pl.col("gpus")).alias("gpu_time"),
        pl.when(reason == "reclaimed")
        .then(pl.coalesce(pl.col("end") - pl.col("notice_at"), ZERO))
        .alias("notice_lead"),
        pl.when(lost).then(next_start - pl.col("end")).alias("replacement_wait"),
        replayed_time.alias("replayed_time"),
        pl.when(pl.col("end_step").is_not_null() | ~lost)
        .then(replayed_steps)
        .alias("replayed_steps"),
    )
    allocations = alloc.select(
        [pl.col(c).cast(t) for c, t in ALLOCATION_SCHEMA.items()]
        + [pl.col(TRACE_PREFIX + c) for c in trace.extras]
        + [pl.col(RUN_KEY)]
    )
    return Facts(
        allocations.drop(RUN_KEY),
        _runs(ev, allocations, trace.run_ids),
        keyed=allocations,
        runs_of=lambda keyed: _runs(ev, keyed, trace.run_ids),
    )


def _usable_index(trace: Trace) -> TraceIndex | None:
    """The trace's index, if it was made for its events (as it is for a trace from
    :func:`load_trace`) and matches them (one line per `started` row, one run id per run)."""
    index = trace.index
    if index is None or index.events is not trace.dense:
        return None
    starts = trace.summary.events.get("started", 0)
    if index.allocations.height != starts or index.run_ids.len() != trace.summary.runs:
        return None
    return index


def _per_allocation(
    ev: pl.LazyFrame, starts: pl.LazyFrame, index: TraceIndex | None
) -> pl.LazyFrame:
    """``starts`` (the `started` rows, in file order) with the end (``end``, ``end_reason``,
    ``end_step``), the earliest notice (``notice_at``) and the earliest own request
    (``_own_request``) of each allocation.

    Without an index: one group-by of the allocation rows by `alloc_id`, joined to the starts.
    With one (the validation found each allocation's start and end rows in its own group-by):
    the index lines up with the `started` rows as they are, and the end is found by its row
    number, so no text is hashed again. A valid trace has at most one end per allocation, so
    "the end" is the same row either way."""
    event, ts = pl.col("event"), pl.col("ts")
    is_end = event.is_in(list(END_EVENTS))
    if index is not None:
        found = index.allocations.lazy().select(
            pl.col("end_row").alias(ROW), "notice_at", pl.col("own_request").alias("_own_request")
        )
        ends = ev.filter(is_end).select(
            ROW,
            pl.col("ts").alias("end"),
            pl.col("event").alias("end_reason"),
            pl.col("step").alias("end_step"),
        )
        lined_up = pl.concat([starts, found], how="horizontal")
        return lined_up.join(ends, on=ROW, how="left").select(
            *starts.collect_schema().names(),
            "end",
            "end_reason",
            "end_step",
            "notice_at",
            "_own_request",
        )
    # the end, the earliest notice and the earliest own request of each allocation: one pass
    per_allocation = (
        ev.filter(
            pl.col("alloc_id").is_not_null() & (is_end | event.is_in(["notice", "requested"]))
        )
        .group_by("alloc_id")
        .agg(
            pl.when(is_end).then(ts).max().alias("end"),
            pl.when(is_end).then(event).max().alias("end_reason"),
            pl.when(is_end).then(pl.col("step")).max().alias("end_step"),
            pl.when(event == "notice").then(ts).min().alias("notice_at"),
            pl.when(event == "requested").then(ts).min().alias("_own_request"),
        )
    )
    return starts.join(per_allocation, on="alloc_id", how="left")


def _runs(ev: pl.LazyFrame, allocations: pl.LazyFrame, ids: pl.Series) -> pl.LazyFrame:
    event = pl.col("event")
    # run keys are positions in the sorted run ids
    run_ids = pl.LazyFrame(
        {RUN_KEY: pl.arange(0, ids.len(), dtype=pl.UInt32, eager=True), "run_id": ids}
    )
    verdicts = (
        ev.filter(event.is_in(["accepted", "requested"]))
        .group_by(RUN_KEY)
        .agg(
            pl.col("ts").filter(event == "accepted").min().alias("_accepted_at"),
            pl.col("ts").filter(event == "requested").min().alias("_requested_at"),
        )
    )
    reason = pl.col("end_reason")
    per_alloc = allocations.group_by(RUN_KEY).agg(
        (reason == "reclaimed").sum().cast(pl.Int64).alias("reclaims"),
        (reason == "failed").sum().cast(pl.Int64).alias("failures"),
        pl.len().cast(pl.Int64).alias("allocations"),
        pl.col("gpu_time").sum().alias("metered_gpu_time"),
        (pl.col("replayed_time") * pl.col("gpus")).sum().alias("lost_gpu_time"),
        pl.col("replayed_steps").sum().alias("lost_steps"),
        pl.col("start").min().alias("first_start"),
        pl.col("end").max().alias("last_end"),
    )
    accepted_at = pl.col("_accepted_at")
    return (
        run_ids.join(verdicts, on=RUN_KEY, how="left")
        .join(per_alloc, on=RUN_KEY, how="left")
        .sort(RUN_KEY)
        .with_columns(
            accepted_at.is_not_null().alias("accepted"),
            (accepted_at - pl.coalesce("_requested_at", "first_start")).alias("time_to_accept"),
            pl.col("reclaims", "failures", "allocations", "lost_steps").fill_null(0),
            pl.col("metered_gpu_time", "lost_gpu_time").fill_null(pl.duration(microseconds=0)),
        )
        .select([pl.col(c).cast(t) for c, t in RUN_SCHEMA.items()])
    )
