"""contractlang's evaluation of the bench contract, as an :class:`~lib.outcome.Outcome` the
baselines' can be checked against."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import polars as pl

from lib.contract import terms_text
from lib.outcome import MONEY_COLUMNS, Outcome


def engine_outcome(evaluation: Any) -> Outcome:
    """The :data:`lib.contract.CONTRACT` results of a ``contractlang`` evaluation."""
    result = evaluation.contract("bench")
    runs = result.runs.select(
        "run_id",
        pl.col("gross_minor").alias("gross"),
        (-pl.col("credit_lines_minor")).alias("credits"),
        pl.col("cap_cuts_minor").alias("cap_cuts"),
        pl.col("net_minor").alias("net"),
    ).with_columns(pl.col(c).cast(pl.Int64) for c in MONEY_COLUMNS)
    t = result.totals
    totals = {
        "gross": t.gross_minor,
        "credits": t.credits_minor,
        "cap_cuts": t.cap_cuts_minor,
        "net": t.net_minor,
    }
    return Outcome(runs, int(t.metered_gpu_us), totals)


def engine_evaluate(path: Path, contracts: int) -> Outcome:
    """``contractlang.evaluate.evaluate`` end to end, as the CLI calls it."""
    # imported here, in the child process that measures this step, so its
    # import time and memory count only where they are measured
    from contractlang.pipeline.evaluation import EvaluateOptions, evaluate  # noqa: PLC0415
    from contractlang.pipeline.language import terms_from_text  # noqa: PLC0415

    terms = terms_from_text(terms_text(contracts), "bench.spot")
    # as the command line calls it without --format json: shards chosen automatically (one
    # at this size), the events let go once the facts are derived, no trace digest (the JSON
    # document's; bench_digest.py measures it)
    options = EvaluateOptions(shards=None, ledger=False, keep_events=False, digest=False)
    result = evaluate(terms, path, options)
    return engine_outcome(result)


def engine_phases(path: Path, contracts: int, phases: dict[str, list[float]]) -> Outcome:
    """The same as :func:`engine_evaluate`, one phase at a time, appending each phase's
    seconds to ``phases``. The facts are collected once, together (``Facts.collect``), and
    handed to ``evaluate_facts`` as frames."""
    # imported here, in the child process that measures this step, so its
    # import time and memory count only where they are measured
    from contractlang.pipeline.evaluation import evaluate_facts  # noqa: PLC0415
    from contractlang.pipeline.language import terms_from_text  # noqa: PLC0415
    from contractlang.trace import Facts, derive_facts, load_trace  # noqa: PLC0415

    t0 = time.perf_counter()
    terms = terms_from_text(terms_text(contracts), "bench.spot")
    t1 = time.perf_counter()
    trace = load_trace(path)
    t2 = time.perf_counter()
    allocations, runs = derive_facts(trace).collect()
    t3 = time.perf_counter()
    evaluation = evaluate_facts(terms, trace, Facts(allocations.lazy(), runs.lazy()))
    t4 = time.perf_counter()
    for name, seconds in (
        ("parse+check terms", t1 - t0),
        ("load+validate trace", t2 - t1),
        ("derive facts", t3 - t2),
        ("evaluate", t4 - t3),
    ):
        phases.setdefault(name, []).append(seconds)
    return engine_outcome(evaluation)
