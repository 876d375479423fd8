"""Benchmark start-up and the language path: whole processes, as a pre-commit
hook or an editor runs them.

    python bench/bench_startup.py            # median of 5 runs each
    python bench/bench_startup.py --repeat 9

Each step is a fresh process timed from outside (wall clock around it; CPU time, user and
system, and peak memory from ``/usr/bin/time``: on a shared machine the CPU time is the
steadier figure), in rounds of every step once; baselines run in the same rounds:
``python -c pass`` (the interpreter) and ``python -c "import polars"`` (what a command that
loads polars pays before any work).

- ``--version``; ``check`` and ``fmt --check`` of a 1,000-line file (copies of the bundled
  rulesets, each contract renamed) — targets ≤ 150 ms and ≤ 300 ms;
- ``check`` of files of about 1 MB and 10 MB (the same, many times over): the time ratio
  (target ≤ 12× for 10× the size, i.e. linear) and peak memory against the file's size (target
  ≤ 60×).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import sys
import tempfile
from pathlib import Path
from typing import NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lib.measure import compile_bytecode, timed_process

ROOT = Path(__file__).resolve().parents[1]
RULESETS = sorted((ROOT / "rulesets").glob("*.spot"))


def spot_text(min_lines: int) -> str:
    """Copies of the bundled rulesets, every contract and budget renamed, until the text has
    at least ``min_lines`` lines."""
    parts: list[str] = []
    lines = 0
    k = 0
    while lines < min_lines:
        for path in RULESETS:
            text = re.sub(
                r'^(contract|budget) "([^"]*)"',
                lambda m, k=k: f'{m.group(1)} "{m.group(2)}-{k}"',  # type: ignore[misc]
                path.read_text(encoding="utf-8"),
                flags=re.M,
            )
            parts.append(text)
            lines += text.count("\n")
        k += 1
    return "\n".join(parts)


class Run(NamedTuple):
    seconds: float  # wall clock
    cpu: float  # user + system seconds of the process
    peak_mb: float
    exit: int


def timed(args: list[str]) -> Run:
    """One process: the wall clock around it, its CPU time and peak memory
    (:func:`lib.measure.timed_process`)."""
    done = timed_process(args)
    return Run(done.seconds, done.cpu, done.peak_kb / 1024, done.exit)


def median_of(steps: dict[str, list[str]], repeat: int) -> dict[str, Run]:
    """Each step's median wall clock and CPU time, highest peak and last exit code, run in
    ``repeat`` rounds of every step once: a burst of load from other programs falls on every
    step alike."""
    runs: dict[str, list[Run]] = {name: [] for name in steps}
    for _ in range(repeat):
        for name, cmd in steps.items():
            runs[name].append(timed(cmd))
    return {
        name: Run(
            statistics.median(r.seconds for r in rs),
            statistics.median(r.cpu for r in rs),
            max(r.peak_mb for r in rs),
            rs[-1].exit,
        )
        for name, rs in runs.items()
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument(
        "--no-bytecode",
        action="store_true",
        help="every process compiles contractlang's modules from source (an editable install "
        "under PYTHONDONTWRITEBYTECODE=1); by default they are compiled first, as a wheel's "
        "install does",
    )
    args = ap.parse_args()
    exe = [sys.executable, "-m", "contractlang"]
    with tempfile.TemporaryDirectory() as tmp:
        if args.no_bytecode:  # contractlang's bytecode removed, and none written
            os.environ["PYTHONDONTWRITEBYTECODE"] = "1"
            for cache in (ROOT / "contractlang").rglob("__pycache__"):
                shutil.rmtree(cache)
        else:
            print(compile_bytecode())
        small = Path(tmp) / "thousand.spot"
        small.write_text(spot_text(1000), encoding="utf-8")
        mb1, mb10 = Path(tmp) / "one.spot", Path(tmp) / "ten.spot"
        one = spot_text(1)
        while len(one.encode()) < 1_000_000:
            one = spot_text(one.count("\n") * 2)
        mb1.write_text(one, encoding="utf-8")
        mb10.write_text(spot_text(one.count("\n") * 10), encoding="utf-8")
        timed([*exe, "check", str(small)])  # warm the grammar cache once, as any second run
        load_before = os.getloadavg()[0]
        steps = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "python -c 'import polars'": [sys.executable, "-c", "import polars"],
            "contractlang --version": [*exe, "--version"],
            f"check ({small.read_text().count(chr(10)):,} lines)": [*exe, "check", str(small)],
            "fmt --check (same file)": [*exe, "fmt", "--check", str(small)],
        }
        print(f"{'step':<36} {'seconds':>8} {'CPU s':>8} {'peak MB':>8} {'exit':>5}")
        for name, r in median_of(steps, args.repeat).items():
            print(f"{name:<36} {r.seconds:>8.3f} {r.cpu:>8.2f} {r.peak_mb:>8.0f} {r.exit:>5}")
        large = {p.name: [*exe, "check", str(p)] for p in (mb1, mb10)}
        sizes = median_of(large, max(1, args.repeat // 2))
        for path in (mb1, mb10):
            r = sizes[path.name]
            size_mb = path.stat().st_size / 1e6
            print(
                f"check {size_mb:5.1f} MB{'':<20} {r.seconds:>8.3f} {r.cpu:>8.2f} {r.peak_mb:>8.0f}"
                f" {r.exit:>5}   peak {r.peak_mb / size_mb:.0f}× the file"
            )
        ten, one_mb = sizes["ten.spot"], sizes["one.spot"]
        print(
            f"10 MB / 1 MB time: {ten.seconds / one_mb.seconds:.1f}× wall clock, "
            f"{ten.cpu / one_mb.cpu:.1f}× CPU (target ≤ 12×)"
        )
        print(
            f"load average {load_before:.1f} before, {os.getloadavg()[0]:.1f} after; "
            + (
                "no bytecode (--no-bytecode): each process compiles contractlang's modules"
                if args.no_bytecode
                else "contractlang's bytecode compiled first, as a wheel's install does"
            )
        )


if __name__ == "__main__":
    main()
