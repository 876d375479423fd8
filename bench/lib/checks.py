"""The cross-checks of the evaluation benchmarks: every step's figures against the engine's,
exactly, and the edge cases against their hand computation."""

from __future__ import annotations

import polars as pl

from lib.edge_cases import EDGE_EXPECTED
from lib.outcome import MONEY_COLUMNS, StepReport, totals_of


def compare(reference: StepReport, others: list[StepReport]) -> list[str]:
    """Every difference between ``reference`` and ``others`` in metered GPU-time, totals and
    each run's money; empty when they all agree exactly."""
    problems: list[str] = []
    assert reference.runs is not None
    ref_totals = reference.totals or totals_of(reference.runs)
    if ref_totals != totals_of(reference.runs):
        problems.append(
            f"{reference.step}: totals {ref_totals} are not the sums of its runs "
            f"{totals_of(reference.runs)}"
        )
    for other in others:
        if other.metered_gpu_us is not None and other.metered_gpu_us != reference.metered_gpu_us:
            problems.append(
                f"{other.step}: metered GPU-µs {other.metered_gpu_us} ≠ "
                f"{reference.step}: {reference.metered_gpu_us}"
            )
        if other.runs is None:
            continue
        totals = other.totals or totals_of(other.runs)
        if totals != ref_totals:
            problems.append(f"{other.step}: totals {totals} ≠ {reference.step}: {ref_totals}")
        ref, oth = reference.step, other.step
        joined = reference.runs.rename({c: f"{c}:{ref}" for c in MONEY_COLUMNS}).join(
            other.runs.rename({c: f"{c}:{oth}" for c in MONEY_COLUMNS}),
            on="run_id",
            how="full",
            coalesce=True,
        )
        differ = pl.any_horizontal(
            pl.col(f"{c}:{ref}").ne_missing(pl.col(f"{c}:{oth}")) for c in MONEY_COLUMNS
        )
        bad = joined.filter(differ).sort("run_id")
        if bad.height:
            with pl.Config(tbl_cols=-1, tbl_width_chars=200):
                problems.append(
                    f"{oth}: {bad.height} run(s) differ from {ref}; the first:\n{bad.head(5)}"
                )
    return problems


def check_edge_cases(reports: list[StepReport]) -> list[str]:
    """Each step's gross and credits of the :data:`lib.edge_cases.EDGE_EXPECTED` runs against
    the hand computation."""
    expected = pl.DataFrame(
        [(run, gross, -credits) for run, (gross, credits) in EDGE_EXPECTED.items()],
        schema={"run_id": pl.String, "gross:hand": pl.Int64, "credits:hand": pl.Int64},
        orient="row",
    )
    problems = []
    for r in reports:
        if r.runs is None:
            continue
        got = expected.join(r.runs, on="run_id", how="left")
        bad = got.filter(
            pl.col("gross").ne_missing(pl.col("gross:hand"))
            | pl.col("credits").ne_missing(pl.col("credits:hand"))
        )
        if bad.height:
            with pl.Config(tbl_cols=-1, tbl_width_chars=200):
                problems.append(f"{r.step}: edge cases differ from the hand computation:\n{bad}")
    return problems
