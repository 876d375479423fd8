"""The data model of a loaded trace: the events (:class:`Trace`), what validating learnt that
deriving needs again (:class:`TraceIndex`), and the output of normalising (:class:`Normalised`),
with the flags that mark bad values."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

import polars as pl

from contractlang.diagnostics import Diagnostic
from contractlang.trace.problems import Sources
from contractlang.trace.schema import COLUMNS, ROW, RUN_KEY, TraceSummary

#: Marks a row with a value that could not be normalised (or a missing required value).
BAD = "_bad"
#: The polars engine of the normalising pass (measured faster than ``in-memory`` here).


def bad_flag(column: str) -> str:
    """The name of the flag that marks a bad value in ``column`` (see :class:`Normalised`)."""
    return f"{BAD}:{column}"


def run_id_of(run_ids: pl.Series) -> pl.Expr:
    """A row's ``run_id`` text from its ``run_key`` (its position in ``run_ids``)."""
    return pl.lit(run_ids).gather(pl.col(RUN_KEY)).alias("run_id")


def joined(dense: pl.DataFrame, sparse: pl.DataFrame, run_ids: pl.Series) -> pl.DataFrame:
    """Every event with every column: the ``dense`` rows with their ``run_id`` (from their
    ``run_key`` and ``run_ids``) and their values of the
    ``sparse`` columns (null on a row that has none there), in the schema's column order,
    then the extras, then the loader's flags, if any.

    >>> d = pl.DataFrame({"row": [1, 2], "run_key": [0, 0], "event": ["started", "notice"]})
    >>> s = pl.DataFrame({"row": [1], "sku": ["H100"]})
    >>> joined(d, s, pl.Series(["r1"])).rows()
    [(1, 0, 'r1', 'started', 'H100'), (2, 0, 'r1', 'notice', None)]
    """
    dense = dense.with_columns(run_id_of(run_ids))
    names = set(dense.columns) | set(sparse.columns)
    own = [c for c in (ROW, RUN_KEY, *COLUMNS) if c in names]
    extras = [c for c in sparse.columns if c not in own]
    flags = [c for c in dense.columns if c not in own]
    both = dense.join(sparse, on=ROW, how="left", maintain_order="left")
    return both.select(*own, *extras, *flags)


@dataclass(frozen=True)
class Trace:
    """A loaded, valid trace.

    The events are held in two frames. ``dense`` has one row per input row, in file order,
    with the columns of :data:`~contractlang.trace.schema.EVENT_DTYPES` that are not
    :data:`~contractlang.trace.schema.SPARSE_COLUMNS` (``row`` is the 1-based data row in
    the file), ``run_id`` held as ``run_key``: its position in ``run_ids``.
    ``sparse`` has ``row``, the sparse columns and the extra columns under their own names,
    for the rows with a value in at least one of them, in file order. :attr:`events` joins
    them. ``extras`` names the columns terms can read as ``trace.<column>`` (the extras, plus
    ``price`` when the input had one). ``index`` holds what validating learnt that deriving
    the facts needs again (:class:`TraceIndex`); a trace built without one derives the same
    facts, a little more slowly.
    """

    dense: pl.DataFrame
    sparse: pl.DataFrame
    source: str
    extras: tuple[str, ...]
    warnings: tuple[Diagnostic, ...]
    summary: TraceSummary
    open_at: datetime | None = None
    columns_read: tuple[str, ...] = field(default=())
    index: TraceIndex | None = None
    #: the runs set aside because they break a rule (``--on-invalid quarantine``), if any
    quarantine: Quarantine | None = None
    #: the trace's digest (:mod:`~contractlang.trace.digest`), when taken: for a JSON document
    #: (which reads it here), before the events are let go
    digest: str | None = None
    #: whether ``events`` were let go once the facts were derived (it holds none of them)
    let_go: bool = False
    #: the files the trace was read from, and where each one's rows begin in ``row``
    sources: Sources | None = None
    #: the trace's distinct run ids, sorted: a row's ``run_key`` is its run's position here
    run_ids: pl.Series = field(default_factory=lambda: pl.Series("run_id", [], pl.String))

    @property
    def events(self) -> pl.DataFrame:
        """Every event with every column (:func:`joined`), made at each call: the
        evaluation reads ``dense`` and ``sparse`` themselves."""
        return joined(self.dense, self.sparse, self.run_ids)

    @property
    def columns(self) -> list[str]:
        """The columns of :attr:`events`, without joining them."""
        return joined(self.dense.head(0), self.sparse.head(0), self.run_ids).columns

    @property
    def files(self) -> Sources:
        """The files the trace was read from (one, named ``source``, when none were listed)."""
        return self.sources or Sources.of(self.source)

    def locate(self, row: int) -> tuple[str, int]:
        """The file a row of ``events`` came from, and its row there (data rows from 1): over
        several files, ``row`` numbers them on from one file to the next."""
        return self.files.locate(row)

    def as_frame(self) -> pl.DataFrame:
        """The events as a trace in its documented schema (docs/trace.md, "The schema"), in
        file order: the loader's own columns (``row``, ``run_key``) left out, the enum columns
        as text."""
        own = {"row", "run_key"}
        events = self.events
        return events.select(
            pl.col(c).cast(pl.String) if isinstance(t, pl.Enum) else pl.col(c)
            for c, t in events.schema.items()
            if c not in own
        )


@dataclass(frozen=True)
class Quarantine:
    """Runs set aside because a row of theirs breaks a rule, so the rest can be evaluated:
    how many runs and rows, the problems found by code, and the rows themselves (in the trace
    schema, with ``file`` and ``row`` — where each came from — ``problems``, the row's own, and
    ``run_problem``, the first of its run). Rows with no ``run_id`` are set aside alone."""

    runs: int
    rows: int
    problems: dict[str, int]
    frame: pl.DataFrame = field(repr=False)


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
    this index (``events`` is the trace's ``dense``). ``checkpoints`` are the valid
    checkpoints (``run_key``, ``ts``, ``step``) sorted by run, then time, ties in file order
    (:func:`~contractlang.trace.checkpoints.by_run`), or ``None`` when ``events`` are not the
    rows they were sorted from (the clock skew moved some).

    >>> from contractlang.trace import generate_trace, load_trace
    >>> index = load_trace(generate_trace(2, seed=3)).index
    >>> index.allocations.columns
    ['start_row', 'end_row', 'notice_at', 'own_request']
    """

    run_ids: pl.Series
    allocations: pl.DataFrame
    events: pl.DataFrame = field(repr=False, compare=False)
    checkpoints: pl.DataFrame | None = field(default=None, repr=False, compare=False)


@dataclass(frozen=True)
class Normalised:
    """The output of :func:`normalise`: the events, the first value problems of each kind, and
    the warnings.

    ``events`` holds the dense columns of every row and ``sparse`` the sparse ones and the
    extras of the rows with a value there, as :class:`Trace` does. ``events`` has a
    :data:`BAD` column marking rows with any value problem and, for each column
    in ``bad_columns`` (the columns with at least one bad value), a ``bad_flag(column)`` column
    marking the rows whose value there is bad. A bad value is normalised to null; the flags tell
    it from a value that is simply absent, so each rule can leave out only the rows whose values
    it reads."""

    events: pl.DataFrame
    sparse: pl.DataFrame
    problems: pl.LazyFrame
    hidden: int  # value problems found but not in ``problems`` (beyond the limit)
    warnings: tuple[Diagnostic, ...]
    extras: tuple[str, ...]
    columns_read: tuple[str, ...]
    bad_columns: tuple[str, ...] = ()
    #: the distinct run ids, sorted (``run_key`` is the position of a row's run here)
    run_ids: pl.Series = field(default_factory=lambda: pl.Series("run_id", [], pl.String))

    @property
    def full(self) -> pl.DataFrame:
        """Every row with every column and flag (:func:`joined`), made at each call."""
        return joined(self.events, self.sparse, self.run_ids)
