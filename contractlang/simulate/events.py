"""Simulated events as numpy arrays, then as a trace frame (docs/trace.md, "The schema").

The generator appends arrays of events (:class:`EventLog`); :func:`trace_frame` sorts them by
run, time, allocation and kind, and builds the columns: ``run_id`` (``run-000001``…),
``alloc_id`` (``run-000001-a0001``…; none on run-level events), ``ts`` (UTC, microseconds),
``source``, ``event``, ``gpus``/``sku``/``capacity``/``price`` on ``started``, ``step``, and
``valid`` on checkpoints. ``price`` is exact decimal, and only there when the workload gives
one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import numpy as np
import numpy.typing as npt
import polars as pl

from contractlang.lang.frames import TIMESTAMP
from contractlang.trace.schema import EVENTS

I64 = npt.NDArray[np.int64]

NAMES: tuple[str, ...] = tuple(EVENTS)
CODE: dict[str, int] = {name: i for i, name in enumerate(NAMES)}
#: Among events of one allocation at one instant, the order they happened in.
PRIORITY: dict[str, int] = {
    "requested": 0,
    "started": 1,
    "restored": 2,
    "checkpoint": 3,
    "notice": 4,
    "released": 5,
    "reclaimed": 5,
    "accepted": 6,
    "rejected": 6,
}
RUN_LEVEL = frozenset({"accepted", "rejected"})


@dataclass
class EventLog:
    """Events of one batch of runs, as appended arrays (positions of runs in the batch)."""

    parts: list[tuple[I64, I64, I64, I64, I64, I64]] = field(default_factory=list)

    def add(
        self,
        event: str | I64,
        run: I64,
        alloc: I64,
        ts: I64,
        step: I64 | None = None,
        valid: I64 | None = None,
    ) -> None:
        """Events of one kind (or per-row codes): ``step`` −1 and ``valid`` −1 mean none."""
        n = len(run)
        if n == 0:
            return
        code = np.full(n, CODE[event], dtype=np.int64) if isinstance(event, str) else event
        none = np.full(n, -1, dtype=np.int64)
        self.parts.append(
            (
                run,
                alloc,
                ts,
                code,
                none if step is None else step,
                none if valid is None else valid,
            )
        )

    def frame(self) -> pl.DataFrame:
        """Every event as a row, sorted by run, allocation, time and kind: in a run, the
        events of an allocation all come at or before the next one's (its end is the next
        request), so this is time order, ties in the order things happen."""
        cols = [np.concatenate([p[i] for p in self.parts]) for i in range(6)]
        run, alloc, ts, code, step, valid = cols
        allocs = int(alloc.max()) + 1
        return (
            pl.DataFrame(
                {
                    "run": run,
                    "alloc": alloc,
                    "ts": ts,
                    "code": code,
                    "step": step,
                    "valid": valid,
                    "_k1": run * allocs + alloc,
                    "_k2": ts * 16 + _PRIO[code],
                }
            )
            .sort("_k1", "_k2", maintain_order=True)
            .drop("_k1", "_k2")
        )


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_PRIO = np.array([PRIORITY.get(n, 9) for n in NAMES], dtype=np.int64)
_SOURCES = pl.Series("source", [EVENTS[n].source for n in NAMES], dtype=pl.String)
_EVENT_NAMES = pl.Series("event", list(NAMES), dtype=pl.String)


@dataclass(frozen=True)
class Columns:
    """What every ``started`` row carries, and how run and allocation ids are written."""

    gpus: int
    sku: str
    capacity: str
    price: Decimal | None
    start_us: int  # the runs' start, µs since the epoch
    run_width: int  # digits of run numbers
    alloc_width: int  # digits of allocation numbers

    def schema(self) -> dict[str, pl.DataType]:
        cols: dict[str, pl.DataType] = {
            "run_id": pl.String(),
            "alloc_id": pl.String(),
            "ts": TIMESTAMP,
            "source": pl.String(),
            "event": pl.String(),
            "gpus": pl.Int64(),
            "sku": pl.String(),
            "capacity": pl.String(),
        }
        if self.price is not None:
            cols["price"] = self.price_dtype
        cols["step"] = pl.Int64()
        cols["valid"] = pl.Boolean()
        return cols

    @property
    def price_dtype(self) -> pl.Decimal:
        exponent = self.price.as_tuple().exponent if self.price is not None else 0
        scale = max(0, -exponent) if isinstance(exponent, int) else 0
        return pl.Decimal(38, scale)


def epoch_us(t: datetime) -> int:
    """An aware time as integer microseconds since 1970-01-01 UTC, exactly."""
    return (t - _EPOCH) // timedelta(microseconds=1)


def trace_frame(log: EventLog, first_run: int, columns: Columns) -> pl.DataFrame:
    """The batch's events as a trace frame; runs are numbered from ``first_run`` + 1."""
    if not log.parts:
        return pl.DataFrame(schema=columns.schema())
    events = log.frame()
    run = events["run"].to_numpy()
    alloc = events["alloc"].to_numpy()
    code = events["code"].to_numpy()
    n_runs = int(run.max()) + 1
    numbers = pl.Series(np.arange(first_run + 1, first_run + n_runs + 1, dtype=np.int64))
    run_ids = ("run-" + numbers.cast(pl.String).str.zfill(columns.run_width)).rename("run_id")
    run_level = np.isin(code, [CODE[e] for e in RUN_LEVEL])
    # one id per (run, allocation), numbered within the run from 1
    per_run = np.zeros(n_runs, dtype=np.int64)
    np.maximum.at(per_run, run, alloc + 1)
    first = np.cumsum(per_run) - per_run
    owner = np.repeat(np.arange(n_runs, dtype=np.int64), per_run)
    number = np.arange(len(owner), dtype=np.int64) - np.repeat(first, per_run) + 1
    suffix = pl.Series(number).cast(pl.String).str.zfill(columns.alloc_width)
    alloc_ids = run_ids.gather(owner) + "-a" + suffix
    alloc_key = np.where(run_level, 0, first[run] + alloc)
    frame = pl.DataFrame(
        {
            "run_id": run_ids.gather(run),
            "alloc_id": alloc_ids.gather(alloc_key),
            "ts": events["ts"] + columns.start_us,
            "source": _SOURCES.gather(code),
            "event": _EVENT_NAMES.gather(code),
            "_started": code == CODE["started"],
            "step": events["step"],
            "valid": events["valid"],
            "_run_level": run_level,
        }
    )
    on_start = pl.col("_started")
    exprs: list[pl.Expr] = [
        pl.col("run_id"),
        pl.when(~pl.col("_run_level")).then(pl.col("alloc_id")).alias("alloc_id"),
        pl.col("ts").cast(pl.Datetime("us")).dt.replace_time_zone("UTC").alias("ts"),
        pl.col("source"),
        pl.col("event"),
        pl.when(on_start).then(pl.lit(columns.gpus, dtype=pl.Int64)).alias("gpus"),
        pl.when(on_start).then(pl.lit(columns.sku)).alias("sku"),
        pl.when(on_start).then(pl.lit(columns.capacity)).alias("capacity"),
    ]
    if columns.price is not None:
        price = pl.lit(columns.price, dtype=columns.price_dtype)
        exprs.append(pl.when(on_start).then(price).alias("price"))
    exprs += [
        pl.when(pl.col("step") >= 0).then(pl.col("step")).alias("step"),
        pl.when(pl.col("valid") >= 0).then(pl.col("valid") == 1).alias("valid"),
    ]
    return frame.select(exprs)
