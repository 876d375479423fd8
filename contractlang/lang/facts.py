"""The catalog of facts: every name a term or budget can read, its type, level and stage.

This is the contract between the trace half (which derives the facts as polars columns), the
checker (which resolves names and enforces stages) and the compiler (which reads columns).

Stages follow the evaluation order of design §6; a clause may read only facts of earlier
stages: rates and exclusions read trace facts, credits may also read ``billable_time``,
``charge`` and ``replayed_cost``, budgets read per-run facts.

Physical representation in the facts frames (see :data:`ALLOCATION_SCHEMA`,
:data:`RUN_SCHEMA`): durations and GPU-time are ``pl.Duration("us")`` (GPU-time as
GPU-microseconds: 1 GPU for 1 second is ``timedelta(seconds=1)``); counts are integers; money
is ``pl.Decimal(38, 20)`` before rounding; enums and strings are ``pl.String``.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import Literal

import polars as pl

from contractlang.lang.types import (
    BOOL,
    GPU,
    GPU_TIME,
    MONEY,
    PLAIN_NUMBER,
    STRING,
    TIME,
    Type,
    enum_type,
    number,
)


class Stage(IntEnum):
    TRACE = 0
    BILLABLE = 1
    CHARGE = 2
    RUN = 3

    def describe(self) -> str:
        return {
            Stage.TRACE: "a trace fact",
            Stage.BILLABLE: "billable time",
            Stage.CHARGE: "a charge fact",
            Stage.RUN: "a per-run fact",
        }[self]


Level = Literal["allocation", "run"]


@dataclass(frozen=True, slots=True)
class Fact:
    name: str
    level: Level
    stage: Stage
    type: Type
    doc: str


def _money() -> Type:
    # the currency is the contract's; the checker substitutes it
    return number(MONEY, "*")


_ALLOC: list[tuple[str, Stage, Type, str]] = [
    ("runtime", Stage.TRACE, number(TIME), "end − start"),
    ("gpus", Stage.TRACE, number(GPU), "GPUs in the allocation"),
    ("gpu_time", Stage.TRACE, number(GPU_TIME), "gpus × runtime"),
    ("sku", Stage.TRACE, STRING, "the SKU on `started`"),
    ("zone", Stage.TRACE, STRING, "the zone on `started`"),
    ("capacity", Stage.TRACE, enum_type("capacity"), "spot, on_demand or reserved"),
    ("end_reason", Stage.TRACE, enum_type("end_reason"), "released, reclaimed or failed"),
    ("attempt", Stage.TRACE, PLAIN_NUMBER, "1 for the run's first allocation, 2 for the next, …"),
    ("queue_wait", Stage.TRACE, number(TIME), "start − the request that led to it"),
    ("notice_lead", Stage.TRACE, number(TIME), "end − notice, for reclaimed allocations"),
    ("replacement_wait", Stage.TRACE, number(TIME), "wait for the next allocation of the run"),
    ("replayed_time", Stage.TRACE, number(TIME), "work since the last valid checkpoint, lost"),
    ("replayed_steps", Stage.TRACE, PLAIN_NUMBER, "steps since the last valid checkpoint, lost"),
    ("billable_time", Stage.BILLABLE, number(TIME), "runtime after exclusions and rounding"),
    ("charge", Stage.CHARGE, _money(), "rate × gpus × billable_time"),
    ("replayed_cost", Stage.CHARGE, _money(), "rate × gpus × min(replayed_time, billable_time)"),
]

_RUN: list[tuple[str, Type, str]] = [
    ("accepted", BOOL, "the run has an `accepted` event"),
    ("time_to_accept", number(TIME), "first `accepted` − first `requested` (or first start)"),
    ("reclaims", PLAIN_NUMBER, "allocations ended by `reclaimed`"),
    ("failures", PLAIN_NUMBER, "allocations ended by `failed`"),
    ("allocations", PLAIN_NUMBER, "allocations in the run"),
    ("metered_gpu_time", number(GPU_TIME), "Σ gpus × runtime"),
    ("billable_gpu_time", number(GPU_TIME), "Σ gpus × billable_time"),
    ("excluded_gpu_time", number(GPU_TIME), "GPU-time taken out by exclusions"),
    ("lost_gpu_time", number(GPU_TIME), "Σ gpus × replayed_time"),
    ("lost_steps", PLAIN_NUMBER, "Σ replayed_steps"),
    ("gross", _money(), "Σ charge lines"),
    ("credits", _money(), "Σ credit lines (negative)"),
    ("cap_cuts", _money(), "Σ cap lines (positive)"),
    ("net", _money(), "gross + credits + cap cuts"),
    ("cost_per_accepted_run", _money(), "net for accepted runs, none otherwise"),
]

FACTS: dict[str, Fact] = {
    **{n: Fact(n, "allocation", s, t, d) for n, s, t, d in _ALLOC},
    **{n: Fact(n, "run", Stage.RUN, t, d) for n, t, d in _RUN},
}

PROMISES: dict[str, str] = {"promised_notice": "notice", "promised_restart": "restart"}
PROMISE_TYPE = number(TIME)


# --------------------------------------------------------------------------- physical schemas

MONEY_DTYPE = pl.Decimal(38, 20)
DURATION = pl.Duration("us")
TIMESTAMP = pl.Datetime("us", "UTC")

#: Columns of the per-allocation facts frame produced by the trace half, in this order.
#: Extra trace columns follow, named ``trace.<column>`` (the value on the `started` row,
#: ``trace.price`` included when the trace has prices).
ALLOCATION_SCHEMA: dict[str, pl.DataType] = {
    "run_id": pl.String(),
    "alloc_id": pl.String(),
    "attempt": pl.Int64(),
    "start": TIMESTAMP,
    "end": TIMESTAMP,
    "gpus": pl.Int64(),
    "sku": pl.String(),
    "zone": pl.String(),
    "capacity": pl.String(),
    "end_reason": pl.String(),
    "runtime": DURATION,
    "gpu_time": DURATION,
    "queue_wait": DURATION,
    "notice_at": TIMESTAMP,
    "notice_lead": DURATION,
    "replacement_wait": DURATION,
    "last_checkpoint_at": TIMESTAMP,
    "last_checkpoint_step": pl.Int64(),
    "end_step": pl.Int64(),
    "replayed_time": DURATION,
    "replayed_steps": pl.Int64(),
}

#: Columns of the per-run facts frame produced by the trace half (money facts are added by
#: evaluation).
RUN_SCHEMA: dict[str, pl.DataType] = {
    "run_id": pl.String(),
    "accepted": pl.Boolean(),
    "time_to_accept": DURATION,
    "reclaims": pl.Int64(),
    "failures": pl.Int64(),
    "allocations": pl.Int64(),
    "metered_gpu_time": DURATION,
    "lost_gpu_time": DURATION,
    "lost_steps": pl.Int64(),
    "first_start": TIMESTAMP,
    "last_end": TIMESTAMP,
}

TRACE_PREFIX = "trace."
