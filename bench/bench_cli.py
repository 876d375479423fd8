"""Benchmark: `contractlang evaluate` as a whole process, with the flags that change its cost
against the hand-written polars query of ``bench_evaluate.py`` run the same way.

    python bench/bench_cli.py                           # 100,000 runs ≈ 10M events
    python bench/bench_cli.py --runs 2000               # smoke size
    python bench/bench_cli.py --trace t100m.parquet --flags "" --flags "--shards 4"

Each step is one child process, timed by wall clock, its peak memory the child's own
(``/usr/bin/time -f %M``). The baseline is ``bench_scale.py --step polars`` (the polars
query, streaming engine, in a fresh process). The terms are the evaluation benchmarks'
contract (``lib/contract.py``). Every `evaluate` must exit 0 or 1 (a budget verdict), else
the script exits 1.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lib.contract import CONTRACT
from lib.measure import TIME, compile_bytecode, timed_process

#: The allocator setting of the environment this script was started in: importing polars
#: (to make the trace, in :func:`main`) writes polars' own into this process's environment,
#: which the children timed here must not inherit — a user's shell has none, and
#: `contractlang` then sets its own.
MALLOC_CONF = "_RJEM_MALLOC_CONF"
START_MALLOC_CONF = os.environ.get(MALLOC_CONF)

BENCH = Path(__file__).resolve().parent
#: The flags timed by default: the text summary (the shards chosen automatically), shards
#: chosen by hand, and the JSON document (which adds the trace's digest).
FLAGS = ("", "--shards 2", "--shards 4", "--format json")


def timed(cmd: list[str]) -> tuple[float, float, int]:
    """Wall seconds, peak resident GB and exit code of ``cmd``, its output discarded, in the
    environment this script was started in (:data:`START_MALLOC_CONF`)."""
    env = {k: v for k, v in os.environ.items() if k != MALLOC_CONF}
    if START_MALLOC_CONF is not None:
        env[MALLOC_CONF] = START_MALLOC_CONF
    run = timed_process(cmd, env)
    return run.seconds, run.peak_kb / 2**20, run.exit


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100_000, help="runs to generate")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--trace", type=Path, help="an existing Parquet trace instead")
    parser.add_argument(
        "--flags", action="append", help="evaluate's flags for one step (repeatable)"
    )
    args = parser.parse_args()
    if not Path(TIME).exists():
        sys.exit(f"{TIME} (GNU time) is needed to measure each process's peak memory")
    flag_sets = args.flags if args.flags is not None else list(FLAGS)
    with tempfile.TemporaryDirectory(prefix="bench-cli-") as tmp:
        out = Path(tmp)
        trace = args.trace
        if trace is None:
            from lib.traces import make_trace  # noqa: PLC0415 (imports polars: see MALLOC_CONF)

            trace = out / "trace.parquet"
            make_trace(args.runs, args.seed, trace)
        terms = out / "bench.spot"
        terms.write_text(CONTRACT, encoding="utf-8")
        print(compile_bytecode(), file=sys.stderr)
        load = os.getloadavg()[0]
        polars = [sys.executable, str(BENCH / "bench_scale.py"), "--step", "polars"]
        polars += ["--trace", str(trace), "--out", str(out), "--shards", "1"]
        base, base_gb, code = timed(polars)
        if code:
            sys.exit(f"the polars baseline failed (exit {code})")
        rows = [("hand-written polars (baseline)", base, base_gb)]
        failed = []
        for flags in flag_sets:
            cmd = [sys.executable, "-m", "contractlang", "evaluate", str(terms), str(trace)]
            wall, gb, code = timed([*cmd, *shlex.split(flags)])
            rows.append((f"contractlang evaluate {flags}".rstrip(), wall, gb))
            if code not in (0, 1):
                failed.append(f"`{flags}` exited {code}")
        print(f"trace: {trace.stat().st_size / 1e6:,.0f} MB of Parquet; load average {load:.1f}")
        print(f"{'step':<44} {'wall s':>8} {'× polars':>9} {'peak GB':>8}")
        for name, wall, gb in rows:
            print(f"{name:<44} {wall:>8.2f} {wall / base:>8.2f}× {gb:>8.2f}")
    if failed:
        sys.exit("; ".join(failed))


if __name__ == "__main__":
    main()
