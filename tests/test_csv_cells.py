"""CSV files people open in a spreadsheet: a text cell that would start a formula (`=`, `+`,
`-`, `@`, a tab, a carriage return) is written after a `'`; numbers never are. Trace files,
which contractlang reads back, keep every value as it is (docs/cli.md, "CSV files")."""

from __future__ import annotations

import csv
import io
from decimal import Decimal
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from support.cli import no_traceback, run
from support.events import event, released, started
from support.events import frame as trace_frame
from test_reconcile import CONTRACT as RECONCILED
from test_reconcile import EVENTS as INVOICED

from contractlang.render.common.tables import FORMULA_STARTS, spreadsheet_safe
from contractlang.trace import load_trace

#: One run id per character a spreadsheet starts a formula with, and one that is plain.
RISKY = ['=HYPERLINK("http://x","y")', "+r1", "-r2", "@SUM(A1)", "\tr3", "\rr4"]
RUN_IDS = [*RISKY, "plain"]
assert sorted(r[0] for r in RISKY) == sorted(FORMULA_STARTS)

CONTRACT = """\
contract "c" {
  currency USD
  rate 2.10 USD per gpu_hour
  credit "back" 10% of charge when gpus > 0 gpus
}
"""


def rows_of(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text, newline="")))


def read_rows(path: Path) -> list[dict[str, str]]:
    return rows_of(read(path))


def read(path: Path) -> str:
    """The file's text, its carriage returns kept (not read as line ends)."""
    with path.open(encoding="utf-8", newline="") as fh:
        return fh.read()


def shown(value: str) -> str:
    """How a cell reads back: a risky text after a `'`, the rest as it is."""
    return "'" + value if value[:1] in FORMULA_STARTS else value


def one_hour_each(run_ids: list[str]) -> list[dict[str, Any]]:
    """Each run one allocation of 8 GPUs for an hour: 8 × 1 × 2.10 = 16.80 charged, and a
    credit of 10% of it, −1.68."""
    rows: list[dict[str, Any]] = []
    for r in run_ids:
        rows += [started(r, r + "-a", 0, gpus=8), released(r, r + "-a", 60)]
    return rows


@pytest.fixture
def trace(tmp_path: Path) -> Path:
    path = tmp_path / "t.parquet"
    trace_frame(one_hour_each(RUN_IDS)).write_parquet(path)
    (tmp_path / "c.spot").write_text(CONTRACT, encoding="utf-8")
    return path


# --------------------------------------------------------------------------- the one rule


@pytest.mark.parametrize("start", list(FORMULA_STARTS))
def test_a_text_cell_that_starts_a_formula_gets_a_quote_and_numbers_never_do(start: str) -> None:
    value = start + "x"
    frame = pl.DataFrame(
        {
            "text": [value, "plain", None],
            "amount": [Decimal("-12.50"), Decimal("3.00"), None],
            "count": [-3, 4, None],
            "signed": ["-12.50", "+0.00", start + "y"],
        },
        schema_overrides={"amount": pl.Decimal(38, 2)},
    )
    back = rows_of(spreadsheet_safe(frame, numbers=["signed"]).write_csv())
    assert [r["text"] for r in back] == ["'" + value, "plain", ""]
    assert [r["amount"] for r in back] == ["-12.50", "3.00", ""]
    assert [r["count"] for r in back] == ["-3", "4", ""]
    # in a text column of numbers, a number is kept as it is, and text is still escaped
    assert [r["signed"] for r in back] == ["-12.50", "+0.00", "'" + start + "y"]


def test_a_frame_with_nothing_risky_is_written_as_it_is() -> None:
    frame = pl.DataFrame({"run_id": ["r1", "a=b"], "net": [Decimal("-1.00"), Decimal("2.00")]})
    assert spreadsheet_safe(frame).equals(frame)


def test_categorical_text_is_escaped_too() -> None:
    frame = pl.DataFrame({"zone": pl.Series(["=z", "us"], dtype=pl.Categorical)})
    assert rows_of(spreadsheet_safe(frame).write_csv()) == [{"zone": "'=z"}, {"zone": "us"}]


# --------------------------------------------------------------------------- people's tables


def test_evaluate_ledger_and_runs(trace: Path) -> None:
    ledger, runs = trace.parent / "ledger.csv", trace.parent / "runs.csv"
    result = run("evaluate", trace.parent / "c.spot", trace, "--ledger", ledger, "--runs", runs)
    no_traceback(result)
    assert result.exit_code == 0, result.output
    lines = read_rows(ledger)
    assert sorted({r["run_id"] for r in lines}) == sorted(shown(r) for r in RUN_IDS)
    assert sorted({r["alloc_id"] for r in lines}) == sorted(shown(r + "-a") for r in RUN_IDS)
    # 16.80 charged and 10% of it, 1.68, credited, in every run: negative, and no quote
    assert {(r["kind"], r["amount"]) for r in lines} == {("charge", "16.80"), ("credit", "-1.68")}
    table = read_rows(runs)
    assert sorted(r["run_id"] for r in table) == sorted(shown(r) for r in RUN_IDS)
    assert {r["credits"] for r in table} == {"-1.68"}
    assert {r["net"] for r in table} == {"15.12"}  # 16.80 − 1.68


def test_trace_facts_out_and_runs_out(trace: Path) -> None:
    facts, runs = trace.parent / "facts.csv", trace.parent / "run-facts.csv"
    result = run("trace", "facts", trace, "--out", facts, "--runs-out", runs)
    no_traceback(result)
    assert result.exit_code == 0, result.output
    rows = read_rows(facts)
    assert sorted(r["run_id"] for r in rows) == sorted(shown(r) for r in RUN_IDS)
    assert sorted(r["alloc_id"] for r in rows) == sorted(shown(r + "-a") for r in RUN_IDS)
    assert {r["runtime"] for r in rows} == {"3600.000000"}  # an hour, in seconds
    assert sorted(r["run_id"] for r in read_rows(runs)) == sorted(shown(r) for r in RUN_IDS)


def test_compare_csv(tmp_path: Path, trace: Path) -> None:
    # the baseline "=base" charges 2.10 per GPU-hour; "-cheap" 2.00: 8 × 1 × 2.00 = 16.00 a
    # run, 7 runs 112.00 against 7 × 16.80 = 117.60, a delta of −5.60 (a number: no quote)
    terms = tmp_path / "drafts.spot"
    terms.write_text(
        'contract "=base" {\n  currency USD\n  rate 2.10 USD per gpu_hour\n}\n'
        'contract "-cheap" {\n  currency USD\n  rate 2.00 USD per gpu_hour\n}\n'
        'budget "@spend" {\n  require -sum(net) <= 0 USD\n}\n',
        encoding="utf-8",
    )
    result = run("compare", terms, trace, "--format", "csv")
    no_traceback(result)
    assert result.exit_code == 0, result.output
    rows = rows_of(result.stdout)
    assert {r["contract"] for r in rows} == {"'=base", "'-cheap"}
    net = {r["contract"]: (r["value"], r["delta"]) for r in rows if r["figure"] == "net"}
    assert net == {"'=base": ("117.60", "+0.00"), "'-cheap": ("112.00", "-5.60")}
    budget = [r for r in rows if r["section"] == "budget:@spend"]
    assert {r["figure"] for r in budget} == {"'-sum(net) <= 0 USD"}
    assert {(r["contract"], r["value"], r["verdict"]) for r in budget} == {
        ("'=base", "-117.60", "met"),
        ("'-cheap", "-112.00", "met"),
    }


def test_reconcile_out(tmp_path: Path) -> None:
    # the reconciled trace of tests/test_reconcile.py, each run's id after one of the risky
    # characters in turn: r3's charge is under-billed by 0.13 (4.13 expected, 4.00 invoiced)
    names = {f"r{k}": RISKY[(k - 1) % len(RISKY)][0] + f"r{k}" for k in range(1, 10)}
    events = [{**e, "run_id": names.get(e["run_id"], e["run_id"])} for e in INVOICED]
    trace_frame(events).write_parquet(tmp_path / "t.parquet")
    (tmp_path / "c.spot").write_text(RECONCILED, encoding="utf-8")
    out = tmp_path / "dispute.csv"
    result = run("reconcile", tmp_path / "c.spot", tmp_path / "t.parquet", "--out", out)
    no_traceback(result)
    assert result.exit_code == 1, result.output
    rows = read_rows(out)
    used = {e["run_id"] for e in events}
    assert {r["run_id"] for r in rows} == {shown(r) for r in used}
    r3 = next(r for r in rows if r["run_id"] == "'" + names["r3"] and r["alloc_id"] == "r3-a1")
    assert (r3["expected"], r3["invoiced"], r3["difference"]) == ("4.13", "4.00", "-0.13")


def test_import_rejects(tmp_path: Path) -> None:
    src = tmp_path / "jobs.txt"
    good = "|COMPLETED|2025-01-01T00:00:00|2025-01-01T01:00:00|gres/gpu=8"
    bad = [start + "x" for start in FORMULA_STARTS]  # none of them is a job ID: I010
    src.write_text(
        "JobID|State|Start|End|AllocTRES\n" + "".join(f"{job}{good}\n" for job in ["1", *bad])
    )
    rejects = tmp_path / "rejects.csv"
    result = run("import", "sacct", src, "--tz", "UTC", "--rejects", rejects, "--out",
                 tmp_path / "t.parquet")  # fmt: skip
    no_traceback(result)
    assert result.exit_code == 0, result.output
    rows = read_rows(rejects)
    assert [r["row"] for r in rows] == ["2", "3", "4", "5", "6", "7"]
    assert [r["record"] for r in rows] == ["'" + job + good for job in bad]
    assert all(r["reason"][0] not in FORMULA_STARTS for r in rows)


# --------------------------------------------------------------------------- traces as they are


def test_a_trace_written_as_csv_keeps_every_value_and_reads_back_the_same(trace: Path) -> None:
    merged = trace.parent / "merged.csv"
    result = run("trace", "merge", trace, "--out", merged)
    no_traceback(result)
    assert result.exit_code == 0, result.output
    text = read(merged)
    assert not any("'" + start in text for start in FORMULA_STARTS)
    written = {r["run_id"] for r in rows_of(text)}
    assert written == set(RUN_IDS)
    columns = ["run_id", "alloc_id", "ts", "source", "event", "gpus"]
    before = load_trace(trace).as_frame().select(columns)
    assert load_trace(merged).as_frame().select(columns).equals(before)


def test_import_out_csv_keeps_a_value_that_starts_a_formula(tmp_path: Path) -> None:
    src = tmp_path / "jobs.txt"
    src.write_text(
        "JobID|JobName|State|Start|End|AllocTRES\n"
        "1|=cmd|COMPLETED|2025-01-01T00:00:00|2025-01-01T01:00:00|gres/gpu=8\n"
    )
    out = tmp_path / "t.csv"
    result = run("import", "sacct", src, "--tz", "UTC", "--out", out)
    assert result.exit_code == 0, result.output
    assert {r["job_name"] for r in read_rows(out)} == {"=cmd"}
    assert set(load_trace(out).as_frame().get_column("job_name").to_list()) == {"=cmd"}


def test_runs_set_aside_are_a_trace_kept_as_they_are(tmp_path: Path, trace: Path) -> None:
    broken = [*one_hour_each(["=ok"]), event("=bad", "=bad-a", 0, "started", gpus=-8)]
    trace_frame(broken).write_parquet(trace)
    aside = tmp_path / "aside.csv"
    result = run("trace", "validate", trace, "--on-invalid", f"quarantine={aside}")
    no_traceback(result)
    assert {r["run_id"] for r in read_rows(aside)} == {"=bad"}


def test_a_fixtures_expected_ledger_is_compared_as_written(tmp_path: Path) -> None:
    folder = tmp_path / "fx"
    folder.mkdir()
    (folder / "c.spot").write_text(CONTRACT, encoding="utf-8")
    trace_frame(one_hour_each(["=r1", "-r2"])).write_csv(folder / "trace.csv")
    (folder / "fixture.toml").write_text(
        'story = "run ids that look like formulas"\nterms = ["c.spot"]\ntrace = "trace.csv"\n'
        'expected = "expected.json"\nledger = "expected-ledger.csv"\n',
        encoding="utf-8",
    )
    assert run("test", folder, "--update").exit_code == 0
    ledger = read_rows(folder / "expected-ledger.csv")
    assert sorted({r["run_id"] for r in ledger}) == ["-r2", "=r1"]  # as written, no quote
    again = run("test", folder)
    assert again.exit_code == 0, again.output
