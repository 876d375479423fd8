"""One allocation of a rehearsal: start the job, read what it says, deliver the notice when
a planned interrupt comes, reclaim at the deadline (or record how the job ended itself).

The allocation ends in one of three ways:

- **reclaimed** — a planned interrupt came: the notice signal goes to the job's process group
  and ``SIGKILL`` follows after the notice lead (at once when the lead is 0). An interrupt
  comes at the first report of the job's progress at or past its step: a step done, or a
  restore from a checkpoint past it (the job ran past it in an earlier notice lead), and only
  while the job's first process runs. The end is
  recorded at the notice + the lead exactly, even if the job exited before the deadline without
  having finished: after a notice the capacity is the provider's to take back, and a job that
  stops early (to save, say, or killed by the notice) does not give it back sooner.
- **released** — the job's first process exited with status 0 and no notice was pending, or
  it did so during a notice lead having finished its work (it reported its verdict, or its
  last step): the run is over, so its capacity is given back at the exit, before the reclaim.
- **failed** — it exited with another status (or was killed by a signal rehearse did not
  send) with no notice pending.

Whatever is left of the group is killed when the allocation ends, or when the job's first
process exits during a notice lead. Lines read after the end (written before it, read late)
are recorded at the end; lines read after an exit during a notice, at the exit.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass
from pathlib import Path

from contractlang.diagnostics import NO_SPAN, error
from contractlang.errors import ContractlangError
from contractlang.rehearse import checkpoints
from contractlang.rehearse.clock import Clock
from contractlang.rehearse.process import Closed, Exited, Item, Job, Line, Reaper
from contractlang.rehearse.protocol import (
    Checkpoint,
    Malformed,
    Message,
    Restored,
    Step,
    Total,
    Verdict,
    parse_event,
    parse_line,
)
from contractlang.rehearse.record import AllocationRecord, EndReason, RecordedEvent, exit_words
from contractlang.rehearse.state import FILE, PendingCheckpoint, RunState, days, too_long

POLL = 0.2  # seconds between looks at the clock while nothing is read


@dataclass
class _Ending:
    reason: EndReason
    at_us: int


class AllocationRun:
    """The life of one allocation (see the module's docstring)."""

    def __init__(
        self,
        state: RunState,
        clock: Clock,
        alloc_id: str,
        attempt: int,
        workdir: Path,
        reaper: Reaper | None = None,
    ) -> None:
        self.state, self.clock = state, clock
        self.alloc_id, self.attempt = alloc_id, attempt
        self.workdir = workdir
        self.reaper = reaper
        self.stem = file_stem(state.settings.run_id, attempt)
        self.lead_us = 0
        self.notice_us: int | None = None
        self.deadline_ns: int | None = None
        self.interrupt: int | None = None
        self.ending: _Ending | None = None
        self.last_step: int | None = None
        self.first_step: int | None = None
        self.restored: int | None = None
        self.steps = 0
        self.verdict = False  # the job reported `accepted` or `rejected` in this allocation
        self.exit: Exited | None = None  # the job's first process exited during the notice

    def run(self, requested_us: int, start_us: int, lead_us: int) -> AllocationRecord:
        s = self.state
        self.lead_us = lead_us
        s.add(RecordedEvent(requested_us, "scheduler", "requested", self.alloc_id))
        s.add(RecordedEvent(start_us, "scheduler", "started", self.alloc_id))
        env = {
            **os.environ,
            "CONTRACTLANG_RUN_ID": s.settings.run_id,
            "CONTRACTLANG_ALLOC_ID": self.alloc_id,
            "CONTRACTLANG_CHECKPOINT_DIR": str(s.checkpoint_dir),
            "CONTRACTLANG_EVENTS": str(self.workdir / f"{self.stem}.events.ndjson"),
            "PYTHONUNBUFFERED": "1",
        }
        self.clock.resume(time.monotonic_ns(), start_us)
        job = Job.start(
            s.settings.command,
            env,
            self.workdir / self.stem,
            Path(env["CONTRACTLANG_EVENTS"]),
            self.reaper,
        )
        try:
            self._loop(job)
        except BaseException:  # an error or Ctrl-C: no process outlives its allocation
            job.abandon()
            raise
        job.kill()
        rest, alive, held = job.close()
        for item in rest:
            self._handle(item)
        if self.ending is None:  # the job exited during the notice: its output is all read
            self.ending = self._after_exit_in_notice()
        ending = self.ending
        assert ending is not None
        self._verify()
        if alive or held:
            what = (
                f"{len(alive)} process(es) of its group would not die"
                if alive
                else "a process that left its process group still holds its output"
            )
            s.warn(
                "W705",
                f"the job outlived allocation `{self.alloc_id}`: {what}",
                help="rehearse reclaims a job's process group; a process that calls setsid() "
                "escapes it",
            )
        code = job.exited.returncode if job.exited else None
        if ending.reason == "failed":
            kept = s.settings.workdir is not None
            where = f"`{self.stem}.err` in the work directory" if kept else None
            s.warn(
                "W704", self._failure(code), help=f"its standard error: {where}" if kept else None
            )
        end_step = self.last_step if self.last_step is not None else self.restored
        s.add(RecordedEvent(ending.at_us, "scheduler", ending.reason, self.alloc_id, end_step))
        return AllocationRecord(
            self.alloc_id,
            self.attempt,
            requested_us,
            start_us,
            ending.at_us,
            ending.reason,
            end_step,
            self.notice_us,
            self.interrupt,
            code,
            self.restored,
            self.first_step,
            self.steps,
        )

    # ------------------------------------------------------------------ the loop

    def _loop(self, job: Job) -> None:
        while self.ending is None and self.exit is None:
            timeout = POLL
            if self.deadline_ns is not None:
                timeout = max(self.deadline_ns - time.monotonic_ns(), 0) / 1e9
            item = job.next(min(timeout, POLL))
            if self.deadline_ns is not None and (
                (item is None and time.monotonic_ns() >= self.deadline_ns)
                or (isinstance(item, Line | Exited) and item.real_ns >= self.deadline_ns)
            ):
                self._reclaim(job, self._notice_end())
            if item is not None:
                self._handle(item, job)
            self._check_limit()

    def _check_limit(self) -> None:
        """E705 once the rehearsal's recorded time passes what its trace can hold (a notice
        lead counts to its end at most: the reclaim is recorded there)."""
        s = self.state
        now = self.clock.at(time.monotonic_ns())
        if self.ending is not None:  # what is recorded ends there
            now = self.ending.at_us
        elif self.notice_us is not None:
            now = min(now, self._notice_end())
        if now > s.limit_us:
            stopped = f"the rehearsal was stopped at {days(s.limit_us)} of recorded time"
            raise too_long(s.limit_us, s.limit_why, stopped)

    def _notice_end(self) -> int:
        assert self.notice_us is not None
        return self.notice_us + self.lead_us

    def _after_exit_in_notice(self) -> _Ending:
        """The job's first process exited during the notice lead, and everything it wrote has
        been read: released at the exit if it finished its work with status 0, else reclaimed
        at the deadline (which the scheduler waits for, as the provider would)."""
        assert self.exit is not None
        assert self.deadline_ns is not None
        total, last = self.state.total, self.last_step
        at_total = total is not None and last is not None and last >= total
        if self.exit.returncode == 0 and (self.verdict or at_total):
            return _Ending("released", self.clock.at(self.exit.real_ns))
        time.sleep(max(self.deadline_ns - time.monotonic_ns(), 0) / 1e9)
        return _Ending("reclaimed", self._notice_end())

    def _reclaim(self, job: Job, at_us: int) -> None:
        job.kill()
        self.ending = _Ending("reclaimed", at_us)

    def _handle(self, item: Item, job: Job | None = None) -> None:
        if isinstance(item, Closed):
            return
        if isinstance(item, Exited):
            if self.ending is None and self.deadline_ns is None:
                reason: EndReason = "released" if item.returncode == 0 else "failed"
                self.ending = _Ending(reason, self.clock.at(item.real_ns))
            elif self.ending is None and self.exit is None:
                self.exit = item  # decided once its output is read (_after_exit_in_notice)
            return
        message = parse_line(item.text) if item.source == "stdout" else parse_event(item.text)
        if message is None:
            return
        at = self.clock.at(item.real_ns)
        if self.ending is not None:
            at = min(at, self.ending.at_us)
        elif self.exit is not None:
            at = min(at, self.clock.at(self.exit.real_ns))
        if isinstance(message, Malformed):
            self._malformed(item, message.text, message.reason)
            return
        self._message(message, at, job if self.ending is None else None, item)

    def _message(self, m: Message, at: int, job: Job | None, item: Line) -> None:
        s, a = self.state, self.alloc_id
        match m:
            case Total(steps=n):
                if s.total is None:
                    s.total = n
                elif n != s.total:
                    self._malformed(item, item.text, f"the total was already {s.total} steps")
            case Step(step=n):
                if n == self.last_step:
                    return
                self.last_step, self.steps = n, self.steps + 1
                self.first_step = n if self.first_step is None else self.first_step
                s.add(RecordedEvent(at, "job", "progress", a, n))
                if job is not None and self.deadline_ns is None and s.due(n):
                    self._notice(job, item.real_ns, at)
            case Checkpoint(step=n, path=text, sha256=sha):
                self._checkpoint(n, text, sha, at, item)
            case Restored(step=n):
                self.restored = n
                s.add(RecordedEvent(at, "job", "restored", a, n))
                self._check_restore(n)
                if job is not None and self.deadline_ns is None and s.due(n, restored=True):
                    self._notice(job, item.real_ns, at)
            case Verdict(accepted=ok):
                s.result = "accepted" if ok else "rejected"
                self.verdict = True
                s.add(RecordedEvent(at, "job", s.result, a))

    def _notice(self, job: Job, real_ns: int, at: int) -> None:
        """Interrupt the job: the notice now, the reclaim at the end of the lead. A job whose
        first process has already exited (its exit not yet read) is not noticed: the
        interrupt stays planned, and its allocation ends as the exit says."""
        s = self.state
        if not job.running():
            return
        s.fired.append(self.alloc_id)
        self.interrupt = len(s.fired)
        if self.lead_us == 0:  # no notice promised: reclaimed without one
            self._reclaim(job, at)
            return
        reclaim = self.clock.at(real_ns) + self.lead_us
        if reclaim > s.limit_us:  # do not start a notice whose reclaim a trace cannot hold
            what = f"the reclaim of `{self.alloc_id}` would be recorded at {days(reclaim)}"
            raise too_long(s.limit_us, s.limit_why, what)
        job.signal(s.settings.notice_signal)
        self.clock.scaled_from(real_ns)
        self.notice_us = self.clock.at(real_ns)
        self.deadline_ns = self.clock.real_deadline(self.lead_us)
        s.add(RecordedEvent(self.notice_us, "scheduler", "notice", self.alloc_id))

    # ------------------------------------------------------------------ checkpoints

    def _checkpoint(self, step: int, text: str, sha: str | None, at: int, item: Line) -> None:
        s = self.state
        path = checkpoints.resolve(text, Path.cwd())
        if not checkpoints.inside(path, s.checkpoint_dir):
            raise ContractlangError(
                [
                    error(
                        "E703",
                        f"{self._where(item)}: checkpoint `{text}` is outside the checkpoint "
                        "directory",
                        NO_SPAN,
                        file=FILE,
                        help="save checkpoints under `$CONTRACTLANG_CHECKPOINT_DIR`: each "
                        "rehearsal gives the job a fresh one, so drafts do not share a state",
                    )
                ]
            )
        c = PendingCheckpoint(
            self.alloc_id, at, step, path, checkpoints.shown(path, s.checkpoint_dir), sha
        )
        if checkpoints.check(path, sha, s.checkpoint_dir).valid:
            c.valid = True  # saved, then reported: it holds now
        s.checkpoints.append(c)

    def _verify(self) -> None:
        """Checkpoints of this allocation not yet known valid, checked now that none of its
        processes is left to write them."""
        s = self.state
        for c in s.checkpoints:
            if c.alloc_id == self.alloc_id and c.valid is None:
                result = checkpoints.check(c.path, c.sha256, s.checkpoint_dir)
                c.valid, c.reason = result.valid, result.reason
        for c in s.checkpoints:
            if c.alloc_id == self.alloc_id:
                s.add(RecordedEvent(c.at_us, "job", "checkpoint", self.alloc_id, c.step, c.valid))

    def _check_restore(self, step: int) -> None:
        last = self.state.last_valid()
        expected = last.step if last else None
        if step != expected:
            was = f"step {expected}" if expected is not None else "none"
            self.state.warn(
                "W703",
                f"allocation `{self.alloc_id}` restored step {step}, but the last valid "
                f"checkpoint is {was}: the replay rehearse measures is not the one the job ran",
                help="a job should restore its newest complete checkpoint",
            )

    # ------------------------------------------------------------------ words

    def _where(self, item: Line) -> str:
        what = "its output" if item.source == "stdout" else "its events file"
        return f"allocation `{self.alloc_id}`, line {item.number} of {what}"

    def _malformed(self, item: Line, text: str, reason: str) -> None:
        shown = text.strip()
        shown = shown if len(shown) <= 80 else shown[:77] + "…"
        self.state.warn("W701", f"{self._where(item)}: `{shown}` was ignored: {reason}")

    def _failure(self, code: int | None) -> str:
        how = exit_words(code) if code is not None else "ended"
        tail = _last_line(self.workdir / f"{self.stem}.err")
        said = f" (its last words: `{tail}`)" if tail else ""
        return f"the job {how} in allocation `{self.alloc_id}`{said}; the rehearsal stops there"


def safe_name(text: str) -> str:
    """``text`` as (the start of) a file name: what a name should not hold becomes ``_``,
    and it is cut at 100 characters, so no name can reach outside its folder or be too long.

    >>> safe_name("../etc/x y"), len(safe_name("n" * 300))
    ('.._etc_x_y', 100)
    """
    return re.sub(r"[^A-Za-z0-9._-]", "_", text)[:100]


def file_stem(run_id: str, attempt: int) -> str:
    """The name of an allocation's files in the work folder (``.out``, ``.err``,
    ``.events.ndjson``): its ID, made safe (:func:`safe_name`).

    >>> file_stem("rehearsal", 2), file_stem("../etc/x y", 1)
    ('rehearsal-a2', '.._etc_x_y-a1')
    """
    return f"{safe_name(run_id)}-a{attempt}"


def _last_line(path: Path) -> str | None:
    try:
        lines = [x.strip() for x in path.read_text(errors="replace").splitlines() if x.strip()]
    except OSError:
        return None
    if not lines:
        return None
    return lines[-1] if len(lines[-1]) <= 100 else lines[-1][:97] + "…"
