"""The job's own timeline on one allocation, vectorised over runs: restore, train, save a
checkpoint every ``every`` steps and at the last step, finish.

An allocation that resumes from local step ``b`` (a valid checkpoint of the attempt; 0 for a
fresh start) first restores for ``restore_us`` (only when ``b > 0``), then runs steps of
``step_us`` each. At every multiple of ``every`` above ``b`` and at the last step it pauses to
save for ``save_us``; the save's checkpoint is written when the save ends. The attempt
finishes when the last step's save ends. Times are integer microseconds after the
allocation's start; every function takes and returns int64 arrays (one value per run).

With 10 steps of 1 s, a checkpoint every 4 steps and 2 s saves, from step 0: saves end at
6 s (step 4), 12 s (step 8) and 16 s (step 10, the finish)::

    >>> job = Job(steps=10, every=4, step_us=1, save_us=2, restore_us=5)
    >>> s = Schedule(job, np.array([0]))
    >>> s.finish.tolist(), [s.save_end(np.array([j])).tolist()[0] for j in (1, 2, 3)]
    ([16], [6, 12, 16])
    >>> s.steps_at(np.array([5])).tolist(), s.saves_by(np.array([12])).tolist()
    ([4], [2])
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

I64 = npt.NDArray[np.int64]
Bool = npt.NDArray[np.bool_]


@dataclass(frozen=True)
class Job:
    """The job's constants: steps of one attempt, the checkpoint interval in steps, and the
    durations of a step, a save and a restore in microseconds."""

    steps: int
    every: int
    step_us: int
    save_us: int
    restore_us: int

    @property
    def cycle_us(self) -> int:
        """``every`` steps and one save."""
        return self.every * self.step_us + self.save_us

    @property
    def saves_per_attempt(self) -> int:
        """Saves from step 0 to the end: every multiple of ``every``, and the last step."""
        return self.steps // self.every + (1 if self.steps % self.every else 0)


class Schedule:
    """The uninterrupted plan of one allocation per run, resuming at local steps ``b``.

    Saves are numbered 1…``k`` from the resume point; save ``j`` writes step
    ``save_step(j)`` at ``save_end(j)``; the last one is the finish."""

    def __init__(self, job: Job, b: I64) -> None:
        self.job = job
        self.b = b
        self.rho = np.where(b > 0, job.restore_us, 0).astype(np.int64)
        self.q0 = b // job.every
        self.k_regular = job.steps // job.every - self.q0  # multiples of `every` above b
        self.extra = job.steps % job.every != 0  # a last save at the last step, off the grid
        self.k = self.k_regular + int(self.extra)
        # save j (regular) ends at base + j × cycle
        self.base = self.rho + (job.every * self.q0 - b) * job.step_us
        self.finish = self.rho + (job.steps - b) * job.step_us + self.k * job.save_us

    def take(self, idx: I64) -> Schedule:
        """The schedules of the runs at positions ``idx``."""
        out = Schedule.__new__(Schedule)
        out.job, out.extra = self.job, self.extra
        for name in ("b", "rho", "q0", "k_regular", "k", "base", "finish"):
            setattr(out, name, getattr(self, name)[idx])
        return out

    def save_step(self, j: I64) -> I64:
        """The local step save ``j`` writes."""
        out: I64 = np.minimum(self.job.every * (self.q0 + j), self.job.steps)
        return out

    def save_end(self, j: I64) -> I64:
        """When save ``j`` ends (``1 ≤ j ≤ k``)."""
        regular = self.base + j * self.job.cycle_us
        return np.where(j > self.k_regular, self.finish, regular)

    def saves_by(self, t: I64) -> I64:
        """Saves that have ended by ``t`` (inclusive)."""
        regular = np.clip((t - self.base) // self.job.cycle_us, 0, self.k_regular)
        last = (t >= self.finish) & self.extra
        return regular + last.astype(np.int64)

    def in_save(self, t: I64, done: I64) -> Bool:
        """Whether a save is being written at ``t``, given ``done`` saves ended by then."""
        nxt = np.minimum(done + 1, self.k)
        return (done < self.k) & (t >= self.save_end(nxt) - self.job.save_us)

    def steps_at(self, t: I64) -> I64:
        """Local steps done by ``t``: training stops at each checkpoint step while it saves."""
        done = self.saves_by(t)
        nxt = self.save_step(np.minimum(done + 1, self.k))
        trained = np.maximum(t - self.rho - done * self.job.save_us, 0) // self.job.step_us
        steps = np.minimum(self.b + trained, nxt)
        steps = np.where(t < self.rho, self.b, steps)
        return np.where(done >= self.k, self.job.steps, steps)
