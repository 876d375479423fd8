"""The summary of a trace: what was read and used (from loading) and, once facts are derived,
their totals. ``contractlang trace validate`` and ``trace facts`` print it; ``--format json``
prints :meth:`TraceSummary.model_dump` in JSON mode (stable keys, no paths or clock times).
"""

from __future__ import annotations

import polars as pl

from contractlang.lang.numbers import gpu_hours
from contractlang.trace.model import Trace
from contractlang.trace.schema import FactTotals, TraceSummary


def summarize(trace: Trace, runs: pl.DataFrame | None = None) -> TraceSummary:
    """The trace's summary, with the totals of the run facts when ``runs`` is given."""
    if runs is None:
        return trace.summary
    row = runs.select(
        pl.col("accepted").sum().alias("accepted"),
        pl.col("reclaims").sum().alias("reclaims"),
        pl.col("failures").sum().alias("failures"),
        pl.col("metered_gpu_time").dt.total_microseconds().sum().alias("metered"),
        pl.col("lost_gpu_time").dt.total_microseconds().sum().alias("lost"),
        pl.col("lost_steps").sum().alias("lost_steps"),
    ).row(0, named=True)
    totals = FactTotals(
        accepted_runs=int(row["accepted"] or 0),
        reclaims=int(row["reclaims"] or 0),
        failures=int(row["failures"] or 0),
        metered_gpu_hours=gpu_hours(int(row["metered"] or 0)),
        lost_gpu_hours=gpu_hours(int(row["lost"] or 0)),
        lost_steps=int(row["lost_steps"] or 0),
    )
    return trace.summary.model_copy(update={"facts": totals})
