"""`reconcile`: the bill the contract implies beside the invoice lines — one case per status,
each expected amount computed by hand, the reasons behind them, the totals, the tolerance."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import polars as pl
import pytest
from support.events import at, event, reclaimed, released, started
from support.events import frame as trace_frame

from contractlang.errors import ContractlangError
from contractlang.importers import UNATTRIBUTED
from contractlang.pipeline.language import terms_from_text
from contractlang.reconcile import ContractReconciliation, ReconciledAmount, reconcile
from contractlang.trace import generate_trace

CONTRACT = """\
contract "c" {
  currency USD
  rate 2.00 USD per gpu_hour
  billing increment 1 minute
  promise restart within 15 minutes
  exclude "reclaimed in the first hour" allocation
    when end_reason == reclaimed and runtime < 1 hour
  credit "slow replacement" 10% of charge
    when end_reason == reclaimed and replacement_wait > promised_restart
  cap credits at 30% of gross per run
}
"""
D = "2026-03-02 "


def charge(run: str, alloc: str | None, when: str, amount: str) -> dict[str, Any]:
    return event(run, alloc, when, "charge", amount=Decimal(amount))


def credit(run: str, alloc: str | None, when: str, amount: str) -> dict[str, Any]:
    return event(run, alloc, when, "credit", amount=Decimal(amount))


EVENTS = [
    # r1: 1 GPU × 1 h × 2.00 = 2.00, invoiced 2.00: matched; and a credit nothing explains
    started("r1", "a1", D + "10:00", gpus=1),
    released("r1", "a1", D + "11:00"),
    charge("r1", "a1", D + "11:00", "2.00"),
    credit("r1", None, D + "12:00", "-0.50"),
    # r2: 2 GPUs × 1.5 h × 2.00 = 6.00, invoiced 6.50: over-billed by 0.50
    started("r2", "a1", D + "10:00", gpus=2),
    released("r2", "a1", D + "11:30"),
    charge("r2", "a1", D + "11:30", "6.50"),
    # r3: 30 min 20 s rounds up to 31 min: 4 GPUs × 31/60 h × 2.00 = 4.1333… → 4.13;
    # the provider billed 30 min, 4.00: under-billed by 0.13
    started("r3", "a1", D + "10:00", gpus=4),
    released("r3", "a1", D + "10:30:20"),
    charge("r3", "a1", D + "10:31", "4.00"),
    # r4: 1 GPU × 2 h × 2.00 = 4.00, never invoiced: missing
    started("r4", "a1", D + "10:00", gpus=1),
    released("r4", "a1", D + "12:00"),
    # r5: reclaimed after 42 min: wholly excluded, yet invoiced 8 × 0.7 h × 2.00 = 11.20
    started("r5", "a1", D + "10:00", gpus=8),
    reclaimed("r5", "a1", D + "10:42"),
    charge("r5", "a1", D + "10:42", "11.20"),
    # r6: a1 8 × 2 h × 2.00 = 32.00, reclaimed, replaced 30 min later (> 15 min): credit 10%
    # of 32.00 = 3.20; a2 8 × 1 h × 2.00 = 16.00. Charges invoiced right, the credit not at all
    started("r6", "a1", D + "10:00", gpus=8),
    reclaimed("r6", "a1", D + "12:00"),
    started("r6", "a2", D + "12:30", gpus=8),
    released("r6", "a2", D + "13:30"),
    charge("r6", "a1", D + "12:00", "32.00"),
    charge("r6", "a2", D + "13:30", "16.00"),
    # r7: as r6, but the invoice credits 1.00 of the 3.20 owed: over-billed by 2.20
    started("r7", "a1", D + "10:00", gpus=8),
    reclaimed("r7", "a1", D + "12:00"),
    started("r7", "a2", D + "12:30", gpus=8),
    released("r7", "a2", D + "13:30"),
    charge("r7", "a1", D + "12:00", "32.00"),
    charge("r7", "a2", D + "13:30", "16.00"),
    credit("r7", None, "2026-03-31 00:00", "-1.00"),
    # r8: run-level lines, as FOCUS gives: a1 and a2 each 1 GPU × 1 h × 2.00 = 2.00, invoiced
    # together as 4.00 in March (matched); a line in April, when nothing ran: unexpected
    started("r8", "a1", D + "10:00", gpus=1),
    released("r8", "a1", D + "11:00"),
    started("r8", "a2", D + "11:00", gpus=1),
    released("r8", "a2", D + "12:00"),
    charge("r8", None, "2026-03-02 00:00", "4.00"),
    charge("r8", None, "2026-04-01 00:00", "1.00"),
]
# allocation ids are unique across the trace: `a1` of run r2 is `r2-a1`
for _e in EVENTS:
    if _e["alloc_id"] is not None:
        _e["alloc_id"] = f"{_e['run_id']}-{_e['alloc_id']}"


@pytest.fixture(scope="module")
def rec() -> ContractReconciliation:
    (only,) = reconcile(terms_from_text(CONTRACT, "c.spot"), trace_frame(EVENTS)).contracts
    return only


def find(rec: ContractReconciliation, run: str, alloc: str | None, kind: str) -> ReconciledAmount:
    """The comparison of ``kind`` for allocation ``alloc`` of ``run`` (None: the run's)."""
    full = None if alloc is None else f"{run}-{alloc}"
    found = [c for c in rec.lines if (c.run_id, c.alloc_id, c.kind) == (run, full, kind)]
    assert len(found) == 1, (run, alloc, kind, found)
    return found[0]


def amounts(c: ReconciledAmount) -> tuple[str, Decimal | None, Decimal | None, Decimal]:
    return c.status, c.expected, c.invoiced, c.difference


def test_matched(rec: ContractReconciliation) -> None:
    c = find(rec, "r1", "a1", "charge")
    assert amounts(c) == ("matched", Decimal("2.00"), Decimal("2.00"), 0)
    assert (c.term, c.line) == ("rate 2.00 USD per gpu_hour", 3)


def test_over_billed(rec: ContractReconciliation) -> None:
    # 6.50 − 6.00 = 0.50
    c = find(rec, "r2", "a1", "charge")
    assert amounts(c) == ("over_billed", Decimal("6.00"), Decimal("6.50"), Decimal("0.50"))


def test_under_billed_with_how_the_charge_was_computed(rec: ContractReconciliation) -> None:
    # 4.00 − 4.13 = −0.13
    c = find(rec, "r3", "a1", "charge")
    assert amounts(c) == ("under_billed", Decimal("4.13"), Decimal("4.00"), Decimal("-0.13"))
    # a discrepancy in a charge says how the charge was computed: 30 min 20 s rounded up to
    # the minute is 31 min
    [how] = c.reasons
    assert (how.kind, how.term, how.alloc_id) == ("charge", "rate 2.00 USD per gpu_hour", "r3-a1")
    facts = dict(how.facts)
    assert facts["gpus"] == 4
    assert facts["runtime"].total_seconds() == 30 * 60 + 20
    assert facts["billable_time"].total_seconds() == 31 * 60
    assert facts["price per GPU-hour"] == Decimal("2.00")
    # a matched charge needs no reason
    assert find(rec, "r1", "a1", "charge").reasons == ()


def test_missing(rec: ContractReconciliation) -> None:
    # 0 − 4.00 = −4.00: the provider did not bill what the contract says is owed
    c = find(rec, "r4", "a1", "charge")
    assert amounts(c) == ("missing", Decimal("4.00"), None, Decimal("-4.00"))
    assert c.invoice_rows == ()


def test_unexpected_with_the_exclusion_and_its_facts(rec: ContractReconciliation) -> None:
    c = find(rec, "r5", "a1", "charge")
    assert amounts(c) == ("unexpected", None, Decimal("11.20"), Decimal("11.20"))
    [why] = c.reasons
    assert (why.kind, why.term, why.line) == ("exclusion", "reclaimed in the first hour", 6)
    assert why.condition == "end_reason == reclaimed and runtime < 1 hour"
    facts = dict(why.facts)
    assert facts["end_reason"] == "reclaimed"
    assert facts["runtime"].total_seconds() == 42 * 60
    # 8 GPUs × 42 min = 5.6 GPU-hours not charged
    assert why.gpu_hours == Decimal("5.600000")
    # exclusion lines are reasons, never comparisons of their own
    assert {x.kind for x in rec.lines} == {"charge", "credit"}


def test_credits_missing_and_short(rec: ContractReconciliation) -> None:
    missing = find(rec, "r6", None, "credit")
    # expected −3.20 (10% of 32.00), nothing invoiced: difference 0 − (−3.20) = 3.20
    assert amounts(missing) == ("missing", Decimal("-3.20"), None, Decimal("3.20"))
    [why] = missing.reasons
    assert (why.kind, why.term, why.alloc_id) == ("credit", "slow replacement", "r6-a1")
    assert dict(why.facts)["replacement_wait"].total_seconds() == 30 * 60
    short = find(rec, "r7", None, "credit")
    # −1.00 − (−3.20) = 2.20 over-billed: less credit than the terms give
    assert amounts(short) == ("over_billed", Decimal("-3.20"), Decimal("-1.00"), Decimal("2.20"))
    # the charges of r6 and r7 match, allocation by allocation
    for run in ("r6", "r7"):
        for alloc, owed in (("a1", "32.00"), ("a2", "16.00")):
            c = find(rec, run, alloc, "charge")
            assert amounts(c) == ("matched", Decimal(owed), Decimal(owed), 0)


def test_an_unexplained_credit_is_unexpected(rec: ContractReconciliation) -> None:
    c = find(rec, "r1", None, "credit")
    # −0.50 invoiced, nothing expected: under-billed direction, 0.50
    assert amounts(c) == ("unexpected", None, Decimal("-0.50"), Decimal("-0.50"))


def test_run_level_lines_by_month(rec: ContractReconciliation) -> None:
    march = [c for c in rec.lines if c.run_id == "r8" and c.month == "2026-03"]
    # a1 2.00 + a2 2.00 = 4.00 against the one run-level line of 4.00
    assert [amounts(c) for c in march] == [("matched", Decimal("4.00"), Decimal("4.00"), 0)]
    assert march[0].alloc_id is None
    assert [b.alloc_id for b in march[0].basis] == ["r8-a1", "r8-a2"]
    april = [c for c in rec.lines if c.run_id == "r8" and c.month == "2026-04"]
    assert [amounts(c) for c in april] == [("unexpected", None, Decimal("1.00"), Decimal("1.00"))]
    # the allocations are not also reported missing: the run-level line covers them
    assert not [c for c in rec.lines if c.run_id == "r8" and c.alloc_id is not None]


def test_the_summary_by_hand(rec: ContractReconciliation) -> None:
    s = {k: (v.count, v.amount) for k, v in rec.summary().items()}
    assert s == {
        # r1, r6 a1 a2, r7 a1 a2, r8 March: all exact
        "matched": (6, Decimal(0)),
        # r2 0.50 + r7 credit 2.20 = 2.70
        "over_billed": (2, Decimal("2.70")),
        # r3 0.13
        "under_billed": (1, Decimal("0.13")),
        # |4.00| (r4) + |−3.20| (r6 credit) = 7.20
        "missing": (2, Decimal("7.20")),
        # 11.20 (r5) + |−0.50| (r1 credit) + 1.00 (r8 April) = 12.70
        "unexpected": (3, Decimal("12.70")),
    }


def test_the_months_and_the_claims_by_hand(rec: ContractReconciliation) -> None:
    march, april = rec.months()
    # expected: 2.00 + 6.00 + 4.13 + 4.00 + (32 + 16 − 3.20) × 2 + 4.00 = 109.73
    # invoiced: 2.00 − 0.50 + 6.50 + 4.00 + 11.20 + 48.00 + 48.00 − 1.00 + 4.00 = 122.20
    # over: 0.50 + 11.20 + 3.20 + 2.20 = 17.10; under: 0.50 + 0.13 + 4.00 = 4.63
    assert (march.month, march.expected, march.invoiced) == (
        "2026-03",
        Decimal("109.73"),
        Decimal("122.20"),
    )
    assert (march.over_billed, march.under_billed) == (Decimal("17.10"), Decimal("4.63"))
    assert (april.expected, april.invoiced, april.over_billed) == (0, Decimal("1.00"), 1)
    # charges beyond the terms: 0.50 + 11.20 + 1.00 = 12.70; credits owed: 3.20 + 2.20 = 5.40
    assert rec.claims() == (Decimal("12.70"), Decimal("5.40"))
    # credits due: −3.20 × 2 = −6.40; credited: −0.50 − 1.00 = −1.50
    assert rec.credits() == (Decimal("-6.40"), Decimal("-1.50"))


def test_every_ledger_line_is_compared_once(rec: ContractReconciliation) -> None:
    net = rec.contract.money(rec.contract.totals.net_minor)
    assert sum((c.expected or 0 for c in rec.lines), Decimal(0)) == net
    invoiced = sum(
        (Decimal(e["amount"]) for e in EVENTS if e["event"] in ("charge", "credit")), Decimal(0)
    )
    assert sum((c.invoiced or 0 for c in rec.lines), Decimal(0)) == invoiced


def test_the_tolerance_turns_small_differences_into_matches() -> None:
    (r,) = reconcile(
        terms_from_text(CONTRACT, "c.spot"), trace_frame(EVENTS), tolerance=Decimal("0.50")
    ).contracts
    # |0.50| ≤ 0.50 and |−0.13| ≤ 0.50 now match; the difference is still shown, exactly
    c = find(r, "r2", "a1", "charge")
    assert (c.status, c.difference) == ("matched", Decimal("0.50"))
    assert find(r, "r3", "a1", "charge").status == "matched"
    assert r.summary()["matched"].amount == Decimal("0.63")
    # missing and unexpected stay what they are
    assert find(r, "r4", "a1", "charge").status == "missing"


def test_no_invoice_lines_at_all_is_every_charge_missing() -> None:
    bare = [e for e in EVENTS if e["source"] != "invoice"]
    result = reconcile(terms_from_text(CONTRACT, "c.spot"), trace_frame(bare))
    (r,) = result.contracts
    assert {c.status for c in r.lines} == {"missing"}
    assert result.invoice_lines == 0
    assert result.has_discrepancy


def test_a_clean_invoice_has_no_discrepancy() -> None:
    events = [
        started("r1", "a1", D + "10:00", gpus=1),
        released("r1", "a1", D + "11:00"),
        charge("r1", "a1", D + "11:00", "2.00"),
    ]
    result = reconcile(terms_from_text(CONTRACT, "c.spot"), trace_frame(events))
    assert not result.has_discrepancy


def test_an_invoice_in_another_currency_is_r001() -> None:
    events = [
        started("r1", "a1", D + "10:00", gpus=1),
        released("r1", "a1", D + "11:00"),
        {**charge("r1", None, D + "11:00", "2.00"), "billing_currency": "EUR"},
    ]
    with pytest.raises(ContractlangError) as exc:
        reconcile(terms_from_text(CONTRACT, "c.spot"), trace_frame(events))
    [d] = exc.value.diagnostics
    assert d.code == "R001"
    assert d.span.line == 3
    assert d.message == "invoice line in `EUR`, but contract `c` bills in USD"


def test_unattributed_lines_say_so() -> None:
    events = [
        started("r1", "a1", D + "10:00", gpus=1),
        released("r1", "a1", D + "11:00"),
        charge(UNATTRIBUTED, None, D + "00:00", "15.00"),
    ]
    (r,) = reconcile(terms_from_text(CONTRACT, "c.spot"), trace_frame(events)).contracts
    c = find(r, UNATTRIBUTED, None, "charge")
    assert c.status == "unexpected"
    assert [x.term for x in c.reasons] == ["no run key on the invoice line"]


def test_caps_are_reasons_of_the_credit_they_cut() -> None:
    spot = CONTRACT.replace("10% of charge", "50% of charge")
    events = [
        started("r1", "a1", D + "10:00", gpus=8),
        reclaimed("r1", "a1", D + "12:00"),
        started("r1", "a2", D + "12:30", gpus=1),
        released("r1", "a2", D + "13:30"),
    ]
    (r,) = reconcile(terms_from_text(spot, "c.spot"), trace_frame(events)).contracts
    c = find(r, "r1", None, "credit")
    # credit 50% of 32.00 = 16.00, cut to 30% of the gross 32.00 + 2.00 = 34.00: 10.20;
    # the cap line gives back 16.00 − 10.20 = 5.80, so −16.00 + 5.80 = −10.20 is owed
    assert c.expected == Decimal("-10.20")
    assert [(b.kind, b.amount) for b in c.basis] == [
        ("credit", Decimal("-16.00")),
        ("cap", Decimal("5.80")),
    ]
    assert [x.kind for x in c.reasons] == ["credit", "cap"]
    assert c.reasons[1].term == "cap credits at 30% of gross per run"


def test_a_generated_trace_reconciles_allocation_by_allocation() -> None:
    spot = """\
contract "g" {
  currency USD
  rate trace.price per gpu_hour when capacity == spot
  rate 4.25 USD per gpu_hour when sku == "H100-80G"
  rate 3.00 USD per gpu_hour
}
"""
    # the generator invoices every allocation right; the invoice here is wrong on purpose: one
    # charge in 3 a cent over, one in 5 two cents under, one in 7 not invoiced at all
    generated = generate_trace(30, seed=4).with_row_index("_i")
    charge_line = (pl.col("event") == "charge").cum_sum()
    trace = (
        generated.with_columns(_k=pl.when(pl.col("event") == "charge").then(charge_line))
        .filter((pl.col("_k") % 7 != 0) | pl.col("_k").is_null())
        .with_columns(
            amount=pl.when(pl.col("_k") % 3 == 0)
            .then(pl.col("amount") + Decimal("0.01"))
            .when(pl.col("_k") % 5 == 0)
            .then(pl.col("amount") - Decimal("0.02"))
            .otherwise(pl.col("amount"))
        )
        .drop("_i", "_k")
    )
    (r,) = reconcile(terms_from_text(spot, "g.spot"), trace).contracts
    invoice = trace.filter(pl.col("source") == "invoice")
    statuses = {c.status for c in r.lines if c.kind == "charge"}
    assert statuses == {"matched", "over_billed", "under_billed", "missing"}
    # every ledger line in exactly one comparison, every invoice line in exactly one
    net = r.contract.money(r.contract.totals.net_minor)
    assert sum((c.expected or 0 for c in r.lines), Decimal(0)) == net
    assert sum((c.invoiced or 0 for c in r.lines), Decimal(0)) == sum(
        invoice["amount"].to_list(), Decimal(0)
    )
    rows = sorted(n for c in r.lines for n in c.invoice_rows)
    assert len(rows) == invoice.height == len(set(rows))
    # the generator invoices every allocation: each charge comparison names its allocation
    charges = [c for c in r.lines if c.kind == "charge"]
    assert charges
    assert all(c.alloc_id is not None for c in charges)
    # each allocation's charge recomputed from the raw events, in integer cents: the first rate
    # whose condition holds (the market price on a spot start, else 4.25 for an H100, else
    # 3.00) × GPUs × runtime rounded up to the second (the default increment) ÷ 3600 s,
    # rounded half up; then the status from the invoice's own charge lines for it
    ev = trace.sort("ts")
    starts = {
        r["alloc_id"]: r for r in ev.filter(pl.col("event") == "started").iter_rows(named=True)
    }
    ends = ev.filter(pl.col("event").is_in(["released", "reclaimed", "failed"]))
    end_at = dict(ends.select("alloc_id", "ts").iter_rows())
    billed: dict[str, Decimal] = {}
    for a, amount in (
        invoice.filter(pl.col("event") == "charge").select("alloc_id", "amount").rows()
    ):
        billed[a] = billed.get(a, Decimal(0)) + amount
    by_alloc = {c.alloc_id: c for c in charges}
    assert set(by_alloc) == set(starts)
    for a, start in starts.items():
        if start["capacity"] == "spot" and start["price"] is not None:
            cents_per_hour = int(start["price"] * 100)
        else:
            cents_per_hour = 425 if start["sku"] == "H100-80G" else 300
        runtime = end_at[a] - start["ts"]
        seconds = -(-(runtime.days * 86_400_000_000 + runtime.seconds * 1_000_000
                      + runtime.microseconds) // 1_000_000)  # fmt: skip
        num, den = cents_per_hour * start["gpus"] * seconds, 3600
        cents = (2 * num + den) // (2 * den)
        expected = Decimal(cents).scaleb(-2)
        c = by_alloc[a]
        assert c.expected == expected, a
        invoiced = billed.get(a)
        assert c.invoiced == invoiced, a
        if invoiced is None:
            status = "missing"
        else:
            cents_billed = int(invoiced * 100)
            status = ("matched", "over_billed", "under_billed")[
                (cents_billed > cents) + 2 * (cents_billed < cents)
            ]
        assert c.status == status, a


def test_an_allocation_with_its_own_line_is_not_also_in_the_run_level_comparison() -> None:
    events = [
        # a1 and a2: 1 GPU × 1 h × 2.00 = 2.00 each; a1 is invoiced on its own line (2.00),
        # the run-level line of 2.50 can only be for a2: over-billed by 0.50, not 2.00 + 2.00
        started("r1", "a1", D + "10:00", gpus=1),
        released("r1", "a1", D + "11:00"),
        started("r1", "a2", D + "10:00", gpus=1),
        released("r1", "a2", D + "11:00"),
        charge("r1", "a1", D + "11:00", "2.00"),
        charge("r1", None, D + "00:00", "2.50"),
    ]
    (r,) = reconcile(terms_from_text(CONTRACT, "c.spot"), trace_frame(events)).contracts
    assert [(c.alloc_id, c.status, c.expected, c.invoiced) for c in r.lines] == [
        ("a1", "matched", Decimal("2.00"), Decimal("2.00")),
        (None, "over_billed", Decimal("2.00"), Decimal("2.50")),
    ]
    assert [b.alloc_id for b in r.lines[1].basis] == ["a2"]


BIG = "12345678901234567890.123456789012345678"  # 38 digits: the most an amount holds


def test_invoice_sums_are_exact_however_large() -> None:
    events = [
        # r1: 1 GPU × 1 h × 2.00 = 2.00 owed; two run-level lines of 9 × 10¹⁹ invoiced. Polars'
        # grouped sum of Decimal(38, 18) wraps past 10²⁰ (it gave −1.6 × 10²⁰); Python's default
        # decimal context rounds past 28 digits
        started("r1", "a1", D + "10:00", gpus=1),
        released("r1", "a1", D + "11:00"),
        charge("r1", None, D + "00:00", "90000000000000000000"),
        charge("r1", None, D + "01:00", "90000000000000000000"),
        # r2: the same charge, owed 2.00, invoiced as two lines of 38 digits each
        started("r2", "r2-a1", D + "10:00", gpus=1),
        released("r2", "r2-a1", D + "11:00"),
        charge("r2", None, D + "00:00", BIG),
        charge("r2", None, D + "01:00", BIG),
    ]
    (r,) = reconcile(terms_from_text(CONTRACT, "c.spot"), trace_frame(events)).contracts
    # the sums in integers of 10⁻¹⁸: 9e19 + 9e19 = 1.8e20; BIG + BIG = 2 × BIG
    twice = Decimal(f"{2 * int(BIG.replace('.', ''))}e-18")
    assert str(twice) == "24691357802469135780.246913578024691356"
    assert [(c.run_id, c.expected, c.invoiced) for c in r.lines] == [
        ("r1", Decimal("2.00"), Decimal("180000000000000000000")),
        ("r2", Decimal("2.00"), twice),
    ]
    # the differences and totals: 1.8e20 − 2.00 and 2 × BIG − 2.00, every digit kept
    assert r.lines[1].difference == Decimal("24691357802469135778.246913578024691356")
    total = r.total()
    # 180000000000000000000 + 24691357802469135780.246913578024691356 invoiced, 4.00 owed
    assert total.invoiced == Decimal("204691357802469135780.246913578024691356")
    assert total.over_billed == Decimal("204691357802469135776.246913578024691356")
    assert r.summary()["over_billed"].amount == total.over_billed


# ------------------------------------------------------------------ net amounts and the month


def invoice(run: str, alloc: str | None, when: str, kind: str, amount: str, **extra: Any) -> Any:
    """An invoice line of any kind (``charge``, ``credit``, ``adjustment``, ``tax``), with extra
    columns as ``import focus`` writes them (``billing_period_start``, ``invoice_id``, …)."""
    return event(run, alloc, when, kind, amount=Decimal(amount), **extra)


def test_charges_are_compared_net_of_reversals_and_adjustments_and_tax_is_not_compared() -> None:
    events = [
        # r1: 1 GPU × 10 h × 2.00 = 20.00, billed run-level in March: 25.00, reversed (−25.00),
        # billed again 19.00, adjusted +1.00: 25.00 − 25.00 + 19.00 + 1.00 = 20.00, matched
        started("r1", "a1", D + "08:00", gpus=1),
        released("r1", "a1", D + "18:00"),
        invoice("r1", None, D + "00:00", "charge", "25.00"),
        invoice("r1", None, D + "00:00", "charge", "-25.00"),
        invoice("r1", None, D + "00:00", "charge", "19.00"),
        invoice("r1", None, D + "00:00", "adjustment", "1.00"),
        # a tax line of 3.40: reported, never compared
        invoice("r1", None, D + "00:00", "tax", "3.40"),
    ]
    result = reconcile(terms_from_text(CONTRACT, "c.spot"), trace_frame(events))
    (r,) = result.contracts
    (c,) = r.lines
    assert (c.kind, c.alloc_id, c.month) == ("charge", None, "2026-03")
    assert amounts(c) == ("matched", Decimal("20.00"), Decimal("20.00"), 0)
    # the net's parts: 25.00 + 19.00 = 44.00 in 2 charges, −25.00 in 1 reversal, 1.00 in 1
    # adjustment; the tax line is in no comparison
    assert [(x.kind, x.count, x.amount) for x in c.invoiced_lines] == [
        ("charge", 2, Decimal("44.00")),
        ("reversal", 1, Decimal("-25.00")),
        ("adjustment", 1, Decimal("1.00")),
    ]
    assert [x.term for x in c.reasons] == ["net of 1 reversal and 1 adjustment"]
    assert c.invoice_rows == (3, 4, 5, 6)  # the tax line, row 7, is not compared
    assert compared_once(r, events)
    # the reversal is not a credit: no credit comparison, no credit invoiced
    assert r.credits() == (0, 0)
    tax = r.invoice_lines("tax")
    assert (tax.count, tax.amount) == (1, Decimal("3.40"))
    # 5 invoice lines read, 4 compared; the totals leave the tax out: 20.00 invoiced
    assert result.invoice_lines == 5
    assert r.total().invoiced == Decimal("20.00")
    assert not result.has_discrepancy


def compared_once(r: ContractReconciliation, events: list[dict[str, Any]]) -> bool:
    """Every invoice line but the tax lines is in exactly one comparison (rows count from 1)."""
    rows = sorted(n for x in r.lines for n in x.invoice_rows)
    lines = [k for k, e in enumerate(events, start=1) if e["source"] == "invoice"]
    return rows == [k for k in lines if events[k - 1]["event"] != "tax"]


def test_an_adjustment_nets_where_a_charge_line_like_it_would() -> None:
    events = [
        # a1: 2 GPUs × 1.5 h × 2.00 = 6.00, invoiced on its own line 6.00 and adjusted on a
        # line of its own −0.50: 6.00 − 0.50 = 5.50, under-billed by 0.50
        started("r1", "a1", D + "10:00", gpus=2),
        released("r1", "a1", D + "11:30"),
        invoice("r1", "a1", D + "11:30", "charge", "6.00"),
        invoice("r1", "a1", D + "11:30", "adjustment", "-0.50"),
        # a run-level adjustment of +0.80: with the run's run-level lines of its month — there
        # are none, and a1 has lines of its own, so nothing is expected there: unexpected
        invoice("r1", None, D + "00:00", "adjustment", "0.80"),
    ]
    (r,) = reconcile(terms_from_text(CONTRACT, "c.spot"), trace_frame(events)).contracts
    own, run_level = r.lines
    assert own.alloc_id == "a1"
    assert amounts(own) == ("under_billed", Decimal("6.00"), Decimal("5.50"), Decimal("-0.50"))
    assert run_level.alloc_id is None
    assert amounts(run_level) == ("unexpected", None, Decimal("0.80"), Decimal("0.80"))
    # the run's charges netted: 0.80 over − 0.50 under = 0.30 to claim; nothing of credits,
    # nothing owed to the provider
    assert r.claims() == (Decimal("0.30"), 0)
    assert r.owed_to_provider() == 0
    assert compared_once(r, events)


def test_a_credit_line_of_positive_amount_is_a_charge_never_a_credit_owed() -> None:
    events = [
        # r6 as in EVENTS: a1 8 × 2 h × 2.00 = 32.00 reclaimed, replaced 30 min later (> 15
        # min): credit 10% of 32.00 = 3.20; a2 8 × 1 h × 2.00 = 16.00. Charges and the credit
        # invoiced right; and a "credit" of +1.00: a charge under another name
        started("r6", "a1", D + "10:00", gpus=8),
        reclaimed("r6", "a1", D + "12:00"),
        started("r6", "a2", D + "12:30", gpus=8),
        released("r6", "a2", D + "13:30"),
        invoice("r6", "a1", D + "12:00", "charge", "32.00"),
        invoice("r6", "a2", D + "13:30", "charge", "16.00"),
        invoice("r6", None, D + "14:00", "credit", "-3.20"),
        invoice("r6", None, D + "14:00", "credit", "1.00"),
    ]
    result = reconcile(terms_from_text(CONTRACT, "c.spot"), trace_frame(events))
    (r,) = result.contracts
    credit = find(r, "r6", None, "credit")
    # the credit the terms give, −3.20, against the credit line of −3.20 only: matched
    assert amounts(credit) == ("matched", Decimal("-3.20"), Decimal("-3.20"), 0)
    # the +1.00 is compared with the charges of its run and month: a1 and a2 have lines of
    # their own, so nothing is expected there: over-billed by 1.00
    [positive] = [x for x in r.lines if x.kind == "charge" and x.alloc_id is None]
    assert amounts(positive) == ("unexpected", None, Decimal("1.00"), Decimal("1.00"))
    assert [(x.kind, x.count) for x in positive.invoiced_lines] == [("positive_credit", 1)]
    assert [x.term for x in positive.reasons] == [
        "1 credit line of positive amount counted as a charge (W801)"
    ]
    # charges beyond the terms 1.00; credit owed by the terms 0 (it was 1.00: −3.20 + 1.00 =
    # −2.20 invoiced against −3.20 owed); the credits invoiced are the −3.20 alone
    assert r.claims() == (Decimal("1.00"), 0)
    assert r.credits() == (Decimal("-3.20"), Decimal("-3.20"))
    assert compared_once(r, events)
    [w] = result.warnings
    assert (w.code, w.span.line) == ("W801", 8)
    assert w.message == (
        "credit line of positive amount `1.00`: counted with the charges, not as a credit"
    )


# a contract that expects 10 GPUs × 75 h × 2.00 = 1,500.00 of run r1, all in March 2026
CORRECTED = [
    started("r1", "a1", "2026-03-02 00:00", gpus=10),
    released("r1", "a1", "2026-03-05 03:00"),
]


def correction(with_periods: bool) -> list[dict[str, Any]]:
    """Usage of 1,500.00 billed on invoice A (March); on invoice B (April) a reversal of it
    and a re-bill split over two resources, 1,200.00 + 300.00, charged in March."""
    march, april = (at(x) for x in ("2026-03-01 00:00", "2026-04-01 00:00"))

    def line(amount: str, period: Any, inv: str, resource: str, fix: bool) -> dict[str, Any]:
        extra = {"billing_period_start": period} if with_periods else {}
        return invoice(
            "r1", None, "2026-03-02 00:00", "charge", amount, invoice_id=inv,
            resource_id=resource, charge_class="Correction" if fix else None,
            correction=fix, reversal=amount.startswith("-"), **extra,
        )  # fmt: skip

    return [
        *CORRECTED,
        line("1500.00", march, "A", "gpu-1", False),
        line("-1500.00", april, "B", "gpu-1", True),
        line("1200.00", april, "B", "gpu-1", True),
        line("300.00", april, "B", "gpu-2", True),
    ]


def test_a_correction_on_a_later_invoice_matches_in_both_months() -> None:
    result = reconcile(terms_from_text(CONTRACT, "c.spot"), trace_frame(correction(True)))
    (r,) = result.contracts
    # two comparisons, both of charges; never a credit (a reversal is none)
    assert [(x.month, x.kind, x.status) for x in r.lines] == [
        ("2026-03", "charge", "matched"),
        ("2026-04", "charge", "matched"),
    ]
    march, april = r.lines
    # invoice A's line is March's: 1,500.00 expected, 1,500.00 invoiced
    assert (march.month, march.invoice_rows) == ("2026-03", (3,))
    assert amounts(march) == ("matched", Decimal("1500.00"), Decimal("1500.00"), 0)
    # invoice B's three lines are April's, its month, and net to −1,500.00 + 1,200.00 +
    # 300.00 = 0.00 where the contract expects nothing of r1: matched
    assert (april.month, april.invoice_rows) == ("2026-04", (4, 5, 6))
    assert amounts(april) == ("matched", None, Decimal("0.00"), 0)
    assert [(x.kind, x.count, x.amount) for x in april.invoiced_lines] == [
        ("charge", 2, Decimal("1500.00")),
        ("reversal", 1, Decimal("-1500.00")),
    ]
    assert [x.term for x in april.reasons] == [
        "3 lines charged in 2026-03, on the invoice of 2026-04",
        "net of 1 reversal",
    ]
    # no line is a credit; nothing over- or under-billed in any month
    assert all(x.kind == "charge" for x in r.lines)
    assert r.credits() == (0, 0)
    assert [(m.month, m.over_billed, m.under_billed) for m in r.months()] == [
        ("2026-03", 0, 0),
        ("2026-04", 0, 0),
    ]
    assert {x.status for x in r.lines} == {"matched"}
    assert compared_once(r, correction(True))
    assert not result.has_discrepancy
    assert result.checks_out


def test_a_correction_that_changes_the_amount_shows_on_both_invoices() -> None:
    # invoice A billed 1,600.00 for the 1,500.00 owed; invoice B reverses it (−1,600.00)
    # and bills 1,500.00: March is over-billed 1,600.00 − 1,500.00 = 100.00, April gives
    # back −1,600.00 + 1,500.00 = −100.00 where nothing is owed; the two cancel in the net
    events = correction(True)[:-1]
    events[2]["amount"], events[3]["amount"], events[4]["amount"] = (
        Decimal("1600.00"),
        Decimal("-1600.00"),
        Decimal("1500.00"),
    )
    (r,) = reconcile(terms_from_text(CONTRACT, "c.spot"), trace_frame(events)).contracts
    assert [(x.month, *amounts(x)) for x in r.lines] == [
        ("2026-03", "over_billed", Decimal("1500.00"), Decimal("1600.00"), Decimal("100.00")),
        ("2026-04", "unexpected", None, Decimal("-100.00"), Decimal("-100.00")),
    ]
    assert r.lines[1].reasons[0].term == "2 lines charged in 2026-03, on the invoice of 2026-04"
    # each invoice on its own is off by 100.00; the run's lines netted across the months
    # (100.00 − 100.00 = 0.00) leave nothing to claim and nothing owed: the provider has
    # already taken the 100.00 back
    total = r.total()
    assert (total.over_billed, total.under_billed) == (Decimal("100.00"), Decimal("100.00"))
    assert total.invoiced - total.expected == 0
    assert r.claims() == (0, 0)
    assert r.owed_to_provider() == 0


def test_a_charge_billed_late_is_not_claimed() -> None:
    """10 GPUs for 10 hours ending 31 March (100 GPU-hours at 2.00 USD = 200.00, owed in
    March), billed exactly on the April invoice: March's invoice lacks 200.00 and April's has
    200.00 it does not owe, each true of its invoice; netted for the run, 200.00 − 200.00 =
    0.00 is claimed and 0.00 owed."""
    spot = 'contract "c" {\n  currency USD\n  rate 2.00 USD per gpu_hour\n}\n'
    events = [
        started("r1", "a1", "2026-03-31T13:00:00Z", gpus=10),
        released("r1", "a1", "2026-03-31T23:00:00Z"),
        event(
            "r1", None, "2026-03-31T13:00:00Z", "charge", source="invoice",
            amount=Decimal("200.00"), billing_period_start=datetime(2026, 4, 1, tzinfo=UTC),
        ),
    ]  # fmt: skip
    (r,) = reconcile(terms_from_text(spot, "c.spot"), trace_frame(events)).contracts
    assert [(x.month, x.status) for x in r.lines] == [
        ("2026-03", "missing"),
        ("2026-04", "unexpected"),
    ]
    assert r.claims() == (0, 0)
    assert r.owed_to_provider() == 0


def test_a_credit_taken_back_by_a_correction_nets_with_the_credits() -> None:
    """A credit of −75.00 on one invoice and a Credit line of +75.00 flagged a correction on
    the next take the credit back: it nets with the credits (−75.00 + 75.00 = 0.00 credited),
    not counted as a charge (W801); with no credit in the terms every comparison matches."""
    spot = 'contract "c" {\n  currency USD\n  rate 2.00 USD per gpu_hour\n}\n'
    feb, mar = datetime(2026, 2, 1, tzinfo=UTC), datetime(2026, 3, 1, tzinfo=UTC)
    events = [
        started("r1", "a1", "2026-02-10T00:00:00Z", gpus=10),
        released("r1", "a1", "2026-02-10T10:00:00Z"),  # 100 GPU-hours: 200.00
        event(
            "r1", None, "2026-02-10T00:00:00Z", "charge", source="invoice",
            amount=Decimal("200.00"), billing_period_start=feb, correction=False,
        ),
        event(
            "r1", None, "2026-02-10T00:00:00Z", "credit", source="invoice",
            amount=Decimal("-75.00"), billing_period_start=feb, correction=False,
        ),
        event(
            "r1", None, "2026-02-10T00:00:00Z", "credit", source="invoice",
            amount=Decimal("75.00"), billing_period_start=mar, correction=True,
        ),
    ]  # fmt: skip
    result = reconcile(terms_from_text(spot, "c.spot"), trace_frame(events))
    (r,) = result.contracts
    assert {x.status for x in r.lines} == {"matched"}
    assert r.claims() == (0, 0)
    assert r.credits() == (0, 0)
    assert r.invoice_lines("credit_reversal").count == 1
    assert not result.warnings  # not a positive credit: no W801


def test_without_billing_periods_a_correction_nets_in_its_charge_period() -> None:
    # no billing_period_start: every line's month is its charge period's, March: 1,500.00 −
    # 1,500.00 + 1,200.00 + 300.00 = 1,500.00 against the 1,500.00 expected
    (r,) = reconcile(terms_from_text(CONTRACT, "c.spot"), trace_frame(correction(False))).contracts
    assert [(c.month, c.invoice_rows, *amounts(c)) for c in r.lines] == [
        ("2026-03", (3, 4, 5, 6), "matched", Decimal("1500.00"), Decimal("1500.00"), 0)
    ]


NEW_YORK = CONTRACT.replace(
    "  currency USD\n", '  currency USD\n  billing period ends 00:00 "America/New_York"\n'
)


def test_a_line_s_month_is_its_invoice_s_in_the_contract_s_months() -> None:
    # a1: 1 GPU × 1 h × 2.00 = 2.00 on 10 April (in New York too). The line sits on the
    # invoice whose billing period starts 2026-04-01 00:00 UTC — 31 March, 20:00, in New
    # York: the contract's month of that instant is March, but the invoice is April's
    april = "2026-04-01T00:00:00Z"
    for period in (at("2026-04-01 00:00"), april):  # a timestamp, or text as a CSV gives it
        events = [
            started("r1", "a1", "2026-04-10 12:00", gpus=1),
            released("r1", "a1", "2026-04-10 13:00"),
            invoice("r1", None, "2026-04-10 12:00", "charge", "2.00", billing_period_start=period),
        ]
        (r,) = reconcile(terms_from_text(NEW_YORK, "c.spot"), trace_frame(events)).contracts
        assert [(c.month, c.status, c.expected) for c in r.lines] == [
            ("2026-04", "matched", Decimal("2.00"))
        ], period


def test_a_line_without_a_billing_period_is_dated_by_its_charge_period() -> None:
    events = [
        # a1: 1 GPU × 1 h × 2.00 = 2.00 in March; its line has no billing period start (the
        # column is there, empty on this row): its charge period, March, dates it
        started("r1", "a1", D + "10:00", gpus=1),
        released("r1", "a1", D + "11:00"),
        invoice("r1", None, D + "10:00", "charge", "2.00", billing_period_start=None),
        # r2's line is on April's invoice though charged in March: April's, with a note
        started("r2", "b1", D + "10:00", gpus=1),
        released("r2", "b1", D + "11:00"),
        invoice("r2", None, D + "10:00", "charge", "2.00", billing_period_start="2026-04-01Z"),
    ]
    with pytest.raises(ContractlangError) as exc:  # a date alone is no time
        reconcile(terms_from_text(CONTRACT, "c.spot"), trace_frame(events))
    [d] = exc.value.diagnostics
    assert (d.code, d.span.line) == ("R002", 6)
    assert d.message == "billing period start `2026-04-01Z` is not an ISO 8601 time with an offset"
    events[-1]["billing_period_start"] = "2026-04-01T00:00:00+00:00"
    (r,) = reconcile(terms_from_text(CONTRACT, "c.spot"), trace_frame(events)).contracts
    assert [(x.run_id, x.month, x.status) for x in r.lines] == [
        ("r1", "2026-03", "matched"),
        # r2's expected 2.00 is March's and has no line of its month: missing; its line of
        # April's invoice, nothing expected there: unexpected
        ("r2", "2026-03", "missing"),
        ("r2", "2026-04", "unexpected"),
    ]
    assert r.lines[2].reasons[-1].term == "1 line charged in 2026-03, on the invoice of 2026-04"


def test_a_billing_period_start_of_another_type_is_r002() -> None:
    events = [
        started("r1", "a1", D + "10:00", gpus=1),
        released("r1", "a1", D + "11:00"),
        invoice("r1", None, D + "10:00", "charge", "2.00", billing_period_start=20260301),
    ]
    with pytest.raises(ContractlangError) as exc:
        reconcile(terms_from_text(CONTRACT, "c.spot"), trace_frame(events))
    [d] = exc.value.diagnostics
    assert (d.code, d.span.line) == ("R002", 3)
    assert d.message == "`billing_period_start` holds integers, not times with a time zone"
    # timestamps without a zone: which month they are in depends on a zone nobody named
    events[-1]["billing_period_start"] = datetime(2026, 3, 1)
    with pytest.raises(ContractlangError) as exc:
        reconcile(terms_from_text(CONTRACT, "c.spot"), trace_frame(events))
    [d] = exc.value.diagnostics
    assert (d.code, d.message) == (
        "R002",
        "`billing_period_start` holds timestamps without a time zone",
    )


# ------------------------------------------------------- an allocation over a month's end


def spanning(run: str, end: str) -> list[dict[str, Any]]:
    """An allocation of 1 GPU from 30 March, 12:00 UTC, to ``end``."""
    return [started(run, f"{run}-a1", "2026-03-30 12:00", gpus=1), released(run, f"{run}-a1", end)]


def test_an_allocation_over_a_month_s_end_is_owed_in_the_month_it_ends() -> None:
    events = [
        # r1: 30 March 12:00 to 2 April 12:00 is 72 h: 1 × 72 × 2.00 = 144.00, owed in April
        # (the month of its end, docs/reconcile.md); billed in one line dated 2 April
        *spanning("r1", "2026-04-02 12:00"),
        invoice("r1", None, "2026-04-02 12:00", "charge", "144.00"),
        # r2: the same allocation billed day by day: 30 March 12 h (24.00) and 31 March 24 h
        # (48.00) = 72.00 in March; 1 April 24 h (48.00) and 2 April 12 h (24.00) = 72.00 in
        # April. March has nothing owed, April 144.00: the pair that cancels (the limit)
        *spanning("r2", "2026-04-02 12:00"),
        invoice("r2", None, "2026-03-30 12:00", "charge", "24.00"),
        invoice("r2", None, "2026-03-31 00:00", "charge", "48.00"),
        invoice("r2", None, "2026-04-01 00:00", "charge", "48.00"),
        invoice("r2", None, "2026-04-02 00:00", "charge", "24.00"),
    ]
    (r,) = reconcile(terms_from_text(CONTRACT, "c.spot"), trace_frame(events)).contracts
    assert [(x.run_id, x.month, *amounts(x)) for x in r.lines] == [
        ("r2", "2026-03", "unexpected", None, Decimal("72.00"), Decimal("72.00")),
        ("r1", "2026-04", "matched", Decimal("144.00"), Decimal("144.00"), 0),
        # 72.00 − 144.00 = −72.00
        ("r2", "2026-04", "under_billed", Decimal("144.00"), Decimal("72.00"), Decimal("-72.00")),
    ]
    # over the two months r2 nets to nothing: +72.00 − 72.00
    assert sum((x.difference for x in r.lines if x.run_id == "r2"), Decimal(0)) == 0


def test_the_month_of_an_allocation_s_end_is_the_contract_s() -> None:
    # 30 March 12:00 UTC to 1 April 02:00 UTC is 38 h: 1 × 38 × 2.00 = 76.00. Its end is
    # April in UTC but 31 March, 22:00, in New York; its line, dated at the end, likewise
    events = [
        *spanning("r1", "2026-04-01 02:00"),
        invoice("r1", None, "2026-04-01 02:00", "charge", "76.00"),
    ]
    for spot, month in ((CONTRACT, "2026-04"), (NEW_YORK, "2026-03")):
        (r,) = reconcile(terms_from_text(spot, "c.spot"), trace_frame(events)).contracts
        assert [(c.month, *amounts(c)) for c in r.lines] == [
            (month, "matched", Decimal("76.00"), Decimal("76.00"), 0)
        ]
    # on the provider's April invoice (its period from 1 April, 00:00 UTC) the line is
    # April's in both; the charge stays March's in New York: 76.00 missing in March, 76.00
    # unexpected in April, the line noted as charged in March (the limit of months that end
    # at other hours)
    events[-1]["billing_period_start"] = at("2026-04-01 00:00")
    (r,) = reconcile(terms_from_text(NEW_YORK, "c.spot"), trace_frame(events)).contracts
    assert [(x.month, x.status, x.alloc_id) for x in r.lines] == [
        ("2026-03", "missing", "r1-a1"),
        ("2026-04", "unexpected", None),
    ]
    assert r.lines[1].reasons[-1].term == "1 line charged in 2026-03, on the invoice of 2026-04"


def test_lines_alike_but_for_one_column_are_each_counted() -> None:
    events = [
        # a1: 1 GPU × 1 h × 2.00 = 2.00, billed as two lines of 1.00 alike in run,
        # allocation, time and amount but on two invoices: 1.00 + 1.00 = 2.00, matched (one
        # line dropped as a repeat would leave 1.00, under-billed)
        started("r1", "a1", D + "10:00", gpus=1),
        released("r1", "a1", D + "11:00"),
        invoice("r1", "a1", D + "11:00", "charge", "1.00", invoice_id="A", resource_id="g1"),
        invoice("r1", "a1", D + "11:00", "charge", "1.00", invoice_id="B", resource_id="g1"),
        # r2 likewise with run-level lines on two resources: 1.00 + 1.00 = 2.00
        started("r2", "b1", D + "10:00", gpus=1),
        released("r2", "b1", D + "11:00"),
        invoice("r2", None, D + "11:00", "charge", "1.00", invoice_id="A", resource_id="g1"),
        invoice("r2", None, D + "11:00", "charge", "1.00", invoice_id="A", resource_id="g2"),
    ]
    result = reconcile(terms_from_text(CONTRACT, "c.spot"), trace_frame(events))
    (r,) = result.contracts
    assert result.invoice_lines == 4
    assert [(x.run_id, x.invoice_rows, *amounts(x)) for x in r.lines] == [
        ("r1", (3, 4), "matched", Decimal("2.00"), Decimal("2.00"), 0),
        ("r2", (7, 8), "matched", Decimal("2.00"), Decimal("2.00"), 0),
    ]
    assert r.invoice_lines("charge").count == 4
