"""The generator: deterministic, valid, and realistic (it has every feature docs/trace.md's
"The generator" lists)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import polars as pl
import pytest

from contractlang.trace import derive_facts, generate_trace, load_trace, write_trace
from contractlang.trace.generate import GENERATED_SCHEMA

RUNS = 200


@pytest.fixture(scope="module")
def generated() -> pl.DataFrame:
    return generate_trace(RUNS, seed=42)


@pytest.fixture(scope="module")
def derived(generated: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    return derive_facts(load_trace(generated)).collect()


def test_same_seed_same_bytes(tmp_path: Path) -> None:
    write_trace(generate_trace(50, seed=7), tmp_path / "a.parquet")
    write_trace(generate_trace(50, seed=7), tmp_path / "b.parquet")
    write_trace(generate_trace(50, seed=8), tmp_path / "c.parquet")
    a, b, c = (tmp_path / n for n in ("a.parquet", "b.parquet", "c.parquet"))
    assert a.read_bytes() == b.read_bytes()
    assert a.read_bytes() != c.read_bytes()


def test_schema_and_order(generated: pl.DataFrame) -> None:
    assert dict(generated.schema) == GENERATED_SCHEMA
    assert generated["ts"].is_sorted()  # a log in time order
    assert generated["run_id"].n_unique() == RUNS


def test_it_validates_clean(generated: pl.DataFrame) -> None:
    trace = load_trace(generated)
    assert trace.warnings == ()
    assert trace.summary.rows_read == generated.height


def test_zero_runs() -> None:
    df = generate_trace(0, seed=1)
    assert df.height == 0
    assert dict(df.schema) == GENERATED_SCHEMA


def test_start_moves_the_trace() -> None:
    begin = datetime(2026, 6, 1, tzinfo=UTC)
    df = generate_trace(5, seed=3, start=begin)
    first = df["ts"].min()
    assert isinstance(first, datetime)
    assert begin <= first < begin + timedelta(days=80)


def test_runs_span_month_boundaries(generated: pl.DataFrame) -> None:
    months = generated.select(pl.col("ts").dt.strftime("%Y-%m").unique()).to_series()
    assert set(months) >= {"2025-01", "2025-02", "2025-03"}


def test_capacity_sku_zone_and_price_are_realistic(generated: pl.DataFrame) -> None:
    started = generated.filter(pl.col("event") == "started")
    assert set(started["capacity"]) == {"spot", "on_demand"}
    assert set(started["sku"]) == {"H100-80G", "A100-80G"}
    assert started["zone"].n_unique() >= 3
    assert set(started["gpus"]) <= {1, 4, 8}
    # a price on every spot start and on no on-demand one, in the SKU's range (USD/GPU-hour)
    spot = started.filter(pl.col("capacity") == "spot")
    assert spot["price"].null_count() == 0
    assert started.filter(pl.col("capacity") == "on_demand")["price"].null_count() == (
        started.height - spot.height
    )
    for sku, lo, hi in (("H100-80G", "2.10", "3.40"), ("A100-80G", "1.10", "1.90")):
        prices = spot.filter(pl.col("sku") == sku)["price"]
        assert Decimal(lo) <= prices.min() <= prices.max() <= Decimal(hi)  # type: ignore[operator]
    other = generated.filter(pl.col("event") != "started")
    assert other["price"].null_count() == other.height


def test_every_kind_of_event_and_request(generated: pl.DataFrame) -> None:
    counts = dict(generated.group_by("event").len().iter_rows())
    assert set(counts) == {
        "requested", "started", "notice", "reclaimed", "released", "failed", "checkpoint",
        "restored", "progress", "accepted", "rejected", "charge", "credit",
    }  # fmt: skip
    requests = generated.filter(pl.col("event") == "requested")
    assert requests["alloc_id"].null_count() > 0  # run-level
    assert requests["alloc_id"].null_count() < requests.height  # allocation-level
    checkpoints = generated.filter(pl.col("event") == "checkpoint")
    assert checkpoints["step"].null_count() == 0
    assert set(checkpoints["valid"]) == {True, False}
    assert checkpoints["alloc_id"].null_count() > 0  # some belong only to the run


def test_invoice_lines_match_the_allocations(
    generated: pl.DataFrame, derived: tuple[pl.DataFrame, pl.DataFrame]
) -> None:
    allocations, _ = derived
    charges = generated.filter(pl.col("event") == "charge")
    assert charges.height == allocations.height  # one charge line per allocation
    assert charges["amount"].null_count() == 0
    credits = generated.filter(pl.col("event") == "credit")
    assert credits["amount"].max() < 0  # type: ignore[operator]
    # quantity = GPU-hours metered, rounded half up to 6 places
    joined = charges.join(allocations, on="alloc_id")
    for row in joined.head(50).iter_rows(named=True):
        hours = Decimal(row["gpu_time"] // timedelta(microseconds=1)) / Decimal(3_600_000_000)
        assert row["quantity"] == hours.quantize(Decimal("0.000001"), rounding=ROUND_HALF_UP)


def test_facts_show_every_feature(derived: tuple[pl.DataFrame, pl.DataFrame]) -> None:
    allocations, runs = derived
    reclaimed = allocations.filter(pl.col("end_reason") == "reclaimed")
    assert reclaimed.filter(pl.col("notice_lead") > timedelta(0)).height > 0  # with notice
    assert reclaimed.filter(pl.col("notice_lead") == timedelta(0)).height > 0  # without
    assert allocations.filter(pl.col("end_reason") == "failed").height > 0
    assert allocations["replacement_wait"].drop_nulls().len() > 0
    assert allocations["queue_wait"].drop_nulls().len() > 0
    assert allocations.filter(pl.col("replayed_steps") > 0).height > 0
    assert allocations.filter(pl.col("attempt") >= 2).height > 0  # multi-allocation runs
    # several nodes at once: allocations of a run that overlap
    overlapping = allocations.sort("run_id", "start").filter(
        (pl.col("run_id") == pl.col("run_id").shift(1)) & (pl.col("start") < pl.col("end").shift(1))
    )
    assert overlapping.height > 0
    accepted = runs["accepted"].sum()
    assert 0.6 * RUNS < accepted < RUNS  # most runs accepted, some never
    assert runs["lost_gpu_time"].max() > timedelta(0)  # type: ignore[operator]
