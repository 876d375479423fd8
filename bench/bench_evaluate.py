"""Benchmark `contractlang evaluate` against hand-written polars and DuckDB queries.

    python bench/bench_evaluate.py                  # 100,000 runs ≈ 0.93M allocations ≈ 10M events
    python bench/bench_evaluate.py --runs 2000      # smoke size: about 15 s in all

One command does everything. It generates a trace with the project's generator (plus a few
hand-made edge-case runs, ``lib/edge_cases.py``) and writes it to Parquet in a temporary
directory, untimed. Then it runs ``--repeat`` rounds (default 3; medians are reported); a
round runs every step once, each in a fresh child process (this script with ``--step``) that
times it and records its own peak resident memory (``VmHWM``, which includes the interpreter
and the imported libraries, shown as "base"). Every step reads the Parquet file itself.

Steps:

- (a0) ``floor-column``: a polars scan summing one column, as ``pitfalls.md`` measures;
- (a) ``floor``: a polars scan computing metered GPU-time, Σ gpus × (end − start), which
  needs each allocation's start and end rows matched;
- (b) ``polars`` / (b') ``polars-in-memory``: a hand-written polars query computing, from the
  raw events, the totals and per-run money of the contract (``lib/contract.py``), with the
  streaming and with the in-memory engine;
- (c) ``duckdb``: the same as one hand-written DuckDB SQL query;
- (d) ``engine``: ``contractlang``'s ``evaluate`` of the contract end to end (parse and
  check the terms, load and validate the trace, derive facts, evaluate);
- (d') ``engine-phases``: the same, phase by phase;
- (e) ``engine-k`` / (e') ``engine-k-phases``: ``--contracts`` contracts (the contract and
  variants with other increments, minimums, rates and caps) over one derivation of the facts.

The baselines derive every fact they need from the raw events, independently of
``contractlang/trace/derive.py`` (only the generator is imported, to make the data). All
steps must agree *exactly*: metered GPU-time, the totals, and every run's gross, credits,
cap cuts and net in integer cents; and the edge-case runs must match their hand computation.
The script exits 1 when anything differs. Targets, reported and not enforced: the engine
within 1.5× of the hand-written polars query, no slower than DuckDB, and five contracts under
2× one contract.
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
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path

import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lib.checks import check_edge_cases, compare
from lib.duckdb_baseline import duckdb_baseline
from lib.engine import engine_evaluate, engine_phases
from lib.measure import compile_bytecode, cpu_seconds, peak_rss_kb
from lib.outcome import Outcome, StepReport
from lib.polars_baseline import floor_column, floor_metered, polars_baseline
from lib.traces import make_trace

STEPS = {
    "floor-column": "(a0) floor: polars scan, sum of one column",
    "floor": "(a)  floor: polars scan, metered GPU-time",
    "polars": "(b)  hand-written polars, streaming engine",
    "polars-in-memory": "(b') hand-written polars, in-memory engine",
    "duckdb": "(c)  hand-written DuckDB SQL",
    "engine": "(d)  contractlang evaluate, 1 contract",
    "engine-phases": "(d') the same, phase by phase",
    "engine-k": "(e)  contractlang evaluate, {k} contracts",
    "engine-k-phases": "(e') the same, phase by phase",
}


def run_step(step: str, path: Path, out: Path, repeat: int, contracts: int) -> None:
    """Child mode: run ``step`` ``repeat`` times; write its timings to ``out/STEP.json`` and
    its per-run money to ``out/STEP.parquet``."""
    phases: dict[str, list[float]] = {}
    steps: dict[str, Callable[[], Outcome]] = {
        "floor-column": lambda: floor_column(path, "streaming"),
        "floor": lambda: floor_metered(path, "streaming"),
        "polars": lambda: polars_baseline(path, "streaming"),
        "polars-in-memory": lambda: polars_baseline(path, "in-memory"),
        "duckdb": lambda: duckdb_baseline(path),
        "engine": lambda: engine_evaluate(path, 1),
        "engine-phases": lambda: engine_phases(path, 1, phases),
        "engine-k": lambda: engine_evaluate(path, contracts),
        "engine-k-phases": lambda: engine_phases(path, contracts, phases),
    }
    fn = steps[step]
    # import what the step uses before taking the base memory
    if step == "duckdb":
        # imported here, in the child process that measures this step, so its
        # import time and memory count only where they are measured
        import duckdb  # noqa: PLC0415, F401
    if step.startswith("engine"):
        # the first parse in a process builds the grammar (about 0.2 s): not timed
        # imported here, in the child process that measures this step, so its
        # import time and memory count only where they are measured
        from contractlang.pipeline.language import terms_from_text  # noqa: PLC0415

        terms_from_text('contract "warm-up" { currency USD rate 1 USD per gpu_hour }')
    base_kb = peak_rss_kb()
    wall: list[float] = []
    cpu: list[float] = []
    outcome = None
    for _ in range(repeat):
        c0, t0 = cpu_seconds(), time.perf_counter()
        outcome = fn()
        wall.append(time.perf_counter() - t0)
        cpu.append(cpu_seconds() - c0)
    assert outcome is not None
    if outcome.runs is not None:
        outcome.runs.sort("run_id").write_parquet(out / f"{step}.parquet")
    report = {
        "wall": wall,
        "cpu": cpu,
        "phases": phases,
        "rss_base_kb": base_kb,
        "rss_peak_kb": peak_rss_kb(),
        "metered_gpu_us": outcome.metered_gpu_us,
        "totals": outcome.totals,
    }
    (out / f"{step}.json").write_text(json.dumps(report))


def spawn(step: str, trace: Path, out: Path, contracts: int) -> StepReport:
    """Run ``step`` once in a fresh child process of this script and read back its report."""
    cmd = [sys.executable, __file__, "--step", step, "--trace", str(trace), "--out", str(out)]
    cmd += ["--repeat", "1", "--contracts", str(contracts)]
    done = subprocess.run(cmd, check=False)
    if done.returncode:
        print(f"\nstep `{step}` failed (exit {done.returncode})", file=sys.stderr)
        sys.exit(1)
    report = json.loads((out / f"{step}.json").read_text())
    runs_path = out / f"{step}.parquet"
    return StepReport(
        step=step,
        wall=report["wall"],
        cpu=report["cpu"],
        phases=report["phases"],
        rss_base_gb=report["rss_base_kb"] / 1024**2,
        rss_peak_gb=report["rss_peak_kb"] / 1024**2,
        metered_gpu_us=report["metered_gpu_us"],
        totals=report["totals"],
        runs=pl.read_parquet(runs_path) if runs_path.exists() else None,
    )


def merge(first: StepReport | None, more: StepReport) -> StepReport:
    """One step's rounds together: their timings, the largest peak, and the results (which
    must be the same every time)."""
    if first is None:
        return more
    same = (first.runs is None and more.runs is None) or (
        first.runs is not None and more.runs is not None and first.runs.equals(more.runs)
    )
    if not same or (first.metered_gpu_us, first.totals) != (more.metered_gpu_us, more.totals):
        print(f"step `{first.step}` gave different results in two rounds", file=sys.stderr)
        sys.exit(1)
    phases = {k: v + more.phases.get(k, []) for k, v in first.phases.items()}
    return StepReport(
        step=first.step,
        wall=first.wall + more.wall,
        cpu=first.cpu + more.cpu,
        phases=phases,
        rss_base_gb=max(first.rss_base_gb, more.rss_base_gb),
        rss_peak_gb=max(first.rss_peak_gb, more.rss_peak_gb),
        metered_gpu_us=first.metered_gpu_us,
        totals=first.totals,
        runs=first.runs,
    )


def run_rounds(trace: Path, out: Path, args: argparse.Namespace) -> dict[str, StepReport]:
    """``--repeat`` rounds, each running every step once in a fresh process: load from other
    processes on the machine then falls on every step alike, not on one step's repeats."""
    reports: dict[str, StepReport | None] = dict.fromkeys(STEPS)
    for n in range(args.repeat):
        print(f"round {n + 1} of {args.repeat}:", end="", flush=True, file=sys.stderr)
        for step in STEPS:
            print(f" {step}", end="", flush=True, file=sys.stderr)
            reports[step] = merge(reports[step], spawn(step, trace, out, args.contracts))
        print(file=sys.stderr)
    return {step: r for step, r in reports.items() if r is not None}


def ratio(num: float, den: float) -> str:
    return f"{num / den:5.2f}×" if den > 0 else "   n/a"


def print_table(
    reports: dict[str, StepReport],
    args: argparse.Namespace,
    events: int,
    allocations: int,
    load: tuple[float, float],
) -> None:
    print(
        f"\n{args.runs:,} runs, {allocations:,} allocations, {events:,} events; "
        f"{os.cpu_count()} cores; polars {pl.__version__}; median of {args.repeat}; "
        f"load average {load[0]:.1f} before, {load[1]:.1f} after\n"
    )
    head = f"{'step':<46} {'median s':>9} {'min s':>7} {'max s':>7} {'CPU s':>7} {'peak GB':>8}"
    print(head + f" {'base GB':>8}")
    for step, label in STEPS.items():
        r = reports[step]
        print(
            f"{label.format(k=args.contracts):<46} {r.median:9.3f} {min(r.wall):7.3f} "
            f"{max(r.wall):7.3f} {statistics.median(r.cpu):7.2f} {r.rss_peak_gb:8.2f} "
            f"{r.rss_base_gb:8.2f}"
        )
        for phase, seconds in r.phases.items():
            print(
                f"{'       ' + phase:<46} {statistics.median(seconds):9.3f} "
                f"{min(seconds):7.3f} {max(seconds):7.3f}"
            )

    def ratios(num: str, den: str | tuple[str, str], phase: str | None = None) -> str:
        """The ratio of two steps' medians, and of their minimums (less sensitive to other
        processes on the machine)."""
        pair = []
        for pick in (statistics.median, min):
            dens = den if isinstance(den, tuple) else (den,)
            if phase:
                top = pick(reports[num].phases[phase])
                bottom = min(pick(reports[d].phases[phase]) for d in dens)
            else:
                top = pick(reports[num].wall)
                bottom = min(pick(reports[d].wall) for d in dens)
            pair.append(ratio(top, bottom))
        return f"{pair[0]} {pair[1]}"

    k = args.contracts
    print(f"\n{'ratio':<46} {'median':>7} {'min':>6}   target")
    best_polars = ("polars", "polars-in-memory")
    rows: list[tuple[str, str, str | tuple[str, str], str | None, str]] = [
        ("(d)/(b)   engine ÷ faster hand-written polars", "engine", best_polars, None, "≤ 1.5×"),
        ("(d)/(c)   engine ÷ DuckDB", "engine", "duckdb", None, "≤ 1×"),
        ("(d)/(a)   engine ÷ floor", "engine", "floor", None, ""),
        (f"(e)/(d)   {k} contracts ÷ 1, end to end", "engine-k", "engine", None, "< 2×"),
        (f"(e')/(d') {k} contracts ÷ 1, evaluate phase", "engine-k-phases", "engine-phases",
         "evaluate", ""),
    ]  # fmt: skip
    for label, num, den, which, target in rows:
        print(f"{label:<46} {ratios(num, den, which)}   {target}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description="Time contractlang evaluate against hand-written polars and DuckDB queries."
    )
    parser.add_argument("--runs", type=int, default=100_000, help="runs to generate")
    parser.add_argument("--contracts", type=int, default=5, help="contracts in step (e)")
    parser.add_argument("--repeat", type=int, default=3, help="timings per step (median)")
    parser.add_argument("--seed", type=int, default=1, help="the generator's seed")
    parser.add_argument("--keep", type=Path, help="keep the trace and results in this folder")
    parser.add_argument("--step", choices=list(STEPS), help=argparse.SUPPRESS)
    parser.add_argument("--trace", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.step:
        run_step(args.step, args.trace, args.out, args.repeat, args.contracts)
        return
    if args.runs < 1 or args.contracts < 1 or args.repeat < 1:
        parser.error("--runs, --contracts and --repeat must be at least 1")

    with tempfile.TemporaryDirectory(prefix="bench-evaluate-") as tmp:
        out = args.keep or Path(tmp)
        out.mkdir(parents=True, exist_ok=True)
        trace_path = out / "trace.parquet"
        events, allocations = make_trace(args.runs, args.seed, trace_path)
        print(compile_bytecode(), file=sys.stderr)
        load_before = os.getloadavg()[0]
        reports = run_rounds(trace_path, out, args)
        load_after = os.getloadavg()[0]

    engine = reports["engine"]
    others = [reports[s] for s in STEPS if s != "engine"]
    problems = compare(engine, others) + check_edge_cases(list(reports.values()))
    print_table(reports, args, events, allocations, (load_before, load_after))
    if problems:
        print("\nTHE RESULTS DIFFER, so the ratios above mean nothing:", file=sys.stderr)
        for p in problems:
            print(f"- {p}", file=sys.stderr)
        sys.exit(1)
    assert engine.totals is not None
    assert engine.runs is not None
    t = {k: Decimal(v).scaleb(-2) for k, v in engine.totals.items()}
    print(
        f"\nall steps agree exactly on every one of {engine.runs.height:,} runs, and on the "
        f"edge cases: gross {t['gross']}, credits {t['credits']}, cap cuts {t['cap_cuts']}, "
        f"net {t['net']} USD; metered {Decimal(engine.metered_gpu_us or 0) / 3_600_000_000:.6f} "
        "GPU-hours"
    )


if __name__ == "__main__":
    main()
