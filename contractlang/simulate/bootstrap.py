"""The Monte Carlo error of a simulation: a seeded bootstrap over runs.

Each resample draws the simulated runs with replacement (the same resamples for every
contract, so their intervals are comparable); a figure — an aggregate of the budget language
over runs, or an expression of aggregates such as a ``require``'s value — is computed on every
resample with the semantics of :mod:`contractlang.evaluate.budget`, weighted by how often each
run was drawn; its 95 % interval is the 2.5th and 97.5th percentiles of those values (linear
interpolation between closest ranks, as ``pN``).

Exact: replicate values are Fractions. Sums of per-run values are exact integer sums; ``min``,
``max`` and ``pN`` pick exact per-run values. Only the ``sum`` or ``mean`` of a per-run
*quotient* (``mean(lost_gpu_time / metered_gpu_time)``), whose values have no common
denominator, is summed in fixed point: each per-run quotient is rounded to 10⁻¹⁸ first, so
a replicate mean is within 10⁻¹⁸ of its exact value and a sum within runs × 10⁻¹⁸ (the point
value, from ``evaluate``, is always exact).

>>> import polars as pl
>>> from decimal import Decimal as D
>>> runs = pl.DataFrame({"net": [D("1.00"), D("2.00"), D("3.00"), D("4.00")]})
>>> from contractlang.lang import ast
>>> fig = Figure(ast.Call("mean", (ast.Name("net"),)), runs)
>>> fig.point_value()
Fraction(5, 2)
>>> run_bootstrap([fig], runs.height, resamples=200, seed=1)
>>> low, high = fig.interval()
>>> Fraction(1) <= low < Fraction(5, 2) < high <= Fraction(4)
True
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction

import numpy as np
import numpy.typing as npt
import polars as pl

from contractlang.compile import Env, compile_expr
from contractlang.errors import InternalError
from contractlang.evaluate.budget import row_value
from contractlang.lang import ast, exact
from contractlang.lang.vocabulary import COUNTING_AGGREGATES, percentile

I64 = npt.NDArray[np.int64]
Value = exact.Value

#: Resamples of a bootstrap unless asked otherwise.
RESAMPLES = 1000
#: Scale of per-run quotients summed in fixed point.
QUOTIENT_SCALE = 10**18
_LIMB = 31  # bits of one limb of an exact weighted sum
_CELLS = 4_000_000  # counts held at once (resamples × runs)


def resample_counts(runs: int, resamples: int, seed: int) -> list[I64]:
    """How often each run is drawn in each resample (rows: resamples), in chunks; seeded, so
    the same seed gives the same resamples."""
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, 0x626F6F74])))
    per_chunk = max(1, min(resamples, _CELLS // max(runs, 1)))
    chunks = []
    for first in range(0, resamples, per_chunk):
        b = min(per_chunk, resamples - first)
        drawn = rng.integers(0, runs, size=(b, runs)) + (np.arange(b) * runs)[:, None]
        chunks.append(np.bincount(drawn.ravel(), minlength=b * runs).reshape(b, runs))
    return chunks


class _Aggregate:
    """One aggregate call, its per-run values read once from the runs table."""

    def __init__(self, call: ast.Call, runs: pl.DataFrame) -> None:
        self.func = call.func
        self.q = percentile(call.func)
        arg = call.args[0]
        divides = any(isinstance(n, ast.Binary) and n.op == "/" for n in ast.walk(arg))
        values = _row_values(arg, runs) if divides else _column_values(arg, runs)
        self.known = np.array([v is not None for v in values], dtype=np.int64)
        if call.func in COUNTING_AGGREGATES:
            self.true = np.array([v is True for v in values], dtype=np.int64)
            return
        nums = [v for v in values if isinstance(v, Fraction)]
        if len(nums) != int(self.known.sum()):
            raise InternalError(f"`{call.func}` over values that are not numbers")
        self.index = np.flatnonzero(self.known)
        order = exact_order(nums)
        self.sorted_values = [nums[i] for i in order]
        self.sorted_index = self.index[np.array(order, dtype=np.int64)]
        self.rank = np.empty(len(nums), dtype=np.int64)
        self.rank[np.array(order, dtype=np.int64)] = np.arange(len(nums))
        self.denominator = _common_denominator(nums, exact_sums=not divides)
        self.limbs = _limbs([_scaled(v, self.denominator) for v in nums])

    def replicate(self, counts: I64) -> list[Value]:
        """This aggregate on each resample (rows of ``counts``)."""
        if self.func in COUNTING_AGGREGATES:
            true = counts @ self.true
            if self.func == "count":
                return [Fraction(int(x)) for x in true]
            known = counts @ self.known
            return [
                None if k == 0 else Fraction(int(t), int(k))
                for t, k in zip(true, known, strict=True)
            ]
        c = counts[:, self.index]
        n = c.sum(axis=1)
        if self.q is not None:
            return self._percentiles(counts[:, self.sorted_index], n)
        if self.func in ("min", "max"):
            present = np.where(c > 0, self.rank, -1 if self.func == "max" else len(self.rank))
            best = present.max(axis=1) if self.func == "max" else present.min(axis=1)
            return [None if m == 0 else self.sorted_values[r] for r, m in zip(best, n, strict=True)]
        sums = _weighted_sums(c, self.limbs)
        if self.func == "sum":
            return [
                None if m == 0 else Fraction(s, self.denominator)
                for s, m in zip(sums, n, strict=True)
            ]
        if self.func == "mean":
            d = self.denominator
            return [
                None if m == 0 else Fraction(s, d * int(m)) for s, m in zip(sums, n, strict=True)
            ]
        raise InternalError(f"unknown aggregate `{self.func}`")

    def _percentiles(self, c: I64, n: I64) -> list[Value]:
        cum = np.cumsum(c, axis=1)
        out: list[Value] = []
        q = Fraction(self.q or 0, 100)
        for row, m in zip(cum, n, strict=True):
            if m == 0:
                out.append(None)
                continue
            pos = q * (int(m) - 1)
            lo = math.floor(pos)
            hi = min(lo + 1, int(m) - 1)
            a, b = np.searchsorted(row, [lo, hi], side="right")
            low, high = self.sorted_values[int(a)], self.sorted_values[int(b)]
            out.append(low + (high - low) * (pos - lo))
        return out


class Figure:
    """An expression of aggregates over runs (a ``require``'s value side, or one aggregate),
    with its value on every resample once :func:`run_bootstrap` has run."""

    def __init__(self, expr: ast.Expr, runs: pl.DataFrame) -> None:
        self.expr = expr
        calls = [n for n in ast.walk(expr) if isinstance(n, ast.Call) and ast.is_aggregate_call(n)]
        self.aggregates = [(c, _Aggregate(c, runs)) for c in calls]
        self.values: list[Value] = []

    def point_value(self) -> Value:
        """The value on the runs themselves: every run drawn once."""
        return self._evaluate(np.ones((1, len(self._any().known)), dtype=np.int64))[0]

    def update(self, counts: I64) -> None:
        self.values.extend(self._evaluate(counts))

    def _any(self) -> _Aggregate:
        if not self.aggregates:
            raise InternalError("a figure without an aggregate")
        return self.aggregates[0][1]

    def _evaluate(self, counts: I64) -> list[Value]:
        per_call = {id(c): agg.replicate(counts) for c, agg in self.aggregates}
        out = []
        for j in range(counts.shape[0]):

            def leaf(node: ast.Expr, j: int = j) -> Value:
                if isinstance(node, ast.Call) and id(node) in per_call:
                    return per_call[id(node)][j]
                raise InternalError(f"cannot bootstrap {type(node).__name__}")

            out.append(exact.evaluate(self.expr, leaf))
        return out

    def interval(self) -> tuple[Fraction, Fraction] | None:
        """The 95 % percentile interval, or None when fewer than 95 % of the resamples have a
        value (a figure that is often none cannot be bounded)."""
        return percentile_interval([_number(v) for v in self.values])

    def paired_interval(self, baseline: Figure) -> tuple[Fraction, Fraction] | None:
        """The 95 % interval of this figure minus ``baseline``'s, from their difference on each
        resample (both computed on the same resamples): a paired bootstrap, so what the two
        share — the same runs drawn, the same reclaims — cancels, as it does in the
        difference itself. Not the difference of the two intervals, which is far wider."""
        if len(self.values) != len(baseline.values):
            raise InternalError("a paired interval of figures on different resamples")
        pairs = zip(map(_number, self.values), map(_number, baseline.values), strict=True)
        return percentile_interval([None if a is None or b is None else a - b for a, b in pairs])


def run_bootstrap(figures: Sequence[Figure], runs: int, resamples: int, seed: int) -> None:
    """Compute every figure on the same ``resamples`` resamples of ``runs`` runs."""
    for counts in resample_counts(runs, resamples, seed):
        for f in figures:
            f.update(counts)


# --------------------------------------------------------------------------- helpers


def _column_values(arg: ast.Expr, runs: pl.DataFrame) -> list[Value]:
    """Per-run exact values of an argument without a division, computed by polars as
    :func:`contractlang.evaluate.budget.aggregate` computes them."""
    val = compile_expr(arg, Env(columns=dict(runs.schema), promises={}))
    col = runs.with_columns(val.expr.alias("_v")).get_column("_v")
    if col.dtype == pl.Boolean:
        return list(col.to_list())
    if isinstance(col.dtype, pl.Decimal):
        unit = val.factor / 10 ** (col.dtype.scale or 0)
        raw = col.to_physical().to_list()
    elif col.dtype.is_integer():
        unit, raw = val.factor, col.to_list()
    else:
        raise InternalError(f"a budget aggregate over {col.dtype}")
    return [None if x is None else Fraction(int(x)) * unit for x in raw]


def _row_values(arg: ast.Expr, runs: pl.DataFrame) -> list[Value]:
    """Per-run exact values of an argument that divides (the exact row interpreter)."""
    names = sorted({n.name for n in ast.walk(arg) if isinstance(n, ast.Name)} & set(runs.columns))
    rows = runs.select(names).iter_rows(named=True) if names else ({} for _ in range(runs.height))
    return [row_value(arg, row) for row in rows]


def _common_denominator(nums: Sequence[Fraction], *, exact_sums: bool) -> int:
    if not exact_sums:
        return QUOTIENT_SCALE
    d = 1
    for v in nums:
        d = math.lcm(d, v.denominator)
    return d


def _scaled(v: Fraction, denominator: int) -> int:
    """``v × denominator`` as an integer (rounded half to even when it is not one)."""
    return round(v * denominator)


def _limbs(nums: Sequence[int]) -> list[I64]:
    """Signed integers of any size as signed 31-bit limbs, lowest first."""
    width = max((abs(x).bit_length() for x in nums), default=0)
    count = max(1, -(-width // _LIMB))
    mask = (1 << _LIMB) - 1
    signs = [1 if x >= 0 else -1 for x in nums]
    return [
        np.array(
            [(abs(x) >> (_LIMB * t) & mask) * s for x, s in zip(nums, signs, strict=True)], np.int64
        )
        for t in range(count)
    ]


def _weighted_sums(counts: I64, limbs: Sequence[I64]) -> list[int]:
    """Σ count × value for each row of ``counts``, exactly (limb by limb in int64: each limb
    is below 2³¹ and a row's counts sum to the runs, below 2³²)."""
    parts = [counts @ limb for limb in limbs]
    rows = range(counts.shape[0])
    return [sum(int(p[j]) << (_LIMB * t) for t, p in enumerate(parts)) for j in rows]


def exact_order(values: Sequence[Fraction]) -> list[int]:
    """The positions of ``values`` in ascending order, exactly and stably: numpy sorts the
    floats nearest them, then a pass of exact comparisons puts right the few neighbours that
    floats cannot tell apart (insertion sort, linear on input this nearly sorted).

    >>> exact_order([Fraction(1, 3), Fraction(10**20 + 1, 10**20), Fraction(1), Fraction(0)])
    [3, 0, 2, 1]
    """
    order: list[int] = np.argsort(np.array([float(v) for v in values]), kind="stable").tolist()
    for i in range(1, len(order)):
        j = i
        while j > 0 and values[order[j]] < values[order[j - 1]]:
            order[j], order[j - 1] = order[j - 1], order[j]
            j -= 1
    return order


def percentile_interval(values: Sequence[Fraction | None]) -> tuple[Fraction, Fraction] | None:
    """The 2.5th and 97.5th percentiles of the values that are not none, or None when fewer
    than 95 % of ``values`` have one."""
    found = [x for x in values if x is not None]
    nums = [found[i] for i in exact_order(found)]
    if not nums or len(nums) < 0.95 * len(values):
        return None
    return _quantile(nums, Fraction(25, 1000)), _quantile(nums, Fraction(975, 1000))


def _number(v: Value) -> Fraction | None:
    if isinstance(v, bool):
        return Fraction(int(v))
    return v if isinstance(v, Fraction) else None


def _quantile(ordered: Sequence[Fraction], q: Fraction) -> Fraction:
    pos = q * (len(ordered) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)
