"""The decimal scales of the compiler (`compile.py`): constants kept exactly, sums and
quotients whose scales or factors once overflowed (exit 3) or rounded to zero (a silent 0.00).

A language fuzz found the first: a rate whose constant divisions made one side of a sum a
number of 15 digits at 20 places and the other a number at 24 places; polars' own rescaling of
the sum did not fit 38 digits and said `division by zero`, which is no overflow E405 knows, so
`evaluate` exited 3. Each expectation is worked out by hand beside it, or with Fractions from
the facts.

Unless a test says otherwise, the day is 2025-01-01 (UTC) and allocations are spot GPUs.
"""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import polars as pl
import pytest
from support.scenario import alloc_row, contract_result, lines, released, started, write_spot
from typer.testing import CliRunner

from contractlang.cli.app import app
from contractlang.errors import ContractlangError
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


# =========================================================================== `in` lists


def test_in_a_list_of_words_and_in_an_empty_list() -> None:
    """``sku in [...]`` with many words is one lookup, with the same answers as the ``or``
    chain; ``in []`` is false (an empty ``or``) and ``not in []`` true (it was exit 3)."""
    events = [
        started("r1", "a1", 0, gpus=8, sku="H100-80G"),
        released("r1", "a1", 60),
        started("r2", "a2", 0, gpus=8, sku="A100-40G"),
        released("r2", "a2", 60),
    ]
    many = ", ".join(f'"SKU-{k}"' for k in range(300)) + ', "H100-80G"'

    def gross(condition: str) -> dict[str, Decimal]:
        spot = (
            'contract "c" {\n  currency USD\n'
            f"  rate 2 USD per gpu_hour when {condition}\n"
            "  rate 1 USD per gpu_hour\n}\n"
        )
        return {r[1]: r[4] for r in lines(contract_result(spot, events)) if r[2] == "charge"}

    # a matching allocation: 8 GPUs × 1 h × 2 USD = 16.00; the others 8 × 1 × 1 = 8.00
    assert gross(f"sku in [{many}]") == {"a1": D("16.00"), "a2": D("8.00")}
    assert gross(f"sku not in [{many}]") == {"a1": D("8.00"), "a2": D("16.00")}
    assert gross("sku in []") == {"a1": D("8.00"), "a2": D("8.00")}
    assert gross("sku not in []") == {"a1": D("16.00"), "a2": D("16.00")}
    assert gross("capacity in [spot, reserved]") == {"a1": D("16.00"), "a2": D("16.00")}
