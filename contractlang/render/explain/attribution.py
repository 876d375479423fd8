"""`explain --attribute`: after one run's bill under a contract, what each removable clause does
to it — the run's net with the clause beside its net without it."""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from contractlang.compare.model import RunAttribution
from contractlang.evaluate.results import ContractResult
from contractlang.render.common.numbers import money


def run_attribution_text(r: ContractResult, run_id: str, items: Sequence[RunAttribution]) -> str:
    """Lines of plain text (no markup), like the rest of `explain`'s output."""
    s = r.settings

    def m(minor: int, sign: bool = False) -> str:
        return money(minor, s.precision, s.currency, sign=sign)

    net = int(r.runs.filter(pl.col("run_id") == run_id)["net_minor"][0])
    out = [f'what each clause does to run {run_id} under "{r.name}" (net {m(net)}):']
    if not items:
        out.append("  no removable clause (exclusions, credits, caps, billing settings)")
    idle = []
    for a in items:
        head = f"  “{a.clause.label}” ({a.clause.kind}, line {a.clause.line})"
        if a.net_minor is None:
            out.append(f"{head}: cannot be evaluated without it: {a.error}")
        elif a.net_minor == net:
            idle.append(f"“{a.clause.label}”")
        else:
            change = m(net - a.net_minor, sign=True)
            out.append(f"{head}: without it {m(a.net_minor)}; with − without: {change}")
    if idle:
        out.append("  no effect on this run: " + ", ".join(idle))
    return "\n".join(out) + "\n"
