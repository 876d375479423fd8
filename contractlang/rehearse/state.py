"""What a rehearsal knows while it runs, shared by its allocations: the recorded events and
checkpoints so far, the planned interrupts, the job's total steps and verdict, warnings."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime
from fractions import Fraction
from pathlib import Path
from typing import Literal

from contractlang.diagnostics import NO_SPAN, Diagnostic, error, warning
from contractlang.errors import ContractlangError
from contractlang.lang.numbers import MICROS_PER_DAY, MICROS_PER_HOUR, micros
from contractlang.rehearse.record import CheckpointRecord, RecordedEvent
from contractlang.rehearse.settings import RehearsalSettings
from contractlang.trace.limits import MAX_GPU_US, MAX_TS

FILE = "rehearse"


def recorded_limit(gpus: int, started_at: datetime) -> tuple[int, str]:
    """The longest a rehearsal of ``gpus`` GPUs started at ``started_at`` may be recorded, so
    its trace stays valid, and why: its timestamps end before 2200, and one run's GPU-time
    (GPUs × recorded time, counted generously with the waits) stays within
    :data:`~contractlang.trace.limits.MAX_GPU_US`.

    >>> from datetime import UTC
    >>> recorded_limit(10_000_000, datetime(2026, 1, 1, tzinfo=UTC))[0] // MICROS_PER_DAY
    10
    """
    by_time = micros(MAX_TS - started_at) - 1
    by_gpus = MAX_GPU_US // gpus
    if by_time <= by_gpus:
        return by_time, "a trace's timestamps end at 2199-12-31"
    hours = MAX_GPU_US // MICROS_PER_HOUR
    return by_gpus, f"one run of {gpus:,} GPUs may hold at most {hours:,} GPU-hours"


def days(us: int) -> str:
    """A long recorded time in days (or seconds, below a day), to the tenth.

    >>> days(922_337_203_685), days(3_000_000)
    ('10.7 days', '3.0 s')
    """
    return f"{us / MICROS_PER_DAY:,.1f} days" if us >= MICROS_PER_DAY else f"{us / 1e6:,.1f} s"


def too_long(limit_us: int, why: str, what: str) -> ContractlangError:
    """E705: the rehearsal would be, or has been, recorded longer than its trace can hold."""
    return ContractlangError(
        [
            error(
                "E705",
                f"{what}: a trace of it holds at most {days(limit_us)} ({why})",
                NO_SPAN,
                file=FILE,
                help="rehearse fewer GPUs (`--gpus`), fewer interrupts, or shorter notices and "
                "waits (`--notice`, `--replacement-wait`)",
            )
        ]
    )


@dataclass
class PendingCheckpoint:
    """A reported checkpoint; ``valid`` is ``None`` until it has passed or finally failed."""

    alloc_id: str
    at_us: int
    step: int
    path: Path
    shown: str
    sha256: str | None
    valid: bool | None = None
    reason: str | None = None

    def record(self) -> CheckpointRecord:
        return CheckpointRecord(
            self.alloc_id,
            self.at_us,
            self.step,
            self.shown,
            self.sha256,
            bool(self.valid),
            self.reason,
        )


@dataclass
class RunState:
    """The rehearsal so far."""

    settings: RehearsalSettings
    checkpoint_dir: Path
    limit_us: int = 2**62  # the longest the rehearsal may be recorded (recorded_limit)
    limit_why: str = ""
    events: list[RecordedEvent] = field(default_factory=list)
    checkpoints: list[PendingCheckpoint] = field(default_factory=list)
    warnings: list[Diagnostic] = field(default_factory=list)
    total: int | None = None
    fired: list[str] = field(default_factory=list)  # alloc_id noticed by interrupt 1, 2, …
    result: Literal["accepted", "rejected"] | None = None

    def __post_init__(self) -> None:
        self.total = self.settings.total_steps

    def add(self, event: RecordedEvent) -> None:
        self.events.append(event)

    def warn(self, code: str, message: str, help: str | None = None) -> None:
        self.warnings.append(warning(code, message, NO_SPAN, file=FILE, help=help))

    # ------------------------------------------------------------------ interrupts

    @property
    def interrupts(self) -> tuple[Fraction, ...]:
        return self.settings.interrupts

    def threshold(self, k: int) -> int | None:
        """The step at which interrupt ``k`` (from 0) comes: ⌈fraction × total⌉."""
        if self.total is None:
            return None
        return max(1, math.ceil(self.interrupts[k] * self.total))

    def due(self, step: int, restored: bool = False) -> bool:
        """Whether the next planned interrupt comes now that the job is at ``step``: it
        reported the step done, or (``restored``) resumed from that step's checkpoint. So an
        interrupt whose step the job passed while none could come (in an earlier allocation's
        notice lead, whose checkpoint it restores) comes at once, not a step later or never.
        A step reported before the total is known cannot be placed: that is E704 (a restore
        before it waits for the first step).

        >>> from contractlang.rehearse.settings import RehearsalSettings, evenly
        >>> s = RunState(RehearsalSettings(("job",), "job", evenly(2), total_steps=200), Path())
        >>> s.threshold(0), s.due(66), s.due(67), s.due(70, restored=True)
        (67, False, True, True)
        >>> s.fired.append("a1")
        >>> s.threshold(1), s.due(133, restored=True), s.due(160, restored=True)
        (134, False, True)
        """
        k = len(self.fired)
        if k >= len(self.interrupts):
            return False
        at = self.threshold(k)
        if at is None and restored:
            return False
        if at is None:
            raise ContractlangError(
                [
                    error(
                        "E704",
                        f"the job reported step {step} but not how many steps it runs in all, "
                        "so the interrupts (at shares of its progress) cannot be placed",
                        NO_SPAN,
                        file=FILE,
                        help="have the job print `contractlang: total N` before its first "
                        "step, or pass `--steps N`",
                    )
                ]
            )
        return step >= at

    # ------------------------------------------------------------------ checkpoints

    def last_valid(self, before_us: int | None = None) -> PendingCheckpoint | None:
        """The latest checkpoint known valid (at or before ``before_us``); of several at the
        same time, the last reported (as `last_checkpoint` takes the last in the file)."""
        found = [
            c for c in self.checkpoints if c.valid and (before_us is None or c.at_us <= before_us)
        ]
        return max(reversed(found), key=lambda c: c.at_us, default=None)
