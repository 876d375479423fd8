"""Benchmark budgets: `evaluate` of a negotiated spot contract with a budget of four
requirements against the same evaluation without a budget, on one trace.

    python bench/bench_budget.py                 # 100,000 runs ≈ 1M allocations ≈ 10M events
    python bench/bench_budget.py --runs 5000     # smoke size

The trace is generated with the project's generator into a temporary directory, untimed. Each
step runs ``--repeat`` times (median reported), each time in a fresh child process that times
``contractlang.evaluate`` end to end and records its peak resident memory (``VmHWM``):

- ``none``: the contract alone (the baseline);
- ``budget``: with the four-requirement budget;
- one step per requirement alone.

The script checks the measured mean of per-run quotients against an independent computation
from the runs table in plain Python integers (each quotient cut to 57 places, summed, and the
bounds compared with the reported value) and exits 1 on a mismatch. Target, reported and not
enforced: the budget ≤ 1.1× the baseline.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from fractions import Fraction
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lib.measure import peak_rss_kb

CONTRACT = """\
contract "northwind-spot-v3" {
  currency USD
  rate 2.10 USD per gpu_hour when capacity == spot and sku == "H100-80G"
  rate 4.25 USD per gpu_hour when capacity == on_demand
  rate trace.price per gpu_hour
  billing increment 1 minute
  billing minimum 1 minute
  promise reclaim notice 30 seconds
  promise restart within 15 minutes
  exclude "reclaimed in the first hour" allocation
    when end_reason == reclaimed and runtime < 1 hour
  exclude "replay after short notice" replayed_time
    when end_reason == reclaimed and notice_lead < promised_notice
  credit "slow replacement" 10% of charge
    when replacement_wait > promised_restart
  credit "restart delay" 2.10 USD per gpu_hour * gpus * (replacement_wait - 15 minutes)
    when replacement_wait > 15 minutes
  cap credits at 30% of gross per run
  cap credits at 50000 USD per month
}
"""
REQUIREMENTS = [
    "p95(cost_per_accepted_run) <= 12000 USD",
    "mean(lost_gpu_time / metered_gpu_time) <= 5%",
    "p95(time_to_accept) <= 72 hours",
    "share(accepted) >= 90%",
]


def budget_text(requirements: list[str]) -> str:
    lines = "".join(f"  require {r}\n" for r in requirements)
    return f'budget "b" {{\n{lines}}}\n' if requirements else ""


def child(trace: Path, requirements: list[str], out: Path) -> None:
    """One timed evaluation in this (fresh) process."""
    import contractlang  # noqa: PLC0415 - imported in the child, after the clock question

    terms = contractlang.terms_from_text(CONTRACT + budget_text(requirements), "bench.spot")
    start = time.perf_counter()
    result = contractlang.evaluate(terms, trace)
    seconds = time.perf_counter() - start
    (c,) = result.contracts
    values = [str(r.value) for b in c.budgets for r in b.requirements]
    runs = c.runs
    pairs = runs.select(
        a=runs["lost_gpu_time"].dt.total_microseconds(),
        b=runs["metered_gpu_time"].dt.total_microseconds(),
    ).rows()
    out.write_text(
        json.dumps(
            {
                "seconds": seconds,
                "peak_mb": peak_rss_kb() / 1024,
                "values": values,
                "pairs": pairs if requirements == [REQUIREMENTS[1]] else None,
            }
        )
    )


def spawn(trace: Path, requirements: list[str]) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out.json"
        args = [sys.executable, __file__, "--child", str(trace), "--out", str(out)]
        args += [f"--require={r}" for r in requirements]
        subprocess.run(args, check=True)
        return json.loads(out.read_text())  # type: ignore[no-any-return]


def independent_mean(pairs: list[tuple[int | None, int | None]]) -> tuple[Fraction, Fraction]:
    """Bounds of mean(lost / metered) in plain Python integers (x / 0 and none skipped)."""
    scale = 10**57
    kept = [(a, b) for a, b in pairs if a is not None and b]
    total = sum((a * scale) // b for a, b in kept)
    cut = sum(1 for a, b in kept if (a * scale) % b)
    n = len(kept)
    return Fraction(total, scale * n), Fraction(total + cut, scale * n)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--runs", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--child", type=Path)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--require", action="append", default=[])
    args = ap.parse_args()
    if args.child:
        child(args.child, args.require, args.out)
        return

    from contractlang import generate_trace  # noqa: PLC0415 - the parent only generates

    with tempfile.TemporaryDirectory() as tmp:
        trace = Path(tmp) / "trace.parquet"
        frame = generate_trace(args.runs, seed=args.seed)
        frame.write_parquet(trace)
        print(f"trace: {args.runs:,} runs, {frame.height:,} events")
        del frame
        steps = {"none": [], "budget": REQUIREMENTS, **{r: [r] for r in REQUIREMENTS}}
        results: dict[str, list[dict[str, object]]] = {k: [] for k in steps}
        for _ in range(args.repeat):
            for name, reqs in steps.items():
                results[name].append(spawn(trace, reqs))
    base = statistics.median(float(r["seconds"]) for r in results["none"])  # type: ignore[arg-type]
    print(f"{'step':<48} {'seconds':>8} {'× none':>7} {'peak MB':>8}")
    for name, rs in results.items():
        sec = statistics.median(float(r["seconds"]) for r in rs)  # type: ignore[arg-type]
        peak = max(float(r["peak_mb"]) for r in rs)  # type: ignore[arg-type]
        print(f"{name:<48} {sec:>8.2f} {sec / base:>6.2f}× {peak:>8.0f}")
    mean_step = results[REQUIREMENTS[1]][0]
    low, high = independent_mean(mean_step["pairs"])  # type: ignore[arg-type]
    reported = Fraction(str(mean_step["values"][0]))  # type: ignore[index]
    ok = low <= reported <= high
    print(f"mean(lost / metered) = {float(reported):.12f}; independent bounds agree: {ok}")
    if not ok:
        sys.exit(1)


if __name__ == "__main__":
    main()
