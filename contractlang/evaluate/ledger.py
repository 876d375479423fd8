"""The line-item ledger and the per-run table of one evaluated contract (docs/evaluate.md,
"Outputs").

The ledger has four kinds of line: ``charge`` (positive), ``exclusion`` (quantity = GPU-hours
not charged, amount 0), ``credit`` (negative) and ``cap`` (positive: it gives back part of a
credit). Each names its contract, run, allocation (none for run, month and contract caps), the
term and its source line. The amounts sum exactly to the net total, and per run to the run's net.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Protocol

import polars as pl

from contractlang.decimals import Val, apply_factor, dec
from contractlang.evaluate.plan import AllocationPlan, CapCut
from contractlang.evaluate.settings import Settings
from contractlang.lang.numbers import HOUR_PLACES, MICROS_PER_HOUR


class BilledContract(Protocol):
    """What the ledger is made from: one contract's evaluated allocations and runs
    (:class:`contractlang.evaluate.results.ContractResult` is one)."""

    @property
    def name(self) -> str: ...
    @property
    def settings(self) -> Settings: ...
    @property
    def plan(self) -> AllocationPlan: ...
    @property
    def allocations(self) -> pl.DataFrame: ...
    @property
    def runs(self) -> pl.DataFrame: ...
    @property
    def run_cuts(self) -> Sequence[CapCut]: ...


#: Column order and types of the ledger (also documented in docs/evaluate.md).
LEDGER_COLUMNS = [
    "contract",
    "run_id",
    "alloc_id",
    "kind",
    "term",
    "line",
    "month",
    "date",
    "quantity_gpu_hours",
    "amount",
]
KIND_ORDER = {"charge": 0, "exclusion": 1, "credit": 2, "cap": 3}
GPU_HOUR_US = Fraction(1, MICROS_PER_HOUR)


def hours(gpu_us: pl.Expr, scale: int = HOUR_PLACES) -> pl.Expr:
    """Microseconds as hours (so GPU-microseconds as GPU-hours), rounded half away from zero
    to ``scale`` places: :func:`contractlang.lang.numbers.gpu_hours` for a column.

    Polars rounds a decimal division or cast half to even, so the quotient is kept to
    ``scale + 6`` places first and then rounded half away from zero. The first rounding cannot
    fake a tie: GPU-µs ÷ 3.6 × 10⁹ is either exactly a tie at the 7th place or at least
    2.7 × 10⁻¹⁰ away from one.
    """
    # the quick way: a 64-bit count (19 digits) at HOUR_PLACES + 6 places fits 38 digits
    hours = apply_factor(Val(gpu_us.cast(dec(0)), "num", 0, GPU_HOUR_US), scale + 6, "quick")
    return hours.round(scale, mode="half_away_from_zero").cast(dec(scale))


def ledger_columns(plan: AllocationPlan) -> list[str]:
    """The allocation columns :func:`build_ledger` reads, for a contract's ``plan``."""
    own = ["run_id", "alloc_id", "attempt", "end", "gpus", "runtime_us", "billable_us"]
    own += ["rate_index", "charge_minor", "excluded_by"]
    terms = [*plan.duration_exclusions, *plan.credits, *plan.caps]
    return [*own, *(t.column for t in terms)]


def build_ledger(r: BilledContract) -> pl.DataFrame:
    """Every line of one contract's bill, in run, attempt, allocation and kind order."""
    s = r.settings
    wide = r.allocations.lazy().join(
        r.runs.lazy().select("run_id", "settle_month"), on="run_id", how="left"
    )

    def money(e: pl.Expr) -> pl.Expr:
        return e.cast(dec(s.precision)) / pl.lit(s.minor, dtype=dec(0))

    alloc_month = s.billing_month(pl.col("end"))
    alloc_date = s.billing_date(pl.col("end"))
    parts: list[pl.LazyFrame] = []

    def part(
        frame: pl.LazyFrame,
        kind: str,
        term: str,
        line: int | None,
        seq: int,
        quantity_us: pl.Expr | None,
        amount_minor: pl.Expr,
        dated: bool,
    ) -> pl.LazyFrame:
        return frame.select(
            pl.lit(r.name).alias("contract"),
            pl.col("run_id"),
            pl.col("alloc_id"),
            pl.lit(kind).alias("kind"),
            pl.lit(term).alias("term"),
            pl.lit(line, dtype=pl.Int64).alias("line"),
            (alloc_month if dated else pl.col("settle_month")).alias("month"),
            (alloc_date if dated else pl.lit(None, dtype=pl.Date)).alias("date"),
            (hours(quantity_us) if quantity_us is not None else pl.lit(None, dec(6))).alias(
                "quantity_gpu_hours"
            ),
            money(amount_minor).alias("amount"),
            pl.col("attempt").alias("_attempt"),
            pl.lit(seq, pl.Int64).alias("_seq"),
        )

    plan = r.plan
    for t in plan.rates:
        rows = wide.filter((pl.col("rate_index") == t.index) & (pl.col("billable_us") > 0))
        parts.append(
            part(
                rows,
                "charge",
                t.label,
                t.line,
                t.index,
                pl.col("gpus") * pl.col("billable_us"),
                pl.col("charge_minor"),
                True,
            )
        )
    for t in plan.whole_exclusions:
        rows = wide.filter(pl.col("excluded_by") == t.index)
        parts.append(
            part(
                rows,
                "exclusion",
                t.label,
                t.line,
                t.index,
                pl.col("gpus") * pl.col("runtime_us"),
                pl.lit(0, pl.Int64),
                True,
            )
        )
    offset = len(plan.whole_exclusions)
    for t in plan.duration_exclusions:
        rows = wide.filter(pl.col(t.column) > 0)
        parts.append(
            part(
                rows,
                "exclusion",
                t.label,
                t.line,
                offset + t.index,
                pl.col("gpus") * pl.col(t.column),
                pl.lit(0, pl.Int64),
                True,
            )
        )
    for t in plan.credits:
        rows = wide.filter(pl.col(t.column).is_not_null() & (pl.col(t.column) != 0))
        parts.append(part(rows, "credit", t.label, t.line, t.index, None, -pl.col(t.column), False))
    for t in plan.caps:
        rows = wide.filter(pl.col(t.column) > 0)
        parts.append(part(rows, "cap", t.label, t.line, t.index, None, pl.col(t.column), False))

    runs = r.runs.lazy().with_columns(
        pl.lit(None, dtype=pl.String).alias("alloc_id"),
        pl.lit(None, dtype=pl.Datetime("us", "UTC")).alias("end"),
        pl.lit(None, dtype=pl.Int64).alias("attempt"),
    )
    for n, cut in enumerate(r.run_cuts):
        rows = runs.filter(pl.col(cut.column) > 0)
        parts.append(
            part(rows, "cap", cut.label, cut.line, 1000 + n, None, pl.col(cut.column), False)
        )

    if not parts:
        return empty_ledger(s.precision)
    ledger = pl.concat(parts, how="vertical").with_columns(
        _kind=pl.col("kind").replace_strict(KIND_ORDER, return_dtype=pl.Int64)
    )
    ledger = ledger.sort(
        ["run_id", "_attempt", "alloc_id", "_kind", "_seq"], nulls_last=True, maintain_order=True
    )
    return ledger.select(LEDGER_COLUMNS).collect()


def empty_ledger(precision: int) -> pl.DataFrame:
    return pl.DataFrame(
        schema={
            "contract": pl.String,
            "run_id": pl.String,
            "alloc_id": pl.String,
            "kind": pl.String,
            "term": pl.String,
            "line": pl.Int64,
            "month": pl.String,
            "date": pl.Date,
            "quantity_gpu_hours": dec(6),
            "amount": dec(precision),
        }
    )


RUN_COLUMNS = [
    "contract",
    "run_id",
    "accepted",
    "time_to_accept_hours",
    "allocations",
    "reclaims",
    "failures",
    "metered_gpu_hours",
    "excluded_gpu_hours",
    "billable_gpu_hours",
    "lost_gpu_hours",
    "lost_steps",
    "gross",
    "credits",
    "cap_cuts",
    "net",
    "cost_per_accepted_run",
    "settle_month",
]


def runs_table(r: BilledContract) -> pl.DataFrame:
    """The per-run table for ``--runs``: money exact at the contract's precision, time and
    GPU-time in hours (6 places)."""

    def us(c: str) -> pl.Expr:
        return pl.col(c).dt.total_microseconds()

    return (
        r.runs.lazy()
        .with_columns(
            contract=pl.lit(r.name),
            time_to_accept_hours=hours(us("time_to_accept")),
            metered_gpu_hours=hours(us("metered_gpu_time")),
            excluded_gpu_hours=hours(pl.col("excluded_gpu_us")),
            billable_gpu_hours=hours(pl.col("billable_gpu_us")),
            lost_gpu_hours=hours(us("lost_gpu_time")),
        )
        .select(RUN_COLUMNS)
        .sort("run_id")
        .collect()
    )
