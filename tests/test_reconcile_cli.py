"""`contractlang reconcile` at the command line, and the worked audit of docs/reconcile.md: a
sacct export and a FOCUS invoice for March 2025, imported, joined and reconciled, every figure
computed by hand."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import polars as pl
import pytest
from support.cli import no_traceback, run
from support.events import event, released, started
from support.events import frame as trace_frame
from test_reconcile import CONTRACT, EVENTS, correction

from contractlang.importers import import_focus, import_sacct
from contractlang.reconcile import ContractReconciliation, reconcile
from contractlang.trace import load_trace

ROOT = Path(__file__).resolve().parents[1]
AUDIT = ROOT / "examples" / "audit"


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "c.spot").write_text(CONTRACT)
    trace_frame(EVENTS).write_parquet(tmp_path / "t.parquet")
    return tmp_path


def test_exit_1_on_a_discrepancy_and_the_summary_fits_80_columns(files: Path) -> None:
    result = run("reconcile", files / "c.spot", files / "t.parquet")
    assert result.exit_code == 1, result.output
    text = result.output
    assert all(len(line) <= 80 for line in text.splitlines()), text
    assert "2026-03" in text
    assert "largest discrepancies" in text
    # the largest: r5's 11.20, invoiced although the contract excludes it
    assert "1. 11.20 USD over-billed: charge of allocation r5-a1 (run r5)" in text
    assert 'excluded by "reclaimed in the first hour" (line 6)' in text
    # the dispute letter: 12.70 of charges + 5.40 of credits owed = 18.10 to claim
    assert "charges beyond the terms" in text
    claim = next(line for line in text.splitlines() if "to claim from the provider" in line)
    assert claim.split()[-1] == "18.10"


def test_json_is_stable_and_exact(files: Path) -> None:
    first = run("reconcile", files / "c.spot", files / "t.parquet", "--format", "json")
    second = run("reconcile", files / "c.spot", files / "t.parquet", "--format", "json")
    assert first.exit_code == 1
    assert first.output == second.output
    doc = json.loads(first.output)
    assert doc["schema"] == "contractlang.reconcile/1"
    assert (doc["tolerance"], doc["discrepancy"]) == ("0.00", True)
    assert str(files) not in first.output
    (c,) = doc["contracts"]
    assert c["summary"]["missing"] == {"count": 2, "amount": "7.20"}
    assert c["totals"]["credits_owed"] == "5.40"
    assert [m["month"] for m in c["months"]] == ["2026-03", "2026-04"]
    line = next(x for x in c["lines"] if x["alloc_id"] == "r3-a1")
    assert {k: line[k] for k in ("kind", "status", "expected", "invoiced", "difference")} == {
        "kind": "charge",
        "status": "under_billed",
        "expected": "4.13",
        "invoiced": "4.00",
        "difference": "-0.13",
    }
    assert (line["term"], line["line"]) == ("rate 2.00 USD per gpu_hour", 3)
    r5 = next(x for x in c["lines"] if x["alloc_id"] == "r5-a1")
    assert r5["reasons"][0]["facts"] == {"end_reason": "reclaimed", "runtime": "42 min"}


def test_out_writes_every_comparison_for_a_dispute(files: Path) -> None:
    out = files / "dispute.csv"
    result = run("reconcile", files / "c.spot", files / "t.parquet", "--out", out)
    assert result.exit_code == 1
    table = pl.read_csv(out, infer_schema=False)
    # one row per comparison: 6 matched + 2 over + 1 under + 2 missing + 3 unexpected = 14
    assert table.height == 14
    row = table.filter(pl.col("alloc_id") == "r2-a1").row(0, named=True)
    assert (row["status"], row["difference"]) == ("over_billed", "0.50")
    # a negative amount is a number: written as it is, not escaped for a spreadsheet
    row = table.filter(pl.col("alloc_id") == "r3-a1").row(0, named=True)
    assert (row["status"], row["difference"]) == ("under_billed", "-0.13")
    assert table.columns[:3] == ["contract", "run_id", "alloc_id"]


def test_tolerance_and_bad_flags(files: Path) -> None:
    ok = run("reconcile", files / "c.spot", files / "t.parquet", "--tolerance", "20 USD")
    assert ok.exit_code == 0, ok.output  # every difference here is at most 11.20
    assert "no discrepancy beyond the tolerance" in ok.output
    for args, message in (
        (["--tolerance", "-1"], "not an amount of money of 0 or more"),
        (["--tolerance", "abc"], "not an amount of money"),
        (["--tolerance", "1e999999"], "not an amount of money"),
        (["--tolerance", "1 USD extra"], "not an amount of money"),
        (["--tolerance", "٣"], "not an amount of money"),  # an Arabic-Indic 3, not ASCII
        (["--tolerance", "0.٠٥ USD"], "not an amount of money"),
        (["--clock-skew", "٣s"], "is not a duration"),
        (["--tolerance", "0.05 EUR"], "is in EUR, but contract `c` bills in USD"),
        (["--out", files / "x.txt"], "must end in"),
    ):
        result = run("reconcile", files / "c.spot", files / "t.parquet", *args)
        no_traceback(result)
        assert result.exit_code == 2, result.output
        assert message in result.output


# --------------------------------------------------------------------------- the worked audit


@pytest.fixture(scope="module")
def audit() -> ContractReconciliation:
    jobs = import_sacct(AUDIT / "sacct-2025-03.txt", "America/New_York", capacity="spot")
    invoice = import_focus(AUDIT / "invoice-2025-03.csv", "tag:slurm_job")
    # the two imported traces read as one, as `reconcile terms jobs invoice` reads them
    trace = load_trace([jobs.events, invoice.events])
    (only,) = reconcile([AUDIT / "northwind-h100.spot"], trace).contracts
    return only


def test_the_audit_month_by_month(audit: ContractReconciliation) -> None:
    feb, march = audit.months()
    # February: only the −3.00 correction for job 6990, which this month's jobs do not explain
    assert (feb.month, feb.expected, feb.invoiced, feb.under_billed) == (
        "2025-02",
        0,
        Decimal("-3.00"),
        Decimal("3.00"),
    )
    # March, expected: 7001 42.00 + 268.80 (7001#2 excluded) − 4.20 credit; 7002 70.56 (4 h 12
    # min billed) + 134.40 − 7.06; 7003 4 GPUs × 4 h 20 min × 1.10 = 19.07; 7005 16 × 7 h × 2.10
    # = 235.20; 7006_1 2 × 2.5 h × 2.10 = 10.50; 7006_2 2 × 13 min × 2.10 = 0.91: 770.18
    # invoiced: 321.78 + 204.85 − 7.06 + 19.07 + 268.80 + 10.50 + 0.87 + 15.00 = 833.81
    assert (march.expected, march.invoiced) == (Decimal("770.18"), Decimal("833.81"))
    # over: 10.98 (7001#2 billed) + 4.20 (credit not given) + 33.60 (7005 billed 8 h for 7)
    # + 15.00 (support, no run) = 63.78; under: 0.11 (7002) + 0.04 (7006_2) = 0.15
    assert (march.over_billed, march.under_billed) == (Decimal("63.78"), Decimal("0.15"))
    assert audit.claims() == (Decimal("59.58"), Decimal("4.20"))


def test_the_audit_names_the_reasons(audit: ContractReconciliation) -> None:
    top = audit.largest()
    assert [(c.run_id, c.kind, c.difference) for c in top] == [
        ("7005", "charge", Decimal("33.60")),
        ("unattributed", "charge", Decimal("15.00")),
        ("7001", "charge", Decimal("10.98")),
        ("7001", "credit", Decimal("4.20")),
        ("6990", "credit", Decimal("-3.00")),
    ]
    why = top[2].reasons[0]
    assert (why.alloc_id, why.term) == ("7001#2", "reclaimed in the first hour")
    assert dict(why.facts)["runtime"].total_seconds() == 39 * 60 + 12


def test_values_from_the_trace_cannot_steer_the_terminal(tmp_path: Path) -> None:
    run_id, alloc = "r\x1b[31m1", "a\x1b]0;pwned\x07"
    events = [
        started(run_id, alloc, "2026-03-02 10:00", gpus=1),
        released(run_id, alloc, "2026-03-02 11:00"),
        # 1 GPU × 1 h × 2.00 = 2.00 owed; 3.00 invoiced: over-billed, among the largest
        event(run_id, alloc, "2026-03-02 11:00", "charge", amount=Decimal("3.00")),
    ]
    (tmp_path / "c.spot").write_text(CONTRACT)
    trace_frame(events).write_parquet(tmp_path / "t.parquet")
    result = run("reconcile", tmp_path / "c.spot", tmp_path / "t.parquet")
    assert result.exit_code == 1, result.output
    assert "\x1b" not in result.output
    assert "\x07" not in result.output
    assert "charge of allocation a\\x1b]0;pwned\\x07 (run r\\x1b[31m1)" in result.output
    # and one invoice line is "1 invoice line"
    assert 'reconcile "c": 1 invoice line, tolerance 0.00 USD' in result.output


def test_huge_invoice_amounts_print_every_digit(tmp_path: Path) -> None:
    big = "90000000000000000000"
    events = [
        started("r1", "a1", "2026-03-02 10:00", gpus=1),
        released("r1", "a1", "2026-03-02 11:00"),
        event("r1", None, "2026-03-02 00:00", "charge", amount=Decimal(big)),
        event("r1", None, "2026-03-02 01:00", "charge", amount=Decimal(big)),
    ]
    (tmp_path / "c.spot").write_text(CONTRACT)
    trace_frame(events).write_parquet(tmp_path / "t.parquet")
    result = run("reconcile", tmp_path / "c.spot", tmp_path / "t.parquet", "--format", "json")
    assert result.exit_code == 1, result.output
    (c,) = json.loads(result.output)["contracts"]
    # 9e19 + 9e19 invoiced, 1 GPU × 1 h × 2.00 owed: 1.8e20 − 2.00 over-billed
    assert c["totals"]["invoiced"] == "180000000000000000000.00"
    assert c["totals"]["over_billed"] == "179999999999999999998.00"
    text = run("reconcile", tmp_path / "c.spot", tmp_path / "t.parquet")
    assert "179,999,999,999,999,999,998.00 USD over-billed" in text.output


def test_invoice_money_set_aside_by_a_quarantine_is_not_hidden(tmp_path: Path) -> None:
    (tmp_path / "c.spot").write_text(CONTRACT)
    trace = tmp_path / "t.csv"
    trace.write_text(
        "run_id,alloc_id,ts,source,event,gpus,amount\n"
        # r1: 1 GPU × 1 h × 2.00 = 2.00, invoiced 2.00: matched
        "r1,a1,2026-03-02T10:00:00Z,scheduler,started,1,\n"
        "r1,a1,2026-03-02T11:00:00Z,scheduler,released,,\n"
        "r1,a1,2026-03-02T11:00:00Z,invoice,charge,,2.00\n"
        # r2 ends before it starts (T009): set aside with its charge 2.10 and credit −1.00
        "r2,b1,2026-03-02T10:00:00Z,scheduler,started,1,\n"
        "r2,b1,2026-03-02T09:00:00Z,scheduler,released,,\n"
        "r2,,2026-03-02T11:00:00Z,invoice,charge,,2.10\n"
        "r2,,2026-03-02T11:00:00Z,invoice,credit,,-1.00\n"
        # r3: an invoice line whose amount cannot be read (T002): set aside, no amount
        "r3,,2026-03-02T11:00:00Z,invoice,charge,,12.3.4\n"
    )
    q = ["--on-invalid", f"quarantine={tmp_path / 'q.parquet'}"]
    result = run("reconcile", tmp_path / "c.spot", trace, *q)
    no_traceback(result)
    # r1 matches, yet 3 invoice lines were never compared: not "no discrepancy", exit 0
    assert result.exit_code == 1, result.output
    # 2.10 − 1.00 = 1.10 readable; the third line's amount is unreadable
    text = " ".join(result.output.split())
    assert (
        "not reconciled: 3 invoice lines (1.10 USD, 1 line with no readable amount) of 2 runs "
        "set aside by `--on-invalid quarantine`;"
    ) in text
    # the Markdown report says the same, unreadable line and all
    md = tmp_path / "r.md"
    run("reconcile", tmp_path / "c.spot", trace, *q, "--report", md)
    assert (
        "Not reconciled: 3 invoice lines (1.10 USD, 1 line with no readable amount) of 2 runs "
        "set aside by --on-invalid quarantine."
    ) in " ".join(md.read_text(encoding="utf-8").split())
    again = run("reconcile", tmp_path / "c.spot", trace, *q, "--format", "json")
    doc = json.loads(again.stdout)
    assert doc["discrepancy"] is False  # among the lines compared
    assert doc["set_aside"] == {
        "runs": 2,
        "invoice_lines": 3,
        "amount": "1.10",
        "unreadable_amounts": 1,
    }
    # nothing set aside: null, and exit 0
    clean = tmp_path / "clean.csv"
    clean.write_text("".join(trace.read_text().splitlines(keepends=True)[:4]))
    ok = run("reconcile", tmp_path / "c.spot", clean, *q, "--format", "json")
    assert ok.exit_code == 0, ok.output
    assert json.loads(ok.stdout)["set_aside"] is None


def test_every_row_is_named_by_its_own_file(tmp_path: Path) -> None:
    (tmp_path / "c.spot").write_text(CONTRACT)
    jobs, invoice = tmp_path / "jobs.csv", tmp_path / "invoice.csv"
    jobs.write_text(
        "run_id,alloc_id,ts,source,event,gpus\n"
        "r1,a1,2026-03-02T10:00:00Z,scheduler,started,1\n"
        "r1,a1,2026-03-02T11:00:00Z,scheduler,released,\n"
    )
    # 1 GPU × 1 h × 2.00 = 2.00 owed; 1.00 + 2.50 = 3.50 invoiced on rows 2 and 3 of the
    # invoice file (rows 4 and 5 of the two read as one)
    invoice.write_text(
        "run_id,alloc_id,ts,source,event,gpus,amount,billing_currency\n"
        "r9,,2026-03-02T11:00:00Z,invoice,credit,,-0.10,USD\n"
        "r1,,2026-03-02T11:00:00Z,invoice,charge,,1.00,USD\n"
        "r1,,2026-03-02T12:00:00Z,invoice,charge,,2.50,USD\n"
    )
    out = tmp_path / "dispute.csv"
    result = run("reconcile", tmp_path / "c.spot", jobs, invoice, "--out", out)
    assert result.exit_code == 1, result.output
    assert f"invoiced 3.50 on {invoice} rows 2, 3" in " ".join(result.output.split())
    assert "trace row" not in result.output
    doc = json.loads(
        run("reconcile", tmp_path / "c.spot", jobs, invoice, "--format", "json").stdout
    )
    assert doc["trace"]["files"] == 2
    (line,) = [x for x in doc["contracts"][0]["lines"] if x["run_id"] == "r1"]
    assert line["invoice_rows"] == [{"file": 2, "row": 2}, {"file": 2, "row": 3}]
    table = pl.read_csv(out, infer_schema=False)
    assert table.filter(pl.col("run_id") == "r1")["invoice_rows"].to_list() == [
        f"{invoice} rows 2, 3"
    ]
    # a problem with a row of the second file names that file and its own row
    invoice.write_text(invoice.read_text().replace("2.50,USD", "2.50,EUR"))
    result = run("reconcile", tmp_path / "c.spot", jobs, invoice)
    assert result.exit_code == 2, result.output
    assert f"{invoice}: row 3: error[R001]: invoice line in `EUR`" in result.output


@pytest.mark.parametrize("suffix", [".md", ".html"])
def test_the_report_holds_the_summary_s_figures(files: Path, suffix: str) -> None:
    # the report's figures are the JSON document's own: every month, status and dispute
    # amount, and the largest discrepancy (r5's 11.20, invoiced though excluded)
    report = files / f"r{suffix}"
    result = run("reconcile", files / "c.spot", files / "t.parquet", "--report", report)
    no_traceback(result)
    assert result.exit_code == 1, result.output
    text = report.read_text(encoding="utf-8")
    doc = json.loads(
        run("reconcile", files / "c.spot", files / "t.parquet", "--format", "json").output
    )
    (c,) = doc["contracts"]
    for month in c["months"]:
        assert month["month"] in text
    for status, t in c["summary"].items():
        assert status in text
        assert t["amount"] in text
    assert "11.20 USD over-billed" in text
    assert "18.10" in text  # to claim from the provider: 12.70 + 5.40
    if suffix == ".md":
        assert "<" not in text.replace("\\<", "")  # no HTML in Markdown
    else:
        assert text.startswith("<!DOCTYPE html>")
        assert "http" not in text  # nothing fetched


def test_the_report_escapes_names_from_the_terms(files: Path) -> None:
    spot = files / "c.spot"
    spot.write_text(spot.read_text().replace('contract "c"', 'contract "<script>x</script>"', 1))
    for suffix in (".md", ".html"):
        report = files / f"r{suffix}"
        result = run("reconcile", spot, files / "t.parquet", "--report", report)
        assert result.exit_code == 1, result.output
        assert "<script>" not in report.read_text(encoding="utf-8")


def test_a_report_that_is_an_input_is_refused(files: Path) -> None:
    result = run("reconcile", files / "c.spot", files / "t.parquet", "--report", files / "c.spot")
    no_traceback(result)
    assert result.exit_code == 2


# ------------------------------------------------------------- net amounts at the command line


def test_the_correction_example_is_all_matched(tmp_path: Path) -> None:
    (tmp_path / "c.spot").write_text(CONTRACT)
    trace_frame(correction(True)).write_parquet(tmp_path / "t.parquet")
    result = run("reconcile", tmp_path / "c.spot", tmp_path / "t.parquet")
    no_traceback(result)
    assert result.exit_code == 0, result.output
    text = result.output
    # what the charges were compared net of: the one reversal, −1,500.00
    assert text.splitlines()[1] == "charges net of 1 reversal (-1,500.00 USD)"
    assert "no discrepancy beyond the tolerance" in text
    doc = json.loads(
        run("reconcile", tmp_path / "c.spot", tmp_path / "t.parquet", "--format", "json").stdout
    )
    (c,) = doc["contracts"]
    assert {x["status"] for x in c["lines"]} == {"matched"}
    assert {x["kind"] for x in c["lines"]} == {"charge"}  # no line is a credit
    # 1,500.00 (A) + 1,200.00 + 300.00 (B) in 3 charges; −1,500.00 in 1 reversal
    assert c["invoice_lines"]["charge"] == {"count": 3, "amount": "3000.00"}
    assert c["invoice_lines"]["reversal"] == {"count": 1, "amount": "-1500.00"}
    assert c["invoice_lines"]["credit"] == {"count": 0, "amount": "0.00"}
    april = c["lines"][1]
    assert (april["month"], april["expected"], april["invoiced"]) == ("2026-04", None, "0.00")
    assert april["invoiced_lines"] == {
        "charge": {"count": 2, "amount": "1500.00"},
        "reversal": {"count": 1, "amount": "-1500.00"},
    }


def test_a_positive_credit_and_a_tax_line_in_every_output(tmp_path: Path) -> None:
    events = [
        # 1 GPU × 1 h × 2.00 = 2.00 owed and invoiced on its own line; a "credit" of +0.75
        # (counted as a charge: over-billed 0.75) and tax of 0.41 (not compared)
        started("r1", "a1", "2026-03-02 10:00", gpus=1),
        released("r1", "a1", "2026-03-02 11:00"),
        event("r1", "a1", "2026-03-02 11:00", "charge", amount=Decimal("2.00")),
        event("r1", None, "2026-03-02 12:00", "credit", amount=Decimal("0.75")),
        event("r1", None, "2026-03-02 12:00", "tax", amount=Decimal("0.41")),
    ]
    (tmp_path / "c.spot").write_text(CONTRACT)
    trace = tmp_path / "t.parquet"
    trace_frame(events).write_parquet(trace)
    result = run("reconcile", tmp_path / "c.spot", trace)
    assert result.exit_code == 1, result.output
    text = result.output
    assert f"{trace}: row 4: warning[W801]: credit line of positive amount `0.75`" in text
    assert (
        "1 credit line of positive amount (0.75 USD) counted as a charge; 1 tax line (0.41 "
        "USD) reported, not compared"
    ) in " ".join(text.split())
    letter = {
        line[:48].strip(): line[48:].split()
        for line in text.splitlines()
        if line.startswith("  ") and len(line) > 48
    }
    assert letter["charges beyond the terms"] == ["0.75", "(1", "line)"]
    assert letter["credit owed by the contract's own terms"] == ["0.00", "(0", "lines)"]
    assert letter["credits on the invoice"] == ["0.00"]
    assert letter["tax on the invoice, not compared"] == ["0.41", "(1", "line)"]
    out = run("reconcile", tmp_path / "c.spot", trace, "--format", "json").stdout
    doc = json.loads(out)
    # the document's keys are sorted, at every level
    assert out == json.dumps(doc, indent=2, ensure_ascii=False, sort_keys=True) + "\n"
    (c,) = doc["contracts"]
    assert (c["totals"]["charges_over_billed"], c["totals"]["credits_owed"]) == ("0.75", "0.00")
    assert c["invoice_lines"]["positive_credit"] == {"count": 1, "amount": "0.75"}
    assert c["invoice_lines"]["tax"] == {"count": 1, "amount": "0.41"}
    # the totals leave the tax out: 2.00 + 0.75 = 2.75 invoiced
    assert c["totals"]["invoiced"] == "2.75"
    [w] = doc["warnings"]
    assert (w["code"], w["file"], w["row"]) == ("W801", 1, 4)
    for suffix in (".md", ".html"):
        report = tmp_path / f"r{suffix}"
        run("reconcile", tmp_path / "c.spot", trace, "--report", report)
        said = " ".join(report.read_text(encoding="utf-8").split())
        assert "counted as a charge; 1 tax line (0.41 USD) reported, not compared" in said
        assert "tax on the invoice, not compared" in said


def test_set_aside_lines_of_every_kind_are_counted(tmp_path: Path) -> None:
    (tmp_path / "c.spot").write_text(CONTRACT)
    trace = tmp_path / "t.csv"
    trace.write_text(
        "run_id,alloc_id,ts,source,event,gpus,amount\n"
        # r2 ends before it starts (T009): set aside with its adjustment 0.30 and tax 0.20
        "r2,b1,2026-03-02T10:00:00Z,scheduler,started,1,\n"
        "r2,b1,2026-03-02T09:00:00Z,scheduler,released,,\n"
        "r2,,2026-03-02T11:00:00Z,invoice,adjustment,,0.30\n"
        "r2,,2026-03-02T11:00:00Z,invoice,tax,,0.20\n"
    )
    q = ["--on-invalid", f"quarantine={tmp_path / 'q.parquet'}", "--format", "json"]
    result = run("reconcile", tmp_path / "c.spot", trace, *q)
    no_traceback(result)
    # 0.30 + 0.20 = 0.50 of 2 lines of 1 run, not reconciled
    assert json.loads(result.stdout)["set_aside"] == {
        "runs": 1,
        "invoice_lines": 2,
        "amount": "0.50",
        "unreadable_amounts": 0,
    }


def test_the_worked_reversal_of_the_page_is_what_reconcile_prints(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the section's terms, trace, summary and dispute table are its code blocks, in order
    page = (ROOT / "docs" / "reconcile.md").read_text(encoding="utf-8")
    section = page.split("## A worked reversal")[1].split("\n## ")[0]
    blocks = [b.split("\n", 1) for b in section.split("```")[1::2]]
    assert [lang for lang, _ in blocks] == ["spot", "csv", "text", "csv"]
    spot, trace, shown, table = (text for _, text in blocks)
    monkeypatch.chdir(tmp_path)
    Path("h100.spot").write_text(spot)
    Path("correction.csv").write_text(trace)
    result = run("reconcile", "h100.spot", "correction.csv", "--out", "dispute.csv")
    no_traceback(result)
    assert result.exit_code == 0, result.output
    assert result.stdout == shown
    assert Path("dispute.csv").read_text() == table
    # by hand: 8 GPUs × 75 h × 2.50 = 1,500.00 owed; March 1,500.00; April −1,500.00 +
    # 1,200.00 + 300.00 = 0.00
    assert "2025-03         1,500.00       1,500.00" in shown
    assert "2025-04             0.00           0.00" in shown


def test_an_unreadable_billing_period_start_is_exit_2_at_its_row(tmp_path: Path) -> None:
    (tmp_path / "c.spot").write_text(CONTRACT)
    trace = tmp_path / "t.csv"
    trace.write_text(
        "run_id,alloc_id,ts,source,event,gpus,amount,billing_period_start\n"
        "r1,a1,2026-03-02T10:00:00Z,scheduler,started,1,,\n"
        "r1,a1,2026-03-02T11:00:00Z,scheduler,released,,,\n"
        "r1,,2026-03-02T11:00:00Z,invoice,charge,,2.00,2026-03-01T00:00:00Z\n"
        "r1,,2026-03-02T11:00:00Z,invoice,charge,,1.00,March 2026\n"
    )
    result = run("reconcile", tmp_path / "c.spot", trace)
    no_traceback(result)
    assert result.exit_code == 2, result.output
    assert (
        f"{trace}: row 4: error[R002]: billing period start `March 2026` is not an ISO 8601 "
        "time with an offset"
    ) in result.output
