"""The vectorised FOCUS reader against the row-by-row one it replaced
(``tests/support/focus_rowwise.py``, kept as the reference): on the real sample and on generated
messy files, the same events (every column, type and value), the same rejects (row, code,
reason, record as written), notes, counts and figures — or the same error. And each of the CSV
table's readers (quick, full, exact) reads the same table as Python's ``csv``."""

from __future__ import annotations

import csv
import io
import random
from pathlib import Path

import pytest
from support.focus_rowwise import import_focus_rowwise

from contractlang.errors import ContractlangError
from contractlang.importers import csv_table as ct
from contractlang.importers import import_focus

REAL = Path(__file__).resolve().parents[1].parent / "shared" / "realdata" / "focus"
SAMPLE = REAL / "focus_sample.csv"


def outcome(fn: object, path: Path, run_from: str) -> object:
    """What an import gives: its events, rows as plain values, and its report; or its error's
    diagnostics."""
    try:
        r = fn(path, run_from)  # type: ignore[operator]
    except ContractlangError as exc:
        return ("error", [(d.code, d.message, d.help, d.span.line) for d in exc.diagnostics])
    return ("ok", r.events.schema, r.events.rows(), r.report)


def same(path: Path, run_from: str) -> None:
    new = outcome(import_focus, path, run_from)
    old = outcome(import_focus_rowwise, path, run_from)
    assert new == old, path.read_text(encoding="utf-8", errors="replace")[:2000]


@pytest.mark.realdata
@pytest.mark.skipif(not SAMPLE.exists(), reason="../shared/realdata is absent")
@pytest.mark.parametrize("run_from", ["tag:application", "resource", "tag:environment"])
def test_the_real_sample_reads_as_it_did_row_by_row(run_from: str) -> None:
    same(SAMPLE, run_from)
    assert ct.read_table(SAMPLE, str(SAMPLE)).mode == "quick"


# --------------------------------------------------------------------------- messy files

HEADER = [
    "BilledCost",
    "EffectiveCost",
    "ListCost",
    "ChargeCategory",
    "ChargeClass",
    "ChargePeriodStart",
    "ChargePeriodEnd",
    "PricingCategory",
    "ChargeFrequency",
    "PricingQuantity",
    "BillingCurrency",
    "ResourceId",
    "Tags",
    "Note",
]

AMOUNTS = ["1.00", "-2.5", "0", "-0", "+3", ".5", "7.", "1E-3", "2e2", "1.2.3", "x", "NULL",
           "", "  4.25 ", "0.1234567890123456789", "0.100000000000000000000",
           "12345678901234567890.123456789012345678", "123456789012345678901", "٣", "²",
           "100.0000000000000000000", "-0.000000000000000001", "1e400", "null",
           " NuLl "]  # fmt: skip
CATEGORIES = ["Usage", "usage", "USAGE", "Credit", "credit", "Tax", "Purchase", "Adjustment",
              "Usag", "Uſage", "", "NULL", " Usage ", "Refund"]  # fmt: skip
CLASSES = ["NULL", "", "Correction", "correction", " CORRECTION", "Refund", "null"]
TIMES = ["2025-03-01T00:00:00Z", "2025-03-01 01:00:00", "2025-03-01T02:00:00+01:00",
         "2025-03-01T03:00", "2025-03-01T04:00:00.1234567", "yesterday", "", "NULL",
         "9999-12-31T23:00:00-05:00", "2025-02-30T00:00:00Z", "２０２５-03-01T00:00:00Z",
         "2025-03-01T05:00:00+0530"]  # fmt: skip
PRICING = ["Standard", "standard", "Dynamic", "spot", "", "NULL", "Other", "committed"]
FREQUENCY = ["Usage-Based", "Usage-based", "One-Time", "monthly", "NULL", ""]
TAGS = ['{"run": "r1"}', '{"run": "r2", "team": "ml"}', '{"run": 7001.0}', '{"run": 42}',
        '{"run": "a", "run": "b"}', '{"run": "a", "run": "a"}', '{"team": "x"}', "[1, 2]",
        '{"run": ', "NULL", "", '{"run": NaN}', '{"run": "r,3"}', '{"run": "q""uote"}',
        '{"run": "line\\nbreak"}', '{"run": true}', '{"run": ""}', '{"run": null}',
        '{"run": "' + "long" * 20 + '"}']  # fmt: skip


def _row(rng: random.Random) -> list[str]:
    r = [
        rng.choice(AMOUNTS),
        rng.choice(AMOUNTS),
        rng.choice(AMOUNTS),
        rng.choice(CATEGORIES),
        rng.choice(CLASSES),
        rng.choice(TIMES),
        rng.choice(TIMES),
        rng.choice(PRICING),
        rng.choice(FREQUENCY),
        rng.choice(AMOUNTS),
        rng.choice(["USD", "EUR", "NULL"]),
        rng.choice(["i-1", "i-2", "NULL", "", "i,3"]),
        rng.choice(TAGS),
        rng.choice(["", "a note", 'with "quotes"', "multi\nline", "comma, inside"]),
    ]
    # mostly well-formed rows, so that most reach the later checks
    if rng.random() < 0.5:
        r[0], r[3], r[5] = rng.choice(["1.00", "-2.5", "3"]), "Usage", "2025-03-01T00:00:00Z"
    return r


def messy(
    rng: random.Random, rows: int, *, eol: str = "\n", multiline: bool = True, longer: bool = True
) -> str:
    """A FOCUS-like CSV with every quirk: ragged rows, blank lines, quoting of every kind."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator=eol, quoting=rng.choice([csv.QUOTE_ALL, csv.QUOTE_MINIMAL]))
    w.writerow(HEADER)
    for _ in range(rows):
        r = _row(rng)
        if not multiline:
            r = [v.replace("\n", " ") for v in r]
        roll = rng.random()
        if roll < 0.04:
            r = r[: rng.randrange(1, len(r))]  # fewer fields
        elif roll < 0.07 and longer:
            r = [*r, *rng.choice([[""], ["x"], ["", ""]])]  # more fields (a trailing comma)
        elif roll < 0.10:
            out.write(eol)  # a blank line
            continue
        elif roll < 0.11:
            out.write("   " + eol)  # a line of blanks: one field
            continue
        w.writerow(r)
    return out.getvalue()


@pytest.mark.parametrize("seed", range(12))
def test_messy_files_read_as_they_did_row_by_row(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    eol = "\r\n" if seed % 3 == 2 else "\n"
    text = messy(rng, 160, eol=eol, multiline=seed % 2 == 0)
    if seed % 5 == 4:  # the last line without its line break: read whole, or cut short
        text = text.removesuffix(eol)
    path = tmp_path / "invoice.csv"
    path.write_bytes(text.encode("utf-8") if seed % 4 else b"\xef\xbb\xbf" + text.encode())
    for run_from in ("tag:run", "resource"):
        same(path, run_from)


def test_every_reader_mode_is_exercised_and_agrees(tmp_path: Path) -> None:
    rng = random.Random(99)
    cases = {
        # one line per record, short rows among them: the quick mode (csv checks the rows whose
        # last value is missing)
        "quick": messy(rng, 200, multiline=False, longer=False),
        # a row with more fields than the header fails polars' quick scan: the full mode
        "full ": messy(rng, 200, multiline=False),
        # records over several lines: the full mode groups lines by their quotes
        "full": messy(rng, 200, multiline=True),
        # a lone carriage return ends a line for csv, not for polars: the exact reader
        "exact": messy(rng, 50, multiline=False).replace("a note", "a\rnote"),
        # no line break at the end: the fast reader, the last record checked with csv
        "quick ": messy(rng, 200, multiline=False, longer=False) + ",".join(["1"] * len(HEADER)),
    }
    for mode, text in cases.items():
        path = tmp_path / f"{mode.strip()}.csv"
        path.write_text(text, encoding="utf-8", newline="")
        table = ct.read_table(path, str(path))
        assert table.mode == mode.strip()
        exact = ct._exact(path, str(path), None)
        assert table.header == exact.header
        assert table.frame.equals(exact.frame), mode
        assert table.unterminated == (exact.frame.height if mode == "quick " else None)
        rows = list(range(1, exact.frame.height + 1))
        assert table.records(rows) == exact.records(rows)
        same(path, "tag:run")


def test_the_quick_mode_hands_over_when_too_many_rows_need_a_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ct, "_MOST_CHECKED", 3)
    path = tmp_path / "x.csv"
    path.write_text(messy(random.Random(5), 120, multiline=False), encoding="utf-8", newline="")
    table = ct.read_table(path, str(path))
    assert table.mode == "full"
    assert table.frame.equals(ct._exact(path, str(path), None).frame)


@pytest.mark.parametrize(
    "text",
    [
        "BilledCost,ChargeCategory,ChargePeriodStart,Tags\n",  # a header and nothing else
        "BilledCost,ChargeCategory,ChargePeriodStart,Tags\n\n\n",  # and blank lines
        "",  # empty
        "\n1,Usage,2025-03-01T00:00:00Z,\n",  # a blank first line: no header
        "BilledCost,ChargeCategory\n1,Usage\n",  # not FOCUS enough
        'BilledCost,ChargeCategory,ChargePeriodStart,Tags\n1,Usage,"2025\n',  # open quote
        "BilledCost,ChargeCategory,ChargePeriodStart,Tags\n1,Usage,2025-03-01",  # cut short
        # no line break at the end, the last record whole: read, and noted (I044)
        'BilledCost,ChargeCategory,ChargePeriodStart,Tags\n1,Usage,2025-03-01T00:00:00Z,"{}"',
        "BilledCost,ChargeCategory,ChargePeriodStart,Tags\n1,Usage,2025-03-01T00:00:00Z,",
        # a last empty field polars drops without a line break after it: csv counts 5
        "BilledCost,ChargeCategory,ChargePeriodStart,Tags\n1,Usage,2025-03-01T00:00:00Z,,",
        "BilledCost,ChargeCategory,ChargePeriodStart,Tags\n\n1,Usage,2025,x\n   ",  # blanks
        'BilledCost,ChargeCategory,ChargePeriodStart,Tags\n1,Usage,2025,"{\n}',  # open quote
        "BilledCost,ChargeCategory,ChargePeriodStart,Tags",  # a header alone, no line break
        'BilledCost,ChargeCategory,ChargePeriodStart,Tags\n1,Us"age,2025-03-01T00:00:00Z,\n',
        "BilledCost,ChargeCategory,ChargePeriodStart,Tags\n1,Usage,2025-03-01T00:00:00Z,\x00\n",
    ],
)
def test_odd_files_fail_or_read_as_they_did(tmp_path: Path, text: str) -> None:
    path = tmp_path / "odd.csv"
    path.write_bytes(text.encode("utf-8"))
    same(path, "tag:run")


def test_unreadable_files_fail_as_they_did(tmp_path: Path) -> None:
    path = tmp_path / "bad.csv"
    head = b"BilledCost,ChargeCategory,ChargePeriodStart,Tags\n"
    for data in (head + b"1,Usage,\xff,\n", "a,b\n".encode("utf-16"), head + b"\x00" * 10):
        path.write_bytes(data)
        same(path, "tag:run")
    same(tmp_path / "missing.csv", "tag:run")
