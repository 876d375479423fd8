"""The scheduler of one rehearsal: allocation after allocation of the same run until the job
ends by itself (released or failed) or has reported its verdict (a job reclaimed after its
final validation has nothing left to do), with a replacement wait after each reclaim.

Each allocation's own ``requested`` is recorded when the previous one was reclaimed (the
first at the start) and its ``started`` the replacement wait later, exactly: the scheduler's
own milliseconds between killing a job and starting the next are not part of the record.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime
from fractions import Fraction
from pathlib import Path

from contractlang.lang.numbers import round_fraction
from contractlang.rehearse.allocation import AllocationRun
from contractlang.rehearse.clock import Clock
from contractlang.rehearse.plan import RehearsalPlan
from contractlang.rehearse.process import Reaper, stop_on_signals
from contractlang.rehearse.record import AllocationRecord, Interrupt, Record
from contractlang.rehearse.settings import RehearsalSettings, cannot_write
from contractlang.rehearse.state import RunState, days, recorded_limit, too_long

Progress = Callable[[str], None]


def run_rehearsal(
    plan: RehearsalPlan,
    settings: RehearsalSettings,
    workdir: Path,
    progress: Progress | None = None,
) -> Record:
    """Rehearse ``settings.command`` under ``plan``'s notice lead and replacement wait, with
    its files (checkpoints, the job's output) in ``workdir``."""
    step = progress or (lambda _msg: None)
    ckdir = workdir / "checkpoints"
    try:
        ckdir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise cannot_write(ckdir, exc) from None
    real0 = time.monotonic_ns()
    started_at = datetime.now(UTC)
    state = RunState(
        settings, ckdir.resolve(), *recorded_limit(settings.allocation.gpus, started_at)
    )
    clock = Clock(settings.time_scale, real0)
    allocations: list[AllocationRecord] = []
    requested_us = start_us = 0
    names = ", ".join(plan.contracts)
    with stop_on_signals(), Reaper() as reaper:
        while True:
            attempt = len(allocations) + 1
            alloc_id = f"{settings.run_id}-a{attempt}"
            step(f"rehearsing {names}: allocation {attempt}")
            run = AllocationRun(state, clock, alloc_id, attempt, workdir, reaper)
            done = run.run(requested_us, start_us, plan.notice.us)
            allocations.append(done)
            if done.end_reason != "reclaimed" or state.result is not None:
                break
            wait = plan.replacement_wait.us
            if done.end_us + wait > state.limit_us:
                later = days(done.end_us + wait)
                raise too_long(
                    state.limit_us, state.limit_why, f"the next allocation would start at {later}"
                )
            step(f"rehearsing {names}: waiting for a replacement")
            time.sleep(clock.real_span(wait))
            requested_us, start_us = done.end_us, done.end_us + wait
    real_us = (time.monotonic_ns() - real0) // 1000
    _after(state, allocations)
    return Record(
        plan=plan,
        run_id=settings.run_id,
        started_at=started_at,
        time_scale=settings.time_scale,
        notice_signal=settings.notice_signal.name,
        allocation=settings.allocation,
        events=tuple(sorted(state.events, key=lambda e: e.at_us)),
        allocations=tuple(allocations),
        checkpoints=tuple(c.record() for c in state.checkpoints),
        interrupts=tuple(
            Interrupt(f, state.threshold(k), state.fired[k] if k < len(state.fired) else None)
            for k, f in enumerate(settings.interrupts)
        ),
        total_steps=state.total,
        result=state.result,
        warnings=tuple(state.warnings),
        real_us=real_us,
    )


def _after(state: RunState, allocations: list[AllocationRecord]) -> None:
    """Warnings about the rehearsal as a whole: interrupts that never came, no verdict."""
    last = allocations[-1]
    ended = f", at step {last.end_step}" if last.end_step is not None else ""
    for k in range(len(state.fired), len(state.interrupts)):
        at = state.threshold(k)
        where = f" (step {at})" if at is not None else ""
        state.warn(
            "W702",
            f"the interrupt planned at {percent(state.interrupts[k])} of the progress{where} "
            f"never came: the job ended first{ended}",
            help="the job must report its steps (`contractlang: step N`) as it goes",
        )
    if state.result is None and last.end_reason == "released":
        state.warn(
            "W706",
            f"the job ended in allocation `{last.alloc_id}` without reporting `accepted` or "
            "`rejected`, so the run is not accepted",
            help="have the job print `contractlang: accepted` (or `rejected`) after its "
            "final validation",
        )


def percent(f: Fraction) -> str:
    """A share of the progress as people write it.

    >>> percent(Fraction(1, 3)), percent(Fraction(7, 10))
    ('33.33%', '70%')
    """
    return f"{round_fraction(f * 100, 2).normalize():f}%"
