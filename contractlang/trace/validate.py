"""The rules a trace must follow (design §3, issue 3), each a vectorised check over the events.

Every rule reports the row it is about and the rule broken (codes T001–T019, warning W101);
see ``docs/trace.md`` for the full list with messages.

A bad value (found while normalising) is reported once, and a row is left out only of the rules
that read the bad value, so one mistake does not cause a cascade of others while every other row
of its allocation, and the row's other values, are still checked by every rule:

- a bad value is normalised to null, and every rule treats a null where a value is needed as
  "cannot tell" (no error); the per-column flags of :class:`Normalised` tell a bad value from an
  absent one where absence itself is a rule (`started` needs `gpus`, invoice lines an `amount`);
- a row whose `event` is unknown (or missing) cannot be classified: it is left out of the
  allocation rules, and its allocation is not checked for never ending (T014) or never starting
  (T016), since that row may have been its end or its start;
- a row whose `ts` is unreadable still counts as a start or an end (T007, T008, T014, T016,
  T013), but it is left out of every comparison of times; an allocation whose only `started`
  (or only end) row has an unreadable `ts` has no known start (or end), so it is not checked
  for ending before it starts (T009) or for events outside its lifetime (T010) on that side;
- rows with any bad value are left out of the duplicate check (T012): their values could not be
  read, so they cannot be compared.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, Literal, cast

import polars as pl

from contractlang.diagnostics import Diagnostic, Severity
from contractlang.errors import ContractlangError
from contractlang.trace import problems as pb
from contractlang.trace.model import BAD, Normalised, Trace, TraceIndex, bad_flag
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
#: The columns of :attr:`TraceIndex.allocations`, computed by the allocation rules' group-by.
INDEX_COLUMNS = ("start_row", "end_row", "notice_at", "own_request")
#: The polars engine of the validation's passes (measured faster than ``in-memory`` here).
ENGINE: Literal["streaming", "in-memory"] = "streaming"


def _ts_text(expr: pl.Expr) -> pl.Expr:
    return expr.dt.to_string("%Y-%m-%dT%H:%M:%S%.fZ")


class TraceInvalid(ContractlangError):
    """An invalid trace: the diagnostics shown, and counts for a one-line total.

    ``rows`` is the number of rows read, ``errors`` the number of problems found (shown or
    not), ``error_rows`` the number of rows with at least one, ``warnings`` the number of
    warnings."""

    def __init__(
        self,
        diagnostics: list[Diagnostic],
        *,
        rows: int,
        errors: int,
        error_rows: int,
        warnings: int,
    ) -> None:
        super().__init__(diagnostics)
        self.rows = rows
        self.errors = errors
        self.error_rows = error_rows
        self.warnings = warnings


def validate(
    normal: Normalised, *, name: str, open_at: datetime | None, max_problems: int = 50
) -> Trace:
    """Apply every rule to normalised events; return the :class:`Trace` or raise
    :class:`TraceInvalid` with the problems found (the first ``max_problems`` by row)."""
    ev = normal.events
    frames: list[pl.LazyFrame] = [normal.problems, *_row_problems(ev)]
    any_bad = bool(normal.bad_columns)
    # rows whose values are all fine (all of them, usually: then no filtered copy is made)
    good = ev.lazy().filter(~pl.col(BAD)) if any_bad else ev.lazy()

    allocs, alloc_problems = _allocation_rules(ev.lazy(), open_at)
    frames += [f.drop("alloc_id") for f in alloc_problems]
    frames.append(_duplicates(good))

    found = pb.collect(frames, file=name, limit=max_problems)
    total = found.total + normal.hidden
    warns = pb.collect(
        [_rollbacks(ev.lazy(), _bad(ev, "valid"), _time_ordered(ev))],
        file=name,
        limit=max_problems,
        severity=Severity.WARNING,
    )
    warnings = [*normal.warnings, *warns.shown]
    if total:
        shown = list(found.shown)
        if total > len(shown):
            shown.append(pb.more_problems(name, pb.Collected(found.shown, total), max_problems))
        bad_rows = ev.filter(pl.col(BAD)).get_column(ROW)
        error_rows = pl.concat([found.rows, bad_rows.cast(pl.Int64)]).n_unique()
        raise TraceInvalid(
            [*shown, *warnings],
            rows=ev.height,
            errors=total,
            error_rows=error_rows,
            warnings=len(warnings) + warns.more,
        )

    events = ev.drop(BAD, *[bad_flag(c) for c in normal.bad_columns])
    summary = _summary(events, allocs, open_at, normal.extras, len(warnings) + warns.more)
    # every `started` row is the one start of its allocation here, so the allocations that
    # start, in the order of their start rows, are the `started` rows in file order
    index = TraceIndex(
        normal.run_ids,
        allocs.lazy()
        .filter(pl.col("starts") > 0)
        .select(INDEX_COLUMNS)
        .sort("start_row")
        .collect(engine=ENGINE),
        events,
    )
    return Trace(
        events=events,
        source=name,
        extras=normal.extras,
        warnings=tuple(warnings),
        summary=summary,
        open_at=open_at,
        columns_read=normal.columns_read,
        index=index,
    )


# --------------------------------------------------------------------------- row rules


def _bad(ev: pl.DataFrame, column: str) -> pl.Expr:
    """Whether the row's value in ``column`` is bad (false when no value there is)."""
    flag = bad_flag(column)
    return pl.col(flag) if flag in ev.columns else pl.lit(False)


def _row_rules(ev: pl.DataFrame) -> dict[str, pl.Expr]:
    """Flags for the rules that need one row only, by name. A bad value is null here, and a
    null where a rule needs a value flags nothing; a bad `gpus` or `amount` is not a missing
    one."""
    event = pl.col("event")
    expected = pl.lit(_EXPECTED_SOURCE).gather(event.to_physical())
    flags = {
        "_wrong_source": pl.col("source").to_physical() != expected,
        "_no_alloc": event.is_in(list(LIFECYCLE_EVENTS)) & pl.col("alloc_id").is_null(),
        "_no_gpus": (event == "started") & pl.col("gpus").is_null() & ~_bad(ev, "gpus"),
        "_no_amount": (
            event.is_in(list(INVOICE_EVENTS)) & pl.col("amount").is_null() & ~_bad(ev, "amount")
        ),
        "_gpus": pl.col("gpus") <= 0,
    }
    return {name: flag.fill_null(False) for name, flag in flags.items()}


def _row_problems(ev: pl.DataFrame) -> list[pl.LazyFrame]:
    """The problems of the row rules: one pass counts the rows each rule flags, and only the
    rules that flag a row are filtered again for their messages (usually none)."""
    flags = _row_rules(ev)
    counts = ev.lazy().select(f.sum().alias(n) for n, f in flags.items()).collect(engine=ENGINE)
    lf = ev.lazy()
    event = pb.backticked(pl.col("event"))
    messages: dict[str, tuple[str, pl.Expr]] = {
        "_wrong_source": (
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
        "_no_alloc": ("T015", pl.concat_str(event, pl.lit(" needs an `alloc_id`"))),
        "_no_gpus": ("T015", pl.lit("`started` needs `gpus`")),
        "_no_amount": (
            "T015",
            pl.concat_str(pl.lit("invoice line "), event, pl.lit(" needs an `amount`")),
        ),
        "_gpus": (
            "T011",
            pl.concat_str(pl.lit("`gpus` must be positive, not "), pb.backticked(pl.col("gpus"))),
        ),
    }
    return [
        pb.problems(lf.filter(flags[n]), code, message)
        for n, (code, message) in messages.items()
        if counts.get_column(n).item()
    ]


# --------------------------------------------------------------------------- allocations


def _allocation_rules(
    events: pl.LazyFrame, open_at: datetime | None
) -> tuple[pl.DataFrame, list[pl.LazyFrame]]:
    """The allocation rules (T007–T010, T013, T014, T016).

    One ``group_by`` over the rows that name an allocation summarises each allocation (its
    starts, ends, runs and the time range of each kind of event) and flags every allocation
    that may break a rule; only the rows of flagged allocations are then checked row by row
    (:func:`_allocation_details`), which is where messages come from. Returns the summary
    (``alloc_id``, ``starts``, ``ends``, ``start``, ``end`` and the :data:`INDEX_COLUMNS`)
    and the problem frames (each with an ``alloc_id`` column).

    Rows with bad values take part: a null (bad) `event`, `ts` or `run_id` is left out of
    whatever reads it (see the module's docstring)."""
    rows = events.filter(pl.col("alloc_id").is_not_null()).select(
        ROW, RUN_KEY, "run_id", "alloc_id", "ts", "event"
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
    if flagged.is_empty():
        return summary, []
    detail = rows.join(flagged.lazy(), on="alloc_id", how="semi").collect(engine=ENGINE)
    return summary, _allocation_details(detail, open_at)


def _allocation_details(detail: pl.DataFrame, open_at: datetime | None) -> list[pl.LazyFrame]:
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
            (start.is_not_null() & outside.fill_null(False)).alias("_outside"),
        )
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
    """T012: rows equal in every column. Candidates share an integer key mixing the time, the
    run and the event (equal rows have equal keys; a few unequal rows may collide), found by
    one sort of the key; only candidates are compared in full, so which unequal rows collide
    does not change the result.

    The key is ordered by time first (:func:`_time_first_key`), so for a trace in time order,
    or nearly so, as logs usually are, it is nearly sorted already and sorts in well under
    half the time."""
    cols = [c for c in good.collect_schema().names() if c not in (ROW, BAD, RUN_KEY)]
    span = good.select(
        pl.col("ts").min().alias("lo"),
        pl.col("ts").max().alias("hi"),
        pl.col(RUN_KEY).max().alias("runs"),
    ).collect(engine=ENGINE)
    key = _time_first_key(span.row(0, named=True))
    # one stable sort (streaming: much the fastest on a key nearly in order already); the
    # candidates are the rows whose key equals the one before or after
    k = pl.col("_key")
    rows = (
        good.select(ROW, key.alias("_key"))
        .sort("_key", maintain_order=True)
        .filter((k == k.shift(1)) | (k == k.shift(-1)))
        .collect(engine=ENGINE)
        .get_column(ROW)
    )
    if rows.is_empty():
        return pb.empty()
    candidates = good.filter(pl.col(ROW).is_in(rows.implode())).collect(engine=ENGINE)
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


def _time_first_key(span: dict[str, Any]) -> pl.Expr:
    """The duplicate check's key: ``µs since the first event`` (shifted right just enough to
    fit) above the run key above the event, when the trace's span and runs fit in 62 bits;
    otherwise the time, the event and the run mixed in a key that may wrap. Equal rows have
    equal keys either way."""
    event_bits = (len(EVENTS) - 1).bit_length()
    lo: datetime | None = span["lo"]
    hi: datetime | None = span["hi"]
    runs: int | None = span["runs"]
    if lo is None or hi is None or runs is None:
        mixed: pl.Expr = (
            pl.col("ts").dt.epoch("us") * 64 + pl.col("event").to_physical().cast(pl.Int64)
        ).xor(pl.col(RUN_KEY).cast(pl.Int64) * (1 << 40))  # wraps on overflow, which is fine
        return mixed
    low_bits = int(runs).bit_length() + event_bits
    drop = max(0, ((hi - lo) // timedelta(microseconds=1)).bit_length() + low_bits - 62)
    since = (pl.col("ts") - pl.lit(lo)).dt.total_microseconds() // (1 << drop)
    low = pl.col(RUN_KEY).cast(pl.Int64) * (1 << event_bits)
    return since * (1 << low_bits) + low + pl.col("event").to_physical().cast(pl.Int64)


# --------------------------------------------------------------------------- warnings


def _rollbacks(events: pl.LazyFrame, bad_valid: pl.Expr, time_ordered: bool) -> pl.LazyFrame:
    """W101: a valid checkpoint whose step is below an earlier valid one of the run.

    Checkpoints are taken in time order (ties in file order). A checkpoint whose `valid`,
    `step`, `ts` or `run_id` is bad (or missing) is left out: it cannot be placed or compared.
    ``time_ordered`` says the rows are in time order already, as logs usually are."""
    ck = events.filter(
        (pl.col("event") == "checkpoint")
        & pl.col("valid").fill_null(True)
        & ~bad_valid
        & pl.col("step").is_not_null()
        & pl.col("ts").is_not_null()
        & pl.col(RUN_KEY).is_not_null()
    ).select(ROW, RUN_KEY, "ts", "step")
    ck = _with_earlier_max(ck, time_ordered).filter(pl.col("step") < pl.col("_max"))
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


def _with_earlier_max(ck: pl.LazyFrame, time_ordered: bool) -> pl.LazyFrame:
    """``ck`` (checkpoints, in file order) with ``_max``: the largest step of the run's
    checkpoints before each in time order, ties in file order (null for a run's first).

    Said plainly: a stable sort by time, then ``cum_max().shift(1).over(run_key)``. The same,
    faster: one stable sort that puts each run's checkpoints together in that order (by run
    alone when the rows are in time order already, else by ``run_key × 2^b + µs``), then one
    running maximum over the whole frame of ``run_key × 2^bits + (step − lowest step)``, which
    in a run's rows can only come from a step of that run, since earlier runs pack below it.
    Rows come out in run order. When the numbers do not fit in 62 bits, the plain way."""
    bounds = ck.select(
        pl.col("step").min().alias("lo"),
        pl.col("step").max().alias("hi"),
        pl.col(RUN_KEY).max().alias("runs"),
        pl.col("ts").min().alias("first"),
        pl.col("ts").max().alias("last"),
    ).collect(engine=ENGINE)
    lo, hi, runs, first, last = bounds.row(0)
    in_time = ck if time_ordered else ck.sort("ts", maintain_order=True)
    plain = in_time.with_columns(pl.col("step").cum_max().shift(1).over(RUN_KEY).alias("_max"))
    if lo is None or hi is None or runs is None or first is None or last is None:
        return plain
    run_bits = int(runs).bit_length()
    step_bits = max(1, (int(hi) - int(lo)).bit_length())
    time_bits = max(1, ((last - first) // timedelta(microseconds=1)).bit_length())
    if run_bits + step_bits > 62 or (not time_ordered and run_bits + time_bits > 62):
        return plain
    if time_ordered:
        by_run = ck.sort(RUN_KEY, maintain_order=True)
    else:
        since = (pl.col("ts") - pl.lit(first)).dt.total_microseconds()
        by_run = ck.sort(
            pl.col(RUN_KEY).cast(pl.Int64) * (1 << time_bits) + since, maintain_order=True
        )
    base = pl.col(RUN_KEY).cast(pl.Int64) * (1 << step_bits)
    packed = base + (pl.col("step") - int(lo))
    same_run = pl.col(RUN_KEY) == pl.col(RUN_KEY).shift(1)
    earlier = pl.when(same_run).then(packed.cum_max().shift(1) - base + int(lo))
    return by_run.with_columns(earlier.alias("_max"))


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
        runs=_count_runs(events.get_column(RUN_KEY)),
        allocations=allocs.filter(pl.col("starts") > 0).height,
        closed_at_open_at=closed,
        first_ts=span["lo"].item(),
        last_ts=span["hi"].item(),
        events={e: counts[e] for e in EVENTS if counts.get(e)},
        extra_columns=extras,
        warnings=warnings,
    )


def _count_runs(run_key: pl.Series) -> int:
    """The number of distinct run keys, null counted as one, as ``n_unique`` counts them,
    without hashing every row: run keys are positions in the sorted list of the trace's run
    ids (:func:`~contractlang.trace.normalise.normalise`), so every key from 0 to the largest
    occurs."""
    top = run_key.max()
    distinct = 0 if top is None else int(cast("int", top)) + 1
    return distinct + (1 if run_key.null_count() else 0)
