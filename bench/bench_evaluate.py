"""Benchmark `contractlang evaluate` against hand-written polars and DuckDB queries (issue 4).

    python bench/bench_evaluate.py                  # 100,000 runs ≈ 0.93M allocations ≈ 10M events
    python bench/bench_evaluate.py --runs 2000      # smoke size: about 15 s in all

One command does everything. It generates a trace with the project's generator (plus a few
hand-made edge-case runs, :data:`EDGE_EXPECTED`) and writes it to Parquet in a temporary
directory, untimed. Then it runs ``--repeat`` rounds (default 3; medians are reported); a
round runs every step once, each in a fresh child process (this script with ``--step``) that
times it and records its own peak resident memory (``VmHWM``, which includes the interpreter
and the imported libraries, shown as "base"). Every step reads the Parquet file itself.

Steps:

- (a0) ``floor-column``: a polars scan summing one column, as ``pitfalls.md`` measures;
- (a) ``floor``: a polars scan computing metered GPU-time, Σ gpus × (end − start), which
  needs each allocation's start and end rows matched;
- (b) ``polars`` / (b') ``polars-in-memory``: a hand-written polars query computing, from the
  raw events, the totals and per-run money of :data:`CONTRACT`, with the streaming and with
  the in-memory engine;
- (c) ``duckdb``: the same as one hand-written DuckDB SQL query;
- (d) ``engine``: ``contractlang.evaluate.evaluate`` of :data:`CONTRACT` end to end (parse and
  check the terms, load and validate the trace, derive facts, evaluate);
- (d') ``engine-phases``: the same, phase by phase;
- (e) ``engine-k`` / (e') ``engine-k-phases``: ``--contracts`` contracts (:data:`CONTRACT` and
  variants with other increments, minimums, rates and caps) over one derivation of the facts.

The baselines derive every fact they need from the raw events, independently of
``contractlang/trace/derive.py`` (only the generator is imported, to make the data). All
steps must agree *exactly*: metered GPU-time, the totals, and every run's gross, credits,
cap cuts and net in integer cents; and the edge-case runs must match their hand computation.
The script exits 1 when anything differs. Targets, reported and not enforced: the engine
within 1.5× of the hand-written polars query, no slower than DuckDB, and five contracts under
2× one contract.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any, Literal

import polars as pl

# --------------------------------------------------------------------------- the contract

#: The contract every engine computes. It exercises the main machinery: a rate from
#: ``trace.price`` with fallbacks, an increment and a minimum, a whole-allocation exclusion, a
#: duration exclusion of a derived fact against a promise, a credit on ``charge`` and one on a
#: duration, a money cap per run (so the implicit cap at the run's gross bites too) and a cap
#: per month (a cut shared among the month's runs by largest remainder).
CONTRACT = """\
contract "bench" {
  currency USD
  rate trace.price per gpu_hour when capacity == spot
  rate 3.90 USD per gpu_hour when sku == "H100-80G"
  rate 1.60 USD per gpu_hour
  billing increment 1 minute
  billing minimum 10 minutes
  promise reclaim notice 30 seconds
  promise restart within 15 minutes
  exclude "reclaimed in the first hour" allocation
    when end_reason == reclaimed and runtime < 1 hour
  exclude "replay after short notice" replayed_time
    when end_reason == reclaimed and notice_lead < promised_notice
  credit "slow replacement" 10% of charge when replacement_wait > promised_restart
  credit "restart delay" 2.10 USD per gpu_hour * gpus * (replacement_wait - 15 minutes)
    when replacement_wait > 15 minutes
  cap credits at 150 USD per run
  cap credits at 5000 USD per month
}
"""

# The same contract, translated by hand for the baselines. Money is in integer cents and time
# in integer microseconds: `rate_cents × gpus × billable_us` is a charge in cent-µs-per-hour,
# so its line in cents is that ÷ 3_600_000_000, rounded once, half away from zero (every
# amount here is ≥ 0, so that is ⌊(2n + d) / 2d⌋).
US = 1_000_000
HOUR_US = 3600 * US
INCREMENT_US = 60 * US  # billing increment 1 minute
MINIMUM_US = 10 * 60 * US  # billing minimum 10 minutes
NOTICE_US = 30 * US  # promise reclaim notice 30 seconds
RESTART_US = 15 * 60 * US  # promise restart within 15 minutes
H100_CENTS = 390  # rate 3.90 USD per gpu_hour when sku == "H100-80G"
OTHER_CENTS = 160  # rate 1.60 USD per gpu_hour
DELAY_CENTS = 210  # credit 2.10 USD per gpu_hour × gpus × (replacement_wait − 15 minutes)
RUN_CAP_CENTS = 150_00  # cap credits at 150 USD per run
MONTH_CAP_CENTS = 5000_00  # cap credits at 5000 USD per month
LOST = ("reclaimed", "failed")
ENDS = ("released", "reclaimed", "failed")

#: Variants for the K-contract step: (name, increment, minimum or None, H100 rate, spot rate or
#: None for ``trace.price``, run cap). Contract i > 0 is variant (i − 1) mod 4.
VARIANTS: tuple[tuple[str, str, str | None, str, str | None, str], ...] = (
    ("per-second", "1 second", None, "4.25", None, "30% of gross"),
    ("per-hour", "1 hour", "1 hour", "3.50", "2.45", "500 USD"),
    ("five-minutes", "5 minutes", "5 minutes", "2.95", None, "10% of gross"),
    ("list-price", "1 minute", "1 minute", "4.10", "2.60", "20 USD"),
)


def contract_text(i: int) -> str:
    """Contract ``i`` of the K-contract step: 0 is :data:`CONTRACT`, then the variants.

    >>> contract_text(1).splitlines()[0]
    'contract "bench-1-per-second" {'
    """
    if i == 0:
        return CONTRACT
    name, increment, minimum, h100, spot, run_cap = VARIANTS[(i - 1) % len(VARIANTS)]
    spot_rate = f"{spot} USD" if spot else "trace.price"
    lines = [
        f'contract "bench-{i}-{name}" {{',
        "  currency USD",
        f"  rate {spot_rate} per gpu_hour when capacity == spot",
        f'  rate {h100} USD per gpu_hour when sku == "H100-80G"',
        "  rate 1.75 USD per gpu_hour",
        f"  billing increment {increment}",
        *([f"  billing minimum {minimum}"] if minimum else []),
        "  promise reclaim notice 2 minutes",
        "  promise restart within 30 minutes",
        '  exclude "reclaimed early" allocation',
        "    when end_reason == reclaimed and runtime < 30 minutes",
        '  exclude "replay after short notice" replayed_time',
        "    when end_reason == reclaimed and notice_lead < promised_notice",
        '  credit "replayed work" 50% of replayed_cost when end_reason == failed',
        '  credit "slow replacement" 5% of charge when replacement_wait > promised_restart',
        f"  cap credits at {run_cap} per run",
        "  cap credits at 20000 USD per contract",
        "}",
    ]
    return "\n".join(lines) + "\n"


def terms_text(contracts: int) -> str:
    return "\n".join(contract_text(i) for i in range(contracts))


# --------------------------------------------------------------------------- edge cases

#: When the edge-case runs start: inside the generated trace's span, so they share its months.
EDGE_T0 = datetime(2025, 2, 10, tzinfo=UTC)
SCHEDULER_EVENTS = ("requested", "started", "notice", "reclaimed", "released", "failed")

#: Runs appended to the generated trace for cases the generator does not make, with their gross
#: and their credit lines before caps, in cents, computed by hand (design §4–§6; rates: spot
#: with a price → the price, else H100 3.90, else 1.60 USD per GPU-hour).
EDGE_EXPECTED: dict[str, tuple[int, int]] = {
    # Two notices, 60 s and 15 s before the reclaim: the lead counts from the first, 60 s ≥
    # 30 s, so nothing is excluded (from the last, 21 min of replay would be).
    # a01: 8 GPUs × 2 h × 2.50 = 40.00; replaced 20 min later: 10% × 40.00 = 4.00 and
    # 2.10 × 8 × 5/60 h = 1.40. a02: 8 × 1 h × 3.90 = 31.20.
    # Gross 40.00 + 31.20 = 71.20; credits 4.00 + 1.40 = 5.40.
    "edge-01": (71_20, 5_40),
    # Notice 10 s before the reclaim at 95 min: the replay since the valid checkpoint at 70
    # min (the invalid one at 90 does not count) is excluded, 25 min, leaving 70 min:
    # 4 × 70/60 h × 1.50 = 7.00. a02 starts at the very end of a01 (wait 0 s, no credit):
    # 4 × 35/60 h × 1.50 = 3.50. Gross 10.50.
    "edge-02": (10_50, 0),
    # A zero-length failed allocation (billable 0, charge 0) is replaced 30 min later (by
    # a02, not by itself): 2.10 × 8 × 15/60 h = 4.20. a02: 8 × 1 h × 3.90 = 31.20.
    "edge-03": (31_20, 4_20),
    # A zero-length failed allocation and another starting at the same instant: wait 0 s, no
    # credit. a02: 1 × 1 h × 1.60 = 1.60.
    "edge-04": (1_60, 0),
    # Two overlapping nodes. a01 is reclaimed with no notice (lead 0 s < 30 s) and the last
    # checkpoint predates its start, so its whole 120 min is replay, excluded: charge 0; a03
    # starts 40 min after a01's end: 2.10 × 8 × 25/60 h = 7.00 (10% of 0 is 0).
    # a02: 120.5 min → 121 min: 8 × 121/60 h × 3.00 = 48.40. a03: 8 × 1 h × 3.00 = 24.00.
    # Gross 48.40 + 24.00 = 72.40.
    "edge-05": (72_40, 7_00),
    # Reclaimed after 50 min on 28 February (under an hour: wholly excluded), replaced 30 min
    # later on 1 March: 2.10 × 2 × 15/60 h = 1.05. a02: 2 × 1 h × 1.60 = 3.20. The run
    # settles in March, the month its last allocation ends.
    "edge-06": (3_20, 1_05),
    # Credits above gross: a01 is wholly excluded and replaced 180 min later:
    # 2.10 × 8 × 165/60 h = 46.20; a02 runs 10 min: 8 × 10/60 h × 1.60 = 2.1333… → 2.13.
    # (The run's gross then caps its credits at 2.13.)
    "edge-07": (2_13, 46_20),
    # Spot without a price falls through to 1.60; 200 s → 4 min → the 10 min minimum:
    # 1 × 10/60 h × 1.60 = 0.2666… → 0.27.
    "edge-08": (27, 0),
    # A run that never got an allocation: nothing to bill.
    "edge-09": (0, 0),
    # Half a cent: 1 × 10/60 h × 1.59 = 0.265 → 0.27, half away from zero.
    "edge-10": (27, 0),
    # Notice 10 s before the reclaim at 70 min, and a valid checkpoint exactly at the reclaim
    # ("at or before" the end): no replay, nothing excluded: 1 × 70/60 h × 1.60 = 1.8666… →
    # 1.87 (with only the checkpoint at 40 min, 30 min would be excluded: 1.07).
    "edge-11": (1_87, 0),
}


def edge_cases(schema: dict[str, pl.DataType]) -> pl.DataFrame:
    """The events of the :data:`EDGE_EXPECTED` runs, with the generator's ``schema``."""
    rows: list[dict[str, Any]] = []

    def ev(run: str, alloc: str | None, minutes: int, event: str, **cols: Any) -> None:
        seconds = cols.pop("seconds", 0)
        ts = EDGE_T0 + timedelta(minutes=minutes, seconds=seconds)
        rows.append(
            {
                "run_id": run,
                "alloc_id": f"{run}-{alloc}" if alloc else None,
                "ts": ts,
                "source": "scheduler" if event in SCHEDULER_EVENTS else "job",
                "event": event,
                **cols,
            }
        )

    def start(
        run: str,
        alloc: str,
        minutes: int,
        gpus: int,
        sku: str,
        capacity: str,
        price: str | None = None,
        seconds: int = 0,
    ) -> None:
        cols = {"gpus": gpus, "sku": sku, "zone": "us-east-1a", "capacity": capacity}
        price_value = Decimal(price) if price else None
        ev(run, alloc, minutes, "started", seconds=seconds, price=price_value, **cols)

    h100, a100 = "H100-80G", "A100-80G"
    for run in EDGE_EXPECTED:
        ev(run, None, 0, "requested")
    r = "edge-01"
    start(r, "a01", 1, 8, h100, "spot", "2.50")
    ev(r, None, 100, "checkpoint", step=1000, valid=True)
    ev(r, "a01", 110, "checkpoint", step=1100, valid=False)
    ev(r, "a01", 120, "notice")
    ev(r, "a01", 120, "notice", seconds=45)
    ev(r, "a01", 121, "reclaimed")
    start(r, "a02", 141, 8, h100, "on_demand")
    ev(r, "a02", 201, "released")
    ev(r, None, 210, "accepted")
    r = "edge-02"
    start(r, "a01", 0, 4, a100, "spot", "1.50")
    ev(r, None, 70, "checkpoint", step=700, valid=True)
    ev(r, None, 90, "checkpoint", step=900, valid=False)
    ev(r, "a01", 94, "notice", seconds=50)
    ev(r, "a01", 95, "reclaimed")
    start(r, "a02", 95, 4, a100, "spot", "1.50")
    ev(r, "a02", 130, "released")
    r = "edge-03"
    start(r, "a01", 10, 8, h100, "on_demand")
    ev(r, "a01", 10, "failed")
    start(r, "a02", 40, 8, h100, "on_demand")
    ev(r, "a02", 100, "released")
    r = "edge-04"
    start(r, "a01", 10, 1, a100, "on_demand")
    ev(r, "a01", 10, "failed")
    start(r, "a02", 10, 1, a100, "on_demand")
    ev(r, "a02", 70, "released")
    r = "edge-05"
    ev(r, None, 0, "checkpoint", step=0, valid=True)
    start(r, "a01", 5, 8, h100, "spot", "3.00")
    start(r, "a02", 5, 8, h100, "spot", "3.00", seconds=30)
    ev(r, "a01", 125, "reclaimed")
    ev(r, "a02", 126, "released")
    start(r, "a03", 165, 8, h100, "spot", "3.00")
    ev(r, "a03", 225, "released")
    r = "edge-06"
    feb28 = (datetime(2025, 2, 28, 23, tzinfo=UTC) - EDGE_T0) // timedelta(minutes=1)
    start(r, "a01", feb28, 2, a100, "on_demand")
    ev(r, "a01", feb28 + 50, "reclaimed")
    start(r, "a02", feb28 + 80, 2, a100, "on_demand")
    ev(r, "a02", feb28 + 140, "released")
    r = "edge-07"
    start(r, "a01", 0, 8, a100, "on_demand")
    ev(r, "a01", 30, "reclaimed")
    start(r, "a02", 210, 8, a100, "on_demand")
    ev(r, "a02", 220, "released")
    r = "edge-08"
    start(r, "a01", 0, 1, a100, "spot")
    ev(r, "a01", 3, "released", seconds=20)
    ev("edge-09", None, 60, "rejected")
    r = "edge-10"
    start(r, "a01", 0, 1, a100, "spot", "1.59")
    ev(r, "a01", 10, "released")
    r = "edge-11"
    start(r, "a01", 0, 1, a100, "on_demand")
    ev(r, None, 40, "checkpoint", step=400, valid=True)
    ev(r, "a01", 69, "notice", seconds=50)
    ev(r, None, 70, "checkpoint", step=700, valid=True)
    ev(r, "a01", 70, "reclaimed")
    return pl.DataFrame(rows, schema=schema)


# --------------------------------------------------------------------------- results

#: Per-run money every evaluating step returns, in integer cents (credits negative).
MONEY_COLUMNS = ("gross", "credits", "cap_cuts", "net")


@dataclass
class Outcome:
    """What one step computed: per-run money (``run_id`` + :data:`MONEY_COLUMNS`; None for the
    floors), metered GPU-microseconds (None for the one-column floor), and the totals the
    engine reports itself (None for the baselines, whose totals are sums of their runs)."""

    runs: pl.DataFrame | None
    metered_gpu_us: int | None
    totals: dict[str, int] | None = None


#: The polars engines the baselines are timed with.
Engine = Literal["streaming", "in-memory"]


def half_up(num: pl.Expr, den: int) -> pl.Expr:
    """``num / den`` rounded half away from zero, for ``num ≥ 0``, exactly in integers."""
    return (2 * num + den) // (2 * den)


# --------------------------------------------------------------------------- (a) floors


def floor_column(path: Path, engine: Engine) -> Outcome:
    """The floor as ``pitfalls.md`` measures it: scan one column and sum it."""
    pl.scan_parquet(path).select(pl.col("gpus").sum()).collect(engine=engine)
    return Outcome(None, None)


def floor_metered(path: Path, engine: Engine) -> Outcome:
    """Metered GPU-time, Σ gpus × (end − start): each allocation's start and end rows are
    matched by one group-by on ``alloc_id``."""
    event, t = pl.col("event"), pl.col("ts").dt.epoch("us")
    started = event == "started"
    per_alloc = (
        pl.scan_parquet(path)
        .select("alloc_id", "ts", "event", "gpus")
        .filter(event.is_in(["started", *ENDS]))
        .group_by("alloc_id")
        .agg(
            gpus=pl.col("gpus").filter(started).first(),
            runtime=t.filter(~started).first() - t.filter(started).first(),
        )
    )
    total = per_alloc.select((pl.col("gpus") * pl.col("runtime")).sum())
    return Outcome(None, int(total.collect(engine=engine).item()))


# --------------------------------------------------------------------------- (b) polars


def polars_baseline(path: Path, engine: Engine) -> Outcome:
    """:data:`CONTRACT` by hand in polars, from the raw events (design §4–§6)."""
    ev = pl.scan_parquet(path).select(
        "run_id", "alloc_id", "ts", "event", "gpus", "sku", "capacity", "price", "valid"
    )
    event = pl.col("event")
    t = pl.col("ts").dt.epoch("us")

    starts = ev.filter(event == "started").select(
        "run_id",
        "alloc_id",
        t.alias("start"),
        "gpus",
        "sku",
        "capacity",
        (pl.col("price") * 100).cast(pl.Int64).alias("price_cents"),  # whole cents (checked)
    )
    ends = ev.filter(event.is_in(ENDS)).select(
        "alloc_id", t.alias("end"), pl.col("ts").alias("end_ts"), event.alias("reason")
    )
    # the lead of a notice counts from the allocation's first notice
    notices = ev.filter(event == "notice").group_by("alloc_id").agg(t.min().alias("notice"))
    # the run's valid checkpoints, with or without an alloc_id (a null `valid` means valid)
    checkpoints = (
        ev.filter((event == "checkpoint") & pl.col("valid").fill_null(True))
        .select("run_id", t.alias("checkpoint"))
        .sort("run_id", "checkpoint")
    )
    # each run's distinct start times, how many allocations start then, and the next one
    start_times = (
        starts.group_by("run_id", "start")
        .agg(pl.len().alias("starting"))
        .sort("run_id", "start")
        .select(
            "run_id",
            pl.col("start").alias("next"),
            "starting",
            pl.when(pl.col("run_id") == pl.col("run_id").shift(-1))
            .then(pl.col("start").shift(-1))
            .alias("after"),
        )
    )
    alloc = (
        starts.join(ends, on="alloc_id", how="inner")
        .join(notices, on="alloc_id", how="left")
        .sort("run_id", "end")
        .join_asof(  # the last valid checkpoint at or before the end
            checkpoints,
            left_on="end",
            right_on="checkpoint",
            by="run_id",
            strategy="backward",
            check_sortedness=False,
        )
        .join_asof(  # the first start at or after the end
            start_times,
            left_on="end",
            right_on="next",
            by="run_id",
            strategy="forward",
            check_sortedness=False,
        )
    )

    reason = pl.col("reason")
    lost = reason.is_in(LOST)
    reclaimed = reason == "reclaimed"
    runtime = pl.col("end") - pl.col("start")
    # the first *other* allocation starting at or after the end: a zero-length allocation
    # finds itself among those starting at its end, unless another starts then too
    itself = (pl.col("next") == pl.col("start")) & (pl.col("starting") == 1)
    next_start = pl.when(itself).then(pl.col("after")).otherwise(pl.col("next"))
    notice_lead = pl.when(reclaimed).then(pl.col("end") - pl.col("notice").fill_null(pl.col("end")))
    replayed = pl.when(lost).then(pl.col("end") - pl.max_horizontal("start", "checkpoint"))
    alloc = alloc.select(
        "run_id",
        "gpus",
        "end_ts",
        runtime.alias("runtime"),
        pl.when(lost).then(next_start - pl.col("end")).alias("wait"),
        # exclusions: the whole allocation, else the replayed time (never below 0)
        pl.when(reclaimed & (runtime < HOUR_US))
        .then(0)
        .when(reclaimed & (notice_lead < NOTICE_US))
        .then(runtime - pl.min_horizontal(replayed, runtime))
        .otherwise(runtime)
        .alias("remaining"),
        # the first rate whose condition holds and whose price is not none
        pl.when((pl.col("capacity") == "spot") & pl.col("price_cents").is_not_null())
        .then(pl.col("price_cents"))
        .when(pl.col("sku") == "H100-80G")
        .then(H100_CENTS)
        .otherwise(OTHER_CENTS)
        .alias("rate"),
    )
    remaining = pl.col("remaining")
    rounded_up = (remaining + (INCREMENT_US - 1)) // INCREMENT_US * INCREMENT_US
    billable = (
        pl.when(remaining > 0).then(pl.max_horizontal(rounded_up, pl.lit(MINIMUM_US))).otherwise(0)
    )
    charge_n = pl.col("rate") * pl.col("gpus") * billable  # cent-µs per hour
    slow = pl.col("wait") > RESTART_US
    delay_n = DELAY_CENTS * pl.col("gpus") * (pl.col("wait") - RESTART_US)
    alloc = alloc.with_columns(charge_n.alias("charge_n")).with_columns(
        half_up(pl.col("charge_n"), HOUR_US).alias("charge"),
        (
            pl.when(slow).then(half_up(pl.col("charge_n"), 10 * HOUR_US)).otherwise(0)
            + pl.when(slow).then(half_up(delay_n, HOUR_US)).otherwise(0)
        ).alias("credit"),
    )

    per_run = alloc.group_by("run_id").agg(
        pl.col("charge").sum().alias("gross"),
        pl.col("credit").sum().alias("pool"),
        (pl.col("gpus") * pl.col("runtime")).sum().alias("metered"),
        pl.col("end_ts").max().dt.strftime("%Y-%m").alias("month"),  # the settlement month
    )
    runs = (
        ev.select("run_id")
        .unique()
        .join(per_run, on="run_id", how="left")
        .with_columns(pl.col("gross", "pool", "metered").fill_null(0))
    )
    # run caps, in order: 150 USD, then the run's gross
    pool = pl.col("pool")
    runs = runs.with_columns((pool - pool.clip(upper_bound=RUN_CAP_CENTS)).alias("cut_run"))
    kept = pool - pl.col("cut_run")
    runs = runs.with_columns((kept - pl.min_horizontal(kept, "gross")).alias("cut_gross"))
    runs = runs.with_columns((pool - pl.col("cut_run") - pl.col("cut_gross")).alias("kept"))
    # the month cap: the cut is shared in proportion to each run's credits, by largest
    # remainder, ties to the smaller run_id
    month_pool = pl.col("kept").sum().over("month")
    month_cut = (month_pool - MONTH_CAP_CENTS).clip(lower_bound=0)
    num = month_cut.cast(pl.Int128) * pl.col("kept")
    divisor = pl.when(month_pool == 0).then(1).otherwise(month_pool)
    runs = runs.with_columns(
        (num // divisor).cast(pl.Int64).alias("base"),
        (num % divisor).alias("rem"),
        month_cut.alias("month_cut"),
    )
    runs = runs.sort(["month", "rem", "run_id"], descending=[False, True, False]).with_columns(
        (pl.col("month_cut") - pl.col("base").sum().over("month")).alias("units"),
        pl.int_range(pl.len()).over("month").alias("rank"),
    )
    share = pl.col("base") + (pl.col("rank") < pl.col("units")).cast(pl.Int64)
    cap_cuts = pl.col("cut_run") + pl.col("cut_gross") + share
    out = runs.select(
        "run_id",
        "gross",
        (-pool).alias("credits"),
        cap_cuts.alias("cap_cuts"),
        (pl.col("gross") - pool + cap_cuts).alias("net"),
        "metered",
    ).collect(engine=engine)
    return Outcome(out.drop("metered"), int(out["metered"].sum()))


# --------------------------------------------------------------------------- (c) DuckDB

DUCKDB_SQL = f"""
WITH ev AS (
  SELECT run_id, alloc_id, ts, epoch_us(ts) AS t, event, gpus, sku, capacity, price, valid
  FROM read_parquet($path)
),
starts AS (
  SELECT run_id, alloc_id, t AS s, gpus, sku, capacity,
         CAST(price * 100 AS BIGINT) AS price_cents              -- whole cents (checked)
  FROM ev WHERE event = 'started'
),
ends AS (
  SELECT alloc_id, t AS e, ts AS end_ts, event AS reason
  FROM ev WHERE event IN ('released', 'reclaimed', 'failed')
),
-- the lead of a notice counts from the allocation's first notice
notices AS (SELECT alloc_id, min(t) AS notice FROM ev WHERE event = 'notice' GROUP BY alloc_id),
-- the run's valid checkpoints, with or without an alloc_id (a null `valid` means valid)
checkpoints AS (
  SELECT run_id, t AS c FROM ev WHERE event = 'checkpoint' AND coalesce(valid, true)
),
-- each run's distinct start times, how many allocations start then, and the next one
start_times AS (
  SELECT run_id, s AS nxt, count(*) AS starting,
         lead(s) OVER (PARTITION BY run_id ORDER BY s) AS after
  FROM starts GROUP BY run_id, s
),
a0 AS (
  SELECT st.*, en.e, en.end_ts, en.reason, n.notice
  FROM starts st JOIN ends en USING (alloc_id) LEFT JOIN notices n USING (alloc_id)
),
a1 AS (
  SELECT a0.*, ck.c
  FROM a0 ASOF LEFT JOIN checkpoints ck ON a0.run_id = ck.run_id AND ck.c <= a0.e
),
a2 AS (
  SELECT a1.*, nx.nxt, nx.starting, nx.after
  FROM a1 ASOF LEFT JOIN start_times nx ON a1.run_id = nx.run_id AND nx.nxt >= a1.e
),
facts AS (
  SELECT run_id, gpus, end_ts, reason, e - s AS runtime,
    -- the first *other* allocation starting at or after the end (see the polars query)
    CASE WHEN reason IN ('reclaimed', 'failed') THEN
      (CASE WHEN nxt = s AND starting = 1 THEN after ELSE nxt END) - e END AS wait,
    CASE WHEN reason = 'reclaimed' THEN e - coalesce(notice, e) END AS notice_lead,
    CASE WHEN reason IN ('reclaimed', 'failed') THEN e - greatest(s, coalesce(c, s)) END
      AS replayed,
    CASE WHEN capacity = 'spot' AND price_cents IS NOT NULL THEN price_cents
         WHEN sku = 'H100-80G' THEN {H100_CENTS} ELSE {OTHER_CENTS} END AS rate
  FROM a2
),
billed AS (
  SELECT *,
    CASE WHEN reason = 'reclaimed' AND runtime < {HOUR_US} THEN 0
         WHEN reason = 'reclaimed' AND notice_lead < {NOTICE_US}
           THEN runtime - least(replayed, runtime)
         ELSE runtime END AS remaining
  FROM facts
),
money AS (
  SELECT *,
    CAST(rate AS HUGEINT) * gpus * CASE WHEN remaining > 0 THEN greatest(
      (remaining + {INCREMENT_US - 1}) // {INCREMENT_US} * {INCREMENT_US}, {MINIMUM_US}
    ) ELSE 0 END AS charge_n                                     -- cent-µs per hour
  FROM billed
),
lines AS (
  SELECT run_id, gpus, runtime, end_ts,
    (2 * charge_n + {HOUR_US}) // {2 * HOUR_US} AS charge,
    CASE WHEN wait > {RESTART_US} THEN
      (2 * charge_n + {10 * HOUR_US}) // {20 * HOUR_US}
      + (2 * CAST({DELAY_CENTS} AS HUGEINT) * gpus * (wait - {RESTART_US}) + {HOUR_US})
        // {2 * HOUR_US}
    ELSE 0 END AS credit
  FROM money
),
per_run AS (
  SELECT run_id, sum(charge) AS gross, sum(credit) AS pool,
         sum(CAST(gpus AS HUGEINT) * runtime) AS metered,
         strftime(max(end_ts), '%Y-%m') AS month                -- the settlement month
  FROM lines GROUP BY run_id
),
all_runs AS (
  SELECT r.run_id, coalesce(gross, 0) AS gross, coalesce(pool, 0) AS pool,
         coalesce(metered, 0) AS metered, month
  FROM (SELECT DISTINCT run_id FROM ev) r LEFT JOIN per_run USING (run_id)
),
-- run caps, in order: 150 USD, then the run's gross
run_cap AS (SELECT *, greatest(pool - {RUN_CAP_CENTS}, 0) AS cut_run FROM all_runs),
gross_cap AS (SELECT *, greatest(pool - cut_run - gross, 0) AS cut_gross FROM run_cap),
after_run AS (SELECT *, pool - cut_run - cut_gross AS kept FROM gross_cap),
-- the month cap, shared by largest remainder, ties to the smaller run_id
months AS (
  SELECT month, sum(kept) AS month_pool, greatest(sum(kept) - {MONTH_CAP_CENTS}, 0) AS month_cut
  FROM after_run GROUP BY month
),
shared AS (
  SELECT r.*, m.month_cut,
    CASE WHEN m.month_pool = 0 THEN 0 ELSE m.month_cut * r.kept // m.month_pool END AS base,
    CASE WHEN m.month_pool = 0 THEN 0 ELSE m.month_cut * r.kept % m.month_pool END AS rem
  FROM after_run r JOIN months m ON r.month IS NOT DISTINCT FROM m.month
),
ranked AS (
  SELECT *,
    month_cut - sum(base) OVER (PARTITION BY month) AS units,
    row_number() OVER (PARTITION BY month ORDER BY rem DESC, run_id) - 1 AS rank
  FROM shared
)
SELECT run_id,
  CAST(gross AS BIGINT) AS gross,
  CAST(-pool AS BIGINT) AS credits,
  CAST(cut_run + cut_gross + base + (rank < units)::INT AS BIGINT) AS cap_cuts,
  CAST(gross - pool + cut_run + cut_gross + base + (rank < units)::INT AS BIGINT) AS net,
  metered
FROM ranked
"""


def duckdb_baseline(path: Path) -> Outcome:
    """:data:`CONTRACT` by hand as one DuckDB query, from the raw events."""
    # imported here, in the child process that measures this step, so its
    # import time and memory count only where they are measured
    import duckdb  # noqa: PLC0415

    con = duckdb.connect()
    try:
        con.execute("SET TimeZone = 'UTC'")  # months of TIMESTAMPTZ values, in UTC
        table = con.sql(DUCKDB_SQL, params={"path": str(path)}).to_arrow_table()
    finally:
        con.close()
    out = pl.from_arrow(table)
    assert isinstance(out, pl.DataFrame)
    runs = out.select("run_id", *(pl.col(c).cast(pl.Int64) for c in MONEY_COLUMNS))
    return Outcome(runs, int(out["metered"].sum()))


# --------------------------------------------------------------------------- (d), (e) engine


def engine_outcome(evaluation: Any) -> Outcome:
    """The :data:`CONTRACT` results of a ``contractlang`` evaluation."""
    result = evaluation.contract("bench")
    runs = result.runs.select(
        "run_id",
        pl.col("gross_minor").alias("gross"),
        (-pl.col("credit_lines_minor")).alias("credits"),
        pl.col("cap_cuts_minor").alias("cap_cuts"),
        pl.col("net_minor").alias("net"),
    ).with_columns(pl.col(c).cast(pl.Int64) for c in MONEY_COLUMNS)
    t = result.totals
    totals = {
        "gross": t.gross_minor,
        "credits": t.credits_minor,
        "cap_cuts": t.cap_cuts_minor,
        "net": t.net_minor,
    }
    return Outcome(runs, int(t.metered_gpu_us), totals)


def engine_evaluate(path: Path, contracts: int) -> Outcome:
    """``contractlang.evaluate.evaluate`` end to end, as the CLI calls it."""
    # imported here, in the child process that measures this step, so its
    # import time and memory count only where they are measured
    from contractlang.pipeline.evaluation import EvaluateOptions, evaluate  # noqa: PLC0415
    from contractlang.pipeline.language import terms_from_text  # noqa: PLC0415

    terms = terms_from_text(terms_text(contracts), "bench.spot")
    # as the command line calls it without --format json: shards chosen automatically (one
    # at this size), the events let go once the facts are derived, no trace digest (the JSON
    # document's; bench_digest.py measures it)
    options = EvaluateOptions(shards=None, ledger=False, keep_events=False, digest=False)
    result = evaluate(terms, path, options)
    return engine_outcome(result)


def engine_phases(path: Path, contracts: int, phases: dict[str, list[float]]) -> Outcome:
    """The same as :func:`engine_evaluate`, one phase at a time, appending each phase's
    seconds to ``phases``. The facts are collected once, together (``Facts.collect``), and
    handed to ``evaluate_facts`` as frames."""
    # imported here, in the child process that measures this step, so its
    # import time and memory count only where they are measured
    from contractlang.pipeline.evaluation import evaluate_facts  # noqa: PLC0415
    from contractlang.pipeline.language import terms_from_text  # noqa: PLC0415
    from contractlang.trace import Facts, derive_facts, load_trace  # noqa: PLC0415

    t0 = time.perf_counter()
    terms = terms_from_text(terms_text(contracts), "bench.spot")
    t1 = time.perf_counter()
    trace = load_trace(path)
    t2 = time.perf_counter()
    allocations, runs = derive_facts(trace).collect()
    t3 = time.perf_counter()
    evaluation = evaluate_facts(terms, trace, Facts(allocations.lazy(), runs.lazy()))
    t4 = time.perf_counter()
    for name, seconds in (
        ("parse+check terms", t1 - t0),
        ("load+validate trace", t2 - t1),
        ("derive facts", t3 - t2),
        ("evaluate", t4 - t3),
    ):
        phases.setdefault(name, []).append(seconds)
    return engine_outcome(evaluation)


# --------------------------------------------------------------------------- child process


def peak_rss_kb() -> int:
    """This process's peak resident memory in kB: ``VmHWM`` on Linux. (Not ``ru_maxrss``:
    Linux carries it over from the parent through fork and exec, so a child would report the
    parent's peak.)"""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # kB on Linux, bytes on macOS


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def run_step(step: str, path: Path, out: Path, repeat: int, contracts: int) -> None:
    """Child mode: run ``step`` ``repeat`` times; write its timings to ``out/STEP.json`` and
    its per-run money to ``out/STEP.parquet``."""
    phases: dict[str, list[float]] = {}
    steps: dict[str, Callable[[], Outcome]] = {
        "floor-column": lambda: floor_column(path, "streaming"),
        "floor": lambda: floor_metered(path, "streaming"),
        "polars": lambda: polars_baseline(path, "streaming"),
        "polars-in-memory": lambda: polars_baseline(path, "in-memory"),
        "duckdb": lambda: duckdb_baseline(path),
        "engine": lambda: engine_evaluate(path, 1),
        "engine-phases": lambda: engine_phases(path, 1, phases),
        "engine-k": lambda: engine_evaluate(path, contracts),
        "engine-k-phases": lambda: engine_phases(path, contracts, phases),
    }
    fn = steps[step]
    # import what the step uses before taking the base memory
    if step == "duckdb":
        # imported here, in the child process that measures this step, so its
        # import time and memory count only where they are measured
        import duckdb  # noqa: PLC0415, F401
    if step.startswith("engine"):
        # the first parse in a process builds the grammar (about 0.2 s): not timed
        # imported here, in the child process that measures this step, so its
        # import time and memory count only where they are measured
        from contractlang.pipeline.language import terms_from_text  # noqa: PLC0415

        terms_from_text('contract "warm-up" { currency USD rate 1 USD per gpu_hour }')
    base_kb = peak_rss_kb()
    wall: list[float] = []
    cpu: list[float] = []
    outcome = None
    for _ in range(repeat):
        c0, t0 = cpu_seconds(), time.perf_counter()
        outcome = fn()
        wall.append(time.perf_counter() - t0)
        cpu.append(cpu_seconds() - c0)
    assert outcome is not None
    if outcome.runs is not None:
        outcome.runs.sort("run_id").write_parquet(out / f"{step}.parquet")
    report = {
        "wall": wall,
        "cpu": cpu,
        "phases": phases,
        "rss_base_kb": base_kb,
        "rss_peak_kb": peak_rss_kb(),
        "metered_gpu_us": outcome.metered_gpu_us,
        "totals": outcome.totals,
    }
    (out / f"{step}.json").write_text(json.dumps(report))


# --------------------------------------------------------------------------- parent

PACKAGE = Path(__file__).resolve().parents[1] / "contractlang"


def compile_bytecode() -> str:
    """Compile contractlang's modules to bytecode, untimed, as installing a wheel does, so
    every child imports them as an installed copy would; returns a line saying so.

    (This sandbox sets ``PYTHONDONTWRITEBYTECODE=1`` and the project is an editable install:
    without this, every child compiled from source every module it imported, 0.15–0.25 s of
    each engine step's time, which no installed copy pays. Python still reads bytecode that
    is there under that setting; it only writes none.)"""
    if not compileall.compile_dir(PACKAGE, quiet=1):  # a read-only checkout, say
        return f"could not write bytecode in {PACKAGE}: each child compiles what it imports"
    return "contractlang's bytecode compiled first (untimed), as a wheel's install does"


@dataclass
class StepReport:
    """A step's measurements, read back from its child process."""

    step: str
    wall: list[float]
    cpu: list[float]
    phases: dict[str, list[float]]
    rss_base_gb: float
    rss_peak_gb: float
    metered_gpu_us: int | None
    totals: dict[str, int] | None
    runs: pl.DataFrame | None

    @property
    def median(self) -> float:
        return statistics.median(self.wall)


STEPS = {
    "floor-column": "(a0) floor: polars scan, sum of one column",
    "floor": "(a)  floor: polars scan, metered GPU-time",
    "polars": "(b)  hand-written polars, streaming engine",
    "polars-in-memory": "(b') hand-written polars, in-memory engine",
    "duckdb": "(c)  hand-written DuckDB SQL",
    "engine": "(d)  contractlang evaluate, 1 contract",
    "engine-phases": "(d') the same, phase by phase",
    "engine-k": "(e)  contractlang evaluate, {k} contracts",
    "engine-k-phases": "(e') the same, phase by phase",
}


def spawn(step: str, trace: Path, out: Path, contracts: int) -> StepReport:
    """Run ``step`` once in a fresh child process of this script and read back its report."""
    cmd = [sys.executable, __file__, "--step", step, "--trace", str(trace), "--out", str(out)]
    cmd += ["--repeat", "1", "--contracts", str(contracts)]
    done = subprocess.run(cmd, check=False)
    if done.returncode:
        print(f"\nstep `{step}` failed (exit {done.returncode})", file=sys.stderr)
        sys.exit(1)
    report = json.loads((out / f"{step}.json").read_text())
    runs_path = out / f"{step}.parquet"
    return StepReport(
        step=step,
        wall=report["wall"],
        cpu=report["cpu"],
        phases=report["phases"],
        rss_base_gb=report["rss_base_kb"] / 1024**2,
        rss_peak_gb=report["rss_peak_kb"] / 1024**2,
        metered_gpu_us=report["metered_gpu_us"],
        totals=report["totals"],
        runs=pl.read_parquet(runs_path) if runs_path.exists() else None,
    )


def merge(first: StepReport | None, more: StepReport) -> StepReport:
    """One step's rounds together: their timings, the largest peak, and the results (which
    must be the same every time)."""
    if first is None:
        return more
    same = (first.runs is None and more.runs is None) or (
        first.runs is not None and more.runs is not None and first.runs.equals(more.runs)
    )
    if not same or (first.metered_gpu_us, first.totals) != (more.metered_gpu_us, more.totals):
        print(f"step `{first.step}` gave different results in two rounds", file=sys.stderr)
        sys.exit(1)
    phases = {k: v + more.phases.get(k, []) for k, v in first.phases.items()}
    return StepReport(
        step=first.step,
        wall=first.wall + more.wall,
        cpu=first.cpu + more.cpu,
        phases=phases,
        rss_base_gb=max(first.rss_base_gb, more.rss_base_gb),
        rss_peak_gb=max(first.rss_peak_gb, more.rss_peak_gb),
        metered_gpu_us=first.metered_gpu_us,
        totals=first.totals,
        runs=first.runs,
    )


def run_rounds(trace: Path, out: Path, args: argparse.Namespace) -> dict[str, StepReport]:
    """``--repeat`` rounds, each running every step once in a fresh process: load from other
    processes on the machine then falls on every step alike, not on one step's repeats."""
    reports: dict[str, StepReport | None] = dict.fromkeys(STEPS)
    for n in range(args.repeat):
        print(f"round {n + 1} of {args.repeat}:", end="", flush=True, file=sys.stderr)
        for step in STEPS:
            print(f" {step}", end="", flush=True, file=sys.stderr)
            reports[step] = merge(reports[step], spawn(step, trace, out, args.contracts))
        print(file=sys.stderr)
    return {step: r for step, r in reports.items() if r is not None}


def totals_of(runs: pl.DataFrame) -> dict[str, int]:
    return {c: int(runs[c].sum()) for c in MONEY_COLUMNS}


def compare(reference: StepReport, others: list[StepReport]) -> list[str]:
    """Every difference between ``reference`` and ``others`` in metered GPU-time, totals and
    each run's money; empty when they all agree exactly."""
    problems: list[str] = []
    assert reference.runs is not None
    ref_totals = reference.totals or totals_of(reference.runs)
    if ref_totals != totals_of(reference.runs):
        problems.append(
            f"{reference.step}: totals {ref_totals} are not the sums of its runs "
            f"{totals_of(reference.runs)}"
        )
    for other in others:
        if other.metered_gpu_us is not None and other.metered_gpu_us != reference.metered_gpu_us:
            problems.append(
                f"{other.step}: metered GPU-µs {other.metered_gpu_us} ≠ "
                f"{reference.step}: {reference.metered_gpu_us}"
            )
        if other.runs is None:
            continue
        totals = other.totals or totals_of(other.runs)
        if totals != ref_totals:
            problems.append(f"{other.step}: totals {totals} ≠ {reference.step}: {ref_totals}")
        ref, oth = reference.step, other.step
        joined = reference.runs.rename({c: f"{c}:{ref}" for c in MONEY_COLUMNS}).join(
            other.runs.rename({c: f"{c}:{oth}" for c in MONEY_COLUMNS}),
            on="run_id",
            how="full",
            coalesce=True,
        )
        differ = pl.any_horizontal(
            pl.col(f"{c}:{ref}").ne_missing(pl.col(f"{c}:{oth}")) for c in MONEY_COLUMNS
        )
        bad = joined.filter(differ).sort("run_id")
        if bad.height:
            with pl.Config(tbl_cols=-1, tbl_width_chars=200):
                problems.append(
                    f"{oth}: {bad.height} run(s) differ from {ref}; the first:\n{bad.head(5)}"
                )
    return problems


def check_edge_cases(reports: list[StepReport]) -> list[str]:
    """Each step's gross and credits of the :data:`EDGE_EXPECTED` runs against the hand
    computation."""
    expected = pl.DataFrame(
        [(run, gross, -credits) for run, (gross, credits) in EDGE_EXPECTED.items()],
        schema={"run_id": pl.String, "gross:hand": pl.Int64, "credits:hand": pl.Int64},
        orient="row",
    )
    problems = []
    for r in reports:
        if r.runs is None:
            continue
        got = expected.join(r.runs, on="run_id", how="left")
        bad = got.filter(
            pl.col("gross").ne_missing(pl.col("gross:hand"))
            | pl.col("credits").ne_missing(pl.col("credits:hand"))
        )
        if bad.height:
            with pl.Config(tbl_cols=-1, tbl_width_chars=200):
                problems.append(f"{r.step}: edge cases differ from the hand computation:\n{bad}")
    return problems


def make_trace(runs: int, seed: int, path: Path) -> tuple[int, int]:
    """Generate the trace with the edge cases and write it to ``path``; returns the numbers
    of events and allocations."""
    # imported here, in the child process that measures this step, so its
    # import time and memory count only where they are measured
    from contractlang.trace import generate_trace, write_trace  # noqa: PLC0415
    from contractlang.trace.generate import GENERATED_SCHEMA  # noqa: PLC0415

    t0 = time.perf_counter()
    trace = pl.concat([generate_trace(runs, seed=seed), edge_cases(GENERATED_SCHEMA)])
    t1 = time.perf_counter()
    write_trace(trace, path)
    t2 = time.perf_counter()
    # the baselines read `price` as whole cents
    price = trace.schema["price"]
    if not (isinstance(price, pl.Decimal) and (price.scale or 0) <= 2):
        raise SystemExit(f"the baselines need `price` in whole cents, not {price}")
    events, allocations = trace.height, int((trace["event"] == "started").sum())
    print(
        f"trace: {runs:,} runs (+{len(EDGE_EXPECTED)} edge cases), {allocations:,} allocations, "
        f"{events:,} events, {path.stat().st_size / 1e6:.0f} MB of Parquet; generated in "
        f"{t1 - t0:.1f} s and written in {t2 - t1:.1f} s (not timed)",
        file=sys.stderr,
    )
    return events, allocations


def ratio(num: float, den: float) -> str:
    return f"{num / den:5.2f}×" if den > 0 else "   n/a"


def print_table(
    reports: dict[str, StepReport],
    args: argparse.Namespace,
    events: int,
    allocations: int,
    load: tuple[float, float],
) -> None:
    print(
        f"\n{args.runs:,} runs, {allocations:,} allocations, {events:,} events; "
        f"{os.cpu_count()} cores; polars {pl.__version__}; median of {args.repeat}; "
        f"load average {load[0]:.1f} before, {load[1]:.1f} after\n"
    )
    head = f"{'step':<46} {'median s':>9} {'min s':>7} {'max s':>7} {'CPU s':>7} {'peak GB':>8}"
    print(head + f" {'base GB':>8}")
    for step, label in STEPS.items():
        r = reports[step]
        print(
            f"{label.format(k=args.contracts):<46} {r.median:9.3f} {min(r.wall):7.3f} "
            f"{max(r.wall):7.3f} {statistics.median(r.cpu):7.2f} {r.rss_peak_gb:8.2f} "
            f"{r.rss_base_gb:8.2f}"
        )
        for phase, seconds in r.phases.items():
            print(
                f"{'       ' + phase:<46} {statistics.median(seconds):9.3f} "
                f"{min(seconds):7.3f} {max(seconds):7.3f}"
            )

    def ratios(num: str, den: str | tuple[str, str], phase: str | None = None) -> str:
        """The ratio of two steps' medians, and of their minimums (less sensitive to other
        processes on the machine)."""
        pair = []
        for pick in (statistics.median, min):
            dens = den if isinstance(den, tuple) else (den,)
            if phase:
                top = pick(reports[num].phases[phase])
                bottom = min(pick(reports[d].phases[phase]) for d in dens)
            else:
                top = pick(reports[num].wall)
                bottom = min(pick(reports[d].wall) for d in dens)
            pair.append(ratio(top, bottom))
        return f"{pair[0]} {pair[1]}"

    k = args.contracts
    print(f"\n{'ratio':<46} {'median':>7} {'min':>6}   target")
    best_polars = ("polars", "polars-in-memory")
    rows: list[tuple[str, str, str | tuple[str, str], str | None, str]] = [
        ("(d)/(b)   engine ÷ faster hand-written polars", "engine", best_polars, None, "≤ 1.5×"),
        ("(d)/(c)   engine ÷ DuckDB", "engine", "duckdb", None, "≤ 1×"),
        ("(d)/(a)   engine ÷ floor", "engine", "floor", None, ""),
        (f"(e)/(d)   {k} contracts ÷ 1, end to end", "engine-k", "engine", None, "< 2×"),
        (f"(e')/(d') {k} contracts ÷ 1, evaluate phase", "engine-k-phases", "engine-phases",
         "evaluate", ""),
    ]  # fmt: skip
    for label, num, den, which, target in rows:
        print(f"{label:<46} {ratios(num, den, which)}   {target}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description="Time contractlang evaluate against hand-written polars and DuckDB queries."
    )
    parser.add_argument("--runs", type=int, default=100_000, help="runs to generate")
    parser.add_argument("--contracts", type=int, default=5, help="contracts in step (e)")
    parser.add_argument("--repeat", type=int, default=3, help="timings per step (median)")
    parser.add_argument("--seed", type=int, default=1, help="the generator's seed")
    parser.add_argument("--keep", type=Path, help="keep the trace and results in this folder")
    parser.add_argument("--step", choices=list(STEPS), help=argparse.SUPPRESS)
    parser.add_argument("--trace", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.step:
        run_step(args.step, args.trace, args.out, args.repeat, args.contracts)
        return
    if args.runs < 1 or args.contracts < 1 or args.repeat < 1:
        parser.error("--runs, --contracts and --repeat must be at least 1")

    with tempfile.TemporaryDirectory(prefix="bench-evaluate-") as tmp:
        out = args.keep or Path(tmp)
        out.mkdir(parents=True, exist_ok=True)
        trace_path = out / "trace.parquet"
        events, allocations = make_trace(args.runs, args.seed, trace_path)
        print(compile_bytecode(), file=sys.stderr)
        load_before = os.getloadavg()[0]
        reports = run_rounds(trace_path, out, args)
        load_after = os.getloadavg()[0]

    engine = reports["engine"]
    others = [reports[s] for s in STEPS if s != "engine"]
    problems = compare(engine, others) + check_edge_cases(list(reports.values()))
    print_table(reports, args, events, allocations, (load_before, load_after))
    if problems:
        print("\nTHE RESULTS DIFFER, so the ratios above mean nothing:", file=sys.stderr)
        for p in problems:
            print(f"- {p}", file=sys.stderr)
        sys.exit(1)
    assert engine.totals is not None
    assert engine.runs is not None
    t = {k: Decimal(v).scaleb(-2) for k, v in engine.totals.items()}
    print(
        f"\nall steps agree exactly on every one of {engine.runs.height:,} runs, and on the "
        f"edge cases: gross {t['gross']}, credits {t['credits']}, cap cuts {t['cap_cuts']}, "
        f"net {t['net']} USD; metered {Decimal(engine.metered_gpu_us or 0) / 3_600_000_000:.6f} "
        "GPU-hours"
    )


if __name__ == "__main__":
    main()
