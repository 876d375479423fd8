"""`contractlang evaluate` and `explain` at the command line: the bad paths and what they say."""

from __future__ import annotations

import json
import re
from decimal import Decimal
from pathlib import Path

import polars as pl
import pytest
from support.cli import run as run_cli
from support.scenario import checkpoint, released, started, trace_frame

from contractlang.codes import CODES

ROOT = Path(__file__).resolve().parents[1]

CONTRACT = """\
contract "c" {
  currency USD
  rate 2.00 USD per gpu_hour
}
"""
BUDGET = 'budget "b" {\n  require sum(net) <= 100 USD\n}\n'


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "c.spot").write_text(CONTRACT)
    (tmp_path / "b.spot").write_text(BUDGET)
    events = [
        started("r1", "a1", "2026-03-02 10:00", gpus=1),
        checkpoint("r1", "2026-03-02 10:30", step=200),
        checkpoint("r1", "2026-03-02 10:40", step=100),  # a rollback: warning W101
        released("r1", "a1", "2026-03-02 11:00"),
    ]
    trace_frame(events).write_parquet(tmp_path / "t.parquet")
    return tmp_path


def run(*args: str | Path) -> tuple[int, str]:
    result = run_cli(*args)
    return result.exit_code, result.output


def test_budgets_without_a_contract_are_bad_input(files: Path) -> None:
    code, out = run("evaluate", files / "b.spot", files / "t.parquet")
    assert code == 2
    assert "error[E502]: the terms define no contract" in out


def test_output_under_a_file_is_bad_input_not_a_crash(files: Path) -> None:
    code, out = run(
        "evaluate", files / "c.spot", files / "t.parquet", "--ledger", files / "c.spot" / "l.csv"
    )
    assert code == 2
    assert "error[E502]" in out
    assert "is a file, not a folder" in out


def test_output_extension_is_checked_before_any_work(files: Path) -> None:
    code, out = run("evaluate", files / "c.spot", files / "t.parquet", "--runs", files / "r.xlsx")
    assert code == 2
    assert "must end in `.parquet` or `.csv`" in out


def test_trace_warnings_reach_the_evaluation(files: Path) -> None:
    # the trace's rollback warning is shown with the verdict, and kept in the JSON
    code, out = run("evaluate", files / "c.spot", files / "b.spot", files / "t.parquet")
    assert code == 0  # 1 GPU × 1 h × 2.00 = 2.00 USD <= 100 USD: met
    assert "warning[W101]" in out
    code, out = run("evaluate", files / "c.spot", files / "t.parquet", "--format", "json")
    doc = json.loads(out)
    assert [w["code"] for w in doc["warnings"]] == ["W101"]


def test_ledger_and_runs_are_written(files: Path) -> None:
    ledger, runs = files / "l.parquet", files / "r.csv"
    code, _ = run(
        "evaluate", files / "c.spot", files / "t.parquet", "--ledger", ledger, "--runs", runs
    )
    assert code == 0
    lines = pl.read_parquet(ledger)
    # one charge line: 2.00 USD/GPU-h × 1 GPU × 1 h = 2.00, exact in Parquet and in CSV text
    assert lines.select("kind", "amount").rows() == [("charge", Decimal("2.00"))]
    assert pl.read_csv(runs, infer_schema=False)["net"].to_list() == ["2.00"]


def test_explain_an_unknown_run_suggests_the_closest(files: Path) -> None:
    code, out = run("explain", files / "c.spot", files / "t.parquet", "--run", "r2")
    assert code == 2
    assert "error[E502]: run `r2` is not in the trace" in out
    assert "did you mean `r1`?" in out


def test_every_code_is_documented() -> None:
    docs = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "docs").glob("*.md"))
    missing = [code for code in CODES if not re.search(rf"\b{code}\b", docs)]
    assert missing == []


def test_an_aggregate_of_a_constant_counts_every_run(files: Path) -> None:
    # the trace has one run, so count(true) is 1 — not the one row a bare literal would give
    # if it were not broadcast over the runs; with 1 run, `>= 2` is not met (exit 1)
    (files / "k.spot").write_text(
        'budget "k" {\n  require count(true) >= 1\n  require count(true) >= 2\n}\n'
    )
    code, out = run(
        "evaluate", files / "c.spot", files / "k.spot", files / "t.parquet", "--format", "json"
    )
    assert code == 1
    reqs = json.loads(out)["contracts"][0]["budgets"][0]["requirements"]
    assert [(r["value"], r["verdict"]) for r in reqs] == [("1.0000", "met"), ("1.0000", "not met")]
