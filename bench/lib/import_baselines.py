"""What a careful engineer would write in an afternoon with polars to read the import
benchmark's files: the same columns read, nulls, decimals, times and run keys mapped to the
same trace columns, but none of the checks an import makes."""

from __future__ import annotations

from pathlib import Path

import polars as pl


def focus_polars(path: Path, key: str = "slurm_job") -> pl.DataFrame:
    """The hand-written baseline: FOCUS CSV → invoice lines, no checks."""

    def val(name: str) -> pl.Expr:
        c = pl.col(name).str.strip_chars()
        return pl.when(c.str.to_uppercase().is_in(["", "NULL"])).then(None).otherwise(c)

    money = pl.Decimal(38, 18)
    categories = {c.lower(): c for c in ("Usage", "Purchase", "Tax", "Credit", "Adjustment")}
    run = val("Tags").str.json_path_match(f"$.{key}")
    start = val("ChargePeriodStart").str.to_datetime(
        "%Y-%m-%d %H:%M:%S", time_zone="UTC", strict=False
    )
    category = val("ChargeCategory").str.to_lowercase()
    credit = (category == "credit") | val("BilledCost").str.starts_with("-")
    lf = pl.scan_csv(path, infer_schema=False)
    out = lf.select(
        pl.coalesce(run, pl.lit("unattributed")).alias("run_id"),
        pl.lit(None, dtype=pl.String).alias("alloc_id"),
        start.alias("ts"),
        pl.lit("invoice").alias("source"),
        pl.when(credit).then(pl.lit("credit")).otherwise(pl.lit("charge")).alias("event"),
        val("BilledCost").cast(money).alias("amount"),
        category.replace_strict(categories, default=None).alias("charge_category"),
        val("EffectiveCost").cast(money, strict=False).alias("effective_cost"),
        val("ListCost").cast(money, strict=False).alias("list_cost"),
        val("PricingCategory").alias("pricing_category"),
        val("BillingCurrency").alias("billing_currency"),
        val("ResourceId").alias("resource_id"),
        pl.int_range(1, pl.len() + 1).alias("source_row"),
    )
    return out.collect()


def sacct_polars(path: Path) -> pl.DataFrame:
    """The hand-written baseline: sacct → allocation events, no checks."""
    lf = pl.scan_csv(path, separator="|", quote_char=None, infer_schema=False)
    jobs = lf.filter(~pl.col("JobID").str.contains(".", literal=True)).with_row_index("row", 1)

    def ts(name: str) -> pl.Expr:
        return (
            pl.col(name)
            .str.to_datetime("%Y-%m-%dT%H:%M:%S", strict=False)
            .dt.replace_time_zone("America/New_York", ambiguous="earliest", non_existent="null")
            .dt.convert_time_zone("UTC")
        )

    jobs = jobs.with_columns(
        gpus=pl.col("AllocTRES").str.extract(r"gres/gpu=([0-9]+)").cast(pl.Int64),
        attempt=pl.col("row").rank("ordinal").over("JobID"),
        submit=ts("Submit"),
        start=ts("Start"),
        end=ts("End"),
        reason=pl.col("State")
        .str.split(" ")
        .list.first()
        .replace_strict({"PREEMPTED": "reclaimed", "NODE_FAIL": "failed"}, default="released"),
    ).with_columns(alloc_id=pl.format("{}#{}", "JobID", "attempt"))
    base = [pl.col("JobID").alias("run_id"), "alloc_id", pl.lit("scheduler").alias("source")]
    none = pl.lit(None, pl.Int64)
    parts = [
        jobs.select(*base, "row", ts=pl.col("submit"), event=pl.lit("requested"), gpus=none),
        jobs.select(*base, "row", ts=pl.col("start"), event=pl.lit("started"), gpus="gpus"),
        jobs.select(*base, "row", ts=pl.col("end"), event=pl.col("reason"), gpus=none),
    ]
    return pl.concat(parts).sort("row", maintain_order=True).collect()
