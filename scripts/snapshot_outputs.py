"""Every output the bundled examples give, written into one folder, so that two commits can be
compared byte for byte (a change that restructures code must leave each file as it was).

    python scripts/snapshot_outputs.py /tmp/before          # at the old commit
    python scripts/snapshot_outputs.py /tmp/after           # at the new one
    diff -r /tmp/before /tmp/after && echo identical

Each command runs in a scratch copy of the repository's examples, rulesets and fixtures (so
relative paths in messages are the same wherever the repository lies); its standard output,
standard error and exit code go to ``NN-name.out``, ``.err`` and ``.code``, and the files it
writes are copied beside them as ``NN-name.<file>``. Commands whose output holds a clock time
or a path outside the scratch folder are not run (``rehearse``, progress lines).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REALDATA = ROOT.parent / "shared" / "realdata"

RULESETS = [
    "rulesets/aws-ec2-spot-linux.spot",
    "rulesets/azure-spot-vms.spot",
    "rulesets/coreweave-spot.spot",
    "rulesets/gcp-spot-vms.spot",
    "rulesets/northwind-negotiated.spot",
]
BUDGET = "rulesets/fy27-budget.spot"
TRACE = "examples/trace.parquet"
AUDIT = "examples/audit"

#: (name, arguments, files the command writes). Names keep the order they run in.
COMMANDS: list[tuple[str, list[str], list[str]]] = [
    ("check", ["check", *RULESETS, BUDGET], []),
    ("fmt-check", ["fmt", "--check", *RULESETS, BUDGET], []),
    ("evaluate-text", ["evaluate", *RULESETS, BUDGET, TRACE], []),
    ("evaluate-json", ["evaluate", *RULESETS, BUDGET, TRACE, "--format", "json"], []),
    (
        "evaluate-files",
        [
            "evaluate",
            RULESETS[0],
            TRACE,
            "--ledger",
            "ledger.csv",
            "--runs",
            "runs.csv",
            "--format",
            "json",
        ],
        ["ledger.csv", "runs.csv"],
    ),
    ("evaluate-ledger-parquet", ["evaluate", RULESETS[4], TRACE, "--ledger", "l.parquet"], []),
    ("evaluate-report", ["evaluate", *RULESETS, BUDGET, TRACE, "--report", "e.html"], ["e.html"]),
    ("evaluate-shards", ["evaluate", *RULESETS, BUDGET, TRACE, "--shards", "3"], []),
    ("compare-text", ["compare", *RULESETS, BUDGET, TRACE, "--attribute"], []),
    (
        "compare-json",
        ["compare", *RULESETS, BUDGET, TRACE, "--attribute", "--format", "json"],
        [],
    ),
    ("compare-csv", ["compare", *RULESETS, BUDGET, TRACE, "--attribute", "--format", "csv"], []),
    (
        "compare-reports",
        [
            "compare",
            *RULESETS,
            BUDGET,
            TRACE,
            "--attribute",
            "--report",
            "c.html",
        ],
        ["c.html"],
    ),
    ("compare-md", ["compare", *RULESETS, BUDGET, TRACE, "--report", "c.md"], ["c.md"]),
    ("explain", ["explain", RULESETS[4], TRACE, "--run", "run-000003"], []),
    (
        "explain-json",
        ["explain", RULESETS[4], TRACE, "--run", "run-000003", "--format", "json"],
        [],
    ),
    (
        "explain-attribute",
        ["explain", RULESETS[4], TRACE, "--run", "run-000003", "--attribute"],
        [],
    ),
    ("trace-validate", ["trace", "validate", TRACE], []),
    ("trace-facts", ["trace", "facts", TRACE, "--out", "facts.csv"], ["facts.csv"]),
    (
        "import-sacct",
        [
            "import",
            "sacct",
            f"{AUDIT}/sacct-2025-03.txt",
            "--tz",
            "America/New_York",
            "--capacity",
            "spot",
            "--out",
            "jobs.parquet",
            "--rejects",
            "rejects.csv",
        ],
        ["rejects.csv"],
    ),
    (
        "import-focus",
        [
            "import",
            "focus",
            f"{AUDIT}/invoice-2025-03.csv",
            "--run-from",
            "tag:slurm_job",
            "--out",
            "invoice.parquet",
        ],
        [],
    ),
    (
        "reconcile",
        ["reconcile", f"{AUDIT}/northwind-h100.spot", "jobs.parquet", "invoice.parquet"],
        [],
    ),
    (
        "reconcile-files",
        [
            "reconcile",
            f"{AUDIT}/northwind-h100.spot",
            "jobs.parquet",
            "invoice.parquet",
            "--format",
            "json",
            "--out",
            "dispute.csv",
            "--report",
            "r.html",
        ],
        ["dispute.csv", "r.html"],
    ),
    (
        "reconcile-md",
        [
            "reconcile",
            f"{AUDIT}/northwind-h100.spot",
            "jobs.parquet",
            "invoice.parquet",
            "--report",
            "r.md",
        ],
        ["r.md"],
    ),
    (
        "simulate",
        [
            "simulate",
            "examples/simulate/drafts.spot",
            "--workload",
            "examples/simulate/workload.toml",
        ],
        [],
    ),
    (
        "simulate-json",
        [
            "simulate",
            "examples/simulate/drafts.spot",
            "--workload",
            "examples/simulate/workload.toml",
            "--format",
            "json",
            "--report",
            "s.html",
        ],
        ["s.html"],
    ),
    ("test", ["test", "fixtures"], []),
    ("test-json", ["test", "fixtures", "--format", "json"], []),
    ("generate", ["trace", "generate", "--runs", "50", "--seed", "3", "--out", "g.csv"], ["g.csv"]),
]


def main(out: Path) -> int:
    out.mkdir(parents=True, exist_ok=False)
    with tempfile.TemporaryDirectory(prefix="contractlang-snapshot-") as scratch:
        work = Path(scratch)
        for folder in ("examples", "rulesets", "fixtures"):
            shutil.copytree(ROOT / folder, work / folder)
        env = {**os.environ, "COLUMNS": "100", "NO_COLOR": "1", "TERM": "dumb"}
        for n, (name, args, files) in enumerate(COMMANDS, start=1):
            stem = f"{n:02d}-{name}"
            done = subprocess.run(
                [sys.executable, "-m", "contractlang", *args],
                cwd=work,
                env=env,
                capture_output=True,
                check=False,
            )
            (out / f"{stem}.out").write_bytes(done.stdout)
            (out / f"{stem}.err").write_bytes(done.stderr)
            (out / f"{stem}.code").write_text(f"{done.returncode}\n")
            for f in files:
                written = work / f
                if written.exists():
                    shutil.copyfile(written, out / f"{stem}.{f}")
            print(f"{stem}: exit {done.returncode}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python scripts/snapshot_outputs.py OUTDIR (a folder that does not exist)")
    sys.exit(main(Path(sys.argv[1])))
