"""The catalog of facts: every name a term or budget can read, its type, level and stage.

This is the contract between the trace half (which derives the facts as polars columns), the
checker (which resolves names and enforces stages) and the compiler (which reads columns).

Stages follow the order of evaluation; a clause may read only facts of earlier stages: rates
and exclusions read trace facts, credits may also read ``billable_time``, ``charge`` and
``replayed_cost``, budgets read per-run facts (docs/language.md, "Facts").

The facts frames' polars types are in :mod:`contractlang.lang.frames`; this catalog imports no
polars, so checking a terms file never loads it.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import Literal

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


TRACE_PREFIX = "trace."
#: The one optional schema column terms read as ``trace.<column>``: a trace that does not
#: carry it (an imported scheduler export records no prices) reads as none on every
#: allocation, so ``rate trace.price …`` falls through to the next rate.
ABSENT_AS_NONE = "price"
