"""A CSV export read as a table of text, exactly as Python's :mod:`csv` reads it, at the speed
of polars' reader.

The rows and values are those of ``csv.reader`` over the file: records counted from 1 after
the header, a blank line a record of no values, quoted values unquoted (``""`` inside is one
quote, a line break inside is kept), and each record's number of fields — a record with more or
fewer fields than the header is the caller's to reject, with its count. Two readers give them:

- **fast** (polars, every file that is plain CSV): one pass reads the values, another the
  lines. A record's field count follows from its commas: each comma is a separator or is inside
  a value, so ``fields = commas in the record − commas in its values + 1``. That holds for a
  record polars reads with fewer fields than the header (it pads it with empty values) and
  gives more than the header's count for one with more (polars drops the rest, and their
  commas with them), so every record whose count is not the header's is found; each of those is
  read again with :mod:`csv` from its text, and must agree.
- **exact** (:mod:`csv`, row by row): for whatever the fast reader cannot vouch for — a file that
  is not UTF-8, that ends inside a quote, with a lone carriage return, a NUL, a blank first
  line, quoting polars refuses, or any disagreement in the checks above.

Either way the table is the same (``tests/test_import_focus_reader.py`` compares them).

A file whose last line has no line break is read when its last record is whole — every field
the header names present, its quotes closed — and the table says so
(:attr:`Table.unterminated`: the importer notes it, I044); a last record with fewer fields than
the header, or inside a quote, is I003: the file was cut short.
"""

from __future__ import annotations

import codecs
import csv
import io
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import polars as pl

from contractlang.errors import ContractlangError
from contractlang.importers.text import cut_short, format_error, read_text

#: The record's number (data rows from 1; the header is not a row).
ROW = "_row"
#: How many fields the record has (0 for a blank line).
FIELDS = "_fields"


@dataclass
class Table:
    """The header and, for the columns asked for (``c{i}``, ``i`` the header position), every
    record's values as text; :data:`ROW` and :data:`FIELDS` beside them. ``records(rows)``
    gives the records as written (without their line break)."""

    header: list[str]
    frame: pl.DataFrame
    path: Path
    #: which reader read it: ``quick`` or ``full`` (the fast reader's modes), ``exact``, or
    #: ``parquet`` (:mod:`~contractlang.importers.focus.parquet_table`)
    mode: str
    #: the record texts the reader already holds (the exact reader holds them all)
    texts: dict[int, str] = field(default_factory=dict)
    lines: pl.DataFrame | None = None  # fast reader: each record's first line and line count
    #: the last record's row when the file's last line has no line break (read whole)
    unterminated: int | None = None
    #: then, that line's number and the value the record ends with (the note names them)
    unterminated_end: tuple[int, str] | None = None
    #: the columns (header positions) whose values were stored as floating point (Parquet)
    floats: frozenset[int] = frozenset()

    def records(self, rows: Sequence[int]) -> dict[int, str]:
        """The records ``rows`` as written in the file, without their line break."""
        missing = [r for r in rows if r not in self.texts]
        if missing and self.lines is not None:
            self.texts.update(_record_texts(self.path, self.lines, missing))
        return {r: self.texts[r] for r in rows}


def column(i: int) -> str:
    """The name of header position ``i``'s column in :attr:`Table.frame`."""
    return f"c{i}"


def read_table(path: Path, name: str, wanted: Sequence[int] | None = None) -> Table:
    """The file as a :class:`Table` of the header positions ``wanted`` (all when None); I003
    when its last line has no line break and its last record is not whole."""
    table = _fast(path, wanted)
    whole = _ends_with_line_break(path)
    if table is not None and not whole and not _last_agrees(table):
        table = None  # polars drops a last empty field when no line break follows it
    if table is None:
        table = _exact(path, name, wanted)
    if not whole and table.frame.height:
        _check_last(table, name)
    return table


def _last_agrees(table: Table) -> bool:
    """Whether :mod:`csv` reads the last record as the fast reader did (its field count and
    the values kept)."""
    if table.frame.height == 0:
        return True
    last = table.frame.height
    counts = _csv_counts(table, [last])
    return counts is not None and counts[last] == table.frame.get_column(FIELDS)[-1]


def _ends_with_line_break(path: Path) -> bool:
    with path.open("rb") as fh:
        fh.seek(0, io.SEEK_END)
        if fh.tell() == 0:
            return True
        fh.seek(-1, io.SEEK_END)
        return fh.read(1) in (b"\n", b"\r")


def _check_last(table: Table, name: str) -> None:
    """The last record of a file without a final line break: whole (every field the header
    names, its quotes closed) is :attr:`Table.unterminated`; else I003, cut short."""
    last = table.frame.height
    fields = table.frame.get_column(FIELDS)[-1]
    width = len(table.header)
    text = table.records([last])[last]
    if _open_quote(text):
        # the file's last line is line feeds + 1; the record began its line feeds earlier
        raise open_quote(name, _lines_in(table.path) + 1 - text.count("\n"))
    if fields < width:
        raise cut_short(name, _lines_in(table.path) + 1, fields, width)
    table.unterminated = last
    values = next(csv.reader(io.StringIO(text, newline="")), [])
    table.unterminated_end = (_lines_in(table.path) + 1, values[-1] if values else "")


def _lines_in(path: Path) -> int:
    """How many line feeds the file holds."""
    count = 0
    with path.open("rb") as fh:
        while block := fh.read(1 << 23):
            count += block.count(b"\n")
    return count


def open_quote(name: str, line: int) -> ContractlangError:
    """I003: the file ends inside a quoted value, opened on ``line``."""
    return format_error(
        name,
        f"`{name}` ends inside a quoted value that opens on line {line:,} (cut short, "
        "or a quote never closed?)",
        help='every `"` that opens a value needs one that closes it; a `"` inside '
        'a quoted value is written twice (`""`)',
    )


def header_of(path: Path, name: str) -> list[str] | None:
    """The header's values (None for an empty file), read as :func:`read_table` reads them."""
    fast = _fast_header(path)
    if fast is not None:
        return fast
    rows = records(name, _text(path, name))
    first = next(rows, None)
    return None if first is None else first[0]


# --------------------------------------------------------------------------- the exact reader


def _text(path: Path, name: str) -> str:
    return read_text(path)


def records(name: str, text: str) -> Iterator[tuple[list[str], str]]:
    """Each CSV record of ``text`` (the header first): its values as :mod:`csv` reads them, and
    the record as written (without its line break). A blank line is a record of no values. A
    file that ends inside a quoted value is I003: a quote never closed swallows every line after
    it into one value."""
    lines = list(io.StringIO(text, newline=""))  # split where csv splits: \n, \r\n, \r
    reader = csv.reader(lines)
    done = 0
    for values in reader:
        raw = "".join(lines[done : reader.line_num])
        done = reader.line_num
        if done == len(lines) and _open_quote(raw):
            raise open_quote(name, text.count("\n", 0, len(text) - len(raw)) + 1)
        yield values, raw.removesuffix("\n").removesuffix("\r")  # one line break: \n, \r\n, \r


def _open_quote(record: str) -> bool:
    """Whether ``record`` (the last of a file) ends inside a quoted value, by the rules
    :mod:`csv` reads with: a quote opens a value only at its start, ``""`` inside is one
    quote, and a quote that closes a value may be followed by more text (kept, unquoted)."""
    state = "start"
    for ch in record:
        if state == "quoted":
            state = "quote?" if ch == '"' else "quoted"
        elif state == "quote?" and ch == '"':
            state = "quoted"
        elif ch in ",\r\n":
            state = "start"
        elif state == "start" and ch == '"':
            state = "quoted"
        else:
            state = "field"
    return state == "quoted"


def _exact(path: Path, name: str, wanted: Sequence[int] | None) -> Table:
    rows = records(name, _text(path, name))
    first = next(rows, None)
    if first is None:
        raise format_error(name, f"`{name}` is empty: it has no header")
    header = first[0]
    positions = range(len(header)) if wanted is None else wanted
    values: list[list[str]] = [[] for _ in positions]
    counts: list[int] = []
    texts: dict[int, str] = {}
    for n, (record, raw) in enumerate(rows, start=1):
        counts.append(len(record))
        texts[n] = raw
        for k, i in enumerate(positions):
            values[k].append(record[i] if i < len(record) else "")
    frame = pl.DataFrame(
        {
            ROW: pl.Series(ROW, range(1, len(counts) + 1), dtype=pl.Int64),
            FIELDS: pl.Series(FIELDS, counts, dtype=pl.Int64),
            **{
                column(i): pl.Series(column(i), v, dtype=pl.String)
                for i, v in zip(positions, values, strict=True)
            },
        }
    )
    return Table(header, frame, path, mode="exact", texts=texts)


# --------------------------------------------------------------------------- the fast reader

_HEAD = 8192


def _plain(path: Path) -> bool:
    """Whether the file is one the fast reader may try: readable, starting with neither a
    UTF-16 mark, a NUL nor a blank line (anything else is the exact reader's to read, or to
    say what is wrong)."""
    try:
        with path.open("rb") as fh:
            head = fh.read(_HEAD)
    except OSError:
        return False
    body = head.removeprefix(b"\xef\xbb\xbf")
    return (
        bool(head)
        and not head.startswith((b"\xff\xfe", b"\xfe\xff"))
        and b"\x00" not in head
        and not body.startswith((b"\n", b"\r"))
    )


def _scan(path: Path, **kw: object) -> pl.LazyFrame:
    return pl.scan_csv(
        path,
        has_header=False,
        infer_schema=False,
        empty_string_is_null=False,
        raise_if_empty=False,
        **kw,  # type: ignore[arg-type]
    )


def _fast_header(path: Path) -> list[str] | None:
    """The first record's values, read with :mod:`csv` from the start of the file (None when
    the fast reader should not try: see :func:`_plain`)."""
    if not _plain(path):
        return None
    decoder = codecs.getincrementaldecoder("utf-8-sig")()
    text = ""
    with path.open("rb") as fh:
        while chunk := fh.read(_HEAD):
            try:
                text += decoder.decode(chunk)
            except UnicodeDecodeError:
                return None
            lines = list(io.StringIO(text, newline=""))
            reader = csv.reader(lines)
            first = next(reader, None)
            if first is not None and reader.line_num < len(lines):
                return first  # a whole record, and the next line begun
    return None


def _lines(path: Path) -> pl.LazyFrame:
    """The file's lines (split at ``\n``; polars drops a ``\r`` before it) as text; a line
    that holds a NUL fails the scan (the NUL splits it in two)."""
    return _scan(
        path,
        separator="\x00",
        quote_char=None,
        schema={"line": pl.String},
        truncate_ragged_lines=False,
    )


def _records(path: Path, values: int) -> pl.DataFrame | None:
    """Each record's commas, whether it is blank, its first line and its number of lines.
    When the file has one line per record (``values`` records and the header), that is each
    line's; else lines are grouped into records by the parity of their quotes (a record goes on
    while a quote is open). None when a line holds a lone carriage return, or the file ends
    inside a quote."""
    line = pl.col("line")
    stats = _lines(path).select(
        c=line.str.count_matches(",", literal=True).cast(pl.Int64),
        blank=line.str.len_bytes() == 0,
        cr=line.str.contains("\r", literal=True),
        q=line.str.count_matches('"', literal=True).cast(pl.Int64),
    )
    try:
        lines = stats.with_row_index("first").collect()
        if lines.get_column("cr").any():
            return None
        if lines.height == values + 1:
            return lines.select("c", "blank", "first", lines=pl.lit(1, dtype=pl.UInt32))
        grouped = (
            lines.lazy()
            .with_columns(closed=pl.col("q").cum_sum() % 2 == 0)
            .with_columns(record=pl.col("closed").cast(pl.Int64).cum_sum().shift(1, fill_value=0))
            .group_by("record", maintain_order=True)
            .agg(
                pl.col("c").sum(),
                pl.col("blank").all() & (pl.len() == 1),
                pl.col("closed").last(),
                pl.col("first").first(),
                pl.len().alias("lines"),
            )
            .collect()
        )
    except pl.exceptions.PolarsError:
        return None
    if not grouped.get_column("closed")[-1]:
        return None
    return grouped.select("c", "blank", "first", "lines")


def _full(path: Path, header: list[str], wanted: Sequence[int] | None) -> Table | None:
    """Mode 2 of the fast reader: every column read, so that every record's field count is
    known (:func:`_fast`)."""
    width = len(header)
    positions = list(range(width) if wanted is None else wanted)
    names = [column(i) for i in range(width)]
    try:
        values = (
            _scan(path, quote_char='"', truncate_ragged_lines=True, new_columns=names)
            .with_row_index(ROW)
            .filter(pl.col(ROW) > 0)
            .select(
                pl.col(ROW).cast(pl.Int64),
                pl.sum_horizontal(
                    pl.col(n).str.count_matches(",", literal=True).cast(pl.Int64) for n in names
                ).alias("_c"),
                *(pl.col(column(i)) for i in positions),
            )
            .collect()
        )
    except pl.exceptions.PolarsError:
        return None
    stats = _records(path, values.height)
    if stats is None or stats.height != values.height + 1:
        return None
    records_ = stats.slice(1)  # the first record is the header
    # a record's commas are its separators and the commas inside its values
    count = pl.col("c") - pl.col("_c") + 1
    frame = (
        values.hstack(records_.select("c", "blank"))
        .with_columns(pl.when(pl.col("blank")).then(0).otherwise(count).alias(FIELDS))
        .select(ROW, FIELDS, *(column(i) for i in positions))
    )
    table = Table(
        header,
        frame,
        path,
        mode="full",
        lines=records_.select(
            pl.int_range(1, records_.height + 1, dtype=pl.Int64).alias(ROW), "first", "lines"
        ),
    )
    odd = frame.filter((pl.col(FIELDS) != width) & (pl.col(FIELDS) != 0)).get_column(ROW).to_list()
    if odd and not _agrees(table, odd):
        return None
    return table


def _fast(path: Path, wanted: Sequence[int] | None) -> Table | None:
    """The fast reader: first the quick mode (the columns asked for and the last one), then
    the full one (every column, so that every field count is known); None when neither can
    vouch for the file (the exact reader reads it)."""
    header = _fast_header(path)
    if header is None:
        return None
    lines = _line_breaks(path)
    if lines is None:
        return None
    quick = _quick(path, header, wanted, lines)
    return quick if quick is not None else _full(path, header, wanted)


#: The quick mode checks at most this many records with :mod:`csv` (beyond, the full mode).
_MOST_CHECKED = 20_000


def _line_breaks(path: Path) -> int | None:
    """How many lines the file has (its ``\n``, and a last line without one), read in large
    blocks; None when it holds a NUL or a carriage return that is not part of ``\r\n``
    (:mod:`csv` ends a line there, polars does not)."""
    lines = 0
    carried = False  # the previous block ended with `\r`
    last = b""
    with path.open("rb") as fh:
        while block := fh.read(1 << 23):
            if b"\x00" in block:
                return None
            b = np.frombuffer(block, dtype=np.uint8)
            lines += int(np.count_nonzero(b == _NEWLINE))
            if carried and b[0] != _NEWLINE:
                return None
            if block.find(b"\r") >= 0:
                at = np.flatnonzero(b == _RETURN)
                inside = at[at + 1 < b.size]
                if inside.size and not bool((b[inside + 1] == _NEWLINE).all()):
                    return None
            carried = block.endswith(b"\r")
            last = block[-1:]
    if carried:
        return None
    return lines if last == b"\n" else lines + 1


_NEWLINE, _RETURN = ord("\n"), ord("\r")


def _quick(path: Path, header: list[str], wanted: Sequence[int] | None, lines: int) -> Table | None:
    """Mode 1 of the fast reader: only the columns asked for, and the last one. Polars fails
    on a record with more fields than the header (then the full mode reads the file); one with
    fewer has no last value, so every record whose last value is missing or unquoted-empty is
    read again with :mod:`csv` from its text — blank lines among them. None when the file has
    a record over several lines, or too many such records to check one by one."""
    width = len(header)
    positions = list(range(width) if wanted is None else wanted)
    last = column(width - 1)
    kept = list(dict.fromkeys([*positions, width - 1]))
    try:
        values = (
            pl.scan_csv(
                path,
                has_header=False,
                infer_schema=False,
                empty_string_is_null=True,  # a missing value is null; so is an unquoted ""
                raise_if_empty=False,
                quote_char='"',
                truncate_ragged_lines=False,  # a record with too many fields fails the scan
                new_columns=[column(i) for i in range(width)],
            )
            .select(column(i) for i in kept)
            .with_row_index(ROW)
            .filter(pl.col(ROW) > 0)
            .with_columns(pl.col(ROW).cast(pl.Int64), _check=pl.col(last).is_null())
            .collect()
        )
    except pl.exceptions.PolarsError:
        return None
    if values.height + 1 != lines:  # a record over several lines: the full mode groups them
        return None
    check = values.filter(pl.col("_check")).get_column(ROW).to_list()
    if len(check) > _MOST_CHECKED:
        return None
    frame = values.select(
        ROW,
        pl.lit(width, dtype=pl.Int64).alias(FIELDS),
        *(pl.col(column(i)).fill_null("") for i in positions),
    )
    table = Table(
        header,
        frame,
        path,
        mode="quick",
        lines=frame.select(ROW, pl.col(ROW).alias("first"), pl.lit(1).alias("lines")),
    )
    if not check:
        return table
    counts = _csv_counts(table, check)
    if counts is None:
        return None
    fixed = pl.DataFrame(
        {ROW: list(counts), "_n": list(counts.values())}, schema={ROW: pl.Int64, "_n": pl.Int64}
    )
    table.frame = (
        frame.join(fixed, on=ROW, how="left", maintain_order="left")
        .with_columns(pl.coalesce("_n", FIELDS).alias(FIELDS))
        .drop("_n")
    )
    return table


def _csv_counts(table: Table, rows: list[int]) -> dict[int, int] | None:
    """Each of ``rows``' field count as :mod:`csv` reads its text (0 for a blank line); None
    when :mod:`csv` reads other values than the fast reader in the columns kept."""
    texts = table.records(rows)
    counts: dict[int, int] = {}
    wanted = table.frame.filter(pl.col(ROW).is_in(rows)).iter_rows(named=True)
    for row in wanted:
        parsed = list(csv.reader(io.StringIO(texts[row[ROW]], newline="")))
        if len(parsed) > 1:
            return None
        values = parsed[0] if parsed else []
        for name, v in row.items():
            if name.startswith("c") and name[1:].isdigit():
                i = int(name[1:])
                if (values[i] if i < len(values) else "") != v:
                    return None
        counts[row[ROW]] = len(values)
    return counts


def _agrees(table: Table, rows: list[int]) -> bool:
    """Whether :mod:`csv` reads each of ``rows`` (records whose count is not the header's) with
    the field count the fast reader found, and the same values in the columns kept."""
    counts = _csv_counts(table, rows)
    if counts is None:
        return False
    found = dict(table.frame.filter(pl.col(ROW).is_in(rows)).select(ROW, FIELDS).iter_rows())
    return all(counts[r] == found[r] for r in rows)


def _record_texts(path: Path, lines: pl.DataFrame, rows: Sequence[int]) -> dict[int, str]:
    """The records ``rows`` as written: their lines, read from the file in one pass."""
    spans = lines.filter(pl.col(ROW).is_in(list(rows))).iter_rows()
    wanted = {first: (row, count) for row, first, count in spans}
    out: dict[int, str] = {}
    with path.open("rb") as fh:
        pending: tuple[int, int, list[bytes]] | None = None
        for k, raw in enumerate(fh):
            if pending is None and k in wanted:
                row, count = wanted[k]
                pending = (row, count, [])
            if pending is not None:
                pending[2].append(raw)
                if len(pending[2]) == pending[1]:
                    text = b"".join(pending[2]).decode("utf-8")
                    out[pending[0]] = text.removesuffix("\n").removesuffix("\r")
                    pending = None
                    if len(out) == len(wanted):
                        break
    return out
