"""The events an adapter makes, as a trace frame (docs/trace.md, "The schema"), validated by
the trace rules.

Every adapter builds its events with :class:`Events` and hands them to :func:`validated`, which
loads them with :func:`~contractlang.trace.load_trace` — the same rules as any trace file. A
problem found there is reported on the row of the *imported* file that the event came from
(every event carries it in the ``source_row`` column), after an ``I006`` headline.

>>> ev = Events({"source_row": pl.Int64()})
>>> from datetime import UTC, datetime
>>> ev.add(run_id="r1", alloc_id="a1", ts=datetime(2025, 1, 1, tzinfo=UTC),
...        source="scheduler", event="started", gpus=8, source_row=1)
>>> ev.frame().select("run_id", "event", "gpus").row(0)
('r1', 'started', 8)
"""

from __future__ import annotations

import dataclasses
import re
from datetime import datetime
from typing import Any

import polars as pl

from contractlang.diagnostics import NO_SPAN, Diagnostic, Span, error
from contractlang.errors import ContractlangError
from contractlang.trace.load import load_trace
from contractlang.trace.model import Trace
from contractlang.trace.schema import COLUMNS, DECIMAL_DTYPE, EVENT_DTYPES, REQUIRED_COLUMNS

#: The column every imported event carries: the row of the imported file it came from.
SOURCE_ROW = "source_row"

#: Trace columns as an adapter writes them: enums as text, money as exact decimals.
TRACE_DTYPES: dict[str, pl.DataType] = {
    c: pl.String() if isinstance(EVENT_DTYPES[c], pl.Enum) else EVENT_DTYPES[c] for c in COLUMNS
}
MONEY = DECIMAL_DTYPE


class Events:
    """Events added one by one; :meth:`frame` makes the trace frame with the required columns,
    the optional trace columns given a value at least once (a column of nulls says nothing,
    and NDJSON could not even tell its type), then the extras (``extras``, in order, with their
    types)."""

    def __init__(self, extras: dict[str, pl.DataType]) -> None:
        self.extras = dict(extras)
        self._known = frozenset([*COLUMNS, *self.extras])
        self._rows: list[dict[str, Any]] = []
        self._used: set[str] = set(REQUIRED_COLUMNS)

    @property
    def height(self) -> int:
        return len(self._rows)

    def add(self, **values: Any) -> None:
        if not values.keys() <= self._known:
            unknown = sorted(set(values) - self._known)
            raise KeyError(f"not a column of these events: {unknown}")
        self._used.update(k for k, v in values.items() if v is not None)
        self._rows.append(values)

    def frame(self) -> pl.DataFrame:
        names = [c for c in COLUMNS if c in self._used] + list(self.extras)
        dtypes = {**TRACE_DTYPES, **self.extras}
        return pl.DataFrame(
            {n: pl.Series(n, [r.get(n) for r in self._rows], dtype=dtypes[n]) for n in names}
        )


def validated(frame: pl.DataFrame, source: str, open_at: datetime | None) -> Trace:
    """The events loaded as a trace; the trace rules' problems are raised on the rows of the
    imported file they came from (``source``), after an ``I006`` headline."""
    try:
        return load_trace(frame, open_at=open_at)
    except ContractlangError as exc:
        rows = frame.get_column(SOURCE_ROW).to_list() if SOURCE_ROW in frame.columns else []
        moved = [_on_source_row(d, source, rows) for d in exc.diagnostics]
        headline = error(
            "I006",
            f"the events imported from `{source}` break the trace rules; nothing was written",
            NO_SPAN,
            file=source,
            help="each problem below names the row of the imported file its event came from",
        )
        raise ContractlangError([headline, *moved]) from None


_ROW = re.compile(r"\brow (\d+)\b")


def _on_source_row(d: Diagnostic, source: str, rows: list[int]) -> Diagnostic:
    """``d`` about the imported file: its row, and rows its message names ("it started at
    row 3"), are the rows of ``source`` the events came from."""

    def source_row(n: int) -> int | None:
        return rows[n - 1] if 1 <= n <= len(rows) else None

    def swap(m: re.Match[str]) -> str:
        found = source_row(int(m.group(1)))
        return m.group(0) if found is None else f"row {found}"

    message = _ROW.sub(swap, d.message)
    found = source_row(d.span.line) if d.span.col == 0 else None
    span = d.span if found is None else Span.point(found, 0)
    return dataclasses.replace(d, file=source, span=span, message=message)
