"""The price search's split evaluation (`compare/repricing.py`) is, run by run and column by
column, the evaluation of the contract from the charge at the same multiplier
(`variants.at_multiplier`, itself checked in test_compare.py against the contract with every
rate's price written multiplied in its source text)."""

from __future__ import annotations

from datetime import timedelta
from fractions import Fraction
from pathlib import Path

import polars as pl
import pytest
from support.events import T0, Event, frame, released, started

from contractlang.compare.repricing import GROUPS, Repricing, prices_at, repricing
from contractlang.compare.variants import at_multiplier
from contractlang.errors import ContractlangError
from contractlang.evaluate.contract_run import ContractRun
from contractlang.evaluate.engine import stage_contract
from contractlang.evaluate.stages import Staged
from contractlang.pipeline.language import load_terms, terms_from_text
from contractlang.trace.derive import derive_facts
from contractlang.trace.generate import generate_trace
from contractlang.trace.load import load_trace

ROOT = Path(__file__).resolve().parents[1]
RULESETS = sorted((ROOT / "rulesets").glob("*.spot"))
#: 0 and 10 are the grid's ends; 1.234567 and 9.999999 have the places of a bisection midpoint.
MULTIPLIERS = [Fraction(0), Fraction(1, 2), Fraction("1.234567"), Fraction(3), Fraction("9.999999")]


@pytest.fixture(scope="module")
def facts() -> tuple[pl.DataFrame, pl.DataFrame]:
    return derive_facts(load_trace(generate_trace(400, seed=7))).collect()


def _split(text: str, facts: tuple[pl.DataFrame, pl.DataFrame]) -> tuple[Staged, Repricing]:
    """The one contract of ``text`` staged over ``facts``, and split for the price search."""
    terms = terms_from_text(text, "t.spot")
    (contract,) = terms.contracts
    staged = stage_contract(ContractRun.of(contract, "t.spot", terms.source_of(contract)), *facts)
    rep = repricing(staged)
    assert rep is not None
    return staged, rep


def _assert_same(staged: Staged, multipliers: list[Fraction]) -> None:
    batch = prices_at(repricing(staged), multipliers)
    assert batch is not None
    for m, (runs, t) in zip(multipliers, batch, strict=True):
        slow = at_multiplier(staged, m)
        assert t == slow.totals, m
        assert runs.columns == slow.runs.columns, m
        assert runs.equals(slow.runs), m


def test_every_bundled_draft_at_every_kind_of_multiplier(
    facts: tuple[pl.DataFrame, pl.DataFrame],
) -> None:
    # Four drafts bill their charges alone; northwind-negotiated has six credits (one whose
    # condition reads `charge`) and caps at every level.
    terms = load_terms(RULESETS)
    for contract in terms.contracts:
        staged = stage_contract(
            ContractRun.of(contract, "t.spot", terms.source_of(contract)), *facts
        )
        _assert_same(staged, MULTIPLIERS)
        rep = repricing(staged)
        assert rep is not None
        if contract.name == "northwind-negotiated":
            # more combinations of credits reach its allocations than there are groups: the
            # largest evaluated alone, the rest together with the union of their credits
            assert len(rep.reachable) == GROUPS
            assert len(rep.reachable[-1][0]) > max(len(c) for c, _ in rep.reachable[:-1])
        else:
            assert rep.reachable == ()  # no credit: every charge line from the integer pass


THRESHOLD = """
contract "threshold" {
  currency USD
  rounding half_even
  rate 2.37 USD per gpu_hour when capacity == spot
  rate 3.10 USD per gpu_hour
  billing increment 1 minute
  credit "big" 7 USD when gpus >= 8 gpus and charge > 60 USD
  credit "replay" 50% of replayed_cost when end_reason == reclaimed and replayed_steps > 0
  cap credits at 40% of gross per allocation
  cap credits at 25 USD per run
  cap credits at 300 USD per month
  cap credits at 2000 USD per contract
}
"""


def test_a_credit_whose_condition_reads_the_charge(
    facts: tuple[pl.DataFrame, pl.DataFrame],
) -> None:
    # `charge > 60 USD` holds for more allocations as the price rises: an allocation of 8 or
    # more GPUs is reachable whatever its charge at m = 1 (only `gpus >= 8 gpus` decides).
    staged, rep = _split(THRESHOLD, facts)
    allocations = staged.result().allocations
    eight = (allocations["gpus"] >= 8) | (
        (allocations["end_reason"] == "reclaimed") & (allocations["replayed_steps"] > 0)
    )
    assert rep.reachable_rows == int(eight.sum())
    assert 0 < rep.reachable_rows < allocations.height
    credited = [
        int(at_multiplier(staged, m).allocations["credit_0_minor"].is_not_null().sum())
        for m in (Fraction(1), Fraction(10))
    ]
    assert credited[0] < credited[1], credited  # the credit reaches more allocations at 10×
    _assert_same(staged, [*MULTIPLIERS, Fraction(10)])


EITHER = """
contract "either" {
  currency USD
  rate 1.90 USD per gpu_hour
  credit "either" 3% of charge when attempt > 1 or replayed_cost > 2 USD
  cap credits at 10 USD per run
}
"""


def test_a_condition_the_charge_decides_as_a_whole_reaches_every_allocation(
    facts: tuple[pl.DataFrame, pl.DataFrame],
) -> None:
    # An `or` with a charge fact in it is one conjunct that reads the charge: no allocation
    # can be ruled out, so none is priced by the integer pass.
    staged, rep = _split(EITHER, facts)
    assert rep.numerators.height == 0
    assert rep.reachable_rows == staged.result().allocations.height
    _assert_same(staged, MULTIPLIERS)


def test_charges_too_large_for_the_integer_pass_decline(
    facts: tuple[pl.DataFrame, pl.DataFrame],
) -> None:
    # n × numerator(m × f) would pass 2^125: the search evaluates such a multiplier whole.
    _, rep = _split(THRESHOLD, facts)
    assert prices_at(rep, [Fraction(2**125)]) is None
    assert prices_at(None, [Fraction(1)]) is None


def _facts_of(events: list[Event]) -> tuple[pl.DataFrame, pl.DataFrame]:
    return derive_facts(load_trace(frame(events))).collect()


def test_a_line_within_a_hair_of_a_half_is_left_to_the_decimal_evaluation() -> None:
    # 1.702277 USD per GPU-hour × 1.234567, 1 GPU, billed to the µs for 1,261,736,549,288 µs:
    # exactly 1.702277 × 1.234567 × 1261736549288 / 3.6e9 × 100 = 73,656.4999999999999999997…
    # cents, 2.2·10⁻²² USD short of a half. The decimal evaluation holds it at 20 places, where
    # it is the half itself, and rounds it up to 73,657; the integer pass would round it down.
    # The line is within 10⁻¹⁸ of a half, so the batch is declined and the search evaluates
    # the multiplier whole.
    us = 1_261_736_549_288
    end = (T0 + timedelta(microseconds=us)).strftime("%Y-%m-%d %H:%M:%S.%f")
    facts = _facts_of([started("r1", "a1", 0, gpus=1), released("r1", "a1", end)])
    text = """contract "c" { currency USD rate 1.702277 USD per gpu_hour
      billing increment 0.000001 seconds }"""
    staged, rep = _split(text, facts)
    m = Fraction("1.234567")
    exact = Fraction("1.702277") * m * us / 3600 / 10**6 * 100
    assert exact < Fraction(147313, 2)
    assert Fraction(147313, 2) - exact < Fraction(1, 10**18)
    assert at_multiplier(staged, m).totals.gross_minor == 73657
    assert prices_at(rep, [m]) is None
    assert prices_at(rep, [Fraction(3)]) is not None  # a line far from any half: priced


#: 10,000,000 GPUs for a minute at 10^10 USD per GPU-hour: 10^17/60 = 1.67 × 10^15 USD a line,
#: 1.67 × 10^17 cents; × 10, 1.67 × 10^18 cents — within 64 bits, but past the 10^18 minor
#: units a line held at 20 places reaches: at m = 10 the decimal evaluation finds it too large
#: (E405). (3 USD per GPU-hour for 59 minutes was too large once, in the remainder of the
#: hour: no longer, tests/test_evaluate_scenarios.py.)
HUGE_PRICE = "10000000000 USD per gpu_hour"


def test_amounts_past_the_decimals_are_left_to_the_decimal_evaluation() -> None:
    # At m = 1 the staged evaluation holds the line; at m = 10 it passes the 38 digits of the
    # evaluation's decimals (E405); the integer pass would not notice, so it declines and the
    # evaluation of the whole reports the allocation.
    facts = _facts_of([started("r1", "a1", 0, gpus=10_000_000), released("r1", "a1", 1)])
    staged, rep = _split(f'contract "c" {{ currency USD rate {HUGE_PRICE} }}', facts)
    assert prices_at(rep, [Fraction(10)]) is None
    with pytest.raises(ContractlangError, match=r"E405.*allocation `a1` of run `r1`"):
        at_multiplier(staged, Fraction(10))


def test_an_amount_too_large_among_the_reachable_allocations_declines() -> None:
    # Two groups of reachable allocations overflow at 10×; the search evaluates the
    # multiplier whole, whose E405 names the first allocation of the trace (a1), not the
    # first of the largest group.
    events = [started("r1", "a1", 0, gpus=10_000_000, sku="x"), released("r1", "a1", 1)]
    for i in range(3):
        events += [
            started(f"r2{i}", f"b{i}", 0, gpus=10_000_000, sku="y"),
            released(f"r2{i}", f"b{i}", 1),
        ]
    text = f"""contract "c" {{ currency USD rate {HUGE_PRICE}
      credit "x" 1 USD when sku == "x"  credit "y" 1 USD when sku == "y" }}"""
    staged, rep = _split(text, _facts_of(events))
    assert rep.reachable_rows == 4
    assert prices_at(rep, [Fraction(10)]) is None
    with pytest.raises(ContractlangError, match="allocation `a1` of run `r1`"):
        at_multiplier(staged, Fraction(10))


def test_more_credits_than_bits_are_evaluated_whole(
    facts: tuple[pl.DataFrame, pl.DataFrame],
) -> None:
    # 63 credits that reach nothing, then one that reaches every allocation: the reach of the
    # 64th, 2⁶³, would not fit a 64-bit integer, so the split is not made; with one fewer
    # credit it is, and prices as the decimal evaluation does.
    dead = " ".join(f'credit "d{k}" 1 USD when gpus > 100000 gpus' for k in range(63))
    text = (
        f'contract "c" {{ currency USD rate 2 USD per gpu_hour {dead} '
        'credit "live" 1 USD when gpus >= 1 gpus }'
    )
    terms = terms_from_text(text, "t.spot")
    (contract,) = terms.contracts
    staged = stage_contract(ContractRun.of(contract, "t.spot", terms.source_of(contract)), *facts)
    assert repricing(staged) is None
    assert at_multiplier(staged, Fraction(3)).totals.credits_minor < 0  # the live one counts
    fewer = text.replace('credit "d62" 1 USD when gpus > 100000 gpus ', "")  # 63 credits
    (kept,) = terms_from_text(fewer, "t.spot").contracts
    _assert_same(stage_contract(ContractRun.of(kept, "t.spot", None), *facts), [Fraction(3)])


@pytest.mark.parametrize(
    "rate",
    [
        "2.123456789 USD per gpu_hour",  # 9 places: the near-half check runs at each multiplier
        "0.490983936 USD per gpu_minute",  # 2 × 10⁶⁰ … 64-bit at m = 0 alone would not hold n
        "10 USD per gpu_hour / 3",  # 20 places: the price as an integer of them
        # the generator's recorded prices (spot), else a list price
        "trace.price per gpu_hour when capacity == spot rate 3.10 USD per gpu_hour",
    ],
)
def test_fine_prices_at_several_multipliers(
    facts: tuple[pl.DataFrame, pl.DataFrame], rate: str
) -> None:
    terms = terms_from_text(f'contract "c" {{ currency USD rate {rate} }}', "t.spot")
    (contract,) = terms.contracts
    staged = stage_contract(ContractRun.of(contract, "t.spot", terms.source_of(contract)), *facts)
    rep = repricing(staged)
    for ms in ([Fraction(0)], [Fraction(2), Fraction(3)], MULTIPLIERS):
        batch = prices_at(rep, ms)
        if batch is None:  # declined: the search evaluates each whole (checked elsewhere)
            continue
        for m, (runs, t) in zip(ms, batch, strict=True):
            slow = at_multiplier(staged, m)
            assert t == slow.totals, (rate, m)
            assert runs.equals(slow.runs), (rate, m)
    if rate.startswith(("2.12", "0.49")):
        assert prices_at(rep, [Fraction(2), Fraction(3)]) is not None  # not declined


def test_a_price_with_many_places_on_a_long_allocation_is_not_wrapped() -> None:
    # 40.000000000000000001 USD per GPU-hour (18 places) × 60,000 GPUs × about 4.8 years in
    # µs: n = price × GPUs × µs passes 2¹²⁸, where 128-bit integers wrap; the split declines.
    price, gpus = "40.000000000000000001", 60_000
    units = int(price.replace(".", ""))
    us = (2**128 + 2**124) // (units * gpus)
    end = (T0 + timedelta(microseconds=us)).strftime("%Y-%m-%d %H:%M:%S.%f")
    facts = _facts_of([started("r1", "a1", 0, gpus=gpus, price=price), released("r1", "a1", end)])
    text = """contract "c" { currency USD rate trace.price per gpu_hour
      billing increment 0.000001 seconds }"""
    terms = terms_from_text(text, "t.spot")
    (contract,) = terms.contracts
    staged = stage_contract(ContractRun.of(contract, "t.spot", terms.source_of(contract)), *facts)
    assert units * gpus * staged.result().allocations["billable_us"][0] >= 2**128
    assert repricing(staged) is None


def test_lines_past_the_minor_units_decimals_decline() -> None:
    # precision 10, 100 USD per GPU-hour, 1,000 GPUs for 400 minutes: 66,666.67 USD, 6.7·10¹⁴
    # minor units at m = 1; × 2.5 it passes 10¹⁸ minor units, which a Decimal(38, 20) times
    # the minor unit cannot hold (E405): the batch is declined.
    facts = _facts_of([started("r1", "a1", 0, gpus=1000), released("r1", "a1", 400 * 60)])
    text = 'contract "c" { currency USD precision 10 rate 100 USD per gpu_hour }'
    staged, rep = _split(text, facts)
    assert prices_at(rep, [Fraction(5, 2)]) is None
    with pytest.raises(ContractlangError, match="E405"):
        at_multiplier(staged, Fraction(5, 2))


def test_a_condition_with_the_literal_none(facts: tuple[pl.DataFrame, pl.DataFrame]) -> None:
    # `none` in a condition's logic is a boolean none: the split's reach and the evaluation
    # read it alike (it raised in the reach, a decimal none beside a boolean)
    text = """contract "c" { currency USD rate 2 USD per gpu_hour
      credit "a" 5 USD when (true or none) and gpus > 4 gpus
      credit "b" 10% of charge when (false or none) or charge > 50 USD }"""
    staged, _ = _split(text, facts)
    _assert_same(staged, MULTIPLIERS)
