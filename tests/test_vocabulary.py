"""The language's words are written once (``contractlang.lang.vocabulary``); where a type has
to spell them again, it spells the same words."""

from __future__ import annotations

import typing

from contractlang.lang import vocabulary as v
from contractlang.lang.types import UNITS
from contractlang.trace.schema import CAPACITIES, END_EVENTS, Capacity, EndReason


def test_literal_types_list_the_vocabulary() -> None:
    assert typing.get_args(Capacity) == v.ENUMS["capacity"] == CAPACITIES
    assert typing.get_args(EndReason) == v.ENUMS["end_reason"]
    assert set(typing.get_args(EndReason)) == END_EVENTS
    assert typing.get_args(v.CapLevel) == v.CAP_LEVELS
    assert typing.get_args(v.RoundingMode) == v.ROUNDING_MODES
    assert tuple(typing.get_args(v.CompareOp)) == tuple(v.FLIP) == tuple(v.COMPARE)


def test_flipping_a_comparison_twice_gives_it_back() -> None:
    assert all(v.FLIP[v.FLIP[op]] == op for op in v.FLIP)
    # a < b is b > a, for every pair of values
    for a in (1, 2):
        for b in (1, 2):
            assert all(v.COMPARE[op](a, b) == v.COMPARE[v.FLIP[op]](b, a) for op in v.FLIP)


def test_percentiles_and_units() -> None:
    assert v.percentile("p95") == 95
    assert v.percentile("p101") == 101  # the checker reports it out of range
    assert v.percentile("pmax") is None
    assert v.percentile("mean") is None
    for word, seconds in v.TIME_UNITS.items():
        assert UNITS[word].factor == UNITS[word + "s"].factor == seconds
        assert UNITS["gpu_" + word].factor == seconds
