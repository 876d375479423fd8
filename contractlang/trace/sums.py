"""Exact sums of a trace's decimal columns (``amount``, ``price``, ``quantity``: ``Decimal(38,
18)``) in polars.

Polars sums decimals in 128 bits of the column's own type: a whole-column sum past its 38
digits raises, but a grouped sum wraps without a word (two amounts of 9 × 10¹⁹ make
−1.6 × 10²⁰). So the whole part and the fraction (in units of 10⁻¹⁸) of each value are summed
apart, each as an ``Int128`` far from its limits (10¹⁸ values of 10²⁰ each), and put together
in Python, exactly:

    >>> from decimal import Decimal
    >>> big = Decimal("90000000000000000000.5")
    >>> f = pl.DataFrame({"k": ["a", "a"], "x": [big, big]},
    ...                  schema={"k": pl.String, "x": pl.Decimal(38, 18)})
    >>> g = f.group_by("k").agg(sum_parts("x"))
    >>> exact_total(g.row(0, named=True), "x")
    Decimal('180000000000000000001.000000000000000000')
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

import polars as pl

from contractlang.lang.numbers import EXACT, scaled
from contractlang.trace.schema import DECIMAL_SCALE


def _names(column: str) -> tuple[str, str]:
    return f"{column}:whole", f"{column}:fraction"


def sum_parts(column: str, scale: int = DECIMAL_SCALE) -> list[pl.Expr]:
    """The aggregations that sum ``column`` (a decimal of ``scale`` places) exactly: its
    whole parts and its fractions, each an ``Int128``; :func:`exact_total` joins them."""
    whole_name, fraction_name = _names(column)
    x = pl.col(column)
    whole = x.cast(pl.Int128)
    units = pl.lit(10**scale, dtype=pl.Decimal(38, 0))
    fraction = ((x - whole.cast(pl.Decimal(38, scale))) * units).cast(pl.Int128)
    return [whole.sum().alias(whole_name), fraction.sum().alias(fraction_name)]


def exact_total(row: Mapping[str, Any], column: str, scale: int = DECIMAL_SCALE) -> Decimal:
    """The exact sum of ``column`` from a row holding :func:`sum_parts`' aggregations."""
    whole_name, fraction_name = _names(column)
    whole = Decimal(int(row[whole_name] or 0))
    return EXACT.add(whole, scaled(int(row[fraction_name] or 0), scale)).quantize(
        Decimal(1).scaleb(-scale), context=EXACT
    )


def exact_column_total(frame: pl.DataFrame | pl.LazyFrame, column: str) -> Decimal:
    """The exact sum of one decimal column of ``frame``."""
    scale = frame.collect_schema()[column]
    assert isinstance(scale, pl.Decimal)
    row = frame.lazy().select(sum_parts(column, scale.scale)).collect().row(0, named=True)
    return exact_total(row, column, scale.scale)
