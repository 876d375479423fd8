"""The decimal scales of the compiler (`decimals.py`): constants kept exactly, sums and
quotients whose scales or factors once overflowed (exit 3) or rounded to zero (a silent 0.00).

A language fuzz found the first: a rate whose constant divisions made one side of a sum a
number of 15 digits at 20 places and the other a number at 24 places; polars' own rescaling of
the sum did not fit 38 digits and said `division by zero`, which is no overflow E405 knows, so
`evaluate` exited 3. Each expectation is worked out by hand beside it, or with Fractions from
the facts.

Unless a test says otherwise, the day is 2025-01-01 (UTC) and allocations are spot GPUs.
"""

from __future__ import annotations

import time
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import polars as pl
import pytest
from support.scenario import (
    alloc_row,
    contract_result,
    lines,
    released,
    started,
    trace_frame,
    write_spot,
)
from typer.testing import CliRunner

from contractlang.cli.app import app
from contractlang.decimals import _tens_above, digits
from contractlang.errors import ContractlangError
from contractlang.evaluate.results import ContractResult
from contractlang.evaluate.trace_checks import _overflowed
from contractlang.pipeline.evaluation import evaluate, load_inputs
from contractlang.pipeline.language import terms_from_text

D = Decimal
ROOT = Path(__file__).resolve().parents[1]
EXAMPLE_TRACE = ROOT / "examples" / "trace.parquet"

#: The rate the fuzz found (tests/test_compile_scales.py's docstring).
FUZZ_RATE = (
    "7% of (gpu_time * (3 USD / 60 gpus / 120 gpus / 0.000001 hours / 15 hours))"
    " + (0 gpus) * (1 / (4 gpus)) * ((53.34 USD / 7 gpus) per second)"
)


def contract(rate: str) -> str:
    return f'contract "c" {{\n  currency USD\n  rate {rate}\n}}\n'


def one_allocation(gpus: int = 8, minutes: float = 60) -> list[dict[str, object]]:
    return [started("r1", "a1", 0, gpus=gpus), released("r1", "a1", minutes)]


def half_away(q: Fraction) -> int:
    """``q`` in cents, rounded half away from zero (the default rounding of a line)."""
    cents = abs(q) * 100
    n = (cents.numerator * 2 + cents.denominator) // (2 * cents.denominator)
    return n if q >= 0 else -n


# =========================================================================== the fuzz's rate


def test_the_fuzzed_rate_is_priced_exactly() -> None:
    events = [
        started("r1", "a1", 0, gpus=8),
        released("r1", "a1", 60),
        started("r2", "a2", 0, gpus=8),
        released("r2", "a2", 24 * 60),
    ]
    c = contract_result(contract(FUZZ_RATE), events)
    # the constant: 3 USD / 60 / 120 = 1/2400; 0.000001 h = 0.0036 s and 15 h = 54,000 s, so
    # 1/2400 / 0.0036 / 54,000 = 1/466,560 USD per GPU² per s²; the second term is 0 × … = 0
    # a1: gpu_time 8 GPUs × 3,600 s = 28,800 GPU-s; 28,800/466,560 = 5/81; × 7% = 7/1,620 USD
    #     per GPU-second; × 8 GPUs × 3,600 s = 201,600/1,620 = 124.444… → 124.44
    #     (before: the charge was none, a line of 0.00 — the split of the time at the price's
    #     unit, 4.7 × 10^21 µs, read `us // d` as none past 64 bits)
    # a2: gpu_time 8 × 86,400 = 691,200 GPU-s; 691,200/466,560 = 40/27; × 7% = 14/135; × 8 ×
    #     86,400 = 71,680.00 exactly (before: exit 3, `division by zero Decimal`)
    assert [line[4] for line in lines(c)] == [D("124.44"), D("71680.00")]
    assert alloc_row(c, "a1")["charge"] == D("124.44444444444444444444")
    assert alloc_row(c, "a2")["charge"] == D("71680")
    assert c.totals.gross_minor == 12444 + 7168000


def test_the_fuzzed_rate_over_the_example_trace_matches_fractions() -> None:
    terms = terms_from_text(contract(FUZZ_RATE), "fuzz.spot")
    (c,) = evaluate(terms, EXAMPLE_TRACE).contracts
    _, _, facts = load_inputs(terms, EXAMPLE_TRACE)
    allocations, _ = facts.collect()
    want = 0
    for gpu_us, gpus, us in allocations.select(
        pl.col("gpu_time").dt.total_microseconds(),
        "gpus",
        pl.col("runtime").dt.total_microseconds(),
    ).iter_rows():
        price = Fraction(7, 100) * Fraction(gpu_us, 10**6) / 466_560  # USD per GPU-second
        billable = -(-us // 10**6)  # rounded up to whole seconds, the default increment
        want += half_away(price * gpus * billable)
    assert c.totals.gross_minor == want


def test_the_fuzzed_rate_evaluates_from_the_command_line(tmp_path: Path) -> None:
    spot = write_spot(tmp_path / "fuzz.spot", contract(FUZZ_RATE))
    result = CliRunner().invoke(app, ["evaluate", str(spot), str(EXAMPLE_TRACE)])
    assert result.exit_code == 0, result.output  # it was 3, an internal error
    assert "internal error" not in result.output


# ============================================================ the root: a sum of two scales


def test_a_sum_of_a_large_value_and_a_fine_one_is_kept() -> None:
    # The fuzz's failure, smaller: the first term was 7 × gpu_time (µs) × 27.77… (the constant
    # divided at 20 places) ≈ 1.3 × 10^14 at 20 places, brought to the sum's factor by × 7;
    # the second, 0 × (1/4) × (1/7), a product of two quotients at 20 places each, kept to 24.
    # Polars brought the sum to 24 places itself: 15 digits + 24 places do not fit 38, and it
    # said `division by zero Decimal` — exit 3.
    rate = (
        "7% of (gpu_time * (3 USD / 60 gpus / 120 gpus / 0.000001 hours / 15 hours))"
        " + 0 * (1 / 4) * (1 / 7) * 1 USD per gpu_second"
    )
    c = contract_result(contract(rate), one_allocation(gpus=8, minutes=24 * 60))
    # as the fuzz's rate for 8 GPUs × 24 h (above): 14/135 USD per GPU-second × 8 × 86,400 s
    # = 71,680.00
    assert c.totals.gross_minor == 7_168_000


def test_a_price_per_a_long_unit_of_time_is_charged() -> None:
    # gpu_time / hours² is money per GPU-hour once more; its factor per µs is 1/(3.6 × 10^9)²,
    # beyond 64 bits, and the split of the time at it read `us // d` as none: a charge of none,
    # a line of 0.00 and no error
    rate = "7% of (gpu_time * 1 USD / 1 gpus / 1 gpus / 1 hours / 1 hours)"
    c = contract_result(contract(rate), one_allocation(gpus=8, minutes=24 * 60))
    # gpu_time 8 × 24 = 192 GPU-hours: 7% × 192 = 13.44 USD per GPU-hour × 8 GPUs × 24 h
    # = 2,580.48
    assert c.totals.gross_minor == 258_048


def test_a_price_far_larger_at_runtime_than_its_value_is_charged() -> None:
    # gpu_time / 7 gpu_hours is held in GPU-µs (× 10^6 × 3,600 the value) and the product of
    # the price, the GPUs and the µs left over was kept at 24 places: more than 38 digits, E405,
    # for a charge of 21 thousand USD
    rate = "gpu_time / 7 gpu_hours * 1 USD per gpu_hour + 1 USD per gpu_hour * (1 / 3) * (1 / 3)"
    c = contract_result(contract(rate), one_allocation(gpus=8, minutes=48 * 60))
    # gpu_time 8 × 48 = 384 GPU-hours: 384/7 + 1/9 = (3,456 + 7)/63 = 3,463/63 USD per GPU-hour
    # × 8 GPUs × 48 h = 3,463 × 384 / 63 = 1,329,792/63 = 21,107.8095… → 21,107.81
    assert c.totals.gross_minor == 2_110_781


# ===================================================== constants: exact, never rounded to 0


@pytest.mark.parametrize(
    ("rate", "note"),
    [
        # 10^-34 at 20 places was 0: a line of 0.00
        (
            "1 USD per gpu_hour / 100000000000000000 / 100000000000000000"
            " * 100000000000000000 * 100000000000000000",
            "1/10^17 twice, then 10^17 twice",
        ),
        # 1/7^20 ≈ 1.3 × 10^-17 kept at 20 places: four digits, × 7^20 → 7.9997… → 8.00 only
        # by luck; 7^26 ≈ 9.4 × 10^21 made it 0
        ("1 USD per gpu_hour" + " / 7" * 26 + " * 7" * 26, "1/7^26, then 7^26"),
        # 1/3 at 20 places × 3 is 0.99999999999999999999
        ("1 USD per gpu_hour / 3 * 3", "1/3, then 3"),
    ],
)
def test_a_chain_of_constants_is_exact(rate: str, note: str) -> None:
    c = contract_result(contract(rate), one_allocation())
    # each chain is 1 USD per GPU-hour exactly (`note` says how): × 8 GPUs × 1 h = 8.00, and
    # the charge before rounding is 8 exactly, not 7.99999999999999999992 nor 0
    assert alloc_row(c, "a1")["charge"] == D("8"), note
    assert c.totals.gross_minor == 800


def test_a_divisor_below_the_twentieth_place_is_not_zero() -> None:
    # 1 / 10^10 / 10^10 / 100 = 10^-22 was a quotient at 20 places: 0, and `x / 0` is none:
    # the rate had no price (E401). The quotient is 1 exactly.
    tiny = "(1 / 10000000000 / 10000000000 / 100)"
    c = contract_result(contract(f"1 USD per gpu_hour * {tiny} / {tiny}"), one_allocation())
    # 1 USD per GPU-hour × 8 GPUs × 1 h = 8.00
    assert c.totals.gross_minor == 800


def test_a_quotient_of_a_column_keeps_the_places_of_its_value() -> None:
    # 1 / (1 + runtime / 10^12 hours): the divisor is held in 1/(3.6 × 10^9) of its value
    # (3,600,000,000.0036 for an hour's runtime), and its inverse was kept at 20 places of that
    # number: 2.7777777777777777750 × 10^-10, eleven digits — a charge of 8.000000000064.
    rate = "1 USD per gpu_hour * (1 / (1 + runtime / 1000000000000 hours))"
    c = contract_result(contract(rate), one_allocation())
    # runtime 1 h: 1 / (1 + 10^-12) USD per GPU-hour × 8 GPUs × 1 h = 7.999999999992000… → 8.00
    assert c.totals.gross_minor == 800
    assert alloc_row(c, "a1")["charge"] == D("7.99999999999200000000")


def test_a_comparison_with_a_constant_of_many_digits_is_exact() -> None:
    # runtime < 10^15 hours × (10^-10 × 1/3) is runtime < 33,333.3… hours, true here; compared
    # without bringing the runtime (µs) to the constant's 1/(3 × 10^10)
    spot = """\
contract "c" {
  currency USD
  rate 3 USD per gpu_hour when runtime < 1000000000000000 hours * (0.0000000001 * (1 / 3))
  rate 2 USD per gpu_hour
  rate 1 USD per gpu_hour when runtime == 1 hour + 1 hour / 300000000000000000
}
"""
    c = contract_result(spot, one_allocation(gpus=2, minutes=90))
    # the first rate: 3 USD × 2 GPUs × 1.5 h = 9.00
    assert c.totals.gross_minor == 900
    assert alloc_row(c, "a1")["rate_index"] == 0


# ================================================================ what no decimal can keep


def test_an_amount_too_large_to_keep_is_still_e405() -> None:
    # 10^12 USD per GPU-hour × 10^7 GPUs × 1 h = 10^19 USD: more than 18 digits before the point
    spot = contract("1000000000000 USD per gpu_hour")
    with pytest.raises(ContractlangError) as exc:
        contract_result(spot, one_allocation(gpus=10_000_000))
    assert [d.code for d in exc.value.diagnostics] == ["E405"]
    assert "allocation `a1` of run `r1`" in exc.value.diagnostics[0].message


def test_a_constant_beyond_38_digits_is_e405_before_any_row() -> None:
    # (10^18 − 1)² USD ≈ 10^36 USD: a credit no decimal of 20 places can hold
    spot = (
        'contract "c" { currency USD rate 2 USD per gpu_hour\n'
        '  credit "c" 999999999999999999 USD * 999999999999999999 when true }'
    )
    with pytest.raises(ContractlangError, match=r"E405.*too large to keep exactly$"):
        contract_result(spot, one_allocation())


# ============================================ what a review of the first version found (0635a93)

#: 30 days of 10,000 GPUs (the review's condition) and 48 hours of 8 (its credit)
MONTH_OF_10K = one_allocation(gpus=10_000, minutes=30 * 24 * 60)
TWO_DAYS_OF_8 = one_allocation(gpus=8, minutes=48 * 60)


def credits(c: ContractResult) -> list[Decimal]:
    return [line[4] for line in lines(c) if line[2] == "credit"]


def test_a_credit_of_charge_less_a_price_of_six_places_is_kept() -> None:
    # The first version put the constant's six places in the factor (2,123,457/3.6 × 10^15 per
    # GPU-µs) and brought `charge` (20 places) to it by × 3.6 × 10^15: 40 digits, E405 for an
    # ordinary credit. The sum's unit is now the largest dividing both: `charge` is × 9.
    spot = """\
contract "c" {
  currency USD
  rate 3 USD per gpu_hour
  credit "c" charge - 2.123457 USD per gpu_hour * gpu_time when true
}
"""
    c = contract_result(spot, TWO_DAYS_OF_8)
    # charge 3 × 8 GPUs × 48 h = 1,152.00; gpu_time 384 GPU-hours × 2.123457 = 815.407488;
    # 1,152 − 815.407488 = 336.592512 → 336.59
    assert credits(c) == [D("-336.59")]
    assert alloc_row(c, "a1")["credit_0"] == D("336.592512")
    assert half_away(Fraction(3 * 384) - Fraction("2.123457") * 384) == 33659


@pytest.mark.parametrize(("threshold", "credited"), [("2.95", True), ("3.05", False)])
def test_a_condition_comparing_charge_with_a_price_times_gpu_time(
    threshold: str, credited: bool
) -> None:
    # The same in a comparison, on 10,000 GPUs for 30 days: E405 in the first version
    spot = f"""\
contract "c" {{
  currency USD
  rate 3 USD per gpu_hour
  credit "c" 5% of charge when charge > {threshold} USD per gpu_hour * gpu_time
}}
"""
    c = contract_result(spot, MONTH_OF_10K)
    # charge 3 × 10,000 × 720 h = 21,600,000.00 against 2.95 × 7,200,000 GPU-hours =
    # 21,240,000 (true: 5% is 1,080,000.00) or 3.05 × 7,200,000 = 21,960,000 (false)
    assert c.totals.gross_minor == 2_160_000_000
    assert credits(c) == ([D("-1080000.00")] if credited else [])


def test_a_fact_divided_by_a_constant_of_many_places_times_charge() -> None:
    # runtime / 10^9 minutes / 0.1 is GPU-µs with the factor 1/(6 × 10^15); the product with
    # `charge` cast the runtime to charge's 20 places on top: 2.6 × 10^12 × 10^20 × charge,
    # past 38 digits (a fuzz against Fractions found it; main computed it). The factor's
    # powers of ten are now the runtime value's places.
    spot = """\
contract "c" {
  currency USD
  rate 3 USD per gpu_hour
  credit "c" runtime / 1000000000 minutes / 0.1 * charge when true
}
"""
    c = contract_result(spot, MONTH_OF_10K)
    # 43,200 minutes / 10^9 / 0.1 = 0.000432; × 21,600,000.00 = 9,331.20
    assert credits(c) == [D("-9331.20")]
    assert Fraction(43_200, 10**9) / Fraction(1, 10) * 21_600_000 == Fraction("9331.2")


def test_a_rate_of_a_constant_that_no_decimal_ends_on_a_month_of_10k_gpus() -> None:
    # 0.25 / 0.07 × 0.5 USD per GPU-second is 25/14 exactly: held as 25 with the factor 1/14
    rate = "0.25 / 0.07 * 0.5 USD per gpu_second"
    c = contract_result(contract(rate), MONTH_OF_10K)
    # 25/14 × 10,000 GPUs × 2,592,000 s = 648,000,000,000/14 = 46,285,714,285.714… →
    # 46,285,714,285.71
    assert c.totals.gross_minor == half_away(Fraction(25, 14) * 10_000 * 2_592_000)
    assert c.totals.gross_minor == 4_628_571_428_571


def balanced_product(literal: str, n: int) -> str:
    """``literal`` multiplied by itself ``n`` times, parenthesised as a balanced tree (a flat
    chain of more than 100 `*` is E009)."""
    if n == 1:
        return literal
    return f"({balanced_product(literal, n // 2)} * {balanced_product(literal, n - n // 2)})"


#: (10^18 − 1)^239: 4,302 digits, past the 4,300 Python writes out
HUGE = balanced_product("999999999999999999", 239)


def test_a_constant_of_thousands_of_digits_is_e405_not_exit_3(tmp_path: Path) -> None:
    # the first version wrote the number into the message of its overflow: ValueError (Python
    # writes no integer of more than 4,300 digits), exit 3
    spot = write_spot(tmp_path / "huge.spot", contract(f"1 USD per gpu_hour * {HUGE}"))
    trace = tmp_path / "t.parquet"
    trace_frame(one_allocation()).write_parquet(trace)
    result = CliRunner().invoke(app, ["evaluate", str(spot), str(trace)])
    assert result.exit_code == 2, result.output
    assert "error[E405]" in result.output
    assert "internal error" not in result.output


def test_a_constant_of_thousands_of_digits_that_cancels_is_exact() -> None:
    # a fact × (10^18 − 1)^239 / (10^18 − 1)^239 is the fact; and runtime × (10^18 − 1)^239 ×
    # gpus is beyond any bound: the comparison is decided by its sign (main said E405)
    spot = f"""\
contract "c" {{
  currency USD
  rate 1 USD per gpu_hour * (runtime / 1 hour) * {HUGE} / {HUGE}
  credit "x" 1 USD when runtime * {HUGE} * gpus > 1 gpu_hour
}}
"""
    c = contract_result(spot, one_allocation())
    # 1 USD per GPU-hour × (1 h / 1 h) × 8 GPUs × 1 h = 8.00, and the credit holds: 1.00
    assert c.totals.gross_minor == 800
    assert credits(c) == [D("-1.00")]


def test_powers_of_ten_and_digit_counts_of_huge_numbers_are_quick() -> None:
    # the first version's _tens_above looped once per digit (minutes for a constant of a few
    # thousand digits); these are bounded by bit lengths
    start = time.perf_counter()
    assert _tens_above(Fraction(10**20_000)) == 20_000
    assert _tens_above(Fraction(10**20_000 + 1)) == 20_001
    assert _tens_above(Fraction(1, 3)) == 0
    assert _tens_above(Fraction(11, 10)) == 1
    assert digits(10**20_000) == 20_001
    assert digits(10**20_000 - 1) == 20_000
    assert digits(0) == digits(9) == 1
    assert time.perf_counter() - start < 5


def test_polars_division_by_zero_of_a_rescaled_decimal_is_an_overflow() -> None:
    # polars' own rescaling of a decimal that does not fit says `division by zero Decimal`
    # (the fuzzed rate's exit 3); the compiler never divides by zero (it reads none there)
    assert _overflowed(pl.exceptions.ComputeError("division by zero Decimal"))
    assert not _overflowed(pl.exceptions.ComputeError("unable to find column"))


# ==================================== what a fuzz against Fractions found in the second version


def month_credit(rate: str, credit: str) -> list[Decimal]:
    spot = f'contract "c" {{\n  currency USD\n  rate {rate}\n  credit "c" {credit} when true\n}}\n'
    return credits(contract_result(spot, MONTH_OF_10K))


def test_a_constant_with_a_long_denominator_in_a_sum() -> None:
    # 1/999999.999999 is 10^6/999,999,999,999: kept in the factor, the sum's common unit was
    # 1/(4 × 10^34) of a dollar and `charge` past 38 digits in it (main computed it); such a
    # denominator now divides the runtime value, at 20 places of the value
    got = month_credit("3 USD per gpu_hour", "0.25% of charge - charge / 999999.999999")
    # 0.25% of 21,600,000 = 54,000; 21,600,000 / 999,999.999999 = 21.6000000000216…;
    # 54,000 − 21.6000000000216 = 53,978.3999999999784 → 53,978.40
    assert got == [D("-53978.40")]
    assert half_away(54_000 - Fraction(21_600_000) / Fraction("999999.999999")) == 5_397_840


def test_a_percentage_of_many_digits_of_charge() -> None:
    # 999999.999999% is 999,999,999,999/10^8: in the factor, `charge` (20 places) times the
    # numerator needed 39 digits; a constant of many digits multiplies as a decimal, rounded
    # back at 24 places as a product is (as main did)
    got = month_credit("1.15 USD per gpu_hour", "999999.999999% of charge")
    # charge 1.15 × 7,200,000 GPU-hours = 8,280,000; × 9,999.99999999 = 82,799,999,999.9172
    # → 82,799,999,999.92
    assert got == [D("-82799999999.92")]


def test_a_product_held_far_larger_than_its_value() -> None:
    # the sum is held at 1/6 of its value and the price times gpu_time at 7/36: their product
    # at 24 places of the runtime number (30.9 times the value) passed 38 digits for a credit
    # of 2.2 × 10^13 USD; it keeps 24 places of the value
    credit = (
        "(gpu_time / 1000 gpu_minutes + runtime / 3.333333 minutes)"
        " * (7 USD per gpu_hour * gpu_time)"
    )
    got = month_credit("12.5 USD per gpu_hour", credit)
    # (432,000,000 GPU-minutes / 1,000 + 43,200 minutes / 3.333333) × 7 USD × 7,200,000 GPU-h
    want = (Fraction(432_000) + Fraction(43_200) / Fraction("3.333333")) * 7 * 7_200_000
    assert got == [-D(half_away(want)) / 100]
    assert got == [D("-22425984065318.41")]


def test_a_fine_constant_times_a_sum_with_a_price_of_18_places() -> None:
    # trace.price (18 places) per gpu_hour × gpu_time less charge is held at 20 places with the
    # factor 1/(3.6 × 10^7); × 2.123457 makes the factor 2,123,457/(3.6 × 10^13), and the rest
    # below that denominator, at 20 places, times the numerator passed 38 digits when the
    # credit left the compiler; the split is now done on the digits as integers (main: E405)
    events = [started("r1", "a1", 0, gpus=10_000, price="53.34"), released("r1", "a1", 43_200)]
    spot = """\
contract "c" {
  currency USD
  rate 3 USD per gpu_hour
  credit "c" 2.123457 * (trace.price per gpu_hour * gpu_time - charge) when true
}
"""
    c = contract_result(spot, events)
    # 53.34 × 7,200,000 GPU-hours = 384,048,000; less 21,600,000 = 362,448,000; × 2.123457
    # = 769,642,742.736 → 769,642,742.74
    assert credits(c) == [D("-769642742.74")]
    assert half_away((Fraction("53.34") * 7_200_000 - 21_600_000) * Fraction("2.123457")) == (
        76_964_274_274
    )
