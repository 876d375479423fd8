"""A digest of a loaded trace that names its content, not its file: the same events give the
same digest whether they were read from CSV, NDJSON or Parquet, in whatever row order, and
whether the trace was evaluated whole or in shards of its runs.

Each event is written as one line of canonical text (``docs/evaluate.md``), in UTF-8:

- its values in the order of the header line — the schema's own columns in their order
  (``run_id``, ``alloc_id``, ``ts``, …), then the extra columns sorted by name — separated by
  tabs: a missing value is ``\\N``; text has ``\\``, tab, line feed and carriage return written
  ``\\\\``, ``\\t``, ``\\n``, ``\\r``; a number (whole or decimal) is its exact value in plain
  decimal without trailing zeros after the point (``2.10`` and ``2.1`` are both ``2.1``); a
  time is whole microseconds since 1970-01-01 UTC; a boolean is ``true`` or ``false``; an
  extra column of dates is ``2025-01-01``, of durations whole microseconds, of lists or
  records their JSON text (keys sorted).

A run's digest is the hex SHA-256 of its event lines sorted by their UTF-8 bytes (as
``LC_ALL=C sort`` sorts them), each ended by a line feed. The trace's digest is ``sha256:``
and the hex SHA-256 of the header line (the column names, tab-separated) followed by one line
per run — the run's ``run_id`` as canonical text, a tab, the run's digest — those lines sorted
by their UTF-8 bytes, every line ended by a line feed. The loader's own columns (``row``,
``run_key``) are not part of it.

Hashing a run at a time lets a sharded evaluation take each run's digest in its shard, and
keeps the cost linear: the events are grouped by run (one integer sort), and each group of
runs is written as text, sorted and hashed on its own, so the memory is one group's text.

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
import os
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from itertools import pairwise
from typing import Any

import polars as pl

from contractlang.errors import InternalError
from contractlang.trace.model import Trace, run_id_of
from contractlang.trace.schema import COLUMNS, ROW, RUN_KEY

__all__ = ["canonical_text", "digest_of", "header_line", "run_lines", "trace_digest"]

#: Events written as text at a time (whole runs, at least one): bounds the memory of the text.
SLICE_ROWS = 200_000
#: Groups of runs written and hashed at once, one per core (measured: a quarter less time
#: than one at a time on two cores).
WORKERS = max(1, min(4, os.cpu_count() or 1))
_NULL = "\\N"
_SPECIAL = r"[\\\t\n\r]"
_OWN = ("row", "run_key")


def trace_digest(trace: Trace) -> str:
    """``sha256:`` and the hex SHA-256 of the trace (see the module); the digest taken when
    the trace was loaded, if it was (:func:`with_digest`)."""
    if trace.digest is not None:
        return trace.digest
    if trace.let_go:
        raise InternalError("the digest of a trace whose events were let go before it was taken")
    return digest_of(header_line(trace.columns), run_lines(trace))


def with_digest(trace: Trace) -> Trace:
    """``trace`` with its digest taken, to outlive its events."""
    return replace(trace, digest=trace_digest(trace))


def digest_of(header: str, lines: Iterable[str]) -> str:
    """The trace digest from its header line and its runs' lines (:func:`run_lines`, of the
    whole trace or of each shard of its runs, in any order)."""
    h = hashlib.sha256(header.encode("utf-8"))
    for line in sorted(lines):  # code point order is UTF-8 byte order
        h.update(line.encode("utf-8"))
    return "sha256:" + h.hexdigest()


def header_line(columns: Sequence[str]) -> str:
    """The header line of a trace with ``columns`` (the loader's own left out)."""
    return "\t".join(_escape(c) for c in _order(columns)) + "\n"


def run_lines(trace: Trace) -> list[str]:
    """One line per run of ``trace``: its ``run_id`` as canonical text, a tab, and the hex
    SHA-256 of its sorted event lines, ended by a line feed. Groups of runs are written and
    hashed :data:`WORKERS` at a time (polars and hashlib let go of the GIL while they work),
    so the memory is that many groups' text."""

    def hashed(start: int, stop: int) -> list[str]:
        runs, texts = groups.text(start, stop)
        return [
            f"{run}\t{hashlib.sha256(text.encode('utf-8')).hexdigest()}\n"
            for run, text in zip(runs, texts, strict=True)
        ]

    found = _groups(trace)
    if found is None:
        return []
    groups = found
    out: list[str] = []
    with ThreadPoolExecutor(WORKERS) as pool:
        pending: deque[Future[list[str]]] = deque()
        for cut in groups.cuts:
            pending.append(pool.submit(hashed, *cut))
            if len(pending) >= WORKERS:
                out.extend(pending.popleft().result())
        while pending:
            out.extend(pending.popleft().result())
    return out


def canonical_text(trace: Trace) -> Iterator[str]:
    """The header line, then every event line, a run at a time (each run's lines sorted,
    the runs in ``run_id`` order): the text each run's digest is taken of, in pieces."""
    yield header_line(trace.columns)
    for _runs, texts in _runs_text(trace):
        yield from texts


def _order(columns: Sequence[str]) -> list[str]:
    names = [c for c in columns if c not in _OWN]
    return [c for c in COLUMNS if c in names] + sorted(c for c in names if c not in COLUMNS)


@dataclass(frozen=True)
class _Groups:
    """The events in run order (``order``), cut into groups of whole runs (``cuts``), with
    the expressions that write a group's event lines and run ids. A group's rows are taken
    from the trace's dense frame, with their sparse values (row ``at`` of ``sparse``, none
    when null) and their ``run_id`` text (from ``run_ids``) beside them: the trace's events
    are never joined whole."""

    dense: pl.DataFrame
    sparse: pl.DataFrame
    at: pl.Series
    run_ids: pl.Series
    order: pl.Series
    cuts: list[tuple[int, int]]
    encoded: list[pl.Expr]
    run_text: pl.Expr

    def text(self, start: int, stop: int) -> tuple[list[str], list[str]]:
        """The group ``[start, stop)``: each run's ``run_id`` text and its sorted event
        lines, each ended by a line feed."""
        rows = self.order[start:stop]
        part = self.dense[rows]
        side = self.sparse.select(pl.all().gather(self.at.gather(rows))).drop(ROW)
        part = pl.concat([part, side], how="horizontal").with_columns(run_id_of(self.run_ids))
        lines = part.select(
            pl.concat_str(self.encoded, separator="\t").alias("line"), self.run_text.alias("run")
        ).sort("line")  # a run's lines share its prefix: sorted, each run's are together
        grouped = lines.group_by("run", maintain_order=True).agg(
            (pl.col("line") + "\n").str.join("")
        )
        return grouped.get_column("run").to_list(), grouped.get_column("line").to_list()


def _groups(trace: Trace) -> _Groups | None:
    """The groups of whole runs of at most :data:`SLICE_ROWS` events (or one run); None for
    a trace without events."""
    dense, sparse = trace.dense, trace.sparse
    if dense.height == 0:
        return None
    keys = dense.select(pl.col(RUN_KEY).fill_null(-1).alias("k")).get_column("k")
    sizes = keys.value_counts(sort=False).sort("k").get_column("count").to_list()
    bounds = [0, *_cuts(sizes)]
    # each dense row's position among the sparse rows (null: it has no sparse value)
    positions = sparse.select(ROW, pl.int_range(pl.len(), dtype=pl.UInt32).alias("_at"))
    at = dense.select(ROW).join(positions, on=ROW, how="left", maintain_order="left")
    run_id = trace.run_ids.rename("run_id")
    values = {c: dense.get_column(c) for c in dense.columns}
    values |= {c: sparse.get_column(c) for c in sparse.columns if c != ROW}
    values["run_id"] = run_id
    return _Groups(
        dense,
        sparse,
        at.get_column("_at"),
        trace.run_ids,
        keys.arg_sort(),
        list(pairwise(bounds)),
        [_encode(values[c]) for c in _order(trace.columns)],
        _encode(run_id),
    )


def _runs_text(trace: Trace) -> Iterator[tuple[list[str], list[str]]]:
    """Each group's runs and their text (:meth:`_Groups.text`), one group at a time."""
    groups = _groups(trace)
    if groups is not None:
        for cut in groups.cuts:
            yield groups.text(*cut)


def _cuts(sizes: Sequence[int]) -> Iterator[int]:
    """Where to cut the events, in run order, into groups of whole runs of at most
    :data:`SLICE_ROWS` events (a larger run alone)."""
    total = held = 0
    for n in sizes:
        if held and held + n > SLICE_ROWS:
            yield total
            held = 0
        total += n
        held += n
    yield total


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
        if isinstance(dtype, pl.Array):  # as a list: its values, not a series object
            col = col.cast(pl.List(dtype.inner))
        text = _escaped(col.map_elements(_json, return_dtype=pl.String, skip_nulls=True))
    else:  # text, and the enum columns (``source``, ``event``, ``capacity``) as their text
        text = col.cast(pl.String)
        if isinstance(dtype, pl.Enum):
            special = any(_has_special(c) for c in dtype.categories.to_list())
        else:  # text, or a type written as its text (categorical, time of day, …)
            special = bool(values.cast(pl.String).str.contains(_SPECIAL).any())
        if special:  # most columns have nothing to escape
            text = _escaped(text)
    return text.fill_null(_NULL)


def _has_special(value: str) -> bool:
    return any(ch in value for ch in "\\\t\n\r")


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
