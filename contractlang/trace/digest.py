"""A digest of a loaded trace that names its content, not its file: the same events give the
same digest whether they were read from CSV, NDJSON or Parquet, and in whatever row order.

The digest is ``sha256:`` and the hex SHA-256 of the trace written as one canonical text
(``docs/evaluate.md``), in UTF-8, every line ended by a line feed:

- a header line: the column names separated by tabs, the schema's own in their order
  (``run_id``, ``alloc_id``, ``ts``, …), then the extra columns sorted by name;
- one line per event, its values in that order separated by tabs: a missing value is ``\\N``;
  text has ``\\``, tab, line feed and carriage return written ``\\\\``, ``\\t``, ``\\n``,
  ``\\r``; a number (whole or decimal) is its exact value in plain decimal without trailing
  zeros after the point (``2.10`` and ``2.1`` are both ``2.1``); a time is whole microseconds
  since 1970-01-01 UTC; a boolean is ``true`` or ``false``; an extra column of dates is
  ``2025-01-01``, of durations whole microseconds, of lists or records their JSON text (keys
  sorted);
- the event lines sorted by their UTF-8 bytes (as ``LC_ALL=C sort`` sorts them), so the file's
  row order does not count.

The loader's own columns (``row``, ``run_key``) are not part of it. It costs one sort of the
events' lines and one pass over them, hashed a slice at a time.

>>> import polars as pl
>>> from datetime import datetime, UTC
>>> rows = {"run_id": ["r1", "r1"], "alloc_id": ["a1", "a1"],
...         "ts": [datetime(2025, 1, 1, h, tzinfo=UTC) for h in (0, 2)],
...         "source": ["scheduler"] * 2, "event": ["started", "released"], "gpus": [8, None]}
>>> from contractlang.trace.load import load_trace
>>> trace = load_trace(pl.DataFrame(rows))
>>> print("".join(canonical_text(trace)).replace("\\t", " "), end="")
run_id alloc_id ts source event gpus sku zone capacity price step valid quantity amount
r1 a1 1735689600000000 scheduler started 8 \\N \\N \\N \\N \\N \\N \\N \\N
r1 a1 1735696800000000 scheduler released \\N \\N \\N \\N \\N \\N \\N \\N \\N
>>> trace_digest(trace) == trace_digest(load_trace(pl.DataFrame(rows).reverse()))
True
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from typing import Any

import polars as pl

from contractlang.trace.model import Trace
from contractlang.trace.schema import COLUMNS

__all__ = ["canonical_text", "trace_digest"]

#: Event lines hashed per slice: bounds the memory of the text being hashed.
SLICE_ROWS = 200_000
_NULL = "\\N"
_SPECIAL = r"[\\\t\n\r]"


def trace_digest(trace: Trace) -> str:
    """``sha256:`` and the hex SHA-256 of the trace's canonical text (see the module)."""
    h = hashlib.sha256()
    for piece in canonical_text(trace):
        h.update(piece.encode("utf-8"))
    return "sha256:" + h.hexdigest()


def canonical_text(trace: Trace) -> Iterator[str]:
    """The canonical text, in pieces that concatenate to it: the header line, then the sorted
    event lines a slice at a time."""
    frame = trace.as_frame()
    extras = sorted(c for c in frame.columns if c not in COLUMNS)
    order = [c for c in COLUMNS if c in frame.columns] + extras
    yield "\t".join(_escape(c) for c in order) + "\n"
    if frame.height == 0:
        return
    encoded = [_encode(frame[c]) for c in order]
    lines = frame.select(pl.concat_str(encoded, separator="\t").alias("line")).sort("line")
    for start in range(0, lines.height, SLICE_ROWS):
        # the lines hold no line feed (escaped) and are written as they are, one a line
        text = lines.slice(start, SLICE_ROWS).write_csv(include_header=False, quote_style="never")
        yield text


def _encode(values: pl.Series) -> pl.Expr:
    """The column's values as canonical text (missing as ``\\\\N``)."""
    col, dtype = pl.col(values.name), values.dtype
    if values.null_count() == values.len():  # an optional column the trace does not use
        return pl.lit(_NULL)
    if isinstance(dtype, pl.Datetime):
        text = col.dt.epoch("us").cast(pl.String)
    elif isinstance(dtype, pl.Decimal):
        text = col.cast(pl.String)
        if dtype.scale:  # every value has a point: strip the zeros after it, then the point
            text = text.str.strip_chars_end("0").str.strip_suffix(".")
    elif dtype.is_integer() or isinstance(dtype, pl.Boolean):
        text = col.cast(pl.String)
    elif isinstance(dtype, pl.Duration):
        text = col.dt.total_microseconds().cast(pl.String)
    elif isinstance(dtype, pl.Date):
        text = col.dt.strftime("%Y-%m-%d")
    elif dtype.is_nested() or isinstance(dtype, (pl.Object, pl.Binary)):
        text = _escaped(col.map_elements(_json, return_dtype=pl.String, skip_nulls=True))
    else:
        text = col.cast(pl.String)
        as_text = values.cast(pl.String)
        if as_text.str.contains(_SPECIAL).any():  # most columns have nothing to escape
            text = _escaped(text)
    return text.fill_null(_NULL)


def _escaped(text: pl.Expr) -> pl.Expr:
    text = text.str.replace_all("\\", "\\\\", literal=True)
    for raw, escaped in (("\t", "\\t"), ("\n", "\\n"), ("\r", "\\r")):
        text = text.str.replace_all(raw, escaped, literal=True)
    return text


def _escape(value: str) -> str:
    for raw, escaped in (("\\", "\\\\"), ("\t", "\\t"), ("\n", "\\n"), ("\r", "\\r")):
        value = value.replace(raw, escaped)
    return value


def _json(value: Any) -> str:
    """A list or record as JSON text, keys sorted (rare columns: one value at a time)."""
    if isinstance(value, pl.Series):
        value = value.to_list()
    return json.dumps(value, default=str, sort_keys=True, ensure_ascii=False)
