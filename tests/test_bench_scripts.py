"""The benchmark scripts still run, at a smoke size, and their own cross-checks pass: each
compares the engine with an independent implementation (hand-written polars and DuckDB
queries, DuckDB SQL facts) and exits 1 when any figure differs. Nothing here is timed: speed
and memory are what the scripts print (bench/README.md), not what a test asserts."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"

#: (script and smoke-size arguments, a pattern its output must hold: 300 generated runs, and
#: bench_evaluate's 11 hand-made edge-case runs)
SCRIPTS = [
    (
        "bench_evaluate.py --runs 300 --repeat 1",
        r"all steps agree exactly on every one of 311 runs",
    ),
    (
        "bench_facts.py --runs 300",
        r"DuckDB and polars facts for [\d,]+ allocations and 300 runs: agree",
    ),
    ("bench_pieces.py --runs 300 --repeat 1", r"every rule \(check\) +\d"),
    ("bench_compare.py --runs 300", r"figures equal in every step: yes"),
]


@pytest.mark.parametrize(("command", "expected"), SCRIPTS, ids=[s[0].split()[0] for s in SCRIPTS])
def test_a_benchmark_runs_and_its_cross_check_passes(command: str, expected: str) -> None:
    script, *args = command.split()
    done = subprocess.run(
        [sys.executable, str(BENCH / script), *args],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert re.search(expected, done.stdout), done.stdout[-2000:]
