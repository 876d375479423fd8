"""The trace's event schema and the facts derived from it, as data and as pydantic models.

The constants here are what the loader, validator, deriver and generator share: the columns
(:data:`COLUMNS`), the events and which system records each (:data:`EVENTS`), and the physical
dtypes of a normalised trace (:data:`EVENT_DTYPES`). The pydantic models document one event row
(:class:`TraceEvent`), one row of each facts frame (:class:`AllocationFacts`, :class:`RunFacts`)
and the summary of a load (:class:`TraceSummary`); ``docs/trace.md`` is their prose form.

>>> EVENTS["reclaimed"].source
'scheduler'
>>> sorted(END_EVENTS)
['failed', 'reclaimed', 'released']
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Literal

import polars as pl
from pydantic import BaseModel, ConfigDict, Field

from contractlang.lang.frames import TIMESTAMP
from contractlang.lang.vocabulary import ENUMS

Source = Literal["job", "scheduler", "invoice"]
#: The enums as types for the pydantic models (tests/test_vocabulary.py checks they list the
#: members of :data:`~contractlang.lang.vocabulary.ENUMS`).
Capacity = Literal["spot", "on_demand", "reserved"]
EndReason = Literal["released", "reclaimed", "failed"]

SOURCES: tuple[str, ...] = ("job", "scheduler", "invoice")
CAPACITIES: tuple[str, ...] = ENUMS["capacity"]

AllocRule = Literal["required", "optional"]


@dataclass(frozen=True, slots=True)
class EventKind:
    """One kind of event: the system that records it, whether it needs an ``alloc_id``, and
    what the facts do with it (the summary's reason when a row is not used)."""

    source: str
    alloc_id: AllocRule
    doc: str
    not_used: str | None = None  # why rows of this kind do not feed the facts, if they do not


EVENTS: dict[str, EventKind] = {
    "requested": EventKind(
        "scheduler", "optional", "capacity asked for: by the run, or for one allocation"
    ),
    "started": EventKind("scheduler", "required", "an allocation starts (gpus, sku, zone, …)"),
    "notice": EventKind("scheduler", "required", "a reclaim notice was delivered"),
    "reclaimed": EventKind("scheduler", "required", "the provider took the allocation back"),
    "released": EventKind("scheduler", "required", "the customer finished or stopped it"),
    "failed": EventKind("scheduler", "required", "a hardware or provider fault ended it"),
    "checkpoint": EventKind("job", "optional", "a snapshot was saved (step, valid)"),
    "restored": EventKind(
        "job", "optional", "the job resumed from a snapshot", "restore events are informational"
    ),
    "progress": EventKind(
        "job", "optional", "the job reported its step", "progress events are informational"
    ),
    "accepted": EventKind("job", "optional", "the run's model was accepted"),
    "rejected": EventKind(
        "job", "optional", "the run's model was rejected", "rejections are informational"
    ),
    "charge": EventKind(
        "invoice", "optional", "an invoice charge line", "invoice lines are kept for reconciliation"
    ),
    "credit": EventKind(
        "invoice", "optional", "an invoice credit line", "invoice lines are kept for reconciliation"
    ),
    # (after the others: a kind's position is its physical code in every trace written)
    "adjustment": EventKind(
        "invoice",
        "optional",
        "an invoice adjustment line: neither a charge nor a credit",
        "invoice lines are kept for reconciliation",
    ),
    "tax": EventKind(
        "invoice",
        "optional",
        "an invoice tax line: reported, never compared",
        "invoice lines are kept for reconciliation",
    ),
}

END_EVENTS: frozenset[str] = frozenset(ENUMS["end_reason"])
#: Events that must carry an ``alloc_id`` and describe the allocation's own lifetime.
LIFECYCLE_EVENTS: frozenset[str] = frozenset({"started", "notice"} | END_EVENTS)
#: Events that, when they name an allocation, must happen within its lifetime.
WITHIN_LIFETIME: frozenset[str] = frozenset({"notice", "checkpoint", "restored", "progress"})
INVOICE_EVENTS: frozenset[str] = frozenset({"charge", "credit", "adjustment", "tax"})
#: Reason given in the summary for invalid checkpoints, which ``last_checkpoint`` skips.
INVALID_CHECKPOINT_REASON = "invalid checkpoints are skipped by `last_checkpoint`"

EVENT_ENUM = pl.Enum(list(EVENTS))
SOURCE_ENUM = pl.Enum(list(SOURCES))
CAPACITY_ENUM = pl.Enum(list(CAPACITIES))

#: Money columns are normalised to this exact decimal type; more places is an error (T002).
DECIMAL_SCALE = 18
DECIMAL_DTYPE = pl.Decimal(38, DECIMAL_SCALE)

REQUIRED_COLUMNS: tuple[str, ...] = ("run_id", "alloc_id", "ts", "source", "event", "gpus")
OPTIONAL_COLUMNS: tuple[str, ...] = (
    "sku",
    "zone",
    "capacity",
    "price",
    "step",
    "valid",
    "quantity",
    "amount",
)
COLUMNS: tuple[str, ...] = REQUIRED_COLUMNS + OPTIONAL_COLUMNS
MONEY_COLUMNS: tuple[str, ...] = ("price", "quantity", "amount")
#: Columns that hold a value on few rows (``started`` rows, invoice lines). A normalised
#: trace keeps them, and its extras, apart from the other columns and only on the rows where
#: one of them has a value (:attr:`~contractlang.trace.model.Trace.sparse`): a column of
#: every row costs 16 bytes a row for text or a decimal, null or not.
SPARSE_COLUMNS: tuple[str, ...] = ("sku", "zone", "price", "quantity", "amount")
#: The other columns, kept on every row (:attr:`~contractlang.trace.model.Trace.dense`),
#: but for ``run_id``: the dense frame holds ``run_key``, its position among the trace's
#: sorted run ids (:attr:`~contractlang.trace.model.Trace.run_ids`), not its text.
DENSE_COLUMNS: tuple[str, ...] = tuple(
    c for c in COLUMNS if c not in SPARSE_COLUMNS and c != "run_id"
)

#: Columns the loader adds; a trace may not use these names.
ROW = "row"
RUN_KEY = "run_key"
RESERVED_COLUMNS: tuple[str, ...] = (ROW, RUN_KEY)

#: The physical dtypes of a normalised trace (:attr:`Trace.events`), in this order; extra
#: columns follow under their own names.
EVENT_DTYPES: dict[str, pl.DataType] = {
    ROW: pl.Int64(),
    RUN_KEY: pl.UInt32(),
    "run_id": pl.String(),
    "alloc_id": pl.String(),
    "ts": TIMESTAMP,
    "source": SOURCE_ENUM,
    "event": EVENT_ENUM,
    "gpus": pl.Int64(),
    "sku": pl.String(),
    "zone": pl.String(),
    "capacity": CAPACITY_ENUM,
    "price": DECIMAL_DTYPE,
    "step": pl.Int64(),
    "valid": pl.Boolean(),
    "quantity": DECIMAL_DTYPE,
    "amount": DECIMAL_DTYPE,
}


# --------------------------------------------------------------------------- pydantic models


class TraceEvent(BaseModel):
    """One row of a trace (docs/trace.md, "The schema"). Columns not listed here are kept as
    extras and can be read by terms as ``trace.<column>``."""

    model_config = ConfigDict(extra="allow", frozen=True)

    run_id: str = Field(description="the run the event belongs to")
    alloc_id: str | None = Field(None, description="the allocation; null for run-level events")
    ts: datetime = Field(description="when it happened, UTC (ISO 8601 text needs an offset)")
    source: Source = Field(description="which system recorded it")
    event: str = Field(description="what happened; see EVENTS")
    gpus: int | None = Field(None, gt=0, description="on `started`: GPUs in the allocation")
    sku: str | None = Field(None, description="on `started`")
    zone: str | None = Field(None, description="on `started`")
    capacity: Capacity | None = Field(None, description="on `started`")
    price: Decimal | None = Field(None, description="optional on `started`: per GPU-hour")
    step: int | None = Field(None, description="on checkpoint, restored, progress and ends")
    valid: bool | None = Field(None, description="on `checkpoint`; null means true")
    quantity: Decimal | None = Field(None, description="on invoice lines: GPU-hours")
    amount: Decimal | None = Field(None, description="on invoice lines (credits negative)")


class AllocationFacts(BaseModel):
    """One row of the per-allocation facts frame (``frames.ALLOCATION_SCHEMA``); durations are
    ``timedelta``, GPU-time is GPU-microseconds held as a ``timedelta``."""

    model_config = ConfigDict(frozen=True)

    run_id: str
    alloc_id: str
    attempt: int = Field(description="1, 2, … by (start, alloc_id) within the run")
    start: datetime
    end: datetime = Field(description="the end event's time, or `--open-at`")
    gpus: int
    sku: str | None
    zone: str | None
    capacity: Capacity | None
    end_reason: EndReason
    runtime: timedelta = Field(description="end − start")
    gpu_time: timedelta = Field(description="gpus × runtime")
    queue_wait: timedelta | None
    notice_at: datetime | None = Field(description="the earliest notice of the allocation")
    notice_lead: timedelta | None
    replacement_wait: timedelta | None
    last_checkpoint_at: datetime | None
    last_checkpoint_step: int | None
    end_step: int | None = Field(description="the step on the end event")
    replayed_time: timedelta
    replayed_steps: int | None


class RunFacts(BaseModel):
    """One row of the per-run facts frame (``frames.RUN_SCHEMA``)."""

    model_config = ConfigDict(frozen=True)

    run_id: str
    accepted: bool
    time_to_accept: timedelta | None
    reclaims: int
    failures: int
    allocations: int
    metered_gpu_time: timedelta
    lost_gpu_time: timedelta
    lost_steps: int
    first_start: datetime | None
    last_end: datetime | None


class NotUsed(BaseModel):
    """Rows read but not used by the facts, with the reason."""

    model_config = ConfigDict(frozen=True)

    reason: str
    rows: int


class FactTotals(BaseModel):
    """Totals over the derived facts (present once facts are derived)."""

    model_config = ConfigDict(frozen=True)

    accepted_runs: int
    reclaims: int
    failures: int
    metered_gpu_hours: Decimal
    lost_gpu_hours: Decimal
    lost_steps: int


class TraceSummary(BaseModel):
    """What a load read and did: every input row is either used or not used with a reason
    (``rows_read == rows_used + Σ not_used``)."""

    model_config = ConfigDict(frozen=True)

    rows_read: int
    rows_used: int
    not_used: tuple[NotUsed, ...]
    runs: int
    allocations: int
    closed_at_open_at: int = Field(description="open allocations closed at `--open-at`")
    first_ts: datetime | None
    last_ts: datetime | None
    events: dict[str, int] = Field(description="rows per event")
    extra_columns: tuple[str, ...]
    warnings: int
    facts: FactTotals | None = None
