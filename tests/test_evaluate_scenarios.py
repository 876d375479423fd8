"""Evaluation scenarios: small `.spot` texts applied to hand-built traces.

Every expected number is computed by hand from docs/trace.md and docs/evaluate.md, with the
arithmetic in a comment beside it. Conventions in the comments:

- a rate ``R USD per gpu_hour`` on ``g`` GPUs for ``t`` billable seconds charges
  ``R × g × t / 3600``, kept exact, then rounded once to the cent (half away from zero unless
  the contract says otherwise);
- "GPU-h" is GPU-hours, ``gpus × seconds / 3600``, shown at 6 places;
- ledger tuples are ``(run_id, alloc_id, kind, term, amount)``.

Unless a test says otherwise, allocations have 8 × H100-80G spot GPUs in us-east-1a and the
day is Monday 2026-03-02 (UTC).
"""

from __future__ import annotations

import hashlib
import json
from datetime import date
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import polars as pl
import pytest
from support.digest import digest as support_digest
from support.scenario import (
    accepted,
    alloc_row,
    assert_ledger_sums_to_net,
    checkpoint,
    contract_result,
    evaluate_text,
    failed,
    json_document,
    lines,
    notice,
    reclaimed,
    released,
    requested,
    run_row,
    started,
    trace_frame,
    write_spot,
)
from typer.testing import CliRunner

from contractlang.cli.app import app
from contractlang.errors import ContractlangError
from contractlang.evaluate.caps import RUN_GROSS_RULE
from contractlang.evaluate.results import ContractResult
from contractlang.pipeline.language import terms_from_text
from contractlang.render.explain.terminal import explain_run

D = Decimal
GOLDEN = Path(__file__).parent / "golden"


def codes(exc: pytest.ExceptionInfo[ContractlangError]) -> list[str]:
    return [d.code for d in exc.value.diagnostics]


# =========================================================================== rates and rounding


PER_TWO_MINUTES = """\
contract "per-two-minutes" {
  currency USD
  rate 2.10 USD per gpu_hour
  billing increment 2 minutes
}
"""


def test_rate_times_gpus_times_time_rounded_up_to_the_increment() -> None:
    c = contract_result(
        PER_TWO_MINUTES,
        [
            started("r1", "a1", "2026-03-02 10:00", gpus=8),
            released("r1", "a1", "2026-03-02 11:01"),
            accepted("r1", "2026-03-02 12:00"),
        ],
    )
    # runtime 61 min, rounded up to a multiple of 2 min → 62 min
    # 2.10 USD/GPU-h × 8 GPUs × 62/60 h = 16.80 × 62/60 = 17.36 exactly
    assert lines(c) == [("r1", "a1", "charge", "rate 2.10 USD per gpu_hour", D("17.36"))]
    row = c.ledger().row(0, named=True)
    assert row["line"] == 3
    assert row["month"] == "2026-03"
    assert row["date"] == date(2026, 3, 2)
    # billable: 8 GPUs × 62 min = 8.2666… GPU-h → 8.266667
    assert row["quantity_gpu_hours"] == D("8.266667")
    run = run_row(c, "r1")
    # metered 8 × 61/60 = 8.1333… → 8.133333; nothing excluded
    assert run["metered_gpu_hours"] == D("8.133333")
    assert run["billable_gpu_hours"] == D("8.266667")
    assert run["excluded_gpu_hours"] == D("0.000000")
    assert (run["gross"], run["credits"], run["cap_cuts"], run["net"]) == (
        D("17.36"),
        D("0.00"),
        D("0.00"),
        D("17.36"),
    )
    # accepted at 12:00, no request: time_to_accept = 12:00 − first start 10:00 = 2 h
    assert run["time_to_accept_hours"] == D("2.000000")
    assert run["cost_per_accepted_run"] == D("17.36")
    assert c.totals.net_minor == 1736
    assert_ledger_sums_to_net(c)


def test_default_increment_is_one_second_and_there_is_no_minimum() -> None:
    spot = 'contract "per-second" {\n  currency USD\n  rate 3.60 USD per gpu_hour\n}\n'
    c = contract_result(
        spot,
        [
            started("r1", "a1", "2026-03-02 10:00:00", gpus=2),
            released("r1", "a1", "2026-03-02 10:10:00.500000"),
            started("r1", "a2", "2026-03-02 11:00:00", gpus=1),
            released("r1", "a2", "2026-03-02 11:00:20"),
        ],
    )
    # a1: 600.5 s rounded up to whole seconds → 601 s; 3.60 × 2 × 601/3600 = 4327.2/3600 = 1.202
    #     → 1.20
    # a2: 20 s and no minimum → 20 s; 3.60 × 1 × 20/3600 = 0.02
    assert lines(c) == [
        ("r1", "a1", "charge", "rate 3.60 USD per gpu_hour", D("1.20")),
        ("r1", "a2", "charge", "rate 3.60 USD per gpu_hour", D("0.02")),
    ]
    assert alloc_row(c, "a1")["billable_us"] == 601_000_000
    assert alloc_row(c, "a2")["billable_us"] == 20_000_000
    # what `explain` shows as rounded: 600.5 s → 601 s; 20 s stays 20 s
    assert c.run_allocations("r1")["rounded_us"].to_list() == [601_000_000, 20_000_000]
    # gross 1.20 + 0.02 = 1.22
    assert c.totals.gross_minor == 122
    assert_ledger_sums_to_net(c)


def test_billing_minimum_raises_short_allocations() -> None:
    spot = """\
contract "minimum" {
  currency USD
  rate 3.60 USD per gpu_hour
  billing increment 1 second
  billing minimum 1 minute
}
"""
    c = contract_result(
        spot,
        [
            started("r1", "a1", "2026-03-02 10:00:00", gpus=1),
            released("r1", "a1", "2026-03-02 10:00:20"),
            started("r1", "a2", "2026-03-02 10:05:00", gpus=1),
            released("r1", "a2", "2026-03-02 10:06:30"),
        ],
    )
    # a1: 20 s, raised to the 60 s minimum; 3.60 × 1 × 60/3600 = 0.06
    # a2: 90 s, above the minimum; 3.60 × 1 × 90/3600 = 0.09
    assert [x[4] for x in lines(c)] == [D("0.06"), D("0.09")]
    assert alloc_row(c, "a1")["billable_us"] == 60_000_000
    # rounded to whole seconds before the minimum: a1 stays 20 s (then raised), a2 90 s
    assert c.run_allocations("r1")["rounded_us"].to_list() == [20_000_000, 90_000_000]
    # billable GPU-h (60 + 90) / 3600 = 0.041666… → 0.041667; metered (20 + 90)/3600 = 0.030556
    run = run_row(c, "r1")
    assert run["billable_gpu_hours"] == D("0.041667")
    assert run["metered_gpu_hours"] == D("0.030556")
    assert c.totals.net_minor == 15  # 0.06 + 0.09
    assert_ledger_sums_to_net(c)


def test_gpu_hours_round_half_away_from_zero_everywhere() -> None:
    spot = 'contract "per-second" {\n  currency USD\n  rate 3.60 USD per gpu_hour\n}\n'
    result = evaluate_text(
        spot,
        [
            started("r1", "a1", "2026-03-02 10:00:00", gpus=1),
            released("r1", "a1", "2026-03-02 10:00:00.001800"),
        ],
    )
    (c,) = result.contracts
    # metered 1 GPU × 1800 µs = 1800 / 3.6 × 10⁹ = 0.0000005 GPU-h exactly: a tie at the 7th
    # place → half away from zero 0.000001 (half even would give 0.000000)
    assert run_row(c, "r1")["metered_gpu_hours"] == D("0.000001")
    doc = json.loads(json_document(result))
    assert doc["contracts"][0]["totals"]["metered_gpu_hours"] == "0.000001"
    # billable: rounded up to 1 s → 1/3600 = 0.000277… → 0.000278; charge 3.60 × 1/3600 = 0.001
    # → 0.00
    assert c.ledger()["quantity_gpu_hours"].to_list() == [D("0.000278")]
    assert doc["contracts"][0]["totals"]["billable_gpu_hours"] == "0.000278"
    assert lines(c)[0][4] == D("0.00")


TIES = """\
contract "half-up" {
  currency USD
  rate 1.80 USD per gpu_hour
  credit "half back" 50% of charge when end_reason == reclaimed
}
contract "half-even" {
  currency USD
  rounding half_even
  rate 1.80 USD per gpu_hour
  credit "half back" 50% of charge when end_reason == reclaimed
}
"""
TIES_EVENTS = [
    started("r1", "a1", "2026-03-02 10:00:00", gpus=1),
    released("r1", "a1", "2026-03-02 10:00:50"),
    started("r1", "a2", "2026-03-02 10:01:00", gpus=1),
    released("r1", "a2", "2026-03-02 10:01:30"),
    started("r1", "a3", "2026-03-02 10:02:00", gpus=1),
    reclaimed("r1", "a3", "2026-03-02 10:03:40"),
]


def test_half_up_and_half_even_on_exact_ties() -> None:
    result = evaluate_text(TIES, TIES_EVENTS)
    up, even = result.contract("half-up"), result.contract("half-even")
    # a1: 1.80 × 1 × 50/3600 = 0.025 exactly: half up 0.03, half even 0.02
    # a2: 1.80 × 1 × 30/3600 = 0.015 exactly: half up 0.02, half even 0.02 (1 is odd → 2)
    # a3: 1.80 × 1 × 100/3600 = 0.05; credit 50% × 0.05 = 0.025 exactly:
    #     half away from zero −0.03, half even −0.02
    assert [x[4] for x in lines(up)] == [D("0.03"), D("0.02"), D("0.05"), D("-0.03")]
    assert [x[4] for x in lines(even)] == [D("0.02"), D("0.02"), D("0.05"), D("-0.02")]
    # totals are sums of rounded lines: 0.03 + 0.02 + 0.05 − 0.03 = 0.07;
    # 0.02 + 0.02 + 0.05 − 0.02 = 0.07
    assert (up.totals.gross_minor, up.totals.credits_minor, up.totals.net_minor) == (10, -3, 7)
    assert (even.totals.gross_minor, even.totals.credits_minor, even.totals.net_minor) == (
        9,
        -2,
        7,
    )
    assert up.settings.rounding == "half_up"
    assert even.settings.rounding == "half_even"


def test_precision_three() -> None:
    spot = """\
contract "mills" {
  currency USD
  precision 3
  rate 1.80 USD per gpu_hour
}
contract "mills-even" {
  currency USD
  precision 3
  rounding half_even
  rate 1.80 USD per gpu_hour
}
"""
    events = [
        started("r1", "a1", "2026-03-02 10:00:00", gpus=1),
        released("r1", "a1", "2026-03-02 10:00:05"),
        started("r1", "a2", "2026-03-02 10:01:00", gpus=1),
        released("r1", "a2", "2026-03-02 10:01:07"),
        started("r1", "a3", "2026-03-02 11:00:00", gpus=1),
        released("r1", "a3", "2026-03-02 12:00:00"),
    ]
    result = evaluate_text(spot, events)
    mills, even = result.contract("mills"), result.contract("mills-even")
    # a1: 1.80 × 5/3600 = 0.0025 → 0.003 (half up) / 0.002 (half even)
    # a2: 1.80 × 7/3600 = 0.0035 → 0.004 / 0.004
    # a3: 1.80 × 1 h = 1.800
    assert [x[4] for x in lines(mills)] == [D("0.003"), D("0.004"), D("1.800")]
    assert [x[4] for x in lines(even)] == [D("0.002"), D("0.004"), D("1.800")]
    assert mills.ledger().schema["amount"] == pl.Decimal(38, 3)
    # net 0.003 + 0.004 + 1.800 = 1.807 (in mills: 1807); 0.002 + 0.004 + 1.800 = 1.806
    assert mills.totals.net_minor == 1807
    assert even.totals.net_minor == 1806
    assert mills.money(mills.totals.net_minor) == D("1.807")
    doc = json.loads(json_document(result))["contracts"]
    assert doc[0]["precision"] == 3
    assert doc[0]["totals"]["net"] == "1.807"
    assert doc[1]["totals"]["net"] == "1.806"
    assert_ledger_sums_to_net(mills)


MARKET = """\
contract "market" {
  currency USD
  rate trace.price per gpu_hour when capacity == spot
  rate 4.25 USD per gpu_hour when capacity == on_demand
  rate 3.00 USD per gpu_hour
}
"""


def test_rate_from_trace_price_falls_through_when_the_price_is_none() -> None:
    c = contract_result(
        MARKET,
        [
            started("r1", "a1", "2026-03-02 10:00", gpus=4, price="2.37"),
            released("r1", "a1", "2026-03-02 11:30"),
            started("r1", "a2", "2026-03-02 12:00", gpus=4, price=None),
            released("r1", "a2", "2026-03-02 12:30"),
            started("r1", "a3", "2026-03-02 13:00", gpus=1, capacity="on_demand", price="9.99"),
            released("r1", "a3", "2026-03-02 14:00"),
        ],
    )
    # a1: spot with a price: 2.37 × 4 × 1.5 h = 14.22
    # a2: spot, price none → the first rate does not price it; not on_demand; the last rate:
    #     3.00 × 4 × 0.5 h = 6.00
    # a3: on_demand: the first rate's condition is false although the price is 9.99;
    #     4.25 × 1 × 1 h = 4.25
    assert lines(c) == [
        ("r1", "a1", "charge", "rate trace.price per gpu_hour when capacity == spot", D("14.22")),
        ("r1", "a2", "charge", "rate 3.00 USD per gpu_hour", D("6.00")),
        ("r1", "a3", "charge", "rate 4.25 USD per gpu_hour when capacity == on_demand", D("4.25")),
    ]
    assert [alloc_row(c, a)["rate_index"] for a in ("a1", "a2", "a3")] == [0, 2, 1]
    assert c.ledger()["line"].to_list() == [3, 5, 4]
    # 14.22 + 6.00 + 4.25 = 24.47
    assert c.totals.net_minor == 2447
    assert_ledger_sums_to_net(c)


# =========================================================================== exclusions


def test_whole_allocation_exclusion_and_its_boundary() -> None:
    spot = """\
contract "first-hour" {
  currency USD
  rate 2.00 USD per gpu_hour
  exclude "reclaimed in the first hour" allocation
    when end_reason == reclaimed and runtime < 1 hour
}
"""
    c = contract_result(
        spot,
        [
            started("r1", "a1", "2026-03-02 10:00:00", gpus=4),
            reclaimed("r1", "a1", "2026-03-02 10:59:59"),
            started("r1", "a2", "2026-03-02 11:10:00", gpus=4),
            reclaimed("r1", "a2", "2026-03-02 12:10:00"),
            started("r1", "a3", "2026-03-02 12:20:00", gpus=4),
            released("r1", "a3", "2026-03-02 12:50:00"),
        ],
    )
    # a1: reclaimed after 59 min 59 s < 1 h → excluded whole: no charge line, one exclusion
    #     line of 4 × 3599/3600 = 3.998888… → 3.998889 GPU-h, amount 0.00
    # a2: reclaimed after exactly 1 h: `runtime < 1 hour` is false → 2.00 × 4 × 1 = 8.00
    # a3: released after 30 min → 2.00 × 4 × 0.5 = 4.00
    assert lines(c) == [
        ("r1", "a1", "exclusion", "reclaimed in the first hour", D("0.00")),
        ("r1", "a2", "charge", "rate 2.00 USD per gpu_hour", D("8.00")),
        ("r1", "a3", "charge", "rate 2.00 USD per gpu_hour", D("4.00")),
    ]
    ledger = c.ledger()
    assert ledger["quantity_gpu_hours"].to_list() == [D("3.998889"), D("4.000000"), D("2.000000")]
    assert ledger["line"].to_list() == [4, 3, 3]
    run = run_row(c, "r1")
    # excluded 3.998889 GPU-h; billable 4 + 2 = 6; metered 3.998889 + 4 + 2 = 9.998889
    assert run["excluded_gpu_hours"] == D("3.998889")
    assert run["billable_gpu_hours"] == D("6.000000")
    assert run["metered_gpu_hours"] == D("9.998889")
    assert run["net"] == D("12.00")  # 8.00 + 4.00
    assert_ledger_sums_to_net(c)


def test_credits_apply_to_a_wholly_excluded_allocation() -> None:
    spot = """\
contract "goodwill" {
  currency USD
  rate 2.00 USD per gpu_hour
  exclude "reclaimed in the first hour" allocation
    when end_reason == reclaimed and runtime < 1 hour
  credit "goodwill" 1.00 USD when end_reason == reclaimed
  credit "tenth back" 10% of charge when end_reason == reclaimed
}
"""
    c = contract_result(
        spot,
        [
            started("r1", "a1", "2026-03-02 10:00", gpus=4),
            reclaimed("r1", "a1", "2026-03-02 10:30"),
            started("r1", "a2", "2026-03-02 11:00", gpus=4),
            released("r1", "a2", "2026-03-02 12:00"),
        ],
    )
    # a1 is excluded whole (30 min < 1 h): its charge is 0, so 10% of it is 0 (no line), but
    #   the 1.00 goodwill credit still applies; exclusion 4 × 0.5 = 2 GPU-h
    # a2: 2.00 × 4 × 1 h = 8.00; net 8.00 − 1.00 = 7.00
    assert lines(c) == [
        ("r1", "a1", "exclusion", "reclaimed in the first hour", D("0.00")),
        ("r1", "a1", "credit", "goodwill", D("-1.00")),
        ("r1", "a2", "charge", "rate 2.00 USD per gpu_hour", D("8.00")),
    ]
    assert alloc_row(c, "a1")["credit_1_minor"] == 0
    assert run_row(c, "r1")["net"] == D("7.00")
    assert_ledger_sums_to_net(c)


def test_duration_exclusion_takes_what_remains_and_never_goes_below_zero() -> None:
    spot = """\
contract "warm-up" {
  currency USD
  rate 6.00 USD per gpu_hour
  billing minimum 5 minutes
  exclude "warm-up after a restart" 10 minutes when attempt > 1
}
"""
    c = contract_result(
        spot,
        [
            started("r1", "a1", "2026-03-02 10:00", gpus=1),
            reclaimed("r1", "a1", "2026-03-02 10:30"),
            started("r1", "a2", "2026-03-02 10:35", gpus=1),
            failed("r1", "a2", "2026-03-02 11:00"),
            started("r1", "a3", "2026-03-02 11:05", gpus=1),
            released("r1", "a3", "2026-03-02 11:13"),
        ],
    )
    # a1 (attempt 1): no exclusion; 30 min → 6.00 × 0.5 = 3.00
    # a2 (attempt 2): 25 min − 10 min = 15 min → 6.00 × 15/60 = 1.50; exclusion of 10 min
    #     = 1 × 10/60 = 0.166667 GPU-h
    # a3 (attempt 3): 8 min − min(10, 8) = 0 → billable 0, not raised to the 5 min minimum
    #     (only a charged allocation is); no charge line; exclusion 8/60 = 0.133333 GPU-h
    assert lines(c) == [
        ("r1", "a1", "charge", "rate 6.00 USD per gpu_hour", D("3.00")),
        ("r1", "a2", "charge", "rate 6.00 USD per gpu_hour", D("1.50")),
        ("r1", "a2", "exclusion", "warm-up after a restart", D("0.00")),
        ("r1", "a3", "exclusion", "warm-up after a restart", D("0.00")),
    ]
    assert c.ledger()["quantity_gpu_hours"].to_list() == [
        D("0.500000"),
        D("0.250000"),
        D("0.166667"),
        D("0.133333"),
    ]
    assert alloc_row(c, "a3")["billable_us"] == 0
    # 3.00 + 1.50 = 4.50; excluded 10 + 8 = 18 min = 0.3 GPU-h
    assert c.totals.net_minor == 450
    assert run_row(c, "r1")["excluded_gpu_hours"] == D("0.300000")
    assert_ledger_sums_to_net(c)


def test_minimum_applies_after_the_exclusion() -> None:
    spot = """\
contract "replay-free" {
  currency USD
  rate 3.60 USD per gpu_hour
  billing increment 1 second
  billing minimum 1 minute
  exclude "replayed work" replayed_time when end_reason == reclaimed
}
"""
    c = contract_result(
        spot,
        [
            started("r1", "a1", "2026-03-02 10:00:00", gpus=2),
            checkpoint("r1", "2026-03-02 10:00:30", step=10),
            reclaimed("r1", "a1", "2026-03-02 10:10:00", step=120),
        ],
    )
    # runtime 600 s; last valid checkpoint 10:00:30 → replayed_time = 10:10:00 − 10:00:30
    #   = 570 s; remaining 600 − 570 = 30 s; rounded (1 s) 30 s; raised to the 60 s minimum
    # charge 3.60 × 2 × 60/3600 = 0.12 (not 3.60 × 2 × 30/3600 = 0.06)
    # exclusion: 2 GPUs × 570 s = 1140 GPU-s = 0.316666… → 0.316667 GPU-h
    assert lines(c) == [
        ("r1", "a1", "charge", "rate 3.60 USD per gpu_hour", D("0.12")),
        ("r1", "a1", "exclusion", "replayed work", D("0.00")),
    ]
    assert c.ledger()["quantity_gpu_hours"].to_list() == [D("0.033333"), D("0.316667")]
    a1 = alloc_row(c, "a1")
    assert (a1["remaining_us"], a1["billable_us"]) == (30_000_000, 60_000_000)
    run = run_row(c, "r1")
    # lost progress is reported independently of billing: 2 × 570 s = 0.316667 GPU-h, and
    # 120 − 10 = 110 steps
    assert run["lost_gpu_hours"] == D("0.316667")
    assert run["lost_steps"] == 110
    # billable 2 × 60 s = 0.033333 GPU-h, yet excluded is 0.316667 (metered 0.333333)
    assert run["billable_gpu_hours"] == D("0.033333")
    assert run["excluded_gpu_hours"] == D("0.316667")
    assert run["net"] == D("0.12")
    assert_ledger_sums_to_net(c)


# =========================================================================== promises and credits

PROMISES = """\
contract "promises" {
  currency USD
  rate 2.40 USD per gpu_hour
  promise reclaim notice 30 seconds
  promise restart within 15 minutes
  exclude "replay after short notice" replayed_time
    when end_reason == reclaimed and notice_lead < promised_notice
  credit "slow replacement" 10% of charge
    when replacement_wait > promised_restart
}
"""
PROMISES_EVENTS = [
    # r1: a short notice (10 s) and a slow replacement (20 min)
    requested("r1", "2026-03-02 09:30"),
    started("r1", "a1", "2026-03-02 10:00", gpus=4),
    checkpoint("r1", "2026-03-02 10:40", step=400),
    notice("r1", "a1", "2026-03-02 10:59:50"),
    reclaimed("r1", "a1", "2026-03-02 11:00", step=600),
    started("r1", "a2", "2026-03-02 11:20", gpus=4),
    released("r1", "a2", "2026-03-02 12:20", step=900),
    accepted("r1", "2026-03-02 13:00"),
    # r2: a notice 60 s ahead and a quick replacement (10 min); never accepted
    started("r2", "a3", "2026-03-02 10:00", gpus=4),
    notice("r2", "a3", "2026-03-02 10:59"),
    reclaimed("r2", "a3", "2026-03-02 11:00"),
    started("r2", "a4", "2026-03-02 11:10", gpus=4),
    released("r2", "a4", "2026-03-02 11:40"),
]


def test_both_promises_read_by_terms() -> None:
    c = contract_result(PROMISES, PROMISES_EVENTS)
    # a1: notice_lead 11:00:00 − 10:59:50 = 10 s < promised 30 s → the replay is excluded:
    #     replayed_time = 11:00 − 10:40 (checkpoint) = 20 min; billable 60 − 20 = 40 min
    #     charge 2.40 × 4 × 40/60 = 6.40; exclusion 4 × 20/60 = 1.333333 GPU-h
    #     replacement_wait 11:20 − 11:00 = 20 min > promised 15 min → 10% × 6.40 = 0.64
    # a2: released → replacement_wait none → no credit; 2.40 × 4 × 1 h = 9.60
    # a3: lead 60 s ≥ 30 s → no exclusion (its replay of the whole hour is billed);
    #     2.40 × 4 × 1 h = 9.60; wait 10 min ≤ 15 min → no credit
    # a4: 2.40 × 4 × 0.5 h = 4.80
    assert lines(c) == [
        ("r1", "a1", "charge", "rate 2.40 USD per gpu_hour", D("6.40")),
        ("r1", "a1", "exclusion", "replay after short notice", D("0.00")),
        ("r1", "a1", "credit", "slow replacement", D("-0.64")),
        ("r1", "a2", "charge", "rate 2.40 USD per gpu_hour", D("9.60")),
        ("r2", "a3", "charge", "rate 2.40 USD per gpu_hour", D("9.60")),
        ("r2", "a4", "charge", "rate 2.40 USD per gpu_hour", D("4.80")),
    ]
    assert c.ledger()["quantity_gpu_hours"][1] == D("1.333333")
    # r1 net 6.40 + 9.60 − 0.64 = 15.36; r2 net 9.60 + 4.80 = 14.40
    assert run_row(c, "r1")["net"] == D("15.36")
    assert run_row(c, "r2")["net"] == D("14.40")
    # gross 6.40 + 9.60 + 9.60 + 4.80 = 30.40; credits −0.64; net 29.76
    t = c.totals
    assert (t.gross_minor, t.credits_minor, t.cap_cuts_minor, t.net_minor) == (3040, -64, 0, 2976)
    # breaches: a1's notice (10 s < 30 s) and a1's restart (20 min > 15 min)
    p = c.promises
    assert (p.notice_us, p.reclaims, p.notice_breaches, p.shortest_notice_us) == (
        30_000_000,
        2,
        1,
        10_000_000,
    )
    assert (p.restart_us, p.replacements, p.restart_breaches, p.never_replaced) == (
        900_000_000,
        2,
        1,
        0,
    )
    assert p.longest_wait_us == 1_200_000_000  # 20 min
    assert_ledger_sums_to_net(c)


def test_credit_percent_of_replayed_cost_uses_min_of_replay_and_billable_time() -> None:
    spot = """\
contract "replay-refund" {
  currency USD
  rate 3.00 USD per gpu_hour
  billing increment 1 minute
  exclude "maintenance window" 30 minutes when zone == "us-east-1b"
  credit "replay refund" 50% of replayed_cost when end_reason == reclaimed
}
"""
    c = contract_result(
        spot,
        [
            started("r1", "a1", "2026-03-02 10:00:00", gpus=8),
            checkpoint("r1", "2026-03-02 10:30:00", step=300),
            reclaimed("r1", "a1", "2026-03-02 10:45:30"),
            started("r1", "a2", "2026-03-02 12:00:00", gpus=8, zone="us-east-1b"),
            reclaimed("r1", "a2", "2026-03-02 12:40:00"),
        ],
    )
    # a1: runtime 45.5 min → billable 46 min; charge 3.00 × 8 × 46/60 = 24 × 46/60 = 18.40
    #     replayed_time 10:45:30 − 10:30:00 = 15.5 min = 930 s ≤ billable 2760 s
    #     replayed_cost 3.00 × 8 × 930/3600 = 6.20; credit 50% = 3.10
    # a2: the last checkpoint (10:30) predates its start → replayed_time = whole 40 min;
    #     billable 40 − 30 (excluded) = 10 min; charge 24 × 10/60 = 4.00
    #     replayed_cost 24 × min(40, 10)/60 = 4.00; credit 50% = 2.00
    assert lines(c) == [
        ("r1", "a1", "charge", "rate 3.00 USD per gpu_hour", D("18.40")),
        ("r1", "a1", "credit", "replay refund", D("-3.10")),
        ("r1", "a2", "charge", "rate 3.00 USD per gpu_hour", D("4.00")),
        ("r1", "a2", "exclusion", "maintenance window", D("0.00")),
        ("r1", "a2", "credit", "replay refund", D("-2.00")),
    ]
    assert alloc_row(c, "a1")["replayed_cost"] == D("6.2")
    assert alloc_row(c, "a2")["replayed_cost"] == D("4")
    # gross 18.40 + 4.00 = 22.40; credits −5.10; net 17.30
    run = run_row(c, "r1")
    assert (run["gross"], run["credits"], run["net"]) == (D("22.40"), D("-5.10"), D("17.30"))
    # lost: 8 × 930 s + 8 × 2400 s = 26640 GPU-s = 7.4 GPU-h
    assert run["lost_gpu_hours"] == D("7.400000")
    assert_ledger_sums_to_net(c)


RESTART_DELAY = """\
contract "restart-delay" {
  currency USD
  rate 2.10 USD per gpu_hour
  credit "restart delay" 2.10 USD per gpu_hour * gpus * (replacement_wait - 15 minutes)
    when replacement_wait > 15 minutes
}
contract "restart-delay-reordered" {
  currency USD
  rate 2.10 USD per gpu_hour
  credit "restart delay" (replacement_wait - 15 minutes) * gpus * 2.10 USD per gpu_hour
    when replacement_wait > 15 minutes
}
"""


def test_money_expression_credit_in_any_order() -> None:
    result = evaluate_text(
        RESTART_DELAY,
        [
            started("r1", "a1", "2026-03-02 10:00", gpus=8),
            failed("r1", "a1", "2026-03-02 12:00"),
            started("r1", "a2", "2026-03-02 12:40", gpus=8),
            released("r1", "a2", "2026-03-02 13:00"),
        ],
    )
    for c in result.contracts:
        # a1: 2.10 × 8 × 2 h = 33.60; replacement_wait 12:40 − 12:00 = 40 min > 15 min →
        #     credit 2.10 × 8 × (40 − 15)/60 = 16.80 × 25/60 = 7.00
        # a2: 2.10 × 8 × 20/60 = 5.60; released → no wait, no credit
        assert lines(c) == [
            ("r1", "a1", "charge", "rate 2.10 USD per gpu_hour", D("33.60")),
            ("r1", "a1", "credit", "restart delay", D("-7.00")),
            ("r1", "a2", "charge", "rate 2.10 USD per gpu_hour", D("5.60")),
        ], c.name
        # net 33.60 + 5.60 − 7.00 = 32.20
        assert c.totals.net_minor == 3220
        assert_ledger_sums_to_net(c)


def test_negative_credit_counts_as_zero_with_a_warning() -> None:
    spot = """\
contract "late" {
  currency USD
  rate 2.10 USD per gpu_hour
  credit "restart delay" 2.10 USD per gpu_hour * gpus * (replacement_wait - 1 hour)
    when replacement_wait > 15 minutes
}
"""
    c = contract_result(
        spot,
        [
            started("r1", "a1", "2026-03-02 10:00", gpus=8),
            failed("r1", "a1", "2026-03-02 12:00"),
            started("r1", "a2", "2026-03-02 12:40", gpus=8),
            released("r1", "a2", "2026-03-02 13:00"),
        ],
    )
    # a1's wait is 40 min > 15 min, so the credit applies, but 2.10 × 8 × (40 − 60)/60 = −5.60
    # is below zero: counted as 0 (no credit line) and warned about (W401)
    assert [x[2] for x in lines(c)] == ["charge", "charge"]
    # 33.60 + 5.60 = 39.20
    assert c.totals.credits_minor == 0
    assert c.totals.net_minor == 3920
    assert [w.code for w in c.warnings] == ["W401"]
    assert "`restart delay`" in c.warnings[0].message
    assert "1 allocation(s)" in c.warnings[0].message
    # explain says so instead of showing a zero credit
    assert (
        '  credit "restart delay" (line 4) because replacement_wait > 15 minutes: '
        "2.10 USD per gpu_hour * gpus * (replacement_wait - 1 hour) = -5.600000 USD, "
        "below zero: counted as 0"
    ) in explain_run(c, "r1").splitlines()


def test_a_year_of_a_thousand_gpus_is_billed_exactly() -> None:
    spot = """\
contract "decade" {
  currency USD
  rate 100.00 USD per gpu_hour
}
"""
    events = [
        started("r1", "a1", "2025-01-01 00:00", gpus=1000),
        released("r1", "a1", "2026-01-01 00:00:01"),
    ]
    # 100.00 × 1000 GPUs × (365 × 86400 + 1) s × 10^6 µs ≈ 3.15 × 10^18: too wide for 18
    # integer digits taken whole, so the time is split at whole hours (8,760 h + 1 s):
    # 100.00 × 1000 × 8760 = 876,000,000.00; 100.00 × 1000 × 1/3600 h = 27.777… → 27.78
    c = contract_result(spot, events)
    assert c.totals.gross_minor == 87_600_002_778


def test_a_remainder_wider_than_18_digits_is_billed_exactly() -> None:
    spot = """\
contract "huge" {
  currency USD
  rate 1000.00 USD per gpu_hour
}
"""
    events = [
        started("r1", "a1", "2025-01-01 00:00", gpus=1_000_000),
        released("r1", "a1", "2025-01-01 00:59:59"),
    ]
    # under an hour, so all of it is the remainder: 1000.00 × 10^6 GPUs × 3,599 × 10^6 µs =
    # 3.599 × 10^18, more than 18 digits before ÷ 3.6 × 10^9 (it was E405); the division takes
    # the remainder's whole hours (0) and only what is left below 3.6 × 10^9 at 20 places:
    # 10^9 USD per hour × 3,599/3,600 h = 999,722,222.222… → 999,722,222.22
    c = contract_result(spot, events)
    assert c.totals.gross_minor == 99_972_222_222


def test_an_amount_beyond_exact_decimal_range_is_a_clean_error() -> None:
    spot = """\
contract "huge" {
  currency USD
  rate 1000000000000 USD per gpu_hour
}
"""
    events = [
        started("r1", "a1", "2025-01-01 00:00", gpus=10_000_000),
        released("r1", "a1", "2025-01-01 00:59:59"),
    ]
    # 10^12 USD per GPU-hour × 10^7 GPUs × 3,599/3,600 h ≈ 10^19 USD: more than the 18 digits
    # before the point an amount holds
    with pytest.raises(ContractlangError) as exc:
        evaluate_text(spot, events)
    assert codes(exc) == ["E405"]
    assert exc.value.diagnostics[0].message == (
        "contract `huge` computes an amount too large to keep exactly "
        "for allocation `a1` of run `r1`"
    )


# =========================================================================== none handling

NONE_TERMS = """\
contract "none-handling" {
  currency USD
  rate 3.00 USD per gpu_hour
  promise reclaim notice 2 minutes
  exclude "short notice" allocation
    when end_reason == reclaimed and notice_lead < promised_notice
  credit "slow restart" 1.00 USD when replacement_wait > 15 minutes
  credit "fast restart" 0.50 USD when not (replacement_wait > 15 minutes)
}
budget "none-aware" {
  require share(accepted) >= 50%
  require mean(cost_per_accepted_run) <= 9 USD
  require count(accepted) >= 1
}
"""
NONE_EVENTS = [
    # r1: reclaimed without any notice, never replaced, never accepted
    started("r1", "a1", "2026-03-02 10:00", gpus=2),
    reclaimed("r1", "a1", "2026-03-02 10:30"),
    # r2: a full 2-minute notice, replaced after 10 minutes, accepted
    started("r2", "a2", "2026-03-02 10:00", gpus=2),
    notice("r2", "a2", "2026-03-02 10:28"),
    reclaimed("r2", "a2", "2026-03-02 10:30"),
    started("r2", "a3", "2026-03-02 10:40", gpus=2),
    released("r2", "a3", "2026-03-02 11:40"),
    accepted("r2", "2026-03-02 12:00"),
]


def test_none_handling() -> None:
    result = evaluate_text(NONE_TERMS, NONE_EVENTS)
    (c,) = result.contracts
    a1 = alloc_row(c, "a1")
    # a reclaim with no notice has notice_lead 0 s (not none) → 0 s < 120 s → excluded whole
    assert a1["notice_lead"].total_seconds() == 0
    assert a1["excluded_by"] == 0
    # a1 is never replaced: replacement_wait is none, so `none > 15 minutes` is none and
    # `not none` is none: neither credit applies
    assert a1["replacement_wait"] is None
    assert a1["credit_0"] is None
    assert a1["credit_1"] is None
    # a2: lead 10:30 − 10:28 = 120 s, not < 120 s → charged 3.00 × 2 × 0.5 h = 3.00;
    #     wait 10 min: `not (10 min > 15 min)` is true → "fast restart" 0.50
    # a3: released → wait none → no credit; 3.00 × 2 × 1 h = 6.00
    assert lines(c) == [
        ("r1", "a1", "exclusion", "short notice", D("0.00")),
        ("r2", "a2", "charge", "rate 3.00 USD per gpu_hour", D("3.00")),
        ("r2", "a2", "credit", "fast restart", D("-0.50")),
        ("r2", "a3", "charge", "rate 3.00 USD per gpu_hour", D("6.00")),
    ]
    r1, r2 = run_row(c, "r1"), run_row(c, "r2")
    # r1 never accepted: cost_per_accepted_run is none, time_to_accept none
    assert (r1["accepted"], r1["net"], r1["cost_per_accepted_run"]) == (False, D("0.00"), None)
    assert r1["time_to_accept_hours"] is None
    # r2: 3.00 + 6.00 − 0.50 = 8.50
    assert (r2["accepted"], r2["cost_per_accepted_run"]) == (True, D("8.50"))
    (budget,) = c.budgets
    share, mean, count = budget.requirements
    # share(accepted) = 1 accepted ÷ 2 runs = 50% ≥ 50% → met, margin 0
    assert (share.value, share.verdict, share.margin) == (Fraction(1, 2), "met", 0)
    # mean skips r1's none: mean over {8.50} = 8.50 ≤ 9 → met, margin 0.50
    assert (mean.value, mean.verdict, mean.margin) == (Fraction("8.5"), "met", Fraction("0.5"))
    # count(accepted) = 1 ≥ 1
    assert (count.value, count.verdict) == (1, "met")
    assert result.verdict == "met"
    # promises: 2 reclaims; a1's lead 0 s < 120 s is a breach, a2's 120 s is not
    assert (c.promises.notice_breaches, c.promises.shortest_notice_us) == (1, 0)
    assert_ledger_sums_to_net(c)


def test_none_in_a_rate_condition_does_not_price() -> None:
    spot = """\
contract "quick" {
  currency USD
  rate 1.00 USD per gpu_hour when queue_wait < 5 minutes
  rate 2.00 USD per gpu_hour
}
"""
    c = contract_result(
        spot,
        [
            requested("r1", "2026-03-02 09:58"),
            started("r1", "a1", "2026-03-02 10:00", gpus=1),
            released("r1", "a1", "2026-03-02 11:00"),
            started("r2", "a2", "2026-03-02 10:00", gpus=1),
            released("r2", "a2", "2026-03-02 11:00"),
        ],
    )
    # a1: queue_wait 2 min < 5 min → 1.00 × 1 h = 1.00
    # a2: no request → queue_wait none → `none < 5 minutes` is none, counted as false →
    #     the next rate: 2.00 × 1 h = 2.00
    assert [x[4] for x in lines(c)] == [D("1.00"), D("2.00")]


# =========================================================================== caps


ALLOCATION_CAPS = """\
contract "allocation-percent" {
  currency USD
  rate 4.00 USD per gpu_hour
  credit "goodwill" 2.50 USD when end_reason == reclaimed
  credit "slow restart" 20% of charge when replacement_wait > 10 minutes
  cap credits at 25% of gross per allocation
}
contract "allocation-money" {
  currency USD
  rate 4.00 USD per gpu_hour
  credit "goodwill" 2.50 USD when end_reason == reclaimed
  credit "slow restart" 20% of charge when replacement_wait > 10 minutes
  cap credits at 1.999 USD per allocation
}
"""


def test_allocation_caps_percent_of_the_charge_line_and_a_limit_rounded_down() -> None:
    result = evaluate_text(
        ALLOCATION_CAPS,
        [
            started("r1", "a1", "2026-03-02 10:00", gpus=2),
            reclaimed("r1", "a1", "2026-03-02 11:00"),
            started("r1", "a2", "2026-03-02 11:30", gpus=2),
            released("r1", "a2", "2026-03-02 12:00"),
        ],
    )
    percent, money = result.contract("allocation-percent"), result.contract("allocation-money")
    # a1: charge 4.00 × 2 × 1 h = 8.00; credits 2.50 and 20% × 8.00 = 1.60 (wait 30 min)
    #     pool 2.50 + 1.60 = 4.10
    # a2: 4.00 × 2 × 0.5 h = 4.00; no credit
    # percent: 25% of the allocation's charge line 8.00 = 2.00 → gives back 4.10 − 2.00 = 2.10
    # money: 1.999 USD rounded down to 1.99 → gives back 4.10 − 1.99 = 2.11
    #   (rounded to nearest the limit would be 2.00 and the cut 2.10)
    # the credits keep their full amounts; each cut is a cap line of its own
    head = [
        ("r1", "a1", "charge", "rate 4.00 USD per gpu_hour", D("8.00")),
        ("r1", "a1", "credit", "goodwill", D("-2.50")),
        ("r1", "a1", "credit", "slow restart", D("-1.60")),
    ]
    tail = [("r1", "a2", "charge", "rate 4.00 USD per gpu_hour", D("4.00"))]
    assert lines(percent) == [
        *head,
        ("r1", "a1", "cap", "cap credits at 25% of gross per allocation", D("2.10")),
        *tail,
    ]
    assert lines(money) == [
        *head,
        ("r1", "a1", "cap", "cap credits at 1.999 USD per allocation", D("2.11")),
        *tail,
    ]
    cap = money.ledger().filter(pl.col("kind") == "cap").row(0, named=True)
    # the cap is line 13 of the file (the second contract starts on line 8)
    assert (cap["line"], cap["month"], cap["date"]) == (13, "2026-03", None)
    # gross 12.00; credits −4.10; net 12.00 − 4.10 + 2.10 = 10.00 and 12.00 − 4.10 + 2.11 = 10.01
    run = run_row(percent, "r1")
    assert (run["gross"], run["credits"], run["cap_cuts"], run["net"]) == (
        D("12.00"),
        D("-4.10"),
        D("2.10"),
        D("10.00"),
    )
    assert run_row(money, "r1")["net"] == D("10.01")
    assert_ledger_sums_to_net(percent)
    assert_ledger_sums_to_net(money)


def test_run_cap_percent_of_gross_rounds_the_limit_down() -> None:
    spot = """\
contract "run-cap" {
  currency USD
  rate 6.00 USD per gpu_hour
  credit "reclaim refund" 50% of charge when end_reason == reclaimed
  cap credits at 30% of gross per run
}
"""
    c = contract_result(
        spot,
        [
            started("r1", "a1", "2026-03-02 10:00:00", gpus=1),
            reclaimed("r1", "a1", "2026-03-02 11:40:18"),
        ],
    )
    # runtime 1 h 40 min 18 s = 6018 s; charge 6.00 × 6018/3600 = 10.03
    # credit 50% × 10.03 = 5.015 → 5.02 (half away from zero)
    # run cap: 30% × 10.03 = 3.009 → rounded down 3.00 (nearest would be 3.01)
    #   cut 5.02 − 3.00 = 2.02 → net 10.03 − 5.02 + 2.02 = 7.03
    assert lines(c) == [
        ("r1", "a1", "charge", "rate 6.00 USD per gpu_hour", D("10.03")),
        ("r1", "a1", "credit", "reclaim refund", D("-5.02")),
        ("r1", None, "cap", "cap credits at 30% of gross per run", D("2.02")),
    ]
    cap = c.ledger().row(2, named=True)
    # the cap is the file's line 5; run cap lines have no allocation, date or quantity
    assert (cap["line"], cap["month"], cap["date"], cap["quantity_gpu_hours"]) == (
        5,
        "2026-03",
        None,
        None,
    )
    assert run_row(c, "r1")["net"] == D("7.03")
    assert_ledger_sums_to_net(c)


def test_runs_credits_never_exceed_the_runs_gross() -> None:
    spot = """\
contract "outage" {
  currency USD
  rate 1.20 USD per gpu_hour
  credit "outage" 5.00 USD when end_reason == failed
}
"""
    c = contract_result(
        spot,
        [
            # r1: gross 1.20 × 1 × 0.5 h = 0.60 < credit 5.00
            started("r1", "a1", "2026-03-02 10:00", gpus=1),
            failed("r1", "a1", "2026-03-02 10:30"),
            # r2: gross 1.20 × 2 × 2 h = 4.80 plus 1.20 × 1 × 10/60 = 0.20 → 5.00 = the credit
            started("r2", "a2", "2026-03-02 10:00", gpus=2),
            released("r2", "a2", "2026-03-02 12:00"),
            started("r2", "a3", "2026-03-02 12:00", gpus=1),
            failed("r2", "a3", "2026-03-02 12:10"),
            # r3: gross 1.20 × 8 × 1 h = 9.60, credit 5.00
            started("r3", "a4", "2026-03-02 10:00", gpus=8),
            failed("r3", "a4", "2026-03-02 11:00"),
        ],
    )
    # r1: the implicit run rule gives back 5.00 − 0.60 = 4.40 → net 0.00
    # r2: credits 5.00 = gross 5.00 → nothing to give back, net 0.00
    # r3: 9.60 − 5.00 = 4.60
    assert lines(c) == [
        ("r1", "a1", "charge", "rate 1.20 USD per gpu_hour", D("0.60")),
        ("r1", "a1", "credit", "outage", D("-5.00")),
        ("r1", None, "cap", RUN_GROSS_RULE, D("4.40")),
        ("r2", "a2", "charge", "rate 1.20 USD per gpu_hour", D("4.80")),
        ("r2", "a3", "charge", "rate 1.20 USD per gpu_hour", D("0.20")),
        ("r2", "a3", "credit", "outage", D("-5.00")),
        ("r3", "a4", "charge", "rate 1.20 USD per gpu_hour", D("9.60")),
        ("r3", "a4", "credit", "outage", D("-5.00")),
    ]
    assert c.ledger().row(2, named=True)["line"] is None
    assert [run_row(c, r)["net"] for r in ("r1", "r2", "r3")] == [D("0.00"), D("0.00"), D("4.60")]
    # total: gross 0.60 + 5.00 + 9.60 = 15.20; credits −15.00; cuts 4.40; net 4.60
    t = c.totals
    assert (t.gross_minor, t.credits_minor, t.cap_cuts_minor, t.net_minor) == (
        1520,
        -1500,
        440,
        460,
    )
    assert_ledger_sums_to_net(c)


MONTHLY = """\
contract "monthly" {
  currency USD
  rate 6.00 USD per gpu_hour
  credit "goodwill" 1.00 USD when end_reason == released
  cap credits at 2.00 USD per month
}
"""


def test_month_cap_shared_by_largest_remainder_with_a_tie_broken_by_run_id() -> None:
    events = []
    # listed out of run_id order on purpose: the tie must follow run_id, not the input
    for run in ("r-b", "r-c", "r-a"):
        events += [
            started(run, f"{run}-1", "2026-03-02 10:00", gpus=1),
            released(run, f"{run}-1", "2026-03-02 11:00"),
        ]
    events += [
        started("r-d", "r-d-1", "2026-04-02 10:00", gpus=1),
        released("r-d", "r-d-1", "2026-04-02 11:00"),
    ]
    c = contract_result(MONTHLY, events)
    # each run: charge 6.00 × 1 h = 6.00, credit 1.00
    # March settles r-a, r-b, r-c: pool 3.00 > 2.00 → cut 1.00 = 100 cents, shared 1:1:1:
    #   100 × 100/300 = 33 rem 100 each; 99 given, 1 cent left, the remainders tie →
    #   the smallest run_id, r-a, gets it: r-a 0.34, r-b 0.33, r-c 0.33
    # April settles r-d alone: pool 1.00 ≤ 2.00 → no cut
    caps = c.ledger().filter(pl.col("kind") == "cap")
    assert caps.select("run_id", "alloc_id", "term", "line", "month", "amount").rows() == [
        ("r-a", None, "cap credits at 2.00 USD per month", 5, "2026-03", D("0.34")),
        ("r-b", None, "cap credits at 2.00 USD per month", 5, "2026-03", D("0.33")),
        ("r-c", None, "cap credits at 2.00 USD per month", 5, "2026-03", D("0.33")),
    ]
    # nets: 6.00 − 1.00 + 0.34 = 5.34; 5.33; 5.33; r-d 5.00
    assert [run_row(c, r)["net"] for r in ("r-a", "r-b", "r-c", "r-d")] == [
        D("5.34"),
        D("5.33"),
        D("5.33"),
        D("5.00"),
    ]
    # total 24.00 − 4.00 + 1.00 = 21.00
    assert c.totals.net_minor == 2100
    assert_ledger_sums_to_net(c)


def test_month_cap_percent_of_gross_largest_remainder() -> None:
    spot = """\
contract "monthly-percent" {
  currency USD
  rate 6.00 USD per gpu_hour
  credit "refund" 50% of charge when end_reason == reclaimed
  cap credits at 10% of gross per month
}
"""
    c = contract_result(
        spot,
        [
            # r1: reclaimed 8.00 (credit 4.00) and released 36.00
            started("r1", "a1", "2026-03-02 10:00", gpus=1),
            reclaimed("r1", "a1", "2026-03-02 11:20"),
            started("r1", "a2", "2026-03-02 12:00", gpus=6),
            released("r1", "a2", "2026-03-02 13:00"),
            # r2: reclaimed 4.00 (credit 2.00)
            started("r2", "a3", "2026-03-02 10:00", gpus=1),
            reclaimed("r2", "a3", "2026-03-02 10:40"),
            # r3: reclaimed 2.00 (credit 1.00)
            started("r3", "a4", "2026-03-02 10:00", gpus=1),
            reclaimed("r3", "a4", "2026-03-02 10:20"),
        ],
    )
    # charges: a1 6.00 × 80/60 = 8.00; a2 6.00 × 6 × 1 = 36.00; a3 6.00 × 40/60 = 4.00;
    #   a4 6.00 × 20/60 = 2.00 → March gross 50.00; limit 10% = 5.00
    # pool 4.00 + 2.00 + 1.00 = 7.00 → cut 2.00 = 200 cents shared 400:200:100 (of 700):
    #   r1 200 × 400/700 = 114 rem 200; r2 200 × 200/700 = 57 rem 100;
    #   r3 200 × 100/700 = 28 rem 400 → 199 given, 1 left → largest remainder r3 → 29
    caps = c.ledger().filter(pl.col("kind") == "cap")
    assert caps.select("run_id", "amount").rows() == [
        ("r1", D("1.14")),
        ("r2", D("0.57")),
        ("r3", D("0.29")),
    ]
    # nets: r1 44.00 − 4.00 + 1.14 = 41.14; r2 4.00 − 2.00 + 0.57 = 2.57;
    #   r3 2.00 − 1.00 + 0.29 = 1.29; total 45.00 = 50.00 − 7.00 + 2.00
    assert [run_row(c, r)["net"] for r in ("r1", "r2", "r3")] == [D("41.14"), D("2.57"), D("1.29")]
    assert c.totals.net_minor == 4500
    assert_ledger_sums_to_net(c)


def test_a_run_settles_in_the_month_its_last_allocation_ends() -> None:
    spot = """\
contract "month-boundary" {
  currency USD
  rate 6.00 USD per gpu_hour
  credit "refund" 50% of charge when end_reason == reclaimed
  cap credits at 10% of gross per month
}
"""
    c = contract_result(
        spot,
        [
            # r1 starts in February and ends in March
            started("r1", "a1", "2026-02-28 22:00", gpus=1),
            reclaimed("r1", "a1", "2026-02-28 23:00"),
            started("r1", "a2", "2026-02-28 23:30", gpus=1),
            released("r1", "a2", "2026-03-01 00:30"),
            # r2 entirely in February
            started("r2", "a3", "2026-02-27 10:00", gpus=1),
            reclaimed("r2", "a3", "2026-02-27 11:00"),
        ],
    )
    # every allocation: 6.00 × 1 h = 6.00; reclaimed ones credit 50% = 3.00
    # r1 settles in March (a2 ends 2026-03-01): March gross = r1's 12.00 (its February charge
    #   included) → limit 1.20; pool 3.00 → cut 1.80; net 12.00 − 3.00 + 1.80 = 10.80
    # r2 settles in February: gross 6.00 → limit 0.60; pool 3.00 → cut 2.40;
    #   net 6.00 − 3.00 + 2.40 = 5.40
    # charges are dated by their allocation's end; credits and caps by the settlement month
    assert c.ledger().select("run_id", "alloc_id", "kind", "month", "date", "amount").rows() == [
        ("r1", "a1", "charge", "2026-02", date(2026, 2, 28), D("6.00")),
        ("r1", "a1", "credit", "2026-03", None, D("-3.00")),
        ("r1", "a2", "charge", "2026-03", date(2026, 3, 1), D("6.00")),
        ("r1", None, "cap", "2026-03", None, D("1.80")),
        ("r2", "a3", "charge", "2026-02", date(2026, 2, 27), D("6.00")),
        ("r2", "a3", "credit", "2026-02", None, D("-3.00")),
        ("r2", None, "cap", "2026-02", None, D("2.40")),
    ]
    assert (run_row(c, "r1")["settle_month"], run_row(c, "r2")["settle_month"]) == (
        "2026-03",
        "2026-02",
    )
    assert [run_row(c, r)["net"] for r in ("r1", "r2")] == [D("10.80"), D("5.40")]
    assert_ledger_sums_to_net(c)


BILLING_DAYS = """\
contract "utc-days" {
  currency USD
  rate 6.00 USD per gpu_hour
  credit "refund" 50% of charge when end_reason == reclaimed
  cap credits at 1.00 USD per month
}
contract "new-york-days" {
  currency USD
  rate 6.00 USD per gpu_hour
  billing period ends 17:00 "America/New_York"
  credit "refund" 50% of charge when end_reason == reclaimed
  cap credits at 1.00 USD per month
}
"""


def test_billing_period_ending_17_00_new_york_moves_a_line_across_a_month() -> None:
    result = evaluate_text(
        BILLING_DAYS,
        [
            # 2026-03-31 21:30 UTC is 17:30 in New York (EDT, UTC−4 since 2026-03-08):
            # past 17:00, so in the billing day named 2026-04-01
            started("r1", "a1", "2026-03-31 20:00", gpus=1),
            reclaimed("r1", "a1", "2026-03-31 21:30"),
            # 20:59 UTC is 16:59 in New York: still billing day 2026-03-31
            started("r2", "a2", "2026-03-31 19:59", gpus=1),
            reclaimed("r2", "a2", "2026-03-31 20:59"),
            # 21:00 UTC is 17:00 in New York exactly: the first instant of day 2026-04-01
            started("r3", "a3", "2026-03-31 20:00", gpus=1),
            released("r3", "a3", "2026-03-31 21:00"),
        ],
    )
    utc, ny = result.contract("utc-days"), result.contract("new-york-days")
    # charges: a1 6.00 × 1.5 h = 9.00 (credit 4.50); a2 6.00 × 1 h = 6.00 (credit 3.00)
    charge_dates = lambda c: (  # noqa: E731
        c.ledger().filter(pl.col("kind") == "charge").select("alloc_id", "month", "date").rows()
    )
    # a3: 6.00 × 1 h = 6.00, released: no credit (its pool of 0 takes no share of a cut)
    assert charge_dates(utc) == [
        ("a1", "2026-03", date(2026, 3, 31)),
        ("a2", "2026-03", date(2026, 3, 31)),
        ("a3", "2026-03", date(2026, 3, 31)),
    ]
    assert charge_dates(ny) == [
        ("a1", "2026-04", date(2026, 4, 1)),
        ("a2", "2026-03", date(2026, 3, 31)),
        ("a3", "2026-04", date(2026, 4, 1)),
    ]
    # UTC days: both runs settle in March: pool 4.50 + 3.00 = 7.50, limit 1.00, cut 6.50 =
    #   650 cents shared 450:300 → r1 650 × 450/750 = 390, r2 650 × 300/750 = 260 (exact)
    #   nets 9.00 − 4.50 + 3.90 = 8.40 and 6.00 − 3.00 + 2.60 = 5.60
    assert [run_row(utc, r)["net"] for r in ("r1", "r2")] == [D("8.40"), D("5.60")]
    # New York days: r1 settles in April alone: cut 4.50 − 1.00 = 3.50 → net 8.00;
    #   r2 in March alone: cut 3.00 − 1.00 = 2.00 → net 5.00
    assert [run_row(ny, r)["settle_month"] for r in ("r1", "r2", "r3")] == [
        "2026-04",
        "2026-03",
        "2026-04",
    ]
    assert [run_row(ny, r)["net"] for r in ("r1", "r2")] == [D("8.00"), D("5.00")]
    # totals: 8.40 + 5.60 + 6.00 = 20.00 and 8.00 + 5.00 + 6.00 = 19.00
    assert (utc.totals.net_minor, ny.totals.net_minor) == (2000, 1900)
    assert [run_row(c, "r3")["net"] for c in (utc, ny)] == [D("6.00"), D("6.00")]
    assert_ledger_sums_to_net(utc)
    assert_ledger_sums_to_net(ny)


def test_contract_cap_after_month_caps_shared_by_largest_remainder() -> None:
    spot = """\
contract "contract-cap" {
  currency USD
  rate 6.00 USD per gpu_hour
  credit "refund" 50% of charge when end_reason == reclaimed
  cap credits at 5.00 USD per month
  cap credits at 25% of gross per contract
}
"""
    c = contract_result(
        spot,
        [
            started("r1", "a1", "2026-02-10 10:00", gpus=2),
            reclaimed("r1", "a1", "2026-02-10 11:00"),
            started("r2", "a2", "2026-03-10 10:00", gpus=1),
            reclaimed("r2", "a2", "2026-03-10 11:00"),
        ],
    )
    # r1 (February): 6.00 × 2 × 1 h = 12.00, credit 6.00; February pool 6.00 > 5.00 →
    #   month cut 1.00 → r1's pool 5.00
    # r2 (March): 6.00 × 1 h = 6.00, credit 3.00 ≤ 5.00 → no month cut
    # contract: limit 25% of total gross 18.00 = 4.50; pool 5.00 + 3.00 = 8.00 → cut 3.50 =
    #   350 cents shared 500:300 (of 800): r1 350 × 500/800 = 218 rem 600;
    #   r2 350 × 300/800 = 131 rem 200; 349 given, 1 left → r1 (600 > 200) → 219
    assert c.ledger().filter(pl.col("kind") == "cap").select(
        "run_id", "term", "month", "amount"
    ).rows() == [
        ("r1", "cap credits at 5.00 USD per month", "2026-02", D("1.00")),
        ("r1", "cap credits at 25% of gross per contract", "2026-02", D("2.19")),
        ("r2", "cap credits at 25% of gross per contract", "2026-03", D("1.31")),
    ]
    # nets: r1 12.00 − 6.00 + 1.00 + 2.19 = 9.19; r2 6.00 − 3.00 + 1.31 = 4.31
    # total 13.50 = 18.00 − 9.00 + 1.00 + 3.50
    assert [run_row(c, r)["net"] for r in ("r1", "r2")] == [D("9.19"), D("4.31")]
    assert (c.totals.cap_cuts_minor, c.totals.net_minor) == (450, 1350)
    assert_ledger_sums_to_net(c)


def test_overlapping_allocations_in_one_run() -> None:
    spot = """\
contract "overlap" {
  currency USD
  rate 2.50 USD per gpu_hour
  credit "quick replacement" 0.25 USD when replacement_wait == 0 seconds
}
"""
    c = contract_result(
        spot,
        [
            started("r1", "a-x", "2026-03-02 10:00", gpus=4),
            started("r1", "a-w", "2026-03-02 10:00", gpus=4),
            started("r1", "a-z", "2026-03-02 10:30", gpus=2),
            reclaimed("r1", "a-w", "2026-03-02 11:00"),
            started("r1", "a-v", "2026-03-02 11:00", gpus=4),
            released("r1", "a-z", "2026-03-02 11:30"),
            released("r1", "a-x", "2026-03-02 12:00"),
            released("r1", "a-v", "2026-03-02 12:15"),
        ],
    )
    # attempts by (start, alloc_id): a-w 1, a-x 2 (same start, a-w < a-x), a-z 3, a-v 4
    # a-w: reclaimed 11:00; the first other allocation starting at or after 11:00 is a-v at
    #   11:00 → replacement_wait 0 s → credit 0.25 (a-x and a-z started before, they don't count)
    # charges: a-w 2.50 × 4 × 1 h = 10.00; a-x 2.50 × 4 × 2 h = 20.00;
    #   a-z 2.50 × 2 × 1 h = 5.00; a-v 2.50 × 4 × 1.25 h = 12.50
    assert lines(c) == [
        ("r1", "a-w", "charge", "rate 2.50 USD per gpu_hour", D("10.00")),
        ("r1", "a-w", "credit", "quick replacement", D("-0.25")),
        ("r1", "a-x", "charge", "rate 2.50 USD per gpu_hour", D("20.00")),
        ("r1", "a-z", "charge", "rate 2.50 USD per gpu_hour", D("5.00")),
        ("r1", "a-v", "charge", "rate 2.50 USD per gpu_hour", D("12.50")),
    ]
    run = run_row(c, "r1")
    # metered 4 + 8 + 2 + 5 = 19 GPU-h (overlap is not netted out); a-w had no checkpoint:
    #   its whole hour is lost, 4 GPU-h
    assert (run["allocations"], run["reclaims"]) == (4, 1)
    assert run["metered_gpu_hours"] == D("19.000000")
    assert run["lost_gpu_hours"] == D("4.000000")
    # net 10.00 + 20.00 + 5.00 + 12.50 − 0.25 = 47.25; settles by the last end (12:15)
    assert (run["net"], run["settle_month"]) == (D("47.25"), "2026-03")
    assert_ledger_sums_to_net(c)


# =========================================================================== budgets

DISTRIBUTION = """\
contract "ten-an-hour" {
  currency USD
  rate 10.00 USD per gpu_hour
}
budget "distribution" {
  require p95(cost_per_accepted_run) <= 90 USD
  require p50(cost_per_accepted_run) <= 25 USD
  require max(cost_per_accepted_run) <= 100 USD
  require mean(cost_per_accepted_run) <= 40 USD
}
"""


def _runs_of_hours(hours: dict[str, int], accepted_runs: set[str]) -> list[dict[str, object]]:
    """One 1-GPU allocation per run, ``hours[run]`` long, from 2026-03-02 00:00."""
    events = []
    for run, h in hours.items():
        events += [
            started(run, f"{run}-a", "2026-03-02 00:00", gpus=1),
            released(run, f"{run}-a", f"2026-03-02 {h:02d}:00"),
        ]
        if run in accepted_runs:
            events.append(accepted(run, "2026-03-02 20:00"))
    return events


def test_p95_over_five_runs_by_linear_interpolation() -> None:
    hours = {"r1": 4, "r2": 1, "r3": 10, "r4": 3, "r5": 2, "r6": 1}
    result = evaluate_text(DISTRIBUTION, _runs_of_hours(hours, {"r1", "r2", "r3", "r4", "r5"}))
    (c,) = result.contracts
    # nets 10.00 × hours: r1 40, r2 10, r3 100, r4 30, r5 20 (accepted); r6 10 (not accepted,
    # so its cost_per_accepted_run is none and every aggregate skips it)
    # sorted accepted: 10, 20, 30, 40, 100
    p95, p50, top, mean = c.budgets[0].requirements
    # p95: position 0.95 × (5 − 1) = 3.8 → 40 + 0.8 × (100 − 40) = 88 ≤ 90 → met, margin 2
    assert (p95.value, p95.verdict, p95.margin) == (Fraction(88), "met", Fraction(2))
    # p50: position 0.5 × 4 = 2 → 30 > 25 → not met, margin 25 − 30 = −5
    assert (p50.value, p50.verdict, p50.margin) == (Fraction(30), "not met", Fraction(-5))
    # max 100 ≤ 100 → met, margin 0
    assert (top.value, top.verdict, top.margin) == (Fraction(100), "met", Fraction(0))
    # mean (10 + 20 + 30 + 40 + 100) / 5 = 40 ≤ 40 → met (r6's 10 would make it 35)
    assert (mean.value, mean.verdict) == (Fraction(40), "met")
    assert not c.budgets[0].met
    assert result.verdict == "not met"
    assert c.totals.cost_per_accepted_run == {
        "p50": Fraction(30),
        "p95": Fraction(88),
        "max": Fraction(100),
    }
    doc = json.loads(json_document(result))
    (contract,) = doc["contracts"]
    assert contract["cost_per_accepted_run"] == {"p50": "30.00", "p95": "88.00", "max": "100.00"}
    first = contract["budgets"][0]["requirements"][0]
    assert (first["value"], first["limit"], first["margin"], first["unit"]) == (
        "88.00",
        "90.00",
        "2.00",
        "USD",
    )


EMPTY_BUDGET = """\
contract "flat" {
  currency USD
  rate 1.00 USD per gpu_hour
}
budget "needs-accepted-runs" {
  require p95(cost_per_accepted_run) <= 100 USD
  require share(time_to_accept < 72 hours) >= 90%
  require count(accepted) == 0
}
"""


def test_budget_over_an_empty_set_is_not_measurable_and_not_met() -> None:
    result = evaluate_text(EMPTY_BUDGET, _runs_of_hours({"r1": 2, "r2": 3}, set()))
    (c,) = result.contracts
    p95, share, count = c.budgets[0].requirements
    # no run was accepted: cost_per_accepted_run is none for both → p95 over nothing is none
    assert (p95.value, p95.margin, p95.verdict) == (None, None, "not measurable")
    # time_to_accept is none for both → the condition is none for both → share over no run
    assert (share.value, share.verdict) == (None, "not measurable")
    # count is 0 over an empty set, not none: 0 == 0 holds
    assert (count.value, count.verdict) == (0, "met")
    assert not c.budgets[0].met
    assert result.verdict == "not met"
    assert c.totals.cost_per_accepted_run == {"p50": None, "p95": None, "max": None}
    requirement = json.loads(json_document(result))["contracts"][0]["budgets"][0]["requirements"][0]
    assert requirement == {
        "require": "p95(cost_per_accepted_run) <= 100 USD",
        "line": 6,
        "value": None,
        "limit": "100.00",
        "unit": "USD",
        "margin": None,
        "verdict": "not measurable",
    }


# =========================================================================== exact money


def test_no_float_on_the_money_path() -> None:
    spot = """\
contract "per-gpu-second" {
  currency USD
  rate 0.1 USD per gpu_second
}
budget "exact" {
  require sum(net) >= 3 USD
  require mean(net) >= 0.3 USD
}
"""
    events = []
    for i in range(10):
        events += [
            started(f"r{i}", f"a{i}", "2026-03-02 10:00:00", gpus=3),
            released(f"r{i}", f"a{i}", "2026-03-02 10:00:01"),
        ]
    result = evaluate_text(spot, events)
    (c,) = result.contracts
    # each run: 0.1 USD per GPU-second × 3 GPUs × 1 s = 0.30 exactly
    assert [x[4] for x in lines(c)] == [D("0.30")] * 10
    # 10 × 0.30 = 3.00 exactly; in binary floating point 0.3 summed ten times is
    # 2.9999999999999996 and the mean 0.29999999999999993: both requirements would fail
    total, mean = c.budgets[0].requirements
    assert (total.value, total.verdict, total.margin) == (Fraction(3), "met", 0)
    assert (mean.value, mean.verdict, mean.margin) == (Fraction(3, 10), "met", 0)
    assert c.totals.net_minor == 300


def test_an_exact_tie_is_not_lost_to_binary_floating_point() -> None:
    spot = """\
contract "tie" {
  currency USD
  rate 2.10 USD per gpu_hour
}
"""
    c = contract_result(
        spot,
        [started("r1", "a1", "2026-03-02 10:00", gpus=1), released("r1", "a1", "2026-03-02 10:03")],
    )
    # 2.10 × 1 × 180/3600 = 0.105 exactly → half away from zero 0.11
    # (the float 0.105 is 0.10499999999999999611… and would round to 0.10)
    assert lines(c)[0][4] == D("0.11")
    assert alloc_row(c, "a1")["charge"] == D("0.105")


def test_a_floating_point_price_is_read_as_the_decimal_it_spells() -> None:
    spot = """\
contract "market-even" {
  currency USD
  rounding half_even
  rate trace.price per gpu_hour
}
"""
    frame = trace_frame(
        [
            started("r1", "a1", "2026-03-02 10:00", gpus=1, price="2.1"),
            released("r1", "a1", "2026-03-02 10:03"),
        ]
    ).with_columns(pl.col("price").cast(pl.Float64))
    c = contract_result(spot, frame)
    # price 2.1 (not the binary 2.100000000000000088…) × 1 × 180/3600 = 0.105 exactly →
    # half even 0.10; the binary value gives 0.10500000000000000444… → 0.11
    assert lines(c)[0][4] == D("0.10")


def test_p95_is_exact_where_floating_point_is_not() -> None:
    spot = """\
contract "cents" {
  currency USD
  rate 0.10 USD per gpu_hour
}
budget "exact-p95" {
  require p95(cost_per_accepted_run) >= 0.64 USD
}
"""
    hours = {"r1": 1, "r2": 2, "r3": 3, "r4": 4, "r5": 7}
    result = evaluate_text(spot, _runs_of_hours(hours, set(hours)))
    (req,) = result.contracts[0].budgets[0].requirements
    # nets 0.10, 0.20, 0.30, 0.40, 0.70; p95: position 3.8 → 0.40 + 0.8 × 0.30 = 0.64 exactly
    # (numpy's float percentile gives 0.6399999999999999, which is not ≥ 0.64)
    assert req.value == Fraction(16, 25)
    assert (req.verdict, req.margin) == ("met", 0)


def test_mean_of_per_run_quotients_is_exact() -> None:
    spot = """\
contract "flat" {
  currency USD
  rate 1.00 USD per gpu_hour
}
budget "lost-share" {
  require mean(lost_gpu_time / metered_gpu_time) >= 25%
  require share(lost_gpu_time / metered_gpu_time > 30%) >= 75%
  require p50(lost_gpu_time / metered_gpu_time) <= 1 / 3
}
"""
    events = []
    for run in ("r1", "r2", "r3"):
        # 1 GPU-h reclaimed with no checkpoint (all lost), then 2 GPU-h released
        events += [
            started(run, f"{run}-a", "2026-03-02 10:00", gpus=1),
            reclaimed(run, f"{run}-a", "2026-03-02 11:00"),
            started(run, f"{run}-b", "2026-03-02 11:00", gpus=1),
            released(run, f"{run}-b", "2026-03-02 13:00"),
        ]
    events += [
        started("r4", "r4-a", "2026-03-02 10:00", gpus=1),
        released("r4", "r4-a", "2026-03-02 11:00"),
    ]
    mean, share, median = evaluate_text(spot, events).contracts[0].budgets[0].requirements
    # lost / metered: r1, r2, r3 1/3 each; r4 0/1 = 0
    # mean (1/3 + 1/3 + 1/3 + 0) / 4 = 1/4 = 25% exactly ≥ 25% → met, margin 0
    # (quotients cut to 20 places, 0.33333333333333333333, give 0.2499…9975: not met)
    assert (mean.value, mean.verdict, mean.margin) == (Fraction(1, 4), "met", 0)
    # 1/3 > 30% for r1–r3 → 3 of 4 = 75% → met
    assert (share.value, share.verdict) == (Fraction(3, 4), "met")
    # p50 of 0, 1/3, 1/3, 1/3: position 1.5 → 1/3 + 0.5 × 0 = 1/3 ≤ 1/3 → met
    assert (median.value, median.verdict, median.margin) == (Fraction(1, 3), "met", 0)


def test_many_lines_sum_exactly() -> None:
    spot = """\
contract "pennies" {
  currency USD
  rate 0.1 USD per gpu_second
}
"""
    events = []
    for i in range(30):
        events += [
            started("r1", f"a{i:02d}", f"2026-03-02 10:{i:02d}:00", gpus=1 + i % 2),
            released("r1", f"a{i:02d}", f"2026-03-02 10:{i:02d}:01"),
        ]
    c = contract_result(spot, events)
    # 15 lines of 0.1 × 1 × 1 s = 0.10 and 15 of 0.1 × 2 × 1 s = 0.20 → 15 × 0.30 = 4.50
    # (the float sum of 0.1 and 0.2 fifteen times each is 4.500000000000002)
    assert c.totals.net_minor == 450
    assert run_row(c, "r1")["net"] == D("4.50")
    assert_ledger_sums_to_net(c)


# =========================================================================== bad paths


def test_unpriced_allocation_is_an_error_naming_it() -> None:
    spot = """\
contract "spot-only" {
  currency USD
  rate 2.00 USD per gpu_hour when capacity == spot
}
"""
    events = [
        started("r1", "a1", "2026-03-02 10:00"),
        released("r1", "a1", "2026-03-02 11:00"),
        started("r1", "a2", "2026-03-02 10:00", capacity="on_demand", sku="A100-80G"),
        released("r1", "a2", "2026-03-02 11:00"),
    ]
    with pytest.raises(ContractlangError) as exc:
        evaluate_text(spot, events)
    assert codes(exc) == ["E401"]
    (diag,) = exc.value.diagnostics
    assert diag.message == (
        "contract `spot-only` prices no rate for 1 allocation(s): "
        "`a2` of run `r1` (on_demand, A100-80G)"
    )
    assert diag.span.line == 1


def test_an_allocation_with_nothing_to_bill_needs_no_price() -> None:
    spot = """\
contract "spot-only" {
  currency USD
  rate 2.00 USD per gpu_hour when capacity == spot
  exclude "on-demand is billed elsewhere" allocation when capacity == on_demand
}
"""
    c = contract_result(
        spot,
        [
            started("r1", "a1", "2026-03-02 10:00", capacity="on_demand", gpus=2),
            released("r1", "a1", "2026-03-02 11:00"),
        ],
    )
    # excluded whole: 2 GPU-h not charged, no price needed, no charge
    assert lines(c) == [("r1", "a1", "exclusion", "on-demand is billed elsewhere", D("0.00"))]
    assert c.totals.net_minor == 0


def test_budget_in_another_currency() -> None:
    spot = """\
contract "usd" {
  currency USD
  rate 2.00 USD per gpu_hour
}
budget "euro-budget" {
  require p95(cost_per_accepted_run) <= 100 EUR
}
"""
    with pytest.raises(ContractlangError) as exc:
        evaluate_text(spot, _runs_of_hours({"r1": 1}, {"r1"}))
    assert codes(exc) == ["E402"]
    (diag,) = exc.value.diagnostics
    assert diag.message == "budget `euro-budget` is in EUR but contract `usd` bills in USD"
    assert diag.span.line == 6


def test_trace_column_a_term_reads_is_missing() -> None:
    spot = """\
contract "discounted" {
  currency USD
  rate 2.00 USD per gpu_hour
  credit "volume discount" trace.discount per gpu_hour * gpus * runtime when true
}
"""
    with pytest.raises(ContractlangError) as exc:
        evaluate_text(spot, _runs_of_hours({"r1": 1}, {"r1"}))
    assert codes(exc) == ["E403"]
    (diag,) = exc.value.diagnostics
    assert diag.message == "the trace has no column `discount` (read by `trace.discount`)"
    assert (diag.span.line, diag.span.col) == (4, 28)  # 27 characters precede `trace.discount`


def test_trace_column_a_term_reads_is_not_numeric() -> None:
    spot = """\
contract "tiered" {
  currency USD
  rate trace.tier per gpu_hour
}
"""
    events = [
        started("r1", "a1", "2026-03-02 10:00", tier="gold"),
        released("r1", "a1", "2026-03-02 11:00"),
    ]
    with pytest.raises(ContractlangError) as exc:
        evaluate_text(spot, events)
    assert codes(exc) == ["E404"]
    (diag,) = exc.value.diagnostics
    assert diag.message == "trace column `tier` holds text, not numbers"
    assert (diag.span.line, diag.span.col) == (3, 8)


def test_a_float_extra_column_is_read_as_the_decimal_it_spells() -> None:
    spot = """\
contract "tiered" {
  currency USD
  rounding half_even
  rate trace.tier_price per gpu_hour
}
"""
    frame = trace_frame(
        [
            started("r1", "a1", "2026-03-02 10:00", gpus=1, tier_price=2.7),
            released("r1", "a1", "2026-03-02 10:01"),
        ]
    )
    assert frame.schema["tier_price"] == pl.Float64
    c = contract_result(spot, frame)
    # 2.7 × 1 × 60/3600 = 0.045 exactly → half even 0.04; the binary value behind the float,
    # 2.70000000000000017763…, would give 0.04500000000000000296… → 0.05
    assert alloc_row(c, "a1")["charge"] == D("0.045")
    assert lines(c)[0][4] == D("0.04")


# =========================================================================== JSON

PROMISES_BUDGET = (
    PROMISES
    + """\
budget "promise-budget" {
  require p95(cost_per_accepted_run) <= 20 USD
  require mean(lost_gpu_time / metered_gpu_time) <= 5%
  require p95(time_to_accept) <= 72 hours
  require share(accepted) >= 90%
}
"""
)


def test_json_report_field_by_field() -> None:
    doc = json.loads(json_document(evaluate_text(PROMISES_BUDGET, PROMISES_EVENTS)))
    # the allocations of test_both_promises_read_by_terms, GPU-time in GPU-minutes:
    #   metered a1 4 × 60 = 240, a2 240, a3 240, a4 4 × 30 = 120 → 840 = 14 GPU-h
    #   excluded a1's replay 4 × 20 = 80 → 1.333333 GPU-h; billable 760 → 12.666667 GPU-h
    #   lost a1 4 × 20 = 80; a3 (r2 has no checkpoint) the whole 4 × 60 = 240 → 320 = 5.333333
    #   lost steps: a1 600 − 400 = 200; a3's end has no step (none, skipped); released 0 → 200
    # budget:
    #   p95(cost_per_accepted_run): only r1 is accepted → 15.36 ≤ 20 → met, margin 4.64
    #   mean(lost / metered): r1 80/480 = 1/6, r2 240/360 = 2/3 → (1/6 + 2/3)/2 = 5/12
    #     = 41.6667% > 5% → not met, margin 5 − 41.6667 = −36.6667 (percent)
    #   p95(time_to_accept): r1 13:00 − first request 09:30 = 3.5 h (r2 none, skipped)
    #     ≤ 72 → met, margin 68.5 hours
    #   share(accepted) = 1/2 = 50% < 90% → not met, margin −40
    # inputs: the terms' text by its SHA-256, the trace by the documented digest, computed here
    # row by row by a second implementation (support/digest.py)
    assert doc == {
        "schema": "contractlang.evaluate/1",
        "verdict": "not met",
        "terms": [
            {"file": "terms.spot", "sha256": hashlib.sha256(PROMISES_BUDGET.encode()).hexdigest()}
        ],
        "trace": {
            "events": 13,
            "runs": 2,
            "allocations": 4,
            "from": "2026-03-02T09:30:00+00:00",
            "to": "2026-03-02T13:00:00+00:00",
            "digest": support_digest(PROMISES_EVENTS),
        },
        "contracts": [
            {
                "name": "promises",
                "currency": "USD",
                "precision": 2,
                "rounding": "half_up",
                "totals": {
                    "runs": 2,
                    "accepted_runs": 1,
                    "allocations": 4,
                    "metered_gpu_hours": "14.000000",
                    "excluded_gpu_hours": "1.333333",
                    "billable_gpu_hours": "12.666667",
                    "gross": "30.40",  # 6.40 + 9.60 + 9.60 + 4.80
                    "credits": "-0.64",
                    "cap_cuts": "0.00",
                    "net": "29.76",
                },
                "lost": {"gpu_hours": "5.333333", "steps": 200},
                "cost_per_accepted_run": {"p50": "15.36", "p95": "15.36", "max": "15.36"},
                "promises": {
                    "reclaim_notice": {
                        "promised_seconds": "30",
                        "reclaims": 2,
                        "breaches": 1,  # a1's 10 s
                        "shortest_seconds": "10",
                    },
                    "restart": {
                        "promised_seconds": "900",
                        "replacements": 2,  # a1 after 20 min, a3 after 10 min
                        "breaches": 1,  # a1's 20 min > 15 min
                        "never_replaced": 0,
                        "longest_wait_seconds": "1200",
                    },
                },
                "budgets": [
                    {
                        "name": "promise-budget",
                        "met": False,
                        "requirements": [
                            {
                                "require": "p95(cost_per_accepted_run) <= 20 USD",
                                "line": 12,
                                "value": "15.36",
                                "limit": "20.00",
                                "unit": "USD",
                                "margin": "4.64",
                                "verdict": "met",
                            },
                            {
                                "require": "mean(lost_gpu_time / metered_gpu_time) <= 5%",
                                "line": 13,
                                "value": "41.6667",
                                "limit": "5.0000",
                                "unit": "%",
                                "margin": "-36.6667",
                                "verdict": "not met",
                            },
                            {
                                "require": "p95(time_to_accept) <= 72 hours",
                                "line": 14,
                                "value": "3.5000",
                                "limit": "72.0000",
                                "unit": "hours",
                                "margin": "68.5000",
                                "verdict": "met",
                            },
                            {
                                "require": "share(accepted) >= 90%",
                                "line": 15,
                                "value": "50.0000",
                                "limit": "90.0000",
                                "unit": "%",
                                "margin": "-40.0000",
                                "verdict": "not met",
                            },
                        ],
                    }
                ],
                "warnings": [],
            }
        ],
        "warnings": [],
    }


def test_json_report_is_byte_for_byte_deterministic() -> None:
    first = json_document(evaluate_text(PROMISES_BUDGET, PROMISES_EVENTS))
    again = json_document(evaluate_text(PROMISES_BUDGET, PROMISES_EVENTS))
    # the same events in another row order describe the same trace
    shuffled = json_document(evaluate_text(PROMISES_BUDGET, list(reversed(PROMISES_EVENTS))))
    assert first == again == shuffled
    assert first.endswith("}\n")
    assert "<frame>" not in first


# =========================================================================== the command line


@pytest.fixture
def trace_file(tmp_path: Path) -> Path:
    path = tmp_path / "trace.parquet"
    trace_frame(PROMISES_EVENTS).write_parquet(path)
    return path


def test_cli_exit_0_when_no_budget(tmp_path: Path, trace_file: Path) -> None:
    spot = write_spot(tmp_path / "promises.spot", PROMISES)
    result = CliRunner().invoke(app, ["evaluate", str(spot), str(trace_file), "--format", "json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert (doc["verdict"], doc["contracts"][0]["totals"]["net"]) == ("no budget", "29.76")


def test_cli_exit_0_when_every_budget_is_met(tmp_path: Path, trace_file: Path) -> None:
    spot = write_spot(
        tmp_path / "promises.spot",
        PROMISES + 'budget "loose" {\n  require p95(cost_per_accepted_run) <= 20 USD\n}\n',
    )
    result = CliRunner().invoke(app, ["evaluate", str(spot), str(trace_file)])
    # 15.36 ≤ 20
    assert result.exit_code == 0, result.output


def test_cli_exit_1_when_a_budget_is_not_met(tmp_path: Path, trace_file: Path) -> None:
    spot = write_spot(tmp_path / "promises.spot", PROMISES_BUDGET)
    result = CliRunner().invoke(app, ["evaluate", str(spot), str(trace_file), "--format", "json"])
    assert result.exit_code == 1, result.output
    assert json.loads(result.stdout)["verdict"] == "not met"


def test_cli_exit_1_when_a_budget_is_not_measurable(tmp_path: Path) -> None:
    spot = write_spot(tmp_path / "flat.spot", EMPTY_BUDGET)
    trace = tmp_path / "trace.parquet"
    trace_frame(_runs_of_hours({"r1": 2}, set())).write_parquet(trace)
    result = CliRunner().invoke(app, ["evaluate", str(spot), str(trace)])
    assert result.exit_code == 1, result.output


def test_cli_exit_2_on_an_unpriced_allocation(tmp_path: Path, trace_file: Path) -> None:
    spot = write_spot(
        tmp_path / "on-demand.spot",
        'contract "on-demand" {\n  currency USD\n  rate 2.00 USD per gpu_hour '
        "when capacity == on_demand\n}\n",
    )
    result = CliRunner().invoke(app, ["evaluate", str(spot), str(trace_file)])
    assert result.exit_code == 2
    assert "error[E401]" in result.stderr
    assert "prices no rate for 4 allocation(s)" in result.stderr
    assert "Traceback" not in result.output


def test_cli_exit_2_on_a_missing_trace_column(tmp_path: Path, trace_file: Path) -> None:
    spot = write_spot(
        tmp_path / "bonus.spot",
        'contract "bonus" {\n  currency USD\n  rate trace.bonus per gpu_hour\n}\n',
    )
    result = CliRunner().invoke(app, ["evaluate", str(spot), str(trace_file)])
    assert result.exit_code == 2
    assert "error[E403]" in result.stderr


def test_cli_exit_2_on_a_bad_output_path(tmp_path: Path, trace_file: Path) -> None:
    spot = write_spot(tmp_path / "promises.spot", PROMISES)
    result = CliRunner().invoke(
        app, ["evaluate", str(spot), str(trace_file), "--ledger", str(tmp_path / "ledger.txt")]
    )
    assert result.exit_code == 2
    assert "`.parquet` or `.csv`" in result.stderr


@pytest.mark.parametrize(
    ("ledger_name", "runs_name"), [("l.parquet", "r.csv"), ("l.csv", "r.parquet")]
)
def test_cli_ledger_and_runs_files_read_back_equal(
    tmp_path: Path, trace_file: Path, ledger_name: str, runs_name: str
) -> None:
    spot = write_spot(tmp_path / "promises.spot", PROMISES)
    ledger_path, runs_path = tmp_path / ledger_name, tmp_path / runs_name
    result = CliRunner().invoke(
        app,
        [
            "evaluate",
            str(spot),
            str(trace_file),
            "--ledger",
            str(ledger_path),
            "--runs",
            str(runs_path),
        ],
    )
    assert result.exit_code == 0, result.output
    expected = evaluate_text(PROMISES, PROMISES_EVENTS, filename=str(spot))
    ledger, runs = expected.ledger(), expected.runs_table()

    def read(path: Path, like: pl.DataFrame) -> pl.DataFrame:
        if path.suffix == ".csv":
            return pl.read_csv(path, schema=like.schema)
        return pl.read_parquet(path)

    assert read(ledger_path, ledger).equals(ledger)
    assert read(runs_path, runs).equals(runs)
    # the file's amounts sum to the net total 29.76 exactly
    assert sum(read(ledger_path, ledger)["amount"].to_list(), D(0)) == D("29.76")
    assert ledger.height == 6
    assert runs["net"].to_list() == [D("15.36"), D("14.40")]


# =========================================================================== explain, golden

NORTHWIND = """\
# Northwind Cloud, spot H100, third draft (docs/language.md's example, with a tighter run cap).
contract "northwind-spot-v3" {
  currency USD

  rate 2.10 USD per gpu_hour when capacity == spot and sku == "H100-80G"
  rate 4.25 USD per gpu_hour when capacity == on_demand

  billing increment 1 minute
  billing minimum 1 minute

  promise reclaim notice 30 seconds
  promise restart within 15 minutes

  exclude "reclaimed in the first hour" allocation
    when end_reason == reclaimed and runtime < 1 hour
  exclude "replay after short notice" replayed_time
    when end_reason == reclaimed and notice_lead < promised_notice

  credit "slow replacement" 10% of charge
    when replacement_wait > promised_restart
  credit "restart delay" 2.10 USD per gpu_hour * gpus * (replacement_wait - 15 minutes)
    when replacement_wait > 15 minutes

  cap credits at 20% of gross per run
}
"""
NORTHWIND_EVENTS = [
    requested("r-0042", "2026-03-02 09:50"),
    started("r-0042", "a1", "2026-03-02 10:00:00", gpus=8),
    checkpoint("r-0042", "2026-03-02 11:30:00", step=9000),
    checkpoint("r-0042", "2026-03-02 11:50:00", step=11000, valid=False),
    notice("r-0042", "a1", "2026-03-02 12:04:50"),
    reclaimed("r-0042", "a1", "2026-03-02 12:05:00", step=11500),
    started("r-0042", "a2", "2026-03-02 12:45:00", gpus=8),
    checkpoint("r-0042", "2026-03-02 13:00:00", step=10000),
    reclaimed("r-0042", "a2", "2026-03-02 13:20:00", step=10700),
    started("r-0042", "a3", "2026-03-02 13:22:00", gpus=4, capacity="on_demand", zone="us-east-1b"),
    released("r-0042", "a3", "2026-03-02 14:02:30", step=12000),
    accepted("r-0042", "2026-03-02 15:00"),
]


def test_explain_golden() -> None:
    """`tests/golden/explain_northwind.txt`, checked line by line by hand:

    header: accepted 15:00 − first request 09:50 = 5 h 10 min; 3 allocations, a1 and a2
      reclaimed, no failure; the last end (14:02:30 on 2026-03-02) settles it in 2026-03.
    a1 (attempt 1): 8 GPUs 10:00:00 → 12:05:00 = 2 h 5 min, 8 × 125/60 = 16.666667 GPU-h.
      notice at 12:04:50: 10 s before the end < 30 s promised → breached.
      a2 starts 12:45:00: 40 min after the end > 15 min → breached.
      valid checkpoints at or before 12:05: 11:30 (step 9000; the 11:50 one is invalid) →
      replayed 12:05 − 11:30 = 35 min and 11500 − 9000 = 2500 steps.
      exclusion (line 16): reclaimed and 10 s < 30 s → 35 min, 8 × 35/60 = 4.666667 GPU-h.
      billable: 125 − 35 = 90 min = 1 h 30 min, already whole minutes and above the minimum.
      charge (line 5, spot H100): 2.10 × 8 × 1.5 h = 25.20.
      credit (line 19): wait 40 min > 15 min → 10% × 25.20 = 2.52.
      credit (line 21): 2.10 × 8 × (40 − 15)/60 = 16.80 × 25/60 = 7.00.
    a2 (attempt 2): 12:45 → 13:20 = 35 min, 4.666667 GPU-h; no notice (lead 0 s < 30 s →
      breached); a3 starts 13:22 → 2 min ≤ 15 min → kept; last valid checkpoint 13:00 (step
      10000) → replayed 20 min, 10700 − 10000 = 700 steps; reclaimed and 35 min < 1 h →
      excluded whole (line 14), 4.666667 GPU-h not charged; no credit (2 min is not > 15 min).
    a3 (attempt 3): 4 GPUs on demand in us-east-1b, 13:22:00 → 14:02:30 = 40 min 30 s,
      4 × 40.5/60 = 2.7 GPU-h; released; rounded up to 41 min; charge (line 6) 4.25 × 4 ×
      41/60 = 697/60 = 11.616666… → 11.616667 shown, 11.62 billed.
    run: gross 25.20 + 11.62 = 36.82; credits 2.52 + 7.00 = 9.52; run cap (line 24) 20% ×
      36.82 = 7.364 → 7.36 (rounded down); gives back 9.52 − 7.36 = 2.16; the run's gross
      36.82 ≥ 7.36, so the implicit rule cuts nothing; net 36.82 − 9.52 + 2.16 = 29.46.
    """
    result = evaluate_text(NORTHWIND, NORTHWIND_EVENTS, filename="northwind.spot")
    (c,) = result.contracts
    text = explain_run(c, "r-0042")
    assert text == (GOLDEN / "explain_northwind.txt").read_text(encoding="utf-8")
    # the same numbers in the ledger
    assert [x[4] for x in lines(c)] == [
        D("25.20"),
        D("0.00"),
        D("-2.52"),
        D("-7.00"),
        D("0.00"),
        D("11.62"),
        D("2.16"),
    ]
    assert run_row(c, "r-0042")["net"] == D("29.46")
    assert_ledger_sums_to_net(c)


def test_explain_one_allocation_and_unknown_names() -> None:
    (c,) = evaluate_text(NORTHWIND, NORTHWIND_EVENTS, filename="northwind.spot").contracts
    text = explain_run(c, "r-0042", "a3")
    golden = (GOLDEN / "explain_northwind.txt").read_text(encoding="utf-8").splitlines()
    # the header and a3's block, without the run totals
    a3 = golden.index("allocation a3 (attempt 3): 4 × H100-80G on_demand in us-east-1b")
    assert text.splitlines() == [*golden[:2], "", *golden[a3 : a3 + 4]]
    with pytest.raises(LookupError, match="run `r-9` is not in the trace"):
        explain_run(c, "r-9")
    with pytest.raises(LookupError, match="run `r-0042` has no allocation `a9`"):
        explain_run(c, "r-0042", "a9")


def test_cli_explain_matches_the_golden_text(tmp_path: Path) -> None:
    spot = write_spot(tmp_path / "northwind.spot", NORTHWIND)
    trace = tmp_path / "trace.parquet"
    trace_frame(NORTHWIND_EVENTS).write_parquet(trace)
    result = CliRunner().invoke(app, ["explain", str(spot), str(trace), "--run", "r-0042"])
    assert result.exit_code == 0, result.output
    assert result.stdout == (GOLDEN / "explain_northwind.txt").read_text(encoding="utf-8")
    unknown = CliRunner().invoke(app, ["explain", str(spot), str(trace), "--run", "r-0041"])
    assert unknown.exit_code == 2
    assert "did you mean `r-0042`?" in unknown.stderr


def test_cli_unknown_contract_name_is_bad_input(tmp_path: Path, trace_file: Path) -> None:
    spot = write_spot(tmp_path / "promises.spot", PROMISES_BUDGET)
    result = CliRunner().invoke(
        app, ["evaluate", str(spot), str(trace_file), "--contract", "promise", "--format", "json"]
    )
    # evaluating nothing would report every budget met; a misspelt name is an error instead
    assert result.exit_code == 2
    (diag,) = json.loads(result.stdout)["diagnostics"]
    assert diag["code"] == "E502"
    assert diag["message"] == "the terms have no contract `promise`"
    assert diag["help"] == "did you mean `promises`?"


@pytest.mark.parametrize("limit", ["50 USD", "0.50 USD"])
def test_a_run_without_allocations_is_cut_nothing_by_a_month_cap(limit: str) -> None:
    # r0 never got an allocation: it settles in no month, its pool is 0 and so is its cut —
    # whether or not r1's month is over its limit. r1: a1's 8 GPUs > 1, so its credit is the
    # flat 1.00 USD (100 cents; gross 8 × 59/60 h × 3 USD = 23.60, so the run gross cap does not
    # cut); a 0.50 USD month limit cuts 50 of the 100 cents, a 50 USD one nothing.
    spot = f"""contract "c" {{ currency USD rate 3 USD per gpu_hour
      credit "a" 1 USD when gpus > 1 gpus  cap credits at {limit} per month }}"""
    events = [
        started("r1", "a1", 0, gpus=8),
        released("r1", "a1", 59),
        requested("r0", 5),
        accepted("r0", 10),
    ]
    runs = contract_result(spot, events).runs.sort("run_id")
    cut = 50 if limit == "0.50 USD" else 0
    assert runs.select("run_id", "pool_minor", "month_cap_0_minor").rows() == [
        ("r0", 0, 0),
        ("r1", 100 - cut, cut),
    ]


@pytest.mark.parametrize(
    ("when", "credited"),
    [
        # Kleene logic, and a condition that is none does not hold
        ("none", 0),
        ("true or none", 2),
        ("false or none", 0),
        ("true and none", 0),
        ("not none", 0),
        ("gpus > 1 gpus or none", 1),  # a2 only (8 GPUs); a1's 1 GPU: false or none
        ("not (gpus > 1 gpus and none)", 1),  # a1: not (false and none) = true; a2: none
    ],
)
def test_the_literal_none_in_a_condition(when: str, credited: int) -> None:
    # was exit 3: `none` compiled to a decimal none, which polars cannot `and`/`or`/`not`
    spot = f"""contract "c" {{ currency USD rate 3 USD per gpu_hour
      credit "k" 1 USD when {when} }}"""
    events = [
        started("r1", "a1", 0, gpus=1),
        released("r1", "a1", 60),
        started("r2", "a2", 0, gpus=8),
        released("r2", "a2", 60),
    ]
    c = contract_result(spot, events)
    # 1 USD per credited allocation
    assert c.totals.credits_minor == -100 * credited


@pytest.mark.parametrize(
    ("require", "value"),
    [
        ("share(none) >= 50%", None),  # no run has a value: no share
        ("count(none) >= 1", Fraction(0)),
        ("count(accepted or none) >= 1", Fraction(1)),  # r1 accepted: true; r2: none
        ("share(accepted or none) >= 1%", Fraction(1)),  # 1 true of 1 known
        ("share(accepted and none) >= 1%", Fraction(0)),  # r2: false and none = false
    ],
)
def test_the_literal_none_counted_by_a_budget(require: str, value: Fraction | None) -> None:
    # was exit 3, as in a condition
    spot = f"""contract "c" {{ currency USD rate 3 USD per gpu_hour }}
    budget "b" {{ require {require} }}"""
    events = [
        started("r1", "a1", 0, gpus=1),
        released("r1", "a1", 60),
        accepted("r1", 61),
        started("r2", "a2", 0, gpus=1),
        released("r2", "a2", 60),
    ]
    (c,) = evaluate_text(spot, events).contracts
    assert c.budgets[0].requirements[0].value == value


# Found by fuzzing the language (terms the checker accepts that evaluation could not run:
# exit 3), each now evaluated as the terms read, or refused with its code.
FUZZ_EVENTS = [
    started("r1", "a1", 0, gpus=2),
    reclaimed("r1", "a1", 90),
    started("r1", "a2", 100, gpus=2),
    released("r1", "a2", 220),
    accepted("r1", 221),
]
FUZZ_BASE = 'contract "c" { currency USD rate 2 USD per gpu_hour %s }'


def _net(clauses: str, budget: str = "") -> ContractResult:
    return contract_result(FUZZ_BASE % clauses + budget, FUZZ_EVENTS)


def test_per_a_currency_divides_by_one_unit_of_it() -> None:
    # (2 USD × 1 USD per GPU-hour) per USD = 2 USD per GPU-hour: the same bill
    per = contract_result(
        'contract "c" { currency USD rate (2 USD * 1 USD per gpu_hour) per USD }', FUZZ_EVENTS
    )
    plain = _net("")
    assert per.totals.gross_minor == plain.totals.gross_minor
    # 2 GPUs × (90 + 120) min = 7 GPU-hours × 2 USD = 14.00
    assert plain.totals.gross_minor == 1400
    budget = ' budget "b" { require mean((net * 1 USD) per USD) <= 5 USD }'
    measured = contract_result(FUZZ_BASE % "" + budget, FUZZ_EVENTS).budgets[0]
    assert measured.requirements[0].value == Fraction(14)  # mean of one run's 14.00


def test_a_cap_above_any_64_bit_pool_cuts_nothing() -> None:
    # 10^17 USD is 10^19 cents, past a 64-bit integer: no pool reaches it
    credit = 'credit "r" 50% of charge when end_reason == reclaimed'
    capped = _net(f"{credit} cap credits at 100000000000000000 USD per run")
    assert capped.totals.net_minor == _net(credit).totals.net_minor
    # a1: 2 GPUs × 1.5 h × 2 USD = 6.00, credit 3.00; net 14.00 − 3.00 = 11.00
    assert capped.totals.net_minor == 1100


def test_a_percent_of_money_as_a_cap_limit_is_that_money() -> None:
    # `50% of 2 USD` is 1 USD, not 50% of gross
    credit = 'credit "r" 50% of charge when end_reason == reclaimed'
    half = _net(f"{credit} cap credits at (50% of 2 USD) per allocation")
    one = _net(f"{credit} cap credits at 1 USD per allocation")
    assert half.totals.cap_cuts_minor == one.totals.cap_cuts_minor == 200  # 3.00 cut to 1.00


@pytest.mark.parametrize("limit", ["(none)", "(1 USD * none)", "(min(none, 1 USD))"])
def test_a_cap_limit_with_no_value_is_e209(limit: str) -> None:
    with pytest.raises(ContractlangError, match=r"E209.*has no value"):
        terms_from_text(FUZZ_BASE % f"cap credits at {limit} per month", "t.spot")


@pytest.mark.parametrize(
    "clause",
    [
        'credit "c" 999999999999999999 USD * 999999999999999999 when true',
        "rate 3 USD per gpu_hour when runtime < 1 hour + 999999999999999999 USD"
        " * 999999999999999999 / 1 USD * (0 hours - 1 hour)",
    ],
)
def test_a_constant_too_large_to_keep_is_e405_before_any_row(clause: str) -> None:
    # (10^18 − 1)² ≈ 10^36 USD, held at 20 places: 56 digits; 1 h − 10^36 h is −3.6 × 10^39 s,
    # an integer of 40 digits. (A constant once computed in steps at 20 places, `10^15 USD ×
    # (10^-10 × (1/3))`, overflowed there; it is 33,333.33… exactly: the test below.)
    text = f'contract "c" {{ currency USD {clause} rate 2 USD per gpu_hour }}'
    with pytest.raises(ContractlangError, match=r"E405.*too large to keep exactly$"):
        contract_result(text, FUZZ_EVENTS)


def test_a_constant_once_computed_in_steps_is_exact() -> None:
    # 10^15 USD × (10^-10 × (1/3)) is 10^5/3 USD: it overflowed when 1/3 was a quotient at 20
    # places and 10^-10 × that a product at 24 (E405); it is kept as the fraction it is
    c = _net('credit "c" 1000000000000000 USD * (0.0000000001 * (1 / 3)) when true')
    # each of the two allocations: a credit of 33,333.333… → 33,333.33
    assert [x[4] for x in lines(c) if x[2] == "credit"] == [D("-33333.33")] * 2
    # runtime < 10^15 h × (10^-10 × 1/3) = 33,333.3… h holds for 90 and 120 minutes: the first
    # rate, 3 USD × 2 GPUs × (1.5 h + 2 h) = 21.00
    rate = (
        "rate 3 USD per gpu_hour when runtime < 1000000000000000 hours * (0.0000000001 * (1 / 3))"
    )
    first = contract_result(
        f'contract "c" {{ currency USD {rate} rate 2 USD per gpu_hour }}', FUZZ_EVENTS
    )
    assert first.totals.gross_minor == 2100
