"""`import focus`: a FOCUS billing export as invoice lines — the real sample's own sums
reproduced exactly, and every quirk of real exports (NULL, empty strings, mixed case, JSON in
Tags, credits, corrections) on small hand-made files."""

from __future__ import annotations

import csv
import json
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import polars as pl
import pytest

from contractlang.errors import ContractlangError
from contractlang.importers import UNATTRIBUTED, import_focus
from contractlang.importers.result import ImportResult

REAL = Path(__file__).resolve().parents[1].parent / "shared" / "realdata" / "focus"
SAMPLE = REAL / "focus_sample.csv"

COLUMNS = [
    "BilledCost",
    "EffectiveCost",
    "ListCost",
    "ChargeCategory",
    "ChargeClass",
    "ChargePeriodStart",
    "ChargePeriodEnd",
    "PricingCategory",
    "ResourceId",
    "Tags",
]


def focus(tmp_path: Path, *rows: dict[str, str], run_from: str = "tag:run") -> ImportResult:
    path = tmp_path / "invoice.csv"
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, COLUMNS, quoting=csv.QUOTE_ALL)
        w.writeheader()
        for r in rows:
            w.writerow({c: r.get(c, "NULL") for c in COLUMNS})
    return import_focus(path, run_from)


def line(billed: str, category: str = "Usage", **kw: str) -> dict[str, str]:
    base = {
        "BilledCost": billed,
        "EffectiveCost": billed,
        "ListCost": billed,
        "ChargeCategory": category,
        "ChargePeriodStart": "2025-03-01 00:00:00",
        "ChargePeriodEnd": "2025-03-01 01:00:00",
        "PricingCategory": "Standard",
        "Tags": '{"run": "r1"}',
    }
    return {**base, **kw}


def codes(r: ImportResult) -> list[tuple[int, str]]:
    return [(j.row, j.code) for j in r.report.rejects]


def rows(r: ImportResult, *cols: str) -> list[tuple[object, ...]]:
    return r.events.sort("source_row").select(*cols).rows()


# --------------------------------------------------------------------------- the real sample

needs_sample = pytest.mark.skipif(not SAMPLE.exists(), reason="../shared/realdata is absent")


@pytest.fixture(scope="module")
def sample() -> ImportResult:
    return import_focus(SAMPLE, "tag:application")


@pytest.fixture(scope="module")
def sample_rows() -> list[dict[str, str]]:
    with SAMPLE.open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


@pytest.mark.realdata
@needs_sample
def test_the_sample_reproduces_its_own_billed_cost_by_category(
    sample: ImportResult, sample_rows: list[dict[str, str]]
) -> None:
    expected: dict[str, Decimal] = {}
    for r in sample_rows:
        expected[r["ChargeCategory"]] = expected.get(r["ChargeCategory"], Decimal(0)) + Decimal(
            r["BilledCost"]
        )
    got = {
        cat: Decimal(str(total))
        for cat, total in sample.events.group_by("charge_category")
        .agg(pl.col("amount").sum())
        .rows()
    }
    assert got == expected
    # and the trace, as loaded and validated, holds the same amounts
    loaded = sample.trace.events.select(pl.col("amount").sum()).item()
    assert Decimal(str(loaded)) == sum(expected.values())
    assert sample.report.rows_read == len(sample_rows) == sample.events.height
    assert sample.report.rejects == ()


@pytest.mark.realdata
@needs_sample
def test_the_sample_credits_runs_and_kept_columns(
    sample: ImportResult, sample_rows: list[dict[str, str]]
) -> None:
    credits = [
        i
        for i, r in enumerate(sample_rows, 1)
        if r["ChargeCategory"] == "Credit" or Decimal(r["BilledCost"]) < 0
    ]
    ev = sample.events.sort("source_row")
    assert ev.filter(pl.col("event") == "credit")["source_row"].to_list() == credits

    def app(r: dict[str, str]) -> str | None:
        if r["Tags"] in ("NULL", ""):
            return None
        value = json.loads(r["Tags"]).get("application")
        return str(value) if value is not None else None

    runs = [app(r) or UNATTRIBUTED for r in sample_rows]
    assert ev["run_id"].to_list() == runs
    # EffectiveCost and ListCost kept beside BilledCost, exactly
    for col, src in (("effective_cost", "EffectiveCost"), ("list_cost", "ListCost")):
        total = sum((Decimal(r[src]) for r in sample_rows), Decimal(0))
        assert Decimal(str(ev[col].sum())) == total
    # the Credit row: BilledCost −2.6137 but EffectiveCost −3.0
    credit = ev.filter(pl.col("charge_category") == "Credit").row(0, named=True)
    assert (credit["amount"], credit["effective_cost"]) == (Decimal("-2.6137"), Decimal("-3"))
    # ts is ChargePeriodStart, read as UTC
    first = sample_rows[0]["ChargePeriodStart"]
    assert ev["ts"][0] == datetime.fromisoformat(first).replace(tzinfo=UTC)
    # `Usage-based` is respelled `Usage-Based`
    wrong = sum(1 for r in sample_rows if r["ChargeFrequency"] == "Usage-based")
    assert ev.filter(pl.col("charge_frequency") == "Usage-based").height == 0
    assert {n.code: n.count for n in sample.report.notes}["I040"] == wrong


# --------------------------------------------------------------------------- the quirks


def test_null_and_empty_are_both_null(tmp_path: Path) -> None:
    r = focus(
        tmp_path,
        line("1.00", PricingCategory="NULL", ChargeClass="NULL"),
        line("2.00", PricingCategory="", ChargeClass=""),
    )
    assert rows(r, "pricing_category", "charge_class", "correction") == [
        (None, None, False),
        (None, None, False),
    ]


def test_mixed_case_enums_and_credits(tmp_path: Path) -> None:
    r = focus(
        tmp_path,
        line("10.00", "usage"),
        line("-4.50", "CREDIT"),
        line("-1.25", "Usage"),  # a refund in a Usage row: a credit by its sign
        line("0.80", "Credit"),  # a positive Credit row (a credit taken back): still a credit
        line("3.00", "Adjustment", ChargeClass="correction"),
    )
    assert rows(r, "event", "charge_category", "amount", "correction") == [
        ("charge", "Usage", Decimal("10.00"), False),
        ("credit", "Credit", Decimal("-4.50"), False),
        ("credit", "Usage", Decimal("-1.25"), False),
        ("credit", "Credit", Decimal("0.80"), False),
        ("charge", "Adjustment", Decimal("3.00"), True),
    ]
    assert rows(r, "charge_class")[-1] == ("Correction",)
    facts = dict(r.report.facts)
    # credits: −4.50 − 1.25 + 0.80 = −4.95 over 3 rows; corrections: 3.00 over 1 row
    assert facts["credits (3 rows)"] == "-4.95"
    assert facts["corrections (1 row)"] == "3.00"
    assert [n.code for n in r.report.notes] == ["I032", "I040"]


def test_tags_json_malformed_or_missing_goes_to_unattributed(tmp_path: Path) -> None:
    r = focus(
        tmp_path,
        line("1.00", Tags='{"run": "r1", "team": "ml"}'),
        line("2.00", Tags='{"run": "r1", "team": '),  # broken JSON: reported, not fatal
        line("3.00", Tags='["r1"]'),  # JSON, but not an object
        line("4.00", Tags='{"team": "ml"}'),  # no `run` key
        line("5.00", Tags='{"run": 42}'),  # a number is a key as JSON writes it
        line("6.00", Tags="NULL"),
    )
    assert [x[0] for x in rows(r, "run_id")] == ["r1", UNATTRIBUTED, UNATTRIBUTED,
                                                 UNATTRIBUTED, "42", UNATTRIBUTED]  # fmt: skip
    notes = {n.code: n for n in r.report.notes}
    assert notes["I030"].count == 2
    assert notes["I030"].examples[0][0] == 2
    # `{"run": "r1", "team":` (the blank at the end stripped) is 21 characters: the value is
    # missing at character 22
    assert "not JSON (Expecting value at character 22)" in notes["I030"].examples[0][1]
    assert notes["I031"].count == 4
    # 2.00 + 3.00 + 4.00 + 6.00 = 15.00 went to `unattributed`
    assert dict(r.report.facts)[f"BilledCost of run `{UNATTRIBUTED}`"] == "15.00"
    assert r.report.rejects == ()


def test_run_from_the_resource(tmp_path: Path) -> None:
    r = focus(
        tmp_path,
        line("1.00", ResourceId="i-0abc"),
        line("2.00", ResourceId="NULL"),
        run_from="resource",
    )
    assert [x[0] for x in rows(r, "run_id")] == ["i-0abc", UNATTRIBUTED]


def test_rejected_rows_say_why(tmp_path: Path) -> None:
    r = focus(
        tmp_path,
        line("NULL"),
        line(""),
        line("twelve"),
        line("0.1234567890123456789"),  # 19 places: the trace holds 18 exactly
        line("1.00", "Usag"),
        line("1.00", ChargeClass="Refund"),
        line("1.00", ChargePeriodStart="yesterday"),
        line("1.00", ChargeCategory="NULL"),
    )
    assert codes(r) == [(1, "I020"), (2, "I020"), (3, "I021"), (4, "I021"), (5, "I022"),
                        (6, "I022"), (7, "I015"), (8, "I020")]  # fmt: skip
    reasons = [j.reason for j in r.report.rejects]
    assert reasons[0] == "`BilledCost` is `NULL`; FOCUS requires a value"
    assert reasons[1] == "`BilledCost` is empty; FOCUS requires a value"
    assert reasons[3] == "`BilledCost` `0.1234567890123456789` has more than 18 decimal places"
    assert reasons[4] == "`ChargeCategory` `Usag` is not a FOCUS category (did you mean `Usage`?)"
    assert r.report.accounted
    assert r.events.height == 0


def test_exact_decimals_and_times_with_offsets(tmp_path: Path) -> None:
    r = focus(
        tmp_path,
        # trailing zeros beyond 18 places carry nothing
        line("0.100000000000000000000", ChargePeriodStart="2025-03-01T05:00:00Z"),
        line("1E-3", ChargePeriodStart="2025-03-01T06:00:00+01:00"),
        line("7.00", ListCost="n/a", PricingCategory="spot"),
    )
    assert rows(r, "amount", "ts")[:2] == [
        (Decimal("0.1"), datetime(2025, 3, 1, 5, tzinfo=UTC)),
        (Decimal("0.001"), datetime(2025, 3, 1, 5, tzinfo=UTC)),
    ]
    # an unreadable ListCost is left empty and noted; an unknown PricingCategory kept as written
    assert rows(r, "list_cost", "pricing_category")[2] == (None, "spot")
    assert {n.code for n in r.report.notes} >= {"I036", "I039"}


def test_files_that_are_not_focus(tmp_path: Path) -> None:
    path = tmp_path / "x.csv"
    path.write_text("a,b\n1,2\n")
    with pytest.raises(ContractlangError) as exc:
        import_focus(path, "resource")
    assert exc.value.diagnostics[0].code == "I003"
    path.write_text("BilledCost,ChargeCategory,ChargePeriodStart,Tag\n1,Usage,2025-03-01\n")
    with pytest.raises(ContractlangError) as exc:
        import_focus(path, "tag:run")
    [d] = exc.value.diagnostics
    assert (d.code, d.help) == ("I002", "did you mean `Tag`?")
    assert "`Tags` column (needed by `--run-from`)" in d.message
    path.write_text("BilledCost,ChargeCategory,ChargePeriodStart,ResourceId\n1,Usage\n")
    r = import_focus(path, "resource")
    assert codes(r) == [(1, "I010")]


def test_a_tag_no_row_has_is_an_error_with_the_closest(tmp_path: Path) -> None:
    # every line would go to `unattributed`: a wrong key, not an invoice
    for tags, hint in (
        ('{"Run": "r1"}', "did you mean `Run`?"),
        ('{"team": "ml", "owner": "x"}', "the rows' tags are `owner`, `team`"),
        ("NULL", "no row has tags at all: try `--run-from resource`"),
    ):
        with pytest.raises(ContractlangError) as exc:
            focus(tmp_path, line("1.00", Tags=tags), run_from="tag:run")
        [d] = exc.value.diagnostics
        assert (d.code, d.help) == ("I002", hint)
        assert d.message == (
            "no row's `Tags` has the key `run` (`--run-from tag:run`): every line would have no run"
        )


def test_amounts_are_ascii_decimals(tmp_path: Path) -> None:
    # `٣` is a digit to Python's `Decimal` (it reads it as 3): not to an invoice
    r = focus(tmp_path, line("٣"), line("1.٥"), line("²"), line("3.00", ListCost="٣"))
    assert codes(r) == [(1, "I021"), (2, "I021"), (3, "I021")]
    assert r.report.rejects[0].reason == "`BilledCost` `٣` is not a decimal number"
    assert rows(r, "amount", "list_cost") == [(Decimal("3.00"), None)]
    assert {n.code for n in r.report.notes} >= {"I039"}


def test_the_report_s_sums_are_exact_however_large(tmp_path: Path) -> None:
    big = "12345678901234567890.123456789012345678"  # 38 digits: the most an amount holds
    r = focus(tmp_path, line(big), line(big), line("-" + big, "Credit"))
    facts = dict(r.report.facts)
    # 2 × big, digit by digit (Python's default context would round it to 28 digits)
    assert facts["BilledCost of Usage (2 rows)"] == "24691357802469135780.246913578024691356"
    assert facts["BilledCost of Credit (1 row)"] == "-" + big
    assert facts["BilledCost of every row mapped"] == big


def test_number_tags_name_their_run_by_value_and_a_key_named_twice_is_no_key(
    tmp_path: Path,
) -> None:
    r = focus(
        tmp_path,
        # pandas writes a column of IDs with gaps as floats: 7001.0 is job 7001
        line("1.00", Tags='{"run": 7001.0}'),
        line("2.00", Tags='{"run": 7.001e3}'),
        line("3.00", Tags='{"run": 0.50}'),  # not whole: as written
        # JSON does not say which of two values wins (Python keeps the last, others the first)
        line("4.00", Tags='{"run": "a", "team": "x", "run": "b"}'),
        line("5.00", Tags='{"run": "a", "run": "a"}'),  # the same twice: no doubt
        line("6.00", Tags='{"run": NaN}'),  # not JSON
    )
    assert [x[0] for x in rows(r, "run_id")] == ["7001", "7001", "0.50", UNATTRIBUTED, "a",
                                                 UNATTRIBUTED]  # fmt: skip
    notes = {n.code: n for n in r.report.notes}
    assert notes["I041"].examples == ((4, "`a`, `b`"),)
    assert notes["I030"].examples[0][0] == 6
    assert "`NaN` is not a JSON number" in notes["I030"].examples[0][1]


def test_trailing_zeros_beyond_18_places_are_dropped_not_rounded(tmp_path: Path) -> None:
    # 38 digits and a trailing zero: normalising in Python's default context rounds to 28
    r = focus(
        tmp_path,
        line("12345678901234567890.1234567890123456780"),
        # the end of the period is in year 10000 in UTC: noted, left empty
        line("1.00", ChargePeriodEnd="9999-12-31T23:00:00-05:00"),
    )
    assert rows(r, "amount") == [
        (Decimal("12345678901234567890.123456789012345678"),),
        (Decimal("1.00"),),
    ]
    notes = {n.code: n for n in r.report.notes}
    assert notes["I039"].examples == (
        (2, "`ChargePeriodEnd` `9999-12-31T23:00:00-05:00` is out of range"),
    )


def test_tags_nested_too_deeply_go_to_unattributed_not_a_crash(tmp_path: Path) -> None:
    deep = '{"run": ' + "[" * 100_000 + "]" * 100_000 + "}"
    r = focus(tmp_path, line("1.00", Tags='{"run": "r1"}'), line("2.00", Tags=deep))
    assert [x[0] for x in rows(r, "run_id")] == ["r1", UNATTRIBUTED]
    notes = {n.code: n for n in r.report.notes}
    assert notes["I030"].examples[0][0] == 2
    assert (
        "not JSON that can be read (arrays or objects nested too deeply)"
        in (notes["I030"].examples[0][1])
    )
