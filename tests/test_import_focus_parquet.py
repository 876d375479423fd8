"""`import focus` of a Parquet export: the same events as the CSV it was made from, event for
event; every Parquet type an exporter writes (decimals, floats, integers, timestamps with and
without a zone, dictionary-encoded text, maps, records, nulls) read exactly; and files that are
cut short, not FOCUS, or hold a column of the wrong type refused with a clear message (exit 2,
no traceback)."""

from __future__ import annotations

import csv
from datetime import UTC, date, datetime, timedelta, timezone
from decimal import Decimal
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from support.cli import no_traceback, run

from contractlang.errors import ContractlangError
from contractlang.importers import import_focus
from contractlang.importers.result import ImportResult

DATA = Path(__file__).resolve().parent / "data"
SAMPLES = [DATA / "focus_1.2_invoice.csv", DATA / "focus_1.3_invoice.csv"]
MONEY = {"BilledCost", "EffectiveCost", "ListCost", "PricingQuantity"}
TIMES = {"BillingPeriodStart", "BillingPeriodEnd", "ChargePeriodStart", "ChargePeriodEnd"}


def parquet_of(src: Path, out: Path, *, zone: str | None = "UTC", scale: int = 10) -> Path:
    """The CSV ``src`` as a Parquet file, as an exporter writes one: money as
    ``decimal128(38, scale)``, times as timestamps (in ``zone``, or without one), the
    ChargeCategory dictionary-encoded, empty values null."""
    with src.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    arrays = {}
    for c in rows[0]:
        values = [r[c] or None for r in rows]
        if c in MONEY:
            arrays[c] = pa.array(
                [None if v is None else Decimal(v) for v in values], pa.decimal128(38, scale)
            )
        elif c in TIMES:
            ts = [None if v is None else datetime.fromisoformat(v) for v in values]
            if zone is None:  # the wall-clock time in UTC, written without its zone
                ts = [None if t is None else t.astimezone(UTC).replace(tzinfo=None) for t in ts]
            arrays[c] = pa.array(ts, pa.timestamp("ms", tz=zone))
        elif c == "ChargeCategory":
            arrays[c] = pa.array(values).dictionary_encode()
        else:
            arrays[c] = pa.array(values, pa.string())
    pq.write_table(pa.table(arrays), out)
    return out


def same_events(a: ImportResult, b: ImportResult) -> None:
    assert a.events.schema == b.events.schema
    assert a.events.rows() == b.events.rows()
    assert a.report.mapped == b.report.mapped
    assert a.report.rejects == b.report.rejects


@pytest.mark.parametrize("src", SAMPLES, ids=["1.2", "1.3"])
def test_a_parquet_export_imports_as_the_csv_it_was_made_from(tmp_path: Path, src: Path) -> None:
    from_csv = import_focus(src, "tag:run")
    for k, (zone, scale) in enumerate([("UTC", 10), ("America/New_York", 2), ("UTC", 18)]):
        path = parquet_of(src, tmp_path / f"invoice{k}.parquet", zone=zone, scale=scale)
        from_parquet = import_focus(path, "tag:run")
        same_events(from_csv, from_parquet)
        assert from_parquet.report.notes == from_csv.report.notes
        # the figures are exact, at the places the column is written with
        facts = dict(from_parquet.report.facts)
        assert Decimal(facts["reversals (1 row)"]) == Decimal("-1500.00")
        assert facts["reversals (1 row)"] == "-1500." + "0" * scale
    # times without a zone are read as UTC, as the CSV's text without an offset would be
    naive = import_focus(parquet_of(src, tmp_path / "naive.parquet", zone=None), "tag:run")
    same_events(from_csv, naive)
    [i032] = [n for n in naive.report.notes if n.code == "I032"]
    assert i032.count == from_csv.report.rows_read  # every row: its times have no offset
    assert i032.examples[0] == (1, "`ChargePeriodStart` 2025-02-10T00:00:00")


def test_every_type_an_exporter_writes(tmp_path: Path) -> None:
    ist = timezone(timedelta(hours=5, minutes=30))
    path = tmp_path / "typed.parquet"
    pq.write_table(
        pa.table(
            {
                # AWS writes money as doubles: each read as its shortest text, noted
                "billedcost": pa.array([2.1, 0.30000000000000004, None, float("nan"), 1e-7]),
                "ChargeCategory": pa.array(
                    ["Usage", "usage", "Usage", "Usage", "Credit"]
                ).dictionary_encode(),
                # a fixed offset polars cannot name: the instants are UTC all the same
                "ChargePeriodStart": pa.array(
                    [datetime(2025, 3, 1, 5, 30, tzinfo=ist)] * 5, pa.timestamp("us", tz="+05:30")
                ),
                "ChargePeriodEnd": pa.array([date(2025, 3, 2), None, None, None, None]),
                "EffectiveCost": pa.array([1, None, 3, 4, -5], pa.int64()),
                "ListCost": pa.array([Decimal("1.5")] * 5, pa.decimal128(20, 1)),
                "Tags": pa.array(
                    [[("run", "r1")], [("team", "x"), ("run", "r2")], None, [], [("run", "r3")]],
                    pa.map_(pa.string(), pa.string()),
                ),
                "ContractApplied": pa.array(
                    [{"ContractCommitmentId": "c1", "ContractCommitmentAppliedCost": 2.1}]
                    + [None] * 4
                ),
                "ResourceId": pa.array([7001, 7002, None, None, None], pa.int64()),
            }
        ),
        path,
    )
    r = import_focus(path, "tag:run")
    ev = r.events.sort("source_row")
    midnight_ist = datetime(2025, 3, 1, tzinfo=UTC)
    assert ev.select("run_id", "event", "amount", "ts", "effective_cost", "resource_id").rows() == [
        ("r1", "charge", Decimal("2.1"), midnight_ist, Decimal(1), "7001"),
        ("r2", "charge", Decimal("0.30000000000000004"), midnight_ist, None, "7002"),
        ("r3", "credit", Decimal("1E-7"), midnight_ist, Decimal(-5), None),
    ]
    assert ev.get_column("list_cost").to_list() == [Decimal("1.5")] * 3
    ends = ev.get_column("charge_period_end").to_list()
    assert ends == [datetime(2025, 3, 2, tzinfo=UTC), None, None]
    assert ev.get_column("contract_applied")[0] == (
        '{"ContractCommitmentId":"c1","ContractCommitmentAppliedCost":2.1}'
    )
    assert [(j.row, j.code, j.reason) for j in r.report.rejects] == [
        (3, "I020", "`BilledCost` is null; FOCUS requires a value"),
        (4, "I021", "`BilledCost` `NaN` is not a decimal number"),
    ]
    # a Parquet row has no text: its rejected record is the values read, as CSV
    assert r.report.rejects[1].record == "NaN,Usage,2025-03-01T00:00:00+00:00,,4,1.5,{},,"
    notes = {n.code: n for n in r.report.notes}
    assert notes["I045"].examples == (
        (1, "`BilledCost` 2.1"),
        (2, "`BilledCost` 0.30000000000000004"),
        (5, "`BilledCost` 1e-7"),
    )
    assert notes["I040"].examples == ((2, "`ChargeCategory` `usage` → `Usage`"),)
    # a date is its midnight, without an offset: read as UTC
    assert notes["I032"].examples == ((1, "`ChargePeriodEnd` 2025-03-02T00:00:00"),)


def test_a_parquet_file_is_found_by_its_content(tmp_path: Path) -> None:
    src = SAMPLES[1]
    named_csv = parquet_of(src, tmp_path / "invoice.csv")
    same_events(import_focus(src, "tag:run"), import_focus(named_csv, "tag:run"))
    named_parquet = tmp_path / "text.parquet"
    named_parquet.write_bytes(src.read_bytes())
    same_events(import_focus(src, "tag:run"), import_focus(named_parquet, "tag:run"))


def test_parquet_files_that_cannot_be_imported(tmp_path: Path) -> None:
    whole = parquet_of(SAMPLES[1], tmp_path / "whole.parquet").read_bytes()
    cut = tmp_path / "cut.parquet"
    cut.write_bytes(whole[: len(whole) // 2])
    damaged = tmp_path / "damaged.parquet"
    damaged.write_bytes(whole[:8] + b"\0" * 64 + whole[-8:])
    not_focus = tmp_path / "costs.parquet"
    pl.DataFrame(
        {"Cost": [1.5], "ChargeCategory": ["Usage"], "ChargePeriodStart": ["2025-03-01"],
         "Tags": ['{"run": "r"}']}
    ).write_parquet(not_focus)  # fmt: skip
    listed = tmp_path / "listed.parquet"
    pl.DataFrame(
        {"BilledCost": [[1.5]], "ChargeCategory": ["Usage"], "ChargePeriodStart": ["2025-03-01"],
         "Tags": ['{"run": "r"}']}
    ).write_parquet(listed)  # fmt: skip
    # a time as whole numbers, an amount as a map: named as the trace's messages name them
    counted_time = tmp_path / "epoch.parquet"
    pl.DataFrame(
        {"BilledCost": [1.5], "ChargeCategory": ["Usage"], "ChargePeriodStart": [1_740_787_200],
         "Tags": ['{"run": "r"}']}
    ).write_parquet(counted_time)  # fmt: skip
    mapped = tmp_path / "mapped.parquet"
    pq.write_table(
        pa.table(
            {"BilledCost": pa.array([[("a", 1.5)]], pa.map_(pa.string(), pa.float64())),
             "ChargeCategory": ["Usage"], "ChargePeriodStart": ["2025-03-01"],
             "Tags": ['{"run": "r"}']}
        ),
        mapped,
    )  # fmt: skip
    wide = tmp_path / "wide.parquet"
    pq.write_table(
        pa.table(
            {"BilledCost": pa.array([Decimal(1)], pa.decimal256(50, 2)),
             "ChargeCategory": ["Usage"], "ChargePeriodStart": ["2025-03-01"],
             "Tags": ['{"run": "r"}']}
        ),
        wide,
    )  # fmt: skip
    cases = [
        (cut, "I003", "is a Parquet file that cannot be read: it does not end with `PAR1` "
         "(cut short?)"),
        (damaged, "I003", "is a Parquet file that cannot be read: "),
        (not_focus, "I002", "the export has no `BilledCost` column"),
        (listed, "I003", "cannot be imported: its column `BilledCost` holds lists, not decimal "
         "numbers"),
        (counted_time, "I003", "cannot be imported: its column `ChargePeriodStart` holds "
         "integers, not timestamps"),
        (mapped, "I003", "cannot be imported: its column `BilledCost` holds maps, not decimal "
         "numbers"),
        (wide, "I003", "is a Parquet file that cannot be read: "),
    ]  # fmt: skip
    for path, code, message in cases:
        with pytest.raises(ContractlangError) as exc:
            import_focus(path, "tag:run")
        [d] = exc.value.diagnostics
        assert (d.code, message in d.message) == (code, True), d.message
        # only a file that does not end with its footer is said to be cut short
        assert ("PAR1" in (d.help or "")) == (path == cut), d.help
        out = tmp_path / "out.parquet"
        result = run("import", "focus", path, "--run-from", "tag:run", "--out", out)
        no_traceback(result)
        assert result.exit_code == 2, result.output
        assert f"error[{code}]" in result.output
        assert not out.exists()


REAL = Path(__file__).resolve().parents[1].parent / "shared" / "realdata" / "focus"
SAMPLE = REAL / "focus_sample.csv"


@pytest.mark.realdata
@pytest.mark.skipif(not SAMPLE.exists(), reason="../shared/realdata is absent")
@pytest.mark.parametrize("money", [pa.decimal128(38, 15), pa.float64()], ids=["decimal", "double"])
def test_the_real_sample_as_parquet_imports_as_the_csv(tmp_path: Path, money: pa.DataType) -> None:
    with SAMPLE.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    amounts = {"BilledCost", "EffectiveCost", "ListCost", "PricingQuantity", "ConsumedQuantity",
               "ContractedCost", "ContractedUnitPrice", "ListUnitPrice"}  # fmt: skip
    arrays = {}
    for c in rows[0]:
        values = [None if r[c] in ("", "NULL") else r[c] for r in rows]
        if c in amounts:
            kind = Decimal if isinstance(money, pa.Decimal128Type) else float
            arrays[c] = pa.array([None if v is None else kind(v) for v in values], money)
        elif c in TIMES:  # the sample's times have no offset: written without a zone
            ts = [None if v is None else datetime.fromisoformat(v) for v in values]
            arrays[c] = pa.array(ts, pa.timestamp("ms"))
        else:
            arrays[c] = pa.array(values, pa.string())
    path = tmp_path / "sample.parquet"
    pq.write_table(pa.table(arrays), path)
    from_csv = import_focus(SAMPLE, "tag:application")
    from_parquet = import_focus(path, "tag:application")
    same_events(from_csv, from_parquet)
    floats = [n.count for n in from_parquet.report.notes if n.code == "I045"]
    assert floats == ([] if isinstance(money, pa.Decimal128Type) else [len(rows)])
