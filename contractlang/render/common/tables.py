"""Frames shaped for the files they are written to."""

from __future__ import annotations

import re
from collections.abc import Collection
from pathlib import Path

import polars as pl

#: The characters a spreadsheet reads as the start of a formula, or strips before one (the
#: OWASP guidance on CSV injection): a text cell that begins with one is written after a `'`.
FORMULA_STARTS = "=+-@\t\r"
_FORMULA = "^[" + re.escape(FORMULA_STARTS) + "]"
_NUMBER = r"^[+-]?(?:\d+\.?\d*|\.\d+)$"


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


def spreadsheet_safe(frame: pl.DataFrame, numbers: Collection[str] = ()) -> pl.DataFrame:
    """``frame`` as a CSV file people open in a spreadsheet may hold it: every text cell that
    begins with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return gets a leading ``'``, so
    the spreadsheet shows it as text instead of running it as a formula. Numbers are never
    changed: neither number columns nor, in the text columns named in ``numbers`` (numbers
    written as text, such as signed deltas), the cells that are plain numbers. Trace files,
    which contractlang reads back, are never written through this.

    >>> frame = pl.DataFrame({"run_id": ["=1+1", "r1"], "delta": ["-1.50", "@x"], "n": [-1, 2]})
    >>> spreadsheet_safe(frame, numbers=["delta"]).rows()
    [("'=1+1", '-1.50', -1), ('r1', "'@x", 2)]
    """
    texts = [
        c
        for c, t in frame.schema.items()
        if t == pl.String or isinstance(t, (pl.Categorical, pl.Enum))
    ]
    if not texts:
        return frame
    risky = frame.select(pl.col(c).cast(pl.String).str.contains(_FORMULA).any() for c in texts)
    changed = [c for c in texts if risky.get_column(c).item()]
    if not changed:
        return frame
    return frame.with_columns(_escaped(c, c in numbers) for c in changed)


def _escaped(column: str, numbers: bool) -> pl.Expr:
    text = pl.col(column).cast(pl.String)
    risky = text.str.contains(_FORMULA)
    if numbers:
        risky = risky & ~text.str.contains(_NUMBER)
    return pl.when(risky).then(pl.lit("'") + text).otherwise(text).alias(column)
