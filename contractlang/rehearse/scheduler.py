"""The scheduler of one rehearsal: allocation after allocation of the same run until the job
ends by itself (released or failed) or has reported its verdict (a job reclaimed after its
final validation has nothing left to do), with a replacement wait after each reclaim. Every
interrupt asked for is delivered — a notice to the running job, a reclaim when its lead runs
out — or the rehearsal fails saying which was not, and why (E706).

Each allocation's own ``requested`` is recorded when the previous one was reclaimed (the
first at the start) and its ``started`` the replacement wait later, exactly: the scheduler's
own milliseconds between killing a job and starting the next are not part of the record.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path

from contractlang.diagnostics import NO_SPAN, error
from contractlang.errors import ContractlangError, cannot_write, os_reason
from contractlang.rehearse.allocation import AllocationRun
from contractlang.rehearse.clock import Clock
from contractlang.rehearse.plan import RehearsalPlan
from contractlang.rehearse.process import Reaper, stop_on_signals
from contractlang.rehearse.record import AllocationRecord, Interrupt, Record, percent
from contractlang.rehearse.settings import RehearsalSettings
from contractlang.rehearse.state import FILE, RunState, days, recorded_limit, too_long

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
        raise cannot_write(ckdir, os_reason(exc)) from None
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
    failed = undelivered(plan, state, allocations)
    if failed is not None:
        raise failed
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
    """Warnings about the rehearsal as a whole: no verdict."""
    last = allocations[-1]
    if state.result is None and last.end_reason == "released":
        state.warn(
            "W706",
            f"the job ended in allocation `{last.alloc_id}` without reporting `accepted` or "
            "`rejected`, so the run is not accepted",
            help="have the job print `contractlang: accepted` (or `rejected`) after its "
            "final validation",
        )


def undelivered(
    plan: RehearsalPlan, state: RunState, allocations: Sequence[AllocationRecord]
) -> ContractlangError | None:
    """E706 when an interrupt asked for was not delivered — its notice sent to the running
    job and the job reclaimed at the end of the lead — naming the first such and why, with
    the rehearsal's warnings before it (a job's failure, W704, among them); else ``None``.
    A rehearsal never returns a shorter failure path than was asked for."""
    reclaimed = {a.interrupt for a in allocations if a.end_reason == "reclaimed"}
    missing = [k for k in range(1, len(state.interrupts) + 1) if k not in reclaimed]
    if not missing:
        return None
    k = missing[0]
    why, help = _why(state, allocations, k)
    at = state.threshold(k - 1)
    where = f", step {at}" if at is not None else ""
    drafts = ", ".join(f"`{c}`" for c in plan.contracts)
    more = len(missing) - 1
    after = f", nor the {more} after it" if more > 1 else ", nor the one after it" if more else ""
    message = (
        f"the rehearsal of {drafts} could not deliver interrupt {k} of "
        f"{len(state.interrupts)} (at {percent(state.interrupts[k - 1])} of the progress"
        f"{where}){after}: {why}"
    )
    return ContractlangError(
        [*state.warnings, error("E706", message, NO_SPAN, file=FILE, help=help)]
    )


def _why(state: RunState, allocations: Sequence[AllocationRecord], k: int) -> tuple[str, str]:
    """Why interrupt ``k`` (from 1) was not delivered, and what to do about it."""
    noticed = [a for a in allocations if a.interrupt == k]
    if noticed:  # its notice came, and the job finished its work within the lead
        a = noticed[0]
        return (
            f"its notice came in allocation `{a.alloc_id}`, but the job finished its work "
            f"within the notice lead (released at step {a.end_step}), so it was never reclaimed",
            "the job must still have work left when a notice lead runs out: plan the "
            "interrupts earlier (`--at`), or shorten the lead in real time (a larger "
            "`--time-scale`, or `--notice`)",
        )
    last = allocations[-1]
    if last.end_reason == "failed":
        return (
            f"the job failed first, in allocation `{last.alloc_id}`",
            "the job's failure is the warning above",
        )
    if last.end_reason == "reclaimed":  # after the job's verdict: the run was over
        return (
            f"the job reported its result (`{state.result}`) first, in allocation "
            f"`{last.alloc_id}`, so the run was over",
            "plan the interrupts before the job's final validation (`--at`)",
        )
    if last.end_step is None:
        return (
            f"the job ended first, in allocation `{last.alloc_id}`, without reporting a step",
            "the job must report its steps (`contractlang: step N`) as it goes",
        )
    at = state.threshold(k - 1)
    if at is not None and last.end_step >= at:  # reported, but read once the job had gone
        return (
            f"the job ended in allocation `{last.alloc_id}` at step {last.end_step}, before "
            "the notice could reach it",
            "the job must still be running a moment after it reports the interrupt's step: "
            "plan the interrupts earlier (`--at`)",
        )
    return (
        f"the job ended first, at step {last.end_step}, in allocation `{last.alloc_id}`",
        "plan the interrupts within the steps the job runs (`--at`), or see why it ended in "
        "its output (`--workdir`)",
    )
