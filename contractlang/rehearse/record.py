"""What one rehearsal recorded: the job's and the scheduler's events, each allocation, each
checkpoint with its verdict, each planned interrupt. Renderers and the trace writer read
these. Recorded times are integer microseconds after the rehearsal's start (its first
``started``), already scaled back when ``--time-scale`` compressed the waits.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from fractions import Fraction
from typing import Literal

from contractlang.diagnostics import Diagnostic
from contractlang.rehearse.plan import RehearsalPlan
from contractlang.rehearse.settings import AllocationSpec

EndReason = Literal["released", "reclaimed", "failed"]


@dataclass(frozen=True)
class RecordedEvent:
    """One row of the rehearsal's trace (design §3), with its recorded time."""

    at_us: int
    source: Literal["scheduler", "job"]
    event: str
    alloc_id: str | None
    step: int | None = None
    valid: bool | None = None


@dataclass(frozen=True)
class CheckpointRecord:
    """A checkpoint the job reported, and whether it held when checked."""

    alloc_id: str
    at_us: int
    step: int
    path: str  # relative to the checkpoint directory
    sha256: str | None
    valid: bool
    reason: str | None  # why it is not valid


@dataclass(frozen=True)
class AllocationRecord:
    """One allocation: one start of the job's command."""

    alloc_id: str
    attempt: int
    requested_us: int
    start_us: int
    end_us: int
    end_reason: EndReason
    end_step: int | None  # the last step the job reported (or restored) in it
    notice_us: int | None  # when its notice was delivered
    interrupt: int | None  # which planned interrupt (1, 2, …) came in it
    returncode: int | None  # of the job's first process; < 0: killed by that signal
    restored_step: int | None
    first_step: int | None  # the first step it reported
    steps: int  # how many `step` reports it made


@dataclass(frozen=True)
class Interrupt:
    """A planned interrupt: at ``fraction`` of the progress, that is at ``step``; the
    allocation its notice came in, which was reclaimed (a rehearsal that could not deliver an
    interrupt fails: E706)."""

    fraction: Fraction
    step: int | None
    alloc_id: str | None


@dataclass(frozen=True)
class Record:
    """Everything one rehearsal recorded."""

    plan: RehearsalPlan
    run_id: str
    started_at: datetime  # the wall-clock time of the first start, UTC
    time_scale: Fraction
    notice_signal: str
    allocation: AllocationSpec
    events: tuple[RecordedEvent, ...]
    allocations: tuple[AllocationRecord, ...]
    checkpoints: tuple[CheckpointRecord, ...]
    interrupts: tuple[Interrupt, ...]
    total_steps: int | None
    result: Literal["accepted", "rejected"] | None
    warnings: tuple[Diagnostic, ...]
    real_us: int  # how long it really took

    @property
    def recorded_us(self) -> int:
        """The recorded length: from the first start to the last end."""
        return self.allocations[-1].end_us if self.allocations else 0
