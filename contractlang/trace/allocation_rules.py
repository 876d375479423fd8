"""The allocation rules (T007–T010, T013, T014, T016): one start and one end, in order, under
one run, with the allocation's events inside its lifetime.

One ``group_by`` over the rows that name an allocation summarises each allocation and flags
those that may break a rule; only their rows are then checked row by row, which is where
messages come from. The summary also gives :class:`~contractlang.trace.model.TraceIndex` its
columns (:data:`INDEX_COLUMNS`), so deriving the facts need not group the rows again.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

import polars as pl

from contractlang.lang.numbers import MICROS_PER_HOUR, gpu_hours, plain
from contractlang.trace import problems as pb
from contractlang.trace.limits import LONG_ALLOCATION, MAX_GPU_US
from contractlang.trace.model import run_id_of
from contractlang.trace.row_rules import ENGINE
from contractlang.trace.schema import (
    END_EVENTS,
    EVENTS,
    INVOICE_EVENTS,
    ROW,
    RUN_KEY,
    WITHIN_LIFETIME,
)

#: The columns of :attr:`TraceIndex.allocations`, computed by the allocation rules' group-by.
INDEX_COLUMNS = ("start_row", "end_row", "notice_at", "own_request")


def _ts_text(expr: pl.Expr) -> pl.Expr:
    return expr.dt.to_string("%Y-%m-%dT%H:%M:%S%.fZ")


@dataclass(frozen=True)
class Findings:
    """What the allocation rules found: the summary of every allocation, the problem frames
    (each with an ``alloc_id`` column), the warning frames, and the rows whose time the clock
    skew moved to their allocation's edge (``row``, ``ts``)."""

    summary: pl.DataFrame
    problems: list[pl.LazyFrame]
    warnings: list[pl.LazyFrame]
    clamped: pl.DataFrame


def allocation_rules(
    events: pl.LazyFrame,
    open_at: datetime | None,
    clock_skew: timedelta = timedelta(0),
    *,
    run_ids: pl.Series,
) -> Findings:
    """The allocation rules (T007–T010, T013, T014, T016, T020) and warning W104.

    One ``group_by`` over the rows that name an allocation summarises each allocation (its
    starts, ends, runs and the time range of each kind of event) and flags every allocation
    that may break a rule; only the rows of flagged allocations are then checked row by row
    (:func:`_allocation_details`), which is where messages come from. Returns the summary
    (``alloc_id``, ``starts``, ``ends``, ``start``, ``end`` and the :data:`INDEX_COLUMNS`),
    the problem frames (each with an ``alloc_id`` column) and the warning frames.

    Rows with bad values take part: a null (bad) `event`, `ts` or `run_id` is left out of
    whatever reads it (see the module's docstring). ``run_ids`` give the text of each
    ``run_key`` (its position there) for messages."""
    rows = events.filter(pl.col("alloc_id").is_not_null()).select(
        ROW, RUN_KEY, "alloc_id", "ts", "event", "gpus"
    )
    event, ts = pl.col("event"), pl.col("ts")

    def at(cond: pl.Expr) -> pl.Expr:
        return pl.when(cond).then(ts)

    per = (
        rows.with_columns(
            (event == "started").alias("_is_s"),
            event.is_in(list(END_EVENTS)).alias("_is_e"),
            at(event == "started").alias("_s"),
            at(event.is_in(list(END_EVENTS))).alias("_e"),
            at(event.is_in(list(WITHIN_LIFETIME))).alias("_w"),
            at(event == "requested").alias("_r"),
            at(event.is_in(list(INVOICE_EVENTS))).alias("_i"),
            at(event == "notice").alias("_n"),
            pl.when(event == "started").then(pl.col(ROW)).alias("_srow"),
            pl.when(event.is_in(list(END_EVENTS))).then(pl.col(ROW)).alias("_erow"),
        )
        .group_by("alloc_id")
        .agg(
            # counted by event, so a start or an end with an unreadable `ts` still counts
            pl.col("_is_s").sum().alias("starts"),
            pl.col("_is_e").sum().alias("ends"),
            pl.col("_s").min().alias("start"),
            pl.col("_e").min().alias("end"),
            (event != "requested").sum().alias("_not_requests"),
            pl.col("_w").min().alias("_w_lo"),
            pl.col("_w").max().alias("_w_hi"),
            pl.col("_r").max().alias("_r_hi"),
            pl.col("_i").min().alias("_i_lo"),
            (pl.col(RUN_KEY).min() != pl.col(RUN_KEY).max()).alias("_two_runs"),
            pl.col(RUN_KEY).min().alias("_run"),
            pl.col("gpus").filter(event == "started").max().alias("_gpus"),
            # for the facts (TraceIndex)
            pl.col("_srow").min().alias("start_row"),
            pl.col("_erow").min().alias("end_row"),
            pl.col("_n").min().alias("notice_at"),
            pl.col("_r").min().alias("own_request"),
        )
        .collect(engine=ENGINE)
    )
    start, end = pl.col("start"), pl.col("end")
    if open_at is None:
        unended = pl.col("ends") == 0
        end_eff = end
    else:
        open_ts = pl.lit(open_at).dt.convert_time_zone("UTC").dt.cast_time_unit("us")
        unended = (pl.col("ends") == 0) & (start > open_ts)
        end_eff = pl.when(pl.col("ends") == 0).then(open_ts).otherwise(end)
    may_break = (
        (pl.col("starts") > 1)
        | (pl.col("ends") > 1)
        | ((pl.col("starts") == 0) & (pl.col("_not_requests") > 0))
        | ((pl.col("starts") == 1) & unended)
        | pl.col("_two_runs")
        | (end < start)
        | (pl.col("_w_lo") < start)
        | (pl.col("_w_hi") > end_eff)
        | (pl.col("_r_hi") > start)
        | (pl.col("_i_lo") < start)
    ).fill_null(False)
    flagged = per.filter(may_break).select("alloc_id")
    summary = per.select("alloc_id", "starts", "ends", "start", "end", *INDEX_COLUMNS)
    too_wide, too_long = _capacity(per, end_eff)
    if flagged.is_empty():
        return Findings(summary, too_wide, too_long, _NO_CLAMP)
    detail = rows.join(flagged.lazy(), on="alloc_id", how="semi").collect(engine=ENGINE)
    detail = detail.with_columns(run_id_of(run_ids))
    problems, clamped = _allocation_details(detail, open_at, clock_skew)
    return Findings(summary, [*problems, *too_wide], too_long, clamped)


def _capacity(per: pl.DataFrame, end: pl.Expr) -> tuple[list[pl.LazyFrame], list[pl.LazyFrame]]:
    """T020: an allocation, or a run, holding more GPU-time than 64 bits keep (computed in 128
    bits, see :mod:`~contractlang.trace.limits`); W104: an allocation longer than a year.
    ``end`` is each allocation's end (``--open-at`` for one still open)."""
    span = (end - pl.col("start")).dt.total_microseconds()
    sized = per.filter((pl.col("starts") == 1) & (pl.col("ends") <= 1)).select(
        "alloc_id",
        "_run",
        pl.col("start_row").alias(ROW),
        span.alias("_us"),
        pl.col("_gpus"),
        (span.cast(pl.Int128) * pl.col("_gpus").clip(lower_bound=0).cast(pl.Int128)).alias("_gu"),
    )
    wide = sized.filter(pl.col("_gu") > MAX_GPU_US)
    fit = sized.filter(pl.col("_gu") <= MAX_GPU_US)
    # a run holds no more than all allocations together hold (counting none below 0): when
    # that fits, so does every run, and they need not be grouped
    all_fit = fit.select(pl.col("_gu").clip(lower_bound=0).sum()).item() <= MAX_GPU_US
    runs = (
        fit.group_by("_run")
        .agg(pl.col("_gu").sum(), pl.col(ROW).min(), pl.len().alias("_n"))
        .filter(pl.col("_gu") > MAX_GPU_US)
        if not all_fit
        else None
    )
    errors = []
    limit = f"{MAX_GPU_US // MICROS_PER_HOUR:,} GPU-hours"
    if wide.height:
        messages = [
            f"allocation `{r['alloc_id']}` holds {r['_gpus']:,} GPUs for "
            f"{_hours(r['_us'])} hours, {_hours(r['_gu'])} GPU-hours: more than one "
            f"allocation may hold ({limit})"
            for r in wide.iter_rows(named=True)
        ]
        errors.append(
            pb.problems(
                wide.with_columns(_m=pl.Series(messages)), "T020", pl.col("_m"), keep=["alloc_id"]
            )
        )
    if runs is not None and runs.height:
        messages = [
            f"the run of this allocation holds {_hours(r['_gu'])} GPU-hours in "
            f"{r['_n']:,} allocations: more than one run may hold ({limit})"
            for r in runs.iter_rows(named=True)
        ]
        first = runs.with_columns(
            _m=pl.Series(messages, dtype=pl.String), alloc_id=pl.lit(None, pl.String)
        )
        errors.append(pb.problems(first, "T020", pl.col("_m"), keep=["alloc_id"]))
    long = sized.filter(pl.col("_us") > LONG_ALLOCATION // timedelta(microseconds=1))
    warnings = []
    if long.height:
        messages = [
            f"allocation `{r['alloc_id']}` runs for {r['_us'] // 86_400_000_000:,} days: "
            "longer than a year"
            for r in long.iter_rows(named=True)
        ]
        warnings.append(
            pb.problems(
                long.with_columns(_m=pl.Series(messages, dtype=pl.String)),
                "W104",
                pl.col("_m"),
                help="check the allocation's start and end; a year-long allocation is unusual",
            )
        )
    return errors, warnings


def _hours(us: int) -> str:
    """Microseconds as hours for a message: ``87,640,656`` or ``1.5``."""
    return plain(gpu_hours(us, 2).normalize(), grouped=True)


_NO_CLAMP = pl.DataFrame(schema={ROW: pl.Int64, "ts": pl.Datetime("us", "UTC")})
#: Events a clock skew may move: the job's (within the lifetime) and invoice lines.
_SKEWABLE = [e for e in WITHIN_LIFETIME if EVENTS[e].source == "job"] + list(INVOICE_EVENTS)


def _allocation_details(
    detail: pl.DataFrame, open_at: datetime | None, clock_skew: timedelta
) -> tuple[list[pl.LazyFrame], pl.DataFrame]:
    """Row-by-row allocation rules on the rows of the allocations that may break one.

    An allocation with a row whose event is unknown is *incomplete*: that row may have been its
    start or its end, so it is not checked for never starting or never ending. The first start
    (and end) is the earliest by time, then by row; one with an unreadable time comes last."""
    incomplete = detail.filter(pl.col("event").is_null()).get_column("alloc_id").unique()
    rows = detail.filter(pl.col("event").is_not_null()).sort(ROW)
    starts = (
        rows.filter(pl.col("event") == "started")
        .sort(["ts", ROW], nulls_last=True)
        .with_columns(pl.col("alloc_id").is_first_distinct().alias("_first"))
    )
    ends = (
        rows.filter(pl.col("event").is_in(list(END_EVENTS)))
        .sort(["ts", ROW], nulls_last=True)
        .with_columns(pl.col("alloc_id").is_first_distinct().alias("_first"))
    )
    first_start = starts.filter("_first").select(
        "alloc_id",
        pl.col("run_id").alias("owner"),
        pl.col("ts").alias("start"),
        pl.col(ROW).alias("start_row"),
    )
    first_end = ends.filter("_first").select(
        "alloc_id",
        pl.col("ts").alias("end"),
        pl.col(ROW).alias("end_row"),
        pl.col("event").alias("end_event"),
    )
    table = first_start.join(first_end, on="alloc_id", how="full", coalesce=True).with_columns(
        pl.col("alloc_id").is_in(incomplete.implode()).alias("_incomplete")
    )
    problems: list[pl.LazyFrame] = []

    def report(frame: pl.DataFrame, code: str, message: pl.Expr, help: str | None = None) -> None:
        if frame.height:
            problems.append(pb.problems(frame, code, message, help=help, keep=["alloc_id"]))

    alloc = pb.backticked(pl.col("alloc_id"))

    # T007 / T008: a second start, a second end
    report(
        starts.filter(~pl.col("_first")).join(first_start, on="alloc_id"),
        "T007",
        pl.concat_str(
            pl.lit("allocation "),
            alloc,
            pl.lit(" starts again; it started at "),
            pb.row_ref(pl.col("start_row")),
        ),
    )
    report(
        ends.filter(~pl.col("_first")).join(first_end, on="alloc_id"),
        "T008",
        pl.concat_str(
            pl.lit("allocation "),
            alloc,
            pl.lit(" ends again ("),
            pb.backticked(pl.col("event")),
            pl.lit("); it ended at "),
            pb.row_ref(pl.col("end_row")),
            pl.lit(" ("),
            pb.backticked(pl.col("end_event")),
            pl.lit(")"),
        ),
    )
    # T009: end before start
    report(
        table.filter(pl.col("end") < pl.col("start")).with_columns(pl.col("end_row").alias(ROW)),
        "T009",
        pl.concat_str(
            pl.lit("allocation "),
            alloc,
            pl.lit(" ends at "),
            _ts_text(pl.col("end")),
            pl.lit(", before it starts at "),
            _ts_text(pl.col("start")),
            pl.lit(" ("),
            pb.row_ref(pl.col("start_row")),
            pl.lit(")"),
        ),
    )
    # T014: never ends (or --open-at before its start)
    open_allocs = table.filter(
        pl.col("start_row").is_not_null() & pl.col("end_row").is_null() & ~pl.col("_incomplete")
    )
    open_allocs = open_allocs.with_columns(pl.col("start_row").alias(ROW))
    open_ts = pl.lit(open_at).dt.convert_time_zone("UTC").dt.cast_time_unit("us")
    if open_at is None:
        report(
            open_allocs,
            "T014",
            pl.concat_str(pl.lit("allocation "), alloc, pl.lit(" never ends")),
            help="pass `--open-at TIMESTAMP` to close open allocations there as released",
        )
    else:
        report(
            open_allocs.filter(pl.col("start") > open_ts),
            "T009",
            pl.concat_str(
                pl.lit("allocation "),
                alloc,
                pl.lit(" never ends, and it starts after `--open-at` ("),
                _ts_text(open_ts),
                pl.lit(")"),
            ),
        )
    # owners, events without a start, lifetimes: one join of every allocation row. With
    # --open-at an allocation with no end (and no unknown row that may be one) ends there.
    closed_at_open = pl.col("end_row").is_null() & ~pl.col("_incomplete")
    end = (
        pl.col("end")
        if open_at is None
        else pl.when(closed_at_open).then(open_ts).otherwise(pl.col("end"))
    )
    event, ts, start = pl.col("event"), pl.col("ts"), pl.col("start")
    outside = (
        (event.is_in(list(WITHIN_LIFETIME)) & ((ts < start) | (ts > pl.col("end"))))
        | ((event == "requested") & (ts > start))
        | (event.is_in(list(INVOICE_EVENTS)) & (ts < start))
    )
    # a job's or an invoice's clock a little off the scheduler's: within the skew, the event is
    # taken as at the allocation's edge instead of outside it
    skew = pl.lit(clock_skew).cast(pl.Duration("us"))
    early = (ts < start) & (start - ts <= skew)
    late = (ts > pl.col("end")) & (ts - pl.col("end") <= skew) & event.is_in(list(WITHIN_LIFETIME))
    edge = pl.when(early).then(start).when(late).then(pl.col("end"))
    moved = (event.is_in(_SKEWABLE) & outside).fill_null(False) & edge.is_not_null()
    has_start = pl.col("start_row").is_not_null()
    incomplete_alloc = pl.col("alloc_id").is_in(incomplete.implode())
    joined = (
        rows.join(
            table.select("alloc_id", "owner", "start", "start_row", end.alias("end")),
            on="alloc_id",
            how="left",
        )
        .sort(ROW)
        .with_columns(
            (has_start & (pl.col("run_id") != pl.col("owner"))).fill_null(False).alias("_owner"),
            (~has_start & (event != "requested") & ~incomplete_alloc).alias("_no_start"),
            (start.is_not_null() & outside.fill_null(False) & ~moved).alias("_outside"),
            pl.when(moved).then(edge).alias("_edge"),
        )
    )
    clamped = joined.filter(pl.col("_edge").is_not_null()).select(ROW, pl.col("_edge").alias("ts"))
    report(
        joined.filter("_owner"),
        "T013",
        pl.concat_str(
            pl.lit("allocation "),
            alloc,
            pl.lit(" belongs to run "),
            pb.backticked(pl.col("owner")),
            pl.lit(" (started at "),
            pb.row_ref(pl.col("start_row")),
            pl.lit("), but this row names run "),
            pb.backticked(pl.col("run_id")),
        ),
    )
    no_start = joined.filter("_no_start")
    report(
        no_start.filter(pl.col("alloc_id").is_first_distinct()),
        "T016",
        pl.concat_str(pl.lit("allocation "), alloc, pl.lit(" has events but never starts")),
        help="every allocation needs a `started` event with its `gpus`",
    )
    lifetime = pl.concat_str(
        _ts_text(start),
        pl.lit(" to "),
        pl.when(pl.col("end").is_null()).then(pl.lit("its end")).otherwise(_ts_text(pl.col("end"))),
    )
    report(
        joined.filter("_outside"),
        "T010",
        pl.when(event == "requested")
        .then(
            pl.concat_str(
                pl.lit("`requested` for allocation "),
                alloc,
                pl.lit(" at "),
                _ts_text(ts),
                pl.lit(" comes after its start ("),
                _ts_text(start),
                pl.lit(")"),
            )
        )
        .when(event.is_in(list(INVOICE_EVENTS)))
        .then(
            pl.concat_str(
                pl.lit("invoice line for allocation "),
                alloc,
                pl.lit(" at "),
                _ts_text(ts),
                pl.lit(" comes before its start ("),
                _ts_text(start),
                pl.lit(")"),
            )
        )
        .otherwise(
            pl.concat_str(
                pb.backticked(event),
                pl.lit(" of allocation "),
                alloc,
                pl.lit(" at "),
                _ts_text(ts),
                pl.lit(" is outside its lifetime ("),
                lifetime,
                pl.lit(")"),
            )
        ),
    )
    return problems, clamped
