"""Frames written as files: tables (Parquet or CSV) and traces (by extension), each through
:func:`~contractlang.cli.files.write_file` — atomically, every failure E501. Tables are for
people: as CSV, a text cell a spreadsheet would run as a formula is escaped
(:func:`~contractlang.render.common.tables.spreadsheet_safe`). Traces are read back by contractlang:
their values are written exactly as they are."""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

import polars as pl

from contractlang.cli.files import write_file
from contractlang.cli.inputs import usage_error
from contractlang.errors import cannot_write
from contractlang.render.common.tables import spreadsheet_safe
from contractlang.trace.generate import write_trace

POLARS_FAILURES: tuple[type[Exception], ...] = (pl.exceptions.PolarsError,)


def write_table(frame: pl.DataFrame, path: Path, numbers: Collection[str] = ()) -> None:
    """Write Parquet or CSV by extension (atomically, :func:`write_file`). CSV holds no
    records or lists: a column of them is E501 before anything is written. A CSV table's text
    cells are made safe to open in a spreadsheet (``numbers``: the text columns holding
    numbers, whose number cells are kept as they are; :func:`spreadsheet_safe`)."""
    if path.suffix.lower() == ".csv":
        nested = [c for c, t in frame.schema.items() if t.is_nested()]
        if nested:
            raise cannot_write(
                path,
                f"CSV cannot hold column `{nested[0]}`, which holds records or lists; "
                "write Parquet (`.parquet`) instead",
            )
        write_file(path, spreadsheet_safe(frame, numbers).write_csv, POLARS_FAILURES)
    else:
        write_file(path, frame.write_parquet, POLARS_FAILURES)


def write_trace_file(frame: pl.DataFrame, path: Path) -> None:
    """Write a trace by the extension of ``path`` (atomically, :func:`write_file`).

    CSV cannot hold a NUL character (a trace's reader takes it for binary content): a trace
    whose text has one is E502, before anything is written (it was written, and could not be
    read back)."""
    kind = path.suffix.lower()
    if kind == ".csv":
        texts = [c for c, t in frame.schema.items() if t == pl.String]
        nul = [c for c in texts if frame.get_column(c).str.contains("\x00", literal=True).any()]
        if nul:
            raise usage_error(
                f"`{path}`: the column `{nul[0]}` holds text with a NUL character, which CSV "
                "cannot hold",
                help="write the trace as .parquet or .ndjson",
            )
    write_file(path, lambda target: write_trace(frame, target, kind=kind), POLARS_FAILURES)
