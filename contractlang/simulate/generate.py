"""Simulated traces: the workload's job on the simulated provider's capacity, for a batch of
runs at a time, vectorised across runs.

One pass of the loop is one allocation of every run still going — never one event: the
allocation starts (after the replacement wait, or when an availability trace has capacity),
the job restores from its last valid checkpoint and trains, saving checkpoints; the provider
reclaims it (after its notice) or the attempt finishes; a finished attempt is accepted or
rejected, and a rejected one starts over from step 0 under the same run, up to
``max_attempts``. With ``checkpoint_on_notice`` the job stops training at the notice and saves
at once; the save succeeds only when the notice lead is at least ``save_seconds``. Work after
the last valid checkpoint is replayed after the restore.

Steps are counted over the whole run: attempt ``a`` trains steps ``(a − 1) × total_steps + 1``
to ``a × total_steps``, so the facts measure lost progress across a restart (the last save of
an attempt, which writes the model, is always valid).

>>> from contractlang.simulate.workload import parse_workload
>>> w = parse_workload('''runs = 3
... seed = 1
... gpus = 8
... sku = "H100-80G"
... total_steps = 100
... step_seconds = 60
... checkpoint_every_steps = 10
... [reclaims]
... rate_per_hour = 0.5
... [replacement]
... distribution = "fixed"
... minutes = 5''', "w.toml").workload
>>> sim = Simulator(w, None, Promises(None, None))
>>> frame = sim.batch(0, 3)
>>> frame.filter(pl.col("event") == "accepted").height
3
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import timedelta

import numpy as np
import numpy.typing as npt
import polars as pl

from contractlang.importers.availability.read import Availability
from contractlang.lang.numbers import MICROS_PER_HOUR, counted
from contractlang.simulate.events import CODE, Columns, EventLog, epoch_us, trace_frame
from contractlang.simulate.job import Job, Schedule
from contractlang.simulate.provider import Promises, Provider
from contractlang.simulate.reclaims import NEVER, Poisson, Replay
from contractlang.simulate.streams import MAX_INDEX, Streams
from contractlang.simulate.workload import Workload
from contractlang.trace.limits import MAX_GPU_US, MAX_TS

I64 = npt.NDArray[np.int64]
Bool = npt.NDArray[np.bool_]

#: Runs simulated together; a batch's events are one frame (about 150 bytes per event).
BATCH_RUNS = 10_000


class OutOfRange(Exception):
    """A simulated run would leave what a trace may hold (its times, its GPU-time, its draws):
    a workload error, reported at the first of ``keys`` the workload writes (E605)."""

    def __init__(self, message: str, keys: tuple[tuple[str, ...], ...], help: str) -> None:
        super().__init__(message)
        self.message, self.keys, self.help = message, keys, help


@dataclass
class RunTally:
    """Counts over the runs simulated so far (a run that reaches ``max_allocations`` gives
    up, not accepted)."""

    runs: int = 0
    gave_up: list[int] = field(default_factory=list)  # run numbers, from 1


class Simulator:
    """Traces of one workload under one set of promises."""

    def __init__(
        self, workload: Workload, availability: Availability | None, promises: Promises
    ) -> None:
        w = workload
        self.w = w
        self.streams = Streams(w.seed)
        self.job = Job(w.total_steps, w.checkpoint_every_steps, w.step_us, w.save_us, w.restore_us)
        self.provider = Provider(w, promises, self.streams)
        rate = w.reclaims.rate_per_hour
        self.poisson = Poisson(float(rate), self.streams) if rate is not None else None
        self.replay = Replay(availability, w.reclaims.nodes, self.streams) if availability else None
        self.columns = Columns(
            gpus=w.gpus,
            sku=w.sku,
            capacity=w.capacity,
            price=w.price,
            start_us=epoch_us(w.start),
            run_width=max(6, len(str(w.runs))),
            alloc_width=max(4, len(str(w.max_allocations))),
        )
        self.tally = RunTally()
        self.promises = promises
        # how long after the start a run may go on (every event of it before MAX_TS), and how
        # long it may hold its GPUs (its GPU-time at most MAX_GPU_US)
        self.time_left = epoch_us(MAX_TS) - 1 - self.columns.start_us
        self.held_left = MAX_GPU_US // w.gpus

    def batches(self, size: int = BATCH_RUNS) -> Iterator[pl.DataFrame]:
        """Every run's events, one frame per ``size`` runs, in run order."""
        for first in range(0, self.w.runs, size):
            yield self.batch(first, min(first + size, self.w.runs))

    def batch(self, first: int, end: int) -> pl.DataFrame:
        """The events of runs ``first`` … ``end − 1`` (numbered from 0)."""
        log = EventLog()
        self._simulate(np.arange(first, end, dtype=np.int64), log)
        self.tally.runs += end - first
        return trace_frame(log, first, self.columns)

    # ------------------------------------------------------------------ the loop

    def _simulate(self, runs: I64, log: EventLog) -> None:
        w, job = self.w, self.job
        n = len(runs)
        t_req = np.zeros(n, dtype=np.int64)  # when the next allocation is asked for
        attempt = np.ones(n, dtype=np.int64)
        b = np.zeros(n, dtype=np.int64)  # local step the next allocation resumes from
        k = np.zeros(n, dtype=np.int64)  # allocations so far
        saves = np.zeros(n, dtype=np.int64)  # saves so far (the checkpoint stream's index)
        held = np.zeros(n, dtype=np.int64)  # time on capacity so far
        after_reclaim = np.zeros(n, dtype=np.bool_)
        active = np.ones(n, dtype=np.bool_)
        offset = self.replay.offsets(runs) if self.replay else np.zeros(n, dtype=np.int64)
        while active.any():
            a = np.flatnonzero(active)
            run, kk = runs[a], k[a]
            start = self._start(run, kk, t_req[a], after_reclaim[a], offset[a])
            sched = Schedule(job, b[a])
            end_at, notice_at, has_notice = self._reclaim(run, kk, start, offset[a], sched)
            res = _Allocation(job, sched, end_at, notice_at, has_notice, w.checkpoint_on_notice)
            if int(saves[a].max()) + int(res.saves.max()) + 1 > MAX_INDEX:
                raise self._too_many_saves(run[int(np.argmax(saves[a] + res.saves))])
            step0 = (attempt[a] - 1) * job.steps
            # requested, started, restored
            log.add("requested", a, kk, t_req[a])
            log.add("started", a, kk, start)
            restored = (b[a] > 0) & (sched.rho <= res.end)
            log.add(
                "restored",
                a[restored],
                kk[restored],
                (start + sched.rho)[restored],
                step=(step0 + b[a])[restored],
            )
            new_b = self._saves(log, a, run, kk, start, step0, saves[a], sched, res)
            # notice, the end, and the verdict on a finished attempt
            log.add("notice", a[has_notice], kk[has_notice], (start + notice_at)[has_notice])
            codes = np.where(res.finished, CODE["released"], CODE["reclaimed"])
            log.add(codes, a, kk, start + res.end, step=step0 + res.end_step)
            cut = res.partial
            log.add(
                "checkpoint",
                a[cut],
                kk[cut],
                (start + res.end)[cut],
                step=(step0 + res.stop_step)[cut],
                valid=np.zeros(int(cut.sum()), np.int64),
            )
            fin = res.finished
            accept = self.streams.uniform("accept", run, attempt[a]) <= float(w.accept_chance)
            ok, rejected = fin & accept, fin & ~accept
            for what, sel in (("accepted", ok), ("rejected", rejected)):
                log.add(what, a[sel], kk[sel], (start + res.end)[sel])
            # the next allocation
            saves[a] += res.saves + res.on_notice
            t_req[a] = start + res.end
            held[a] += res.end
            self._check_range(run, t_req[a], held[a], kk + 1)
            k[a] = kk + 1
            b[a] = np.where(fin, 0, new_b)
            after_reclaim[a] = ~fin
            last_try = attempt[a] >= w.max_attempts
            attempt[a] += rejected & ~last_try
            gave_up = ~fin & (k[a] >= w.max_allocations)
            self.tally.gave_up.extend((run[gave_up] + 1).tolist())
            active[a] = ~(ok | (rejected & last_try) | gave_up)

    def _check_range(self, run: I64, end: I64, held: I64, allocations: I64) -> None:
        """Every event so far lies before :data:`MAX_TS`, and no run holds more GPU-time than
        a trace may (checked after each allocation, so nothing out of range is ever written,
        and no time can grow far enough to overflow)."""
        under = self.promises.describe()

        def after(i: int) -> str:
            n = int(allocations[i])
            return f"after {counted(n, 'allocation')}"

        late = np.flatnonzero(end > self.time_left)
        if len(late):
            i = int(late[0])
            raise OutOfRange(
                f"run {int(run[i]) + 1:,} would go on past {MAX_TS - timedelta(days=1):%Y-%m-%d}, "
                f"the last day a trace may hold, {after(i)} under {under}",
                (("start",), ("max_allocations",)),
                "start earlier, or lower `max_allocations` or the replacement waits",
            )
        big = np.flatnonzero(held > self.held_left)
        if len(big):
            i = int(big[0])
            raise OutOfRange(
                f"run {int(run[i]) + 1:,} would hold more than "
                f"{MAX_GPU_US // MICROS_PER_HOUR:,} GPU-hours, the most one run may hold, "
                f"{after(i)} of {self.w.gpus:,} GPUs under {under}",
                (("gpus",), ("max_allocations",)),
                "lower `gpus` or `max_allocations`",
            )

    def _too_many_saves(self, run: int) -> OutOfRange:
        return OutOfRange(
            f"run {run + 1:,} would save more than {MAX_INDEX:,} checkpoints, the most that can "
            f"be simulated, under {self.promises.describe()}",
            (("checkpoint_every_steps",), ("max_allocations",)),
            "checkpoint less often, or lower `max_allocations`",
        )

    def _start(self, run: I64, kk: I64, t_req: I64, after: Bool, offset: I64) -> I64:
        if self.replay is not None:
            return self.replay.next_up(offset + t_req) - offset
        wait = np.zeros(run.shape, dtype=np.int64)
        if after.any():
            wait[after] = self.provider.wait(run[after], kk[after])
        return t_req + wait

    def _reclaim(
        self, run: I64, kk: I64, start: I64, offset: I64, sched: Schedule
    ) -> tuple[I64, I64, Bool]:
        """When the provider ends each allocation (``NEVER``: not before the job finishes),
        when its notice comes, and whether one comes (all relative to the start)."""
        lead = self.provider.lead(run, kk)
        if self.replay is not None:
            down = self.replay.next_down(offset + start)
            end = np.where(down >= NEVER, NEVER, down - offset - start)
            notice = np.maximum(end - lead, 0)
            has = (lead > 0) & (end < NEVER) & (notice < sched.finish)
            return end, notice, has
        assert self.poisson is not None
        decision = self.poisson.decision(run, kk)
        decided = decision < sched.finish
        end = np.where(decided, decision + lead, NEVER)
        return end, decision, decided & (lead > 0)

    def _saves(
        self,
        log: EventLog,
        a: I64,
        run: I64,
        kk: I64,
        start: I64,
        step0: I64,
        before: I64,
        sched: Schedule,
        res: _Allocation,
    ) -> I64:
        """Log the allocation's checkpoints; return the local step of its last valid one (or
        the step it resumed from, when none is valid)."""
        p_invalid = float(self.w.invalid_checkpoint_chance)
        pos = np.repeat(np.arange(len(a), dtype=np.int64), res.saves)
        j = (
            np.arange(len(pos), dtype=np.int64)
            - np.repeat(np.cumsum(res.saves) - res.saves, res.saves)
            + 1
        )
        sub = sched.take(pos)
        last = j == sub.k  # the attempt's last save writes the model: always valid
        draw = self.streams.uniform("checkpoint", run[pos], before[pos] + j - 1)
        valid = last | (draw > p_invalid)
        step = sub.save_step(j)
        log.add(
            "checkpoint",
            a[pos],
            kk[pos],
            start[pos] + sub.save_end(j),
            step=step0[pos] + step,
            valid=valid.astype(np.int64),
        )
        new_b = sched.b.copy()
        np.maximum.at(new_b, pos[valid], step[valid])
        # the save on notice
        em = np.flatnonzero(res.on_notice)
        if len(em):
            em_draw = self.streams.uniform("checkpoint", run[em], before[em] + res.saves[em])
            em_valid = em_draw > p_invalid
            log.add(
                "checkpoint",
                a[em],
                kk[em],
                start[em] + res.on_notice_at[em],
                step=step0[em] + res.stop_step[em],
                valid=em_valid.astype(np.int64),
            )
            good = em[em_valid]
            new_b[good] = np.maximum(new_b[good], res.stop_step[good])
        return new_b


class _Allocation:
    """What happens on one allocation of each run, given when the provider ends it and when
    its notice comes: the saves that end, whether the attempt finishes, the end and the step
    there; the save on notice that succeeds (``on_notice``, at ``on_notice_at``); and a save
    cut short by the reclaim (``partial``: an invalid checkpoint at the end)."""

    def __init__(
        self,
        job: Job,
        sched: Schedule,
        end_at: I64,
        notice_at: I64,
        has_notice: Bool,
        save_on_notice: bool,
    ) -> None:
        # without stopping at the notice: train until the reclaim, or finish first
        finished = sched.finish <= end_at
        end = np.where(finished, sched.finish, end_at)
        saves = np.where(finished, sched.k, sched.saves_by(end))
        end_step = np.where(finished, job.steps, sched.steps_at(end))
        partial = ~finished & sched.in_save(end, saves)
        stop_step = end_step.copy()
        self.on_notice = np.zeros(end.shape, dtype=np.bool_)
        self.on_notice_at = end.copy()
        stop = has_notice & save_on_notice
        if stop.any():
            n = notice_at
            done = sched.saves_by(n)
            writing = sched.in_save(n, done)
            nxt = np.minimum(done + 1, sched.k)
            completes = writing & (sched.save_end(nxt) <= end_at)
            fin = completes & (nxt == sched.k)
            cur = np.where(writing, sched.save_step(nxt), sched.steps_at(n))
            last_saved = np.where(done > 0, sched.save_step(np.maximum(done, 1)), sched.b)
            attempt = ~writing & (cur > last_saved)  # a save of the step reached at the notice
            ok = attempt & (n + job.save_us <= end_at)
            finished = np.where(stop, fin, finished)
            end = np.where(stop, np.where(fin, sched.finish, end_at), end)
            saves = np.where(stop, done + completes, saves)
            end_step = np.where(stop, np.where(fin, job.steps, cur), end_step)
            cut = (writing & ~completes) | (attempt & ~ok)
            partial = np.where(stop, cut, partial)
            stop_step = np.where(stop, cur, stop_step)
            self.on_notice = stop & ok
            self.on_notice_at = np.where(ok, n + job.save_us, end_at)
        self.finished = finished
        self.end = end
        self.saves = saves.astype(np.int64)
        self.end_step = end_step
        self.partial = partial
        self.stop_step = stop_step
