"""Benchmark `contractlang simulate`'s trace generation: 100,000 runs of a 48-hour,
64-GPU job with about 10 reclaims each, generated and written to Parquet in batches.

    python bench/bench_simulate.py                  # 100,000 runs ≈ 16.5M events
    python bench/bench_simulate.py --runs 5000      # smoke size
    python bench/bench_simulate.py --repeat 3       # median of 3 rounds (default 1)

Each step runs in a fresh child process (this script with ``--step``), which times it and
reports its own peak resident memory (``VmHWM``, after its imports: "base" is what the
interpreter and the libraries hold before the step).

Steps:

- ``floor``: write as many rows as the generation wrote, with the same columns and types, in
  the same batches, through the same writer (:func:`contractlang.simulate.write.sink_atomically`),
  each batch filled by the cheapest means (repeated ids, a range of times): what writing that
  many rows costs, whatever the simulation;
- ``generate``: :class:`contractlang.simulate.generate.Simulator` for the workload below (every
  attempt accepted) under a 30-second notice with no restart promise —
  the vectorised simulation, the frames and the same writer.

Targets, reported and not enforced: generation ≤ 20 s and peak memory ≤ 2 GB on the project
machine (2 cores).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # contractlang
sys.path.insert(0, str(Path(__file__).resolve().parent))
from lib.measure import cpu_seconds, peak_rss_gb

#: The workload, 100,000 runs; every attempt is accepted so one run is one training.
WORKLOAD = """\
runs = {runs}
seed = 7
gpus = 64
sku = "H100-80G"
price = 2.10
total_steps = 20000           # 20,000 × 8.6 s = 47.8 h of training
step_seconds = 8.6
checkpoint_every_steps = 200  # a checkpoint every 28.7 min
save_seconds = 40
restore_seconds = 90
checkpoint_on_notice = true
invalid_checkpoint_chance = 0.02

[reclaims]
rate_per_hour = 0.2           # about 10 reclaims in 48 h

[replacement]
distribution = "lognormal"
median_minutes = 12
"""
NOTICE_US = 30_000_000
BATCH = 10_000
TARGET_S, TARGET_GB = 20.0, 2.0


# --------------------------------------------------------------------------- steps (children)


def step_generate(runs: int, out: Path) -> dict[str, Any]:
    # imported in the child that measures this step, so imports count only there
    import polars as pl  # noqa: PLC0415

    from contractlang.simulate.generate import Simulator  # noqa: PLC0415
    from contractlang.simulate.provider import Promises  # noqa: PLC0415
    from contractlang.simulate.workload import parse_workload  # noqa: PLC0415
    from contractlang.simulate.write import sink_atomically  # noqa: PLC0415

    w = parse_workload(WORKLOAD.format(runs=runs), "bench.toml").workload
    base = peak_rss_gb()
    counts = {"reclaimed": 0, "batches": 0}
    sizes: list[int] = []

    t, cpu = time.perf_counter(), cpu_seconds()
    sim = Simulator(w, None, Promises(NOTICE_US, None))

    def batches() -> Iterator[pl.DataFrame]:
        for frame in sim.batches(BATCH):
            counts["reclaimed"] += frame.filter(pl.col("event") == "reclaimed").height
            counts["batches"] += 1
            sizes.append(frame.height)
            yield frame

    rows = sink_atomically(out, sim.columns.schema(), batches)
    seconds, cpu = time.perf_counter() - t, cpu_seconds() - cpu
    (out.parent / "sizes.json").write_text(json.dumps(sizes))
    return {
        "seconds": seconds,
        "cpu_seconds": cpu,
        "rows": rows,
        "runs": runs,
        "reclaims": counts["reclaimed"],
        "batches": counts["batches"],
        "bytes": out.stat().st_size,
        "base_gb": base,
    }


def step_floor(sizes_file: Path, out: Path) -> dict[str, Any]:
    import numpy as np  # noqa: PLC0415
    import polars as pl  # noqa: PLC0415

    from contractlang.simulate.events import Columns  # noqa: PLC0415
    from contractlang.simulate.workload import parse_workload  # noqa: PLC0415
    from contractlang.simulate.write import sink_atomically  # noqa: PLC0415

    sizes = json.loads(sizes_file.read_text())
    w = parse_workload(WORKLOAD.format(runs=1), "bench.toml").workload
    columns = Columns(64, w.sku, w.capacity, w.price, 0, 6, 4)
    schema = columns.schema()
    base = peak_rss_gb()
    t, cpu = time.perf_counter(), cpu_seconds()

    def batches() -> Iterator[pl.DataFrame]:
        for n in sizes:
            i = np.arange(n, dtype=np.int64)
            frame = pl.DataFrame(
                {
                    "run_id": pl.Series(["run-000001"]).gather(np.zeros(n, dtype=np.int64)),
                    "alloc_id": pl.Series(["run-000001-a0001"]).gather(np.zeros(n, dtype=np.int64)),
                    "ts": pl.Series(i * 1_000_000).cast(pl.Datetime("us")),
                    "source": pl.Series(["job"]).gather(np.zeros(n, dtype=np.int64)),
                    "event": pl.Series(["checkpoint"]).gather(np.zeros(n, dtype=np.int64)),
                    "gpus": i,
                    "sku": pl.Series([w.sku]).gather(np.zeros(n, dtype=np.int64)),
                    "capacity": pl.Series(["spot"]).gather(np.zeros(n, dtype=np.int64)),
                    "price": pl.Series(i % 1000).cast(pl.Decimal(38, 2)),
                    "step": i,
                    "valid": i % 2 == 0,
                }
            )
            yield frame.with_columns(pl.col("ts").dt.replace_time_zone("UTC")).cast(schema)

    rows = sink_atomically(out, schema, batches)
    seconds, cpu = time.perf_counter() - t, cpu_seconds() - cpu
    return {"seconds": seconds, "cpu_seconds": cpu, "rows": rows, "base_gb": base}


def run_step(name: str, runs: int, work: Path) -> None:
    if name == "generate":
        result = step_generate(runs, work / "trace.parquet")
    else:
        result = step_floor(work / "sizes.json", work / "floor.parquet")
    result.update(step=name, peak_gb=peak_rss_gb())
    print(json.dumps(result), flush=True)


# --------------------------------------------------------------------------- driver


def child(name: str, runs: int, work: Path) -> dict[str, Any]:
    cmd = [sys.executable, __file__, "--step", name, "--runs", str(runs), "--work", str(work)]
    proc = subprocess.run(cmd, check=False, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"step {name} failed:\n{proc.stderr}")
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=1, help="rounds (medians reported)")
    parser.add_argument("--step", choices=["generate", "floor"], help=argparse.SUPPRESS)
    parser.add_argument("--work", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.step:
        run_step(args.step, args.runs, args.work)
        return
    rounds: dict[str, list[dict[str, Any]]] = {"generate": [], "floor": []}
    with tempfile.TemporaryDirectory(prefix="bench-simulate-") as tmp:
        work = Path(tmp)
        load_before = Path("/proc/loadavg").read_text().split()[0]
        for _ in range(args.repeat):
            for name in ("generate", "floor"):  # the floor writes the rows generate wrote
                rounds[name].append(child(name, args.runs, work))
        load_after = Path("/proc/loadavg").read_text().split()[0]
    gen, flo = rounds["generate"][0], rounds["floor"][0]
    if flo["rows"] != gen["rows"]:
        sys.exit("the floor wrote another number of rows: the figures are not comparable")
    print(
        f"{gen['runs']:,} runs → {gen['rows']:,} events ({gen['rows'] / gen['runs']:.1f} a run), "
        f"{gen['reclaims'] / gen['runs']:.2f} reclaims a run, {gen['batches']} batches of "
        f"{BATCH:,} runs, {gen['bytes'] / 1e6:.0f} MB of Parquet; median of {args.repeat}; "
        f"load average {load_before} before, {load_after} after\n"
    )
    head = f"{'step':<10} {'median s':>9} {'min s':>7} {'max s':>7} {'CPU s':>7} {'peak GB':>8}"
    print(f"{head} {'base GB':>8}")
    for name in ("floor", "generate"):
        rs = rounds[name]
        secs = [r["seconds"] for r in rs]
        print(
            f"{name:<10} {statistics.median(secs):>9.2f} {min(secs):>7.2f} {max(secs):>7.2f} "
            f"{statistics.median(r['cpu_seconds'] for r in rs):>7.2f} "
            f"{max(r['peak_gb'] for r in rs):>8.2f} {rs[0]['base_gb']:>8.2f}"
        )
    g = statistics.median(r["seconds"] for r in rounds["generate"])
    f = statistics.median(r["seconds"] for r in rounds["floor"])
    peak = max(r["peak_gb"] for r in rounds["generate"])
    print(
        f"\ngenerate ÷ floor: {g / f:.2f}×; generation {g:.1f} s (target ≤ {TARGET_S:g} s: "
        f"{'met' if g <= TARGET_S else 'not met'}), peak {peak:.2f} GB (target ≤ "
        f"{TARGET_GB:g} GB: {'met' if peak <= TARGET_GB else 'not met'})"
    )
    print(json.dumps(rounds))


if __name__ == "__main__":
    main()
