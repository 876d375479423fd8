"""What one rehearsal recorded: the job's and the scheduler's events, each allocation, each
checkpoint with its verdict, each planned interrupt. Renderers and the trace writer read
these, and the words for what they hold (how the job exited, where an interrupt was planned).
Recorded times are integer microseconds after the rehearsal's start (its first ``started``),
already scaled back when ``--time-scale`` compressed the waits.
"""

from __future__ import annotations

import signal
from dataclasses import dataclass
from datetime import datetime
from fractions import Fraction
from typing import Literal

from contractlang.diagnostics import Diagnostic
from contractlang.lang.numbers import round_fraction
from contractlang.rehearse.plan import RehearsalPlan
from contractlang.rehearse.settings import AllocationSpec

EndReason = Literal["released", "reclaimed", "failed"]


@dataclass(frozen=True)
class RecordedEvent:
    """One row of the rehearsal's trace (docs/trace.md, "The schema"), with its recorded time."""

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

    @property
    def exited(self) -> str | None:
        """How the job's first process ended, in words (:func:`exit_words`), when it did."""
        return None if self.returncode is None else exit_words(self.returncode)


@dataclass(frozen=True)
class Interrupt:
    """A planned interrupt: at ``fraction`` of the progress, that is at ``step``; the
    allocation its notice came in, which was reclaimed (a rehearsal that could not deliver an
    interrupt fails: E706)."""

    fraction: Fraction
    step: int | None
    alloc_id: str | None

    @property
    def percent(self) -> str:
        """Where it was planned, as a share of the progress (:func:`percent`): ``33.33%``."""
        return percent(self.fraction)


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


def exit_words(code: int) -> str:
    """How a process ended, in words.

    >>> exit_words(3), exit_words(-11)
    ('exited with status 3', 'was killed by SIGSEGV')
    """
    if code >= 0:
        return f"exited with status {code}"
    try:
        return f"was killed by {signal.Signals(-code).name}"
    except ValueError:
        return f"was killed by signal {-code}"


def percent(f: Fraction) -> str:
    """A share of the progress as people write it.

    >>> percent(Fraction(1, 3)), percent(Fraction(7, 10))
    ('33.33%', '70%')
    """
    return f"{round_fraction(f * 100, 2).normalize():f}%"
