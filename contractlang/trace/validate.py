"""The rules a trace must follow, each a vectorised check over the events.

Every rule reports the row it is about and the rule broken (codes T001–T019, warning W101);
see docs/trace.md, "Rules", for the full list with messages.

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

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import cast

import polars as pl

from contractlang.diagnostics import NO_SPAN, Diagnostic, Severity
from contractlang.lang.numbers import counted, plain, scaled
from contractlang.trace import checkpoints
from contractlang.trace import problems as pb
from contractlang.trace.allocation_rules import INDEX_COLUMNS, Findings, allocation_rules
from contractlang.trace.model import BAD, Normalised, Quarantine, Trace, TraceIndex, bad_flag
from contractlang.trace.problems import TraceInvalid
from contractlang.trace.quarantine import nothing_aside, set_aside
from contractlang.trace.row_rules import (
    ENGINE,
    bad,
    duplicates,
    row_problems,
    row_warnings,
    time_ordered,
)
from contractlang.trace.schema import (
    EVENTS,
    INVALID_CHECKPOINT_REASON,
    ROW,
    RUN_KEY,
    NotUsed,
    TraceSummary,
)


def validate(
    normal: Normalised,
    *,
    name: str | pb.Sources,
    open_at: datetime | None,
    max_problems: int = 50,
    clock_skew: timedelta = timedelta(0),
    quarantine: bool = False,
) -> Trace:
    """Apply every rule to normalised events; return the :class:`Trace` or raise
    :class:`TraceInvalid` with the problems found (the first ``max_problems`` by row).
    ``name`` is the file's name, or the files' (:class:`~contractlang.trace.problems.Sources`)
    when the events come from several. With ``quarantine``, a trace with problems is not
    invalid: the runs they touch are set aside (:mod:`~contractlang.trace.quarantine`) and the
    rest validated again."""
    sources = pb.Sources.of(name)
    checked, aside, _ = check_runs(
        normal,
        sources,
        open_at=open_at,
        max_problems=max_problems,
        clock_skew=clock_skew,
        quarantine=quarantine,
    )
    warnings, count = verdict(
        [report(checked)], sources, max_problems=max_problems, clock_skew=clock_skew
    )
    trace = finish(checked, sources, warnings, count, open_at)
    return trace if aside is None else replace(trace, quarantine=aside)


@dataclass(frozen=True)
class Checked:
    """What the rules found in normalised events (a whole trace's, or a shard's runs'): the
    errors and warnings, every allocation's summary, the rows the clock skew moved, and the
    valid checkpoints in run order (:func:`~contractlang.trace.checkpoints.by_run`)."""

    normal: Normalised
    found: pb.Collected
    warns: pb.Collected
    findings: Findings
    checkpoints: pl.DataFrame

    @property
    def total(self) -> int:
        """How many errors: those found, and the value problems beyond the limit."""
        return self.found.total + self.normal.hidden


@dataclass(frozen=True)
class CheckReport:
    """What a verdict needs of one :class:`Checked`: small, so that the reports of every
    shard of a large trace can be kept and merged (:func:`verdict`) into the same diagnostics
    as one check of the whole trace. ``problems`` and ``warnings`` hold every problem found
    (:data:`~contractlang.trace.problems.PROBLEM_SCHEMA`), ``file_warnings`` the files' own
    (W102), ``clamped`` the rows the clock skew moved, ``rows`` the rows checked and
    ``error_rows`` those with an error."""

    problems: pl.DataFrame
    hidden: int
    warnings: pl.DataFrame
    file_warnings: tuple[Diagnostic, ...]
    clamped: int
    rows: int
    error_rows: int


def check(
    normal: Normalised,
    sources: pb.Sources,
    *,
    open_at: datetime | None,
    max_problems: int,
    clock_skew: timedelta,
) -> Checked:
    """Every rule over ``normal``'s events: the problems and warnings found, not yet judged."""
    ev = normal.events
    frames: list[pl.LazyFrame] = [normal.problems, *row_problems(ev, normal.sparse)]
    any_bad = bool(normal.bad_columns)
    # rows whose values are all fine (all of them, usually: then no filtered copy is made)
    good = ev.lazy().filter(~pl.col(BAD)) if any_bad else ev.lazy()

    findings = allocation_rules(ev.lazy(), open_at, clock_skew, run_ids=normal.run_ids)
    frames += [f.drop("alloc_id") for f in findings.problems]
    frames.append(duplicates(good, normal.sparse))

    found = pb.collect(frames, file=sources, limit=max_problems)
    ordered = checkpoints.by_run(ev.lazy(), bad(ev, "valid"), time_ordered(ev))
    warns = pb.collect(
        [
            checkpoints.rollbacks(ordered),
            *row_warnings(ev, normal.sparse),
            *findings.warnings,
        ],
        file=sources,
        limit=max_problems,
        severity=Severity.WARNING,
    )
    return Checked(normal, found, warns, findings, ordered)


def check_runs(
    normal: Normalised,
    sources: pb.Sources,
    *,
    open_at: datetime | None,
    max_problems: int,
    clock_skew: timedelta,
    quarantine: bool,
) -> tuple[Checked, Quarantine | None, Checked]:
    """:func:`check`; with ``quarantine``, the runs with a problem set aside first and the
    rest checked again. Returns the last check, the runs set aside (``None`` without
    ``quarantine``) and the first check, of every row."""

    def checked_of(events: Normalised) -> Checked:
        return check(
            events, sources, open_at=open_at, max_problems=max_problems, clock_skew=clock_skew
        )

    checked = checked_of(normal)
    if not quarantine:
        return checked, None, checked
    if not checked.total:
        return checked, nothing_aside(normal, sources), checked
    kept, aside = set_aside(normal, checked.found.found, sources)
    return checked_of(kept), aside, checked


def report(checked: Checked) -> CheckReport:
    """The :class:`CheckReport` of one check."""
    ev, found = checked.normal.events, checked.found
    error_rows = 0
    if checked.total:
        bad_rows = ev.filter(pl.col(BAD)).get_column(ROW)
        error_rows = pl.concat([found.rows, bad_rows.cast(pl.Int64)]).n_unique()
    return CheckReport(
        problems=found.found,
        hidden=checked.normal.hidden,
        warnings=checked.warns.found,
        file_warnings=checked.normal.warnings,
        clamped=checked.findings.clamped.height,
        rows=ev.height,
        error_rows=error_rows,
    )


def verdict(
    reports: Sequence[CheckReport],
    sources: pb.Sources,
    *,
    max_problems: int,
    clock_skew: timedelta,
) -> tuple[list[Diagnostic], int]:
    """The warnings of a valid trace (and how many there are, shown or not), or
    :class:`TraceInvalid` with the first ``max_problems`` problems by row. ``reports`` cover
    disjoint rows of one trace: one report of the whole trace, or one per shard of its runs,
    give the same diagnostics."""
    found = pb.collect([r.problems.lazy() for r in reports], file=sources, limit=max_problems)
    total = found.total + sum(r.hidden for r in reports)
    warns = pb.collect(
        [r.warnings.lazy() for r in reports],
        file=sources,
        limit=max_problems,
        severity=Severity.WARNING,
    )
    clamped = sum(r.clamped for r in reports)
    file_warnings = reports[0].file_warnings if reports else ()
    warnings = [*file_warnings, *warns.shown, *_skew_note(clamped, clock_skew, sources)]
    if total:
        shown = list(found.shown)
        if total > len(shown):
            more = pb.Collected(found.shown, total)
            shown.append(pb.more_problems(sources.label, more, max_problems))
        raise TraceInvalid(
            [*shown, *warnings],
            rows=sum(r.rows for r in reports),
            errors=total,
            error_rows=sum(r.error_rows for r in reports),
            warnings=len(warnings) + warns.more,
        )
    return warnings, len(warnings) + warns.more


def finish(
    checked: Checked,
    sources: pb.Sources,
    warnings: Sequence[Diagnostic],
    warning_count: int,
    open_at: datetime | None,
) -> Trace:
    """The :class:`Trace` of events the rules found valid, with its summary and index."""
    normal, findings = checked.normal, checked.findings
    allocs = findings.summary
    events = normal.events.drop(BAD, *[bad_flag(c) for c in normal.bad_columns])
    if findings.clamped.height:
        events = events.update(findings.clamped, on=ROW)
    summary = summary_of(summary_parts(events, allocs, open_at), normal.extras, warning_count)
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
        # sorted by the times read: a time the clock skew moved may move a checkpoint
        None if findings.clamped.height else checked.checkpoints.drop(ROW),
    )
    return Trace(
        dense=events,
        sparse=normal.sparse,
        source=sources.label,
        extras=normal.extras,
        warnings=tuple(warnings),
        summary=summary,
        open_at=open_at,
        columns_read=normal.columns_read,
        index=index,
        sources=sources,
        run_ids=normal.run_ids,
    )


# --------------------------------------------------------------------------- summary


def _skew_note(clamped: int, clock_skew: timedelta, sources: pb.Sources) -> list[Diagnostic]:
    """W106: how many job and invoice events the clock skew moved to their allocation's edge."""
    if not clamped:
        return []
    n = clamped
    return [
        Diagnostic(
            "W106",
            f"{counted(n, 'job or invoice event')} fell up to "
            f"{_seconds(clock_skew)} outside {'its' if n == 1 else 'their'} allocation's "
            "lifetime and "
            f"{'is' if n == 1 else 'are'} taken as at its edge (`--clock-skew`)",
            NO_SPAN,
            file=sources.label,
            severity=Severity.WARNING,
            help="the job's or the invoice's clock differs a little from the scheduler's; "
            "pass `--clock-skew 0` to see each as an error",
        )
    ]


def _seconds(d: timedelta) -> str:
    return f"{plain(scaled(d // timedelta(microseconds=1), 6).normalize())} s"


@dataclass(frozen=True)
class SummaryParts:
    """The counts a :class:`TraceSummary` is made of, for events that may be one shard of a
    trace's runs: :func:`merge_summary_parts` adds up those of every shard."""

    rows: int
    events: dict[str, int]
    invalid_checkpoints: int
    runs: int
    allocations: int
    closed_at_open_at: int
    first_ts: datetime | None
    last_ts: datetime | None


def summary_parts(
    events: pl.DataFrame, allocs: pl.DataFrame, open_at: datetime | None
) -> SummaryParts:
    counts = dict(
        events.group_by("event").len().select(pl.col("event").cast(pl.String), "len").iter_rows()
    )
    invalid = events.select(
        ((pl.col("event") == "checkpoint") & ~pl.col("valid").fill_null(True)).sum()
    ).item()
    span = events.select(pl.col("ts").min().alias("lo"), pl.col("ts").max().alias("hi"))
    closed = (
        allocs.filter((pl.col("starts") > 0) & (pl.col("ends") == 0)).height
        if open_at is not None
        else 0
    )
    return SummaryParts(
        rows=events.height,
        events=counts,
        invalid_checkpoints=int(invalid),
        runs=_count_runs(events.get_column(RUN_KEY)),
        allocations=allocs.filter(pl.col("starts") > 0).height,
        closed_at_open_at=closed,
        first_ts=span["lo"].item(),
        last_ts=span["hi"].item(),
    )


def merge_summary_parts(parts: Sequence[SummaryParts]) -> SummaryParts:
    """The parts of shards of disjoint runs, as the parts of all their events together (a
    shard's runs count null ``run_id`` as one run; only one shard holds such rows)."""
    events: dict[str, int] = {}
    for p in parts:
        for event, n in p.events.items():
            events[event] = events.get(event, 0) + n
    firsts = [p.first_ts for p in parts if p.first_ts is not None]
    lasts = [p.last_ts for p in parts if p.last_ts is not None]
    return SummaryParts(
        rows=sum(p.rows for p in parts),
        events=events,
        invalid_checkpoints=sum(p.invalid_checkpoints for p in parts),
        runs=sum(p.runs for p in parts),
        allocations=sum(p.allocations for p in parts),
        closed_at_open_at=sum(p.closed_at_open_at for p in parts),
        first_ts=min(firsts) if firsts else None,
        last_ts=max(lasts) if lasts else None,
    )


def summary_of(parts: SummaryParts, extras: tuple[str, ...], warnings: int) -> TraceSummary:
    counts, invalid = parts.events, parts.invalid_checkpoints
    reasons: dict[str, int] = {}
    for event, kind in EVENTS.items():
        if kind.not_used and counts.get(event, 0):
            reasons[kind.not_used] = reasons.get(kind.not_used, 0) + counts[event]
    if invalid:
        reasons[INVALID_CHECKPOINT_REASON] = invalid
    not_used = tuple(NotUsed(reason=r, rows=n) for r, n in reasons.items())
    return TraceSummary(
        rows_read=parts.rows,
        rows_used=parts.rows - sum(n.rows for n in not_used),
        not_used=not_used,
        runs=parts.runs,
        allocations=parts.allocations,
        closed_at_open_at=parts.closed_at_open_at,
        first_ts=parts.first_ts,
        last_ts=parts.last_ts,
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
