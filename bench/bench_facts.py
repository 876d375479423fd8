"""Benchmark: load + validate a large generated trace, then derive its facts.

    python bench/bench_facts.py                    # 100,000 runs: ~1M allocations, ~10M events
    python bench/bench_facts.py --runs 10000       # smaller
    python bench/bench_facts.py --no-duckdb        # skip the DuckDB cross-check

Each phase runs in its own subprocess, and its peak RSS (``VmHWM``, reset after the floor and
after any setup) is its own. In every
subprocess a *floor* runs first: a polars scan that only pairs starts with ends and sums the
metered GPU-time; each phase is reported as a ratio to that floor, measured in the same process.

Phases:

- ``load``: :func:`load_trace` (read, normalise, every validation rule).
- ``derive``: :func:`derive_facts` collected (both frames), after an untimed
  :func:`load_trace` (whose memory is then the phase's base); writes the facts for the
  comparison.
- ``duckdb``: the same facts written by hand in DuckDB SQL from the Parquet file, checked
  equal to polars' facts column by column (an independent implementation of the facts of
  ``docs/trace.md``).

Figures are printed as a table and as one JSON line per phase: wall-clock seconds, and CPU
seconds (user + system, over every thread; on a shared machine they vary less than wall-clock
time).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # contractlang
sys.path.insert(0, str(Path(__file__).resolve().parent))
from lib.duckdb_facts import allocations_differing, facts_sql, runs_differing, runs_sql
from lib.measure import current_rss_gb, peak_rss_gb, reset_peak
from lib.traces import generate


def floor(path: Path) -> tuple[float, int]:
    """A polars scan that pairs each start with its end and sums gpus × (end − start)."""
    t = time.perf_counter()
    lf = pl.scan_parquet(path)
    starts = lf.filter(pl.col("event") == "started").select(
        "alloc_id", "gpus", pl.col("ts").alias("start")
    )
    ends = lf.filter(pl.col("event").is_in(["released", "reclaimed", "failed"])).select(
        "alloc_id", pl.col("ts").alias("end")
    )
    total = (
        starts.join(ends, on="alloc_id")
        .select(((pl.col("end") - pl.col("start")).dt.total_microseconds() * pl.col("gpus")).sum())
        .collect(engine="streaming")
        .item()
    )
    return time.perf_counter() - t, int(total)


# --------------------------------------------------------------------------- phases


def phase_load(trace: Path, work: Path) -> dict[str, Any]:
    # imported here, in the child process that measures this step, so its
    # import time and memory count only where they are measured
    from contractlang.trace import load_trace  # noqa: PLC0415

    t, cpu = time.perf_counter(), time.process_time()
    loaded = load_trace(trace)
    seconds, cpu = time.perf_counter() - t, time.process_time() - cpu
    return {
        "seconds": seconds,
        "cpu_seconds": cpu,
        "rows": loaded.summary.rows_read,
        "runs": loaded.summary.runs,
    }


def phase_derive(trace: Path, work: Path) -> dict[str, Any]:
    # imported here, in the child process that measures this step, so its
    # import time and memory count only where they are measured
    from contractlang.trace import derive_facts, load_trace  # noqa: PLC0415

    # loaded here, untimed, as `evaluate` has it before deriving (the trace with its index)
    loaded = load_trace(trace)
    before = current_rss_gb()
    reset_peak()
    t, cpu = time.perf_counter(), time.process_time()
    allocations, runs = derive_facts(loaded).collect()
    seconds, cpu = time.perf_counter() - t, time.process_time() - cpu
    allocations.write_parquet(work / "allocations.parquet")
    runs.write_parquet(work / "runs.parquet")
    metered = runs["metered_gpu_time"].dt.total_microseconds().sum()
    return {
        "seconds": seconds,
        "cpu_seconds": cpu,
        "allocations": allocations.height,
        "metered_gpu_us": int(metered),
        "rss_gb_before": round(before, 3),  # the events, held before deriving
    }


def phase_duckdb(trace: Path, work: Path) -> dict[str, Any]:
    # imported here, in the child process that measures this step, so its
    # import time and memory count only where they are measured
    import duckdb  # noqa: PLC0415

    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    t, cpu = time.perf_counter(), time.process_time()
    result = con.execute(facts_sql(trace)).to_arrow_table()
    facts = pl.from_arrow(result)
    assert isinstance(facts, pl.DataFrame)
    seconds, cpu = time.perf_counter() - t, time.process_time() - cpu
    differing, same_rows = allocations_differing(work / "allocations.parquet", facts)
    t, run_cpu = time.perf_counter(), time.process_time()
    runs_result = con.execute(runs_sql(trace)).to_arrow_table()
    run_seconds, run_cpu = time.perf_counter() - t, time.process_time() - run_cpu
    their_runs = pl.from_arrow(runs_result)
    assert isinstance(their_runs, pl.DataFrame)
    differing_runs, same_runs = runs_differing(work / "runs.parquet", their_runs)
    differing.update(differing_runs)
    return {
        "seconds": seconds + run_seconds,
        "cpu_seconds": cpu + run_cpu,
        "allocations": facts.height,
        "runs": their_runs.height,
        "agree": same_rows and same_runs and not any(differing.values()),
        "differing": differing,
    }


PHASES = {"load": phase_load, "derive": phase_derive, "duckdb": phase_duckdb}


def run_phase(name: str, trace: Path, work: Path) -> None:
    """In a subprocess: the floor, then the phase; one JSON line on stdout."""
    floor_s, floor_total = floor(trace)
    reset_peak()
    result = PHASES[name](trace, work)
    result.update(
        phase=name,
        floor_seconds=round(floor_s, 3),
        floor_metered_gpu_us=floor_total,
        ratio_to_floor=round(result["seconds"] / floor_s, 1),
        seconds=round(result["seconds"], 3),
        cpu_seconds=round(result["cpu_seconds"], 3),
        peak_rss_gb=round(peak_rss_gb(), 3),
    )
    print(json.dumps(result), flush=True)


# --------------------------------------------------------------------------- driver


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100_000, help="runs to generate (~10 each)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--trace", type=Path, help="use this Parquet trace instead")
    parser.add_argument("--no-duckdb", action="store_true", help="skip the DuckDB cross-check")
    parser.add_argument("--phase", choices=sorted(PHASES), help=argparse.SUPPRESS)
    parser.add_argument("--work", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--generate", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.phase:
        run_phase(args.phase, args.trace, args.work)
        return
    if args.generate is not None:
        generate(args.generate, args.seed, args.trace)
        return

    with tempfile.TemporaryDirectory(prefix="bench-facts-") as tmp:
        work = Path(tmp)
        trace = args.trace
        if trace is None:
            trace = work / "trace.parquet"
            cmd = [sys.executable, __file__, "--generate", str(args.runs), "--seed"]
            proc = subprocess.run(
                [*cmd, str(args.seed), "--trace", str(trace)],
                check=False,
                capture_output=True,
                text=True,
            )
            if proc.returncode != 0:
                sys.exit(f"generating failed:\n{proc.stderr}")
            print(proc.stdout.strip(), flush=True)
        phases = ["load", "derive"] + ([] if args.no_duckdb else ["duckdb"])
        results = []
        for name in phases:
            cmd = [sys.executable, __file__, "--phase", name, "--trace", str(trace)]
            proc = subprocess.run(
                [*cmd, "--work", str(work)], check=False, capture_output=True, text=True
            )
            if proc.returncode != 0:
                sys.exit(f"phase {name} failed:\n{proc.stderr}")
            results.append(json.loads(proc.stdout.strip().splitlines()[-1]))
        print(
            f"\n{'phase':<8} {'seconds':>8} {'CPU s':>8} {'floor s':>8} {'× floor':>8} "
            f"{'peak RSS GB':>12}"
        )
        for r in results:
            print(
                f"{r['phase']:<8} {r['seconds']:>8.2f} {r['cpu_seconds']:>8.2f} "
                f"{r['floor_seconds']:>8.2f} "
                f"{r['ratio_to_floor']:>8.1f} {r['peak_rss_gb']:>12.2f}"
            )
        derive = next(r for r in results if r["phase"] == "derive")
        if derive["metered_gpu_us"] != derive["floor_metered_gpu_us"]:
            sys.exit("metered GPU-time differs from the floor's: the benchmark is not comparable")
        for r in results:
            if r["phase"] == "duckdb":
                verdict = "agree" if r["agree"] else f"DIFFER: {r['differing']}"
                print(
                    f"\nDuckDB and polars facts for {r['allocations']:,} allocations and "
                    f"{r['runs']:,} runs: {verdict}"
                )
        print()
        for r in results:
            print(json.dumps(r))
        if any(r["phase"] == "duckdb" and not r["agree"] for r in results):
            sys.exit(1)  # the facts differ: the figures above mean nothing


if __name__ == "__main__":
    main()
