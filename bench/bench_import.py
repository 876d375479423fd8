"""Benchmark: `import focus` and `import sacct` against hand-written polars readers of the same
files, with peak memory.

    python bench/bench_import.py                      # 1M FOCUS rows, 1M sacct rows
    python bench/bench_import.py --rows 100000        # smaller
    python bench/bench_import.py --sample             # FOCUS: the real sample, repeated
    python bench/bench_import.py --old 100000         # also the row-by-row readers, at 100k

Each step runs in a fresh child process (its peak RSS, ``VmHWM``, is its own), in ``--repeat``
rounds (default 3) of every step, and the table shows the median. The baselines are what a
careful engineer would write in an afternoon with polars: the same columns read, nulls,
decimals, times and run keys mapped to the same trace columns — but none of the checks an
import makes (field counts, exact decimals, DST gaps and repeats, row-by-row reasons, notes),
so the ratio is the price of those. After the rounds the script checks that each import's
events agree with its baseline's (rows, runs, and the exact sum of the amounts).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # contractlang
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the row-by-row readers
sys.path.insert(0, str(Path(__file__).resolve().parent))
from lib.import_baselines import focus_polars, sacct_polars
from lib.import_files import write_focus, write_focus_sample, write_sacct
from lib.measure import peak_rss_gb


def step(name: str, path: Path, size: int) -> dict[str, Any]:
    """In a child process: one step (its imports done before the clock starts), its events
    summarised for the check."""
    key = "tag:application" if "sample" in path.name else "tag:slurm_job"
    run: Any
    if name == "focus polars":

        def run(p: Path) -> pl.DataFrame:
            return focus_polars(p, key.removeprefix("tag:"))
    elif name == "focus contractlang":
        from contractlang.importers import import_focus  # noqa: PLC0415

        def run(p: Path) -> pl.DataFrame:
            return import_focus(p, key).events
    elif name == "focus row by row":
        from support.focus_rowwise import import_focus_rowwise  # noqa: PLC0415

        def run(p: Path) -> pl.DataFrame:
            return import_focus_rowwise(p, key).events
    elif name == "sacct polars":
        run = sacct_polars
    elif name == "sacct contractlang":
        from contractlang.importers import import_sacct  # noqa: PLC0415

        def run(p: Path) -> pl.DataFrame:
            return import_sacct(p, "America/New_York").events
    elif name == "sacct row by row":
        from support.sacct_rowwise import import_sacct_rowwise  # noqa: PLC0415

        def run(p: Path) -> pl.DataFrame:
            return import_sacct_rowwise(p, "America/New_York").events
    else:
        raise ValueError(name)
    from contractlang.trace.sums import exact_column_total  # noqa: PLC0415

    t = time.perf_counter()
    ev = run(path)
    seconds = time.perf_counter() - t
    amount = None
    if "amount" in ev.columns:
        amount = str(exact_column_total(ev, "amount").normalize())
    return {
        "step": name,
        "size": size,
        "seconds": seconds,
        "peak_rss_gb": peak_rss_gb(),
        "events": ev.height,
        "runs": ev.get_column("run_id").n_unique(),
        "amount": amount,
    }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="FOCUS and sacct rows")
    parser.add_argument(
        "--old", type=int, default=0, help="also the row-by-row readers, at this many rows"
    )
    parser.add_argument("--sample", action="store_true", help="FOCUS: the real sample, repeated")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--only", choices=["focus", "sacct"], help="one adapter only")
    parser.add_argument("--step", help=argparse.SUPPRESS)
    parser.add_argument("--file", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--size", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.step:
        print(json.dumps(step(args.step, args.file, args.size)))
        return
    with tempfile.TemporaryDirectory(prefix="bench-import-") as tmp:
        work = Path(tmp)
        plan: list[tuple[str, Path, int]] = []
        for adapter in ("focus", "sacct"):
            if args.only and adapter != args.only:
                continue
            sizes = [args.rows] + ([args.old] if args.old else [])
            for size in sizes:
                sample = "sample-" if args.sample and adapter == "focus" else ""
                path = work / f"{adapter}-{sample}{size}.{'csv' if adapter == 'focus' else 'txt'}"
                t = time.perf_counter()
                if adapter == "sacct":
                    write_sacct(path, size, args.seed)
                elif args.sample:
                    write_focus_sample(path, size)
                else:
                    write_focus(path, size, args.seed)
                mb = path.stat().st_size / 1e6
                print(f"wrote {path.name}: {mb:,.0f} MB in {time.perf_counter() - t:.0f} s")
                names = [f"{adapter} polars", f"{adapter} contractlang"]
                if size == args.old:
                    names.append(f"{adapter} row by row")
                plan += [(n, path, size) for n in names]
        results: dict[tuple[str, int], list[dict[str, Any]]] = {}
        for r in range(args.repeat):
            for name, path, size in plan:
                if name.endswith("row by row") and r > 0:
                    continue  # minutes a round: once is enough
                cmd = [
                    sys.executable,
                    __file__,
                    "--step",
                    name,
                    "--file",
                    str(path),
                    "--size",
                    str(size),
                ]
                proc = subprocess.run(cmd, check=False, capture_output=True, text=True)
                if proc.returncode != 0:
                    sys.exit(f"{name} failed:\n{proc.stderr}")
                results.setdefault((name, size), []).append(
                    json.loads(proc.stdout.splitlines()[-1])
                )
        print(f"\n{'step':<22} {'rows':>10} {'seconds':>8} {'× polars':>9} {'peak RSS GB':>12}")
        for (name, size), runs in results.items():
            adapter = name.split()[0]
            base = statistics.median(r["seconds"] for r in results[(f"{adapter} polars", size)])
            s = statistics.median(r["seconds"] for r in runs)
            rss = max(r["peak_rss_gb"] for r in runs)
            print(f"{name:<22} {size:>10,} {s:>8.2f} {s / base:>9.1f} {rss:>12.2f}")
        for (name, size), runs in results.items():
            adapter = name.split()[0]
            base = results[(f"{adapter} polars", size)][0]
            mine = runs[0]
            if mine["events"] != base["events"] or mine["amount"] != base["amount"]:
                sys.exit(f"{name} at {size:,} rows disagrees with the baseline: {mine} vs {base}")
        print("\nevery import agrees with its baseline (events, amounts)")
        for runs in results.values():
            for r in runs:
                print(json.dumps(r))


if __name__ == "__main__":
    main()
