"""Several trace files read as one: each extra column has one type across them.

A schema column has its schema's type in every file (each file's values are read into it, or
are T002 on their row). An extra column keeps the type its file gives it, so two files can
disagree: numbers in one and booleans in the other, say, which a plain concatenation would
merge as 1 and 0 without a word. The rule: a column's type in every file where it holds a value
must be the same, or widen without changing a value —

- whole numbers of any width → the narrowest of ``Int64`` and ``Int128`` that holds them all;
- whole numbers and decimals, or decimals with different places → a decimal of 38 digits with
  the most places of them (``Decimal(38, 18)``, what text and floating-point values are read
  as, holds every whole number of 64 bits); a value whose whole part it cannot hold is T002 on
  its row (`` `x` value `…` is too large ``), as a Parquet decimal too large for a money
  column is;
- text of any kind (text, categories) → text.

Nothing widens to a floating-point type (floating-point extras are read as decimals already),
and no other pair of types widens: a boolean is no number, a date no text. A column with no
value at all in a file (empty throughout, as an export's unused column is) takes the type the
other files give it. Each conflict is T002 on the first row of the later file holding a value of
the column, naming both files and types.

    >>> from contractlang.trace.normalise import prepare
    >>> row = {"run_id": ["r1"], "alloc_id": [None], "ts": ["2025-01-01T00:00:00Z"],
    ...        "source": ["job"], "event": ["accepted"], "gpus": [None]}
    >>> a = prepare(pl.LazyFrame({**row, "prio": [1]}), "a.parquet")
    >>> b = prepare(pl.LazyFrame({**row, "prio": [True]}), "b.parquet")
    >>> try:
    ...     unite([a, b])
    ... except ContractlangError as exc:
    ...     diag = exc.diagnostics[0]
    ...     print(diag.code, diag.span.line, diag.message)
    T002 1 the column `prio` holds booleans in `b.parquet` but whole numbers in `a.parquet`
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import polars as pl

from contractlang.diagnostics import Diagnostic, Span, error
from contractlang.errors import ContractlangError
from contractlang.trace import problems as pb
from contractlang.trace.columns import Column, describe
from contractlang.trace.normalise import Prepared
from contractlang.trace.schema import ROW

#: The bits of each integer type a column may hold (one missing: too wide for any).
_BITS: dict[pl.DataType, int] = {
    pl.Int8(): 8,
    pl.UInt8(): 8,
    pl.Int16(): 16,
    pl.UInt16(): 16,
    pl.Int32(): 32,
    pl.UInt32(): 32,
    pl.Int64(): 64,
    pl.UInt64(): 64,
    pl.Int128(): 128,
}
#: The digits of the largest whole number of each of them (2^bits − 1, or 2^(bits − 1) − 1
#: signed): ``Int32`` 10, ``UInt64`` 20, ``Int128`` 39.
_INT_DIGITS: dict[pl.DataType, int] = {
    t: len(str(2 ** (bits if t.is_unsigned_integer() else bits - 1) - 1))
    for t, bits in _BITS.items()
}
#: The integer types an ``Int64`` holds every value of.
_WITHIN_64 = {t for t, d in _INT_DIGITS.items() if d <= 10} | {pl.Int64()}
HELP = (
    "a column holds one type in every file: whole numbers of any width, and whole numbers "
    "with decimals, are read together; no other types are"
)


def extra_types(prep: Prepared) -> dict[str, pl.DataType | None]:
    """The type each extra column of a file is read as; None for one with no value in it (a
    text file's empty column, or a typed one — a Parquet column of booleans — all null)."""
    schema = prep.lf.select(prep.columns[e].norm.alias(e) for e in prep.extras).collect_schema()
    typed = [e for e in prep.extras if prep.inferred.get(e) != pl.Null()]
    held = prep.lf.select(pl.col(e).is_not_null().any() for e in typed).collect() if typed else None
    return {
        e: schema[e] if held is not None and e in typed and held[e].item() else None
        for e in prep.extras
    }


def widened(a: pl.DataType, b: pl.DataType) -> pl.DataType | None:
    """The type ``a`` and ``b`` are read together as, or None when they cannot be.

    >>> widened(pl.Int32(), pl.Int64()), widened(pl.Int64(), pl.UInt64())
    (Int64, Int128)
    >>> widened(pl.Int64(), pl.Decimal(38, 18)), widened(pl.Decimal(38, 2), pl.Decimal(10, 4))
    (Decimal(precision=38, scale=18), Decimal(precision=38, scale=4))
    >>> widened(pl.Int64(), pl.Boolean()), widened(pl.String(), pl.Date())
    (None, None)
    """
    if a == b:
        return a
    if _is_text(a) and _is_text(b):
        return pl.String()
    if a.is_integer() and b.is_integer():
        if a in _WITHIN_64 and b in _WITHIN_64:
            return pl.Int64()
        return pl.Int128() if a in _INT_DIGITS and b in _INT_DIGITS else None
    if not all(t.is_integer() or isinstance(t, pl.Decimal) for t in (a, b)):
        return None
    return pl.Decimal(38, max(t.scale or 0 for t in (a, b) if isinstance(t, pl.Decimal)))


def _holds_all(target: pl.DataType, t: pl.DataType) -> bool:
    """Whether ``target`` holds every value of ``t`` (else each is checked as it is read).

    >>> money = pl.Decimal(38, 18)
    >>> _holds_all(money, pl.Int64()), _holds_all(money, pl.Decimal(38, 2))
    (True, False)
    """
    if not isinstance(target, pl.Decimal):
        return True  # integers and text widen exactly
    if isinstance(t, pl.Decimal):
        whole = (t.precision or 38) - (t.scale or 0)
    else:
        whole = _INT_DIGITS.get(t, 39)
    return whole <= (target.precision or 38) - (target.scale or 0)


def _is_text(t: pl.DataType) -> bool:
    return t == pl.String or isinstance(t, (pl.Categorical, pl.Enum))


def unite(files: Sequence[Prepared]) -> list[Prepared]:
    """The files with each extra column read as the one type it has across them (see the
    module docstring); :class:`ContractlangError` with every conflict, each T002 on its row.
    A single file is returned as it is."""
    if len(files) < 2:
        return list(files)
    types = [extra_types(f) for f in files]
    united: dict[str, pl.DataType] = {}
    first: dict[str, int] = {}  # the file that gave each column its first type
    problems: list[Diagnostic] = []
    conflicted: set[str] = set()  # each column's first conflict is said
    for k, file_types in enumerate(types):
        for column, t in file_types.items():
            if t is None or column in conflicted:
                continue
            if column not in united:
                united[column], first[column] = t, k
                continue
            wide = widened(united[column], t)
            if wide is None:
                before = files[first[column]]
                problems.append(_conflict(files[k], column, t, before.name, united[column]))
                conflicted.add(column)
            else:
                united[column] = wide
    if problems:
        raise ContractlangError(problems)
    return [_read_as(f, t, united) for f, t in zip(files, types, strict=True)]


def _read_as(
    prep: Prepared, types: dict[str, pl.DataType | None], united: dict[str, pl.DataType]
) -> Prepared:
    """``prep`` with its extras read as ``united``'s types (a column with no value in the file
    as nulls of that type)."""
    columns = dict(prep.columns)
    for column, t in types.items():
        target = united.get(column)
        if target is None or t == target:
            continue
        was = columns[column]
        if t is None:
            columns[column] = Column(pl.lit(None, dtype=target), [], blank_later=False)
        elif _holds_all(target, t):
            columns[column] = replace(was, norm=was.norm.cast(target))
        else:
            norm = was.norm.cast(target, strict=False)
            large = was.norm.is_not_null() & norm.is_null()
            message = pl.concat_str(
                pl.lit(f"`{column}` value "),
                pb.backticked(pb.shortened_text(was.norm)),
                pl.lit(" is too large"),
            )
            reason = f"`{column}` is read as {_detailed(target)}, to hold its values in every file"
            check = (large, "T002", message, reason)
            columns[column] = replace(was, norm=norm, bad=[*was.bad, check])
    return replace(prep, columns=columns)


def _conflict(
    prep: Prepared, column: str, found: pl.DataType, other: str, before: pl.DataType
) -> Diagnostic:
    """T002 on the first row of ``prep``'s file holding a value of ``column``."""
    value = prep.columns[column].norm
    held = value.is_not_null()
    if found == pl.String:
        held = held & (value.str.strip_chars().str.len_bytes() > 0)
    rows = prep.lf.with_row_index(ROW, offset=1).filter(held).select(ROW).head(1).collect()
    span = Span.point(int(rows.item()), 0) if rows.height else Span(0, 0, 0, 0)
    mine, theirs = _words(found, before)
    message = f"the column `{column}` holds {mine} in `{prep.name}` but {theirs} in `{other}`"
    return error("T002", message, span, file=prep.name, help=HELP)


def _words(a: pl.DataType, b: pl.DataType) -> tuple[str, str]:
    """How a message names two types: in words, and in more words when those are the same
    (timestamps in different units or zones, say)."""
    plain = (_word(a), _word(b))
    if plain[0] != plain[1]:
        return plain
    return _detailed(a), _detailed(b)


def _word(t: pl.DataType) -> str:
    return "whole numbers" if t.is_integer() else describe(t)


def _detailed(t: pl.DataType) -> str:
    if isinstance(t, pl.Datetime):
        return f"timestamps in {_UNITS[t.time_unit]} ({t.time_zone or 'no time zone'})"
    if isinstance(t, pl.Duration):
        return f"durations in {_UNITS[t.time_unit]}"
    if isinstance(t, pl.Decimal):
        return f"decimals of {t.precision} digits, {t.scale} after the point"
    if isinstance(t, (pl.List, pl.Array)):
        inner = t.inner if isinstance(t.inner, pl.DataType) else t.inner()
        return f"lists of {_detailed(inner)}"
    if isinstance(t, pl.Struct):
        return "records of " + ", ".join(f"`{f.name}`" for f in t.fields)
    if t.is_integer():  # in a list: lists of numbers are not widened
        sign = "unsigned " if t.is_unsigned_integer() else ""
        return f"{sign}whole numbers of {_bits(t)} bits"
    return _word(t)


def _bits(t: pl.DataType) -> int:
    return _BITS.get(t, 128)


_UNITS = {"ns": "nanoseconds", "us": "microseconds", "ms": "milliseconds"}
