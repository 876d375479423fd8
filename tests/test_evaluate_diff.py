"""The changes between two evaluate documents and two ledgers, in words
(fixtures/diff.py): every kind of change, the deltas, the grouping, the width."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from rich.cells import cell_len

from contractlang.fixtures.diff import (
    Change,
    change_lines,
    diff_documents,
    diff_ledgers,
    figures_moved,
)

ROOT = Path(__file__).resolve().parents[1]
DOC: dict[str, Any] = json.loads(
    (ROOT / "fixtures" / "northwind-reclaimed-before-a-checkpoint" / "expected.json").read_text()
)


def texts(changes: list[Change]) -> list[str]:
    return [f"{c.where}: {c.text()}" for c in changes]


def test_the_same_document_has_no_change() -> None:
    assert diff_documents(DOC, copy.deepcopy(DOC)) == []


def test_totals_lost_progress_and_percentiles_say_old_new_and_by_how_much() -> None:
    new = copy.deepcopy(DOC)
    c = new["contracts"][0]
    c["totals"]["net"] = "104.96"  # was 104.94
    c["totals"]["runs"] = 3  # was 2
    c["lost"]["gpu_hours"] = "7.000000"  # was 7.733333
    c["cost_per_accepted_run"]["p95"] = None  # was 82.54
    assert texts(diff_documents(DOC, new)) == [
        "northwind-negotiated: runs 2 → 3 (+1)",
        "northwind-negotiated: net 104.94 → 104.96 USD (+0.02)",
        "northwind-negotiated: lost GPU-hours 7.733333 → 7.000000 GPU-h (-0.733333)",
        "northwind-negotiated: cost per accepted run p95 82.54 USD → none",
    ]


def test_budgets_and_promises_name_their_requirement_and_unit() -> None:
    new = copy.deepcopy(DOC)
    c = new["contracts"][0]
    first = c["budgets"][0]["requirements"][1]
    first.update(value="4.0000", margin="1.0000", verdict="met")
    del c["budgets"][1]["requirements"][3]  # mean(reclaims) < 3
    c["budgets"][0]["met"] = True
    c["promises"]["restart"] = None
    c["promises"]["reclaim_notice"]["breaches"] = 0
    where = "northwind-negotiated, budget fy27-pretraining"
    req = f"{where}: `mean(lost_gpu_time / metered_gpu_time) <= 5%`"
    assert texts(diff_documents(DOC, new)) == [
        "northwind-negotiated: reclaim notice breaches 1 → 0 (-1)",
        "northwind-negotiated: restart removed (was promised 900 s)",
        f"{where}: met false → true",
        f"{req}: value 9.2553 → 4.0000% (-5.2553)",
        f"{req}: margin -4.2553 → 1.0000% (+5.2553)",
        f"{req}: verdict not met → met",
        "northwind-negotiated, budget fy27-reliability: requirement removed"
        " (was mean(reclaims) < 3)",
    ]


def test_contracts_inputs_and_warnings_appear_and_go() -> None:
    new = copy.deepcopy(DOC)
    other = copy.deepcopy(new["contracts"][0])
    other["name"] = "draft-5"
    new["contracts"].append(other)
    new["terms"][1]["sha256"] = "f" * 64
    new["trace"]["digest"] = "sha256:" + "0" * 64
    new["warnings"].append({"code": "W001", "message": "rate never reached", "file": "x.spot"})
    changes = diff_documents(DOC, new)
    old = DOC["trace"]["digest"][: len("sha256:") + 12]  # a digest is shown by its first 12
    assert texts(changes) == [
        "terms: `fy27-budget.spot` sha256 32da1454fca5… → ffffffffffff…",
        f"trace: digest {old}… → sha256:000000000000…",
        "contract: contract added: draft-5",
        "warnings: warning added: rate never reached",
    ]
    assert figures_moved(changes)
    assert not figures_moved(changes[:2])  # inputs alone


ROW = {
    "contract": "c",
    "run_id": "r1",
    "alloc_id": "a1",
    "kind": "charge",
    "term": "rate 2 USD per gpu_hour",
    "line": "3",
    "month": "2025-01",
    "date": "2025-01-01",
    "quantity_gpu_hours": "8.000000",
    "amount": "16.00",
}


def test_ledger_lines_match_by_allocation_and_term_and_runs_sum_their_lines() -> None:
    credit = {**ROW, "kind": "credit", "term": "slow", "date": "", "quantity_gpu_hours": ""}
    old = [ROW, {**credit, "amount": "-1.60"}, {**ROW, "alloc_id": "a2", "amount": "2.00"}]
    new = [
        {**ROW, "amount": "16.08", "term": "rate 2.01 USD per gpu_hour", "line": "4"},
        {**credit, "amount": "-1.61", "line": "9"},
        {**credit, "term": "delay", "amount": "-0.50"},
    ]
    assert texts(diff_ledgers(old, new, {"c": "USD"})) == [
        # r1: 16.00 − 1.60 + 2.00 = 16.40 → 16.08 − 1.61 − 0.50 = 13.97
        "c runs: run r1 net 16.40 → 13.97 USD (-2.43)",
        "c ledger: charge term (1 line) rate 2 USD per gpu_hour → rate 2.01 USD per gpu_hour",
        "c ledger: charge (1 line) line 3 → 4",
        "c ledger: credit `slow` (1 line) line 3 → 9",
        "c ledger, run r1, allocation a1: charge amount 16.00 → 16.08 USD (+0.08)",
        "c ledger, run r1, allocation a1: credit `slow` amount -1.60 → -1.61 USD (-0.01)",
        "c ledger, run r1, allocation a1: credit `delay` added: -0.50 USD",
        "c ledger, run r1, allocation a2: charge removed (was 2.00 USD)",
    ]


def test_the_same_text_change_on_many_lines_is_said_once() -> None:
    old = [{**ROW, "alloc_id": f"a{n}"} for n in range(50)]
    new = [{**row, "line": "4"} for row in old]
    changes = diff_ledgers(old, new)
    assert texts(changes) == ["c ledger: charge (50 lines) line 3 → 4"]
    assert not figures_moved(changes)


@pytest.mark.parametrize("width", [40, 60, 80])
def test_lines_fit_the_width_and_never_split_a_figure(width: int) -> None:
    new = copy.deepcopy(DOC)
    new["contracts"][0]["totals"]["gross"] = "1234567.89"
    new["contracts"][0]["budgets"][0]["requirements"][1]["value"] = "4.0000"
    lines = change_lines(diff_documents(DOC, new), width)
    assert all(cell_len(line) <= width for line in lines), lines
    joined = "\n".join(lines)
    assert "1234567.89 USD" in joined
    assert "(+1234455.39)" in joined  # 1,234,567.89 − 112.50


def test_a_limit_says_how_many_more_there_are() -> None:
    old = [{**ROW, "alloc_id": f"a{n}"} for n in range(5)]
    new = [{**row, "amount": "16.01"} for row in old]
    lines = change_lines(diff_ledgers(old, new), 80, limit=2)
    assert lines[-1] == "… and 4 more changes"


BIG = "12345678901234567890123456.78"  # 28 significant digits
BIGGER = "-123456789012345678901234567.891"  # 30


def test_figures_of_28_digits_and_more_and_their_differences_are_exact() -> None:
    # Python's default context keeps 28 digits: it raised quantizing such a difference
    old, new = copy.deepcopy(DOC), copy.deepcopy(DOC)
    totals_old, totals_new = old["contracts"][0]["totals"], new["contracts"][0]["totals"]
    totals_old["net"], totals_new["net"] = BIG, "12345678901234567890123456.79"
    totals_old["credits"], totals_new["credits"] = BIGGER, "-123456789012345678901234567.881"
    totals_old["gross"], totals_new["gross"] = BIGGER, "18.00"
    assert texts(diff_documents(old, new)) == [
        # 18.00 + 123456789012345678901234567.891 = 123456789012345678901234585.891
        "northwind-negotiated: gross -123456789012345678901234567.891 → 18.00 USD"
        " (+123456789012345678901234585.891)",
        # -…567.881 − (-…567.891) = +0.010, at the three places of the more precise
        "northwind-negotiated: credits -123456789012345678901234567.891 →"
        " -123456789012345678901234567.881 USD (+0.010)",
        "northwind-negotiated: net 12345678901234567890123456.78 →"
        " 12345678901234567890123456.79 USD (+0.01)",
    ]


def test_a_runs_net_of_long_amounts_is_their_exact_sum() -> None:
    old = [{**ROW, "amount": BIG}, {**ROW, "alloc_id": "a2", "amount": BIGGER}]
    new = [
        {**ROW, "amount": "12345678901234567890123456.79"},
        {**ROW, "alloc_id": "a2", "amount": "-123456789012345678901234567.881"},
    ]
    assert texts(diff_ledgers(old, new, {"c": "USD"})) == [
        # 123456789012345678901234567.891 − 12345678901234567890123456.780
        #   = 111111110111111111011111111.111, so the net is its negative; each line +0.01:
        # 123456789012345678901234567.881 − 12345678901234567890123456.790
        #   = 111111110111111111011111111.091 (28 digits would have rounded both nets to
        #   the same figure, and the run's move would not have been said)
        "c runs: run r1 net -111111110111111111011111111.111 →"
        " -111111110111111111011111111.091 USD (+0.020)",
        f"c ledger, run r1, allocation a1: charge amount {BIG} →"
        " 12345678901234567890123456.79 USD (+0.01)",
        f"c ledger, run r1, allocation a2: charge amount {BIGGER} →"
        " -123456789012345678901234567.881 USD (+0.010)",
    ]


def test_a_delta_of_many_places_is_written_without_an_exponent() -> None:
    (change,) = diff_ledgers(
        [{**ROW, "quantity_gpu_hours": "8.0000000"}], [ROW | {"quantity_gpu_hours": "8.0000001"}]
    )
    assert change.text() == "charge GPU-hours 8.0000000 → 8.0000001 GPU-h (+0.0000001)"
