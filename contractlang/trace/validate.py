"""The rules a trace must follow (design §3, issue 3), each a vectorised check over the events.

Every rule reports the row it is about and the rule broken (codes T001–T019, warning W101);
see ``docs/trace.md`` for the full list with messages. Rows with a value problem (found while
normalising) and the allocations they belong to are left out of the later rules, so one mistake
is reported once rather than as a cascade.
"""

from __future__ import annotations

from datetime import datetime

import polars as pl

from contractlang.diagnostics import Severity
from contractlang.errors import ContractlangError
from contractlang.trace import problems as pb
from contractlang.trace.load import BAD, Normalised, Trace
from contractlang.trace.schema import (
    END_EVENTS,
    EVENTS,
    INVALID_CHECKPOINT_REASON,
    INVOICE_EVENTS,
    LIFECYCLE_EVENTS,
    ROW,
    RUN_KEY,
    SOURCES,
    WITHIN_LIFETIME,
    NotUsed,
    TraceSummary,
)

_ORDER = list(EVENTS)
_EXPECTED_SOURCE = pl.Series(
    "expected", [SOURCES.index(EVENTS[e].source) for e in _ORDER], dtype=pl.UInt32
)
#: Row flags computed by :func:`_row_rules`.
_ROW_RULES = ("_wrong_source", "_no_alloc", "_no_gpus", "_no_amount", "_gpus")


def _ts_text(expr: pl.Expr) -> pl.Expr:
    return expr.dt.to_string("%Y-%m-%dT%H:%M:%S%.fZ")


def validate(
    normal: Normalised, *, name: str, open_at: datetime | None, max_problems: int = 50
) -> Trace:
    """Apply every rule to normalised events; return the :class:`Trace` or raise
    :class:`ContractlangError` with the problems found (the first ``max_problems`` by row)."""
    ev = _row_rules(normal.events)
    frames: list[pl.LazyFrame] = [normal.problems, *_row_problems(ev)]
    flagged = pl.any_horizontal([pl.col(BAD), *[pl.col(f) for f in _ROW_RULES]])
    ev = ev.with_columns(flagged.alias(BAD)).drop(_ROW_RULES)
    any_bad = bool(ev.select(pl.col(BAD).any()).item())
    # rows whose values are fine (all of them, usually: then no filtered copy is made)
    good = ev.lazy().filter(~pl.col(BAD)) if any_bad else ev.lazy()

    allocs, alloc_problems = _allocation_rules(good, open_at)
    if any_bad:
        bad_allocs = ev.lazy().filter(pl.col(BAD)).select(pl.col("alloc_id").drop_nulls().unique())
        alloc_problems = [f.join(bad_allocs, on="alloc_id", how="anti") for f in alloc_problems]
    frames += [f.drop("alloc_id") for f in alloc_problems]
    frames.append(_duplicates(good))

    found = pb.collect(frames, file=name, limit=max_problems)
    total = found.total + normal.hidden
    warns = pb.collect(
        [_rollbacks(good, _time_ordered(ev))],
        file=name,
        limit=max_problems,
        severity=Severity.WARNING,
    )
    warnings = [*normal.warnings, *warns.shown]
    if total:
        shown = list(found.shown)
        if total > len(shown):
            shown.append(pb.more_problems(name, pb.Collected(found.shown, total), max_problems))
        raise ContractlangError([*shown, *warnings])

    events = ev.drop(BAD)
    summary = _summary(events, allocs, open_at, normal.extras, len(warnings) + warns.more)
    return Trace(
        events=events,
        source=name,
        extras=normal.extras,
        warnings=tuple(warnings),
        summary=summary,
        open_at=open_at,
        columns_read=normal.columns_read,
    )


# --------------------------------------------------------------------------- row rules


def _row_rules(ev: pl.DataFrame) -> pl.DataFrame:
    """Flags for the rules that need one row only (on rows whose values are fine)."""
    ok = ~pl.col(BAD)
    event = pl.col("event")
    expected = pl.lit(_EXPECTED_SOURCE).gather(event.to_physical())
    return ev.with_columns(
        (ok & (pl.col("source").to_physical() != expected)).alias("_wrong_source"),
        (ok & event.is_in(list(LIFECYCLE_EVENTS)) & pl.col("alloc_id").is_null()).alias(
            "_no_alloc"
        ),
        (ok & (event == "started") & pl.col("gpus").is_null()).alias("_no_gpus"),
        (ok & event.is_in(list(INVOICE_EVENTS)) & pl.col("amount").is_null()).alias("_no_amount"),
        (ok & (pl.col("gpus") <= 0)).fill_null(False).alias("_gpus"),
    )


def _row_problems(ev: pl.DataFrame) -> list[pl.LazyFrame]:
    lf = ev.lazy()
    event = pb.backticked(pl.col("event"))
    return [
        pb.problems(
            lf.filter(pl.col("_wrong_source")),
            "T005",
            pl.concat_str(
                event,
                pl.lit(" events come from `"),
                pl.lit(pl.Series([EVENTS[e].source for e in _ORDER])).gather(
                    pl.col("event").to_physical()
                ),
                pl.lit("`, not "),
                pb.backticked(pl.col("source")),
            ),
        ),
        pb.problems(
            lf.filter(pl.col("_no_alloc")),
            "T015",
            pl.concat_str(event, pl.lit(" needs an `alloc_id`")),
        ),
        pb.problems(
            lf.filter(pl.col("_no_gpus")),
            "T015",
            pl.lit("`started` needs `gpus`"),
        ),
        pb.problems(
            lf.filter(pl.col("_no_amount")),
            "T015",
            pl.concat_str(pl.lit("invoice line "), event, pl.lit(" needs an `amount`")),
        ),
        pb.problems(
            lf.filter(pl.col("_gpus")),
            "T011",
            pl.concat_str(pl.lit("`gpus` must be positive, not "), pb.backticked(pl.col("gpus"))),
        ),
    ]


# --------------------------------------------------------------------------- allocations


def _allocation_rules(
    good: pl.LazyFrame, open_at: datetime | None
) -> tuple[pl.DataFrame, list[pl.LazyFrame]]:
    """The allocation rules (T007–T010, T013, T014, T016).

    One ``group_by`` over the rows that name an allocation summarises each allocation (its
    starts, ends, runs and the time range of each kind of event) and flags every allocation
    that may break a rule; only the rows of flagged allocations are then checked row by row
    (:func:`_allocation_details`), which is where messages come from. Returns the summary
    (``alloc_id``, ``starts``, ``ends``, ``start``, ``end``) and the problem frames (each with
    an ``alloc_id`` column)."""
    rows = good.filter(pl.col("alloc_id").is_not_null()).select(
        ROW, RUN_KEY, "run_id", "alloc_id", "ts", "event"
    )
    event, ts = pl.col("event"), pl.col("ts")

    def at(cond: pl.Expr) -> pl.Expr:
        return pl.when(cond).then(ts)

    per = (
        rows.with_columns(
            at(event == "started").alias("_s"),
            at(event.is_in(list(END_EVENTS))).alias("_e"),
            at(event.is_in(list(WITHIN_LIFETIME))).alias("_w"),
            at(event == "requested").alias("_r"),
            at(event.is_in(list(INVOICE_EVENTS))).alias("_i"),
        )
        .group_by("alloc_id")
        .agg(
            pl.col("_s").count().alias("starts"),
            pl.col("_e").count().alias("ends"),
            pl.col("_s").min().alias("start"),
            pl.col("_e").min().alias("end"),
            (pl.len() - pl.col("_r").count()).alias("_not_requests"),
            pl.col("_w").min().alias("_w_lo"),
            pl.col("_w").max().alias("_w_hi"),
            pl.col("_r").max().alias("_r_hi"),
            pl.col("_i").min().alias("_i_lo"),
            (pl.col(RUN_KEY).min() != pl.col(RUN_KEY).max()).alias("_two_runs"),
        )
        .collect()
    )
    start, end = pl.col("start"), pl.col("end")
    if open_at is None:
        unended = pl.col("ends") == 0
        end_eff = end
    else:
        open_ts = pl.lit(open_at).dt.convert_time_zone("UTC").dt.cast_time_unit("us")
        unended = (pl.col("ends") == 0) & (start > open_ts)
        end_eff = end.fill_null(open_ts)
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
    summary = per.select("alloc_id", "starts", "ends", "start", "end")
    if flagged.is_empty():
        return summary, []
    detail = rows.join(flagged.lazy(), on="alloc_id", how="semi").collect()
    return summary, _allocation_details(detail, open_at)


def _allocation_details(rows: pl.DataFrame, open_at: datetime | None) -> list[pl.LazyFrame]:
    """Row-by-row allocation rules on the rows of the allocations that may break one."""
    starts = (
        rows.filter(pl.col("event") == "started")
        .sort(["ts", ROW])
        .with_columns(pl.col("alloc_id").is_first_distinct().alias("_first"))
    )
    ends = (
        rows.filter(pl.col("event").is_in(list(END_EVENTS)))
        .sort(["ts", ROW])
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
    table = first_start.join(first_end, on="alloc_id", how="full", coalesce=True)
    problems: list[pl.LazyFrame] = []

    def report(frame: pl.DataFrame, code: str, message: pl.Expr, help: str | None = None) -> None:
        if frame.height:
            problems.append(pb.problems(frame, code, message, help=help, keep=["alloc_id"]))

    alloc = pb.backticked(pl.col("alloc_id"))

    def row_of(col: str) -> pl.Expr:
        return pl.col(col).cast(pl.String)

    # T007 / T008: a second start, a second end
    report(
        starts.filter(~pl.col("_first")).join(first_start, on="alloc_id"),
        "T007",
        pl.concat_str(
            pl.lit("allocation "),
            alloc,
            pl.lit(" starts again; it started at row "),
            row_of("start_row"),
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
            pl.lit("); it ended at row "),
            row_of("end_row"),
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
            pl.lit(" (row "),
            row_of("start_row"),
            pl.lit(")"),
        ),
    )
    # T014: never ends (or --open-at before its start)
    open_allocs = table.filter(pl.col("start").is_not_null() & pl.col("end").is_null())
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
    # owners, events without a start, lifetimes: one join of every allocation row
    end = pl.col("end") if open_at is None else pl.col("end").fill_null(open_ts)
    event, ts, start = pl.col("event"), pl.col("ts"), pl.col("start")
    outside = (
        (event.is_in(list(WITHIN_LIFETIME)) & ((ts < start) | (ts > pl.col("end"))))
        | ((event == "requested") & (ts > start))
        | (event.is_in(list(INVOICE_EVENTS)) & (ts < start))
    )
    joined = rows.join(
        table.select("alloc_id", "owner", "start", "start_row", end.alias("end")),
        on="alloc_id",
        how="left",
    ).with_columns(
        (start.is_not_null() & (pl.col("run_id") != pl.col("owner"))).alias("_owner"),
        (start.is_null() & (event != "requested")).alias("_no_start"),
        (start.is_not_null() & outside.fill_null(False)).alias("_outside"),
    )
    report(
        joined.filter("_owner"),
        "T013",
        pl.concat_str(
            pl.lit("allocation "),
            alloc,
            pl.lit(" belongs to run "),
            pb.backticked(pl.col("owner")),
            pl.lit(" (started at row "),
            row_of("start_row"),
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
    return problems


# --------------------------------------------------------------------------- duplicates


def _duplicates(good: pl.LazyFrame) -> pl.LazyFrame:
    """T012: rows equal in every column. Candidates share an integer key mixing the run, the
    time and the event (equal rows have equal keys; a few unequal rows may collide), found by
    one sort of the key; only candidates are compared in full."""
    cols = [c for c in good.collect_schema().names() if c not in (ROW, BAD, RUN_KEY)]
    key = (pl.col("ts").dt.epoch("us") * 64 + pl.col("event").to_physical().cast(pl.Int64)).xor(
        pl.col(RUN_KEY).cast(pl.Int64) * (1 << 40)
    )  # wraps on overflow, which is fine for a key that only finds candidates
    keyed = good.select(ROW, key.alias("_key")).collect()
    ordered = keyed.get_column("_key").sort()
    repeated = ordered.filter(ordered == ordered.shift(1)).unique()
    if repeated.is_empty():
        return pb.empty()
    rows = keyed.filter(pl.col("_key").is_in(repeated.implode())).get_column(ROW)
    candidates = good.filter(pl.col(ROW).is_in(rows.implode())).collect()
    dups = candidates.with_columns(pl.col(ROW).min().over(cols).alias("_first")).filter(
        pl.col(ROW) != pl.col("_first")
    )
    return pb.problems(
        dups,
        "T012",
        pl.concat_str(
            pl.lit("this row repeats row "), pl.col("_first").cast(pl.String), pl.lit(" exactly")
        ),
        help="remove the duplicate; an event is recorded once",
    )


# --------------------------------------------------------------------------- warnings


def _rollbacks(good: pl.LazyFrame, time_ordered: bool) -> pl.LazyFrame:
    """W101: a valid checkpoint whose step is below an earlier valid one of the run.

    Checkpoints are taken in time order (ties in file order): a stable sort by time, skipped
    when the file is already in time order, as logs usually are."""
    ck = good.filter(
        (pl.col("event") == "checkpoint")
        & pl.col("valid").fill_null(True)
        & pl.col("step").is_not_null()
    ).select(ROW, RUN_KEY, "ts", "step")
    if not time_ordered:
        ck = ck.sort("ts", maintain_order=True)
    earlier = pl.col("step").cum_max().shift(1).over(RUN_KEY)  # max of earlier steps
    ck = ck.with_columns(earlier.alias("_max")).filter(pl.col("step") < pl.col("_max"))
    return pb.problems(
        ck,
        "W101",
        pl.concat_str(
            pl.lit("checkpoint step "),
            pl.col("step").cast(pl.String),
            pl.lit(" is below an earlier valid checkpoint's step "),
            pl.col("_max").cast(pl.String),
        ),
        help="a deliberate rollback is fine; `last_checkpoint` is still the latest valid one",
    )


def _time_ordered(ev: pl.DataFrame) -> bool:
    """Whether the rows are in time order (nulls, from bad rows, are left out)."""
    ts = ev.get_column("ts")
    return bool(ts.is_sorted() or ts.drop_nulls().is_sorted())


# --------------------------------------------------------------------------- summary


def _summary(
    events: pl.DataFrame,
    allocs: pl.DataFrame,
    open_at: datetime | None,
    extras: tuple[str, ...],
    warnings: int,
) -> TraceSummary:
    counts = dict(
        events.group_by("event").len().select(pl.col("event").cast(pl.String), "len").iter_rows()
    )
    invalid = events.select(
        ((pl.col("event") == "checkpoint") & ~pl.col("valid").fill_null(True)).sum()
    ).item()
    reasons: dict[str, int] = {}
    for event, kind in EVENTS.items():
        if kind.not_used and counts.get(event, 0):
            reasons[kind.not_used] = reasons.get(kind.not_used, 0) + counts[event]
    if invalid:
        reasons[INVALID_CHECKPOINT_REASON] = invalid
    not_used = tuple(NotUsed(reason=r, rows=n) for r, n in reasons.items())
    span = events.select(pl.col("ts").min().alias("lo"), pl.col("ts").max().alias("hi"))
    closed = (
        allocs.filter((pl.col("starts") > 0) & (pl.col("ends") == 0)).height
        if open_at is not None
        else 0
    )
    return TraceSummary(
        rows_read=events.height,
        rows_used=events.height - sum(n.rows for n in not_used),
        not_used=not_used,
        runs=events.select(pl.col(RUN_KEY).n_unique()).item(),
        allocations=allocs.filter(pl.col("starts") > 0).height,
        closed_at_open_at=closed,
        first_ts=span["lo"].item(),
        last_ts=span["hi"].item(),
        events={e: counts[e] for e in EVENTS if counts.get(e)},
        extra_columns=extras,
        warnings=warnings,
    )
