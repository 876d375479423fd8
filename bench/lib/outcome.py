"""What an evaluation benchmark's step computed, and what it measured, as the steps exchange
them: per-run money in integer cents, metered GPU-time, the totals."""

from __future__ import annotations

import statistics
from dataclasses import dataclass

import polars as pl

#: Per-run money every evaluating step returns, in integer cents (credits negative).
MONEY_COLUMNS = ("gross", "credits", "cap_cuts", "net")


@dataclass
class Outcome:
    """What one step computed: per-run money (``run_id`` + :data:`MONEY_COLUMNS`; None for the
    floors), metered GPU-microseconds (None for the one-column floor), and the totals the
    engine reports itself (None for the baselines, whose totals are sums of their runs)."""

    runs: pl.DataFrame | None
    metered_gpu_us: int | None
    totals: dict[str, int] | None = None


@dataclass
class StepReport:
    """A step's measurements, read back from its child process."""

    step: str
    wall: list[float]
    cpu: list[float]
    phases: dict[str, list[float]]
    rss_base_gb: float
    rss_peak_gb: float
    metered_gpu_us: int | None
    totals: dict[str, int] | None
    runs: pl.DataFrame | None

    @property
    def median(self) -> float:
        return statistics.median(self.wall)


def totals_of(runs: pl.DataFrame) -> dict[str, int]:
    return {c: int(runs[c].sum()) for c in MONEY_COLUMNS}
