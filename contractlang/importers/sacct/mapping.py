"""``contractlang import sacct``: Slurm accounting records (``sacct --parsable2 --duplicates``)
as a trace.

Each job record with GPUs is one *attempt* of its job: an allocation of the run named by the job
ID (``123#1``, ``123#2``, … in the order they started; ``--duplicates`` lists the earlier
attempts of a requeued job, each with its own ``Submit`` time, which Slurm resets on requeue).
Each attempt becomes an allocation-level ``requested`` at its ``Submit``, a ``started`` at its
``Start`` with the GPUs of ``AllocTRES`` (``AllocGRES``, ``ReqGRES`` of older exports), and an
end at its ``End``: ``PREEMPTED`` → ``reclaimed``, ``NODE_FAIL``/``BOOT_FAIL`` → ``failed``,
every other terminal state → ``released``, the state as written kept in the ``slurm_state``
column. A job that never started (pending, or cancelled while pending) is a run-level
``requested`` only. Job steps run inside their job's allocation and carry no GPUs of their own:
they are counted, not imported.

The same attempt (the same ``JobID`` and ``Start``) in two records — overlapping exports put
together — is one allocation: records that differ only in what the bill does not read are
merged (``I042``), records that differ in what it reads (:data:`BILLED`) are both rejected
(``I025``).

Times are the cluster's local time without an offset, read in the zone given (``--tz``: a
text export without it is E502); a time in a daylight-saving gap or a repeated hour is an error
naming its row. A ``sacct --json`` export's times carry their offset: it needs no zone.

The text of an export is split into rows by :mod:`~contractlang.importers.sacct.text_export`;
:func:`import_records` maps rows of fields keyed by the man page's names, from whatever export
they came.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from decimal import Decimal
from itertools import combinations
from pathlib import Path
from zoneinfo import ZoneInfo

import polars as pl

from contractlang.diagnostics import Diagnostic, did_you_mean
from contractlang.importers.frame import SOURCE_ROW, Events, validated
from contractlang.importers.localtime import (
    OUT_OF_RANGE,
    LocalTimeProblem,
    localize,
    parse_timestamp,
    read_zone,
)
from contractlang.importers.result import Collector, ImportResult, Reject
from contractlang.importers.sacct import fields as sf
from contractlang.importers.sacct import json_export as sj
from contractlang.importers.sacct import text_export as st
from contractlang.importers.text import (
    format_error,
    has_bad_bytes,
    header_index,
    missing_column,
    raise_row_errors,
    read_text_keeping_bytes,
    refuse_repeated,
    replace_bad_bytes,
    row_error,
)

#: The fields an export must have (I002 in this order), of those the import reads.
REQUIRED = ("JobID", "State", "Start", "End", "AllocTRES")
#: Where the GPUs are read, in order of preference: ``AllocGRES`` and ``ReqGRES`` are the
#: fields of Slurm before 20.11, read only when an export has no ``AllocTRES``.
GPU_FIELDS = ("AllocTRES", "AllocGRES", "ReqGRES")
#: The fields read when the export has them.
OPTIONAL = tuple(f for f in (*sf.FIELDS, *GPU_FIELDS) if f not in REQUIRED)
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
#: What the bill reads of an attempt: two records of one attempt that differ in one of these
#: are rejected (``I025``); in anything else (``NodeList``, ``JobName``, ``Restarts``, a state
#: still running), merged (``I042``).
BILLED = ("GPUs", "GPU type (sku)", "capacity", "Submit", "End", "end state")
HELP_EXPORT = (
    "export with `sacct --parsable2 --duplicates --format=" + ",".join(sf.STANDARD_FIELDS) + "`"
)
HELP_OFFSETS = "export with `SLURM_TIME_FORMAT=%FT%T%z` so that every time carries its UTC offset"


@dataclass(frozen=True)
class Allocations:
    """What an import writes on every ``started`` besides the GPUs: the ``capacity`` (or, by
    ``Partition``, ``capacity_map``), the ``sku`` (or, by Slurm's GPU type, ``sku_map``:
    typed GPUs by the map, their type's name when it has none, the others ``sku``), the
    ``price`` per GPU-hour and the ``zone``."""

    capacity: str | None = None
    capacity_map: Mapping[str, str] = field(default_factory=dict)
    sku: str | None = None
    sku_map: Mapping[str, str] = field(default_factory=dict)
    price: Decimal | None = None
    zone: str | None = None

    def sku_of(self, types: tuple[str, ...]) -> str | None:
        """The ``sku`` of an allocation with these GPU types (none: untyped)."""
        if not self.sku_map:
            return self.sku if self.sku is not None else (types[0] if len(types) == 1 else None)
        if not types:
            return self.sku
        skus = {self.sku_map.get(t, t) for t in types}
        return skus.pop() if len(skus) == 1 else None


@dataclass
class _Job:
    """One job record (not a step) that started: the allocation of one attempt."""

    row: int
    record: str
    job: sf.JobId
    fields: dict[str, str]
    state: str
    end_reason: str | None  # None: still running
    submit: datetime | None
    start: datetime
    end: datetime | None
    gpus: int
    types: tuple[str, ...]
    sku: str | None
    capacity: str | None
    notes: list[tuple[str, str, str]]  # (code, message, detail), reported if it is imported
    merged: list[_Job] = field(default_factory=list)  # other records of this attempt (I042)


def import_sacct(
    path: str | Path,
    tz: str | ZoneInfo | None = None,
    *,
    capacity: str | None = None,
    open_at: datetime | None = None,
    fields: Sequence[str] | None = None,
    delimiter: str = "|",
    allocations: Allocations | None = None,
) -> ImportResult:
    """Read ``sacct --parsable2 --duplicates`` (or ``sacct --json``) output as a trace (see
    the module docstring).

    ``tz`` is the cluster's time zone, which a text export needs (E502 without it) and a
    ``sacct --json`` one does not (its times carry their offset); ``capacity`` (``spot``,
    ``on_demand``, ``reserved``) is written on every ``started`` (``allocations`` says more:
    per partition, the SKU, the price, the zone); ``open_at`` keeps jobs still running as open
    allocations (validated as closed at that time), without it they are rejected. ``fields``
    names the fields of a ``--noheader`` export in order; ``delimiter`` is ``sacct
    --delimiter``.
    """
    p = Path(path)
    name = str(p)
    zone = tz if isinstance(tz, ZoneInfo) or tz is None else read_zone(tz)
    if allocations is not None and capacity is not None:
        raise TypeError("give `capacity` in `allocations`, not beside it")
    settings = allocations if allocations is not None else Allocations(capacity=capacity)
    st.check_delimiter(delimiter)
    text = read_text_keeping_bytes(p)
    if sj.looks_like_json(text):
        utc = zone if zone is not None else ZoneInfo("UTC")  # every time has its offset
        return _import_json(name, text, utc, settings, open_at, fields, delimiter)
    table = st.split_export(name, text, fields=fields, delimiter=delimiter)
    if zone is None:
        raise st.usage(
            f"`--tz` is missing: `{name}` is a text export, whose times are the cluster's local "
            "time without an offset",
            help="name the cluster's time zone, e.g. `--tz America/New_York` (a `sacct --json` "
            "export needs none)",
        )
    index = header_index(table.header, (*REQUIRED, *OPTIONAL))
    refuse_repeated(name, table.header, index, "field")
    present = list(index)  # the fields the export has, as the man page spells them
    if "JobID" not in index and "JobIDRaw" in index:
        index["JobID"] = index["JobIDRaw"]  # `JobIDRaw` stands for it
    c = Collector("sacct", name)
    rows = st.records(table, index, c)
    return import_records(
        name, present, rows, c, zone, settings=settings, open_at=open_at, shown=table.header
    )


def _import_json(
    name: str,
    text: str,
    zone: ZoneInfo,
    settings: Allocations,
    open_at: datetime | None,
    fields: Sequence[str] | None,
    delimiter: str,
) -> ImportResult:
    """A ``sacct --json`` export: its records as the fields ``sacct --parsable2`` prints
    (:mod:`~contractlang.importers.sacct.json_export`), mapped as the text's rows are; row N is the
    N-th element of ``jobs``, and its steps go with it."""
    for flag, given in (("--fields", fields is not None), ("--delimiter", delimiter != "|")):
        if given:
            message = f"`{flag}` reads a text export, but `{name}` is a `sacct --json` export"
            raise format_error(name, message, f"leave out `{flag}`: the JSON names its fields")
    table = sj.json_rows(name, text)
    c = Collector("sacct", name)

    def rows() -> Iterator[tuple[int, dict[str, str], str]]:
        for r in table.rows:
            c.rows_read += 1
            if r.fields is None:
                code, reason = r.reject or ("I023", "the record cannot be read")
                c.reject(Reject(r.row, code, reason, replace_bad_bytes(r.record)))
                continue
            yield r.row, r.fields, replace_bad_bytes(r.record)

    moved = sum(1 for r in table.rows if r.fields is not None and r.start_moved)
    c.facts.append(("job steps (inside the job records read)", f"{table.steps:,}"))
    if moved:
        c.facts.append(
            ("starts computed as `time.end` − `time.elapsed` (Slurm 21.08, 22.05)", f"{moved:,}")
        )
    return import_records(name, sj.FIELDS, rows(), c, zone, settings=settings, open_at=open_at)


def import_records(
    name: str,
    present: Sequence[str],
    rows: Iterable[tuple[int, dict[str, str], str]],
    c: Collector,
    zone: ZoneInfo,
    *,
    settings: Allocations,
    open_at: datetime | None = None,
    shown: Sequence[str] | None = None,
) -> ImportResult:
    """The trace of ``rows``: ``(row, fields, record)``, the fields keyed by the man page's
    names (``JobID``, ``State``, ``Start``, ``End``, ``AllocTRES``, …; ``present`` names those
    the export has; ``shown``, every field it names as it spells them, for a did-you-mean: by
    default ``present``),
    the record as written (for ``--rejects``). ``c`` has counted every row read; rows that
    could not be read as fields were rejected on it already. A ``JobID`` is in every row's
    fields (``JobIDRaw``'s value when the export has only that). I002 before any row is read
    when a required field is missing (:func:`require`).

    This is where another form of export joins the text one (``sacct --json``: its records
    as fields, its unreadable records rejected on ``c``)."""
    require(name, present if shown is None else shown, present, settings)
    gpu_field = next(f for f in GPU_FIELDS if f in present)
    kept = [f for f in KEPT if f in present]
    elapsed = "ElapsedRaw" if "ElapsedRaw" in present else "Elapsed"
    reader = _Reader(name, zone, c, settings, (gpu_field, elapsed), kept)
    for row, values, record in rows:
        reader.read(row, values, record)
    raise_row_errors(name, reader.time_errors)
    jobs = reader.started(reader.merged(), open_at)
    reader.fold_steps(jobs)
    if jobs:
        c.mapped("job records (one allocation each)", len(jobs), one="job record (one allocation)")
    extras = {KEPT[f][0]: KEPT[f][1] for f in kept}
    extras["slurm_state"] = pl.String()
    extras[SOURCE_ROW] = pl.Int64()
    ev = Events(extras)
    count = _allocation_events(ev, jobs, settings, reader)
    for row, job, values, submit in reader.requests:
        ev.add(
            run_id=job.run,
            ts=submit,
            source="scheduler",
            event="requested",
            **reader.kept(values, row),
            slurm_state=values["State"],
            source_row=row,
        )
    frame = ev.frame()
    trace = validated(frame, name, open_at)
    ends = {r: sum(1 for j in jobs if j.end_reason == r) for r in ("reclaimed", "failed")}
    c.facts += [
        ("allocations ended by preemption (reclaimed)", f"{ends['reclaimed']:,}"),
        ("allocations ended by a node failure (failed)", f"{ends['failed']:,}"),
        *_pricing_facts(jobs, settings),
    ]
    report = c.report(
        events=frame.height,
        runs=trace.summary.runs,
        allocations=count,
        open_allocations=sum(1 for j in jobs if j.end is None),
    )
    return ImportResult(frame, trace, report, open_at)


def require(name: str, shown: Sequence[str], present: Sequence[str], settings: Allocations) -> None:
    """I002 for each required field the export does not have (``present``: its fields as the
    man page spells them; ``shown``: as the export does, for a did-you-mean). ``JobIDRaw``
    stands for a missing ``JobID``, ``AllocGRES`` (or ``ReqGRES``) for a missing
    ``AllocTRES``; ``--capacity-map`` needs ``Partition``."""
    have = set(present)
    if "JobIDRaw" in have:
        have.add("JobID")
    if have & set(GPU_FIELDS):
        have.add("AllocTRES")
    errors = [
        missing_column(name, shown, f, f"the export has no `{f}` field", HELP_EXPORT)
        for f in REQUIRED
        if f not in have
    ]
    if settings.capacity_map and "Partition" not in have:
        message = "the export has no `Partition` field (needed by `--capacity-map`)"
        errors.append(missing_column(name, shown, "Partition", message, HELP_EXPORT))
    raise_row_errors(name, errors)


class _Reader:
    """Reads the rows one by one into job records, requests, steps and rejects."""

    def __init__(
        self,
        name: str,
        zone: ZoneInfo,
        c: Collector,
        settings: Allocations,
        read: tuple[str, str],
        kept: list[str],
    ) -> None:
        self.name, self.zone, self.c, self.settings = name, zone, c, settings
        (gpu_field, self.elapsed_field), self.kept_fields = read, kept
        self.gpu_field = gpu_field
        self.jobs: list[_Job] = []
        self.requests: list[tuple[int, sf.JobId, dict[str, str], datetime]] = []
        self.steps: list[tuple[int, sf.JobId, str]] = []
        self.rejected_jobs: dict[str, list[int]] = {}  # job → rows of its rejected records
        self.requested_jobs: dict[str, int] = {}  # job → the row of its request
        self.seen: dict[str, int] = {}
        self.time_errors: list[Diagnostic] = []
        # the fields whose values the trace's figures come from: bytes that are not UTF-8
        # there reject the row (I027); anywhere else they are replaced (I043)
        self.read_fields = {"JobID", "State", "Submit", "Start", "End", gpu_field}
        if settings.capacity_map:
            self.read_fields.add("Partition")

    def reject(self, row: int, code: str, reason: str, record: str) -> None:
        self.c.reject(Reject(row, code, reason, record))

    def reject_job(self, row: int, job: sf.JobId, code: str, reason: str, record: str) -> None:
        self.rejected_jobs.setdefault(job.job, []).append(row)
        self.reject(row, code, reason, record)

    def read(self, row: int, fields: dict[str, str], record: str) -> None:
        if record in self.seen:
            return self.reject(row, "I012", f"repeats row {self.seen[record]} exactly", record)
        self.seen[record] = row
        notes: list[tuple[str, str, str]] = []
        if has_bad_bytes("".join(fields.values())):  # seldom: then judged field by field
            bad = [f for f, v in fields.items() if has_bad_bytes(v)]
            unreadable = [f for f in bad if f in self.read_fields]
            if unreadable:
                reason = f"`{unreadable[0]}` holds bytes that are not UTF-8"
                return self.reject(row, "I027", reason, record)
            shown = ", ".join(f"`{f}`" for f in bad)
            notes.append(("I043", "bytes that are not UTF-8 replaced by U+FFFD", shown))
            fields = {f: replace_bad_bytes(v) for f, v in fields.items()}
        job = sf.parse_job_id(fields["JobID"])
        if job is None:
            return self.reject(row, "I011", f"`JobID` `{fields['JobID']}` is not a job ID", record)
        if job.step is not None:
            self.steps.append((row, job, record))
            return None
        return self._job(row, job, fields, record, notes)

    def _job(
        self,
        row: int,
        job: sf.JobId,
        fields: dict[str, str],
        record: str,
        notes: list[tuple[str, str, str]],
    ) -> None:
        state = sf.parse_state(fields["State"])
        if state is None:
            word = fields["State"].split(" ", 1)[0]
            guess = did_you_mean(word.upper(), sf.KNOWN_STATES)
            hint = f" (did you mean `{guess}`?)" if guess else ""
            reason = f"unknown job state `{fields['State']}`{hint}"
            return self.reject_job(row, job, "I014", reason, record)
        if state[0] == sf.REVOKED:
            reason = "revoked: another cluster of the federation ran this job"
            return self.reject_job(row, job, "I024", reason, record)
        if sf.is_pending_array(job):
            reason = f"array tasks `{job.job}` have not started: nothing to import"
            return self.reject_job(row, job, "I019", reason, record)
        times: dict[str, datetime | None] = {}
        for f in ("Submit", "Start", "End"):
            t = self._time(row, job, f, fields.get(f, ""), record)
            if t is False:
                return None
            times[f] = t if isinstance(t, datetime) else None
        text = fields[self.gpu_field]
        parse = sf.parse_tres if self.gpu_field == "AllocTRES" else sf.parse_gres
        tres = parse(text, self.gpu_field)
        if isinstance(tres, sf.GpuProblem):
            return self.reject_job(row, job, tres.code, tres.reason, record)
        submit, start, end = times["Submit"], times["Start"], times["End"]
        if start is None or state[0] in sf.PENDING_STATES or (tres.empty and start == end):
            if submit is None:
                reason = "never started and has no `Submit` time: nothing to import"
                return self.reject_job(row, job, "I019", reason, record)
            self.requests.append((row, job, fields, submit))
            self.requested_jobs.setdefault(job.job, row)
            for code, message, detail in notes:
                self.c.note(code, message, row, detail)
            self.c.mapped(
                "job records that never started (a request only)",
                one="job record that never started (a request only)",
            )
            return None
        if tres.gpus == 0:
            untyped = "gres/gpu" if self.gpu_field == "AllocTRES" else "gpu"
            said = "allocates 0 GPUs" if tres.named else f"has no `{untyped}`"
            reason = f"no GPUs: `{self.gpu_field}` `{text}` {said}"
            if not text.strip():
                reason = f"no GPUs: `{self.gpu_field}` is empty"
            return self.reject_job(row, job, "I016", reason, record)
        if state[1] is None:
            end = None  # still running: whatever `End` says, the allocation is open
        elif end is None:
            reason = f"no `End` time for a job in state `{fields['State']}`"
            return self.reject_job(row, job, "I015", reason, record)
        if end is not None and end < start:
            reason = f"`End` {fields['End']} is before `Start` {fields['Start']}"
            return self.reject_job(row, job, "I018", reason, record)
        notes += self._notes(fields, tres, submit, start, end)
        s = self.settings
        capacity = s.capacity_map.get(fields.get("Partition", ""), s.capacity)
        j = _Job(row, record, job, fields, state[0], state[1], submit, start, end, tres.gpus,
                 tres.types, s.sku_of(tres.types), capacity, notes)  # fmt: skip
        self.jobs.append(j)
        return None

    def _time(
        self, row: int, job: sf.JobId, field: str, text: str, record: str
    ) -> datetime | bool | None:
        """The field's time in UTC; None when sacct has none; False when the row was rejected
        (or has a DST problem, collected as an error)."""
        if sf.is_no_time(text):
            return None
        ts = parse_timestamp(text)
        if ts is None:
            reason = f"`{field}` value `{text}` is not a time (YYYY-MM-DDTHH:MM:SS)"
            self.reject_job(row, job, "I015", reason, record)
            return False
        utc = localize(ts, self.zone)
        if isinstance(utc, LocalTimeProblem) and utc.code == OUT_OF_RANGE:
            self.reject_job(
                row, job, OUT_OF_RANGE, f"`{field}` value `{text}` {utc.message}", record
            )
            return False
        if isinstance(utc, LocalTimeProblem):
            message = f"`{field}` {text} {utc.message}"
            self.time_errors.append(row_error(utc.code, self.name, row, message, HELP_OFFSETS))
            return False
        return utc

    def _notes(
        self,
        fields: dict[str, str],
        tres: sf.Tres,
        submit: datetime | None,
        start: datetime,
        end: datetime | None,
    ) -> list[tuple[str, str, str]]:
        """The caveats of a job record, reported if it is imported."""
        notes: list[tuple[str, str, str]] = []
        if submit is not None and submit > start:
            notes.append(
                (
                    "I034",
                    "`Submit` after `Start`: the request was not imported",
                    f"Submit {fields['Submit']}, Start {fields['Start']}",
                )
            )
        elapsed = self._elapsed(fields, notes)
        if end is not None and elapsed is not None:
            span = int((end - start).total_seconds())
            if abs(span - elapsed) > 1:
                notes.append(
                    (
                        "I033",
                        f"`{self.elapsed_field}` disagrees with `End` − `Start` (a wrong "
                        "`--tz`, or a suspended job)",
                        f"{self.elapsed_field} {elapsed:,} s, End − Start {span:,} s",
                    )
                )
        if tres.typed_total is not None and tres.typed_total != tres.gpus:
            notes.append(
                (
                    "I037",
                    "typed GPU counts add up to less than the total; the total was used",
                    f"`{fields[self.gpu_field]}`: {tres.gpus} GPUs",
                )
            )
        if len(tres.types) > 1 and self.settings.sku_of(tres.types) is None:
            notes.append(
                (
                    "I038",
                    "several GPU types in one allocation: `sku` left empty",
                    ", ".join(tres.types),
                )
            )
        return notes

    def _elapsed(self, fields: dict[str, str], notes: list[tuple[str, str, str]]) -> int | None:
        """``ElapsedRaw`` (or ``Elapsed``) in seconds; None when the export has neither, or
        the value cannot be read (I039: it is not compared)."""
        f = self.elapsed_field
        text = fields.get(f, "").strip()
        if not text:
            return None
        seconds = sf.parse_elapsed_raw(text) if f == "ElapsedRaw" else sf.parse_elapsed(text)
        if seconds is None:
            message = "an optional value that could not be read, left empty"
            notes.append(("I039", message, f"`{f}` `{text}`: not compared with the times"))
        return seconds

    def kept(self, fields: dict[str, str], row: int) -> dict[str, object]:
        """The kept sacct fields of a row as trace columns (empty text is none; a count that
        cannot be read is none, I039)."""
        out: dict[str, object] = {}
        for f in self.kept_fields:
            col, dtype = KEPT[f]
            v = fields.get(f, "")
            if dtype == pl.Int64:
                n = sf.parse_count(v)
                if n is None and v.strip():
                    message = "an optional value that could not be read, left empty"
                    self.c.note("I039", message, row, f"`{f}` `{v.strip()}`")
                out[col] = n
            else:
                out[col] = v or None
        return out

    def merged(self) -> list[_Job]:
        """The job records, one per attempt: records of the same job with the same ``Start``
        merged when the bill reads the same of them (I042), all rejected when not (I025)."""
        groups: dict[tuple[str, datetime], list[_Job]] = {}
        for j in self.jobs:
            groups.setdefault((j.job.job, j.start), []).append(j)
        out = []
        for group in groups.values():
            if len(group) == 1:
                out.append(group[0])
                continue
            conflict = _conflict(group)
            if conflict is not None:
                first = group[0]
                neither = "neither is imported" if len(group) == 2 else "none is imported"
                reason = (
                    f"job `{first.job.job}` started {first.fields['Start']} {conflict}: {neither}"
                )
                for j in group:
                    self.reject_job(j.row, j.job, "I025", reason, j.record)
                continue
            ended = [j for j in group if j.end is not None]
            keep = ended[0] if ended else group[0]
            submitted = next((j for j in group if j.submit is not None), None)
            if keep.submit is None and submitted is not None:  # the one `Submit` they give
                fields = {**keep.fields, "Submit": submitted.fields["Submit"]}
                keep = replace(keep, submit=submitted.submit, fields=fields)
            keep.merged = [j for j in group if j.row != keep.row]
            out.append(keep)
        return sorted(out, key=lambda j: j.row)

    def started(self, jobs: list[_Job], open_at: datetime | None) -> list[_Job]:
        """The job records that started; those still running are kept only with ``open_at``
        (the caller counts them as mapped, after their steps). The records merged into an
        attempt go with it: rejected with it, or counted as merged (I042)."""
        kept = []
        for j in jobs:
            if j.end is None and open_at is None:
                for r in (j, *j.merged):
                    reason = f"still running (state `{r.state}`, no `End`)"
                    self.reject_job(r.row, r.job, "I017", reason, r.record)
                continue
            if j.merged:
                rows = _rows(sorted(r.row for r in (j, *j.merged)))
                self.c.note(
                    "I042",
                    "the same attempt in two records that differ only in what the bill does not "
                    "read: one allocation",
                    j.row,
                    f"job {j.job.job} started {j.fields['Start']}: {rows}, row {j.row} kept",
                )
                self.c.mapped(
                    "job records of an attempt already read (merged into it)",
                    len(j.merged),
                    one="job record of an attempt already read (merged into it)",
                )
            if j.end is None:
                self.c.note(
                    "I035",
                    "still running: left open, closed by `--open-at`",
                    j.row,
                    f"job {j.job.job}, state {j.state}",
                )
            for code, message, detail in j.notes:
                self.c.note(code, message, j.row, detail)
            kept.append(j)
        return kept

    def fold_steps(self, jobs: list[_Job]) -> None:
        """Steps of a job that has an allocation are counted inside it; the others are
        rejected (I013), naming why their job has none."""
        allocated = {j.job.job for j in jobs}
        for row, job, record in self.steps:
            if job.job in allocated:
                self.c.mapped(
                    "job steps (inside their job's allocation)",
                    one="job step (inside its job's allocation)",
                )
                continue
            step = f"`{job.job}.{job.step}`"
            if job.job in self.rejected_jobs:
                rows = self.rejected_jobs[job.job]
                which = "record" if len(rows) == 1 else "records"
                reason = f"step {step} of job `{job.job}`, whose {which} ({_rows(rows)}) "
                reason += "was rejected" if len(rows) == 1 else "were rejected"
            elif job.job in self.requested_jobs:
                reason = (
                    f"step {step} of job `{job.job}`, which never started "
                    f"(row {self.requested_jobs[job.job]})"
                )
            else:
                reason = f"step {step} of a job whose record is not in the file"
            self.reject(row, "I013", reason, record)


def _rows(rows: list[int]) -> str:
    """``row 4``, ``rows 4 and 19``, ``rows 4, 7 and 19``."""
    if len(rows) == 1:
        return f"row {rows[0]}"
    return "rows " + ", ".join(str(r) for r in rows[:-1]) + f" and {rows[-1]}"


def _conflict(group: list[_Job]) -> str | None:
    """How two records of one attempt differ in what the bill reads (:data:`BILLED`), or
    None: every two are compared (a record still running says nothing of the end, so the two
    that ended must agree between themselves)."""
    for a, b in combinations(group, 2):
        pairs: list[tuple[str, object, object]] = [
            ("with {} GPUs in row {} and {} in row {}", a.gpus, b.gpus),
            ("with GPU type `{}` in row {} and `{}` in row {}", a.sku, b.sku),
            ("with capacity `{}` in row {} and `{}` in row {}", a.capacity, b.capacity),
        ]
        if a.submit is not None and b.submit is not None and a.submit != b.submit:
            pairs.append(("submitted {} in row {} and {} in row {}", *_both(a, b, "Submit")))
        if a.end is not None and b.end is not None:
            if a.end != b.end:
                pairs.append(("ended {} in row {} and {} in row {}", *_both(a, b, "End")))
            pairs.append(("ended `{}` in row {} and `{}` in row {}", a.state, b.state))
        for text, x, y in pairs:
            if x != y:
                return text.format(x, a.row, y, b.row)
    return None


def _both(a: _Job, b: _Job, f: str) -> tuple[str, str]:
    return a.fields[f], b.fields[f]


def _allocation_events(ev: Events, jobs: list[_Job], s: Allocations, reader: _Reader) -> int:
    """The events of every attempt; attempts of a job numbered in the order they started."""
    by_job: dict[str, list[_Job]] = {}
    for j in jobs:
        by_job.setdefault(j.job.job, []).append(j)
    count = 0
    for attempts in by_job.values():
        attempts.sort(key=lambda j: (j.start, j.row))
        for n, j in enumerate(attempts, start=1):
            alloc = f"{j.job.job}#{n}"
            common = {
                **reader.kept(j.fields, j.row),
                "slurm_state": j.fields["State"],
                SOURCE_ROW: j.row,
            }
            base = {"run_id": j.job.run, "alloc_id": alloc, "source": "scheduler"}
            if j.submit is not None and j.submit <= j.start:
                ev.add(**base, ts=j.submit, event="requested", **common)
            ev.add(
                **base,
                ts=j.start,
                event="started",
                gpus=j.gpus,
                sku=j.sku,
                capacity=j.capacity,
                price=s.price,
                zone=s.zone,
                **common,
            )
            if j.end is not None and j.end_reason is not None:
                ev.add(**base, ts=j.end, event=j.end_reason, **common)
            count += 1
    reader.c.facts.append(
        (
            "jobs with more than one attempt (requeued)",
            f"{sum(1 for a in by_job.values() if len(a) > 1):,}",
        )
    )
    return count


def _pricing_facts(jobs: list[_Job], s: Allocations) -> list[tuple[str, str]]:
    """What the pricing flags left undone: allocations whose GPU type ``--sku-map`` does not
    name (their ``sku`` is Slurm's name), in a partition ``--capacity-map`` does not name."""
    facts = []
    if s.sku_map:
        unmapped = sorted({t for j in jobs for t in j.types if t not in s.sku_map})
        n = sum(1 for j in jobs if any(t not in s.sku_map for t in j.types))
        shown = f"{n:,}" + (f" ({', '.join(unmapped)})" if unmapped else "")
        facts.append(("allocations of a GPU type `--sku-map` does not map", shown))
    if s.capacity_map:
        n = sum(1 for j in jobs if j.fields.get("Partition", "") not in s.capacity_map)
        facts.append(("allocations in a partition `--capacity-map` does not map", f"{n:,}"))
    if s.sku is not None or s.sku_map:
        facts.append(("allocations without a sku", f"{sum(1 for j in jobs if j.sku is None):,}"))
    return facts
