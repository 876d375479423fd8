"""Benchmark evaluating a trace in shards, locally and on Ray.

    python bench/bench_scale.py                          # 100,000 runs ≈ 10M events
    python bench/bench_scale.py --runs 2000              # smoke size
    python bench/bench_scale.py --trace t100m.parquet --steps sharded --shards auto
                                                         # a trace larger than memory

Every step runs in a fresh child process (this script with ``--step``) that records its own
wall and CPU time and peak resident memory (``VmHWM``); Ray's workers are other processes,
so for the Ray step the peak is the driver's, and the workers' largest peak is reported
beside it. Steps:

- ``polars``: the hand-written polars query of ``lib/polars_baseline.py`` (the baseline every
  figure is a ratio to), streaming engine;
- ``whole``: ``contractlang.pipeline.evaluation.evaluate`` of the bench contract, one shard
  (the trace loaded whole);
- ``sharded``: the same with ``--shards`` shards (default 4; ``auto`` as the command line
  chooses), one after another in this process, with the time of each phase: reading the
  files' runs, the shards, the global step;
- ``ray``: the same shards as Ray tasks on a local Ray (``ray.init(num_cpus=2)``, started
  before the clock), each reading its rows from the Parquet file.

Every evaluating step's per-run money must equal the polars query's exactly, and the
engines' JSON documents must be the same bytes; else the script exits 1. From the sharded
step's per-shard time it projects, on paper, 1B events on 32 workers (``docs/scale.md``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lib.contract import CONTRACT
from lib.engine import engine_outcome
from lib.measure import compile_bytecode, cpu_seconds, peak_rss_kb
from lib.polars_baseline import polars_baseline
from lib.traces import make_large_trace, make_trace

STEPS = ("polars", "whole", "sharded", "ray")


def _engine(path: Path, shards: int | None, engine: str, out: Path, step: str) -> dict[str, Any]:
    """Evaluate the bench contract; write its JSON document and per-run money; return the
    phases' times."""
    # imported here, in the child process that measures this step, so its
    # import time and memory count only where they are measured
    from contractlang.pipeline.evaluation import EvaluateOptions, evaluate  # noqa: PLC0415
    from contractlang.pipeline.language import terms_from_text  # noqa: PLC0415
    from contractlang.render.evaluate.json import render_json  # noqa: PLC0415

    terms = terms_from_text(CONTRACT, "bench.spot")
    marks: list[tuple[str, float]] = []

    def progress(message: str) -> None:
        marks.append((message, time.perf_counter()))

    t0 = time.perf_counter()
    result = evaluate(
        terms,
        path,
        EvaluateOptions(
            shards=shards,
            engine=engine,  # type: ignore[arg-type]
            ledger=False,
            keep_events=False,  # as `evaluate --format json`: the digest taken, the events let go
            digest=True,
        ),
        progress=progress,
    )
    t1 = time.perf_counter()
    (out / f"{step}.json-doc").write_text(render_json(result))
    outcome = engine_outcome(result)
    assert outcome.runs is not None
    outcome.runs.sort("run_id").write_parquet(out / f"{step}.parquet")
    done = [(m, t) for m, t in marks if m.endswith("shards done")]
    phases: dict[str, float] = {"all": t1 - t0}
    if done:  # "0 of N shards done" comes once the runs are dealt
        planned = next(t for m, t in marks if m == "reading the trace's runs")
        phases["plan"] = done[0][1] - planned
        phases["shards"] = done[-1][1] - done[0][1]
        phases["global"] = t1 - done[-1][1]
        phases["count"] = len(done) - 1
    return phases


def run_step(step: str, path: Path, out: Path, shards: str) -> None:
    """Child mode: run one step, write ``out/STEP.json``."""
    count = None if shards == "auto" else int(shards)
    ray_peak = None
    if step == "ray":
        # imported here, in the child process that measures this step, so its
        # import time and memory count only where they are measured
        import ray  # noqa: PLC0415

        ray.init(num_cpus=2, include_dashboard=False, logging_level="ERROR", log_to_driver=False)
    if step in ("whole", "sharded", "ray"):
        # the first parse in a process builds the grammar: not timed
        from contractlang.pipeline.language import terms_from_text  # noqa: PLC0415

        terms_from_text('contract "warm-up" { currency USD rate 1 USD per gpu_hour }')
    base = peak_rss_kb()
    c0, t0 = cpu_seconds(), time.perf_counter()
    phases: dict[str, float] = {}
    if step == "polars":
        outcome = polars_baseline(path, "streaming")
        assert outcome.runs is not None
        outcome.runs.sort("run_id").write_parquet(out / "polars.parquet")
    elif step == "whole":
        phases = _engine(path, 1, "local", out, step)
    elif step == "sharded":
        phases = _engine(path, count if count is not None else None, "local", out, step)
    else:
        phases = _engine(path, count if count is not None else None, "ray", out, step)
        ray_peak = _ray_worker_peak_kb()
    wall, cpu = time.perf_counter() - t0, cpu_seconds() - c0
    report = {
        "wall": wall,
        "cpu": cpu,
        "phases": phases,
        "rss_base_kb": base,
        "rss_peak_kb": peak_rss_kb(),
        "workers_peak_kb": ray_peak,
    }
    (out / f"{step}.json").write_text(json.dumps(report))


def _ray_worker_peak_kb() -> int | None:
    """The largest ``VmHWM`` among the Ray workers this process started (its local Ray's
    ``ray::`` processes: descendants of this process)."""
    parents: dict[int, int] = {}
    names: dict[int, bytes] = {}
    peaks: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        pid = int(entry)
        try:
            names[pid] = Path(f"/proc/{pid}/cmdline").read_bytes()
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                key, _, value = line.partition(":")
                if key == "PPid":
                    parents[pid] = int(value)
                elif key == "VmHWM":
                    peaks[pid] = int(value.split()[0])
        except (OSError, ValueError):
            continue

    def descends(pid: int) -> bool:
        seen = 0
        while pid in parents and seen < 64:
            pid, seen = parents[pid], seen + 1
            if pid == os.getpid():
                return True
        return False

    workers = [peaks[p] for p in peaks if names.get(p, b"").startswith(b"ray::") and descends(p)]
    return max(workers) if workers else None


def spawn(step: str, trace: Path, out: Path, shards: str) -> dict[str, Any]:
    cmd = [sys.executable, __file__, "--step", step, "--trace", str(trace), "--out", str(out)]
    cmd += ["--shards", shards]
    done = subprocess.run(cmd, check=False)
    if done.returncode:
        print(f"\nstep `{step}` failed (exit {done.returncode})", file=sys.stderr)
        sys.exit(1)
    return json.loads((out / f"{step}.json").read_text())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100_000, help="runs to generate")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--trace", type=Path, help="an existing Parquet trace instead")
    parser.add_argument("--shards", default="4", help="N, or auto (default 4)")
    parser.add_argument("--repeat", type=int, default=1, help="rounds (median)")
    parser.add_argument("--steps", default=",".join(STEPS), help="which steps, comma-separated")
    parser.add_argument("--keep", type=Path, help="keep the trace and results in this folder")
    parser.add_argument(
        "--generate", type=Path, help="only generate a trace of --runs runs here, in batches"
    )
    parser.add_argument("--step", choices=STEPS, help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.step:
        run_step(args.step, args.trace, args.out, args.shards)
        return
    if args.generate:
        make_large_trace(args.runs, args.seed, args.generate)
        return
    steps = [s for s in args.steps.split(",") if s]
    with tempfile.TemporaryDirectory(prefix="bench-scale-") as tmp:
        out = args.keep or Path(tmp)
        out.mkdir(parents=True, exist_ok=True)
        trace = args.trace
        if trace is None:
            trace = out / "trace.parquet"
            make_trace(args.runs, args.seed, trace)
        events = int(pl.scan_parquet(trace).select(pl.len()).collect().item())
        print(compile_bytecode(), file=sys.stderr)
        reports: dict[str, list[dict[str, Any]]] = {s: [] for s in steps}
        load = os.getloadavg()[0]
        for n in range(args.repeat):
            print(f"round {n + 1} of {args.repeat}:", end="", flush=True, file=sys.stderr)
            for step in steps:
                print(f" {step}", end="", flush=True, file=sys.stderr)
                reports[step].append(spawn(step, trace, out, args.shards))
            print(file=sys.stderr)
        problems = _check(out, steps)
        _print(reports, events, args, (load, os.getloadavg()[0]))
    if problems:
        print("\nTHE RESULTS DIFFER, so the figures above mean nothing:", file=sys.stderr)
        for p in problems:
            print(f"- {p}", file=sys.stderr)
        sys.exit(1)
    note = "" if "polars" in steps else " (no baseline run)"
    print(f"\nevery step agrees exactly on every run{note}")


def _check(out: Path, steps: list[str]) -> list[str]:
    problems = []
    runs = {s: pl.read_parquet(out / f"{s}.parquet") for s in steps}
    docs = {s: (out / f"{s}.json-doc").read_text() for s in steps if s != "polars"}
    reference = "polars" if "polars" in steps else next(iter(docs), None)
    for s in steps:
        if reference is not None and not runs[s].equals(runs[reference]):
            problems.append(f"{s}: per-run money differs from {reference}")
    texts = list(docs.values())
    if any(t != texts[0] for t in texts):
        problems.append("the engines' JSON documents differ: " + ", ".join(docs))
    return problems


def _print(
    reports: dict[str, list[dict[str, Any]]],
    events: int,
    args: argparse.Namespace,
    load: tuple[float, float],
) -> None:
    def med(step: str, key: str) -> float:
        return statistics.median(r[key] for r in reports[step])

    print(
        f"\n{events:,} events; shards {args.shards}; {os.cpu_count()} cores; polars "
        f"{pl.__version__}; median of {args.repeat}; load average {load[0]:.1f} before, "
        f"{load[1]:.1f} after\n"
    )
    print(f"{'step':<10} {'wall s':>8} {'CPU s':>8} {'peak GB':>8} {'workers GB':>11}  ratios")
    base = "polars" if "polars" in reports else None
    for step, rs in reports.items():
        peak = max(r["rss_peak_kb"] for r in rs) / 1024**2
        workers = [r["workers_peak_kb"] for r in rs if r.get("workers_peak_kb")]
        wgb = f"{max(workers) / 1024**2:11.2f}" if workers else f"{'':>11}"
        ratio = f"{med(step, 'wall') / med(base, 'wall'):.2f}× polars" if base else ""
        wall, cpu = med(step, "wall"), med(step, "cpu")
        print(f"{step:<10} {wall:8.2f} {cpu:8.2f} {peak:8.2f} {wgb}  {ratio}")
        phases = rs[0]["phases"]
        if "count" in phases:
            shards = int(phases["count"])
            print(
                f"{'':<10} plan {phases['plan']:.2f} s, {shards} shards {phases['shards']:.2f} s "
                f"({phases['shards'] / shards:.2f} s a shard), global step {phases['global']:.2f} s"
            )
    if "sharded" in reports and "count" in reports["sharded"][0]["phases"]:
        _project(reports["sharded"][0]["phases"], events)


def _project(phases: dict[str, float], events: int) -> None:
    """1B events on 32 workers, from the measured per-shard cost on this machine's 2 cores
    (one shard at a time, both cores per shard): per-event shard cost × 1B ÷ 32 workers of
    2 cores each, plus the driver's plan (its per-event cost × 1B: it reads the run ids) and
    the global step (per run: × 100 for 100× the runs)."""
    per_event = phases["shards"] / events
    shard_part = per_event * 1e9 / 32
    plan = phases["plan"] / events * 1e9
    global_step = phases["global"] * 1e9 / events
    print(
        f"\nprojection, 1B events on 32 workers of 2 cores: shards {shard_part:,.0f} s, "
        f"driver's plan {plan:,.0f} s, global step {global_step:,.0f} s: about "
        f"{(shard_part + plan + global_step) / 60:,.0f} minutes"
    )


if __name__ == "__main__":
    main()
