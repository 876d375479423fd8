"""Benchmark: the trace digest of the evaluate JSON, against loading the trace.

    python bench/bench_digest.py                 # 100,000 runs: ~1M allocations, ~10M events
    python bench/bench_digest.py --runs 10000    # smaller

``evaluate --format json`` (and every fixture) names its trace by a digest of its canonical
text (:mod:`contractlang.trace.digest`): one sort of the events' lines and one hashing pass.
This measures what that adds to loading the same trace. Each phase runs in its own subprocess,
so its peak memory (``VmHWM``) is its own:

- ``load``: :func:`load_trace` of the Parquet file (read, normalise, validate) — the baseline;
- ``load + digest``: the same, then :func:`trace_digest`; the digest's own time is timed apart.

Printed: wall-clock and CPU seconds, peak memory, and the digest's time as a ratio to the
load's.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # contractlang
sys.path.insert(0, str(Path(__file__).resolve().parent))

from lib.measure import cpu_seconds, peak_rss_gb


def phase(name: str, path: str) -> None:
    """One phase, in this (child) process: prints one JSON line."""
    from contractlang.trace import load_trace  # noqa: PLC0415  (timed in the child only)
    from contractlang.trace.digest import trace_digest  # noqa: PLC0415

    wall, cpu = time.perf_counter(), cpu_seconds()
    trace = load_trace(path)
    out = {
        "phase": name,
        "events": trace.events.height,
        "load_s": time.perf_counter() - wall,
        "load_cpu_s": cpu_seconds() - cpu,
    }
    if name == "digest":
        wall, cpu = time.perf_counter(), cpu_seconds()
        out["digest"] = trace_digest(trace)
        out["digest_s"] = time.perf_counter() - wall
        out["digest_cpu_s"] = cpu_seconds() - cpu
    out["peak_gb"] = peak_rss_gb()
    print(json.dumps(out))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--phase", choices=["load", "digest"], help=argparse.SUPPRESS)
    parser.add_argument("--trace", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.phase:
        phase(args.phase, args.trace)
        return
    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "trace.parquet")
        started = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "contractlang", "trace", "generate", "--runs",
             str(args.runs), "--seed", str(args.seed), "--out", path],
            check=True, capture_output=True,
        )  # fmt: skip
        print(f"generated {args.runs:,} runs in {time.perf_counter() - started:.1f} s (untimed)")
        results = {}
        for name in ("load", "digest"):
            done = subprocess.run(
                [sys.executable, __file__, "--phase", name, "--trace", path],
                check=True, capture_output=True, text=True,
            )  # fmt: skip
            results[name] = json.loads(done.stdout.strip().splitlines()[-1])
    load, digest = results["load"], results["digest"]
    print(f"{load['events']:,} events")
    print(f"{'phase':<16}{'wall s':>9}{'cpu s':>9}{'peak GB':>9}")
    print(f"{'load':<16}{load['load_s']:>9.2f}{load['load_cpu_s']:>9.2f}{load['peak_gb']:>9.2f}")
    print(
        f"{'digest (after)':<16}{digest['digest_s']:>9.2f}{digest['digest_cpu_s']:>9.2f}"
        f"{digest['peak_gb']:>9.2f}"
    )
    ratio = digest["digest_s"] / load["load_s"]
    per_million = digest["digest_s"] / (load["events"] / 1e6)
    print(f"digest / load = {ratio:.2f}; {per_million:.2f} s per million events")
    print(json.dumps({"load": load, "digest": digest, "ratio": ratio}))


if __name__ == "__main__":
    main()
