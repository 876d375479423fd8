"""How each input column becomes a normalised one: its type checked, each value converted,
and the rows whose value cannot be converted flagged with the code and message to report.

One :class:`Column` per input column: ``norm`` is the normalised expression and ``bad`` lists
the checks of its values (a flag expression, a code, a message expression and a help text).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import polars as pl

from contractlang.diagnostics import NO_SPAN, Diagnostic, error, warning
from contractlang.trace import problems as pb
from contractlang.trace.schema import DECIMAL_DTYPE, DECIMAL_SCALE

# digits are ASCII digits: polars' `\d` is any Unicode digit, which no number parser reads
_OFFSET_RE = r"(?:[Zz]|[+-][0-9]{2}:?[0-9]{2})$"
_DATETIME_RE = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:\.[0-9]+)?)?"
_INT_RE = r"^[+-]?[0-9]+$"
_DEC_RE = r"^[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$"
_PLAIN_DEC_RE = r"^[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)$"
_TOO_PRECISE_RE = r"\.[0-9]{" + str(DECIMAL_SCALE) + r"}[0-9]*[1-9]"
_EXPONENT_RE = r"^[+-]?([0-9]*)\.?([0-9]*)[eE]([+-]?[0-9]+)$"  # whole part, fraction, exponent
_TRUE = ("true", "t", "1", "yes", "y")
#: The help of a value too large to be held at all (beyond it, T020 checks the range kept).
WHOLE_TOO_LARGE = "whole numbers are kept in 64 bits"
DECIMAL_TOO_LARGE = "money and decimals are kept exactly: at most 20 digits before the point"
_FALSE = ("false", "f", "0", "no", "n")


@dataclass
class Column:
    """How one input column becomes a normalised one."""

    norm: pl.Expr
    #: rows whose value could not be normalised, with the code and message for each
    bad: list[tuple[pl.Expr, str, pl.Expr, str | None]] = field(default_factory=list)
    #: text whose empty values become null once read (:func:`normalise` tests the column
    #: once, which is cheaper than a test on every row when, as usual, no value is empty)
    blank_later: bool = False


def blank_to_null(expr: pl.Expr) -> pl.Expr:
    return pl.when(expr.str.len_bytes() > 0).then(expr)


def _msg(column: str, tail: str) -> pl.Expr:
    """`<column>` value `<raw>` <tail> (a long value cut: :func:`~contractlang.trace.problems.
    shortened`)."""
    return pl.concat_str(
        pl.lit(f"`{column}` value "),
        pb.backticked(pb.shortened_text(pl.col(column))),
        pl.lit(" " + tail),
    )


def string_column(name: str, dtype: pl.DataType) -> Column | str:
    if dtype == pl.String:
        return Column(pl.col(name), blank_later=True)
    if isinstance(dtype, (pl.Categorical, pl.Enum)) or dtype.is_integer():
        return Column(blank_to_null(pl.col(name).cast(pl.String)))
    return f"`{name}` must hold text, not {describe(dtype)}"


def enum_column(name: str, dtype: pl.DataType, enum: pl.Enum, code: str) -> Column | str:
    if dtype == pl.String:
        # the empty string is no member of the enum, so it becomes null as a blank does
        text = blank_to_null(pl.col(name))
        norm = pl.col(name).cast(enum, strict=False)
        unknown = (pl.col(name).str.len_bytes() > 0) & norm.is_null()
    else:
        base = string_column(name, dtype)
        if isinstance(base, str):
            return base
        text = base.norm
        norm = text.cast(enum, strict=False)
        unknown = text.is_not_null() & norm.is_null()
    what = {"source": "source", "event": "event", "capacity": "capacity"}[name]
    message = pl.concat_str(pl.lit(f"unknown {what} "), pb.backticked(text))
    return Column(norm, [(unknown, code, message, None)])


def int_column(name: str, dtype: pl.DataType) -> Column | str:
    """A whole number in 64 bits: one beyond them (a 5,000-digit text, an unsigned 2⁶⁴ − 1, a
    float of 1e300) is T002 `is too large`, never a value silently missing."""
    col = pl.col(name)
    if dtype.is_integer():
        norm = col.cast(pl.Int64, strict=False)
        large = col.is_not_null() & norm.is_null()
        return Column(norm, [(large, "T002", _msg(name, "is too large"), WHOLE_TOO_LARGE)])
    if dtype == pl.String:
        stripped = col.str.strip_chars()
        norm = stripped.cast(pl.Int64, strict=False)
        bad = stripped.str.len_bytes().gt(0) & norm.is_null()
        large = bad & stripped.str.contains(_INT_RE)
        return Column(
            pl.when(stripped.str.len_bytes() > 0).then(norm),
            [
                (bad & ~large, "T002", _msg(name, "is not a whole number"), None),
                (large, "T002", _msg(name, "is too large"), WHOLE_TOO_LARGE),
            ],
        )
    if dtype.is_float() or isinstance(dtype, pl.Decimal):
        finite = col.is_finite() if dtype.is_float() else col.is_not_null()
        whole = col.is_not_null() & finite & (col == col.round(0))
        norm = pl.when(whole).then(col.cast(pl.Int64, strict=False))
        large = whole & norm.is_null()
        return Column(
            norm,
            [
                (col.is_not_null() & ~whole, "T002", _msg(name, "is not a whole number"), None),
                (large, "T002", _msg(name, "is too large"), WHOLE_TOO_LARGE),
            ],
        )
    return f"`{name}` must hold whole numbers, not {describe(dtype)}"


def bool_column(name: str, dtype: pl.DataType) -> Column | str:
    col = pl.col(name)
    if dtype == pl.Boolean:
        return Column(col)
    if dtype == pl.String or dtype.is_integer():
        text = col.cast(pl.String).str.strip_chars().str.to_lowercase()
        norm = (
            pl.when(text.is_in(_TRUE))
            .then(pl.lit(True))
            .when(text.is_in(_FALSE))
            .then(pl.lit(False))
        )
        present = text.str.len_bytes() > 0
        bad = present & norm.is_null()
        return Column(norm, [(bad, "T002", _msg(name, "is not true or false"), None)])
    return f"`{name}` must hold true or false, not {describe(dtype)}"


def decimal_from_text(name: str, text: pl.Expr) -> Column:
    """Exact decimal from decimal text; more than 18 places, more than 20 digits before the
    point (``1e1000000``, too) or non-numbers (``NaN``, ``Infinity``) are T002."""
    stripped = text.str.strip_chars()
    present = stripped.str.len_bytes() > 0
    number = present & stripped.str.contains(_DEC_RE)
    norm = pl.when(number).then(stripped.str.to_decimal(scale=DECIMAL_SCALE))
    not_number = present & ~number
    too_precise = present & stripped.str.contains(_TOO_PRECISE_RE)
    exponent = number & stripped.str.contains("[eE]")
    precise_exponent = exponent & _exponent_too_precise(stripped)
    # a number that does not fit (polars reads none beyond 38 digits, whatever its exponent)
    too_large = number & norm.is_null() & ~too_precise & ~precise_exponent
    return Column(
        pl.when(~too_precise).then(norm),
        [
            (not_number, "T002", _msg(name, "is not a number"), None),
            (too_large, "T002", _msg(name, "is too large"), DECIMAL_TOO_LARGE),
            (
                too_precise,
                "T002",
                _msg(name, f"has more than {DECIMAL_SCALE} decimal places"),
                "money and decimals are kept exactly, to at most 18 places",
            ),
            (
                precise_exponent,
                "T002",
                _msg(name, f"has more than {DECIMAL_SCALE} decimal places"),
                None,
            ),
        ],
    )


def _exponent_too_precise(text: pl.Expr) -> pl.Expr:
    """Text in exponent notation needing more than 18 places, decided on its digits, in
    polars: no decimal context to overflow (``1e1000000``), no integer of more digits than
    Python converts (an exponent of 5,000 digits), no call of Python a row.

    >>> values = ["1.5e-17", "1.5e-18", "15000e-21", "0e-99", "1e-1000000", "1e1000000"]
    >>> pl.select(_exponent_too_precise(pl.Series(values))).to_series().to_list()
    [False, True, False, False, True, False]
    >>> pl.select(_exponent_too_precise(pl.lit("1e-" + "9" * 5000))).item()
    True
    """
    # only the rows in exponent notation are looked at (the rest are null: cheap)
    parts = pl.when(text.str.contains("[eE]")).then(text).str.extract_groups(_EXPONENT_RE)
    whole, fraction, exponent = (parts.struct.field(k) for k in ("1", "2", "3"))
    digits = pl.concat_str(whole, fraction)
    trailing = digits.str.len_chars() - digits.str.strip_chars_end("0").str.len_chars()
    power = exponent.str.strip_chars_start("+-")
    places = (
        fraction.str.len_chars().cast(pl.Int64)
        - trailing.cast(pl.Int64)
        - exponent.cast(pl.Int64, strict=False)
    )
    # an exponent of more than 18 digits is beyond any count of digits a text could hold
    beyond = pl.when(power.str.len_chars() > 18).then(exponent.str.starts_with("-"))
    return (digits.str.contains("[1-9]") & beyond.otherwise(places > DECIMAL_SCALE)).fill_null(
        False
    )


def decimal_column(
    name: str, dtype: pl.DataType, warnings: list[Diagnostic], file: str
) -> Column | str:
    col = pl.col(name)
    if isinstance(dtype, pl.Decimal):
        if (dtype.scale or 0) <= DECIMAL_SCALE:
            norm = col.cast(DECIMAL_DTYPE, strict=False)
            return Column(
                norm,
                [
                    (
                        col.is_not_null() & norm.is_null(),
                        "T002",
                        _msg(name, "is too large"),
                        DECIMAL_TOO_LARGE,
                    )
                ],
            )
        return decimal_from_text(name, col.cast(pl.String))
    if dtype.is_integer():
        norm = col.cast(DECIMAL_DTYPE, strict=False)
        return Column(
            norm,
            [
                (
                    col.is_not_null() & norm.is_null(),
                    "T002",
                    _msg(name, "is too large"),
                    DECIMAL_TOO_LARGE,
                )
            ],
        )
    if dtype == pl.String:
        return decimal_from_text(name, col)
    if dtype.is_float():
        warnings.append(
            warning(
                "W102",
                f"`{name}` is stored as floating point; each value is read as the decimal its "
                "shortest text spells (2.1 → 2.1)",
                NO_SPAN,
                file=file,
                help="write money as decimal (or as text) to keep it exact",
            )
        )
        finite = col.is_finite()
        conv = decimal_from_text(name, pl.when(finite).then(col.cast(pl.String)))
        conv.bad.append((col.is_not_null() & ~finite, "T002", _msg(name, "is not a number"), None))
        return conv
    return f"`{name}` must hold decimal numbers, not {describe(dtype)}"


def ts_column(name: str, dtype: pl.DataType, file: str) -> Column | Diagnostic:
    col = pl.col(name)
    if isinstance(dtype, pl.Datetime):
        if dtype.time_zone is None:
            return error(
                "T006",
                "`ts` holds timestamps without a time zone",
                NO_SPAN,
                file=file,
                help="store UTC timestamps with a time zone, or ISO 8601 text with an offset",
            )
        return Column(col.dt.convert_time_zone("UTC").dt.cast_time_unit("us"))
    if dtype == pl.String:
        text = col.str.strip_chars()
        present = text.str.len_bytes() > 0
        iso = text.str.replace(r"^(\d{4}-\d{2}-\d{2}) ", "${1}T").str.replace(r"[Zz]$", "+00:00")
        parsed = iso.str.to_datetime(
            "%Y-%m-%dT%H:%M:%S%.f%z", time_unit="us", time_zone="UTC", strict=False
        )
        norm = pl.when(present).then(parsed)
        failed = present & parsed.is_null()
        naive = failed & text.str.contains(_DATETIME_RE) & ~text.str.contains(_OFFSET_RE)
        return Column(
            norm,
            [
                (
                    naive,
                    "T006",
                    pl.concat_str(
                        pl.lit("timestamp "), pb.backticked(text), pl.lit(" has no UTC offset")
                    ),
                    "add `Z` or an offset such as `+00:00`; naive timestamps are ambiguous",
                ),
                (
                    failed & ~naive,
                    "T006",
                    pl.concat_str(
                        pl.lit("timestamp "),
                        pb.backticked(text),
                        pl.lit(" is not ISO 8601 with an offset"),
                    ),
                    "write timestamps like `2025-01-31T23:59:59Z`",
                ),
            ],
        )
    return error(
        "T002",
        f"`ts` must hold timestamps with a time zone or ISO 8601 text, not {describe(dtype)}",
        NO_SPAN,
        file=file,
    )


def describe(dtype: pl.DataType) -> str:
    """What a column of ``dtype`` holds, in words: the trace's messages, and an import's of a
    Parquet column of the wrong type.

    >>> describe(pl.Int32()), describe(pl.Decimal(38, 2)), describe(pl.Map(pl.String, pl.Int8))
    ('integers', 'decimals', 'maps')
    >>> describe(pl.Binary()), describe(pl.Time()), describe(pl.Duration("us"))
    ('binary data', 'times of day', 'durations')
    """
    if dtype.is_integer():
        return "integers"
    if dtype.is_float():
        return "floating-point numbers"
    if isinstance(dtype, pl.Decimal):
        return "decimals"
    if dtype == pl.Boolean:
        return "booleans"
    if isinstance(dtype, pl.Datetime):
        return "timestamps"
    if dtype == pl.Date:
        return "dates"
    if dtype == pl.Time:
        return "times of day"
    if isinstance(dtype, pl.Duration):
        return "durations"
    if dtype == pl.String:
        return "text"
    if dtype == pl.Binary:
        return "binary data"
    if isinstance(dtype, pl.Map):
        return "maps"
    if isinstance(dtype, (pl.List, pl.Array)):
        return "lists"
    if isinstance(dtype, pl.Struct):
        return "records"
    return "values of another type"


def extra_column(
    name: str,
    dtype: pl.DataType,
    inferred: dict[str, pl.DataType],
    warnings: list[Diagnostic],
    file: str,
) -> Column:
    col = pl.col(name)
    if dtype.is_float():
        conv = decimal_column(name, dtype, warnings, file)
        assert isinstance(conv, Column)
        return conv
    if dtype == pl.String and name in inferred and inferred[name] != pl.Null():
        target = inferred[name]
        if target == pl.Boolean:
            conv_b = bool_column(name, dtype)
            assert isinstance(conv_b, Column)
            return conv_b
        if target == pl.Int64:
            return Column(
                pl.when(col.str.len_bytes() > 0).then(col.str.strip_chars().cast(pl.Int64))
            )
        return decimal_from_text(name, col)
    return Column(col)


#: Rows whose values first rule out a type for a text column (the whole column is read only
#: for the columns these rows leave open).
_SAMPLE = 2_000


def infer_text_columns(lf: pl.LazyFrame, names: Sequence[str]) -> dict[str, pl.DataType]:
    """Types for text extras (CSV): whole numbers, decimals or booleans when every value is;
    ``Null`` for a column with no value at all (it stays text, and takes another file's type
    when several are read as one). A column with a value in its first rows that is none of them
    is text, whatever follows: only the others are read whole."""
    if not names:
        return {}
    head = lf.head(_SAMPLE).select(
        (~_typed(pl.col(n).str.strip_chars())).any().alias(n) for n in names
    )
    text = {n for n, is_text in head.collect().row(0, named=True).items() if is_text}
    names = [n for n in names if n not in text]
    if not names:
        return {}
    exprs = []
    for n in names:
        v = pl.col(n).str.strip_chars()
        present = v.is_not_null() & (v.str.len_bytes() > 0)
        exprs += [
            (present.any()).alias(f"{n}\0any"),
            (~present | v.str.contains(_INT_RE)).all().alias(f"{n}\0int"),
            (~present | v.str.contains(_PLAIN_DEC_RE)).all().alias(f"{n}\0dec"),
            (~present | v.str.to_lowercase().is_in(("true", "false"))).all().alias(f"{n}\0bool"),
            (~present | v.cast(pl.Int64, strict=False).is_not_null()).all().alias(f"{n}\0fits"),
        ]
    flags = lf.select(exprs).collect().row(0, named=True)
    out: dict[str, pl.DataType] = {}
    for n in names:
        if not flags[f"{n}\0any"]:
            out[n] = pl.Null()
        elif flags[f"{n}\0int"] and flags[f"{n}\0fits"]:
            out[n] = pl.Int64()
        elif flags[f"{n}\0dec"]:
            out[n] = DECIMAL_DTYPE
        elif flags[f"{n}\0bool"]:
            out[n] = pl.Boolean()
    return out


def _typed(v: pl.Expr) -> pl.Expr:
    """Absent, or a value that could be a whole number, a decimal or a boolean (the int
    pattern is a decimal's; whether it fits 64 bits is left to the full check)."""
    present = v.is_not_null() & (v.str.len_bytes() > 0)
    return ~present | v.str.contains(_PLAIN_DEC_RE) | v.str.to_lowercase().is_in(("true", "false"))
