"""A Parquet export read as the same table of text a CSV export gives
(:class:`~contractlang.importers.csv_table.Table`), so that one mapping reads both: each column
asked for becomes the text that spells its values exactly.

- decimals and integers: their digits (``decimal(38,10)`` 1500 is ``1500.0000000000``), never
  through a float;
- floating point (as some exporters write money): the shortest text that reads back as the
  same float (the float nearest 2.1 is ``2.1``), and the column is listed in
  :attr:`~contractlang.importers.csv_table.Table.floats` for the importer to note;
- timestamps with a time zone: ISO 8601 in UTC (``2025-03-01T00:00:00+00:00``); without one,
  ISO 8601 without an offset (the importer reads it as UTC, and says so); dates: midnight;
- text, dictionary-encoded text and booleans: as they are;
- records and maps (``Tags`` as ``map<string, string>``): a JSON object, for the columns that
  hold JSON (``kinds``); any other list, record or binary column is I003.

A null stays null, where a CSV has only text (empty, or ``NULL``). Rows are the file's rows in
order, from 1; every row has every field. The file is found by its content (it begins
and ends with ``PAR1``), not its name. A column of the wrong type is I003, naming what it holds
as the trace's messages name it (:func:`~contractlang.trace.columns.describe`).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import polars as pl

from contractlang.errors import ContractlangError
from contractlang.importers.csv_table import FIELDS, ROW, Table, column
from contractlang.importers.text import format_error
from contractlang.trace.columns import describe
from contractlang.trace.read import lenient_zones

#: What a column holds, as the mapping reads it.
Kind = Literal["decimal", "time", "text", "json"]

MAGIC = b"PAR1"

_EXPECTED = {
    "decimal": "decimal numbers",
    "time": "timestamps",
    "text": "text",
    "json": "JSON objects",
}


def is_parquet(path: Path) -> bool:
    """Whether the file begins with Parquet's magic bytes (``PAR1``); False when it cannot be
    read (the CSV reader then says why)."""
    try:
        with path.open("rb") as fh:
            return fh.read(len(MAGIC)) == MAGIC
    except OSError:
        return False


def _unreadable(name: str, why: str, *, whole: bool = True) -> ContractlangError:
    """I003: the file cannot be read; ``whole`` when its footer is there (the file is not cut
    short: polars cannot read what it holds)."""
    return format_error(
        name,
        f"`{name}` is a Parquet file that cannot be read: {why}",
        help="it ends with its footer, but what it holds cannot be read: write it again with "
        "types polars reads (decimals of at most 38 digits, say)"
        if whole
        else "export it again; a whole Parquet file ends with its footer and `PAR1`",
    )


def _reason(exc: Exception) -> str:
    lines = str(exc).strip().splitlines()
    return (lines[0] if lines else type(exc).__name__)[:200]


def parquet_schema(path: Path, name: str) -> dict[str, pl.DataType]:
    """The file's columns and their types (its header); I003 when it is not whole."""
    with path.open("rb") as fh:
        fh.seek(0, io.SEEK_END)
        size = fh.tell()
        fh.seek(max(0, size - len(MAGIC)))
        tail = fh.read()
    if size < 2 * len(MAGIC) or tail != MAGIC:
        raise _unreadable(name, "it does not end with `PAR1` (cut short?)", whole=False)
    try:
        with lenient_zones():  # a fixed-offset zone (`+05:30`) is read as UTC instants below
            return dict(pl.read_parquet_schema(path))
    except (pl.exceptions.PolarsError, OSError, ValueError) as exc:
        raise _unreadable(name, _reason(exc)) from None


def _nested(dtype: pl.DataType) -> bool:
    return isinstance(dtype, (pl.Map, pl.List, pl.Array, pl.Struct))


def _as_text(name: str, header: str, dtype: pl.DataType, kind: Kind) -> pl.Expr:
    """The expression that spells ``header``'s values as the CSV path reads them; I003 when a
    column of ``dtype`` cannot hold what ``kind`` needs."""
    c = pl.col(header)
    if dtype in (pl.String, pl.Null):
        return c.cast(pl.String)
    if isinstance(dtype, (pl.Categorical, pl.Enum)):
        return c.cast(pl.String)
    if kind == "json" and _nested(dtype):
        # `{"v":…}` → the value's JSON; a null value is JSON's `null`, which is no value
        encoded = pl.struct(c.alias("v")).struct.json_encode().str.slice(5).str.head(-1)
        return pl.when(encoded != "null").then(encoded)
    if isinstance(dtype, pl.Decimal) or dtype.is_integer() or dtype.is_float():
        if kind != "time":
            return c.cast(pl.String)
    elif isinstance(dtype, pl.Datetime) and kind != "decimal":
        if dtype.time_zone is None:
            return c.dt.strftime("%Y-%m-%dT%H:%M:%S%.f")
        # the stored instants are UTC whatever zone the column names
        utc = c.cast(pl.Int64).cast(pl.Datetime(dtype.time_unit, "UTC"))
        return utc.dt.strftime("%Y-%m-%dT%H:%M:%S%.f+00:00")
    elif dtype == pl.Date and kind != "decimal":
        return c.dt.strftime("%Y-%m-%dT00:00:00" if kind == "time" else "%Y-%m-%d")
    elif dtype == pl.Boolean and kind == "text":
        return c.cast(pl.String)
    raise format_error(
        name,
        f"`{name}` cannot be imported: its column `{header}` holds {describe(dtype)}, "
        f"not {_EXPECTED[kind]}",
        help=f"export `{header}` as {_EXPECTED[kind]}, as FOCUS defines it",
    )


def read_parquet_table(
    path: Path, name: str, header: list[str], dtypes: Sequence[pl.DataType], kinds: dict[int, Kind]
) -> Table:
    """The header positions in ``kinds`` (each read as its kind) as a :class:`Table` of text."""
    positions = sorted(kinds)
    exprs = [_as_text(name, header[i], dtypes[i], kinds[i]).alias(column(i)) for i in positions]
    table = ParquetTable(
        header,
        _read(path, name, exprs, len(header)),
        path,
        mode="parquet",
        floats=frozenset(i for i in positions if dtypes[i].is_float()),
    )
    table.exprs, table.name = exprs, name
    return table


def _read(
    path: Path, name: str, exprs: list[pl.Expr], width: int, rows: Sequence[int] | None = None
) -> pl.DataFrame:
    """:data:`ROW`, :data:`FIELDS` and the columns ``exprs`` make, of every row or of
    ``rows``."""
    lf = pl.scan_parquet(path).with_row_index(ROW, offset=1)
    if rows is not None:
        lf = lf.filter(pl.col(ROW).is_in(list(rows)))
    try:
        with lenient_zones():
            return lf.select(
                pl.col(ROW).cast(pl.Int64), pl.lit(width, dtype=pl.Int64).alias(FIELDS), *exprs
            ).collect()
    except (pl.exceptions.PolarsError, OSError, ValueError) as exc:
        raise _unreadable(name, _reason(exc)) from None


class ParquetTable(Table):
    """A Parquet file's :class:`Table`: its records, for the rejects, are the values the
    import read, as CSV text (a Parquet row has no text of its own), read again from the
    file (the mapping frees the table as it reads it)."""

    exprs: list[pl.Expr]
    name: str

    def records(self, rows: Sequence[int]) -> dict[int, str]:
        missing = sorted(r for r in set(rows) if r not in self.texts)
        if missing:
            again = _read(self.path, self.name, self.exprs, len(self.header), missing)
            for row, _, *fields in again.iter_rows():
                buffer = io.StringIO()
                csv.writer(buffer, lineterminator="").writerow(
                    ["" if v is None else v for v in fields]
                )
                self.texts[row] = buffer.getvalue()
        return {r: self.texts[r] for r in rows}
