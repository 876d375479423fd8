"""``contractlang import sacct``: Slurm accounting records (``sacct --parsable2 --duplicates``)
as a trace.

Each job record with GPUs is one *attempt* of its job: an allocation of the run named by the job
ID (``123#1``, ``123#2``, … in the order they started; ``--duplicates`` lists the earlier
attempts of a requeued job, each with its own ``Submit`` time, which Slurm resets on requeue).
Each attempt becomes an allocation-level ``requested`` at its ``Submit``, a ``started`` at its
``Start`` with the GPUs of ``AllocTRES``, and an end at its ``End``: ``PREEMPTED`` →
``reclaimed``, ``NODE_FAIL``/``BOOT_FAIL`` → ``failed``, every other terminal state →
``released``, the state as written kept in the ``slurm_state`` column. A job that never started
(pending, or cancelled while pending) is a run-level ``requested`` only. Job steps run inside
their job's allocation and carry no GPUs of their own: they are counted, not imported.

Times are the cluster's local time without an offset, read in the zone given (``--tz``); a time
in a daylight-saving gap or a repeated hour is an error naming its row. Rows are the data lines
of the file (row N is line N + 1: the header is line 1); blank lines are not rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import polars as pl

from contractlang.diagnostics import Diagnostic, did_you_mean
from contractlang.importers import sacct_fields as sf
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
    header_index,
    missing_column,
    raise_row_errors,
    read_text,
    refuse_repeated,
    require_line_end,
    row_error,
)

REQUIRED = ("JobID", "State", "Start", "End", "AllocTRES")
OPTIONAL = ("JobIDRaw", "JobName", "Submit", "Elapsed", "Restarts", "Partition", "QOS", "NodeList")
#: sacct fields kept as trace columns (only those the export has), and their types.
KEPT: dict[str, tuple[str, pl.DataType]] = {
    "JobID": ("job_id", pl.String()),
    "JobIDRaw": ("job_id_raw", pl.String()),
    "JobName": ("job_name", pl.String()),
    "Partition": ("partition", pl.String()),
    "QOS": ("qos", pl.String()),
    "NodeList": ("node_list", pl.String()),
    "Restarts": ("restarts", pl.Int64()),
}
HELP_EXPORT = (
    "export with `sacct --parsable2 --duplicates --format=JobID,JobIDRaw,JobName,Partition,"
    "QOS,State,Submit,Start,End,Elapsed,AllocTRES,Restarts`"
)
HELP_OFFSETS = "export with `SLURM_TIME_FORMAT=%FT%T%z` so that every time carries its UTC offset"


@dataclass
class _Job:
    """One job record (not a step) that started: the allocation of one attempt."""

    row: int
    line: str
    job: sf.JobId
    fields: dict[str, str]
    state: str
    end_reason: str | None  # None: still running
    submit: datetime | None
    start: datetime
    end: datetime | None
    gpus: int
    sku: str | None


def import_sacct(
    path: str | Path,
    tz: str | ZoneInfo,
    *,
    capacity: str | None = None,
    open_at: datetime | None = None,
) -> ImportResult:
    """Read ``sacct --parsable2 --duplicates`` output as a trace (see the module docstring).

    ``tz`` is the cluster's time zone; ``capacity`` (``spot``, ``on_demand``, ``reserved``)
    is written on every ``started``; ``open_at`` keeps jobs still running as open allocations
    (validated as closed at that time), without it they are rejected.
    """
    p = Path(path)
    name = str(p)
    zone = tz if isinstance(tz, ZoneInfo) else read_zone(tz)
    text = read_text(p)
    require_line_end(name, text)
    # lines end at `\n` (or `\r\n`) only: `str.splitlines` also breaks at `\x0c`, `\x85` and
    # U+2028, which a job name may hold
    lines = [line.removesuffix("\r") for line in text.split("\n")][:-1]
    if not lines or not lines[0].strip():
        raise format_error(name, f"`{name}` is empty: it has no header", help=HELP_EXPORT)
    header = lines[0].split("|")
    trailing = len(header) > 1 and header[-1] == ""  # `--parsable` ends every line with `|`
    if trailing:
        header = header[:-1]
    if len(header) < 2:
        raise format_error(
            name, f"`{name}` is not `sacct --parsable2` output: its header has no `|`", HELP_EXPORT
        )
    index = _header_index(name, header)
    c = Collector("sacct", name)
    reader = _Reader(name, zone, c, index, len(header), trailing)
    for n, line in enumerate(lines[1:], start=1):
        c.rows_read += 1
        if line.strip():
            reader.read(n, line)
        else:
            c.blank(n)
    raise_row_errors(name, reader.time_errors)
    reader.fold_steps()
    jobs = reader.started(open_at)
    extras = {KEPT[f][0]: KEPT[f][1] for f in index if f in KEPT}
    extras["slurm_state"] = pl.String()
    extras[SOURCE_ROW] = pl.Int64()
    ev = Events(extras)
    allocations = _allocation_events(ev, jobs, capacity, c)
    for row, job, fields, submit in reader.requests:
        ev.add(
            run_id=job.run,
            ts=submit,
            source="scheduler",
            event="requested",
            **_kept(fields),
            slurm_state=fields["State"],
            source_row=row,
        )
    frame = ev.frame()
    trace = validated(frame, name, open_at)
    ends = {r: sum(1 for j in jobs if j.end_reason == r) for r in ("reclaimed", "failed")}
    c.facts += [
        ("allocations ended by preemption (reclaimed)", f"{ends['reclaimed']:,}"),
        ("allocations ended by a node failure (failed)", f"{ends['failed']:,}"),
    ]
    report = c.report(
        events=frame.height,
        runs=trace.summary.runs,
        allocations=allocations,
        open_allocations=sum(1 for j in jobs if j.end is None),
    )
    return ImportResult(frame, trace, report, open_at)


def _header_index(name: str, header: list[str]) -> dict[str, int]:
    """Field name (as the man page spells it) → column; a required field missing is I002, a
    field named twice I003 (which of the two to read is not ours to guess)."""
    index = header_index(header, (*REQUIRED, *OPTIONAL))
    refuse_repeated(name, header, index, "field")
    missing = [f for f in REQUIRED if f not in index]
    raise_row_errors(
        name,
        [
            missing_column(name, header, f, f"the export has no `{f}` field", HELP_EXPORT)
            for f in missing
        ],
    )
    return index


class _Reader:
    """Reads the data rows one by one into job records, requests, steps and rejects."""

    def __init__(
        self,
        name: str,
        zone: ZoneInfo,
        c: Collector,
        index: dict[str, int],
        width: int,
        trailing: bool,
    ) -> None:
        self.name, self.zone, self.c, self.index = name, zone, c, index
        self.width, self.trailing = width, trailing
        self.jobs: list[_Job] = []
        self.requests: list[tuple[int, sf.JobId, dict[str, str], datetime]] = []
        self.steps: list[tuple[int, sf.JobId, str]] = []
        self.job_ids: set[str] = set()
        self.seen: dict[str, int] = {}
        self.time_errors: list[Diagnostic] = []

    def reject(self, row: int, code: str, reason: str, line: str) -> None:
        self.c.reject(Reject(row, code, reason, line))

    def read(self, row: int, line: str) -> None:
        values = line.split("|")
        if self.trailing and len(values) == self.width + 1 and values[-1] == "":
            values = values[:-1]
        if len(values) != self.width:
            reason = f"has {len(values)} fields, the header {self.width}"
            if len(values) > self.width:
                reason += " (a `|` inside a value?)"
            return self.reject(row, "I010", reason, line)
        if line in self.seen:
            return self.reject(row, "I012", f"repeats row {self.seen[line]} exactly", line)
        self.seen[line] = row
        fields = {f: values[i].strip() for f, i in self.index.items()}
        job = sf.parse_job_id(fields["JobID"])
        if job is None:
            return self.reject(row, "I011", f"`JobID` `{fields['JobID']}` is not a job ID", line)
        if job.step is not None:
            self.steps.append((row, job, line))
            return None
        self.job_ids.add(job.job)
        state = sf.parse_state(fields["State"])
        if state is None:
            word = fields["State"].split(" ", 1)[0]
            guess = did_you_mean(word.upper(), sf.KNOWN_STATES)
            hint = f" (did you mean `{guess}`?)" if guess else ""
            return self.reject(row, "I014", f"unknown job state `{fields['State']}`{hint}", line)
        if state[0] == sf.REVOKED:
            reason = "revoked: another cluster of the federation ran this job"
            return self.reject(row, "I024", reason, line)
        if sf.is_pending_array(job):
            reason = f"array tasks `{job.job}` have not started: nothing to import"
            return self.reject(row, "I019", reason, line)
        times: dict[str, datetime | None] = {}
        for f in ("Submit", "Start", "End"):
            text = fields.get(f, "")
            t = self._time(row, f, text, line)
            if t is False:
                return None
            times[f] = t if isinstance(t, datetime) else None
        tres = sf.parse_tres(fields["AllocTRES"])
        if tres is None:
            reason = (
                f"`AllocTRES` `{fields['AllocTRES']}` has a GPU count that is not a whole "
                "number the trace can hold"
            )
            return self.reject(row, "I016", reason, line)
        submit, start, end = times["Submit"], times["Start"], times["End"]
        if start is None or state[0] in sf.PENDING_STATES or (tres.empty and start == end):
            if submit is None:
                reason = "never started and has no `Submit` time: nothing to import"
                return self.reject(row, "I019", reason, line)
            self.requests.append((row, job, fields, submit))
            self.c.mapped(
                "job records that never started (a request only)",
                one="job record that never started (a request only)",
            )
            return None
        if tres.gpus == 0:
            reason = f"no GPUs: `AllocTRES` `{fields['AllocTRES']}` has no `gres/gpu`"
            return self.reject(row, "I016", reason, line)
        if state[1] is None:
            end = None  # still running: whatever `End` says, the allocation is open
        elif end is None:
            reason = f"no `End` time for a job in state `{fields['State']}`"
            return self.reject(row, "I015", reason, line)
        if end is not None and end < start:
            reason = f"`End` {fields['End']} is before `Start` {fields['Start']}"
            return self.reject(row, "I018", reason, line)
        self._notes(row, fields, tres, submit, start, end)
        sku = tres.types[0] if len(tres.types) == 1 else None
        self.jobs.append(
            _Job(row, line, job, fields, state[0], state[1], submit, start, end, tres.gpus, sku)
        )
        return None

    def _time(self, row: int, field: str, text: str, line: str) -> datetime | bool | None:
        """The field's time in UTC; None when sacct has none; False when the row was rejected
        (or has a DST problem, collected as an error)."""
        if sf.is_no_time(text):
            return None
        ts = parse_timestamp(text)
        if ts is None:
            reason = f"`{field}` value `{text}` is not a time (YYYY-MM-DDTHH:MM:SS)"
            self.reject(row, "I015", reason, line)
            return False
        utc = localize(ts, self.zone)
        if isinstance(utc, LocalTimeProblem) and utc.code == OUT_OF_RANGE:
            self.reject(row, OUT_OF_RANGE, f"`{field}` value `{text}` {utc.message}", line)
            return False
        if isinstance(utc, LocalTimeProblem):
            message = f"`{field}` {text} {utc.message}"
            self.time_errors.append(row_error(utc.code, self.name, row, message, HELP_OFFSETS))
            return False
        return utc

    def _notes(
        self,
        row: int,
        fields: dict[str, str],
        tres: sf.Tres,
        submit: datetime | None,
        start: datetime,
        end: datetime | None,
    ) -> None:
        c = self.c
        if submit is not None and submit > start:
            c.note(
                "I034",
                "`Submit` after `Start`: the request was not imported",
                row,
                f"Submit {fields['Submit']}, Start {fields['Start']}",
            )
        elapsed = sf.parse_elapsed(fields.get("Elapsed", ""))
        if end is not None and elapsed is not None:
            span = int((end - start).total_seconds())
            if abs(span - elapsed) > 1:
                c.note(
                    "I033",
                    "`Elapsed` disagrees with `End` − `Start` (a wrong `--tz`, or a suspended job)",
                    row,
                    f"Elapsed {elapsed:,} s, End − Start {span:,} s",
                )
        if tres.typed_total is not None and tres.typed_total != tres.gpus:
            c.note(
                "I037",
                "typed GPU counts do not add up to the total; the total was used",
                row,
                f"`{fields['AllocTRES']}`: {tres.gpus} GPUs",
            )
        if len(tres.types) > 1:
            c.note(
                "I038",
                "several GPU types in one allocation: `sku` left empty",
                row,
                ", ".join(tres.types),
            )

    def fold_steps(self) -> None:
        for row, job, line in self.steps:
            if job.job in self.job_ids:
                self.c.mapped(
                    "job steps (inside their job's allocation)",
                    one="job step (inside its job's allocation)",
                )
            else:
                reason = f"step `{job.job}.{job.step}` of a job whose record is not in the file"
                self.reject(row, "I013", reason, line)

    def started(self, open_at: datetime | None) -> list[_Job]:
        """The job records that started; those still running are kept only with ``open_at``."""
        kept = []
        for j in self.jobs:
            if j.end is None and open_at is None:
                reason = f"still running (state `{j.state}`, no `End`)"
                self.reject(j.row, "I017", reason, j.line)
                continue
            if j.end is None:
                self.c.note(
                    "I035",
                    "still running: left open, closed by `--open-at`",
                    j.row,
                    f"job {j.job.job}, state {j.state}",
                )
            self.c.mapped("job records (one allocation each)", one="job record (one allocation)")
            kept.append(j)
        return kept


def _kept(fields: dict[str, str]) -> dict[str, object]:
    """The kept sacct fields of a row as trace columns (empty text is none; a count that is
    not a whole number is none)."""
    out: dict[str, object] = {}
    for f, (col, dtype) in KEPT.items():
        if f not in fields:
            continue
        v = fields[f]
        if dtype == pl.Int64:
            out[col] = int(v) if sf.is_count(v) and int(v) <= sf.MAX_COUNT else None
        else:
            out[col] = v or None
    return out


def _allocation_events(ev: Events, jobs: list[_Job], capacity: str | None, c: Collector) -> int:
    """The events of every attempt; attempts of a job numbered in the order they started."""
    by_job: dict[str, list[_Job]] = {}
    for j in jobs:
        by_job.setdefault(j.job.job, []).append(j)
    count = 0
    for attempts in by_job.values():
        attempts.sort(key=lambda j: (j.start, j.row))
        for n, j in enumerate(attempts, start=1):
            alloc = f"{j.job.job}#{n}"
            common = {**_kept(j.fields), "slurm_state": j.fields["State"], SOURCE_ROW: j.row}
            base = {"run_id": j.job.run, "alloc_id": alloc, "source": "scheduler"}
            if j.submit is not None and j.submit <= j.start:
                ev.add(**base, ts=j.submit, event="requested", **common)
            ev.add(
                **base,
                ts=j.start,
                event="started",
                gpus=j.gpus,
                sku=j.sku,
                capacity=capacity,
                **common,
            )
            if j.end is not None and j.end_reason is not None:
                ev.add(**base, ts=j.end, event=j.end_reason, **common)
            count += 1
    c.facts.append(
        (
            "jobs with more than one attempt (requeued)",
            f"{sum(1 for a in by_job.values() if len(a) > 1):,}",
        )
    )
    return count
