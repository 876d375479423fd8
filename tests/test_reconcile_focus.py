"""A FOCUS correction imported and reconciled end to end: the run `train-41` of the FOCUS 1.3
sample (`tests/data/focus_1.3_invoice.csv`) was billed 1,500.00 on the February invoice, then
reversed (−1,500.00, ChargeClass Correction) and re-billed across two resources (+1,200.00,
+300.00) on the March invoice, the charge periods still in February. Imported by
`import focus` and reconciled against a contract that expects 1,500.00, no line is a credit,
the reversal nets against the charges it corrects, and every comparison is matched (exit 0) —
from a Parquet trace and from a CSV one (whose billing periods read back as text)."""

from __future__ import annotations

import csv
import json
from decimal import Decimal
from pathlib import Path

import pytest
from support.cli import no_traceback, run
from support.events import frame as trace_frame
from support.events import released, started

DATA = Path(__file__).parent / "data"
SAMPLE = DATA / "focus_1.3_invoice.csv"
# 10 GPUs for 75 hours = 750 GPU-hours at 2.00 USD = 1,500.00 USD
CONTRACT = 'contract "northwind" {\n  currency USD\n  rate 2.00 USD per gpu_hour\n}\n'


def _train_41(tmp_path: Path) -> Path:
    """The sample's rows of run `train-41`, with its header, as a FOCUS file of their own."""
    with SAMPLE.open(newline="") as f:
        rows = list(csv.reader(f))
    header, body = rows[0], rows[1:]
    tags = header.index("Tags")
    keep = [r for r in body if r[tags] and json.loads(r[tags]).get("run") == "train-41"]
    path = tmp_path / "train-41.csv"
    with path.open("w", newline="") as f:
        csv.writer(f).writerows([header, *keep])
    return path


@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_the_correction_is_matched_end_to_end(tmp_path: Path, suffix: str) -> None:
    invoice = _train_41(tmp_path)
    with invoice.open(newline="") as f:
        amounts = [Decimal(r["BilledCost"]) for r in csv.DictReader(f)]
    # 1,500.00 − 1,500.00 + 1,200.00 + 300.00 = 1,500.00 finally billed, in four lines
    assert amounts == [Decimal("1500.00"), Decimal("-1500.00"), Decimal("1200.00"),
                       Decimal("300.00")]  # fmt: skip
    imported = tmp_path / f"invoice{suffix}"
    result = run("import", "focus", invoice, "--run-from", "tag:run", "--out", imported)
    assert result.exit_code == 0, result.output
    assert "mapped        4  charge lines" in result.output  # none of them a credit
    jobs = tmp_path / "jobs.parquet"
    trace_frame(
        [
            started("train-41", "a1", "2025-02-10T00:00:00Z", gpus=10, capacity="spot"),
            released("train-41", "a1", "2025-02-13T03:00:00Z"),  # 75 hours later
        ]
    ).write_parquet(jobs)
    (tmp_path / "c.spot").write_text(CONTRACT)
    out = run("reconcile", tmp_path / "c.spot", jobs, imported, "--format", "json")
    no_traceback(out)
    assert out.exit_code == 0, out.output
    doc = json.loads(out.output)
    (c,) = doc["contracts"]
    # February: 1,500.00 expected and invoiced; March: −1,500.00 + 1,200.00 + 300.00 = 0.00
    # invoiced where nothing is expected — both matched, nothing credited
    assert [(x["month"], x["kind"], x["status"], x["invoiced"]) for x in c["lines"]] == [
        ("2025-02", "charge", "matched", "1500.00"),
        ("2025-03", "charge", "matched", "0.00"),
    ]
    assert c["invoice_lines"]["reversal"] == {"amount": "-1500.00", "count": 1}
    assert c["invoice_lines"]["credit"] == {"amount": "0.00", "count": 0}
    totals = c["totals"]
    assert (totals["invoiced"], totals["expected"]) == ("1500.00", "1500.00")
    assert (totals["credits_owed"], totals["charges_over_billed"]) == ("0.00", "0.00")
