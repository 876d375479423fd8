"""The exact number rules of ``contractlang.lang.numbers`` and their vectorised twins agree."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

import polars as pl
from hypothesis import given
from hypothesis import strategies as st

from contractlang.evaluate.ledger import hours
from contractlang.evaluate.settings import round_up
from contractlang.lang.numbers import MICROS_PER_HOUR, gpu_hours, round_fraction

# GPU-µs whose GPU-hours end in an exact half at the 7th place: µs × 10⁶ ≡ 1.8 × 10⁹ (mod
# 3.6 × 10⁹), i.e. µs ≡ 1800 (mod 3600)
TIES = st.integers(min_value=-(10**15), max_value=10**15).map(lambda k: k * 3600 + 1800)
ANY = st.integers(min_value=-(10**17), max_value=10**17)


@given(st.lists(st.one_of(ANY, TIES), min_size=1, max_size=50))
def test_ledger_hours_equal_the_exact_rule(values: list[int]) -> None:
    column = pl.DataFrame({"us": values}, schema={"us": pl.Int64}).select(hours(pl.col("us")))
    assert column.to_series().to_list() == [gpu_hours(v) for v in values]


def test_gpu_hours_rounds_half_away_from_zero() -> None:
    # 1800 µs = 0.0000005 h: a tie at the 7th place, away from zero
    assert gpu_hours(1800) == Decimal("0.000001")
    assert gpu_hours(-1800) == Decimal("-0.000001")
    # 1799 µs = 0.00000049972… h: below the tie
    assert gpu_hours(1799) == Decimal("0.000000")
    assert gpu_hours(MICROS_PER_HOUR * 3 // 2) == Decimal("1.500000")


@given(st.fractions(), st.integers(min_value=0, max_value=12))
def test_round_fraction_is_within_half_a_unit(value: Fraction, places: int) -> None:
    for half_even in (True, False):
        got = Fraction(round_fraction(value, places, half_even=half_even))
        assert abs(got - value) <= Fraction(1, 2 * 10**places)


@given(st.integers(min_value=0, max_value=10**15), st.integers(min_value=1, max_value=10**9))
def test_round_up_is_the_same_on_ints_and_columns(us: int, increment: int) -> None:
    expected = -(-us // increment) * increment  # the ceiling, written another way
    assert round_up(us, increment) == expected
    column = pl.DataFrame({"us": [us]}).select(round_up(pl.col("us"), increment))
    assert column.item() == expected
