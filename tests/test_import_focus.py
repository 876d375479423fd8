"""`import focus`: a FOCUS billing export as invoice lines — the real sample's own sums
reproduced exactly, the FOCUS 1.2 and 1.3 samples of ``tests/data`` (a correction reversed and
rebilled, the billing period, a tax, an adjustment and a credit line), and every quirk of real
exports (NULL, empty strings, mixed case, JSON in Tags, reversals, corrections, a last line
without a line break, numbers too large to keep) on small hand-made files."""

from __future__ import annotations

import csv
import decimal
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
    # the category decides the kind: the one Credit row is the one credit; the Usage rows with
    # a negative BilledCost (Azure writes them) are reversals — negative charges, not credits
    credits = [i for i, r in enumerate(sample_rows, 1) if r["ChargeCategory"] == "Credit"]
    reversals = [
        i
        for i, r in enumerate(sample_rows, 1)
        if r["ChargeCategory"] in ("Usage", "Purchase") and Decimal(r["BilledCost"]) < 0
    ]
    ev = sample.events.sort("source_row")
    assert ev.filter(pl.col("event") == "credit")["source_row"].to_list() == credits
    assert ev.filter(pl.col("reversal"))["source_row"].to_list() == reversals
    assert len(reversals) == 12  # the page's figure (docs/import.md)
    assert set(ev.filter(pl.col("reversal"))["event"].to_list()) == {"charge"}
    facts = dict(sample.report.facts)
    total = sum((Decimal(sample_rows[i - 1]["BilledCost"]) for i in reversals), Decimal(0))
    assert Decimal(facts["reversals (12 rows)"]) == total
    mapped = {m.label: m.rows for m in sample.report.mapped}
    kinds = {"Usage": "charge", "Purchase": "charge", "Credit": "credit"}
    kinds |= {"Adjustment": "adjustment", "Tax": "tax"}
    expected: dict[str, int] = {}
    for r in sample_rows:
        label = f"{kinds[r['ChargeCategory']]} lines"
        expected[label] = expected.get(label, 0) + 1
    assert mapped == expected
    # the billing period is kept, in UTC
    period = datetime.fromisoformat(sample_rows[0]["BillingPeriodStart"]).replace(tzinfo=UTC)
    assert ev["billing_period_start"][0] == period

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


def test_the_category_decides_the_kind_never_the_sign(tmp_path: Path) -> None:
    r = focus(
        tmp_path,
        line("10.00", "usage"),
        line("-4.50", "CREDIT"),
        line("-1.25", "Usage"),  # a provider reversing usage: a negative charge, not a credit
        line("0.80", "Credit"),  # a positive Credit row (a credit taken back): still a credit
        line("3.00", "Adjustment", ChargeClass="correction"),
        line("-2.00", "Purchase"),  # a purchase refunded: a reversal too
        line("-0.50", "Tax"),  # a tax refund: a tax line
        line("-0.00", "Usage"),  # zero is not below zero: no reversal
    )
    assert rows(r, "event", "charge_category", "amount", "correction", "reversal") == [
        ("charge", "Usage", Decimal("10.00"), False, False),
        ("credit", "Credit", Decimal("-4.50"), False, False),
        ("charge", "Usage", Decimal("-1.25"), False, True),
        ("credit", "Credit", Decimal("0.80"), False, False),
        ("adjustment", "Adjustment", Decimal("3.00"), True, False),
        ("charge", "Purchase", Decimal("-2.00"), False, True),
        ("tax", "Tax", Decimal("-0.50"), False, False),
        ("charge", "Usage", Decimal("0"), False, False),
    ]
    assert rows(r, "charge_class")[4] == ("Correction",)
    facts = dict(r.report.facts)
    # credits: −4.50 + 0.80 = −3.70 over 2 rows; reversals: −1.25 − 2.00 = −3.25 over 2 rows;
    # corrections: 3.00 over 1 row
    assert facts["credits (2 rows)"] == "-3.70"
    assert facts["reversals (2 rows)"] == "-3.25"
    assert facts["corrections (1 row)"] == "3.00"
    # the lines by kind, in the order each kind first appears: 10.00, −1.25, −2.00, −0.00
    # are charges; −4.50, 0.80 credits
    assert [(m.label, m.rows) for m in r.report.mapped] == [
        ("charge lines", 4),
        ("credit lines", 2),
        ("adjustment lines", 1),
        ("tax lines", 1),
    ]
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


def test_tags_escaping_a_lone_surrogate_go_to_unattributed_not_a_crash(tmp_path: Path) -> None:
    # `"\ud800"` is JSON, but reads as half of a character: as the run key it was exit 3 (no
    # column holds it); a surrogate pair is one character, and a run key like any other
    r = focus(
        tmp_path,
        line("1.00", Tags='{"run": "r\\ud800"}'),
        line("2.00", Tags='{"run": "r1", "team": "\\udc00"}'),
        line("3.00", Tags='{"run": "r\\ud83d\\ude00"}'),
    )
    assert [x[0] for x in rows(r, "run_id")] == [UNATTRIBUTED, UNATTRIBUTED, "r\U0001f600"]
    notes = {n.code: n for n in r.report.notes}
    assert [row for row, _ in notes["I030"].examples] == [1, 2]
    detail = notes["I030"].examples[0][1]
    assert detail.endswith("JSON, but not Unicode text (a `\\u` escape of a lone surrogate)")


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


# --------------------------------------------------------------------------- FOCUS 1.2 and 1.3

DATA = Path(__file__).resolve().parent / "data"
SAMPLES = [DATA / "focus_1.2_invoice.csv", DATA / "focus_1.3_invoice.csv"]
#: The kind of line each ChargeCategory is, as the FOCUS specification defines the categories
#: (written here, not imported, so that the importer's own table is checked).
KIND = {"Usage": "charge", "Purchase": "charge", "Credit": "credit", "Adjustment": "adjustment"}
KIND["Tax"] = "tax"


def utc(text: str) -> datetime | None:
    return datetime.fromisoformat(text).astimezone(UTC) if text else None


@pytest.mark.parametrize("path", SAMPLES, ids=["1.2", "1.3"])
def test_the_focus_samples_map_row_by_row(path: Path) -> None:
    with path.open(newline="", encoding="utf-8") as fh:
        src = list(csv.DictReader(fh))
    r = import_focus(path, "tag:run")
    assert r.report.rejects == ()
    assert r.report.accounted
    expected = []
    for r_ in src:
        amount = Decimal(r_["BilledCost"])
        category = r_["ChargeCategory"]
        run = json.loads(r_["Tags"])["run"] if r_["Tags"] else UNATTRIBUTED
        expected.append(
            (
                run,
                KIND[category],
                amount,
                category in ("Usage", "Purchase") and amount < 0,  # a reversal
                r_["ChargeClass"] == "Correction",
                utc(r_["ChargePeriodStart"]),
                utc(r_["BillingPeriodStart"]),
                utc(r_["BillingPeriodEnd"]),
                r_["InvoiceId"],
                r_.get("ServiceProviderName") or r_.get("ProviderName"),
                r_["CommitmentDiscountId"] or None,
                r_["CommitmentDiscountStatus"] or None,
            )
        )
    cols = ("run_id", "event", "amount", "reversal", "correction", "ts", "billing_period_start",
            "billing_period_end", "invoice_id", "provider", "commitment_discount_id",
            "commitment_discount_status")  # fmt: skip
    assert rows(r, *cols) == expected
    kinds = {e[1] for e in expected}
    assert kinds == {"charge", "credit", "adjustment", "tax"}  # one of every kind
    if "ContractApplied" in src[0]:  # FOCUS 1.3: the JSON text kept as written
        assert [x[0] for x in rows(r, "contract_applied")] == [
            r_["ContractApplied"] or None for r_ in src
        ]
        assert "ProviderName" not in src[0]  # the provider came from ServiceProviderName


@pytest.mark.parametrize("path", SAMPLES, ids=["1.2", "1.3"])
def test_a_correction_reversed_and_rebilled_nets_to_the_rebill(path: Path) -> None:
    # run train-41: 1500.00 on the February invoice; on the March invoice, −1500.00 reversed
    # and 1200.00 + 300.00 rebilled over two resources, all for usage in February
    r = import_focus(path, "tag:run")
    run = r.events.filter(pl.col("run_id") == "train-41").sort("source_row")
    assert run.get_column("event").to_list() == ["charge"] * 4  # no credit anywhere
    assert run.get_column("reversal").to_list() == [False, True, False, False]
    assert run.get_column("correction").to_list() == [False, True, True, True]
    # 1500.00 − 1500.00 + 1200.00 + 300.00 = 1500.00: the usage billed once, not over- and
    # under-billed by 1500.00
    net = sum((Decimal(str(x)) for x in run.get_column("amount").to_list()), Decimal(0))
    assert net == Decimal("1500.00")
    february = datetime(2025, 2, 10, tzinfo=UTC)
    assert run.get_column("ts").to_list() == [february] * 4
    periods = run.get_column("billing_period_start").to_list()
    assert periods == [datetime(2025, 2, 1, tzinfo=UTC)] + [datetime(2025, 3, 1, tzinfo=UTC)] * 3
    assert run.get_column("invoice_id").to_list() == ["INV-2025-02"] + ["INV-2025-03"] * 3
    facts = dict(r.report.facts)
    assert facts["reversals (1 row)"] == "-1500.00"
    # corrections: −1500.00 + 1200.00 + 300.00 = 0.00 over 3 rows
    assert facts["corrections (3 rows)"] == "0.00"
    assert facts["credits (1 row)"] == "-75.00"
    # nothing calls the reversal a credit
    assert not any("credit" in label and "1,500" in label for label, _ in r.report.facts)


def test_the_billing_period_and_the_provider(tmp_path: Path) -> None:
    path = tmp_path / "inv.csv"
    tags = '"{""run"": ""r""}"'
    path.write_text(
        "BilledCost,ChargeCategory,ChargePeriodStart,BillingPeriodStart,BillingPeriodEnd,"
        "ServiceProviderName,ProviderName,CommitmentDiscountStatus,Tags\n"
        "1,Usage,2025-03-01T00:00:00Z,2025-03-01 00:00:00,2025-04-01T02:00:00+02:00,A,A,used,"
        f"{tags}\n"
        f"2,Usage,2025-03-01T00:00:00Z,March,,A,B,Spent,{tags}\n"
        f"3,Usage,2025-03-01T00:00:00Z,2025-03-01T00:00:00Z,9999-12-31T23:00:00-05:00,NULL,C,NULL,"
        f"{tags}\n"
    )
    r = import_focus(path, "tag:run")
    march, april = datetime(2025, 3, 1, tzinfo=UTC), datetime(2025, 4, 1, tzinfo=UTC)
    assert rows(r, "billing_period_start", "billing_period_end", "provider",
                "commitment_discount_status") == [
        (march, april, "A", "Used"),  # no offset: read as UTC (I032); +02:00 converted
        (None, None, "A", "Spent"),  # not a time: left empty (I039); a status kept (I036)
        (march, None, "C", None),  # year 10000 in UTC: out of range (I039)
    ]  # fmt: skip
    notes = {n.code: n for n in r.report.notes}
    assert notes["I032"].examples == ((1, "`BillingPeriodStart` 2025-03-01 00:00:00"),)
    assert notes["I039"].examples == (
        (2, "`BillingPeriodStart` `March` is not an ISO 8601 time"),
        (3, "`BillingPeriodEnd` `9999-12-31T23:00:00-05:00` is out of range"),
    )
    assert notes["I036"].examples == ((2, "`CommitmentDiscountStatus` `Spent`"),)
    assert notes["I040"].examples == ((1, "`CommitmentDiscountStatus` `used` → `Used`"),)
    # ServiceProviderName (1.3) wins over ProviderName; where they differ the row says so
    assert notes["I046"].examples == ((2, "`ServiceProviderName` `A`, `ProviderName` `B`"),)


# --------------------------------------------------------------------------- the last line


def test_a_last_line_without_a_line_break_is_imported_when_whole(tmp_path: Path) -> None:
    path = tmp_path / "inv.csv"
    head = "BilledCost,ChargeCategory,ChargePeriodStart,Tags\n"
    good = '1.00,Usage,2025-03-01T00:00:00Z,"{""run"": ""r1""}"'
    path.write_text(head + good + "\n" + good.replace("1.00", "2.00"))
    r = import_focus(path, "tag:run")
    assert [x[0] for x in rows(r, "amount")] == [Decimal("1.00"), Decimal("2.00")]
    [note] = r.report.notes
    # the note names the last line, 3, and the value it ends with, the last row's Tags
    assert (note.code, note.count, note.examples) == (
        "I044",
        1,
        ((2, 'line 3 ends `{"run": "r1"}`'),),
    )
    # a last record with a quoted value closed and an empty last field is whole too
    path.write_text(head + good + "\n" + '3.00,Usage,2025-03-01T00:00:00Z,"x",')
    r = import_focus(path, "tag:run")
    assert [(row, code) for row, code in ((j.row, j.code) for j in r.report.rejects)] == [
        (2, "I010")  # 5 fields, the header 4: rejected as any such row, not I003
    ]
    for text, message in (
        (head + good + "\n" + "2.00,Usage,2025-03-0",
         "ends mid-line, on line 3 (cut short?): its last record has 3 fields, the header 4"),
        (head + good + "\n" + '2.00,Usage,2025-03-01T00:00:00Z,"{""run"": ""r',
         "ends inside a quoted value that opens on line 3 (cut short, or a quote never "
         "closed?)"),
        (head + '2.00,Usage,2025-03-01T00:00:00Z,"{""run"":\n""r2""',
         "ends inside a quoted value that opens on line 2"),
    ):  # fmt: skip
        path.write_text(text)
        with pytest.raises(ContractlangError) as exc:
            import_focus(path, "tag:run")
        [d] = exc.value.diagnostics
        assert d.code == "I003"
        assert message in d.message, d.message


# --------------------------------------------------------------------------- numbers


def test_numbers_too_large_to_keep_are_rejected_on_their_row(tmp_path: Path) -> None:
    huge_tag = "1" * 5000  # more digits than Python reads as an integer (4,300)
    r = focus(
        tmp_path,
        line("1e1000000"),  # decimal.Overflow in a context: here, too large
        line("-1E+1000000"),
        line("1e-1000000"),
        line("1.00", EffectiveCost="1e1000000", ListCost="-9" * 1),
        line("2.00", Tags='{"run": ' + huge_tag + "}"),
        line("3.00"),
    )
    assert codes(r) == [(1, "I021"), (2, "I021"), (3, "I021")]
    assert [j.reason for j in r.report.rejects] == [
        "`BilledCost` `1e1000000` is too large to keep exactly",
        "`BilledCost` `-1E+1000000` is too large to keep exactly",
        "`BilledCost` `1e-1000000` has more than 18 decimal places",
    ]
    assert rows(r, "effective_cost", "run_id") == [
        (None, "r1"),  # unreadable: left empty (I039)
        (Decimal("2.00"), UNATTRIBUTED),  # its tags cannot be read (I030)
        (Decimal("3.00"), "r1"),
    ]
    notes = {n.code: n for n in r.report.notes}
    assert notes["I039"].examples == (
        (4, "`EffectiveCost` `1e1000000` is too large to keep exactly"),
    )
    assert notes["I030"].examples[0][0] == 5
    assert "a number in it has too many digits" in notes["I030"].examples[0][1]


def test_negative_amounts_off_the_quick_path_keep_their_sign(tmp_path: Path) -> None:
    # more than 18 places or 20 whole digits as written, or an exponent: read by the slow path
    kept = [
        "-0.1000000000000000000000",  # 22 places written, 1 kept
        "-00000000000000000000012.5",  # 23 whole digits written, 2 kept
        "-12345678901234567890.1234567890123456780",  # 38 digits and a trailing zero
        "-1.5E+3",
        "-7E-18",
        "-1.5000000000000000000000E+1",  # an exponent and 22 places: trailing zeros dropped
        "-2.50000000000000000000E-1",
        "-.50000000000000000000",
    ]
    too_big = ["-123456789012345678901.5", "-0.0000000000000000001", "-1E+21"]
    r = focus(tmp_path, *(line(x, Tags='{"run": "r1"}') for x in kept + too_big))
    # the expected values, read independently: Python's Decimal of the text, exact
    assert [x[0] for x in rows(r, "amount")] == [Decimal(x) for x in kept]
    assert all(Decimal(x) < 0 for x in kept)
    assert [j.reason for j in r.report.rejects] == [
        "`BilledCost` `-123456789012345678901.5` is too large to keep exactly",
        "`BilledCost` `-0.0000000000000000001` has more than 18 decimal places",
        "`BilledCost` `-1E+21` is too large to keep exactly",
    ]
    with decimal.localcontext(prec=100):  # exact: the default context keeps 28 digits
        total = sum((Decimal(x) for x in kept), Decimal(0))
    assert Decimal(dict(r.report.facts)["reversals (8 rows)"]) == total
