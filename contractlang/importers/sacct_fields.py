"""The values of Slurm's ``sacct`` fields, as its man page (``sacct(1)``) defines them.

- ``JobID``: ``JobID[.JobStep]``, ``ArrayJobID_ArrayTaskID``, ``HetJobID+HetJobOffset``. A job
  step (``123.batch``, ``123.extern``, ``123.0``) runs inside its job's allocation.
- ``State``: one of the JOB STATE CODES; a job cancelled by someone reads ``CANCELLED by UID``.
- ``AllocTRES``: ``billing=16,cpu=16,gres/gpu:a100=2,gres/gpu=2,mem=64G,node=1``. A typed GPU
  count (``gres/gpu:a100=2``) repeats the untyped total (``gres/gpu=2``): 2 GPUs, not 4.
- ``Elapsed``: ``[DD-[HH:]]MM:SS``.
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

#: What each terminal state means for the allocation it ended (design §2): the provider took
#: it back (``reclaimed``), a fault ended it (``failed``), or the job or its owner did
#: (``released``).
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

#: The largest count a trace column holds (a signed 64-bit integer): GPUs, restarts.
MAX_COUNT = 2**63 - 1
#: The most GPUs a count may say.
MAX_GPUS = MAX_COUNT

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
    """What ``AllocTRES`` says about GPUs: the count, the GPU types named, whether the typed
    counts add up to the untyped total, and the node count."""

    gpus: int
    types: tuple[str, ...]
    typed_total: int | None  # Σ typed counts, when any are given
    nodes: int | None
    empty: bool  # no TRES at all: the job was never allocated


def parse_tres(text: str) -> Tres | None:
    """``AllocTRES`` read for GPUs; None when a GPU count is not a whole number. The untyped
    ``gres/gpu=N`` is the total; typed counts only count when it is absent (a site that
    accounts only typed GPUs). ``gres/gpumem`` and ``gres/gpuutil`` are not GPUs."""
    total: int | None = None
    typed: dict[str, int] = {}
    nodes: int | None = None
    items = [p for p in text.strip().split(",") if p.strip()]
    for item in items:
        key, _, value = item.strip().partition("=")
        key = key.strip().lower()
        if key == "gres/gpu" or key.startswith("gres/gpu:"):
            if not is_count(value) or int(value) > MAX_GPUS:
                return None
            count = int(value)
            if key == "gres/gpu":
                total = count
            else:
                typed[key.removeprefix("gres/gpu:")] = count
        elif key == "node" and is_count(value):
            nodes = int(value)
    typed_total = sum(typed.values()) if typed else None
    gpus = total if total is not None else (typed_total or 0)
    if gpus > MAX_GPUS:
        return None
    return Tres(gpus, tuple(sorted(typed)), typed_total, nodes, empty=not items)


_ELAPSED = re.compile(r"^(?:(?:(\d+)-)?(\d+):)?(\d+):(\d+)(?:\.\d+)?$", re.ASCII)


def parse_elapsed(text: str) -> int | None:
    """``[DD-[HH:]]MM:SS`` as whole seconds; None when it is not one."""
    m = _ELAPSED.match(text.strip())
    if m is None:
        return None
    days, hours, minutes, seconds = (int(g) if g else 0 for g in m.groups())
    return ((days * 24 + hours) * 60 + minutes) * 60 + seconds


_COUNT = re.compile(r"[0-9]+")


def is_count(text: str) -> bool:
    """Whole-number text in ASCII digits, blanks around it allowed: ``str.isdigit`` would
    take ``²`` and ``٣``, which ``int`` then refuses or reads as 3.

    >>> is_count(" 8 "), is_count("²"), is_count("٣"), is_count("-1")
    (True, False, False, False)
    """
    return _COUNT.fullmatch(text.strip()) is not None


def is_no_time(text: str) -> bool:
    return text.strip().lower() in NO_TIME
