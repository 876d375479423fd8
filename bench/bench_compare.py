"""Benchmark `contractlang compare` against one `evaluate` of the same contracts.

    python bench/bench_compare.py                       # 100,000 runs ≈ 0.93M allocations
    python bench/bench_compare.py --runs 2000           # smoke size: about a minute
    python bench/bench_compare.py --trace /tmp/x.parquet   # a trace already generated

The terms are the bundled rulesets (`rulesets/*.spot`: five drafts and the FY27 budgets). The
trace is the project's generator's (`contractlang trace generate --runs N --seed 1`), written
to Parquet once, untimed. Each step then runs in a fresh child process (this script with
``--step``) that times it and records its own peak resident memory (``VmHWM``):

- ``evaluate``: `contractlang.pipeline.evaluation.evaluate` of the terms over the trace (check,
  load and validate, derive the facts, evaluate every contract, measure every budget) — the
  baseline every ratio is against;
- ``evaluate-drafts``: the same five drafts without the budgets file, for scale (most of an
  evaluate of the rulesets is measuring the budgets);
- ``compare``: `contractlang.compare.compare` of the same, without attribution;
- ``attribute``: the same with attribution, timed by phase from its progress messages: the
  price to pass (every ``pricing …`` phase), each draft's, and the rest.

Every step's figures are checked equal: each contract's net, and each budget requirement's
value, in compare and evaluate. Targets, reported and not enforced: compare ≤ 1.5× evaluate,
compare --attribute ≤ 8×, of which the price to pass ≤ 2×.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from lib.measure import peak_rss_kb  # this folder: the same measure of peak memory

ROOT = Path(__file__).resolve().parents[1]
RULESETS = sorted(str(p) for p in (ROOT / "rulesets").glob("*.spot"))
DRAFTS = [p for p in RULESETS if not p.endswith("fy27-budget.spot")]
STEPS = ("evaluate", "evaluate-drafts", "compare", "attribute")


def figures(contracts: Any) -> dict[str, Any]:
    """Each contract's net and budget measures (to compare steps). A measure is an exact
    Fraction, whose digits can run to thousands (a mean of quotients): it is compared by its
    hash, which Python computes from the exact value, the same in every process."""
    return {
        c.name: {
            "net": c.totals.net_minor,
            "budgets": [[hash(r.value) for r in b.requirements] for b in c.budgets],
        }
        for c in contracts
    }


def run_step(step: str, trace: Path, out: Path) -> None:
    from contractlang.compare import compare  # noqa: PLC0415
    from contractlang.pipeline.evaluation import evaluate  # noqa: PLC0415

    phases: dict[str, float] = defaultdict(float)
    by_draft: dict[str, float] = defaultdict(float)  # the price search of each draft
    last: list[Any] = [None, time.perf_counter()]

    def progress(message: str) -> None:
        now = time.perf_counter()
        if last[0] is not None:
            pricing = last[0].startswith("pricing ")
            phases["price to pass" if pricing else "the rest"] += now - last[1]
            if pricing:  # "pricing NAME at 0×, 0.5×, …"
                by_draft[last[0].removeprefix("pricing ").rsplit(" at ", 1)[0]] += now - last[1]
        last[0], last[1] = message, now

    start = time.perf_counter()
    if step == "evaluate":
        result = figures(evaluate(RULESETS, trace).contracts)
    elif step == "evaluate-drafts":
        result = {}
        evaluate(DRAFTS, trace)
    else:
        cmp = compare(RULESETS, trace, attribute_clauses=step == "attribute", progress=progress)
        progress("done")
        result = figures([c.result for c in cmp.contracts])
    seconds = time.perf_counter() - start
    record = {"seconds": seconds, "peak_kb": peak_rss_kb(), "figures": result}
    if step == "attribute":
        record["price_seconds"] = phases["price to pass"]
        record["price_by_draft"] = dict(by_draft)
    out.write_text(json.dumps(record), encoding="utf-8")


def child(step: str, trace: Path, out: Path) -> dict[str, Any]:
    cmd = [sys.executable, __file__, "--step", step, "--trace", str(trace), "--out", str(out)]
    subprocess.run(cmd, check=True)
    return json.loads(out.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--trace", type=Path, help="use this trace instead of generating one")
    parser.add_argument("--step", choices=STEPS, help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.step:
        run_step(args.step, args.trace, args.out)
        return 0
    with tempfile.TemporaryDirectory(prefix="bench-compare-") as tmp:
        trace = args.trace
        if trace is None:
            from contractlang.trace.generate import generate_trace, write_trace  # noqa: PLC0415

            trace = Path(tmp) / "trace.parquet"
            began = time.perf_counter()
            write_trace(generate_trace(args.runs, seed=args.seed), trace, kind=".parquet")
            print(f"generated {args.runs:,} runs in {time.perf_counter() - began:.1f} s (untimed)")
        results = {s: child(s, trace, Path(tmp) / f"{s}.json") for s in STEPS}
    base = results["evaluate"]
    same = all(
        r["figures"] == base["figures"] for k, r in results.items() if k != "evaluate-drafts"
    )
    bare = results["evaluate-drafts"]
    print(f"\n{'step':<34}{'seconds':>10}{'× evaluate':>12}{'peak GB':>10}")
    rows = [
        ("evaluate (5 drafts, 3 budgets)", base["seconds"], base["peak_kb"]),
        ("compare", results["compare"]["seconds"], results["compare"]["peak_kb"]),
        ("compare --attribute", results["attribute"]["seconds"], results["attribute"]["peak_kb"]),
        ("  of which the price to pass", results["attribute"]["price_seconds"], None),
    ]
    rows += [
        (f"    {name}", seconds, None)
        for name, seconds in sorted(results["attribute"]["price_by_draft"].items())
    ]
    for label, seconds, peak in rows:
        gb = f"{peak / 1024 / 1024:.2f}" if peak is not None else ""
        print(f"{label:<34}{seconds:>10.1f}{seconds / base['seconds']:>11.2f}×{gb:>10}")
    # For scale: the same drafts evaluated without any budget (most of one evaluate of the
    # rulesets is the budgets: `mean(lost_gpu_time / metered_gpu_time)` is summed in Fractions,
    # run by run; compare measures it once for every draft and variant).
    print(
        f"{'evaluate, the drafts without budgets':<34}{bare['seconds']:>10.1f}"
        f"{bare['seconds'] / base['seconds']:>11.2f}×{bare['peak_kb'] / 1024 / 1024:>10.2f}"
    )
    targets = [
        ("compare ≤ 1.5× evaluate", results["compare"]["seconds"] / base["seconds"] <= 1.5),
        ("compare --attribute ≤ 8×", results["attribute"]["seconds"] / base["seconds"] <= 8),
        ("price to pass ≤ 2×", results["attribute"]["price_seconds"] / base["seconds"] <= 2),
    ]
    print()
    for label, met in targets:
        print(f"{label}: {'met' if met else 'NOT met'}")
    print(f"figures equal in every step: {'yes' if same else 'NO'}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
