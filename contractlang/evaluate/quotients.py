"""Aggregates of per-run quotients — ``mean(lost_gpu_time / metered_gpu_time)`` — in time
linear in the runs (a sort for percentiles), exactly where it matters.

Summed as ``Fraction``s, quotients with unrelated denominators grow the sum's denominator term
by term: O(n²), two minutes for 100,000 runs. Here each quotient ``a / b`` (``b > 0``) is cut
to :data:`PLACES` decimal places, ``⌊a · 10^P / b⌋``, by long division in 128-bit integers
(polars, a chunk of digits at a time, so no product exceeds 2¹²⁷); the cut values sum exactly,
and the number of quotients that were cut bounds how far below the true sum the total lies:
``true ∈ [Σ cut, Σ cut + (quotients cut)] / 10^P``. A sum or mean is therefore
:class:`~contractlang.evaluate.bounds.Bounded` (exact when nothing was cut); the budget decides
on the bounds and computes the exact fraction only when they cannot decide
(:func:`~contractlang.evaluate.bounds.decides`). Minimum, maximum and percentiles are exact
elements: the runs are ordered by their cut values, ``a_i/b_i < a_j/b_j`` whenever the cut of
``i`` is below the cut of ``j``, and runs with equal cuts are ordered by exact fractions.

>>> q = Quotients.of_pairs([(1, 3), (1, 3), (1, 3), (0, 1)], Fraction(1))
>>> got = aggregate_quotients("mean", q)
>>> got.low < Fraction(1, 4) <= got.high, got.exact()
(True, Fraction(1, 4))
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

import polars as pl

from contractlang.errors import InternalError
from contractlang.evaluate.bounds import Bounded
from contractlang.lang.vocabulary import percentile

#: Decimal places each quotient is cut to before it is summed.
PLACES = 57
_I128 = 2**127 - 1


@dataclass(frozen=True)
class Quotients:
    """Runs' quotients ``num / den × factor`` (``den > 0``; runs with no value left out) as
    128-bit columns ``num``, ``den``."""

    frame: pl.DataFrame
    factor: Fraction

    @classmethod
    def of_pairs(cls, pairs: Sequence[tuple[int, int]], factor: Fraction) -> Quotients:
        """From exact ``(numerator, denominator)`` pairs (any sign; denominators not 0)."""
        signed = [(n, d) if d > 0 else (-n, -d) for n, d in pairs]
        frame = pl.DataFrame(
            {"num": [n for n, _ in signed], "den": [d for _, d in signed]},
            schema={"num": pl.Int128, "den": pl.Int128},
        )
        return cls(frame, factor)

    @classmethod
    def of_columns(cls, frame: pl.DataFrame, factor: Fraction) -> Quotients:
        """From 128-bit ``num`` and ``den`` columns: none and ``x / 0`` left out, signs moved
        to the numerator."""
        kept = frame.filter(pl.col("num").is_not_null() & pl.col("den").is_not_null())
        kept = kept.filter(pl.col("den") != 0)
        flip = pl.when(pl.col("den") < 0).then(-1).otherwise(1).cast(pl.Int128)
        signed = kept.select(num=pl.col("num") * flip, den=pl.col("den") * flip)
        return cls(signed, factor)


def aggregate_quotients(func: str, q: Quotients) -> Fraction | Bounded | None:
    """``func`` (sum, mean, min, max, pN) over the quotients; none when there are none."""
    n = q.frame.height
    if n == 0:
        return None
    if func in ("sum", "mean"):
        return _sum(q, n if func == "mean" else 1)
    pct = 100 if func == "max" else 0 if func == "min" else percentile(func)
    if pct is None:
        raise InternalError(f"unknown aggregate `{func}` of quotients")
    return _percentile(q, Fraction(pct, 100))


def _chunk(frame: pl.DataFrame) -> int:
    """Digits per step of the long division: ``remainder · 10^k`` stays below 2¹²⁷."""
    biggest = frame.select(pl.col("den").max()).item()
    return max(0, min(19, int(math.log10(_I128 // biggest))))


def _cut(q: Quotients) -> tuple[pl.DataFrame, int] | None:
    """Columns ``q0`` (the whole part) and ``c1…cm`` (digits, ``k`` at a time, ``m·k ≥
    PLACES``) of each quotient, and ``k``; None when a denominator is too wide for 128 bits."""
    k = _chunk(q.frame)
    if k == 0:
        return None
    steps = math.ceil(PLACES / k)
    scale = pl.lit(10**k, dtype=pl.Int128)
    den = pl.col("den")
    cols = q.frame.select(q0=pl.col("num") // den, r=pl.col("num") % den, den=den)
    names = ["q0"]
    for j in range(1, steps + 1):
        shifted = pl.col("r") * scale
        cols = cols.with_columns((shifted // den).alias(f"c{j}"), r=shifted % den)
        names.append(f"c{j}")
    return cols.select([*names, "r"]), k


def _sum(q: Quotients, divisor: int) -> Fraction | Bounded:
    got = _cut(q)
    if got is None:  # denominators beyond 64 bits or so: the same bounds, in Python integers
        return _sum_in_python(q, divisor)
    cols, k = got
    steps = cols.width - 2
    total = 0
    for j, name in enumerate(cols.columns[:-1]):
        # every digit chunk is below 10^k, so n of them sum inside 128 bits; q0 may not
        column = cols.get_column(name)
        part = sum(column.to_list()) if j == 0 else column.sum()
        total = total * 10**k + int(part)
    cut = cols.select((pl.col("r") != 0).sum()).item()
    unit = Fraction(1, 10 ** (k * steps)) * q.factor / divisor
    low = total * unit
    if cut == 0:
        return low
    return Bounded(low, low + cut * unit, lambda: _exact_sum(q) * q.factor / divisor)


def _sum_in_python(q: Quotients, divisor: int) -> Fraction | Bounded:
    scale = 10**PLACES
    total, cut = 0, 0
    for n, d in q.frame.iter_rows():
        whole, rest = divmod(n * scale, d)
        total += whole
        cut += rest != 0
    unit = Fraction(1, scale) * q.factor / divisor
    low = total * unit
    if cut == 0:
        return low
    return Bounded(low, low + cut * unit, lambda: _exact_sum(q) * q.factor / divisor)


def _exact_sum(q: Quotients) -> Fraction:
    """The exact sum, by pairwise (balanced) addition: only when bounds cannot decide."""
    terms = [Fraction(n, d) for n, d in q.frame.iter_rows()]
    while len(terms) > 1:
        paired = [terms[i] + terms[i + 1] for i in range(0, len(terms) - 1, 2)]
        terms = paired + ([terms[-1]] if len(terms) % 2 else [])
    return terms[0] if terms else Fraction(0)


def _percentile(q: Quotients, at: Fraction) -> Fraction:
    """Linear interpolation between the closest ranks, on the exact order of the quotients."""
    n = q.frame.height
    pos = at * (n - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, n - 1)
    ordered = _ordered(q)
    low, high = _rank(ordered, lo), _rank(ordered, hi)
    return (low + (high - low) * (pos - lo)) * q.factor


def _ordered(q: Quotients) -> tuple[pl.DataFrame, list[str]]:
    """The quotients sorted by their cut values (exact up to equal cuts), and the key
    columns."""
    got = _cut(q)
    if got is None:
        pairs = sorted(q.frame.iter_rows(), key=lambda p: Fraction(p[0], p[1]))
        frame = pl.DataFrame(pairs, schema={"num": pl.Int128, "den": pl.Int128}, orient="row")
        return frame.with_columns(rank=pl.int_range(pl.len())), ["rank"]
    cols, _ = got
    keys = cols.columns[:-1]
    both = pl.concat([q.frame, cols.select(keys)], how="horizontal")
    return both.sort(keys), keys


def _rank(ordered: tuple[pl.DataFrame, list[str]], r: int) -> Fraction:
    """The exact value at rank ``r``: among the runs whose cut equals rank r's (usually one),
    ordered exactly."""
    frame, keys = ordered
    key = frame.select(keys)
    first = last = r
    while first > 0 and key.row(first - 1) == key.row(r):
        first -= 1
    while last + 1 < frame.height and key.row(last + 1) == key.row(r):
        last += 1
    rows = frame.slice(first, last - first + 1).select("num", "den").iter_rows()
    group = sorted(Fraction(n, d) for n, d in rows)
    return group[r - first]
