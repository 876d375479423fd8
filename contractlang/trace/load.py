"""Loading a trace: read it (:mod:`~contractlang.trace.read`), normalise its types
(:mod:`~contractlang.trace.normalise`), validate it (:mod:`~contractlang.trace.validate`).

:func:`load_trace` returns a :class:`~contractlang.trace.model.Trace`, or raises
:class:`~contractlang.errors.ContractlangError` with every problem found (up to a limit; the
rest are counted).

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

from datetime import datetime
from pathlib import Path

import polars as pl

from contractlang.diagnostics import NO_SPAN, error
from contractlang.errors import ContractlangError
from contractlang.trace.model import Trace
from contractlang.trace.normalise import normalise
from contractlang.trace.read import read, source_name
from contractlang.trace.validate import validate


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
    if open_at is not None and open_at.tzinfo is None:
        raise ContractlangError(
            [error("T006", "`open_at` needs a UTC offset", NO_SPAN, file="contractlang")]
        )
    name = source_name(source)
    lf = read(source, name)
    path = None if isinstance(source, (pl.DataFrame, pl.LazyFrame)) else Path(source)
    normal = normalise(lf, name, max_problems=max_problems, path=path)
    return validate(normal, name=name, open_at=open_at, max_problems=max_problems)
