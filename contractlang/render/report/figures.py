"""The data behind the report's charts, from a comparison: cost per accepted run by percentile,
metered against billed, lost progress, money by clause, price to pass.

Values are floats for drawing only (:mod:`.charts`); names go through
:func:`~contractlang.diagnostics.printable`.
"""

from __future__ import annotations

from typing import Any

import polars as pl

from contractlang.compare.model import Comparison, ContractFigures
from contractlang.diagnostics import printable
from contractlang.evaluate.results import ContractResult
from contractlang.lang.numbers import MICROS_PER_HOUR
from contractlang.render.compare.words import multiplier_text
from contractlang.render.report import charts
from contractlang.render.report.charts import Chart

PERCENTILES = tuple(range(101))


def report_charts(cmp: Comparison) -> list[Chart]:
    cs = [c.result for c in cmp.ranked]
    currency = cs[0].settings.currency
    out = [
        Chart(
            "cost",
            "Cost per accepted run, by percentile",
            "Each line is a draft: the cost of its accepted runs from cheapest (left) to dearest "
            "(right); the dotted line is the 95th percentile, the red dashed line the budget's "
            "limit.",
            _cost_chart(cmp, cs, currency),
        ),
        Chart(
            "usage",
            "Metered against billed",
            "Left: GPU-hours that ran against GPU-hours billed (after exclusions, increments and "
            "minimums). Right: the bill before and after credits and caps.",
            _usage_chart(cs, currency),
        ),
        Chart(
            "lost",
            "Lost progress, and how much of it was billed",
            "GPU-hours of work lost to reclaims and failures (replayed from the last valid "
            "checkpoint), split by whether the draft billed them.",
            _lost_chart(cs),
        ),
    ]
    if cmp.attributed:
        out.append(
            Chart(
                "clauses",
                "Where the money goes, clause by clause",
                "Each bar is the net bill with the clause minus without it: below zero the "
                "clause saves money (an exclusion, a credit), above zero it costs money (a cap, "
                "a minimum). Clauses with no effect on this trace are left out.",
                _clause_chart(cmp, currency),
            )
        )
        if cmp.ranking is not None:
            out.append(
                Chart(
                    "price",
                    "Price to pass",
                    "The multipliers m on every rate's price at which each draft meets the "
                    "budget's requirements the terms move (green); the red dashed line is the "
                    "draft as written (m = 1).",
                    _price_chart(cmp),
                )
            )
    return out


def _name(c: ContractResult) -> str:
    return printable(c.name)


def _cost_chart(cmp: Comparison, cs: list[ContractResult], currency: str) -> dict[str, Any]:
    points = []
    for c in cs:
        costs = c.runs["cost_per_accepted_run"].drop_nulls().cast(pl.Float64)
        if costs.len() == 0:
            continue
        for q in PERCENTILES:
            value = costs.quantile(q / 100, "linear")
            points.append({"draft": _name(c), "percentile": q, "cost": value})
    limit, label = _cost_limit(cmp)
    return charts.cost_distribution(points, limit, label, currency)


def _cost_limit(cmp: Comparison) -> tuple[float | None, str]:
    """The ranking budget's limit on cost per accepted run, if it has one."""
    if cmp.ranking is None:
        return None, ""
    b = next(b for b in cmp.base.result.budgets if b.name == cmp.ranking)
    for r in b.requirements:
        if r.unit.kind == "money" and "cost_per_accepted_run" in r.text:
            return float(r.limit / r.unit.factor), printable(f"limit: {r.text}")
    return None, ""


def _usage_chart(cs: list[ContractResult], currency: str) -> dict[str, Any]:
    hours, money = [], []
    for c in cs:
        t = c.totals
        hours += [
            {"draft": _name(c), "measure": "metered", "value": t.metered_gpu_us / MICROS_PER_HOUR},
            {"draft": _name(c), "measure": "billed", "value": t.billable_gpu_us / MICROS_PER_HOUR},
        ]
        money += [
            {"draft": _name(c), "measure": "gross", "value": t.gross_minor / c.settings.minor},
            {"draft": _name(c), "measure": "net billed", "value": t.net_minor / c.settings.minor},
        ]
    left = charts.grouped_bars(hours, ["metered", "billed"], "GPU-hours", "GPU-hours")
    right = charts.grouped_bars(money, ["gross", "net billed"], currency, currency)
    return charts.side_by_side(left, right)


def lost_billed_gpu_us(c: ContractResult) -> int:
    """GPU-time lost to replays that the draft billed: Σ gpus × min(replayed, billable)."""
    a = c.allocations
    replay = pl.min_horizontal(
        pl.col("replayed_time").dt.total_microseconds().fill_null(0), pl.col("billable_us")
    )
    value = a.select((pl.col("gpus").cast(pl.Int128) * replay).sum()).item()
    return int(value or 0)


def _lost_chart(cs: list[ContractResult]) -> dict[str, Any]:
    rows = []
    for c in cs:
        billed = lost_billed_gpu_us(c)
        lost = c.totals.lost_gpu_us
        rows += [
            {"draft": _name(c), "part": "billed", "order": 0, "value": billed / MICROS_PER_HOUR},
            {"draft": _name(c), "part": "not billed", "order": 1,
             "value": max(lost - billed, 0) / MICROS_PER_HOUR},
        ]  # fmt: skip
    return charts.stacked_bars(rows, ["billed", "not billed"], "lost GPU-hours")


def _clause_chart(cmp: Comparison, currency: str) -> dict[str, Any]:
    rows = []
    for cc in cmp.ranked:
        r = cc.result
        base = ContractFigures.of(r, r.budgets)
        for a in cc.attribution or ():
            if a.without is None or a.without.net_minor == base.net_minor:
                continue
            change = (base.net_minor - a.without.net_minor) / r.settings.minor
            label = printable(f"{r.name} · {a.clause.label}")
            rows.append({"draft": _name(r), "label": label, "change": change})
    return charts.clause_bars(rows, currency)


def _price_chart(cmp: Comparison) -> dict[str, Any]:
    rows = []
    for cc in cmp.ranked:
        p = cc.to_pass.price if cc.to_pass is not None else None
        if p is None:
            continue
        for lo, hi in p.intervals:
            rows.append(
                {"draft": _name(cc.result), "lo": float(lo), "hi": float(hi),
                 "label": multiplier_text(hi) if hi == p.largest else ""}
            )  # fmt: skip
    return charts.price_ranges(rows, [_name(c.result) for c in cmp.ranked])
