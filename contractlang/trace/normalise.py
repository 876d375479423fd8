"""Normalising a trace: check its columns, convert every value's type in one pass over the
data, and flag the values that cannot be converted (docs/trace.md, "How values are read").

Whole-file problems (a missing required column, a column of the wrong type, a reserved name)
raise :class:`~contractlang.errors.ContractlangError`; problems with single values come back
as a problem frame, their rows flagged, for validation to report with the rest.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import polars as pl

from contractlang.diagnostics import NO_SPAN, Diagnostic, did_you_mean, error
from contractlang.errors import ContractlangError
from contractlang.trace import problems as pb
from contractlang.trace.columns import (
    Column,
    blank_to_null,
    bool_column,
    decimal_column,
    enum_column,
    extra_column,
    infer_text_columns,
    int_column,
    string_column,
    ts_column,
)
from contractlang.trace.model import BAD, Normalised, bad_flag
from contractlang.trace.read import read_failure
from contractlang.trace.schema import (
    CAPACITY_ENUM,
    COLUMNS,
    DENSE_COLUMNS,
    EVENT_DTYPES,
    EVENT_ENUM,
    MONEY_COLUMNS,
    REQUIRED_COLUMNS,
    RESERVED_COLUMNS,
    ROW,
    RUN_KEY,
    SOURCE_ENUM,
    SPARSE_COLUMNS,
)

#: The polars engine of the normalising pass (measured faster than ``in-memory`` here).
ENGINE: Literal["streaming", "in-memory"] = "streaming"


@dataclass(frozen=True)
class Prepared:
    """What normalising a file learns from its schema (and, for CSV, from one scan typing its
    text extras), before it reads a value: how each column becomes a normalised one, the
    extras, and the file's warnings. :func:`prepare` makes it once; :func:`normalise` can then
    read the whole file, or the rows of some runs only (a shard), each time the same way."""

    lf: pl.LazyFrame
    name: str
    path: Path | None
    names: tuple[str, ...]
    columns: dict[str, Column]
    extras: tuple[str, ...]
    warnings: tuple[Diagnostic, ...]
    #: the types of the text extras (CSV), inferred from every value of the file (``Null``
    #: for one with no value at all)
    inferred: dict[str, pl.DataType]

    @property
    def run_id(self) -> pl.Expr:
        """A row's normalised ``run_id``, null when it has none (missing, or empty text)."""
        norm = self.columns["run_id"].norm
        return pl.when(norm.str.len_bytes() > 0).then(norm)


def prepare(
    lf: pl.LazyFrame,
    name: str,
    *,
    path: Path | None = None,
    inferred: dict[str, pl.DataType] | None = None,
) -> Prepared:
    """Check a file's columns and plan how each becomes a normalised one.

    Raises :class:`ContractlangError` for whole-file problems (a missing required column, a
    column of the wrong type, a naive timestamp column, a reserved name, an unreadable file:
    ``path``, the file ``lf`` reads, if any, is searched for bytes that are not UTF-8).
    ``inferred``, the text extras' types from an earlier :func:`prepare` of the same file,
    saves the scan that infers them."""
    schema = lf.collect_schema()
    nulls = [c for c, t in schema.items() if t == pl.Null]
    if nulls:  # a column with no value at all (NDJSON types one so): text with no value
        lf = lf.with_columns(pl.col(c).cast(pl.String) for c in nulls)
        schema = lf.collect_schema()
    names = list(schema.names())
    file_problems: list[Diagnostic] = []
    warnings: list[Diagnostic] = []

    for reserved in RESERVED_COLUMNS:
        if reserved in names:
            file_problems.append(
                error(
                    "T018",
                    f"the trace has a column named `{reserved}`, a name contractlang uses itself",
                    NO_SPAN,
                    file=name,
                    help="rename the column",
                )
            )
    for col in REQUIRED_COLUMNS:
        if col not in names:
            guess = did_you_mean(col, [n for n in names if n not in COLUMNS])
            file_problems.append(
                error(
                    "T001",
                    f"missing required column `{col}`",
                    NO_SPAN,
                    file=name,
                    help=f"did you mean `{guess}`?" if guess else None,
                )
            )

    extras = [n for n in names if n not in COLUMNS and n not in RESERVED_COLUMNS]
    text_extras = [n for n in extras if schema[n] == pl.String]

    builders: dict[str, Callable[[str, pl.DataType], Column | str]] = {
        "run_id": string_column,
        "alloc_id": string_column,
        "sku": string_column,
        "zone": string_column,
        "source": lambda n, t: enum_column(n, t, SOURCE_ENUM, "T003"),
        "event": lambda n, t: enum_column(n, t, EVENT_ENUM, "T004"),
        "capacity": lambda n, t: enum_column(n, t, CAPACITY_ENUM, "T002"),
        "gpus": int_column,
        "step": int_column,
        "valid": bool_column,
    }
    columns: dict[str, Column] = {}
    for col in COLUMNS:
        if col not in names:
            continue
        dtype = schema[col]
        built: Column | str | Diagnostic
        if col == "ts":
            built = ts_column(col, dtype, name)
        elif col in MONEY_COLUMNS:
            built = decimal_column(col, dtype, warnings, name)
        else:
            built = builders[col](col, dtype)
        if isinstance(built, Diagnostic):
            file_problems.append(built)
        elif isinstance(built, str):
            file_problems.append(error("T002", built, NO_SPAN, file=name))
        else:
            columns[col] = built
    if file_problems:
        raise ContractlangError(file_problems)

    if inferred is None:
        try:
            inferred = infer_text_columns(lf, text_extras)
        except pl.exceptions.PolarsError as exc:
            raise read_failure(name, exc, path) from None
    for extra in extras:
        columns[extra] = extra_column(extra, schema[extra], inferred, warnings, name)

    # required values
    for col in ("run_id", "ts", "source", "event"):
        raw = pl.col(col)
        missing = raw.is_null()
        if schema[col] == pl.String:
            missing = missing | (raw.str.strip_chars().str.len_bytes() == 0)
        columns[col].bad.append((missing, "T015", pl.lit(f"missing `{col}`"), None))
    return Prepared(lf, name, path, tuple(names), columns, tuple(extras), tuple(warnings), inferred)


def normalise(
    lf: pl.LazyFrame | Prepared,
    name: str,
    *,
    max_problems: int = 50,
    path: Path | None = None,
    rows: pl.Expr | None = None,
) -> Normalised:
    """Check the columns and normalise every value's type (one pass over the data).

    ``lf`` is the file read (:func:`prepare` is then called on it), or what :func:`prepare`
    made of it. ``rows``, a condition on the file's columns and its 1-based ``row``, keeps
    only some of its rows (a shard's), numbered as in the whole file.

    Raises :class:`ContractlangError` for whole-file problems (see :func:`prepare`).
    Problems with single values are returned as a problem frame; their rows are marked
    :data:`BAD`."""
    prep = lf if isinstance(lf, Prepared) else prepare(lf, name, path=path)
    lf, path = prep.lf, prep.path
    names, columns, extras = list(prep.names), prep.columns, list(prep.extras)

    def indexed() -> pl.LazyFrame:
        """The rows read, numbered in the file."""
        numbered = lf.with_row_index(ROW, offset=1)
        return numbered if rows is None else numbered.filter(rows)

    checks = [
        _Check(col, bad.fill_null(False), code, message, hint, _suggest(col, code))
        for col, conv in columns.items()
        for bad, code, message, hint in conv.bad
    ]
    # the checks of the screened columns are left out of the first pass: they run (exactly as
    # written) in a second pass only when the normalised column shows a value they may flag
    first = [k for k, c in enumerate(checks) if c.column not in _SCREENED]
    values = [pl.col(ROW).cast(pl.Int64)]
    values += [columns[c].norm.alias(c) for c in COLUMNS if c in columns]
    values += [columns[e].norm.alias(e) for e in extras]
    flags = [checks[k].bad.alias(f"_b{k}") for k in first]
    held = [c for c in (*SPARSE_COLUMNS, *extras) if c in columns]
    try:
        frame, sparse = _split(indexed().select(values + flags), held)
    except pl.exceptions.PolarsError as exc:
        raise read_failure(name, exc, path) from None
    frame = _blank_to_null(frame, columns)
    missing = [pl.lit(None, EVENT_DTYPES[c]).alias(c) for c in SPARSE_COLUMNS if c not in held]
    sparse = _blank_to_null(sparse.with_columns(missing), columns).select(
        ROW, *SPARSE_COLUMNS, *[c for c in extras if c in columns]
    )
    # (as a query: polars runs it in parallel, where `Series.unique` measured about twice as
    # slow, 0.38 s against 0.20 s over 10M rows)
    distinct = pl.col("run_id").drop_nulls().unique().sort()
    run_ids = frame.lazy().select(distinct).collect().get_column("run_id")
    suspect = _suspect_columns(frame, run_ids)
    second = [k for k, c in enumerate(checks) if c.column in suspect]
    if second:
        try:
            late = indexed().select(checks[k].bad.alias(f"_b{k}") for k in second)
            late_frame = late.collect(engine=ENGINE)
        except pl.exceptions.PolarsError as exc:
            raise read_failure(name, exc, path) from None
        frame = frame.with_columns(late_frame.get_columns())

    # checks never run flag no row (their screen showed no value they could flag)
    ran = sorted(first + second)
    found = frame.select(pl.col(f"_b{k}").sum() for k in ran).row(0) if ran else ()
    flag_count = dict(zip(ran, found, strict=True))
    counts = [flag_count.get(k, 0) for k in range(len(checks))]
    problem_frames, hidden = _value_problems(lf, frame, checks, counts, max_problems)
    # which column of a row is bad, for the columns that have a bad value at all (so a valid
    # trace carries none of these flags)
    by_column: dict[str, list[str]] = {}
    for k, (check, count) in enumerate(zip(checks, counts, strict=True)):
        if count:
            by_column.setdefault(check.column, []).append(f"_b{k}")
    bad_columns = tuple(by_column)
    # (over every flag computed, all false but for those counted: a column computed row by
    # row keeps the frame's chunks, where a constant would be one chunk)
    any_bad = pl.any_horizontal(f"_b{k}" for k in ran) if ran else pl.lit(False)
    frame = frame.with_columns(
        any_bad.alias(BAD),
        *[pl.any_horizontal(fs).alias(bad_flag(c)) for c, fs in by_column.items()],
    ).drop(f"_b{k}" for k in ran)
    # optional schema columns absent from the input are null columns of their type
    absent = [pl.lit(None, dtype=EVENT_DTYPES[c]).alias(c) for c in DENSE_COLUMNS if c not in names]
    if absent:
        frame = frame.with_columns(absent)
    frame = add_run_key(frame, run_ids).select(
        [ROW, RUN_KEY, *DENSE_COLUMNS, BAD, *[bad_flag(c) for c in bad_columns]]
    )  # `run_id` is held as its `run_key`
    extras_out = tuple(sorted((["price"] if "price" in names else []) + extras))
    return Normalised(
        frame,
        sparse,
        problem_frames,
        hidden,
        prep.warnings,
        extras_out,
        tuple(names),
        bad_columns,
        run_ids,
    )


def _blank_to_null(frame: pl.DataFrame, columns: dict[str, Column]) -> pl.DataFrame:
    """``frame`` with the empty text of its text columns as null (a column is tested once,
    and changed only when it holds an empty value)."""
    later = [c for c in frame.columns if c in columns and columns[c].blank_later]
    found_empty = frame.select((pl.col(c).str.len_bytes() == 0).any() for c in later)
    empty = [c for c in later if found_empty.get_column(c).item()]
    if empty:
        frame = frame.with_columns(blank_to_null(pl.col(c)).alias(c) for c in empty)
    return frame


#: Rows normalised at a time: a batch with every column is split at once into the dense
#: columns and the rows of the sparse ones (:func:`_split`), so all columns of every row are
#: never held together.
BATCH_ROWS = 500_000


def _split(rows: pl.LazyFrame, held: Sequence[str]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The rows ``rows`` computes, a batch at a time: every column but ``held`` (the sparse
    columns and extras the input has), and ``row`` with ``held`` on the rows with a value in
    one of them, each in file order."""
    dense: list[pl.DataFrame] = []
    sparse: list[pl.DataFrame] = []
    some = pl.any_horizontal(pl.col(c).is_not_null() for c in held) if held else pl.lit(False)
    for batch in rows.collect_batches(chunk_size=BATCH_ROWS, engine=ENGINE):
        dense.append(batch.drop(held))
        sparse.append(batch.select(ROW, *held).filter(some))
    if not dense:  # no row at all
        empty = rows.collect_schema()
        none = pl.DataFrame(schema=empty)
        return none.drop(held), none.select(ROW, *held)
    return pl.concat(dense, rechunk=False), pl.concat(sparse, rechunk=False)


#: Columns whose value checks run only when the normalised column may hold a value they flag.
#: Each of their checks flags only rows whose normalised value is null, or (``run_id``) text
#: of whitespace only: a missing value (null, empty or blank text) and an unknown `source` or
#: `event` become null, and so does a `ts` that cannot be read; a blank `run_id` that is not
#: empty is kept as it is. A column with no such value has no bad value, so a valid trace
#: skips these checks (the blank test on the raw text of 10M rows alone costs 0.3 s).
_SCREENED = ("run_id", "ts", "source", "event")


def _suspect_columns(frame: pl.DataFrame, run_ids: pl.Series) -> set[str]:
    """The screened columns of the normalised ``frame`` with a value their checks may flag
    (see :data:`_SCREENED`); ``run_ids`` are the distinct non-null run ids."""
    suspect = {c for c in _SCREENED if c in frame.columns and frame.get_column(c).null_count()}
    blank = run_ids.len() and (run_ids.str.strip_chars().str.len_bytes() == 0).any()
    if "run_id" in frame.columns and blank:
        suspect.add("run_id")
    return suspect


@dataclass(frozen=True)
class _Check:
    column: str
    bad: pl.Expr
    code: str
    message: pl.Expr
    help: str | None
    suggest: str | None


def _suggest(column: str, code: str) -> str | None:
    """The vocabulary to suggest from for an unknown enum value."""
    return column if column in ("source", "event", "capacity") and code != "T015" else None


def _value_problems(
    lf: pl.LazyFrame,
    frame: pl.DataFrame,
    checks: Sequence[_Check],
    counts: Sequence[int],
    limit: int,
) -> tuple[pl.LazyFrame, int]:
    """Messages for the first ``limit`` bad rows of each check, built from the raw values
    (a second read of only those rows); the other bad rows are counted in ``hidden``."""
    wanted: list[int] = []
    hidden = 0
    for k, count in enumerate(counts):
        if count:
            rows = frame.filter(pl.col(f"_b{k}")).get_column(ROW).head(limit)
            wanted.extend(rows.to_list())
            hidden += count - len(rows)
    if not wanted:
        return pb.empty(), hidden
    raw = (
        lf.with_row_index(ROW, offset=1)
        .filter(pl.col(ROW).is_in(sorted(set(wanted))))
        .with_columns(pl.col(ROW).cast(pl.Int64))
        .collect()
    )
    frames = []
    for check, count in zip(checks, counts, strict=True):
        if not count:
            continue
        bad_rows = raw.filter(check.bad).head(limit)
        frames.append(
            pb.problems(
                bad_rows,
                check.code,
                check.message,
                help=check.help,
                suggest=check.suggest,
                value=pl.col(check.column).cast(pl.String),
            )
        )
    return pl.concat(frames), hidden


def rekeyed(frame: pl.DataFrame, keys: pl.Series, run_ids: pl.Series) -> pl.DataFrame:
    """``frame`` with its ``run_key``, positions in the sorted run ids ``keys``, as positions
    in ``run_ids`` (sorted, holding the run id of every key the frame's rows have): a null
    stays null. Files read as one map each file's keys into the ids of all; the runs kept
    when some are set aside, theirs into the ids kept."""
    if keys.is_empty():
        return frame
    at = run_ids.search_sorted(keys).cast(pl.UInt32)
    return frame.with_columns(pl.lit(at).gather(pl.col(RUN_KEY)).alias(RUN_KEY))


def add_run_key(frame: pl.DataFrame, runs: pl.Series) -> pl.DataFrame:
    """An integer per ``run_id``, in ``run_id`` order (joins and sorts on it are cheaper): the
    position of the run in ``runs``, the sorted distinct run ids, through an ``Enum``.

    (A cast keeps the column in the frame's chunks; a lookup by hash, though cheaper alone,
    gives one chunk, and the frame is then copied whole to line its columns up again.)"""
    key = pl.col("run_id").cast(pl.Enum(runs)).to_physical().cast(pl.UInt32)
    return frame.with_columns(key.alias(RUN_KEY))
