"""Reading a trace (Parquet, CSV, NDJSON or a polars frame) and normalising its types.

:func:`load_trace` is the entry point: it reads, normalises, validates (``validate.py``) and
returns a :class:`Trace`, or raises :class:`~contractlang.errors.ContractlangError` with every
problem found (up to a limit; the rest are counted).

Normalisation (documented in ``docs/trace.md``):

- ``ts`` becomes ``Datetime("us", "UTC")``. Aware timestamps in any zone are converted; ISO 8601
  text needs an offset (``Z``, ``+hh:mm`` or ``+hhmm``); naive timestamps are rejected (T006).
- ``price``, ``quantity`` and ``amount`` become exact ``Decimal(38, 18)``. Text is parsed as
  decimal text (never through a float); more than 18 decimal places is an error (T002). A
  floating-point column is read value by value through its shortest decimal text (``2.1`` is
  2.1, not 2.100000000000000088…), with warning W102.
- ``gpus`` and ``step`` become ``Int64`` (a float must be whole); ``valid`` becomes a boolean
  (text ``true``/``false``/``1``/``0``; null on a checkpoint means true).
- ``source``, ``event`` and ``capacity`` become ``pl.Enum`` values; unknown values are errors.
- Text columns treat the empty string as missing.
- Extra columns are kept. In CSV they are typed by their text (all whole numbers → ``Int64``,
  all decimals → ``Decimal(38, 18)``, all ``true``/``false`` → boolean, otherwise text); a float
  extra in Parquet becomes a decimal as money columns do (W102); NDJSON numbers with a fraction
  are read through their shortest decimal text.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Literal

import polars as pl

from contractlang.diagnostics import NO_SPAN, Diagnostic, Span, did_you_mean, error, warning
from contractlang.errors import ContractlangError
from contractlang.trace import problems as pb
from contractlang.trace.schema import (
    CAPACITY_ENUM,
    COLUMNS,
    DECIMAL_DTYPE,
    DECIMAL_SCALE,
    EVENT_DTYPES,
    EVENT_ENUM,
    MONEY_COLUMNS,
    REQUIRED_COLUMNS,
    RESERVED_COLUMNS,
    ROW,
    RUN_KEY,
    SOURCE_ENUM,
    TraceSummary,
)

FRAME_NAME = "<frame>"
PARQUET_EXTS = (".parquet", ".pq")
CSV_EXTS = (".csv",)
NDJSON_EXTS = (".ndjson", ".jsonl")

#: Marks a row with a value that could not be normalised (or a missing required value).
BAD = "_bad"
#: The polars engine of the normalising pass (measured faster than ``in-memory`` here).
ENGINE: Literal["streaming", "in-memory"] = "streaming"


def bad_flag(column: str) -> str:
    """The name of the flag that marks a bad value in ``column`` (see :class:`Normalised`)."""
    return f"{BAD}:{column}"


_OFFSET_RE = r"(?:[Zz]|[+-]\d{2}:?\d{2})$"
_DATETIME_RE = r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?"
_INT_RE = r"^[+-]?\d+$"
_DEC_RE = r"^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$"
_PLAIN_DEC_RE = r"^[+-]?(?:\d+\.?\d*|\.\d+)$"
_TOO_PRECISE_RE = r"\.\d{" + str(DECIMAL_SCALE) + r"}\d*[1-9]"
_TRUE = ("true", "t", "1", "yes", "y")
_FALSE = ("false", "f", "0", "no", "n")


@dataclass(frozen=True)
class Trace:
    """A loaded, valid trace.

    ``events`` holds one row per input row, in file order, with the columns of
    :data:`~contractlang.trace.schema.EVENT_DTYPES` (``row`` is the 1-based data row in the
    file; ``run_key`` an integer standing for ``run_id``, in ``run_id`` order) followed by the
    extra columns under their own names. ``extras`` names the columns terms can read as
    ``trace.<column>`` (the extras, plus ``price`` when the input had one). ``index`` holds
    what validating learnt that deriving the facts needs again (:class:`TraceIndex`); a trace
    built without one derives the same facts, a little more slowly.
    """

    events: pl.DataFrame
    source: str
    extras: tuple[str, ...]
    warnings: tuple[Diagnostic, ...]
    summary: TraceSummary
    open_at: datetime | None = None
    columns_read: tuple[str, ...] = field(default=())
    index: TraceIndex | None = None


@dataclass(frozen=True)
class TraceIndex:
    """What validation learns about a valid trace that :func:`derive_facts` needs again, so it
    is not computed twice (grouping the rows by their `alloc_id` text is the costly part).

    ``run_ids`` are the trace's distinct run ids, sorted: a row's ``run_key`` is the position
    of its run here. ``allocations`` has one row per ``started`` row, in file order: the row
    numbers of the start (``start_row``) and of the allocation's end (``end_row``, null when
    it never ends), and the times of its earliest ``notice`` (``notice_at``) and of its
    earliest own ``requested`` (``own_request``), null when it has none. ``events`` is the
    frame they describe: a trace whose events are another frame (a shard, say) does not use
    this index.

    >>> from contractlang.trace import generate_trace
    >>> index = load_trace(generate_trace(2, seed=3)).index
    >>> index.allocations.columns
    ['start_row', 'end_row', 'notice_at', 'own_request']
    """

    run_ids: pl.Series
    allocations: pl.DataFrame
    events: pl.DataFrame = field(repr=False, compare=False)


def load_trace(
    source: str | Path | pl.DataFrame | pl.LazyFrame,
    *,
    open_at: datetime | None = None,
    max_problems: int = 50,
) -> Trace:
    """Read, normalise and validate a trace.

    ``source`` is a path (``.parquet``/``.pq``, ``.csv``, ``.ndjson``/``.jsonl``) or a polars
    frame. ``open_at`` (timezone-aware) closes allocations that never end, as ``released``.
    Raises :class:`ContractlangError` listing up to ``max_problems`` problems (by row) when the
    trace is not valid.

    >>> import polars as pl
    >>> from datetime import datetime, UTC
    >>> t = load_trace(pl.DataFrame({
    ...     "run_id": ["r1", "r1", "r1"], "alloc_id": ["a1", "a1", None],
    ...     "ts": [datetime(2025, 1, 1, h, tzinfo=UTC) for h in (0, 2, 3)],
    ...     "source": ["scheduler", "scheduler", "job"],
    ...     "event": ["started", "released", "accepted"], "gpus": [8, None, None]}))
    >>> t.summary.allocations, t.summary.rows_used
    (1, 3)
    """
    from contractlang.trace.validate import validate

    if open_at is not None and open_at.tzinfo is None:
        raise ContractlangError(
            [error("T006", "`open_at` needs a UTC offset", NO_SPAN, file="contractlang")]
        )
    name = _name(source)
    lf = _read(source, name)
    path = None if isinstance(source, (pl.DataFrame, pl.LazyFrame)) else Path(source)
    normal = normalise(lf, name, max_problems=max_problems, path=path)
    return validate(normal, name=name, open_at=open_at, max_problems=max_problems)


@dataclass(frozen=True)
class Normalised:
    """The output of :func:`normalise`: the events, the first value problems of each kind, and
    the warnings.

    ``events`` has a :data:`BAD` column marking rows with any value problem and, for each column
    in ``bad_columns`` (the columns with at least one bad value), a ``bad_flag(column)`` column
    marking the rows whose value there is bad. A bad value is normalised to null; the flags tell
    it from a value that is simply absent, so each rule can leave out only the rows whose values
    it reads."""

    events: pl.DataFrame
    problems: pl.LazyFrame
    hidden: int  # value problems found but not in ``problems`` (beyond the limit)
    warnings: tuple[Diagnostic, ...]
    extras: tuple[str, ...]
    columns_read: tuple[str, ...]
    bad_columns: tuple[str, ...] = ()
    #: the distinct run ids, sorted (``run_key`` is the position of a row's run here)
    run_ids: pl.Series = field(default_factory=lambda: pl.Series("run_id", [], pl.String))


# --------------------------------------------------------------------------- reading


def _name(source: str | Path | pl.DataFrame | pl.LazyFrame) -> str:
    if isinstance(source, (pl.DataFrame, pl.LazyFrame)):
        return FRAME_NAME
    return str(source)


def _unreadable(name: str, reason: str, help: str | None = None) -> ContractlangError:
    return ContractlangError([error("T017", reason, NO_SPAN, file=name, help=help)])


def _polars_reason(exc: Exception) -> str:
    text = str(exc).strip().splitlines()
    first = text[0] if text else "unknown error"
    return first[:200]


def _read(source: str | Path | pl.DataFrame | pl.LazyFrame, name: str) -> pl.LazyFrame:
    if isinstance(source, pl.DataFrame):
        return source.lazy()
    if isinstance(source, pl.LazyFrame):
        return source
    path = Path(source)
    ext = path.suffix.lower()
    known = PARQUET_EXTS + CSV_EXTS + NDJSON_EXTS
    if ext not in known:
        raise _unreadable(
            name,
            f"cannot read `{name}`: unknown trace format `{path.suffix or '(none)'}`",
            help="a trace ends in `.parquet`, `.csv`, `.ndjson` or `.jsonl`",
        )
    if not path.exists():
        raise _unreadable(name, f"cannot read `{name}`: no such file")
    if not path.is_file():
        raise _unreadable(name, f"cannot read `{name}`: not a file")
    if ext in CSV_EXTS + NDJSON_EXTS:
        _check_text(path, name, "CSV" if ext in CSV_EXTS else "NDJSON")
    try:
        if ext in PARQUET_EXTS:
            lf = pl.scan_parquet(path)
        elif ext in CSV_EXTS:
            lf = pl.scan_csv(path, infer_schema=False, encoding="utf8")
        else:
            lf = _scan_ndjson(path)
        lf.collect_schema()
    except (pl.exceptions.PolarsError, OSError, ValueError) as exc:
        kind = "Parquet" if ext in PARQUET_EXTS else "CSV" if ext in CSV_EXTS else "NDJSON"
        raise _read_failure(name, exc, path, f" as {kind}") from None
    return lf


#: How much of a text trace is looked at to tell text from binary content.
_SNIFF_BYTES = 8192
_BOMS = {
    b"\xff\xfe\x00\x00": "UTF-32",
    b"\x00\x00\xfe\xff": "UTF-32",
    b"\xff\xfe": "UTF-16",
    b"\xfe\xff": "UTF-16",
}


def _check_text(path: Path, name: str, kind: str) -> None:
    """A CSV or NDJSON trace is UTF-8 text: reject binary content (and UTF-16/32 text) with one
    clear error, not a list of missing columns. The first 8 KiB decide, as ``file`` and Perl's
    ``-B`` do: a NUL byte, or more than 30% of characters that are control characters or not
    UTF-8, means binary. A file that is text with a few bad bytes is reported later, where they
    are (:func:`_invalid_utf8_at`)."""
    try:
        with path.open("rb") as fh:
            sample = fh.read(_SNIFF_BYTES)
    except OSError as exc:
        raise _unreadable(name, f"cannot read `{name}`: {exc.strerror or 'read error'}") from None
    for bom, encoding in _BOMS.items():
        if sample.startswith(bom):
            raise _unreadable(
                name,
                f"cannot read `{name}`: it is {encoding} text, not UTF-8",
                help="save it as UTF-8",
            )
    if not sample:
        return
    text = sample.decode("utf-8", errors="replace")
    if len(sample) == _SNIFF_BYTES:
        text = text[:-4]  # the sample may end inside a character
    odd = sum(1 for ch in text if ch == "\ufffd" or (ch < " " and ch not in "\t\n\r\f"))
    if b"\x00" in sample or odd > 0.3 * max(1, len(text)):
        article = "an" if kind == "NDJSON" else "a"
        raise _unreadable(
            name,
            f"cannot read `{name}`: not {article} {kind} file (binary content)",
            help=f"a trace in {kind} is UTF-8 text"
            + (" with a header row" if kind == "CSV" else ", one JSON object a line"),
        )
    # polars reads a header that is not UTF-8 with replacement characters (and would then
    # report its columns as missing): say where the bad bytes are instead
    first, newline, _ = sample.partition(b"\n")
    try:
        first.decode("utf-8")
    except UnicodeDecodeError as exc:
        if newline or exc.reason != "unexpected end of data":
            found = _utf8_problem(name, path)
            if found is not None:
                raise found from None


def _invalid_utf8_at(path: Path) -> tuple[int, int, int] | None:
    """Where the first byte that is not UTF-8 is: ``(byte offset, line, record)``, counted from
    the start of the file (offset from 0, line from 1, record from 0: the CSV header is record
    0, so a CSV record is its data row). Records end at a newline outside double quotes, as CSV
    reads them. ``None`` when the file is valid UTF-8. Reads the file once, in chunks."""
    offset = lines = records = 0
    quoted = False
    pending = b""
    with path.open("rb") as fh:
        while True:
            chunk = fh.read(1 << 20)
            data = pending + chunk
            bad: int | None = None
            try:
                data.decode("utf-8")
                end = len(data)
            except UnicodeDecodeError as exc:
                end = exc.start
                if not (chunk and exc.reason == "unexpected end of data"):
                    bad = exc.start  # (a character cut by the end of the chunk is carried over)
            lines, records, quoted = _count_records(data[:end], lines, records, quoted)
            if bad is not None:
                return offset + bad, lines + 1, records
            if not chunk:
                return None
            offset += end
            pending = data[end:]


def _count_records(data: bytes, lines: int, records: int, quoted: bool) -> tuple[int, int, bool]:
    """Add the newlines, and the newlines outside double quotes, in ``data`` to the counts;
    ``quoted`` says whether ``data`` starts inside a quoted field (and, returned, ends in one)."""
    import numpy as np

    arr = np.frombuffer(data, dtype=np.uint8)
    if not arr.size:
        return lines, records, quoted
    quotes = np.cumsum(arr == 0x22) + int(quoted)
    newline = arr == 0x0A
    lines += int(newline.sum())
    records += int((newline & (quotes % 2 == 0)).sum())
    return lines, records, bool(quotes[-1] % 2)


def _read_failure(
    name: str, exc: Exception, path: Path | None, kind: str = ""
) -> ContractlangError:
    """T017 for a file polars could not read; for text that is not UTF-8, where the bad bytes
    are (:func:`_utf8_problem`)."""
    if path is not None and path.suffix.lower() in CSV_EXTS + NDJSON_EXTS:
        found = _utf8_problem(name, path)
        if found is not None:
            return found
    return _unreadable(name, f"cannot read `{name}`{kind}: {_polars_reason(exc)}")


def _utf8_problem(name: str, path: Path) -> ContractlangError | None:
    """T017 naming where the first byte that is not UTF-8 is: on its row (data rows as CSV
    counts them; NDJSON lines), with the line and byte offset, or in the CSV header. ``None``
    when the file is UTF-8 (or cannot be read again)."""
    try:
        where = _invalid_utf8_at(path)
    except OSError:
        return None
    if where is None:
        return None
    offset, line, record = where
    csv = path.suffix.lower() in CSV_EXTS
    row = record if csv else line
    place = f"line {line:,}, byte offset {offset:,}"
    if csv and record == 0:
        message = f"cannot read `{name}`: invalid utf-8 in the header ({place})"
        return _unreadable(name, message, help="save the file as UTF-8")
    return ContractlangError(
        [
            error(
                "T017",
                f"cannot read `{name}`: invalid utf-8 at {place}",
                Span.point(row, 0),
                file=name,
                help="save the file as UTF-8",
            )
        ]
    )


def _scan_ndjson(path: Path) -> pl.LazyFrame:
    """NDJSON with every number that has a fraction read as text, so it becomes an exact
    decimal (JSON numbers are decimal text; polars would otherwise parse them as floats)."""
    first = pl.scan_ndjson(path, infer_schema_length=None)
    schema = first.collect_schema()
    as_text = {
        c: pl.String() for c, t in schema.items() if t.is_float() or c in MONEY_COLUMNS or c == "ts"
    }
    return pl.scan_ndjson(path, infer_schema_length=None, schema_overrides=as_text)


# --------------------------------------------------------------------------- normalising


@dataclass
class _Column:
    """How one input column becomes a normalised one."""

    norm: pl.Expr
    #: rows whose value could not be normalised, with the code and message for each
    bad: list[tuple[pl.Expr, str, pl.Expr, str | None]] = field(default_factory=list)
    #: text whose empty values become null once read (:func:`normalise` tests the column
    #: once, which is cheaper than a test on every row when, as usual, no value is empty)
    blank_later: bool = False


def _blank_to_null(expr: pl.Expr) -> pl.Expr:
    return pl.when(expr.str.len_bytes() > 0).then(expr)


def _msg(column: str, tail: str) -> pl.Expr:
    """`<column>` value `<raw>` <tail>."""
    return pl.concat_str(
        pl.lit(f"`{column}` value "),
        pb.backticked(pl.col(column).cast(pl.String)),
        pl.lit(" " + tail),
    )


def _string_column(name: str, dtype: pl.DataType) -> _Column | str:
    if dtype == pl.String:
        return _Column(pl.col(name), blank_later=True)
    if isinstance(dtype, (pl.Categorical, pl.Enum)) or dtype.is_integer():
        return _Column(_blank_to_null(pl.col(name).cast(pl.String)))
    return f"`{name}` must hold text, not {_describe(dtype)}"


def _enum_column(name: str, dtype: pl.DataType, enum: pl.Enum, code: str) -> _Column | str:
    if dtype == pl.String:
        # the empty string is no member of the enum, so it becomes null as a blank does
        text = _blank_to_null(pl.col(name))
        norm = pl.col(name).cast(enum, strict=False)
        unknown = (pl.col(name).str.len_bytes() > 0) & norm.is_null()
    else:
        base = _string_column(name, dtype)
        if isinstance(base, str):
            return base
        text = base.norm
        norm = text.cast(enum, strict=False)
        unknown = text.is_not_null() & norm.is_null()
    what = {"source": "source", "event": "event", "capacity": "capacity"}[name]
    message = pl.concat_str(pl.lit(f"unknown {what} "), pb.backticked(text))
    return _Column(norm, [(unknown, code, message, None)])


def _int_column(name: str, dtype: pl.DataType) -> _Column | str:
    col = pl.col(name)
    if dtype.is_integer():
        return _Column(col.cast(pl.Int64, strict=False), [])
    if dtype == pl.String:
        stripped = col.str.strip_chars()
        norm = stripped.cast(pl.Int64, strict=False)
        bad = stripped.str.len_bytes().gt(0) & norm.is_null()
        return _Column(
            pl.when(stripped.str.len_bytes() > 0).then(norm),
            [(bad, "T002", _msg(name, "is not a whole number"), None)],
        )
    if dtype.is_float() or isinstance(dtype, pl.Decimal):
        whole = col.is_not_null() & (col == col.round(0))
        norm = pl.when(whole).then(col.cast(pl.Int64, strict=False))
        bad = col.is_not_null() & norm.is_null()
        return _Column(norm, [(bad, "T002", _msg(name, "is not a whole number"), None)])
    return f"`{name}` must hold whole numbers, not {_describe(dtype)}"


def _bool_column(name: str, dtype: pl.DataType) -> _Column | str:
    col = pl.col(name)
    if dtype == pl.Boolean:
        return _Column(col)
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
        return _Column(norm, [(bad, "T002", _msg(name, "is not true or false"), None)])
    return f"`{name}` must hold true or false, not {_describe(dtype)}"


def _decimal_from_text(name: str, text: pl.Expr) -> _Column:
    """Exact decimal from decimal text; more than 18 places or non-numbers are T002."""
    stripped = text.str.strip_chars()
    present = stripped.str.len_bytes() > 0
    norm = pl.when(present & stripped.str.contains(_DEC_RE)).then(
        stripped.str.to_decimal(scale=DECIMAL_SCALE)
    )
    not_number = present & norm.is_null()
    too_precise = present & stripped.str.contains(_TOO_PRECISE_RE)
    exponent = present & stripped.str.contains("[eE]") & ~not_number
    return _Column(
        pl.when(~too_precise).then(norm),
        [
            (not_number, "T002", _msg(name, "is not a number"), None),
            (
                too_precise,
                "T002",
                _msg(name, f"has more than {DECIMAL_SCALE} decimal places"),
                "money and decimals are kept exactly, to at most 18 places",
            ),
            (
                exponent & _exponent_too_precise(stripped),
                "T002",
                _msg(name, f"has more than {DECIMAL_SCALE} decimal places"),
                None,
            ),
        ],
    )


def _exponent_too_precise(text: pl.Expr) -> pl.Expr:
    """Text in exponent notation needing more than 18 places (rare; checked exactly)."""
    from decimal import Decimal, InvalidOperation

    def check(value: str | None) -> bool:
        if value is None:
            return False
        try:
            exp = Decimal(value).normalize().as_tuple().exponent
        except InvalidOperation:
            return False
        return isinstance(exp, int) and -exp > DECIMAL_SCALE

    return text.map_elements(check, return_dtype=pl.Boolean, skip_nulls=True).fill_null(False)


def _decimal_column(
    name: str, dtype: pl.DataType, warnings: list[Diagnostic], file: str
) -> _Column | str:
    col = pl.col(name)
    if isinstance(dtype, pl.Decimal):
        if (dtype.scale or 0) <= DECIMAL_SCALE:
            norm = col.cast(DECIMAL_DTYPE, strict=False)
            return _Column(
                norm,
                [(col.is_not_null() & norm.is_null(), "T002", _msg(name, "is too large"), None)],
            )
        return _decimal_from_text(name, col.cast(pl.String))
    if dtype.is_integer():
        norm = col.cast(DECIMAL_DTYPE, strict=False)
        return _Column(
            norm, [(col.is_not_null() & norm.is_null(), "T002", _msg(name, "is too large"), None)]
        )
    if dtype == pl.String:
        return _decimal_from_text(name, col)
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
        conv = _decimal_from_text(name, pl.when(finite).then(col.cast(pl.String)))
        conv.bad.append((col.is_not_null() & ~finite, "T002", _msg(name, "is not a number"), None))
        return conv
    return f"`{name}` must hold decimal numbers, not {_describe(dtype)}"


def _ts_column(name: str, dtype: pl.DataType, file: str) -> _Column | Diagnostic:
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
        return _Column(col.dt.convert_time_zone("UTC").dt.cast_time_unit("us"))
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
        return _Column(
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
        f"`ts` must hold timestamps with a time zone or ISO 8601 text, not {_describe(dtype)}",
        NO_SPAN,
        file=file,
    )


def _describe(dtype: pl.DataType) -> str:
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
    if dtype == pl.String:
        return "text"
    if isinstance(dtype, (pl.List, pl.Array)):
        return "lists"
    if isinstance(dtype, pl.Struct):
        return "records"
    return "values of another type"


def _extra_column(
    name: str,
    dtype: pl.DataType,
    inferred: dict[str, pl.DataType],
    warnings: list[Diagnostic],
    file: str,
) -> _Column:
    col = pl.col(name)
    if dtype.is_float():
        conv = _decimal_column(name, dtype, warnings, file)
        assert isinstance(conv, _Column)
        return conv
    if dtype == pl.String and name in inferred:
        target = inferred[name]
        if target == pl.Boolean:
            conv_b = _bool_column(name, dtype)
            assert isinstance(conv_b, _Column)
            return conv_b
        if target == pl.Int64:
            return _Column(
                pl.when(col.str.len_bytes() > 0).then(col.str.strip_chars().cast(pl.Int64))
            )
        return _decimal_from_text(name, col)
    return _Column(col)


def _infer_text_columns(lf: pl.LazyFrame, names: Sequence[str]) -> dict[str, pl.DataType]:
    """Types for text extras (CSV): whole numbers, decimals or booleans when every value is."""
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
            continue
        if flags[f"{n}\0int"] and flags[f"{n}\0fits"]:
            out[n] = pl.Int64()
        elif flags[f"{n}\0dec"]:
            out[n] = DECIMAL_DTYPE
        elif flags[f"{n}\0bool"]:
            out[n] = pl.Boolean()
    return out


def normalise(
    lf: pl.LazyFrame, name: str, *, max_problems: int = 50, path: Path | None = None
) -> Normalised:
    """Check the columns and normalise every value's type (one pass over the data).

    Raises :class:`ContractlangError` for whole-file problems (a missing required column, a
    column of the wrong type, a naive timestamp column, a reserved name, an unreadable file:
    ``path``, the file ``lf`` reads, if any, is searched for bytes that are not UTF-8).
    Problems with single values are returned as a problem frame; their rows are marked
    :data:`BAD`."""
    schema = lf.collect_schema()
    names = list(schema.names())
    file_problems: list[Diagnostic] = []
    warnings: list[Diagnostic] = []

    for reserved in RESERVED_COLUMNS:
        if reserved in names:
            file_problems.append(
                error(
                    "T018",
                    f"the trace has a column named `{reserved}`, a name contractlang uses itself",
                    NO_SPAN,
                    file=name,
                    help="rename the column",
                )
            )
    for col in REQUIRED_COLUMNS:
        if col not in names:
            guess = did_you_mean(col, [n for n in names if n not in COLUMNS])
            file_problems.append(
                error(
                    "T001",
                    f"missing required column `{col}`",
                    NO_SPAN,
                    file=name,
                    help=f"did you mean `{guess}`?" if guess else None,
                )
            )

    extras = [n for n in names if n not in COLUMNS and n not in RESERVED_COLUMNS]
    text_extras = [n for n in extras if schema[n] == pl.String]

    builders: dict[str, Callable[[str, pl.DataType], _Column | str]] = {
        "run_id": _string_column,
        "alloc_id": _string_column,
        "sku": _string_column,
        "zone": _string_column,
        "source": lambda n, t: _enum_column(n, t, SOURCE_ENUM, "T003"),
        "event": lambda n, t: _enum_column(n, t, EVENT_ENUM, "T004"),
        "capacity": lambda n, t: _enum_column(n, t, CAPACITY_ENUM, "T002"),
        "gpus": _int_column,
        "step": _int_column,
        "valid": _bool_column,
    }
    columns: dict[str, _Column] = {}
    for col in COLUMNS:
        if col not in names:
            continue
        dtype = schema[col]
        built: _Column | str | Diagnostic
        if col == "ts":
            built = _ts_column(col, dtype, name)
        elif col in MONEY_COLUMNS:
            built = _decimal_column(col, dtype, warnings, name)
        else:
            built = builders[col](col, dtype)
        if isinstance(built, Diagnostic):
            file_problems.append(built)
        elif isinstance(built, str):
            file_problems.append(error("T002", built, NO_SPAN, file=name))
        else:
            columns[col] = built
    if file_problems:
        raise ContractlangError(file_problems)

    try:
        inferred = _infer_text_columns(lf, text_extras)
    except pl.exceptions.PolarsError as exc:
        raise _read_failure(name, exc, path) from None
    for extra in extras:
        columns[extra] = _extra_column(extra, schema[extra], inferred, warnings, name)

    # required values
    for col in ("run_id", "ts", "source", "event"):
        raw = pl.col(col)
        missing = raw.is_null()
        if schema[col] == pl.String:
            missing = missing | (raw.str.strip_chars().str.len_bytes() == 0)
        columns[col].bad.append((missing, "T015", pl.lit(f"missing `{col}`"), None))

    checks = [
        _Check(col, bad.fill_null(False), code, message, hint, _suggest(col, code))
        for col, conv in columns.items()
        for bad, code, message, hint in conv.bad
    ]
    # the checks of the screened columns are left out of the first pass: they run (exactly as
    # written) in a second pass only when the normalised column shows a value they may flag
    first = [k for k, c in enumerate(checks) if c.column not in _SCREENED]
    values = [pl.col(ROW).cast(pl.Int64)]
    values += [columns[c].norm.alias(c) for c in COLUMNS if c in columns]
    values += [columns[e].norm.alias(e) for e in extras]
    flags = [checks[k].bad.alias(f"_b{k}") for k in first]
    try:
        frame = lf.with_row_index(ROW, offset=1).select(values + flags).collect(engine=ENGINE)
    except pl.exceptions.PolarsError as exc:
        raise _read_failure(name, exc, path) from None
    later = [c for c, conv in columns.items() if conv.blank_later]
    found_empty = frame.select((pl.col(c).str.len_bytes() == 0).any() for c in later)
    empty = [c for c in later if found_empty.get_column(c).item()]
    if empty:
        frame = frame.with_columns(_blank_to_null(pl.col(c)).alias(c) for c in empty)
    run_ids = frame.get_column("run_id").drop_nulls().unique().sort()
    suspect = _suspect_columns(frame, run_ids)
    second = [k for k, c in enumerate(checks) if c.column in suspect]
    if second:
        try:
            late = lf.select(checks[k].bad.alias(f"_b{k}") for k in second).collect(engine=ENGINE)
        except pl.exceptions.PolarsError as exc:
            raise _read_failure(name, exc, path) from None
        frame = frame.with_columns(late.get_columns())

    # checks never run flag no row (their screen showed no value they could flag)
    ran = sorted(first + second)
    found = frame.select(pl.col(f"_b{k}").sum() for k in ran).row(0) if ran else ()
    flag_count = dict(zip(ran, found, strict=True))
    counts = [flag_count.get(k, 0) for k in range(len(checks))]
    problem_frames, hidden = _value_problems(lf, frame, checks, counts, max_problems)
    # which column of a row is bad, for the columns that have a bad value at all (so a valid
    # trace carries none of these flags)
    by_column: dict[str, list[str]] = {}
    for k, (check, count) in enumerate(zip(checks, counts, strict=True)):
        if count:
            by_column.setdefault(check.column, []).append(f"_b{k}")
    bad_columns = tuple(by_column)
    # (over every flag computed, all false but for those counted: a column computed row by
    # row keeps the frame's chunks, where a constant would be one chunk)
    any_bad = pl.any_horizontal(f"_b{k}" for k in ran) if ran else pl.lit(False)
    frame = frame.with_columns(
        any_bad.alias(BAD),
        *[pl.any_horizontal(fs).alias(bad_flag(c)) for c, fs in by_column.items()],
    ).drop(f"_b{k}" for k in ran)
    # optional schema columns absent from the input are null columns of their type
    absent = [pl.lit(None, dtype=EVENT_DTYPES[c]).alias(c) for c in COLUMNS if c not in names]
    if absent:
        frame = frame.with_columns(absent)
    frame = _add_run_key(frame, run_ids).select(
        [ROW, RUN_KEY, *COLUMNS, *extras, BAD, *[bad_flag(c) for c in bad_columns]]
    )
    extras_out = tuple(sorted((["price"] if "price" in names else []) + extras))
    return Normalised(
        frame,
        problem_frames,
        hidden,
        tuple(warnings),
        extras_out,
        tuple(names),
        bad_columns,
        run_ids,
    )


#: Columns whose value checks run only when the normalised column may hold a value they flag.
#: Each of their checks flags only rows whose normalised value is null, or (``run_id``) text
#: of whitespace only: a missing value (null, empty or blank text) and an unknown `source` or
#: `event` become null, and so does a `ts` that cannot be read; a blank `run_id` that is not
#: empty is kept as it is. A column with no such value has no bad value, so a valid trace
#: skips these checks (the blank test on the raw text of 10M rows alone costs 0.3 s).
_SCREENED = ("run_id", "ts", "source", "event")


def _suspect_columns(frame: pl.DataFrame, run_ids: pl.Series) -> set[str]:
    """The screened columns of the normalised ``frame`` with a value their checks may flag
    (see :data:`_SCREENED`); ``run_ids`` are the distinct non-null run ids."""
    suspect = {c for c in _SCREENED if c in frame.columns and frame.get_column(c).null_count()}
    blank = run_ids.len() and (run_ids.str.strip_chars().str.len_bytes() == 0).any()
    if "run_id" in frame.columns and blank:
        suspect.add("run_id")
    return suspect


@dataclass(frozen=True)
class _Check:
    column: str
    bad: pl.Expr
    code: str
    message: pl.Expr
    help: str | None
    suggest: str | None


def _suggest(column: str, code: str) -> str | None:
    """The vocabulary to suggest from for an unknown enum value."""
    return column if column in ("source", "event", "capacity") and code != "T015" else None


def _value_problems(
    lf: pl.LazyFrame,
    frame: pl.DataFrame,
    checks: Sequence[_Check],
    counts: Sequence[int],
    limit: int,
) -> tuple[pl.LazyFrame, int]:
    """Messages for the first ``limit`` bad rows of each check, built from the raw values
    (a second read of only those rows); the other bad rows are counted in ``hidden``."""
    wanted: list[int] = []
    hidden = 0
    for k, count in enumerate(counts):
        if count:
            rows = frame.filter(pl.col(f"_b{k}")).get_column(ROW).head(limit)
            wanted.extend(rows.to_list())
            hidden += count - len(rows)
    if not wanted:
        return pb.empty(), hidden
    raw = (
        lf.with_row_index(ROW, offset=1)
        .filter(pl.col(ROW).is_in(sorted(set(wanted))))
        .with_columns(pl.col(ROW).cast(pl.Int64))
        .collect()
    )
    frames = []
    for check, count in zip(checks, counts, strict=True):
        if not count:
            continue
        bad_rows = raw.filter(check.bad).head(limit)
        frames.append(
            pb.problems(
                bad_rows,
                check.code,
                check.message,
                help=check.help,
                suggest=check.suggest,
                value=pl.col(check.column).cast(pl.String),
            )
        )
    return pl.concat(frames), hidden


def _add_run_key(frame: pl.DataFrame, runs: pl.Series) -> pl.DataFrame:
    """An integer per ``run_id``, in ``run_id`` order (joins and sorts on it are cheaper): the
    position of the run in ``runs``, the sorted distinct run ids, through an ``Enum``.

    (A cast keeps the column in the frame's chunks; a lookup by hash, though cheaper alone,
    gives one chunk, and the frame is then copied whole to line its columns up again.)"""
    key = pl.col("run_id").cast(pl.Enum(runs)).to_physical().cast(pl.UInt32)
    return frame.with_columns(key.alias(RUN_KEY))
