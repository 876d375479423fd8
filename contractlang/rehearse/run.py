"""``rehearse``: the drafts grouped by their promises, one real rehearsal per group, each
recorded as a trace and evaluated through the normal pipeline.

Before any job starts, every draft prices a one-allocation trace of the rehearsal's
allocation, so a draft that cannot price it (E401, or a ``trace.<column>`` it lacks) fails in
a second, not after the rehearsal.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path

from contractlang.errors import InternalError, cannot_write, os_reason
from contractlang.lang.numbers import MICROS_PER_HOUR
from contractlang.lang.terms import Terms
from contractlang.pipeline.chosen import check_chosen
from contractlang.pipeline.evaluation import EvaluateOptions, evaluate
from contractlang.pipeline.language import load_terms
from contractlang.rehearse.frame import to_frame
from contractlang.rehearse.plan import RehearsalPlan, plan_rehearsals
from contractlang.rehearse.record import AllocationRecord, Record, RecordedEvent
from contractlang.rehearse.results import Rehearsal, RehearsalReport
from contractlang.rehearse.scheduler import run_rehearsal
from contractlang.rehearse.settings import RehearsalSettings, setting_error
from contractlang.rehearse.state import days, recorded_limit, too_long
from contractlang.trace.problems import TraceInvalid

Progress = Callable[[str], None]


def rehearse(
    terms: Terms | Sequence[str | Path],
    settings: RehearsalSettings,
    *,
    progress: Progress | None = None,
    ready: Callable[[], None] | None = None,
) -> RehearsalReport:
    """Rehearse ``settings.command`` once per distinct set of promises in ``terms`` and
    evaluate each rehearsal under its drafts. ``ready`` is called when everything has been
    checked, before anything is made or started (the command line makes its output folders
    then).

    Raises :class:`~contractlang.errors.ContractlangError` on bad terms or settings, a command
    that cannot start, a folder that cannot be made (E501), or a job that breaks the protocol
    beyond a warning (exit code 2).
    """
    step = progress or (lambda _msg: None)
    t = terms if isinstance(terms, Terms) else load_terms(list(terms))
    check_chosen(t, None)
    plans = plan_rehearsals(t, settings.notice_us, settings.replacement_wait_us)
    _check_workdir(settings.workdir)
    for plan in plans:
        _fits_a_trace(plan, settings)
        _preflight(t, plan, settings)
    if ready is not None:
        ready()
    workdir, temporary = _workdir(settings.workdir)
    try:
        rehearsals = []
        for i, plan in enumerate(plans, 1):
            record = run_rehearsal(plan, settings, workdir / f"rehearsal-{i}", step)
            step("evaluating the rehearsal")
            rehearsals.append(_evaluated(t, plan, record))
    finally:
        if temporary:
            shutil.rmtree(workdir, ignore_errors=True)
    return RehearsalReport(
        settings=settings,
        rehearsals=tuple(rehearsals),
        budgets=t.budgets,
        order=tuple(c.name for c in t.contracts),
        warnings=t.warnings,
        sources=t.sources,
    )


def _evaluated(terms: Terms, plan: RehearsalPlan, record: Record) -> Rehearsal:
    frame = to_frame(record)
    try:
        evaluation = evaluate(terms, frame, EvaluateOptions(contracts=plan.contracts))
    except TraceInvalid as exc:  # the trace is ours: a broken one is a bug, not bad input
        raise InternalError(f"the rehearsal's own trace is invalid: {exc}") from exc
    return Rehearsal(record, frame, evaluation)


def _fits_a_trace(plan: RehearsalPlan, settings: RehearsalSettings) -> None:
    """E705 when the planned notice leads and waits alone would be recorded longer than a
    trace holds (:func:`~contractlang.rehearse.state.recorded_limit`)."""
    n = len(settings.interrupts)
    planned = n * (plan.notice.us + plan.replacement_wait.us)
    limit, why = recorded_limit(settings.allocation.gpus, datetime.now(UTC))
    if planned > limit:
        drafts = ", ".join(f"`{c}`" for c in plan.contracts)
        raise too_long(
            limit,
            why,
            f"the rehearsal of {drafts} plans {n:,} interrupt{'s' if n != 1 else ''}, whose "
            f"notice leads and replacement waits would be recorded over {days(planned)}",
        )


def _preflight(terms: Terms, plan: RehearsalPlan, settings: RehearsalSettings) -> None:
    """Price one hour of the rehearsal's allocation under the plan's drafts."""
    alloc = f"{settings.run_id}-a1"
    events = (
        RecordedEvent(0, "scheduler", "requested", alloc),
        RecordedEvent(0, "scheduler", "started", alloc),
        RecordedEvent(MICROS_PER_HOUR, "scheduler", "released", alloc, 1),
    )
    end = AllocationRecord(
        alloc, 1, 0, 0, MICROS_PER_HOUR, "released", 1, None, None, 0, None, 1, 1
    )
    probe = Record(
        plan=plan,
        run_id=settings.run_id,
        started_at=datetime(2025, 1, 1, tzinfo=UTC),
        time_scale=settings.time_scale,
        notice_signal=settings.notice_signal.name,
        allocation=settings.allocation,
        events=events,
        allocations=(end,),
        checkpoints=(),
        interrupts=(),
        total_steps=None,
        result=None,
        warnings=(),
        real_us=0,
    )
    _evaluated(terms, plan, probe)


def _check_workdir(given: Path | None) -> None:
    """``--workdir``: a new or empty folder, in a folder that exists."""
    if given is None:
        return
    if given.exists() and (not given.is_dir() or any(given.iterdir())):
        raise setting_error(
            f"`--workdir {given}` must be a new or empty folder",
            help="each rehearsal starts from clean checkpoints; give a folder that does not "
            "exist yet",
        )
    if not given.parent.is_dir():
        raise setting_error(f"`--workdir {given}`: the folder `{given.parent}` does not exist")


def _workdir(given: Path | None) -> tuple[Path, bool]:
    """``--workdir`` (kept), made if need be, or a temporary folder removed at the end."""
    if given is None:
        try:
            return Path(tempfile.mkdtemp(prefix="contractlang-rehearse-")).resolve(), True
        except OSError as exc:
            raise cannot_write(
                Path(tempfile.gettempdir()),
                os_reason(exc),
                help="set TMPDIR to a folder that can be written, or give `--workdir DIR`",
            ) from None
    try:
        given.mkdir(exist_ok=True)
    except OSError as exc:
        raise cannot_write(given, os_reason(exc)) from None
    return given.resolve(), False
