"""Frames shaped for the files they are written to."""

from __future__ import annotations

from pathlib import Path

import polars as pl


def csv_ready(frame: pl.DataFrame, path: Path) -> pl.DataFrame:
    """For a `.csv` path, durations become exact seconds with six decimals (CSV has no
    duration type); other formats keep the frame as it is."""
    if path.suffix.lower() != ".csv":
        return frame
    micro = pl.Decimal(38, 6)
    return frame.with_columns(
        (pl.col(c).dt.total_microseconds().cast(micro) / pl.lit(1_000_000, dtype=micro)).alias(c)
        for c, t in frame.schema.items()
        if isinstance(t, pl.Duration)
    )
