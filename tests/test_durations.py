"""The one reader of durations (``contractlang.lang.durations``), as each of its callers
configures it: the command line's duration flags (``--clock-skew``), a rehearsal's
``--notice`` and ``--replacement-wait``, and the workload file's ``*_seconds`` keys. Every
unit, case, sign, exponent, huge value and piece of junk, one table for all."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support.workloads import Raw, workload

from contractlang.cli.inputs import FLAG_DURATIONS
from contractlang.cli.inputs import parse_duration as flag_duration
from contractlang.diagnostics import render_all
from contractlang.errors import ContractlangError
from contractlang.lang.durations import (
    UNIT_MICROS,
    BadDuration,
    DurationReader,
    whole_micros,
    written,
)
from contractlang.lang.numbers import LONGEST_US
from contractlang.rehearse.settings import DURATIONS as REHEARSAL_DURATIONS
from contractlang.rehearse.settings import parse_duration as rehearsal_duration
from contractlang.simulate.workload import parse_workload

S = 1_000_000  # µs in a second
MIN = 60 * S
H = 3600 * S
DAY = 86_400 * S
NOT = "is not a duration"
LONG = "is longer than"
FINE = "is finer than a microsecond"

# text → (the command line's reading, a rehearsal's): microseconds, or what the refusal says
TABLE: dict[str, tuple[int | str, int | str]] = {
    # every unit word, in the units each flag takes
    "1us": (1, NOT),
    "1µs": (1, NOT),
    "1μs": (NOT, NOT),  # a Greek mu, not the micro sign
    "1ms": (1_000, 1_000),
    "1s": (S, S),
    "1sec": (S, S),
    "1secs": (S, NOT),
    "1second": (S, S),
    "1seconds": (S, S),
    "1m": (MIN, MIN),
    "1min": (MIN, MIN),
    "1mins": (MIN, NOT),
    "1minute": (MIN, MIN),
    "1minutes": (MIN, MIN),
    "1h": (H, H),
    "1hour": (H, H),
    "1hours": (H, H),
    "1hr": (NOT, NOT),
    "1d": (NOT, DAY),
    "1day": (NOT, DAY),
    "1days": (NOT, DAY),
    # case: a rehearsal takes unit words in any case, the command line as listed
    "1S": (NOT, S),
    "2 MIN": (NOT, 2 * MIN),
    "1 Hours": (NOT, H),
    # a bare number is seconds on the command line; a rehearsal wants its unit
    "2": (2 * S, NOT),
    "0": (0, NOT),
    "0.5": (S // 2, NOT),
    # zero, decimals, blanks
    "0s": (0, 0),
    "0.0ms": (0, 0),
    "1.5h": (5_400 * S, 5_400 * S),  # 1.5 × 3600 s
    "250ms": (250_000, 250_000),
    " 2 min ": (2 * MIN, 2 * MIN),
    "2\tmin\n": (2 * MIN, 2 * MIN),
    "2\u00a0min": (2 * MIN, 2 * MIN),  # a no-break space is a blank too
    "007s": (7 * S, 7 * S),
    ".5s": (NOT, NOT),
    "5.s": (NOT, NOT),
    "1.5.s": (NOT, NOT),
    # signs and exponents are not written
    "-1s": (NOT, NOT),
    "+1s": (NOT, NOT),
    "1e3s": (NOT, NOT),
    "1E3": (NOT, NOT),
    # finer than a microsecond: never rounded, however many digits
    "0.000001s": (1, 1),
    "0.0000001s": (FINE, FINE),
    "0.0001ms": (FINE, FINE),
    "1.0000000000000000000000000000001s": (FINE, FINE),  # 28 digits would round it to 1 s
    "0." + "0" * 5000 + "1s": (FINE, FINE),
    "0.5us": (FINE, NOT),
    # the longest each takes: the span of a trace's times (109,573 days = 2,629,752 h);
    # 365 days for a rehearsal
    "2629752h": (LONGEST_US, LONG),
    "2629753h": (LONG, LONG),
    "8760h": (365 * DAY, 365 * DAY),
    "365 days": (NOT, 365 * DAY),
    "365.000001 days": (NOT, LONG),  # 0.0864 s more
    "99999999999999999999s": (LONG, LONG),
    "9" * 5000 + "s": (LONG, LONG),
    "99999999999999999999.0000001s": (LONG, LONG),  # longer first, then finer
    # junk
    "": (NOT, NOT),
    " ": (NOT, NOT),
    "soon": (NOT, NOT),
    "s": (NOT, NOT),
    "10 parsecs": (NOT, NOT),
    "1s2": (NOT, NOT),
    "1 s s": (NOT, NOT),
    "1_000s": (NOT, NOT),
    "1,5s": (NOT, NOT),
    "inf s": (NOT, NOT),
    "nan": (NOT, NOT),
    "٣s": (NOT, NOT),  # an Arabic-Indic 3: digits are ASCII
    "1 second!": (NOT, NOT),
}

READERS = {"flag": (FLAG_DURATIONS, 0), "rehearsal": (REHEARSAL_DURATIONS, 1)}


@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize("text", TABLE)
def test_every_reader_reads_the_table(reader: str, text: str) -> None:
    durations, column = READERS[reader]
    expected = TABLE[text][column]
    if isinstance(expected, int):
        assert durations.micros(text, "--x") == expected
    else:
        with pytest.raises(BadDuration) as info:
            durations.micros(text, "--x")
        assert expected in info.value.message
        shown = text if len(text) <= 40 else text[:39] + "…"
        assert info.value.message.startswith(f"`--x {shown}` {expected}")


def test_each_refusal_says_why_and_what_to_do() -> None:
    with pytest.raises(BadDuration) as info:
        FLAG_DURATIONS.micros("soon", "--clock-skew")
    assert (info.value.message, info.value.help) == (
        "`--clock-skew soon` is not a duration",
        "write a number and a unit, such as `30s`, `500ms`, `2 min` or `1.5h`; a bare number "
        "is seconds",
    )
    with pytest.raises(BadDuration) as info:
        REHEARSAL_DURATIONS.micros("10", "--notice")
    assert info.value.help == "write a number and a unit, such as `30s`, `500ms`, `2 min` or `1.5h`"
    with pytest.raises(BadDuration) as info:
        FLAG_DURATIONS.micros("2629753h", "--clock-skew")
    assert info.value.message == (
        "`--clock-skew 2629753h` is longer than the times a trace holds (1900-01-01 to 2199-12-31)"
    )
    assert info.value.help is None
    with pytest.raises(BadDuration) as info:
        REHEARSAL_DURATIONS.micros("366d", "--notice")
    assert info.value.message == "`--notice 366d` is longer than 365 days"
    assert info.value.help is not None
    assert "really waited" in info.value.help
    with pytest.raises(BadDuration) as info:
        REHEARSAL_DURATIONS.micros("1.0000001s", "--notice")
    assert (info.value.message, info.value.help) == (
        "`--notice 1.0000001s` is finer than a microsecond",
        None,
    )


@pytest.mark.parametrize("reader", READERS)
def test_the_examples_of_the_help_are_read(reader: str) -> None:
    durations, _ = READERS[reader]
    examples = durations.help.split("`")[1::2]
    assert examples == ["30s", "500ms", "2 min", "1.5h"]
    assert [durations.micros(e, "--x") for e in examples] == [30 * S, 500_000, 2 * MIN, 5_400 * S]


def test_each_caller_gives_the_refusal_under_its_own_code() -> None:
    with pytest.raises(ContractlangError) as info:
        flag_duration("soon", "--clock-skew")
    assert [d.code for d in info.value.diagnostics] == ["E502"]
    with pytest.raises(ContractlangError) as info:
        rehearsal_duration("soon", "--notice")
    assert [d.code for d in info.value.diagnostics] == ["E702"]
    assert flag_duration("1.5", "--clock-skew").total_seconds() == 1.5


@given(st.integers(min_value=0, max_value=LONGEST_US))
def test_written_durations_read_back(us: int) -> None:
    assert FLAG_DURATIONS.micros(written(us), "--x") == us


# a number of seconds (as a TOML or JSON number is read) → whole microseconds, or None
NUMBERS: dict[str, int | None] = {
    "1.5": 1_500_000,
    "0": 0,
    "0E-999999999": 0,  # zero, however it is written
    "8.6": 8_600_000,
    "31536000": 31_536_000 * S,  # a year: the workload's longest step
    "-1": -S,  # the sign is the caller's to bound
    "1e-6": 1,
    "1e-7": None,
    "8.6000001": None,
    "1.0000000000000000000000000000001": None,  # 28 digits would round it to 1 s
    "1e-999999999": None,  # a step of no time at all, were it rounded
    "1e999999999": None,  # beyond a 64-bit integer of µs
    "9223372036854.775807": 2**63 - 1,
    "9223372036854.775808": None,
    "Infinity": None,
    "NaN": None,
}


@pytest.mark.parametrize("number", NUMBERS)
def test_numbers_of_seconds_are_whole_microseconds_or_none(number: str) -> None:
    assert whole_micros(Decimal(number), "s") == NUMBERS[number]


@pytest.mark.parametrize("value", ["1.0000000000000000000000000000001", "1e-999999999"])
def test_a_workload_step_finer_than_a_microsecond_is_refused(value: str) -> None:
    with pytest.raises(ContractlangError) as info:
        parse_workload(workload(step_seconds=Raw(value)), "w.toml")
    text = render_all(info.value.diagnostics, info.value.sources)
    assert f"w.toml:8:1: error[E605]: `step_seconds` `{value}` is finer than a microsecond" in text


def test_every_unit_word_is_a_whole_number_of_microseconds() -> None:
    # the language's units (second … day) and their short forms agree
    assert {w: UNIT_MICROS[w] for w in ("second", "minute", "hour", "day")} == {
        "second": S,
        "minute": MIN,
        "hour": H,
        "day": DAY,
    }
    for short, long in (("s", "second"), ("m", "minute"), ("h", "hour"), ("d", "day")):
        assert UNIT_MICROS[short] == UNIT_MICROS[long] == UNIT_MICROS[long + "s"]
    with pytest.raises(ValueError, match="unknown unit words"):
        DurationReader(frozenset({"fortnight"}), 1, "1 µs")
