"""Realistic synthetic traces, for examples, tests and benchmarks.

Each run trains on one SKU with 1, 2 or 4 nodes at once (one allocation per node). Its life is a
row of *segments*: the nodes start (each after its own or the run's ``requested``), the job
restores from its last valid checkpoint, saves checkpoints (a few invalid) and reports progress,
and the segment ends when the provider reclaims a spot node (with or without notice, sometimes
while a checkpoint is being written, sometimes after an emergency checkpoint on notice), a node
fails, the customer moves capacity, or the run finishes; the other nodes are then released.
After a replacement wait the next segment starts. Most runs are accepted; some are rejected and
some are abandoned (never accepted). Invoice ``charge`` lines follow every allocation and some
reclaims get a ``credit`` line. Run starts spread over 75 days, so month boundaries fall inside.

Everything is drawn with vectorised numpy from ``Generator(PCG64(seed))``: the same seed gives
the same frame, and the same bytes when written with :func:`write_trace`.

>>> df = generate_trace(3, seed=1)
>>> df.columns[:5]
['run_id', 'alloc_id', 'ts', 'source', 'event']
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import IO, cast

import numpy as np
import numpy.typing as npt
import polars as pl

from contractlang.lang.frames import TIMESTAMP
from contractlang.lang.numbers import (
    MICROS_PER_DAY,
    MICROS_PER_HOUR,
    MICROS_PER_MINUTE,
    MICROS_PER_SECOND,
    micros,
)
from contractlang.trace.schema import EVENTS
from contractlang.trace.sink import Output, Stopped, sink_batches, write_in_thread

I64 = npt.NDArray[np.int64]
Bool = npt.NDArray[np.bool_]

#: Microseconds in each unit, in short names for the arithmetic below.
US = MICROS_PER_SECOND
MINUTE = MICROS_PER_MINUTE
HOUR = MICROS_PER_HOUR
DAY = MICROS_PER_DAY
DEFAULT_START = datetime(2025, 1, 1, tzinfo=UTC)
SPAN = 75 * DAY  # run starts spread over this span

#: The longest a run's life can be, so that :func:`latest_time` is a true bound: at most this
#: many segments (1 + Poisson(5) passes 30 once in 3.5 × 10^13 runs), each running at most a
#: week, and no wait (before the first segment, between two) longer than three days (an
#: exponential wait of mean 2 hours passes it with probability e^-36, once in 4 × 10^15
#: draws; of mean 20 or 10 minutes, never): limits that change no trace a seed gave before.
#: An allocation not its segment's first node is released at most :data:`MAX_TEARDOWN`
#: after it, and its invoice lines come at most :data:`MAX_INVOICE_DELAY` after its end (a
#: credit 1 µs after the charge).
MAX_SEGMENTS = 30
MAX_RUNTIME = 7 * DAY
MAX_WAIT = 3 * DAY
MAX_TEARDOWN = 90 * US
MAX_INVOICE_DELAY = 36 * HOUR
#: The latest an event of one batch can fall after the batch's start, in microseconds
#: (376 days 12:01:31.000001): a run starts within :data:`SPAN`; its first segment at most
#: :data:`MAX_WAIT` and 1 s later; then its segments and the waits between them; a node's
#: teardown; the invoice line, and its credit 1 µs after. A run's verdict comes at most 6
#: hours after its end, before its last invoice line can.
BATCH_REACH = (
    SPAN
    + MAX_WAIT
    + US
    + MAX_SEGMENTS * MAX_RUNTIME
    + (MAX_SEGMENTS - 1) * MAX_WAIT
    + MAX_TEARDOWN
    + MAX_INVOICE_DELAY
    + 1
)

SKUS = ("H100-80G", "A100-80G")
ZONES = ("us-east-1a", "us-east-1b", "us-west-2a", "europe-west4-a")
CAPACITY = ("spot", "on_demand")
#: Spot prices drawn per segment, in cents per GPU-hour (inclusive bounds), and on-demand list
#: prices used on invoice lines, per SKU.
SPOT_CENTS = ((210, 340), (110, 190))
ON_DEMAND_CENTS = (425, 300)

_EV = {name: i for i, name in enumerate(EVENTS)}
REL, RECL, FAIL = _EV["released"], _EV["reclaimed"], _EV["failed"]

#: Columns of a generated trace, in order, with their dtypes.
GENERATED_SCHEMA: dict[str, pl.DataType] = {
    "run_id": pl.String(),
    "alloc_id": pl.String(),
    "ts": TIMESTAMP,
    "source": pl.String(),
    "event": pl.String(),
    "gpus": pl.Int64(),
    "sku": pl.String(),
    "zone": pl.String(),
    "capacity": pl.String(),
    "price": pl.Decimal(10, 2),
    "step": pl.Int64(),
    "valid": pl.Boolean(),
    "quantity": pl.Decimal(18, 6),
    "amount": pl.Decimal(18, 2),
}


def generate_trace(runs: int, seed: int, *, start: datetime | None = None) -> pl.DataFrame:
    """A realistic trace of ``runs`` runs (about 10 allocations and 90 events per run), in time
    order, with the columns of :data:`GENERATED_SCHEMA`.

    ``start`` (timezone-aware; default 2025-01-01 UTC) is the earliest run request.

    >>> generate_trace(0, seed=0).height
    0
    """
    if runs < 0:
        raise ValueError("`runs` must not be negative")
    t0 = start or DEFAULT_START
    if t0.tzinfo is None:
        raise ValueError("`start` needs a time zone")
    t0_us = _epoch_us(t0)
    rng = np.random.Generator(np.random.PCG64(seed))
    g = _Gen(rng, runs, t0_us)
    return g.frame()


#: :func:`generate_batches` makes more runs than this in batches of this many.
BATCH_RUNS = 100_000
#: Each batch starts this many days after the one before.
BATCH_DAYS = 90


def generate_batches(
    runs: int, seed: int, *, start: datetime | None = None
) -> Iterator[pl.DataFrame]:
    """The trace of :func:`generate_trace` a batch at a time, so that no more than
    :data:`BATCH_RUNS` runs are ever held: up to that many runs, one batch, the same frame as
    ``generate_trace(runs, seed)``; more runs come in batches, batch ``k`` (from 0) drawn with
    seed ``seed + k``, starting :data:`BATCH_DAYS` days after batch ``k − 1`` (the trace stays
    nearly in time order, as logs are), its ids prefixed ``bKK-`` (``b00-``, ``b01-``, …).

    >>> [f.height for f in generate_batches(3, seed=1)] == [generate_trace(3, seed=1).height]
    True
    """
    if runs <= BATCH_RUNS:
        yield generate_trace(runs, seed, start=start)
        return
    t0 = start or DEFAULT_START
    for k, first in enumerate(range(0, runs, BATCH_RUNS)):
        batch = generate_trace(
            min(BATCH_RUNS, runs - first), seed + k, start=t0 + timedelta(days=BATCH_DAYS * k)
        )
        prefix = pl.lit(f"b{k:02d}-")
        yield batch.with_columns(
            pl.concat_str(prefix, "run_id").alias("run_id"),
            pl.concat_str(prefix, "alloc_id").alias("alloc_id"),
        )


def latest_time(runs: int, start: datetime | None = None) -> datetime | None:
    """The latest time an event of :func:`generate_batches` of ``runs`` runs from ``start``
    can have — an upper bound from the generator's parameters: :data:`BATCH_REACH` after the
    start of the last batch — or None past the year 9999.

    >>> latest_time(200_000, datetime(2199, 6, 1, tzinfo=UTC)).isoformat()
    '2200-09-10T12:01:31.000001+00:00'
    """
    t0 = start or DEFAULT_START
    batches = max(1, -(-runs // BATCH_RUNS))
    reach = (batches - 1) * BATCH_DAYS * DAY + BATCH_REACH
    last = datetime.max.replace(tzinfo=UTC) - t0.astimezone(UTC)
    if reach > last // timedelta(microseconds=1):
        return None
    return t0 + timedelta(microseconds=reach)


def write_generated(
    batches: Iterable[pl.DataFrame], path: str | Path, *, kind: str | None = None
) -> tuple[int, int]:
    """Write the generator's batches (each with the columns of :data:`GENERATED_SCHEMA`) as
    one trace, as :func:`write_trace` does: Parquet streamed batch by batch into the one
    file, CSV and NDJSON appended; the events and the allocations written. The batches are
    made and written in a thread of their own, which a signal stops at once
    (:func:`~contractlang.trace.sink.write_in_thread`)."""
    p = Path(path)
    ext = kind or p.suffix.lower()
    if ext not in (".parquet", ".pq", ".csv", ".ndjson", ".jsonl"):
        raise ValueError(f"unknown trace extension `{ext}` (use .parquet, .csv or .ndjson)")
    allocations = 0

    def counted() -> Iterator[pl.DataFrame]:
        nonlocal allocations
        for batch in batches:
            allocations += int((batch.get_column("event") == "started").sum())
            yield batch

    if ext in (".parquet", ".pq"):
        events = sink_batches(p, GENERATED_SCHEMA, counted)
    else:
        events = write_in_thread(p, lambda out: _append(counted(), out, ext))
    return events, allocations


def _append(batches: Iterable[pl.DataFrame], out: Output, ext: str) -> int:
    """Write the batches one after another as CSV (one header) or NDJSON; the rows written.
    A stopped write (:func:`~contractlang.trace.sink.write_in_thread`) asks for no more."""
    events = 0
    for k, batch in enumerate(batches):
        if out.stopped:
            raise Stopped("the write was stopped")
        events += batch.height
        target = cast("IO[bytes]", out)  # polars asks only write, flush and tell of it
        try:
            if ext == ".csv":
                batch.write_csv(target, include_header=k == 0)
            else:
                batch.write_ndjson(target)
        except Exception:
            out.raise_error()
            raise
    return events


def write_trace(df: pl.DataFrame, path: str | Path, *, kind: str | None = None) -> None:
    """Write a trace by extension (or ``kind``, an extension, when the path has another):
    ``.parquet`` (zstd), ``.csv`` or ``.ndjson``/``.jsonl``.

    CSV and NDJSON write money as exact decimal text and times as ISO 8601 with an offset."""
    p = Path(path)
    ext = kind or p.suffix.lower()
    if ext in (".parquet", ".pq"):
        df.write_parquet(p, compression="zstd", statistics=True)
    elif ext == ".csv":
        df.write_csv(p)
    elif ext in (".ndjson", ".jsonl"):
        df.write_ndjson(p)
    else:
        raise ValueError(f"unknown trace extension `{ext}` (use .parquet, .csv or .ndjson)")


# --------------------------------------------------------------------------- implementation


def _epoch_us(t: datetime) -> int:
    return micros(t.astimezone(UTC) - datetime(1970, 1, 1, tzinfo=UTC))


def _seconds(x: npt.NDArray[np.float64]) -> I64:
    """Float seconds → whole seconds in microseconds (whole seconds keep traces readable)."""
    return np.rint(x).astype(np.int64) * US


def _exclusive_cumsum(values: I64, group_start: I64, counts: I64) -> I64:
    """Cumulative sum within consecutive groups, excluding the current element."""
    total = np.cumsum(values) - values
    return total - np.repeat(total[group_start], counts)


def _at_most(x: npt.NDArray[np.float64], limit_us: int) -> npt.NDArray[np.float64]:
    """Float seconds, none above ``limit_us`` microseconds."""
    return np.minimum(x, limit_us / US)


def _half_up_div(num: I64, den: int) -> I64:
    """num / den rounded half away from zero, exactly, in integers."""
    q = (2 * np.abs(num) + den) // (2 * den)
    return np.where(num < 0, -q, q)


class _Gen:
    """One generation: arrays per run, per segment and per allocation, then events."""

    def __init__(self, rng: np.random.Generator, runs: int, t0_us: int) -> None:
        self.rng = rng
        self.R = runs
        self.t0 = t0_us
        self.parts: list[pl.DataFrame] = []
        self._runs()
        self._segments()
        self._allocations()

    # ---- per run
    def _runs(self) -> None:
        rng, R = self.rng, self.R
        self.sku = rng.choice(2, R, p=[0.6, 0.4]).astype(np.int64)
        self.gpus = rng.choice(np.array([8, 4, 1], dtype=np.int64), R, p=[0.85, 0.10, 0.05])
        self.nodes = rng.choice(np.array([1, 2, 4], dtype=np.int64), R, p=[0.65, 0.25, 0.10])
        self.nseg = 1 + np.minimum(rng.poisson(5.0, R), MAX_SEGMENTS - 1).astype(np.int64)
        self.fate = rng.choice(3, R, p=[0.80, 0.08, 0.12]).astype(np.int64)  # ok/rejected/gone
        self.rate_milli = rng.integers(100, 1000, R, dtype=np.int64)  # steps per 1000 s
        self.ckpt_every = rng.choice(np.array([15, 30, 60], dtype=np.int64), R) * MINUTE
        self.job_alloc = rng.random(R) < 0.5  # job events name the allocation
        self.own_first = rng.random(R) < 0.3  # first nodes have their own requests
        self.run_t0 = self.t0 + _seconds(rng.random(R) * (SPAN / US))
        self.first_wait = _seconds(_at_most(rng.exponential(20 * 60, R), MAX_WAIT)) + US

    # ---- per segment
    def _segments(self) -> None:
        rng, R = self.rng, self.R
        S = int(self.nseg.sum())
        self.S = S
        run = np.repeat(np.arange(R, dtype=np.int64), self.nseg)
        self.seg_run = run
        self.seg_first = np.cumsum(self.nseg) - self.nseg
        idx = np.arange(S, dtype=np.int64) - np.repeat(self.seg_first, self.nseg)
        self.seg_idx = idx
        last = idx == self.nseg[run] - 1
        self.seg_last = last
        spot = rng.random(S) >= 0.2
        self.seg_cap = np.where(spot, 0, 1).astype(np.int64)
        self.seg_zone = rng.integers(0, len(ZONES), S, dtype=np.int64)
        runtime = _seconds(np.exp(rng.normal(np.log(7200.0), 0.9, S)))
        runtime = np.clip(runtime, 60 * US, MAX_RUNTIME)
        u = rng.random(S)
        interrupted = np.where(spot, np.where(u < 0.85, RECL, FAIL), np.where(u < 0.4, FAIL, REL))
        gave_up = (self.fate[run] == 2) & (rng.random(S) < 0.5)
        final = np.where(gave_up, np.where(spot, RECL, FAIL), REL)
        self.seg_reason = np.where(last, final, interrupted).astype(np.int64)
        long_wait = rng.random(S) < 0.1
        wait = np.where(long_wait, rng.exponential(2 * 3600, S), rng.exponential(10 * 60, S))
        self.seg_wait = _seconds(_at_most(wait, MAX_WAIT))
        restore = np.where(idx == 0, rng.uniform(30, 120, S), rng.uniform(60, 300, S))
        self.seg_restore = _seconds(restore)
        span = runtime + self.seg_wait
        self.seg_start = (
            self.run_t0[run]
            + self.first_wait[run]
            + _exclusive_cumsum(span, self.seg_first, self.nseg)
        )
        self.seg_end = self.seg_start + runtime
        self.seg_resume = self.seg_start + self.seg_restore
        lo = np.array([SPOT_CENTS[0][0], SPOT_CENTS[1][0]])[self.sku[run]]
        hi = np.array([SPOT_CENTS[0][1], SPOT_CENTS[1][1]])[self.sku[run]]
        self.seg_price = rng.integers(lo, hi + 1, dtype=np.int64)
        # reclaim notices, on the segment's first node
        has_notice = (self.seg_reason == RECL) & (rng.random(S) < 0.75)
        lead = rng.choice(np.array([30, 120, 10], dtype=np.int64), S, p=[0.5, 0.35, 0.15]) * US
        lead = np.minimum(lead, runtime)
        self.seg_notice = np.where(has_notice, self.seg_end - lead, -1)
        self.seg_lead = lead

    # ---- per allocation
    def _allocations(self) -> None:
        rng = self.rng
        per_seg = self.nodes[self.seg_run]
        A = int(per_seg.sum())
        self.A = A
        seg = np.repeat(np.arange(self.S, dtype=np.int64), per_seg)
        self.alloc_seg = seg
        seg_alloc0 = np.cumsum(per_seg) - per_seg
        node = np.arange(A, dtype=np.int64) - np.repeat(seg_alloc0, per_seg)
        self.alloc_node = node
        run = self.seg_run[seg]
        self.alloc_run = run
        run_allocs = self.nodes * self.nseg
        run_alloc0 = np.cumsum(run_allocs) - run_allocs
        self.alloc_n = np.arange(A, dtype=np.int64) - run_alloc0[run] + 1
        stagger = np.where(node == 0, 0, _seconds(rng.uniform(1, 20, A)))
        self.alloc_start = self.seg_start[seg] + stagger
        teardown = _seconds(rng.uniform(1, MAX_TEARDOWN / US, A))
        self.alloc_end = np.where(node == 0, self.seg_end[seg], self.seg_end[seg] + teardown)
        self.alloc_reason = np.where(node == 0, self.seg_reason[seg], REL)
        self.seg_alloc0 = seg_alloc0  # global index of each segment's first allocation

    # ---- events
    def _add(
        self,
        ts: I64,
        run: I64,
        alloc: I64,
        event: int | I64,
        **cols: npt.NDArray[np.int64] | npt.NDArray[np.bool_],
    ) -> None:
        n = len(ts)
        data: dict[str, object] = {
            "ts": ts,
            "run": run,
            "alloc": alloc,
            "ev": np.broadcast_to(np.asarray(event, dtype=np.int64), (n,)).copy(),
        }
        data.update(cols)
        self.parts.append(pl.DataFrame(data))

    def _job_alloc(self, seg: I64) -> I64:
        """The allocation job events name: the segment's first node, or none (run-level)."""
        run = self.seg_run[seg]
        return np.where(self.job_alloc[run], self.seg_alloc0[seg], -1)

    def _offset(self, seg: I64, t: I64) -> I64:
        """Steps done in a segment between its resume and ``t``."""
        rate = self.rate_milli[self.seg_run[seg]]
        return np.maximum(0, (t - self.seg_resume[seg]) * rate // (1000 * US))

    def frame(self) -> pl.DataFrame:
        if self.R == 0:
            return pl.DataFrame(schema=GENERATED_SCHEMA)
        rng, S, A = self.rng, self.S, self.A
        seg_all = np.arange(S, dtype=np.int64)
        alloc_all = np.arange(A, dtype=np.int64)
        seg = self.alloc_seg
        run = self.alloc_run
        no_alloc_r = np.full(self.R, -1, dtype=np.int64)

        # requests: the run's first, then per later segment the run's or each node's own
        self._add(self.run_t0, np.arange(self.R, dtype=np.int64), no_alloc_r, _EV["requested"])
        first_seg = self.seg_idx[seg] == 0
        own = np.where(first_seg, self.own_first[run], rng.random(A) < 0.5)
        prev_end = np.where(first_seg, self.run_t0[run], self.seg_end[np.maximum(seg - 1, 0)])
        own_ts = prev_end + _seconds(rng.uniform(0, 30, A))
        own_ts = np.minimum(own_ts, self.alloc_start)
        sel = own
        self._add(own_ts[sel], run[sel], alloc_all[sel], _EV["requested"])
        later = self.seg_idx >= 1
        run_level = later & ~own[self.seg_alloc0]
        sel_s = seg_all[run_level]
        self._add(
            self.seg_end[sel_s - 1],
            self.seg_run[sel_s],
            np.full(len(sel_s), -1, dtype=np.int64),
            _EV["requested"],
        )

        # checkpoints first: they fix the step each segment resumes from
        ck_seg, ck_t, ck_valid = self._checkpoints()

        # starts and ends
        spot = self.seg_cap[seg] == 0
        self._add(
            self.alloc_start,
            run,
            alloc_all,
            _EV["started"],
            gpus=self.gpus[run],
            sku=self.sku[run],
            zone=self.seg_zone[seg],
            capacity=self.seg_cap[seg],
            price=np.where(spot, self.seg_price[seg], -1),
        )
        end_step = self.seg_base_step(seg) + self._offset(seg, self.seg_end[seg])
        end_step = np.where(rng.random(A) < 0.05, -1, end_step)
        self._add(self.alloc_end, run, alloc_all, self.alloc_reason, step=end_step)

        # notices, on each segment's first node
        sel_s = seg_all[self.seg_notice >= 0]
        self._add(
            self.seg_notice[sel_s], self.seg_run[sel_s], self.seg_alloc0[sel_s], _EV["notice"]
        )

        # checkpoints, restores and progress (job events of the segment)
        ck_step = self.seg_base_step(ck_seg) + self._offset(ck_seg, ck_t)
        self._add(
            ck_t,
            self.seg_run[ck_seg],
            self._job_alloc(ck_seg),
            _EV["checkpoint"],
            step=ck_step,
            valid=ck_valid,
        )
        base = self.seg_base_step(seg_all)
        restored = (self.seg_idx >= 1) & (base > 0) & (self.seg_resume < self.seg_end)
        sel_s = seg_all[restored]
        self._add(
            self.seg_resume[sel_s],
            self.seg_run[sel_s],
            self._job_alloc(sel_s),
            _EV["restored"],
            step=base[sel_s],
        )
        pr_seg, pr_t = self._periodic(np.full(S, HOUR, dtype=np.int64))
        self._add(
            pr_t,
            self.seg_run[pr_seg],
            self._job_alloc(pr_seg),
            _EV["progress"],
            step=self.seg_base_step(pr_seg) + self._offset(pr_seg, pr_t),
        )

        # verdicts
        last_end = self.seg_end[self.seg_first + self.nseg - 1]
        verdict_ts = last_end + _seconds(rng.uniform(600, 6 * 3600, self.R))
        for fate, name in ((0, "accepted"), (1, "rejected")):
            r = np.arange(self.R, dtype=np.int64)[self.fate == fate]
            self._add(verdict_ts[r], r, np.full(len(r), -1, dtype=np.int64), _EV[name])

        # invoice lines
        runtime = self.alloc_end - self.alloc_start
        qty = _half_up_div(self.gpus[run] * runtime, 3600)  # micro GPU-hours
        od = np.array(ON_DEMAND_CENTS, dtype=np.int64)[self.sku[run]]
        cents = np.where(spot, self.seg_price[seg], od)
        amount = _half_up_div(qty * cents, US)
        charge_ts = self.alloc_end + _seconds(rng.uniform(3600, MAX_INVOICE_DELAY / US, A))
        self._add(charge_ts, run, alloc_all, _EV["charge"], quantity=qty, amount=amount)
        credited = (self.alloc_reason == RECL) & (rng.random(A) < 0.2)
        self._add(
            charge_ts[credited] + US,
            run[credited],
            alloc_all[credited],
            _EV["credit"],
            amount=-_half_up_div(amount[credited], 10),
        )
        return self._assemble()

    def seg_base_step(self, seg: I64) -> I64:
        return self._base[seg]

    def _periodic(self, every: I64) -> tuple[I64, I64]:
        """Times ``resume + j × every`` strictly inside each segment, for j = 1, 2, …"""
        avail = self.seg_end - self.seg_resume
        count = np.where(avail > 0, (avail - 1) // every, 0)
        seg = np.repeat(np.arange(self.S, dtype=np.int64), count)
        first = np.cumsum(count) - count
        j = np.arange(len(seg), dtype=np.int64) - np.repeat(first, count) + 1
        return seg, self.seg_resume[seg] + j * every[seg]

    def _checkpoints(self) -> tuple[I64, I64, Bool]:
        rng, S = self.rng, self.S
        every = self.ckpt_every[self.seg_run]
        p_seg, p_t = self._periodic(every)
        p_valid = rng.random(len(p_seg)) >= 0.04
        # an emergency checkpoint after some notices
        lead_half = np.minimum(self.seg_lead // 2, _seconds(rng.uniform(5, 25, S)))
        n_t = self.seg_notice + lead_half
        n_sel = (self.seg_notice >= 0) & (rng.random(S) < 0.5) & (n_t > self.seg_resume)
        n_seg = np.arange(S, dtype=np.int64)[n_sel]
        n_valid = rng.random(len(n_seg)) >= 0.1
        # a checkpoint being written when the allocation was lost: invalid
        w_t = self.seg_end - _seconds(rng.uniform(1, 20, S))
        lost = self.seg_reason != REL
        w_sel = lost & (rng.random(S) < 0.25) & (w_t > self.seg_resume)
        w_seg = np.arange(S, dtype=np.int64)[w_sel]
        seg = np.concatenate([p_seg, n_seg, w_seg])
        t = np.concatenate([p_t, n_t[n_seg], w_t[w_seg]])
        valid = np.concatenate([p_valid, n_valid, np.zeros(len(w_seg), dtype=np.bool_)])
        # one checkpoint per segment and second: keep the first kind listed above
        order = np.lexsort((np.arange(len(seg)), t, seg))
        seg, t, valid = seg[order], t[order], valid[order]
        keep = np.ones(len(seg), dtype=np.bool_)
        keep[1:] = (seg[1:] != seg[:-1]) | (t[1:] != t[:-1])
        seg, t, valid = seg[keep], t[keep], valid[keep]
        # the step each segment resumes from: the last valid checkpoint before it
        offset = self._offset(seg, t)
        last_valid = np.zeros(S, dtype=np.int64)
        np.maximum.at(last_valid, seg[valid], offset[valid])
        self._base = _exclusive_cumsum(last_valid, self.seg_first, self.nseg)
        return seg, t, valid

    def _assemble(self) -> pl.DataFrame:
        ev = pl.concat(self.parts, how="diagonal_relaxed")
        ev = ev.sort(["ts", "run", "ev", "alloc"], maintain_order=True)
        width = max(6, len(str(self.R)))
        run_id = pl.concat_str(pl.lit("run-"), pl.col("run").cast(pl.String).str.zfill(width))
        alloc_n = _lookup("alloc", self.alloc_n).cast(pl.String).str.zfill(2)
        names = list(EVENTS)
        sources = [EVENTS[n].source for n in names]

        def codes(col: str, labels: Sequence[str]) -> pl.Expr:
            return pl.col(col).replace_strict(
                list(range(len(labels))), list(labels), return_dtype=pl.String, default=None
            )

        out = ev.select(
            run_id.alias("run_id"),
            pl.when(pl.col("alloc") >= 0)
            .then(pl.concat_str(run_id, pl.lit("-a"), alloc_n))
            .alias("alloc_id"),
            pl.from_epoch(pl.col("ts"), time_unit="us").dt.replace_time_zone("UTC").alias("ts"),
            codes("ev", sources).alias("source"),
            codes("ev", names).alias("event"),
            pl.col("gpus"),
            codes("sku", SKUS).alias("sku"),
            codes("zone", ZONES).alias("zone"),
            codes("capacity", CAPACITY).alias("capacity"),
            _scaled("price", 2).alias("price"),
            pl.when(pl.col("step") >= 0).then(pl.col("step")).alias("step"),
            pl.col("valid"),
            _scaled("quantity", 6).alias("quantity"),
            _scaled("amount", 2).alias("amount"),
        )
        return out.select([pl.col(c).cast(t) for c, t in GENERATED_SCHEMA.items()])


def _lookup(col: str, values: I64) -> pl.Expr:
    """``values[col]`` for a non-negative integer column (null stays null)."""
    series = pl.Series("v", values)
    return pl.when(pl.col(col) >= 0).then(pl.lit(series).gather(pl.col(col).clip(0)))


def _scaled(col: str, scale: int) -> pl.Expr:
    """An integer column of units of 10^-scale as an exact decimal text → decimal.
    ``price`` uses -1 for “no price”, which becomes null."""
    c = pl.col(col)
    neg = c < 0
    mag = c.abs()
    unit = 10**scale
    text = pl.concat_str(
        pl.when(neg).then(pl.lit("-")).otherwise(pl.lit("")),
        (mag // unit).cast(pl.String),
        pl.lit("."),
        (mag % unit).cast(pl.String).str.zfill(scale),
    )
    dec = text.str.to_decimal(scale=scale)
    if col == "price":
        return pl.when(c >= 0).then(dec)
    return dec
