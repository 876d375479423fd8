"""The bench contract by hand in polars, from the raw events (:data:`lib.contract.CONTRACT`),
and the floors: what a polars scan of the same file costs at the least."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import polars as pl

from lib.contract import (
    DELAY_CENTS,
    ENDS,
    H100_CENTS,
    HOUR_US,
    INCREMENT_US,
    LOST,
    MINIMUM_US,
    MONTH_CAP_CENTS,
    NOTICE_US,
    OTHER_CENTS,
    RESTART_US,
    RUN_CAP_CENTS,
)
from lib.outcome import Outcome

#: The polars engines the baselines are timed with.
Engine = Literal["streaming", "in-memory"]


def half_up(num: pl.Expr, den: int) -> pl.Expr:
    """``num / den`` rounded half away from zero, for ``num ≥ 0``, exactly in integers."""
    return (2 * num + den) // (2 * den)


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


def polars_baseline(path: Path, engine: Engine) -> Outcome:
    """:data:`CONTRACT` by hand in polars, from the raw events (the facts of
    ``docs/trace.md``, the order of evaluation of ``docs/evaluate.md``)."""
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
