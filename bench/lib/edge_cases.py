"""Runs the generator does not make, appended to the evaluation benchmarks' trace, with their
money computed by hand."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import polars as pl

#: When the edge-case runs start: inside the generated trace's span, so they share its months.
EDGE_T0 = datetime(2025, 2, 10, tzinfo=UTC)
SCHEDULER_EVENTS = ("requested", "started", "notice", "reclaimed", "released", "failed")

#: Runs appended to the generated trace for cases the generator does not make, with their gross
#: and their credit lines before caps, in cents, computed by hand (the facts of
#: ``docs/trace.md``, the order of evaluation of ``docs/evaluate.md``; rates: spot with a price
#: → the price, else H100 3.90, else 1.60 USD per GPU-hour).
EDGE_EXPECTED: dict[str, tuple[int, int]] = {
    # Two notices, 60 s and 15 s before the reclaim: the lead counts from the first, 60 s ≥
    # 30 s, so nothing is excluded (from the last, 21 min of replay would be).
    # a01: 8 GPUs × 2 h × 2.50 = 40.00; replaced 20 min later: 10% × 40.00 = 4.00 and
    # 2.10 × 8 × 5/60 h = 1.40. a02: 8 × 1 h × 3.90 = 31.20.
    # Gross 40.00 + 31.20 = 71.20; credits 4.00 + 1.40 = 5.40.
    "edge-01": (71_20, 5_40),
    # Notice 10 s before the reclaim at 95 min: the replay since the valid checkpoint at 70
    # min (the invalid one at 90 does not count) is excluded, 25 min, leaving 70 min:
    # 4 × 70/60 h × 1.50 = 7.00. a02 starts at the very end of a01 (wait 0 s, no credit):
    # 4 × 35/60 h × 1.50 = 3.50. Gross 10.50.
    "edge-02": (10_50, 0),
    # A zero-length failed allocation (billable 0, charge 0) is replaced 30 min later (by
    # a02, not by itself): 2.10 × 8 × 15/60 h = 4.20. a02: 8 × 1 h × 3.90 = 31.20.
    "edge-03": (31_20, 4_20),
    # A zero-length failed allocation and another starting at the same instant: wait 0 s, no
    # credit. a02: 1 × 1 h × 1.60 = 1.60.
    "edge-04": (1_60, 0),
    # Two overlapping nodes. a01 is reclaimed with no notice (lead 0 s < 30 s) and the last
    # checkpoint predates its start, so its whole 120 min is replay, excluded: charge 0; a03
    # starts 40 min after a01's end: 2.10 × 8 × 25/60 h = 7.00 (10% of 0 is 0).
    # a02: 120.5 min → 121 min: 8 × 121/60 h × 3.00 = 48.40. a03: 8 × 1 h × 3.00 = 24.00.
    # Gross 48.40 + 24.00 = 72.40.
    "edge-05": (72_40, 7_00),
    # Reclaimed after 50 min on 28 February (under an hour: wholly excluded), replaced 30 min
    # later on 1 March: 2.10 × 2 × 15/60 h = 1.05. a02: 2 × 1 h × 1.60 = 3.20. The run
    # settles in March, the month its last allocation ends.
    "edge-06": (3_20, 1_05),
    # Credits above gross: a01 is wholly excluded and replaced 180 min later:
    # 2.10 × 8 × 165/60 h = 46.20; a02 runs 10 min: 8 × 10/60 h × 1.60 = 2.1333… → 2.13.
    # (The run's gross then caps its credits at 2.13.)
    "edge-07": (2_13, 46_20),
    # Spot without a price falls through to 1.60; 200 s → 4 min → the 10 min minimum:
    # 1 × 10/60 h × 1.60 = 0.2666… → 0.27.
    "edge-08": (27, 0),
    # A run that never got an allocation: nothing to bill.
    "edge-09": (0, 0),
    # Half a cent: 1 × 10/60 h × 1.59 = 0.265 → 0.27, half away from zero.
    "edge-10": (27, 0),
    # Notice 10 s before the reclaim at 70 min, and a valid checkpoint exactly at the reclaim
    # ("at or before" the end): no replay, nothing excluded: 1 × 70/60 h × 1.60 = 1.8666… →
    # 1.87 (with only the checkpoint at 40 min, 30 min would be excluded: 1.07).
    "edge-11": (1_87, 0),
}


def edge_cases(schema: dict[str, pl.DataType]) -> pl.DataFrame:
    """The events of the :data:`EDGE_EXPECTED` runs, with the generator's ``schema``."""
    rows: list[dict[str, Any]] = []

    def ev(run: str, alloc: str | None, minutes: int, event: str, **cols: Any) -> None:
        seconds = cols.pop("seconds", 0)
        ts = EDGE_T0 + timedelta(minutes=minutes, seconds=seconds)
        rows.append(
            {
                "run_id": run,
                "alloc_id": f"{run}-{alloc}" if alloc else None,
                "ts": ts,
                "source": "scheduler" if event in SCHEDULER_EVENTS else "job",
                "event": event,
                **cols,
            }
        )

    def start(
        run: str,
        alloc: str,
        minutes: int,
        gpus: int,
        sku: str,
        capacity: str,
        price: str | None = None,
        seconds: int = 0,
    ) -> None:
        cols = {"gpus": gpus, "sku": sku, "zone": "us-east-1a", "capacity": capacity}
        price_value = Decimal(price) if price else None
        ev(run, alloc, minutes, "started", seconds=seconds, price=price_value, **cols)

    h100, a100 = "H100-80G", "A100-80G"
    for run in EDGE_EXPECTED:
        ev(run, None, 0, "requested")
    r = "edge-01"
    start(r, "a01", 1, 8, h100, "spot", "2.50")
    ev(r, None, 100, "checkpoint", step=1000, valid=True)
    ev(r, "a01", 110, "checkpoint", step=1100, valid=False)
    ev(r, "a01", 120, "notice")
    ev(r, "a01", 120, "notice", seconds=45)
    ev(r, "a01", 121, "reclaimed")
    start(r, "a02", 141, 8, h100, "on_demand")
    ev(r, "a02", 201, "released")
    ev(r, None, 210, "accepted")
    r = "edge-02"
    start(r, "a01", 0, 4, a100, "spot", "1.50")
    ev(r, None, 70, "checkpoint", step=700, valid=True)
    ev(r, None, 90, "checkpoint", step=900, valid=False)
    ev(r, "a01", 94, "notice", seconds=50)
    ev(r, "a01", 95, "reclaimed")
    start(r, "a02", 95, 4, a100, "spot", "1.50")
    ev(r, "a02", 130, "released")
    r = "edge-03"
    start(r, "a01", 10, 8, h100, "on_demand")
    ev(r, "a01", 10, "failed")
    start(r, "a02", 40, 8, h100, "on_demand")
    ev(r, "a02", 100, "released")
    r = "edge-04"
    start(r, "a01", 10, 1, a100, "on_demand")
    ev(r, "a01", 10, "failed")
    start(r, "a02", 10, 1, a100, "on_demand")
    ev(r, "a02", 70, "released")
    r = "edge-05"
    ev(r, None, 0, "checkpoint", step=0, valid=True)
    start(r, "a01", 5, 8, h100, "spot", "3.00")
    start(r, "a02", 5, 8, h100, "spot", "3.00", seconds=30)
    ev(r, "a01", 125, "reclaimed")
    ev(r, "a02", 126, "released")
    start(r, "a03", 165, 8, h100, "spot", "3.00")
    ev(r, "a03", 225, "released")
    r = "edge-06"
    feb28 = (datetime(2025, 2, 28, 23, tzinfo=UTC) - EDGE_T0) // timedelta(minutes=1)
    start(r, "a01", feb28, 2, a100, "on_demand")
    ev(r, "a01", feb28 + 50, "reclaimed")
    start(r, "a02", feb28 + 80, 2, a100, "on_demand")
    ev(r, "a02", feb28 + 140, "released")
    r = "edge-07"
    start(r, "a01", 0, 8, a100, "on_demand")
    ev(r, "a01", 30, "reclaimed")
    start(r, "a02", 210, 8, a100, "on_demand")
    ev(r, "a02", 220, "released")
    r = "edge-08"
    start(r, "a01", 0, 1, a100, "spot")
    ev(r, "a01", 3, "released", seconds=20)
    ev("edge-09", None, 60, "rejected")
    r = "edge-10"
    start(r, "a01", 0, 1, a100, "spot", "1.59")
    ev(r, "a01", 10, "released")
    r = "edge-11"
    start(r, "a01", 0, 1, a100, "on_demand")
    ev(r, None, 40, "checkpoint", step=400, valid=True)
    ev(r, "a01", 69, "notice", seconds=50)
    ev(r, None, 70, "checkpoint", step=700, valid=True)
    ev(r, "a01", 70, "reclaimed")
    return pl.DataFrame(rows, schema=schema)
