"""Caps on pools of credits above the allocation: run → month → contract (design §6).

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
from dataclasses import dataclass

import polars as pl

from contractlang import ast
from contractlang.billing import cap_limit
from contractlang.settings import Settings

#: The label of the rule that always caps a run's credits at its gross.
RUN_GROSS_RULE = "credits never exceed the run's gross"


@dataclass(frozen=True)
class CapCut:
    """A cap that acts above the allocation, and the column of per-run cuts it made."""

    level: str
    label: str
    line: int | None
    column: str
    clause: ast.Cap | None


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
    level: str,
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

    ``limit_of_gross(gross_minor) -> int`` gives a group's limit from its gross.
    """
    keys = [group] if group else []
    key_expr = [pl.col(group)] if group else [pl.lit(0).alias("_group")]
    if runs.height == 0:
        return runs.with_columns(pl.lit(0, pl.Int64).alias(col))
    groups = (
        runs.group_by(key_expr)
        .agg(pool=pl.col("pool_minor").sum(), gross=pl.col("gross_minor").sum())
        .to_dicts()
    )
    gkey = group or "_group"
    limits = {g[gkey]: limit_of_gross(g["gross"]) for g in groups}
    cut_of = {g[gkey]: max(0, g["pool"] - min(g["pool"], limits[g[gkey]])) for g in groups}
    cut_df = pl.DataFrame(
        {gkey: list(cut_of), "_cut": list(cut_of.values())},
        schema={gkey: runs.schema[group] if group else pl.Int32, "_cut": pl.Int64},
    )
    frame = runs.with_columns(pl.lit(0, pl.Int32).alias("_group")) if not group else runs
    frame = frame.join(cut_df, on=gkey, how="left")
    over = keys or ["_group"]
    pool128 = pl.col("pool_minor").cast(pl.Int128)
    total = pool128.sum().over(over)
    num = pl.col("_cut").cast(pl.Int128) * pool128
    safe_total = pl.when(total == 0).then(1).otherwise(total)
    frame = frame.with_columns(_base=num // safe_total, _rem=num % safe_total)
    frame = frame.with_columns(
        _left=(pl.col("_cut").cast(pl.Int128) - pl.col("_base").sum().over(over))
    )
    frame = frame.sort([*over, "_rem", "run_id"], descending=[*([False] * len(over)), True, False])
    frame = frame.with_columns(_rank=pl.int_range(pl.len()).over(over))
    share = pl.col("_base") + (pl.col("_rank") < pl.col("_left")).cast(pl.Int128)
    frame = frame.with_columns(share.cast(pl.Int64).alias(col)).with_columns(
        pool_minor=pl.col("pool_minor") - pl.col(col)
    )
    drop = ["_cut", "_base", "_rem", "_left", "_rank"] + ([] if group else ["_group"])
    return frame.drop(drop).sort("run_id")
