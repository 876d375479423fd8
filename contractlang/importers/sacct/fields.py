"""The values of Slurm's ``sacct`` fields, as its man page (``sacct(1)``) defines them.

- ``JobID``: ``JobID[.JobStep]``, ``ArrayJobID_ArrayTaskID``, ``HetJobID+HetJobOffset``. A job
  step (``123.batch``, ``123.extern``, ``123.0``) runs inside its job's allocation.
- ``State``: one of the JOB STATE CODES; a job cancelled by someone reads ``CANCELLED by UID``.
- ``AllocTRES``: ``billing=16,cpu=16,gres/gpu:a100=2,gres/gpu=2,mem=64G,node=1``. A typed GPU
  count (``gres/gpu:a100=2``) repeats the untyped total (``gres/gpu=2``): 2 GPUs, not 4.
- ``AllocGRES``, ``ReqGRES`` (removed in Slurm 20.11: "AllocGRES is deprecated, please use
  AllocTRES"): ``gpu:2``, ``gpu:a100:2``, ``gpu:a100:2(IDX:0-1)``, totals over all nodes.
- ``Elapsed``: ``[DD-[HH:]]MM:SS``; ``ElapsedRaw``: whole seconds.
- times: ``YYYY-MM-DDTHH:MM:SS`` in the cluster's local time; ``Unknown`` and ``None`` mean no
  time (a job still running has ``End`` ``Unknown``).

>>> parse_job_id("123_4.batch")
JobId(run='123_4', job='123_4', step='batch')
>>> parse_tres("billing=16,cpu=16,gres/gpu:a100=2,gres/gpu=2,gres/gpumem=80G,node=1").gpus
2
>>> parse_state("CANCELLED by 1000")
('CANCELLED', 'released')
>>> parse_elapsed("1-02:03:04")
93784
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from contractlang.lang.numbers import INT64_MAX

#: What each terminal state means for the allocation it ended: the provider took it back
#: (``reclaimed``), a fault ended it (``failed``), or the job or its owner did (``released``)
#: (docs/import.md, "`import sacct`").
END_REASONS: dict[str, str] = {
    "PREEMPTED": "reclaimed",
    "NODE_FAIL": "failed",
    "BOOT_FAIL": "failed",
    "COMPLETED": "released",
    "CANCELLED": "released",
    "TIMEOUT": "released",
    "FAILED": "released",
    "OUT_OF_MEMORY": "released",
    "DEADLINE": "released",
    "REQUEUED": "released",
}
#: States of a job that holds its allocation still: no end yet.
RUNNING_STATES = frozenset({"RUNNING", "SUSPENDED", "RESIZING", "REQUEUE_HOLD", "SIGNALING"})
#: States of a job that has not started.
PENDING_STATES = frozenset({"PENDING"})
#: A sibling removed from this cluster because another cluster of the federation ran the job.
REVOKED = "REVOKED"
KNOWN_STATES = frozenset(END_REASONS) | RUNNING_STATES | PENDING_STATES | {REVOKED}

#: The fields the import reads of a record, besides the GPU fields of releases before 20.11
#: (``AllocGRES``, ``ReqGRES``), in the order of the export docs/import.md recommends: what a
#: ``sacct --json`` record is turned into, in this order.
FIELDS = (
    "JobID", "JobIDRaw", "JobName", "Partition", "QOS", "State", "Submit", "Start", "End",
    "Elapsed", "ElapsedRaw", "AllocTRES", "Restarts", "NodeList",
)  # fmt: skip
#: The fields of the export docs/import.md recommends (``--format=…``), in its order:
#: :data:`FIELDS` but ``ElapsedRaw``, which says what ``Elapsed`` says.
STANDARD_FIELDS = tuple(f for f in FIELDS if f != "ElapsedRaw")

#: Every field ``sacct --helpformat`` lists (Slurm 25.x), and those of earlier releases: a
#: first line none of whose values is one of these is not a header.
ALL_FIELDS = frozenset(
    f.lower()
    for f in """
    Account AdminComment AllocCPUS AllocGRES AllocNodes AllocTRES AssocID AveCPU AveCPUFreq
    AveDiskRead AveDiskWrite AvePages AveRSS AveVMSize BlockID Cluster Comment Constraints
    ConsumedEnergy ConsumedEnergyRaw Container CPUTime CPUTimeRAW DBIndex DerivedExitCode
    Elapsed ElapsedRaw Eligible End Exclusive ExitCode Extra FailedNode Flags GID Group JobID
    JobIDRaw JobName Layout Licenses MaxDiskRead MaxDiskReadNode MaxDiskReadTask MaxDiskWrite
    MaxDiskWriteNode MaxDiskWriteTask MaxPages MaxPagesNode MaxPagesTask MaxRSS MaxRSSNode
    MaxRSSTask MaxVMSize MaxVMSizeNode MaxVMSizeTask McsLabel MinCPU MinCPUNode MinCPUTask
    NCPUS NNodes NodeList NTasks OriginalSLUID OverSubscribe Partition Planned PlannedCPU
    PlannedCPURAW Priority QOS QOSRAW QOSREQ Reason ReqCPUFreq ReqCPUFreqGov ReqCPUFreqMax
    ReqCPUFreqMin ReqCPUS ReqGRES ReqMem ReqNodes ReqReservation ReqTRES Reservation
    ReservationId Reserved ResvCPU ResvCPURAW Restarts SegmentSize SLUID Start State StdErr
    StdIn StdOut Submit SubmitLine Suspended SystemComment SystemCPU Timelimit TimelimitRaw
    TotalCPU TRESUsageInAve TRESUsageInMax TRESUsageInMaxNode TRESUsageInMaxTask
    TRESUsageInMin TRESUsageInMinNode TRESUsageInMinTask TRESUsageInTot TRESUsageOutAve
    TRESUsageOutMax TRESUsageOutMaxNode TRESUsageOutMaxTask TRESUsageOutMin TRESUsageOutMinNode
    TRESUsageOutMinTask TRESUsageOutTot UID User UserCPU WCKey WCKeyID WorkDir
    """.split()  # noqa: SIM905 (the man page's list, as it prints it)
)

#: Values ``sacct`` prints for a time it does not have.
NO_TIME = frozenset({"", "unknown", "none"})

_JOB_ID = re.compile(
    r"^(?P<job>(?P<base>\d+)(?:_(?P<task>\d+|\[[^\]]*\]))?(?:\+(?P<het>\d+))?)"
    r"(?:\.(?P<step>[A-Za-z0-9_+-]+))?$",
    re.ASCII,
)


@dataclass(frozen=True, slots=True)
class JobId:
    """A parsed ``JobID``: the run it belongs to, the job record it names, and its step (None
    for the job record itself). Array tasks are runs of their own (``123_4``); the components
    of a heterogeneous job (``123+0``, ``123+1``) are allocations of one run (``123``)."""

    run: str
    job: str
    step: str | None


def parse_job_id(text: str) -> JobId | None:
    m = _JOB_ID.match(text.strip())
    if m is None:
        return None
    run = m.group("job") if m.group("het") is None else m.group("job").rsplit("+", 1)[0]
    return JobId(run=run, job=m.group("job"), step=m.group("step"))


def is_pending_array(job: JobId) -> bool:
    """``123_[1-5]``: array tasks not yet started, printed as one record."""
    return "[" in job.job


def parse_state(text: str) -> tuple[str, str | None] | None:
    """The state's name and, for a terminal state, the end reason of its allocation (None for
    a job running or pending). None when the state is unknown. ``CANCELLED by 1000`` is
    ``CANCELLED``; a trailing ``+`` (a state cut to the column width) is ignored."""
    word = text.strip().split(" ", 1)[0].rstrip("+").upper()
    if word not in KNOWN_STATES:
        return None
    return word, END_REASONS.get(word)


@dataclass(frozen=True, slots=True)
class Tres:
    """What ``AllocTRES`` (or ``AllocGRES``) says about GPUs: the count, the GPU types named,
    the sum of the typed counts when any are given, and whether the field is empty (the job
    was never allocated)."""

    gpus: int
    types: tuple[str, ...]
    typed_total: int | None  # Σ typed counts, when any are given
    empty: bool
    named: bool = True  # a GPU count was written (`gres/gpu=0` is 0 GPUs, `cpu=4` none)


@dataclass(frozen=True, slots=True)
class GpuProblem:
    """Why a field's GPUs cannot be read: ``I016`` a count that is not a whole number the
    trace can hold; ``I026`` counts that disagree (two totals, or typed counts above the
    total)."""

    code: str
    reason: str


def parse_tres(text: str, field: str = "AllocTRES") -> Tres | GpuProblem:
    """``AllocTRES`` read for GPUs. The untyped ``gres/gpu=N`` is the total; typed counts
    count only when it is absent (a site that accounts only typed GPUs). ``gres/gpumem`` and
    ``gres/gpuutil`` are not GPUs.

    >>> parse_tres("gres/gpu=8,gres/gpu=16").code
    'I026'
    """
    items = [p.strip() for p in text.strip().split(",") if p.strip()]
    counts: list[tuple[str | None, str]] = []
    for item in items:
        key, _, value = item.partition("=")
        key = key.strip().lower()
        if key == "gres/gpu":
            counts.append((None, value))
        elif key.startswith("gres/gpu:"):
            # `gres/gpu:=8` names no type: its GPUs are untyped, never of a type `""`
            counts.append((key.removeprefix("gres/gpu:").strip() or None, value))
    return _gpus(field, text, counts, empty=not items)


#: ``gpu:2``, ``gpu:a100:2``, ``gpu:a100:2(IDX:0-1)``: one generic resource of ``AllocGRES``.
_GRES = re.compile(r"^(?P<name>[^:(]+)(?::(?P<type>[^:(]+))?:(?P<count>[^:(]*)(?:\([^)]*\))?$")


def parse_gres(text: str, field: str = "AllocGRES") -> Tres | GpuProblem:
    """``AllocGRES`` or ``ReqGRES`` (Slurm before 20.11: ``gpu:2``, ``gpu:a100:2``, with
    the indexes allocated as ``(IDX:0-1)``) read for GPUs, totals over all nodes; other
    generic resources (``mps``, ``shard``) are not GPUs.

    >>> parse_gres("gpu:a100:2(IDX:0-1),mps:100").gpus
    2
    """
    items = [p.strip() for p in text.strip().split(",") if p.strip()]
    if len(items) == 1 and items[0].lower() in {"(null)", "n/a"}:
        items = []
    counts: list[tuple[str | None, str]] = []
    for item in items:
        m = _GRES.match(item)
        name = (m.group("name") if m else item.split(":", 1)[0]).strip().lower()
        if name != "gpu":
            continue
        if m is None:
            reason = f"`{field}` `{text}` has a GPU count that is not a whole number"
            return GpuProblem("I016", reason + " the trace can hold")
        kind = m.group("type")
        counts.append(((kind or "").strip().lower() or None, m.group("count")))
    return _gpus(field, text, counts, empty=not items)


def _gpus(
    field: str, text: str, counts: list[tuple[str | None, str]], empty: bool
) -> Tres | GpuProblem:
    """The GPUs of ``(type or None, count as written)`` pairs: an untyped count is the total,
    typed counts its parts (or the count, without a total)."""
    totals: list[int] = []
    typed: dict[str, int] = {}
    for kind, value in counts:
        n = parse_count(value)
        if n is None:
            reason = f"`{field}` `{text}` has a GPU count that is not a whole number"
            return GpuProblem("I016", reason + " the trace can hold")
        if kind is None:
            totals.append(n)
        elif typed.setdefault(kind, n) != n:
            reason = f"`{field}` `{text}` names two different counts of GPU type `{kind}`"
            return GpuProblem("I026", f"{reason} ({typed[kind]:,} and {n:,})")
        if len(set(totals)) > 1:
            reason = f"`{field}` `{text}` names two different GPU totals"
            return GpuProblem("I026", f"{reason} ({totals[0]:,} and {n:,})")
    typed_total = sum(typed.values()) if typed else None
    if totals and typed_total is not None and typed_total > totals[0]:
        reason = (
            f"`{field}` `{text}`: its typed GPU counts add up to {typed_total:,}, more than "
            f"its total of {totals[0]:,}"
        )
        return GpuProblem("I026", reason)
    gpus = totals[0] if totals else (typed_total or 0)
    if gpus > INT64_MAX:
        reason = f"`{field}` `{text}` has a GPU count that is not a whole number"
        return GpuProblem("I016", reason + " the trace can hold")
    return Tres(gpus, tuple(sorted(typed)), typed_total, empty, named=bool(counts))


#: Each part of an ``Elapsed`` is at most this many digits (a billion days is past any export;
#: an unbounded part would reach Python's limit on the digits of an integer).
_PART = "[0-9]{1,9}"
_ELAPSED = re.compile(
    rf"^(?:(?:({_PART})-)?({_PART}):)?({_PART}):({_PART})(?:\.[0-9]{{1,9}})?$", re.ASCII
)


def parse_elapsed(text: str) -> int | None:
    """``[DD-[HH:]]MM:SS`` as whole seconds; None when it is not one.

    >>> parse_elapsed("1" * 5000 + ":00") is None
    True
    """
    m = _ELAPSED.match(text.strip())
    if m is None:
        return None
    days, hours, minutes, seconds = (int(g) if g else 0 for g in m.groups())
    return ((days * 24 + hours) * 60 + minutes) * 60 + seconds


def parse_elapsed_raw(text: str) -> int | None:
    """``ElapsedRaw``: whole seconds; None when it is not a count a trace holds."""
    return parse_count(text)


_COUNT = re.compile(r"[0-9]+")
#: Digits of the largest count (2^63 − 1 has 19), leading zeros aside: checked before ``int``,
#: which refuses more than 4,300 digits with a ``ValueError``.
_COUNT_DIGITS = len(str(INT64_MAX))


def parse_count(text: str) -> int | None:
    """A whole number in ASCII digits that a trace's count column holds (a signed 64-bit
    integer: GPUs, restarts); None when ``text`` is not one, or is larger (however many digits
    it has): a larger one cannot be carried into a trace at all. What a trace may hold — at
    most ``trace.limits.MAX_GPUS`` GPUs in one allocation — its own rules judge when the
    import is validated (``T020``, under ``I006``).

    >>> parse_count(" 0008 "), parse_count("9" * 5000), parse_count("0" * 5000 + "7")
    (8, None, 7)
    """
    t = text.strip()
    if _COUNT.fullmatch(t) is None or len(t.lstrip("0")) > _COUNT_DIGITS:
        return None
    n = int(t.lstrip("0") or "0")  # `int` counts leading zeros against its digit limit
    return n if n <= INT64_MAX else None


def is_count(text: str) -> bool:
    """Whole-number text in ASCII digits, blanks around it allowed: ``str.isdigit`` would
    take ``²`` and ``٣``, which ``int`` then refuses or reads as 3.

    >>> is_count(" 8 "), is_count("²"), is_count("٣"), is_count("-1")
    (True, False, False, False)
    """
    return _COUNT.fullmatch(text.strip()) is not None


def is_no_time(text: str) -> bool:
    return text.strip().lower() in NO_TIME
