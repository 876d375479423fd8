"""``sacct --json`` exports (Slurm 21.08 – 24.11) as rows of sacct fields: each element of
``jobs`` becomes the text ``sacct --parsable2`` prints for it, keyed by the man page's field
names, so that the text reader maps it with every rule it already has.

The shapes, from Slurm's own source (SchedMD/slurm, ``src/plugins/openapi/dbv0.0.37`` and
``dbv0.0.38/parse.c`` for 21.08 and 22.05, ``src/plugins/data_parser/v0.0.39`` … ``v0.0.42/
parsers.c`` for 23.02 – 24.11):

- 21.08, 22.05: ``meta.Slurm.release``; ``state.current`` a string (``job_state_string``:
  ``REQUEUED``, ``CANCELLED``); ``array.task_id`` and ``het.job_offset`` an integer, or null.
- 23.02: ``state.current`` a string; ``array.task_id``, ``het.job_offset`` as
  ``{"set", "infinite", "number"}``.
- 23.11 – 24.11: ``meta.slurm.release``; ``state.current`` a list of flags, the base state
  first (a requeued attempt, stored as the lone ``REQUEUE`` flag, reads
  ``["PENDING", "REQUEUED"]``); ``restart_cnt`` from 24.11 on.

Job times are epoch seconds (UTC) in every version, null when unset (job steps and ``squeue``
write ``{"set", "infinite", "number"}``, which is read too); 0 or unset is no time. The fields:

==============  =================================================================================
``JobID``       ``job_id``; ``{array.job_id}_{array.task_id}`` for an array task,
                ``{array.job_id}_[{array.task}]`` for array tasks not yet started,
                ``{het.job_id}+{het.job_offset}`` for a heterogeneous component (``slurmdb_get_
                job_id_str``)
``JobIDRaw``    ``job_id``
``State``       as ``job_state_string`` prints it: the first flag of ``COMPLETING`` …
                ``SIGNALING`` present, else the base state; ``CANCELLED by USER`` when
                ``kill_request_user`` names who (sacct's text prints the UID, JSON the name)
``Submit``,     ``time.submission``, ``time.start``, ``time.end`` as ``YYYY-MM-DDTHH:MM:SS+0000``
``Start``,      (``SLURM_TIME_FORMAT=%FT%T%z``), or ``Unknown``; a time that is not a whole
``End``         number, negative, or past 2199-12-31 rejects the record
``Elapsed``     ``time.elapsed`` as ``[D-]HH:MM:SS``; ``ElapsedRaw`` the seconds
``AllocTRES``   ``tres.allocated`` as ``type/name=count`` in name order, as sacct prints it;
                a count Slurm does not have (null, or -2: ``NO_VAL64``) is left out as sacct
                leaves it out, -1 (``INFINITE64``) is ``NONE``; memory stays in the unit the
                JSON gives (sacct's text writes ``64G``)
others          ``JobName`` ``name``, ``Partition`` ``partition``, ``QOS`` ``qos``, ``NodeList``
                ``nodes``, ``Restarts`` ``restart_cnt`` (24.11 on); text as written, ``|`` and
                line breaks included
==============  =================================================================================

**The start of 21.08 and 22.05 before 22.05.8.** Their job parser wrote the time the job
became *eligible* as ``time.start`` (``_add_parse(UINT32, eligible, "time/start")``, fixed by
"openapi/dbv0.0.38 - fix time/start field for job parser" in 22.05.8). slurmdbd computed
``time.elapsed`` as end − start − suspended from the true start, so a record that ended starts
at ``time.end − time.elapsed − time.suspended``: that is the ``Start`` given when the release
in ``meta`` is one of those (``start_is_eligible``), or when ``meta`` names no release and the
record shows the fault (its ``time.start`` equals ``time.eligible`` and disagrees with its own
elapsed time). Such a record still running has no start in the file: a reject. ``JsonRow.
start_moved`` marks the records whose ``Start`` is not their ``time.start``.

**Rows and steps.** Row N is the N-th element of ``jobs``: each row is mapped or rejected as a
whole. A job's steps (``jobs[].steps[]``) run inside its allocation and carry no GPUs of their
own; they are not rows (their job is the row, and a rejected job's steps go with it): each row
says how many it holds (``JsonRow.steps``) so that the report can state them.

**Requeued jobs.** With ``--duplicates`` (always, in 21.08 and 22.05, whose ``sacct --json``
sets ``JOBCOND_FLAG_DUP`` itself) slurmdbd returns one record per attempt, each with the same
``job_id`` and its own ``time.submission`` (reset on requeue), ``time.start``, ``time.end`` and
state: separate elements of ``jobs``, so separate rows, as the text export lists them.

Checked against real captures committed in mila-iqia/SARC (``tests/functional/jobs/
sacct_outputs/slurm_21_8_8.json``, ``slurm_22_5_9.json``, ``slurm_23_2_6.json``,
``slurm_23_11_5.json``; ``tests/data/sacct/mila_1706227200.json``, 25.05's shape): the 21.08
record (a ``REQUEUED`` attempt) has ``time.start`` = ``time.eligible`` and end − start ≠ elapsed;
the 22.05.9 one agrees with its elapsed time; 23.02 writes an energy count of -2.

>>> table = json_rows("x.json", '{"jobs": [{"job_id": 7, "state": {"current": ["COMPLETED"]},'
...     ' "time": {"start": 1735689600, "end": 1735693200, "elapsed": 3600},'
...     ' "tres": {"allocated": [{"type": "gres", "name": "gpu", "count": 8}]}}]}')
>>> table.rows[0].fields["Start"], table.rows[0].fields["AllocTRES"]
('2025-01-01T00:00:00+0000', 'gres/gpu=8')
>>> bad = '{"jobs": [{"job_id": 7, "state": {"current": "COMPLETED"}}]}'
>>> json_rows("x.json", bad).rows[0].reject
('I023', 'job 7 has no `time`')
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from contractlang.importers.sacct import fields as sf
from contractlang.importers.text import format_error, json_kind, parse_json

#: Every field a record gives, in the order of the text export docs/import.md recommends
#: (``ElapsedRaw`` after ``Elapsed``).
FIELDS = sf.FIELDS
#: The code of a record that cannot be converted.
MALFORMED = "I023"
#: What ``sacct`` prints for a time it does not have.
NO_TIME = "Unknown"
#: The first second no time may reach: 2200-01-01T00:00:00Z.
TIME_LIMIT = 7_258_118_400
#: Slurm's unset and unlimited 32-bit values, which 21.08 writes as they are for some fields.
NO_VAL, INFINITE = 0xFFFFFFFE, 0xFFFFFFFF
#: A 64-bit TRES count Slurm does not have (``NO_VAL64``) and an unlimited one (``INFINITE64``),
#: as 23.02 on write them (signed); 21.08 and 22.05 write null for both.
TRES_NO_VAL, TRES_INFINITE = -2, -1
#: The state flags ``job_state_string`` prints instead of the base state, in its order.
FLAG_STATES = (
    "COMPLETING",
    "STAGE_OUT",
    "CONFIGURING",
    "RESIZING",
    "REQUEUED",
    "REQUEUE_FED",
    "REQUEUE_HOLD",
    "SPECIAL_EXIT",
    "STOPPED",
    "REVOKED",
    "RESV_DEL_HOLD",
    "SIGNALING",
)
#: The base states (``JOB_STATE_BASE``).
BASE_STATES = frozenset(
    {
        "PENDING",
        "RUNNING",
        "SUSPENDED",
        "COMPLETED",
        "CANCELLED",
        "FAILED",
        "TIMEOUT",
        "NODE_FAIL",
        "PREEMPTED",
        "BOOT_FAIL",
        "DEADLINE",
        "OUT_OF_MEMORY",
    }
)
HELP_EXPORT = "export with `sacct --json --duplicates` (Slurm 21.08 or later)"

_RELEASE = re.compile(r"(\d+)\.(\d+)\.(\d+)", re.ASCII)


@dataclass(frozen=True, slots=True)
class JsonRow:
    """One element of ``jobs`` (``value``, as parsed): its row (from 1), and either its sacct
    fields or why it cannot be converted (``(code, reason)``); the steps it holds, and whether
    its ``Start`` is not its ``time.start`` (see the module docstring)."""

    row: int
    value: Any = field(repr=False, compare=False)
    fields: dict[str, str] | None
    reject: tuple[str, str] | None = None
    steps: int = 0
    start_moved: bool = False

    @property
    def record(self) -> str:
        """The record as the reject file shows it: its JSON on one compact line (written when
        asked: re-encoding every record costs about as much as parsing the file)."""
        return _compact(self.value)


@dataclass(frozen=True)
class JsonTable:
    """A ``sacct --json`` export as rows of sacct fields: the fields the records give (in
    :data:`FIELDS` order; a record without one of them has it empty), every row, the Slurm
    release ``meta`` names, and whether that release writes the eligible time as
    ``time.start`` (None: no release named)."""

    fields: tuple[str, ...]
    rows: tuple[JsonRow, ...]
    release: str | None
    start_is_eligible: bool | None

    @property
    def steps(self) -> int:
        """The job steps inside the records that were converted."""
        return sum(r.steps for r in self.rows if r.fields is not None)


def looks_like_json(text: str) -> bool:
    """Whether ``text`` is JSON rather than ``sacct --parsable2`` text: its first non-blank
    character is ``{`` (a text export starts with its header).

    >>> looks_like_json('\\n  {"jobs": []}'), looks_like_json("JobID|State\\n")
    (True, False)
    """
    return re.match(r"\s*\{", text) is not None


def json_rows(name: str, text: str) -> JsonTable:
    """The records of a ``sacct --json`` export as sacct fields (see the module docstring);
    I003 when the file is not JSON that can be read, has no ``jobs`` array, gives a key twice
    outside ``jobs``, or reports errors from Slurm (its ``jobs`` may then be incomplete)."""
    if not looks_like_json(text):
        message = f"`{name}` is not `sacct --json` output: it does not start with `{{`"
        raise format_error(name, message, HELP_EXPORT)
    repeats: list[str] = []  # every key given twice, found while parsing

    def pairs(items: list[tuple[str, Any]]) -> _Object:
        obj = _Object(items)
        if len(obj) != len(items):
            seen: set[str] = set()
            for key, _ in items:
                if key in seen:
                    obj.repeated = key
                    repeats.append(key)
                    break
                seen.add(key)
        return obj

    doc: _Object = parse_json(name, text, HELP_EXPORT, object_pairs_hook=pairs)
    repeated = None
    if repeats:
        outside = (_repeated(v) for k, v in doc.items() if k != "jobs")
        repeated = doc.repeated or next((k for k in outside if k), None)
    if repeated is not None:
        message = f"`{name}` gives the key `{repeated}` twice in one object: which one counts?"
        raise format_error(name, message, HELP_EXPORT)
    errors = doc.get("errors")
    if isinstance(errors, list) and errors:
        message = (
            f"`{name}` reports errors from Slurm ({_slurm_error(errors[0])}): its jobs may be "
            "incomplete"
        )
        raise format_error(name, message, HELP_EXPORT)
    if "jobs" not in doc:
        message = f"`{name}` has no `jobs` array: it is not `sacct --json` output"
        raise format_error(name, message, HELP_EXPORT)
    jobs = doc["jobs"]
    if not isinstance(jobs, list):
        message = f"`jobs` in `{name}` is {json_kind(jobs)}, not an array"
        raise format_error(name, message, HELP_EXPORT)
    release, eligible = _release(doc.get("meta"))
    rows = [_row(n, job, release, eligible, bool(repeats)) for n, job in enumerate(jobs, start=1)]
    present = {f for r in rows if r.fields is not None for f in r.fields}
    fields = tuple(f for f in FIELDS if f in present)
    rows = [
        r if r.fields is None else replace(r, fields={f: r.fields.get(f, "") for f in fields})
        for r in rows
    ]
    return JsonTable(fields, tuple(rows), release, eligible)


class _Object(dict[str, Any]):
    """A JSON object that remembers the first key it was given twice (JSON does not say which
    value counts; Python keeps the last without a word)."""

    repeated: str | None = None


def _repeated(value: Any) -> str | None:
    """The first key given twice in an object anywhere inside ``value``."""
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, _Object):
            if v.repeated is not None:
                return v.repeated
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
    return None


def _slurm_error(error: Any) -> str:
    """An element of ``errors`` in a few words: its description, else the whole of it."""
    if isinstance(error, dict):
        for key in ("description", "error"):
            if isinstance(error.get(key), str) and error[key]:
                return f"`{error[key]}`"
    return f"`{_compact(error)}`"


def _release(meta: Any) -> tuple[str | None, bool | None]:
    """The Slurm release ``meta`` names, and whether that release writes the eligible time as
    ``time.start`` (None: no release named). 21.08's ``openapi/dbv0.0.37`` always does.

    >>> _release({"Slurm": {"release": "22.05.7"}}), _release({"slurm": {"release": "22.05.8"}})
    (('22.05.7', True), ('22.05.8', False))
    >>> _release({"plugin": {"type": "openapi/dbv0.0.37"}}), _release(None)
    ((None, True), (None, None))
    """
    if not isinstance(meta, dict):
        return None, None
    slurm = meta.get("slurm", meta.get("Slurm"))
    text = slurm.get("release") if isinstance(slurm, dict) else None
    release = text if isinstance(text, str) and text else None
    m = _RELEASE.match(release or "")
    plugin = meta.get("plugin")
    if isinstance(plugin, dict) and plugin.get("type") == "openapi/dbv0.0.37":
        return release, True
    if m is None:
        return release, None
    version = tuple(int(g) for g in m.groups())
    return release, version[:2] == (21, 8) or (version[:2] == (22, 5) and version[2] < 8)


class _Rejected(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _row(row: int, job: Any, release: str | None, eligible: bool | None, repeats: bool) -> JsonRow:
    """Row ``row``; ``repeats``: whether the file gives some key twice (then the record is
    searched for one)."""
    try:
        fields, steps, moved = _fields(job, release, eligible, repeats)
    except _Rejected as exc:
        return JsonRow(row, job, None, (MALFORMED, exc.reason))
    return JsonRow(row, job, fields, None, steps, moved)


def _compact(value: Any) -> str:
    """``value`` as one line of compact JSON, as the reject file shows it (escaped where a
    string holds a lone surrogate, which no file can hold as text)."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(value, separators=(",", ":"))
    return text


def _fields(
    job: Any, release: str | None, eligible: bool | None, repeats: bool
) -> tuple[dict[str, str], int, bool]:
    """A record's sacct fields, its steps, and whether its start was moved; :class:`_Rejected`
    naming the key that cannot be read."""
    if not isinstance(job, dict):
        raise _Rejected(f"not a job object but {json_kind(job)}")
    if "job_id" not in job:
        raise _Rejected("has no `job_id`")
    raw = _whole(job["job_id"], "`job_id`")
    job_id = _job_id(job, raw)
    label = f"job {job_id}"
    repeated = _repeated(job) if repeats else None
    if repeated is not None:
        raise _Rejected(
            f"{label} gives the key `{repeated}` twice in one object: which one counts?"
        )
    state, pending = _state(job, label)
    times = _get(job, "time", label)
    if not isinstance(times, dict):
        raise _Rejected(f"`time` of {label} is {json_kind(times)}, not an object")
    start = _time(_get(times, "start", label, "time."), "time.start", label)
    end = _time(_get(times, "end", label, "time."), "time.end", label)
    submit = _time(times["submission"], "time.submission", label) if "submission" in times else None
    elapsed = _count(times.get("elapsed"), "time.elapsed", label)
    start, moved = _start(times, start, end, elapsed, pending, label, release, eligible)
    fields = {
        "JobID": job_id,
        "JobIDRaw": str(raw),
        "State": state,
        "Start": _show_time(start),
        "End": _show_time(end),
        "AllocTRES": _tres(job, label),
    }
    if "submission" in times:
        fields["Submit"] = _show_time(submit)
    if "elapsed" in times:
        fields["Elapsed"] = "" if elapsed is None else _show_elapsed(elapsed)
        fields["ElapsedRaw"] = "" if elapsed is None else str(elapsed)
    for sacct_field, key in (
        ("JobName", "name"),
        ("Partition", "partition"),
        ("QOS", "qos"),
        ("NodeList", "nodes"),
    ):
        if key in job:
            fields[sacct_field] = _text(job[key], f"`{key}`", label)
    if "restart_cnt" in job:
        restarts = _count(job["restart_cnt"], "restart_cnt", label)
        fields["Restarts"] = "" if restarts is None else str(restarts)
    steps = job.get("steps")
    if steps is not None and not isinstance(steps, list):
        raise _Rejected(f"`steps` of {label} is {json_kind(steps)}, not an array")
    return fields, len(steps or ()), moved


def _get(obj: dict[str, Any], key: str, label: str, prefix: str = "") -> Any:
    if key not in obj:
        raise _Rejected(f"{label} has no `{prefix}{key}`")
    return obj[key]


def _number(value: Any, what: str, label: str) -> int | None:
    """A whole number as Slurm writes one: plain, null (none), or ``{"set", "infinite",
    "number"}`` (none unless set and finite)."""
    if value is None:
        return None
    if isinstance(value, dict) and {"set", "infinite", "number"} <= value.keys():
        if not isinstance(value["set"], bool) or not isinstance(value["infinite"], bool):
            raise _Rejected(f"`{what}` of {label} is not a number: `{_compact(value)}`")
        if not value["set"] or value["infinite"]:
            return None
        value = value["number"]
    if isinstance(value, bool) or not isinstance(value, int):
        raise _Rejected(f"`{what}` of {label} is not a whole number: `{_compact(value)}`")
    return value


def _count(value: Any, what: str, label: str) -> int | None:
    n = _number(value, what, label)
    if n is not None and n < 0:
        raise _Rejected(f"`{what}` of {label} is negative: `{n}`")
    return n


def _uint32(value: Any, what: str, label: str) -> int | None:
    """A 32-bit value, none when Slurm's unset or unlimited marker."""
    n = _count(value, what, label)
    return None if n in (NO_VAL, INFINITE) else n


def _time(value: Any, what: str, label: str) -> int | None:
    """Epoch seconds, None for no time (0, null, unset)."""
    t = _number(value, what, label)
    if t is None or t == 0:
        return None
    if t < 0:
        raise _Rejected(f"`{what}` of {label} is negative: `{t}`")
    if t >= TIME_LIMIT:
        raise _Rejected(f"`{what}` of {label} is past 2199-12-31: `{t}`")
    return t


def _whole(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise _Rejected(f"{what} `{_compact(value)}` is not a whole number")
    return value


def _text(value: Any, what: str, label: str) -> str:
    """A free-text value as written (null is empty); not one a file can hold is a reject."""
    if value is None:
        return ""
    if not isinstance(value, str):
        raise _Rejected(f"{what} of {label} is {json_kind(value)}, not a string")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise _Rejected(f"{what} of {label} is not Unicode text (a lone surrogate)") from None
    return value


def _job_id(job: dict[str, Any], raw: int) -> str:
    """``JobID`` as ``slurmdb_get_job_id_str`` writes it."""
    label = f"job {raw}"
    array, het = (_part(job, key, label) for key in ("array", "het"))
    task = _text(array.get("task"), "`array.task`", label)
    task_id = _uint32(array.get("task_id"), "array.task_id", label)
    if task or task_id is not None:
        if "job_id" not in array:
            raise _Rejected(f"{label} has no `array.job_id`")
        array_job = _whole(array["job_id"], "`array.job_id`")
        return f"{array_job}_[{task}]" if task else f"{array_job}_{task_id}"
    het_job = _uint32(het.get("job_id"), "het.job_id", label)
    if het_job:
        offset = _uint32(het.get("job_offset"), "het.job_offset", label)
        if offset is None:
            raise _Rejected(f"{label} has no `het.job_offset`")
        return f"{het_job}+{offset}"
    return str(raw)


def _part(job: dict[str, Any], key: str, label: str) -> dict[str, Any]:
    value = job.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _Rejected(f"`{key}` of {label} is {json_kind(value)}, not an object")
    return value


def _state(job: dict[str, Any], label: str) -> tuple[str, bool]:
    """``State`` as ``sacct --parsable2`` prints it, and whether the job is pending."""
    state = _get(job, "state", label)
    if not isinstance(state, dict):
        raise _Rejected(f"`state` of {label} is {json_kind(state)}, not an object")
    current = _get(state, "current", label, "state.")
    words = [current] if isinstance(current, str) else current
    if (
        not isinstance(words, list)
        or not words
        or not all(isinstance(w, str) and w.strip() for w in words)
    ):
        raise _Rejected(f"`state.current` of {label} is not a job state: `{_compact(current)}`")
    upper = [w.strip().upper() for w in words]
    word = next((f for f in FLAG_STATES if f in upper), None)
    word = word or next((w for w in upper if w in BASE_STATES), words[0].strip())
    user = _text(job.get("kill_request_user"), "`kill_request_user`", label).strip()
    text = f"{word} by {user}" if "CANCELLED" in upper and user else word
    return text, word == "PENDING"


def _start(
    times: dict[str, Any],
    start: int | None,
    end: int | None,
    elapsed: int | None,
    pending: bool,
    label: str,
    release: str | None,
    eligible: bool | None,
) -> tuple[int | None, bool]:
    """The record's start, and whether it is not ``time.start`` (see the module docstring)."""
    if eligible is False or (end is None and eligible is None):
        return start, False
    slurm = f"Slurm {release}" if release else "this Slurm release"
    fault = f"{slurm} writes the time a job became eligible as `time.start`"
    if end is None:
        if pending:
            return None, start is not None
        raise _Rejected(f"{label} is still running, and {fault}: its start is not in the file")
    if "suspended" in times:
        suspended = _count(times["suspended"], "time.suspended", label)
    else:
        suspended = None
    if eligible is None:
        try:
            shown = _time(times.get("eligible"), "time.eligible", label)
        except _Rejected:
            shown = None
        if elapsed is None or suspended is None or start is None or shown != start:
            return start, False
        if end - elapsed - suspended == start:
            return start, False
    if elapsed is None:
        raise _Rejected(f"{label} has no `time.elapsed`, and {fault}: its start is not known")
    if suspended is None:
        raise _Rejected(f"{label} has no `time.suspended`, and {fault}: its start is not known")
    derived = end - elapsed - suspended
    if derived < (start or 0):
        raise _Rejected(
            f"`time.end` − `time.elapsed` − `time.suspended` of {label} is before its "
            f"`time.start` ({derived:,} < {start or 0:,})"
        )
    return derived, derived != start


def _tres(job: dict[str, Any], label: str) -> str:
    """``AllocTRES`` as ``sacct`` prints it: ``type/name=count``, in name order."""
    tres = _get(job, "tres", label)
    if not isinstance(tres, dict):
        raise _Rejected(f"`tres` of {label} is {json_kind(tres)}, not an object")
    allocated = _get(tres, "allocated", label, "tres.")
    if not isinstance(allocated, list):
        raise _Rejected(f"`tres.allocated` of {label} is {json_kind(allocated)}, not an array")
    items = []
    for i, item in enumerate(allocated, start=1):
        where = f"item {i} of `tres.allocated` of {label}"
        if not isinstance(item, dict):
            raise _Rejected(f"{where} is {json_kind(item)}, not an object")
        kind = _text(item.get("type"), "its `type`", where)
        name = _text(item.get("name"), "its `name`", where)
        if not kind:
            raise _Rejected(f"{where} has no `type`")
        key = f"{kind}/{name}" if name else kind
        if any(c in key for c in ",="):
            raise _Rejected(f"{where} names `{key}`, which holds a `,` or `=`")
        count = item.get("count")
        if count is None or (type(count) is int and count == TRES_NO_VAL):
            if key.lower() == "gres/gpu" or key.lower().startswith("gres/gpu:"):
                raise _Rejected(f"`tres.allocated` of {label} gives no count for `{key}`")
            continue  # a count Slurm does not have: sacct prints nothing for it
        if isinstance(count, bool) or not isinstance(count, int):
            raise _Rejected(
                f"`tres.allocated` count of `{key}` of {label} is not a whole number: "
                f"`{_compact(count)}`"
            )
        items.append(f"{key}={'NONE' if count == TRES_INFINITE else count}")
    return ",".join(sorted(items))


def _show_time(t: int | None) -> str:
    """Epoch seconds as ``SLURM_TIME_FORMAT=%FT%T%z`` prints them in UTC.

    >>> _show_time(1735689600), _show_time(None)
    ('2025-01-01T00:00:00+0000', 'Unknown')
    """
    if t is None:
        return NO_TIME
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%S+0000")


def _show_elapsed(seconds: int) -> str:
    """Seconds as ``sacct`` prints ``Elapsed`` (``secs2time_str``).

    >>> _show_elapsed(93784), _show_elapsed(59)
    ('1-02:03:04', '00:00:59')
    """
    days, rest = divmod(seconds, 86_400)
    hours, rest = divmod(rest, 3_600)
    minutes, secs = divmod(rest, 60)
    clock = f"{hours:02d}:{minutes:02d}:{secs:02d}"
    return f"{days}-{clock}" if days else clock
