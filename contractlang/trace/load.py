"""Loading a trace: read it (:mod:`~contractlang.trace.read`), normalise its types
(:mod:`~contractlang.trace.normalise`), validate it (:mod:`~contractlang.trace.validate`).

:func:`load_trace` returns a :class:`~contractlang.trace.model.Trace`, or raises
:class:`~contractlang.errors.ContractlangError` with every problem found (up to a limit; the
rest are counted). A trace may come in several files — the scheduler's export and the
invoice's, say — read as one: the same ``run_id`` ties them, every rule runs over all their
rows together, and every message names its row's own file.

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

from collections.abc import Sequence
from datetime import datetime, timedelta
from pathlib import Path

import polars as pl

from contractlang.diagnostics import NO_SPAN, Diagnostic, error
from contractlang.errors import ContractlangError
from contractlang.trace import problems as pb
from contractlang.trace.model import BAD, Normalised, Trace, bad_flag
from contractlang.trace.normalise import Prepared, normalise, prepare, rekeyed
from contractlang.trace.read import read, source_name
from contractlang.trace.schema import COLUMNS, DENSE_COLUMNS, ROW, RUN_KEY, SPARSE_COLUMNS
from contractlang.trace.unite import unite
from contractlang.trace.validate import validate

#: How far a job's or an invoice's clock may differ from the scheduler's (``--clock-skew``).
DEFAULT_CLOCK_SKEW = timedelta(seconds=1)
_ALL = 2**62
#: One trace source: a path or a polars frame.
Source = str | Path | pl.DataFrame | pl.LazyFrame


def load_trace(
    source: Source | Sequence[Source],
    *,
    open_at: datetime | None = None,
    max_problems: int = 50,
    clock_skew: timedelta = DEFAULT_CLOCK_SKEW,
    quarantine: bool = False,
) -> Trace:
    """Read, normalise and validate a trace, from one source or several read as one.

    A source is a path (``.parquet``/``.pq``, ``.csv``, ``.ndjson``/``.jsonl``) or a polars
    frame. ``open_at`` (timezone-aware) closes allocations that never end, as ``released``.
    A job or invoice event at most ``clock_skew`` outside its allocation's lifetime is taken
    as at its edge (W106 counts them); beyond, it is T010. With ``quarantine``, runs that break
    a rule are set aside (``Trace.quarantine``) and the rest is the trace; whole-file problems
    (a missing column, say) still raise.
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
    items = [source] if isinstance(source, (str, Path, pl.DataFrame, pl.LazyFrame)) else source
    if not items:
        raise ContractlangError([error("T017", "no trace was given", NO_SPAN, file="contractlang")])
    names: list[str] = []
    prepared: list[Prepared] = []
    problems: list[Diagnostic] = []
    for item in items:
        name = source_name(item)
        path = None if isinstance(item, (pl.DataFrame, pl.LazyFrame)) else Path(item)
        try:
            prepared.append(prepare(read(item, name), name, path=path))
            names.append(name)
        except ContractlangError as exc:  # every file's whole-file problems, then stop
            problems.extend(exc.diagnostics)
    if problems:
        raise ContractlangError(problems)
    # set aside, every bad value needs its message: list them all
    limit = _ALL if quarantine else max_problems
    normals: list[Normalised] = []
    for prep in unite(prepared):  # each extra column read as one type in every file
        try:
            normals.append(normalise(prep, prep.name, max_problems=limit))
        except ContractlangError as exc:
            problems.extend(exc.diagnostics)
    if problems:
        raise ContractlangError(problems)
    normal, sources = combine(normals, names)
    return validate(
        normal,
        name=sources,
        open_at=open_at,
        max_problems=max_problems,
        clock_skew=clock_skew,
        quarantine=quarantine,
    )


def combine(
    normals: Sequence[Normalised], names: Sequence[str], sizes: Sequence[int] | None = None
) -> tuple[Normalised, pb.Sources]:
    """Several normalised files as one: rows numbered on from one file to the next (each
    file's rows keep their own numbers in messages, :class:`~contractlang.trace.problems.
    Sources`), extra columns united (a column one file lacks is null there), one ``run_key``
    over every file's runs. ``sizes`` are the files' numbers of rows, when ``normals`` hold
    only some of them (a shard's)."""
    if len(normals) == 1:
        return normals[0], pb.Sources.of(names[0])
    starts: list[int] = []
    offset = 0
    for k, n in enumerate(normals):
        starts.append(offset)
        offset += n.events.height if sizes is None else sizes[k]
    bad_columns = tuple(dict.fromkeys(c for n in normals for c in n.bad_columns))
    extras = tuple(
        dict.fromkeys(c for n in normals for c in n.sparse.columns if c not in _OWN_COLUMNS)
    )
    flags = [bad_flag(c) for c in bad_columns]
    frames = []
    for n, start in zip(normals, starts, strict=True):
        missing = [pl.lit(False).alias(f) for f in flags if f not in n.events.columns]
        frames.append(n.events.with_columns(pl.col(ROW) + start, *missing))
    run_ids = pl.concat([n.run_ids for n in normals]).unique().sort()
    keyed = [rekeyed(f, n.run_ids, run_ids) for f, n in zip(frames, normals, strict=True)]
    events = pl.concat(keyed, how="diagonal_relaxed").select(
        ROW, RUN_KEY, *DENSE_COLUMNS, BAD, *flags
    )
    sparse = pl.concat(
        [n.sparse.with_columns(pl.col(ROW) + s) for n, s in zip(normals, starts, strict=True)],
        how="diagonal_relaxed",
    ).select(ROW, *SPARSE_COLUMNS, *extras)
    problems = pl.concat(
        [
            n.problems.with_columns(pl.col("row") + start)
            for n, start in zip(normals, starts, strict=True)
        ],
        how="vertical_relaxed",
    )
    combined = Normalised(
        events=events,
        sparse=sparse,
        problems=problems,
        hidden=sum(n.hidden for n in normals),
        warnings=tuple(w for n in normals for w in n.warnings),
        extras=tuple(sorted({e for n in normals for e in n.extras})),
        columns_read=tuple(dict.fromkeys(c for n in normals for c in n.columns_read)),
        bad_columns=bad_columns,
        run_ids=run_ids,
    )
    return combined, pb.Sources(tuple(names), tuple(starts))


#: The columns every normalised file has (the rest are its extras and the bad-value flags).
_OWN_COLUMNS = frozenset((ROW, RUN_KEY, *COLUMNS))
