"""Vectorised reading of an export's text columns: values stripped and nulls found as Python
would (``str.strip``, ``NULL``), Python functions applied once per distinct value and joined
back, and the notes of many rows gathered at once.

The adapters read columns, not rows: each check is a polars expression over every row, and
what only Python can decide (a JSON object, a time zone, a spelling) is decided once for each
distinct value — a month of hourly lines has a few hundred distinct times, not a million.

>>> values, written = value_series(pl.Series(["  Usage ", "NULL", "null", "", "x"]))
>>> values.to_list(), written.to_list()
(['Usage', None, None, None, 'x'], [False, True, True, False, False])
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import polars as pl

from contractlang.importers.result import FIRST_ROWS, Note

#: Every character Python's ``str.strip`` removes (polars' own whitespace differs: it keeps
#: ``\x1c``–``\x1f``, which Python strips).
WHITESPACE = "".join(c for c in map(chr, range(sys.maxunicode + 1)) if c.isspace())


#: The four that polars keeps and Python strips.
_SEPARATORS = "\x1c\x1d\x1e\x1f"
#: ``NULL`` in every case.
NULLS = tuple(
    sorted(
        {"".join(c.upper() if m >> i & 1 else c for i, c in enumerate("null")) for m in range(16)}
    )
)


def strip_series(s: pl.Series) -> pl.Series:
    """A whole column with blanks around its values removed, as ``str.strip`` removes them,
    fast: polars' own strip (Unicode whitespace, which
    is Python's but for four separators), and Python's set only when a value still ends in one
    of those four."""
    quick = s.str.strip_chars()
    if (quick.str.len_bytes() != quick.str.strip_chars(_SEPARATORS).str.len_bytes()).any():
        return s.str.strip_chars(WHITESPACE)
    return quick


def value_series(s: pl.Series) -> tuple[pl.Series, pl.Series]:
    """A column's values stripped, null where they are null — FOCUS writes null as ``NULL``
    (any case); exports also write empty strings, or blanks — and whether each null was
    written (``NULL``), not empty."""
    text = strip_series(s)
    null = (text == "") | text.is_in(NULLS)
    return pl.select(pl.when(null).then(None).otherwise(text)).to_series().rename(s.name), (
        null & (text != "")
    )


def per_value(
    series: pl.Series, fn: Callable[[str], Any], dtype: pl.DataType | None = None
) -> pl.Series:
    """``fn`` of each value of ``series`` (null stays null), computed once per distinct value
    and spread back to every row.

    >>> per_value(pl.Series(["a", None, "a", "bb"]), len).to_list()
    [1, None, 1, 2]
    """
    out = per_value_columns(series, lambda v: (fn(v),), {"_v": dtype})
    return out.get_column("_v").rename(series.name)


def per_value_columns(
    series: pl.Series,
    fn: Callable[[str], tuple[Any, ...]],
    schema: Mapping[str, pl.DataType | None],
) -> pl.DataFrame:
    """:func:`per_value` of a function with several results: a frame with a column for each
    (``schema``: their names and types; null on a null value)."""
    distinct = series.drop_nulls().unique()
    results = [fn(v) for v in distinct.to_list()]
    mapping = pl.DataFrame(
        {
            "_k": distinct,
            **{
                name: pl.Series(name, [r[i] for r in results], dtype=dtype)
                for i, (name, dtype) in enumerate(schema.items())
            },
        },
        schema_overrides={"_k": series.dtype},
    )
    return (
        series.rename("_k")
        .to_frame()
        .join(mapping, on="_k", how="left", maintain_order="left")
        .drop("_k")
    )


def notes(found: Sequence[pl.DataFrame], messages: dict[str, str]) -> tuple[Note, ...]:
    """The notes of rows found by code: ``found`` holds frames of ``row``, ``order`` (where in
    a row the caveat was met, for rows with several of one code), ``code`` and ``detail``; each
    code's count is its number of caveats, its examples the first :data:`FIRST_ROWS` in file
    order."""
    frames = [f.select("row", "order", "code", "detail") for f in found if f.height]
    if not frames:
        return ()
    every = pl.concat(frames, how="vertical_relaxed").sort("row", "order", maintain_order=True)
    grouped = every.group_by("code").agg(
        pl.len().alias("count"),
        pl.col("row").head(FIRST_ROWS).alias("rows"),
        pl.col("detail").head(FIRST_ROWS).alias("details"),
    )
    out = []
    for code, count, rows, details in grouped.sort("code").iter_rows():
        out.append(Note(code, messages[code], count, tuple(zip(rows, details, strict=True))))
    return tuple(out)


def found(frame: pl.DataFrame, code: str, order: int, detail: pl.Expr) -> pl.DataFrame:
    """The caveat ``code`` on every row of ``frame`` (already filtered to them; it has a
    ``row``), ``detail`` computed from its columns."""
    return frame.select(
        pl.col("row").cast(pl.Int64),
        pl.lit(order, dtype=pl.Int64).alias("order"),
        pl.lit(code).alias("code"),
        detail.cast(pl.String).alias("detail"),
    )
