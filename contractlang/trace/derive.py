"""The facts of every allocation and run (design §4), as one lazy polars plan.

:func:`derive_facts` returns two lazy frames with the columns of
:data:`contractlang.facts.ALLOCATION_SCHEMA` (then ``trace.<column>`` extras) and
:data:`contractlang.facts.RUN_SCHEMA`. Nothing is computed until they are collected; collect
them together (:meth:`Facts.collect`) so the shared work is done once, or extend the
allocations plan with a contract's columns first.

Every join is by allocation or by run (``run_key``), so facts are a function of each run's
events only (design §10): the same plan over a shard of runs gives those runs' facts.

How each fact is computed (``docs/trace.md`` has the definitions):

- allocations are the ``started`` rows joined with their end rows (``--open-at`` closes the
  rest as ``released``), sorted by (run, start, ``alloc_id``): ``attempt`` is the position in
  that order and the previous allocation's end a shift masked at run boundaries;
- ``queue_wait`` takes the allocation's own earliest ``requested``, else an as-of join (by run)
  finds the latest run-level ``requested`` at or before the start, kept if it is at or after
  the previous allocation's end (any, for attempt 1);
- ``last_checkpoint`` is an as-of join (by run) of valid checkpoints at or before the end;
- ``replacement_wait`` is a forward as-of join (by run) of the other allocations' starts.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

import polars as pl

from contractlang.facts import ALLOCATION_SCHEMA, RUN_SCHEMA, TRACE_PREFIX
from contractlang.trace.load import Trace
from contractlang.trace.schema import END_EVENTS, RUN_KEY

ZERO = pl.duration(microseconds=0, time_unit="us")
#: Packed (run, time) keys must fit in a signed 64-bit integer, with room to spare.
MAX_KEY_BITS = 62


@dataclass(frozen=True)
class Facts:
    """The facts of a trace as lazy frames: ``allocations`` (one row per allocation, ordered
    by ``run_id`` then ``attempt``) and ``runs`` (one row per run, ordered by ``run_id``)."""

    allocations: pl.LazyFrame
    runs: pl.LazyFrame

    def collect(self) -> tuple[pl.DataFrame, pl.DataFrame]:
        """Both frames, computed together (common parts of the plan run once)."""
        allocations, runs = pl.collect_all([self.allocations, self.runs])
        return allocations, runs


def derive_facts(trace: Trace) -> Facts:
    """The facts of every allocation and run of ``trace``, as lazy frames.

    >>> from contractlang.trace import generate_trace, load_trace
    >>> allocations, runs = derive_facts(load_trace(generate_trace(2, seed=3))).collect()
    >>> runs.columns[:3]
    ['run_id', 'accepted', 'time_to_accept']
    """
    ev = trace.events.lazy()
    event = pl.col("event")
    trace_cols = [pl.col(c).alias(TRACE_PREFIX + c) for c in trace.extras]

    # the joins and sorts below carry only numbers (and `alloc_id` until the attempt order is
    # known); the text columns are sorted once into the same order and set beside them (a
    # join back on a row number would do too, but makes polars 2.1's streaming engine panic
    # in this plan)
    started = ev.filter(event == "started")
    starts = started.select(RUN_KEY, "alloc_id", pl.col("ts").alias("start"), "gpus")
    described = (
        started.select(
            RUN_KEY,
            pl.col("ts").alias("_start"),
            "run_id",
            "alloc_id",
            "sku",
            "zone",
            pl.col("capacity").cast(pl.String),
            *trace_cols,
        )
        .sort([RUN_KEY, "_start", "alloc_id"])
        .drop(RUN_KEY, "_start")
    )
    is_end = event.is_in(list(END_EVENTS))
    ts = pl.col("ts")
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
    run_requests = ev.filter((event == "requested") & pl.col("alloc_id").is_null()).select(
        RUN_KEY, pl.col("ts").alias("_run_request")
    )
    checkpoints = ev.filter((event == "checkpoint") & pl.col("valid").fill_null(True)).select(
        RUN_KEY,
        pl.col("ts").alias("last_checkpoint_at"),
        pl.col("step").alias("last_checkpoint_step"),
    )
    keys = _Keys.of(trace)

    end = pl.col("end")
    if trace.open_at is not None:
        end = end.fill_null(_utc(trace.open_at))
    alloc = (
        starts.join(per_allocation, on="alloc_id", how="left")
        .with_columns(end.alias("end"), pl.col("end_reason").cast(pl.String).fill_null("released"))
        .sort([RUN_KEY, "start", "alloc_id"])
        .drop("alloc_id")
    )
    same_run = pl.col(RUN_KEY) == pl.col(RUN_KEY).shift(1)
    index = pl.int_range(pl.len(), dtype=pl.Int64)
    run_first = pl.when(~same_run.fill_null(False)).then(index).forward_fill()
    alloc = alloc.with_columns(
        (index - run_first + 1).alias("attempt"),
        pl.when(same_run).then(pl.col("end").shift(1)).alias("_previous_end"),
    )

    # queue_wait: the allocation's own request, else the latest run-level request at or
    # before the start and at or after the previous allocation's end
    alloc = keys.asof(alloc, run_requests, "start", "_run_request", "backward")
    run_request = pl.when(
        (pl.col("attempt") == 1) | (pl.col("_run_request") >= pl.col("_previous_end"))
    ).then(pl.col("_run_request"))
    alloc = alloc.with_columns(
        (pl.col("start") - pl.coalesce(pl.col("_own_request"), run_request)).alias("queue_wait")
    )

    # the last valid checkpoint at or before the end (ties: the last in the file)
    alloc = keys.asof(alloc, checkpoints, "end", "last_checkpoint_at", "backward")

    # replacement_wait: the first other allocation of the run starting at or after the end
    start_groups = starts.group_by([RUN_KEY, "start"]).agg(pl.len().alias("_starting"))
    alloc = keys.asof(
        alloc,
        start_groups.select(RUN_KEY, pl.col("start").alias("_next_ge"), "_starting"),
        "end",
        "_next_ge",
        "forward",
    )
    alloc = keys.asof(
        alloc,
        start_groups.select(RUN_KEY, pl.col("start").alias("_next_gt")),
        "end",
        "_next_gt",
        "forward",
        exact=False,
    )
    # a zero-length allocation finds its own start among those at its end: it needs another
    # allocation starting then, or else the next start strictly after
    others_at = (pl.col("_next_ge") != pl.col("start")) | (pl.col("_starting") >= 2)
    next_start = (
        pl.when(others_at.fill_null(False)).then(pl.col("_next_ge")).otherwise(pl.col("_next_gt"))
    )

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
    alloc = alloc.sort([RUN_KEY, "attempt"])
    alloc = pl.concat([alloc, described], how="horizontal")  # both in attempt order
    allocations = alloc.select(
        [pl.col(c).cast(t) for c, t in ALLOCATION_SCHEMA.items()]
        + [pl.col(TRACE_PREFIX + c) for c in trace.extras]
        + [pl.col(RUN_KEY)]
    )
    return Facts(allocations.drop(RUN_KEY), _runs(ev, allocations))


def _runs(ev: pl.LazyFrame, allocations: pl.LazyFrame) -> pl.LazyFrame:
    event = pl.col("event")
    run_ids = ev.select(RUN_KEY, "run_id").filter(pl.col(RUN_KEY).is_first_distinct())
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


def _utc(moment: datetime) -> pl.Expr:
    return pl.lit(moment).dt.convert_time_zone("UTC").dt.cast_time_unit("us")


@dataclass(frozen=True)
class _Keys:
    """As-of joins within a run.

    When the trace's runs and time span fit, (run, time) pairs are packed into one integer,
    ``run_key × 2^shift + µs since the first event``, so an as-of join within a run is a
    plain as-of join on that integer (a match from another run is then discarded), which is
    much cheaper than ``join_asof(by=…)``. Otherwise ``by`` is used. Both give the same rows.
    """

    origin: datetime | None
    shift: int = 0

    @staticmethod
    def of(trace: Trace) -> _Keys:
        s = trace.summary
        if s.first_ts is None or s.last_ts is None:
            return _Keys(None)
        moments = [s.first_ts, s.last_ts, *([trace.open_at] if trace.open_at else [])]
        lo, hi = min(moments), max(moments)
        span = (hi - lo) // timedelta(microseconds=1)
        shift = max(1, span.bit_length())
        if shift + max(1, s.runs.bit_length()) > MAX_KEY_BITS:
            return _Keys(None)
        return _Keys(lo, shift)

    def _key(self, column: str) -> pl.Expr:
        assert self.origin is not None
        since = (pl.col(column) - _utc(self.origin)).dt.total_microseconds()
        return pl.col(RUN_KEY).cast(pl.Int64) * (1 << self.shift) + since

    def asof(
        self,
        left: pl.LazyFrame,
        right: pl.LazyFrame,
        left_on: str,
        right_on: str,
        strategy: Literal["backward", "forward"],
        *,
        exact: bool = True,
    ) -> pl.LazyFrame:
        """Join to each row of ``left`` the row of ``right`` of the same run nearest in time:
        the latest at or before ``left_on`` (backward) or the earliest at or after it
        (forward); strictly before or after when ``exact`` is false. Ties in ``right``: the
        last (backward) or first (forward) in its current order."""
        if self.origin is None:
            return left.sort([RUN_KEY, left_on]).join_asof(
                right.sort([RUN_KEY, right_on], maintain_order=True),
                left_on=left_on,
                right_on=right_on,
                by=RUN_KEY,
                strategy=strategy,
                allow_exact_matches=exact,
                check_sortedness=False,
            )
        columns = [c for c in right.collect_schema().names() if c != RUN_KEY]
        keyed_left = left.with_columns(self._key(left_on).alias("_lkey")).sort("_lkey")
        keyed_right = (
            right.with_columns(self._key(right_on).alias("_rkey"))
            .rename({RUN_KEY: "_rrun"})
            .sort("_rkey", maintain_order=True)
        )
        joined = keyed_left.join_asof(
            keyed_right,
            left_on="_lkey",
            right_on="_rkey",
            strategy=strategy,
            allow_exact_matches=exact,
            check_sortedness=False,
        )
        same_run = pl.col("_rrun") == pl.col(RUN_KEY)
        return joined.with_columns(
            pl.when(same_run).then(pl.col(c)).alias(c) for c in columns
        ).drop("_lkey", "_rkey", "_rrun")
