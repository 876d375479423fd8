"""Benchmark: each piece of loading and validating a trace, timed alone.

    python bench/bench_pieces.py                          # 100,000 runs ≈ 10M events
    python bench/bench_pieces.py --trace trace.parquet    # an existing Parquet trace
    python bench/bench_pieces.py --runs 2000 --repeat 1   # smoke size

Where `load + validate` spends its time, piece by piece, in one process, each piece the best
of ``--repeat`` runs, as a ratio to the first (a plain polars read of every column, the floor
of normalising). The pieces overlap (normalising includes its query; the whole check includes
the allocation rules, duplicates and rollbacks): they are not meant to add up. Two baselines
show what the allocation rules' group-by pays for its key: the same rows grouped, with one
count only, by the `alloc_id` text and by a 64-bit hash of it (fast, but two ids with one
hash would be one group: not exact, so not what the engine does).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lib.traces import generate

from contractlang.trace import problems as pb
from contractlang.trace.allocation_rules import allocation_rules
from contractlang.trace.checkpoints import by_run, rollbacks
from contractlang.trace.normalise import normalise, prepare
from contractlang.trace.read import read
from contractlang.trace.row_rules import bad, duplicates, time_ordered
from contractlang.trace.schema import COLUMNS
from contractlang.trace.validate import check

SKEW = timedelta(seconds=1)


def best(fn: Callable[[], object], repeat: int) -> float:
    """The fastest of ``repeat`` runs of ``fn``, in seconds."""
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def pieces(trace: Path, repeat: int) -> list[tuple[str, float]]:
    """Every piece's best time, in the order shown."""
    lf = pl.scan_parquet(trace)
    prep = prepare(read(trace, trace.name), trace.name)
    values = [prep.columns[c].norm.alias(c) for c in COLUMNS if c in prep.columns]
    normal = normalise(read(trace, trace.name), trace.name)
    ev = normal.events
    raw_ids = lf.select("run_id").collect().get_column("run_id")
    distinct = pl.col("run_id").drop_nulls().unique().sort()  # as normalise finds them
    ids = raw_ids.to_frame().lazy().select(distinct).collect().get_column("run_id")
    ordered = by_run(ev.lazy(), bad(ev, "valid"), time_ordered(ev))
    rows = ev.lazy().filter(pl.col("alloc_id").is_not_null())
    sources = pb.Sources.of(trace.name)
    steps: list[tuple[str, Callable[[], object]]] = [
        ("read every column (polars)", lambda: lf.collect(engine="streaming")),
        (
            "the normalising query",
            lambda: prep.lf.select(values).collect(engine="streaming"),
        ),
        ("normalise (whole)", lambda: normalise(read(trace, trace.name), trace.name)),
        (
            "distinct run ids",
            lambda: raw_ids.to_frame().lazy().select(distinct).collect(),
        ),
        ("run_key: the Enum cast", lambda: raw_ids.cast(pl.Enum(ids))),
        (
            "allocation rules",
            lambda: allocation_rules(ev.lazy(), None, SKEW, run_ids=normal.run_ids),
        ),
        (
            "  key baseline: group by text",
            lambda: rows.group_by("alloc_id").agg(pl.len()).collect(engine="streaming"),
        ),
        (
            "  key baseline: group by hash",
            lambda: (
                rows.group_by(pl.col("alloc_id").hash().alias("h"))
                .agg(pl.len())
                .collect(engine="streaming")
            ),
        ),
        ("duplicates (T012)", lambda: duplicates(ev.lazy(), normal.sparse).collect()),
        (
            "checkpoints sorted by run",
            lambda: by_run(ev.lazy(), bad(ev, "valid"), time_ordered(ev)),
        ),
        ("  rollbacks (W101) on them", lambda: rollbacks(ordered).collect()),
        (
            "every rule (check)",
            lambda: check(normal, sources, open_at=None, max_problems=50, clock_skew=SKEW),
        ),
    ]
    return [(name, best(fn, repeat)) for name, fn in steps]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100_000, help="runs to generate")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--trace", type=Path, help="an existing Parquet trace instead")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each piece (best)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-pieces-") as tmp:
        trace = args.trace
        if trace is None:
            trace = Path(tmp) / "trace.parquet"
            generate(args.runs, args.seed, trace)
        rows = pl.scan_parquet(trace).select(pl.len()).collect().item()
        print(f"trace: {rows:,} events; best of {args.repeat}", flush=True)
        found = pieces(trace, args.repeat)
    floor = found[0][1]
    print(f"\n{'piece':40s} {'best s':>8s} {'× read':>8s}")
    for name, seconds in found:
        print(f"{name:40s} {seconds:8.3f} {seconds / floor:7.2f}×")


if __name__ == "__main__":
    main()
