"""docs/simulate.md stays true: its worked example's output is what the command prints now."""

from __future__ import annotations

import re
from pathlib import Path

from support.cli import run

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "simulate"


def test_the_worked_example_prints_what_the_doc_shows() -> None:
    doc = (ROOT / "docs" / "simulate.md").read_text(encoding="utf-8")
    shown = re.search(r"checked by tests/test_simulate_docs.py -->\n```text\n(.*?)```", doc, re.S)
    assert shown is not None
    result = run("simulate", EXAMPLE / "drafts.spot", EXAMPLE / "budget.spot",
                 "--workload", EXAMPLE / "workload.toml", "--baseline", "basic")  # fmt: skip
    assert result.exit_code == 1  # a budget not met, as the doc says
    assert result.stdout == shown.group(1)
