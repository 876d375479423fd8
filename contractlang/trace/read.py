"""Reading a trace file (Parquet, CSV, NDJSON) or frame as a lazy frame, with every reason it
cannot be read (T017) said in our words and, for text that is not UTF-8, where it is."""

from __future__ import annotations

import contextlib
import csv
import io
import os
import re
import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import polars as pl
from polars._typing import PolarsDataType

from contractlang.diagnostics import NO_SPAN, NOT_UTF8_NAME, RENAME, Span, error, utf8_name
from contractlang.errors import ContractlangError
from contractlang.trace.schema import MONEY_COLUMNS
from contractlang.trace.text_structure import (
    csv_problem,
    ndjson_problem,
    trailing_blank_lines,
    vanishing_number,
)

FRAME_NAME = "<frame>"
PARQUET_EXTS = (".parquet", ".pq")
CSV_EXTS = (".csv",)
NDJSON_EXTS = (".ndjson", ".jsonl")


def source_name(source: str | Path | pl.DataFrame | pl.LazyFrame) -> str:
    if isinstance(source, (pl.DataFrame, pl.LazyFrame)):
        return FRAME_NAME
    return str(source)


def _unreadable(name: str, reason: str, help: str | None = None) -> ContractlangError:
    return ContractlangError([error("T017", reason, NO_SPAN, file=name, help=help)])


def _polars_reason(exc: Exception) -> str:
    text = str(exc).strip().splitlines()
    first = text[0] if text else "unknown error"
    return first[:200]


def read(source: str | Path | pl.DataFrame | pl.LazyFrame, name: str) -> pl.LazyFrame:
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
    if not utf8_name(path):
        raise _unreadable(name, f"cannot read `{name}`: {NOT_UTF8_NAME}", help=RENAME)
    if ext in CSV_EXTS + NDJSON_EXTS:
        _check_text(path, name, "CSV" if ext in CSV_EXTS else "NDJSON")
    try:
        if ext in PARQUET_EXTS:
            _check_zones(path, name)
            lf = pl.scan_parquet(path)
        elif ext in CSV_EXTS:
            _check_header(path, name)
            lf = pl.scan_csv(path, infer_schema=False, encoding="utf8")
            blank = trailing_blank_lines(path)  # harmless layout, not rows
            if blank:
                lf = lf.filter(pl.int_range(pl.len()) < pl.len() - blank)
        else:
            lf = _scan_ndjson(path, name)
        lf.collect_schema()
    except (pl.exceptions.PolarsError, OSError, ValueError) as exc:
        kind = "Parquet" if ext in PARQUET_EXTS else "CSV" if ext in CSV_EXTS else "NDJSON"
        raise read_failure(name, exc, path, f" as {kind}") from None
    except pl.exceptions.PanicException as exc:  # a BaseException: polars' Rust code panicked
        zone = re.search(r"unable to parse time zone: '([^']*)'", str(exc))
        if zone is None:
            raise
        raise _unknown_zone(name, zone[1]) from None
    return lf


#: Lets polars read a schema with a time zone it does not know instead of panicking (it
#: prints the panic, and a stack trace under ``RUST_BACKTRACE``, before Python can catch it).
_LENIENT_ZONES = "POLARS_IGNORE_TIMEZONE_PARSE_ERROR"
_LENIENCY = threading.Lock()


@contextlib.contextmanager
def lenient_zones() -> Iterator[None]:
    """Polars' leniency about time zones it cannot parse, lent for the ``with`` block (one
    block at a time): the setting the process had, or none, comes back after it."""
    with _LENIENCY:
        before = os.environ.get(_LENIENT_ZONES)
        os.environ[_LENIENT_ZONES] = "1"
        try:
            yield
        finally:
            if before is None:
                del os.environ[_LENIENT_ZONES]
            else:
                os.environ[_LENIENT_ZONES] = before


def _check_zones(path: Path, name: str) -> None:
    """T017 for a Parquet file whose timestamps name a time zone polars cannot read (a fixed
    offset such as ``+05:30``, as pyarrow writes one), at any depth of a column's type: found
    in the file's schema, read leniently, before polars reads it strictly and panics. A file
    polars cannot read at all is left to the scan, which says why."""
    try:
        with lenient_zones():
            schema = pl.read_parquet_schema(path)
    except (pl.exceptions.PolarsError, OSError, ValueError):
        return
    for dtype in schema.values():
        for zone in _zones(dtype):
            try:
                pl.Series(dtype=pl.Int64).cast(pl.Datetime("us", zone))
            except pl.exceptions.ComputeError:
                raise _unknown_zone(name, zone) from None


def _zones(dtype: PolarsDataType) -> Iterator[str]:
    """The time zones of the timestamps in ``dtype``, in lists, arrays and structs too."""
    if isinstance(dtype, pl.Datetime):
        if dtype.time_zone is not None:
            yield dtype.time_zone
    elif isinstance(dtype, (pl.List, pl.Array)):
        yield from _zones(dtype.inner)
    elif isinstance(dtype, pl.Struct):
        for field in dtype.fields:
            yield from _zones(field.dtype)


def _unknown_zone(name: str, zone: str) -> ContractlangError:
    return _unreadable(
        name,
        f"cannot read `{name}`: a column's time zone `{zone}` is no zone polars reads",
        help="write the times in UTC, or with a named zone such as `Asia/Kolkata` "
        "(a fixed offset such as `+05:30` is not one)",
    )


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
    if kind == "CSV" and b"\r" in sample and b"\n" not in sample:
        # polars takes CR for no line end at all: the whole file would be one header line
        raise _unreadable(
            name,
            f"cannot read `{name}`: its line endings are CR only (old Mac), not LF or CRLF",
            help="save it as CSV with LF or CRLF line endings",
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


def _check_header(path: Path, name: str) -> None:
    """A CSV header that names a column twice is T017 naming it: polars would rename the
    second one (``gpus_duplicated_0``) and read on as if it were another column."""
    try:
        with path.open(encoding="utf-8-sig", errors="replace", newline="") as fh:
            header = next(csv.reader(fh), [])
    except csv.Error:
        return  # a header csv cannot read: polars says why
    seen: set[str] = set()
    for column in header:
        if column in seen:
            raise _unreadable(
                name,
                f"cannot read `{name}`: the header names the column `{column}` more than once",
                help="name each column once",
            )
        seen.add(column)


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
    arr = np.frombuffer(data, dtype=np.uint8)
    if not arr.size:
        return lines, records, quoted
    quotes = np.cumsum(arr == 0x22) + int(quoted)
    newline = arr == 0x0A
    lines += int(newline.sum())
    records += int((newline & (quotes % 2 == 0)).sum())
    return lines, records, bool(quotes[-1] % 2)


def read_failure(name: str, exc: Exception, path: Path | None, kind: str = "") -> ContractlangError:
    """T017 for a file polars could not read, in our words: for text that is not UTF-8, where
    the bad bytes are (:func:`_utf8_problem`); for CSV and NDJSON, the first row that breaks
    the format (:mod:`~contractlang.trace.text_structure`); else what kind of file it is not."""
    ext = path.suffix.lower() if path is not None else ""
    kinds = {**dict.fromkeys(PARQUET_EXTS, "Parquet"), **dict.fromkeys(CSV_EXTS, "CSV")}
    what = kinds.get(ext, "NDJSON")
    if path is not None and _is_empty(path):
        return _unreadable(name, f"cannot read `{name}` as {what}: the file is empty")
    if path is not None and ext in CSV_EXTS + NDJSON_EXTS:
        found = _utf8_problem(name, path) or (
            csv_problem(name, path) if ext in CSV_EXTS else ndjson_problem(name, path)
        )
        if found is not None:
            return found
    duplicate = re.match(r"column with name '(.*)' has more than one occurrence", str(exc))
    if ext in PARQUET_EXTS and isinstance(exc, pl.exceptions.DuplicateError) and duplicate:
        return _unreadable(
            name,
            f"cannot read `{name}`: the file names the column `{duplicate[1]}` more than once",
            help="name each column once",
        )
    if ext in PARQUET_EXTS:
        return _unreadable(
            name,
            f"cannot read `{name}` as Parquet: it is not a Parquet file, or it is damaged or "
            "cut short",
            help="write the trace again, or convert it to Parquet with another tool",
        )
    if path is None:
        return _unreadable(name, f"cannot read the trace frame: {_polars_reason(exc)}")
    return _unreadable(name, f"cannot read `{name}` as {what}: it is not well-formed {what}")


def _is_empty(path: Path) -> bool:
    try:
        return path.stat().st_size == 0
    except OSError:
        return False


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


def _scan_ndjson(path: Path, name: str) -> pl.LazyFrame:
    """NDJSON with every number that has a fraction read as text, so it becomes an exact
    decimal (JSON numbers are decimal text; polars would otherwise parse them as floats). A
    byte-order mark (which the fast reader refuses) is skipped: the file is then read from
    memory. A number polars would read as 0 though it is not (``1e-400``) is T002 on its row
    (:func:`~contractlang.trace.text_structure.vanishing_number`)."""
    with path.open("rb") as fh:
        bom = fh.read(3) == b"\xef\xbb\xbf"
    if bom:
        data = path.read_bytes()[3:]
        first = pl.read_ndjson(io.BytesIO(data), infer_schema_length=None).lazy()
    else:
        first = pl.scan_ndjson(path, infer_schema_length=None)
    schema = first.collect_schema()
    as_text = {
        c: pl.String() for c, t in schema.items() if t.is_float() or c in MONEY_COLUMNS or c == "ts"
    }
    floats = [c for c, t in schema.items() if t.is_float()]
    if floats:
        found = vanishing_number(name, path, floats)
        if found is not None:
            raise found
    if bom:
        return pl.read_ndjson(
            io.BytesIO(data), infer_schema_length=None, schema_overrides=as_text
        ).lazy()
    return pl.scan_ndjson(path, infer_schema_length=None, schema_overrides=as_text)
