"""The price search's split evaluation (`evaluate/repricing.py`) is, run by run and column by
column, the evaluation of the contract from the charge at the same multiplier
(`variants.at_multiplier`, itself checked in test_compare.py against the contract with every
rate's price written multiplied in its source text)."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import polars as pl
import pytest

from contractlang.evaluate.repricing import GROUPS, Repricing, prices_at, repricing
from contractlang.evaluate.variants import Staged, at_multiplier, stage_contract
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
    staged = stage_contract(contract, *facts, terms.source_of(contract))
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
        staged = stage_contract(contract, *facts, terms.source_of(contract))
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
    allocations = staged.result.allocations
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
    assert rep.reachable_rows == staged.result.allocations.height
    _assert_same(staged, MULTIPLIERS)


def test_charges_too_large_for_the_integer_pass_decline(
    facts: tuple[pl.DataFrame, pl.DataFrame],
) -> None:
    # n × numerator(m × f) would pass 2^125: the search evaluates such a multiplier whole.
    _, rep = _split(THRESHOLD, facts)
    assert prices_at(rep, [Fraction(2**125)]) is None
    assert prices_at(None, [Fraction(1)]) is None
