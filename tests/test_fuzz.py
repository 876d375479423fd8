"""Fuzzing: valid traces corrupted every way a real export goes wrong, and `.spot` text mutated,
through the real command line. Whatever the input, a command ends with its own exit code
(never 3, never a traceback); every row of a trace that can be read is either evaluated or set
aside; a trace reordered or converted to another format gives byte-identical JSON.

Bounded for CI: a fixed number of examples, drawn deterministically (the same in every run).
For a longer, random hunt: ``CONTRACTLANG_FUZZ_EXAMPLES=2000 python -m pytest tests/test_fuzz.py``.
"""

from __future__ import annotations

import json
import os
import random
import tempfile
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.cli import no_traceback, run

from contractlang import generate_trace
from contractlang.trace.generate import write_trace

ROOT = Path(__file__).resolve().parents[1]
TERMS = [ROOT / "rulesets" / "northwind-negotiated.spot", ROOT / "rulesets" / "fy27-budget.spot"]
RULESETS = sorted((ROOT / "rulesets").glob("*.spot"))
FORMATS = [".parquet", ".csv", ".ndjson"]

_HUNT = os.environ.get("CONTRACTLANG_FUZZ_EXAMPLES")
FUZZ = settings(
    max_examples=int(_HUNT or 25),
    deadline=None,
    derandomize=_HUNT is None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@cache
def base() -> pl.DataFrame:
    """A valid trace of 4 runs (360 events) with every column the generator writes."""
    return generate_trace(4, seed=3)


def _exit_ok(result: Any, allowed: tuple[int, ...]) -> None:
    no_traceback(result)
    assert result.exit_code in allowed, (result.exit_code, result.output[-2000:])


def _evaluate(trace: Path, aside: Path) -> Any:
    return run("evaluate", *TERMS, trace, "--on-invalid", f"quarantine={aside}", "--format", "json")


# --------------------------------------------------------------------------- corrupt the rows

STRING_COLUMNS = ["run_id", "alloc_id", "source", "event", "sku", "zone", "capacity"]
NASTY = ["\x1b[2J", "\x00", "\n", "\r\n", '"', ",", "\ufeff", "🙂", " ", "", "x" * 300]


def _drop(df: pl.DataFrame, r: random.Random) -> pl.DataFrame:
    return df.drop(r.choice(df.columns))


def _rename(df: pl.DataFrame, r: random.Random) -> pl.DataFrame:
    col = r.choice(df.columns)
    new = r.choice([col.upper(), col + " ", "price" if col != "price" else "cost", col + "_x"])
    return df if new in df.columns else df.rename({col: new})


def _swap_type(df: pl.DataFrame, r: random.Random) -> pl.DataFrame:
    col = r.choice(df.columns)
    to = r.choice([pl.String, pl.Int64, pl.Float64, pl.Boolean, pl.Int8])
    return df.with_columns(pl.col(col).cast(to, strict=False))


def _duplicate(df: pl.DataFrame, r: random.Random) -> pl.DataFrame:
    picks = [r.randrange(df.height) for _ in range(r.randint(1, 5))]
    return pl.concat([df, df[picks]])


def _reorder(df: pl.DataFrame, r: random.Random) -> pl.DataFrame:
    order = list(range(df.height))
    r.shuffle(order)
    return df[order]


def _set_cell(df: pl.DataFrame, col: str, row: int, value: object) -> pl.DataFrame:
    hit = pl.int_range(pl.len()) == row
    dtype = df.schema[col]
    return df.with_columns(
        pl.when(hit).then(pl.lit(value).cast(dtype, strict=False)).otherwise(pl.col(col)).alias(col)
    )


def _control(df: pl.DataFrame, r: random.Random) -> pl.DataFrame:
    col = r.choice(STRING_COLUMNS)
    row = r.randrange(df.height)
    old = df[col][row] or ""
    return _set_cell(df, col, row, old + r.choice(NASTY))


def _null(df: pl.DataFrame, r: random.Random) -> pl.DataFrame:
    return _set_cell(df, r.choice(df.columns), r.randrange(df.height), None)


def _extreme(df: pl.DataFrame, r: random.Random) -> pl.DataFrame:
    col, value = r.choice(
        [
            ("gpus", 10**12),
            ("gpus", 0),
            ("gpus", -1),
            ("price", "-1.5"),
            ("price", "99999999999.999999"),
            ("step", -7),
            ("step", 2**62),
        ]
    )
    return _set_cell(df, col, r.randrange(df.height), value)


def _far_time(df: pl.DataFrame, r: random.Random) -> pl.DataFrame:
    years = r.choice([-2000, -100, 100, 5000])
    row = r.randrange(df.height)
    shifted = pl.col("ts").dt.offset_by(f"{years}y")
    hit = pl.int_range(pl.len()) == row
    return df.with_columns(pl.when(hit).then(shifted).otherwise(pl.col("ts")).alias("ts"))


CORRUPTIONS: dict[str, Callable[[pl.DataFrame, random.Random], pl.DataFrame]] = {
    "drop a column": _drop,
    "rename a column": _rename,
    "swap a type": _swap_type,
    "duplicate rows": _duplicate,
    "reorder rows": _reorder,
    "control characters": _control,
    "a null": _null,
    "an extreme value": _extreme,
    "a far time": _far_time,
}


@FUZZ
@given(
    st.sampled_from(FORMATS),
    st.lists(st.sampled_from(sorted(CORRUPTIONS)), min_size=1, max_size=3),
    st.integers(0, 2**32),
)
def test_corrupted_rows_are_diagnosed_or_set_aside_never_crash(
    ext: str, corruptions: list[str], seed: int
) -> None:
    r = random.Random(seed)
    frame = base()
    for name in corruptions:
        try:
            frame = CORRUPTIONS[name](frame, r)
        except (pl.exceptions.PolarsError, IndexError):
            continue  # not applicable after an earlier corruption (its column gone, say)
    with tempfile.TemporaryDirectory() as tmp:
        trace = Path(tmp) / f"trace{ext}"
        try:
            write_trace(frame, trace)
        except Exception:  # a frame the format cannot hold (CSV/NDJSON of odd types): no file
            return
        _exit_ok(run("trace", "validate", trace, "--format", "json"), (0, 2))
        aside = Path(tmp) / "aside.parquet"
        result = _evaluate(trace, aside)
        _exit_ok(result, (0, 1, 2))
        if result.exit_code == 2:
            return  # the trace as a whole cannot be read: its diagnostics say why, with places
        # Every row written is either evaluated or set aside, with its reasons.
        said = json.loads(result.stdout)["trace"]
        kept, set_aside = said["events"], (said.get("quarantine") or {}).get("rows", 0)
        assert kept + set_aside == frame.height, (kept, set_aside, frame.height, corruptions)
        if set_aside:
            assert pl.read_parquet(aside).height == set_aside


# --------------------------------------------------------------------------- corrupt the bytes


@cache
def _bytes(ext: str) -> bytes:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"t{ext}"
        write_trace(base(), path)
        return path.read_bytes()


@FUZZ
@given(
    st.sampled_from(FORMATS),
    st.sampled_from(["flip", "truncate", "insert", "delete"]),
    st.lists(st.tuples(st.floats(0, 1), st.integers(0, 255)), min_size=1, max_size=8),
)
def test_damaged_files_are_diagnosed_never_crash(
    ext: str, damage: str, spots: list[tuple[float, int]]
) -> None:
    data = bytearray(_bytes(ext))
    for where, byte in spots:
        at = int(where * (len(data) - 1))
        if damage == "flip":
            data[at] ^= byte or 0xFF
        elif damage == "truncate":
            data = data[:at]
            break
        elif damage == "insert":
            data[at:at] = bytes([byte])
        else:
            del data[at : at + 1 + byte % 16]
    with tempfile.TemporaryDirectory() as tmp:
        trace = Path(tmp) / f"trace{ext}"
        trace.write_bytes(bytes(data))
        _exit_ok(run("trace", "validate", trace), (0, 2))
        _exit_ok(_evaluate(trace, Path(tmp) / "aside.parquet"), (0, 1, 2))


# --------------------------------------------------------------------------- the same trace


@cache
def _reference_json() -> str:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "t.parquet"
        write_trace(base(), path)
        result = run("evaluate", *TERMS, path, "--format", "json")
        assert result.exit_code in (0, 1), result.output
        return str(result.stdout)


@FUZZ
@given(st.sampled_from(FORMATS), st.integers(0, 2**32), st.booleans())
def test_a_trace_reordered_or_converted_gives_byte_identical_json(
    ext: str, seed: int, split: bool
) -> None:
    frame = _reorder(base(), random.Random(seed))
    with tempfile.TemporaryDirectory() as tmp:
        if split:  # and in two files of different formats, read as one trace
            cut = random.Random(seed + 1).randrange(1, frame.height)
            first, second = Path(tmp) / f"a{ext}", Path(tmp) / "b.ndjson"
            write_trace(frame[:cut], first)
            write_trace(frame[cut:], second)
            traces = [first, second]
        else:
            traces = [Path(tmp) / f"t{ext}"]
            write_trace(frame, traces[0])
        result = run("evaluate", *TERMS, *traces, "--format", "json")
        assert result.exit_code in (0, 1), result.output
        assert result.stdout == _reference_json()


# --------------------------------------------------------------------------- .spot text

RULESET_LINES = [p.read_text(encoding="utf-8").splitlines(keepends=True) for p in RULESETS]
JUNK = ["{", "}", "(", ")", '"', "#", "when", "per", "%", "-", "1e400", "\t", "\r", "\x00", "é"]


@FUZZ
@given(
    st.sampled_from(range(len(RULESETS))),
    st.lists(
        st.tuples(
            st.sampled_from(["delete", "duplicate", "swap", "junk"]), st.integers(), st.integers()
        ),
        min_size=1,
        max_size=5,
    ),
)
def test_mutated_spot_files_through_check_and_fmt(
    which: int, edits: list[tuple[str, int, int]]
) -> None:
    lines = list(RULESET_LINES[which])
    for op, i, j in edits:
        i, j = i % len(lines), j % len(lines)
        if op == "delete" and len(lines) > 1:
            del lines[i]
        elif op == "duplicate":
            lines.insert(i, lines[j])
        elif op == "swap":
            lines[i], lines[j] = lines[j], lines[i]
        else:
            at = j % (len(lines[i]) or 1)
            lines[i] = lines[i][:at] + JUNK[j % len(JUNK)] + lines[i][at:]
    text = "".join(lines)
    with tempfile.TemporaryDirectory() as tmp:
        spot = Path(tmp) / "draft.spot"
        spot.write_bytes(text.encode())
        checked = run("check", spot)
        _exit_ok(checked, (0, 2))
        _exit_ok(run("check", spot, "--format", "json"), (0, 2))
        _exit_ok(run("fmt", "--check", spot), (0, 1, 2))
        formatted = run("fmt", spot)
        _exit_ok(formatted, (0, 2))
        if formatted.exit_code == 0:
            # A file that formats is one that parses; formatting does not change its verdict.
            again = run("check", spot)
            assert again.exit_code == checked.exit_code, (text, again.output)
            assert run("fmt", "--check", spot).exit_code == 0  # and formatting is idempotent
        else:
            assert spot.read_bytes() == text.encode()  # a file that fails is left alone


@FUZZ
@given(st.binary(max_size=300))
def test_random_bytes_as_a_spot_file(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        spot = Path(tmp) / "x.spot"
        spot.write_bytes(data)
        _exit_ok(run("check", spot), (0, 2))
        _exit_ok(run("fmt", "--check", spot), (0, 1, 2))


@pytest.mark.parametrize("name", sorted(CORRUPTIONS))
def test_each_corruption_changes_the_trace(name: str) -> None:
    """The fuzzer's corruptions do something (a corruption that is a no-op tests nothing)."""
    frame = base()
    changed = any(not CORRUPTIONS[name](frame, random.Random(s)).equals(frame) for s in range(5))
    assert changed
