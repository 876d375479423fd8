"""Caps on pools of credits, at every level: allocation → run → month → contract
(docs/evaluate.md, "Caps").

An allocation's pool is its credit lines; each allocation cap cuts what the one before left.
A run's pool is its allocations' credits after allocation caps; each run cap cuts it to its
limit, and the run level always also caps at the run's gross, so credits never make a run's net
negative. A run settles in the month its last allocation ends; a month's pool is the credits of
the runs it settles and the contract's pool is everything. A cut to a month or contract pool is
shared among its runs in proportion to their credits after run caps, in whole minor units by
largest remainder (ties by ``run_id``), so per-run net always sums to the total net.

All amounts here are integers of minor units (cents); the arithmetic is exact.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from fractions import Fraction
from typing import Literal, overload

import polars as pl

from contractlang.errors import InternalError
from contractlang.evaluate.plan import CapCut, Term, term_label
from contractlang.evaluate.settings import Settings, floor_minor
from contractlang.lang import ast
from contractlang.lang.exact import constant_value
from contractlang.lang.numbers import INT64_MAX
from contractlang.lang.vocabulary import CAP_LEVELS, CapLevel

#: The label of the rule that always caps a run's credits at its gross.
RUN_GROSS_RULE = "credits never exceed the run's gross"


def cap_percent(cap: ast.Cap) -> Fraction | None:
    """For ``cap credits at X% of gross``, X/100; None for a money limit (``50% of 2 USD`` is
    one: 1 USD)."""
    limit = cap.limit
    if isinstance(limit, ast.PercentOf) and limit.operand == ast.Name("gross"):
        return Fraction(limit.percent.value) / 100
    return None


@overload
def cap_limit(cap: ast.Cap, gross_minor: pl.Expr, s: Settings) -> pl.Expr: ...
@overload
def cap_limit(cap: ast.Cap, gross_minor: int, s: Settings) -> int: ...


def cap_limit(cap: ast.Cap, gross_minor: pl.Expr | int, s: Settings) -> pl.Expr | int:
    """A cap's limit in minor units, rounded down: a money amount, or X% of ``gross_minor``
    (a column for allocation and run caps, a number for month and contract pools)."""
    pct = cap_percent(cap)
    if pct is not None:
        return (gross_minor * pct.numerator) // pct.denominator
    value = constant_value(cap.limit)
    if value is None:
        raise InternalError("a checked cap limit evaluated to none")
    limit = floor_minor(value, s.minor)
    if isinstance(gross_minor, pl.Expr):  # above any 64-bit pool, it cuts as the largest does
        return pl.lit(min(limit, INT64_MAX), pl.Int64)
    return limit


Caps = dict[CapLevel, list[tuple[ast.Cap, str]]]


def caps_by_level(contract: ast.Contract, source_text: str | None) -> Caps:
    """A contract's caps at each level, in file order, each with its ledger label."""
    caps: Caps = {level: [] for level in CAP_LEVELS}
    for c in contract.clauses:
        if isinstance(c, ast.Cap):
            caps[c.cap_level].append((c, term_label(c, source_text)))
    return caps


def apply_caps_above(
    runs: pl.DataFrame, caps: Caps, s: Settings
) -> tuple[pl.DataFrame, tuple[CapCut, ...]]:
    """(7b–d) The caps above the allocation, on the runs' pools: run, then month, then
    contract. Returns the runs with a column per cut and the cuts, in that order."""
    runs, run_cuts = apply_run_caps(runs, caps["run"], s)
    runs, month_cuts = apply_pooled_caps(runs, caps["month"], "month", s)
    runs, contract_cuts = apply_pooled_caps(runs, caps["contract"], "contract", s)
    return runs, (*run_cuts, *month_cuts, *contract_cuts)


def apply_allocation_caps(
    lf: pl.LazyFrame, caps: list[tuple[ast.Cap, str]], s: Settings
) -> tuple[pl.LazyFrame, tuple[Term, ...]]:
    """(7a) Allocation caps, in file order, each cutting what the previous left of
    ``credit_pool_minor``; ``cap_<n>_minor`` holds each cap's cut."""
    terms = []
    for n, (cap, label) in enumerate(caps):
        col = f"cap_{n}_minor"
        limit = cap_limit(cap, pl.col("charge_minor"), s)
        after = pl.min_horizontal(pl.col("credit_pool_minor"), limit)
        lf = lf.with_columns((pl.col("credit_pool_minor") - after).alias(col)).with_columns(
            credit_pool_minor=pl.col("credit_pool_minor") - pl.col(col)
        )
        terms.append(Term("cap", label, cap.span.line, col, n, cap))
    return lf, tuple(terms)


def apply_run_caps(
    runs: pl.DataFrame, caps: list[tuple[ast.Cap, str]], s: Settings
) -> tuple[pl.DataFrame, list[CapCut]]:
    """Cut each run's ``pool_minor`` by the run caps in file order, then by its gross."""
    cuts: list[CapCut] = []
    for n, (cap, label) in enumerate(caps):
        col = f"run_cap_{n}_minor"
        limit = cap_limit(cap, pl.col("gross_minor"), s)
        runs = _cut(runs, col, limit)
        cuts.append(CapCut("run", label, cap.span.line, col, cap))
    runs = _cut(runs, "run_gross_cap_minor", pl.col("gross_minor"))
    cuts.append(CapCut("run", RUN_GROSS_RULE, None, "run_gross_cap_minor", None))
    return runs, cuts


def _cut(runs: pl.DataFrame, col: str, limit: pl.Expr) -> pl.DataFrame:
    after = pl.min_horizontal(pl.col("pool_minor"), limit).clip(lower_bound=0)
    return runs.with_columns((pl.col("pool_minor") - after).alias(col)).with_columns(
        pool_minor=pl.col("pool_minor") - pl.col(col)
    )


def apply_pooled_caps(
    runs: pl.DataFrame,
    caps: list[tuple[ast.Cap, str]],
    level: Literal["month", "contract"],
    s: Settings,
) -> tuple[pl.DataFrame, list[CapCut]]:
    """Month (grouped by ``settle_month``) or contract (one group) caps, each shared among
    the group's runs by largest remainder."""
    cuts: list[CapCut] = []
    group = "settle_month" if level == "month" else None
    for n, (cap, label) in enumerate(caps):
        col = f"{level}_cap_{n}_minor"
        runs = share_cut(runs, group, functools.partial(_pool_limit, cap, s), col)
        cuts.append(CapCut(level, label, cap.span.line, col, cap))
    return runs, cuts


def _pool_limit(cap: ast.Cap, s: Settings, gross_minor: int) -> int:
    return cap_limit(cap, gross_minor, s)


def share_cut(
    runs: pl.DataFrame,
    group: str | None,
    limit_of_gross: Callable[[int], int],
    col: str,
) -> pl.DataFrame:
    """Cut each group's pool to its limit and share the cut among its runs.

    ``limit_of_gross(gross_minor) -> int`` gives a group's limit from its gross. The runs come
    back in ``run_id`` order; the sharing is done on a narrow frame of the group, pool and gross
    and the row's position, so the runs' other columns are never moved.
    """
    if runs.height == 0:
        return runs.with_columns(pl.lit(0, pl.Int64).alias(col))
    if not runs["run_id"].is_sorted():
        runs = runs.sort("run_id")
    pool = pl.col("_pool")
    narrow = runs.select(
        _group=pl.col(group) if group else pl.lit(0, pl.Int32),
        _pool=pl.col("pool_minor").cast(pl.Int128),
        _gross=pl.col("gross_minor").cast(pl.Int128),
    ).with_row_index("_row")
    groups = narrow.group_by("_group").agg(pool=pool.sum(), gross=pl.col("_gross").sum())
    cut_of = {g: max(0, p - min(p, limit_of_gross(gross))) for g, p, gross in groups.iter_rows()}
    if not any(cut_of.values()):  # every pool within its limit: nothing to share
        return runs.with_columns(pl.lit(0, pl.Int64).alias(col))
    cut_df = pl.DataFrame(
        {"_group": list(cut_of), "_cut": list(cut_of.values())},
        schema={"_group": narrow.schema["_group"], "_cut": pl.Int128},
    )
    # (a run with no allocation settles in no month: its group is null, its pool 0, its cut 0)
    frame = narrow.join(cut_df, on="_group", how="left", maintain_order="left", nulls_equal=True)
    total = pool.sum().over("_group")
    num = pl.col("_cut") * pool
    safe_total = pl.when(total == 0).then(1).otherwise(total)
    frame = frame.with_columns(_base=num // safe_total, _rem=num % safe_total)
    frame = frame.with_columns(_left=pl.col("_cut") - pl.col("_base").sum().over("_group"))
    # the largest remainders first, ties by run_id: the row's position, as the runs are sorted
    frame = frame.sort(["_group", "_rem", "_row"], descending=[False, True, False])
    frame = frame.with_columns(_rank=pl.int_range(pl.len()).over("_group"))
    share = pl.col("_base") + (pl.col("_rank") < pl.col("_left")).cast(pl.Int128)
    shares = frame.select("_row", share.cast(pl.Int64).alias(col)).sort("_row")[col]
    return runs.with_columns(shares).with_columns(pool_minor=pl.col("pool_minor") - pl.col(col))
