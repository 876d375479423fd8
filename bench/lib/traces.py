"""Traces for the benchmarks, made with the project's generator and written to Parquet,
untimed: with the hand-made edge cases (:mod:`lib.edge_cases`), plain, or in batches."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import polars as pl

from lib.edge_cases import EDGE_EXPECTED, edge_cases
from lib.measure import peak_rss_gb


def make_trace(runs: int, seed: int, path: Path) -> tuple[int, int]:
    """Generate the trace with the edge cases and write it to ``path``; returns the numbers
    of events and allocations."""
    # imported here, in the child process that measures this step, so its
    # import time and memory count only where they are measured
    from contractlang.trace import generate_trace, write_trace  # noqa: PLC0415
    from contractlang.trace.generate import GENERATED_SCHEMA  # noqa: PLC0415

    t0 = time.perf_counter()
    trace = pl.concat([generate_trace(runs, seed=seed), edge_cases(GENERATED_SCHEMA)])
    t1 = time.perf_counter()
    write_trace(trace, path)
    t2 = time.perf_counter()
    # the baselines read `price` as whole cents
    price = trace.schema["price"]
    if not (isinstance(price, pl.Decimal) and (price.scale or 0) <= 2):
        raise SystemExit(f"the baselines need `price` in whole cents, not {price}")
    events, allocations = trace.height, int((trace["event"] == "started").sum())
    print(
        f"trace: {runs:,} runs (+{len(EDGE_EXPECTED)} edge cases), {allocations:,} allocations, "
        f"{events:,} events, {path.stat().st_size / 1e6:.0f} MB of Parquet; generated in "
        f"{t1 - t0:.1f} s and written in {t2 - t1:.1f} s (not timed)",
        file=sys.stderr,
    )
    return events, allocations


def generate(runs: int, seed: int, path: Path) -> None:
    """In a subprocess: generate and write the trace."""
    # imported here, in the child process that measures this step, so its
    # import time and memory count only where they are measured
    from contractlang.trace import generate_trace, write_trace  # noqa: PLC0415

    t = time.perf_counter()
    df = generate_trace(runs, seed)
    gen_s = time.perf_counter() - t
    write_trace(df, path)
    print(
        f"generated {df.height:,} events ({runs:,} runs) in {gen_s:.1f} s "
        f"(+ {time.perf_counter() - t - gen_s:.1f} s to write), peak RSS {peak_rss_gb():.2f} GB"
    )


def make_large_trace(runs: int, seed: int, path: Path) -> None:
    """A trace of ``runs`` runs from the project's generator, made in batches as
    ``contractlang trace generate`` makes it (:func:`~contractlang.trace.generate.
    generate_batches`: never more than one batch held)."""
    # imported here, in the process that makes the trace (not a measured step)
    from contractlang.trace.generate import generate_batches, write_generated  # noqa: PLC0415

    events, _ = write_generated(generate_batches(runs, seed), path)
    print(f"generated {events:,} events", file=sys.stderr, flush=True)
