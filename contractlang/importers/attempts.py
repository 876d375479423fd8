"""``contractlang import attempts``: job attempt lists (JSON) as a trace, as in the Philly trace
(``[{"id", "num_gpus", "submitted_time", "attempts": [{"start_time", "end_time"}]}]``).

Each job is a run; each attempt an allocation (``ID#1``, ``ID#2``, … in the order they started)
of ``num_gpus`` GPUs. Every attempt but the last ended ``failed`` (the job was restarted after
it); the last ``released``. ``submitted_time`` becomes the run's ``requested``. Times carry no
offset: they are read in the zone given (``--tz``); a time in a daylight-saving gap or a
repeated hour is an error naming its job. Rows are the jobs, in file order, from 1.

Other fields of a job (Philly's ``runtime``, say) are not imported.
"""

from __future__ import annotations

import json
from datetime import datetime
from decimal import Decimal
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import polars as pl

from contractlang.diagnostics import Diagnostic
from contractlang.importers.frame import SOURCE_ROW, Events, validated
from contractlang.importers.localtime import (
    OUT_OF_RANGE,
    LocalTimeProblem,
    localize,
    parse_timestamp,
    read_zone,
)
from contractlang.importers.result import Collector, ImportResult, Reject
from contractlang.importers.text import (
    format_error,
    json_kind,
    parse_json,
    raise_row_errors,
    read_text,
    row_error,
)
from contractlang.lang.numbers import INT64_MAX

HELP_FORMAT = (
    'a JSON array of jobs: [{"id": …, "num_gpus": …, '
    '"attempts": [{"start_time": …, "end_time": …}]}]'
)


class _Rejected(Exception):
    def __init__(self, code: str, reason: str) -> None:
        super().__init__(reason)
        self.code = code
        self.reason = reason


def import_attempts(
    path: str | Path,
    tz: str | ZoneInfo,
    *,
    capacity: str | None = None,
    sku: str | None = None,
    price: Decimal | None = None,
    zone: str | None = None,
) -> ImportResult:
    """Read a JSON list of jobs and their attempts as a trace (see the module docstring).
    ``capacity``, ``sku``, ``price`` (per GPU-hour, exact) and ``zone`` are written on every
    ``started``."""
    p = Path(path)
    name = str(p)
    clock = tz if isinstance(tz, ZoneInfo) else read_zone(tz)
    jobs = parse_json(name, read_text(p), HELP_FORMAT)
    if not isinstance(jobs, list):
        raise format_error(name, f"`{name}` is not a JSON array of jobs", HELP_FORMAT)
    c = Collector("attempts", name)
    ev = Events({SOURCE_ROW: pl.Int64()})
    time_errors: list[Diagnostic] = []
    seen: dict[str, int] = {}
    allocations = restarted = 0
    for row, job in enumerate(jobs, start=1):
        c.rows_read += 1
        record = _record(job)
        try:
            run, gpus, submitted, attempts = _job(job, clock, name, row, time_errors)
            if run in seen:
                raise _Rejected(
                    "I012", f"job `{run}` appears again; it first appears at row {seen[run]}"
                )
        except _Rejected as exc:
            c.reject(Reject(row, exc.code, exc.reason, record))
            continue
        if attempts is None:
            continue  # a time could not be placed on the UTC line: an error, raised below
        seen[run] = row
        attempts.sort(key=lambda a: a[0])
        if submitted is not None and submitted > attempts[0][0]:
            c.note(
                "I034",
                "`submitted_time` after the first start: the request was not imported",
                row,
                f"job {run}",
            )
            submitted = None
        if submitted is not None:
            ev.add(run_id=run, ts=submitted, source="scheduler", event="requested", source_row=row)
        for n, (start, end) in enumerate(attempts, start=1):
            alloc = f"{run}#{n}"
            last = n == len(attempts)
            base = {"run_id": run, "alloc_id": alloc, "source": "scheduler", SOURCE_ROW: row}
            ev.add(
                **base,
                ts=start,
                event="started",
                gpus=gpus,
                capacity=capacity,
                sku=sku,
                price=price,
                zone=zone,
            )
            ev.add(**base, ts=end, event="released" if last else "failed")
        allocations += len(attempts)
        restarted += len(attempts) > 1
        c.mapped("jobs (one allocation per attempt)", one="job (one allocation per attempt)")
    raise_row_errors(name, time_errors)
    frame = ev.frame()
    trace = validated(frame, name, None)
    c.facts += [
        ("attempts ended by a restart (failed)", f"{allocations - len(seen):,}"),
        ("jobs restarted at least once", f"{restarted:,}"),
    ]
    report = c.report(events=frame.height, runs=trace.summary.runs, allocations=allocations)
    return ImportResult(frame, trace, report)


def _is_text(text: str) -> bool:
    """Whether a file can hold ``text``: JSON's ``"\\ud800"`` is a lone surrogate, no text."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _record(job: Any) -> str:
    """A job as one line of JSON for ``--rejects``: as written, or escaped where a string
    holds a lone surrogate."""
    text = json.dumps(job, ensure_ascii=False)
    return text if _is_text(text) else json.dumps(job)


def _job(
    job: Any, zone: ZoneInfo, name: str, row: int, time_errors: list[Diagnostic]
) -> tuple[str, int, datetime | None, list[tuple[datetime, datetime]] | None]:
    """A job's run id, GPUs, request time and attempts (None when a time is in a DST gap or
    repeated hour: that is collected as an error); :class:`_Rejected` when it cannot be read."""
    if not isinstance(job, dict):
        raise _Rejected("I023", f"not a job object but {json_kind(job)}")
    ident = job.get("id")
    if isinstance(ident, bool) or not isinstance(ident, (str, int)) or not str(ident).strip():
        raise _Rejected("I023", "has no `id`")
    run = str(ident).strip()
    if not _is_text(run):
        raise _Rejected("I023", "`id` is not Unicode text (a lone surrogate)")
    gpus = job.get("num_gpus")
    if isinstance(gpus, bool) or not isinstance(gpus, int):
        raise _Rejected("I023", f"`num_gpus` of job `{run}` is not a whole number")
    if gpus <= 0:
        raise _Rejected("I016", f"job `{run}` has {gpus} GPUs")
    if gpus > INT64_MAX:  # beyond a count column (the trace's rules judge its MAX_GPUS)
        raise _Rejected("I016", f"`num_gpus` of job `{run}` is too large: {gpus:,}")
    attempts = job.get("attempts")
    if not isinstance(attempts, list) or not attempts:
        raise _Rejected("I023", f"job `{run}` has no `attempts`")
    placed: list[tuple[datetime, datetime]] = []
    broken = False

    def when(value: Any, what: str) -> datetime | None:
        nonlocal broken
        ts = parse_timestamp(value) if isinstance(value, str) else None
        if ts is None:
            raise _Rejected("I015", f"{what} of job `{run}` is not a time: `{json.dumps(value)}`")
        utc = localize(ts, zone)
        if isinstance(utc, LocalTimeProblem) and utc.code == OUT_OF_RANGE:
            raise _Rejected(OUT_OF_RANGE, f"{what} of job `{run}` {utc.message}: `{value}`")
        if isinstance(utc, LocalTimeProblem):
            time_errors.append(row_error(utc.code, name, row, f"{what} {value} {utc.message}"))
            broken = True
            return None
        return utc

    for k, a in enumerate(attempts, start=1):
        if not isinstance(a, dict):
            raise _Rejected("I023", f"attempt {k} of job `{run}` is not an object")
        start = when(a.get("start_time"), f"`start_time` of attempt {k}")
        end = when(a.get("end_time"), f"`end_time` of attempt {k}")
        if start is not None and end is not None:
            if end < start:
                raise _Rejected("I018", f"attempt {k} of job `{run}` ends before it starts")
            placed.append((start, end))
    submitted_text = job.get("submitted_time")
    submitted = None
    if submitted_text is not None:
        submitted = when(submitted_text, "`submitted_time`")
    return run, gpus, submitted, None if broken else placed
