"""Reading a trace one shard of its runs at a time (docs/scale.md, "How a sharded evaluation
runs"), with the same diagnostics, summary and runs set aside as reading it whole.

A run's shard is :func:`shard_of` its ``run_id``: CRC-32 of its UTF-8 bytes modulo the number
of shards, a hash that every zlib computes alike on every machine and library version (unlike
``pl.Expr.hash``). Rows with no ``run_id`` go to shard 0.

:func:`plan_shards` reads each file's schema (every whole-file problem is raised there, as
:func:`~contractlang.trace.load.load_trace` raises them), counts its rows and finds its runs;
:func:`load_shard` then normalises and checks one shard's rows (numbered as in the whole
file) and :func:`merge_shards` judges the shards together. Every rule reads one row, or the
rows of one run or of one allocation, so the shards' findings together are the whole trace's
— once no allocation has rows in two shards: an allocation under two runs, or a row of it
with no ``run_id``, both errors, can; :func:`spanning` finds such shards, to be read again as
one.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import polars as pl

from contractlang.diagnostics import NO_SPAN, Diagnostic, error
from contractlang.errors import ContractlangError
from contractlang.trace import problems as pb
from contractlang.trace.load import Source, combine
from contractlang.trace.model import Quarantine, Trace
from contractlang.trace.normalise import Prepared, normalise, prepare
from contractlang.trace.read import read, read_failure, source_name
from contractlang.trace.schema import TraceSummary
from contractlang.trace.unite import unite
from contractlang.trace.validate import (
    CheckReport,
    SummaryParts,
    check_runs,
    finish,
    merge_summary_parts,
    report,
    summary_of,
    summary_parts,
    verdict,
)

#: As :func:`~contractlang.trace.load.load_trace` lists problems when runs are set aside.
_ALL = 2**62


def shard_of(run_id: str, shards: int) -> int:
    """The shard of a run among ``shards``: ``crc32(utf8(run_id)) mod shards``, with zlib's
    CRC-32 (the IEEE 802.3 polynomial, as ``gzip`` and PNG use).

    >>> shard_of("run-000001", 8), zlib.crc32(b"run-000001") % 8
    (7, 7)
    """
    return zlib.crc32(run_id.encode("utf-8")) % shards


def shards_of(run_ids: pl.Series, shards: int) -> np.ndarray:
    """:func:`shard_of` each of ``run_ids`` (text, no nulls)."""
    return np.fromiter(
        (zlib.crc32(r.encode("utf-8")) % shards for r in run_ids.to_list()),
        dtype=np.int64,
        count=run_ids.len(),
    )


@dataclass(frozen=True)
class TraceFile:
    """One file (or frame) of the trace: its name, how its columns are normalised, its
    number of rows."""

    name: str
    prepared: Prepared
    rows: int


@dataclass(frozen=True)
class Shard:
    """Which runs one shard holds: ``index``, its ``run_ids`` and, with ``with_null``, the
    rows with no ``run_id`` too."""

    index: int
    run_ids: pl.Series
    with_null: bool = False

    def rows(self, prepared: Prepared) -> pl.Expr:
        """The condition on a file's rows that keeps this shard's."""
        run = prepared.run_id
        keep = run.is_in(self.run_ids.implode())
        return (keep | run.is_null()) if self.with_null else keep


@dataclass(frozen=True)
class ShardPlan:
    """A trace's files and its runs dealt into shards (:func:`plan_shards`)."""

    files: tuple[TraceFile, ...]
    shards: tuple[Shard, ...]
    runs: int
    rows: int

    @property
    def sources(self) -> pb.Sources:
        names = tuple(f.name for f in self.files)
        starts = tuple(int(s) for s in np.cumsum([0, *(f.rows for f in self.files)])[:-1])
        return pb.Sources(names, starts)


@dataclass(frozen=True)
class TraceFiles:
    """A trace's files, read as far as sharding needs: each file's schema and rows, and the
    distinct run ids of them all, sorted."""

    files: tuple[TraceFile, ...]
    run_ids: pl.Series

    @property
    def rows(self) -> int:
        return sum(f.rows for f in self.files)


def plan_shards(source: Source | Sequence[Source], shards: int) -> ShardPlan:
    """:func:`read_files`, then :func:`deal` the runs into ``shards`` shards."""
    return deal(read_files(source), shards)


def read_files(source: Source | Sequence[Source]) -> TraceFiles:
    """Read each file's schema (raising every file's whole-file problems together, as
    :func:`~contractlang.trace.load.load_trace` does), count its rows and find its runs.
    Reads the ``run_id`` column once; holds the distinct run ids."""
    items = [source] if isinstance(source, (str, Path, pl.DataFrame, pl.LazyFrame)) else source
    if not items:
        raise ContractlangError([error("T017", "no trace was given", NO_SPAN, file="contractlang")])
    files: list[TraceFile] = []
    problems: list[Diagnostic] = []
    ids: list[pl.Series] = []
    for item in items:
        name = source_name(item)
        path = None if isinstance(item, (pl.DataFrame, pl.LazyFrame)) else Path(item)
        try:
            # a file by its absolute path, for workers whose working directory is another
            where = path.resolve() if path is not None and path.exists() else item
            prepared = prepare(read(where, name), name, path=path)
            counted = prepared.lf.select(
                pl.len().alias("rows"), prepared.run_id.drop_nulls().unique().implode().alias("ids")
            ).collect(engine="streaming")
        except ContractlangError as exc:  # every file's whole-file problems, then stop
            problems.extend(exc.diagnostics)
            continue
        except pl.exceptions.PolarsError as exc:
            problems.extend(read_failure(name, exc, path).diagnostics)
            continue
        files.append(TraceFile(name, prepared, int(counted["rows"][0])))
        ids.append(counted["ids"][0])
    if problems:
        raise ContractlangError(problems)
    # each extra column read as one type in every file, as load_trace reads it
    united = unite([f.prepared for f in files])
    files = [replace(f, prepared=p) for f, p in zip(files, united, strict=True)]
    run_ids = pl.concat(ids).unique().sort() if ids else pl.Series("run_id", [], pl.String)
    return TraceFiles(tuple(files), run_ids)


def deal(files: TraceFiles, shards: int) -> ShardPlan:
    """Deal the runs of ``files`` into ``shards`` shards by :func:`shard_of`. Shards left with
    no run are dropped (there are fewer shards than asked when there are fewer runs), but
    shard 0 is always kept: it holds the rows with no ``run_id``."""
    if shards < 1:
        raise ValueError("shards must be at least 1")
    run_ids = files.run_ids
    which = shards_of(run_ids, shards)
    # only the shards that hold a run are made (a billion asked of ten runs makes ten): one
    # stable sort by shard, each shard's runs a slice of it, in their order
    order = np.argsort(which, kind="stable")
    held, starts, counts = np.unique(which[order], return_index=True, return_counts=True)
    ordered = run_ids.gather(pl.Series(order, dtype=pl.UInt64)) if len(order) else run_ids
    dealt = {
        int(k): Shard(int(k), ordered.slice(int(a), int(n)), with_null=k == 0)
        for k, a, n in zip(held, starts, counts, strict=True)
    }
    first = dealt.pop(0) if 0 in dealt else Shard(0, run_ids.head(0), with_null=True)
    kept = (first, *dealt.values())
    return ShardPlan(files.files, kept, run_ids.len(), files.rows)


@dataclass(frozen=True)
class LoadedShard:
    """One shard read and checked: what the verdict needs (``report``), the summary's counts,
    its allocations' ids (to find allocations in two shards), the runs it set aside, and its
    events as a trace when they break no rule."""

    shard: Shard
    report: CheckReport
    parts: SummaryParts | None
    alloc_ids: pl.Series
    quarantine: Quarantine | None
    trace: Trace | None
    extras: tuple[str, ...]
    columns_read: tuple[str, ...]


def load_shard(
    plan: ShardPlan,
    shard: Shard,
    *,
    open_at: datetime | None,
    max_problems: int,
    clock_skew: timedelta,
    quarantine: bool,
) -> LoadedShard:
    """Normalise and check the rows of ``shard`` of every file, as one trace."""
    limit = _ALL if quarantine else max_problems
    normals = [
        normalise(f.prepared, f.name, max_problems=limit, rows=shard.rows(f.prepared))
        for f in plan.files
    ]
    normal, sources = combine(normals, [f.name for f in plan.files], [f.rows for f in plan.files])
    checked, aside, first = check_runs(
        normal,
        sources,
        open_at=open_at,
        max_problems=max_problems,
        clock_skew=clock_skew,
        quarantine=quarantine,
    )
    trace = parts = None
    if not checked.total:
        trace = finish(checked, sources, [], 0, open_at)
        parts = summary_parts(trace.dense, checked.findings.summary, open_at)
    return LoadedShard(
        shard,
        report(checked),
        parts,
        first.findings.summary.get_column("alloc_id"),
        aside,
        trace,
        checked.normal.extras,
        checked.normal.columns_read,
    )


def spanning(loaded: Sequence[LoadedShard]) -> list[Shard]:
    """Shards that share an allocation, merged: each merged shard holds the runs of a group
    of shards linked by allocations with rows in more than one of them (empty when there are
    none, as in every valid trace)."""
    frames = [
        pl.DataFrame({"alloc_id": s.alloc_ids}).with_columns(pl.lit(i, pl.Int64).alias("_shard"))
        for i, s in enumerate(loaded)
    ]
    if not frames:
        return []
    pairs = (
        pl.concat(frames)
        .group_by("alloc_id")
        .agg(pl.col("_shard").unique().sort())
        .filter(pl.col("_shard").list.len() > 1)
        .get_column("_shard")
        .to_list()
    )
    parent = list(range(len(loaded)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for group in pairs:
        for other in group[1:]:
            parent[root(other)] = root(group[0])
    groups: dict[int, list[int]] = {}
    for i in range(len(loaded)):
        groups.setdefault(root(i), []).append(i)
    merged = []
    for members in groups.values():
        if len(members) > 1:
            shards = [loaded[i].shard for i in members]
            merged.append(
                Shard(
                    min(s.index for s in shards),
                    pl.concat([s.run_ids for s in shards]).sort(),
                    any(s.with_null for s in shards),
                )
            )
    return merged


@dataclass(frozen=True)
class Merged:
    """The verdict on every shard together: the trace's warnings, its summary, the runs set
    aside (with ``--on-invalid quarantine``)."""

    warnings: tuple[Diagnostic, ...]
    summary: TraceSummary
    quarantine: Quarantine | None
    extras: tuple[str, ...]
    columns_read: tuple[str, ...]


def merge_shards(
    plan: ShardPlan,
    loaded: Sequence[LoadedShard],
    *,
    max_problems: int,
    clock_skew: timedelta,
) -> Merged:
    """Judge the shards together (no two sharing an allocation: :func:`spanning`): raise
    :class:`~contractlang.trace.problems.TraceInvalid` with the problems a load of the whole
    trace would report, or return its warnings and summary."""
    sources = plan.sources
    warnings, count = verdict(
        [s.report for s in loaded], sources, max_problems=max_problems, clock_skew=clock_skew
    )
    parts = [s.parts for s in loaded if s.parts is not None]
    first = loaded[0]
    summary = summary_of(merge_summary_parts(parts), first.extras, count)
    asides = [s.quarantine for s in loaded if s.quarantine is not None]
    aside = merge_quarantines(asides, sources) if asides else None
    return Merged(tuple(warnings), summary, aside, first.extras, first.columns_read)


def merge_quarantines(parts: Sequence[Quarantine], sources: pb.Sources) -> Quarantine:
    """The runs set aside by every shard, as one set aside from the whole trace (rows in
    file order)."""
    problems: dict[str, int] = {}
    for q in parts:
        for code, n in q.problems.items():
            problems[code] = problems.get(code, 0) + n
    frame = pl.concat([q.frame for q in parts], how="vertical_relaxed")
    start = dict(zip(reversed(sources.names), reversed(sources.starts), strict=True))
    order = pl.col("file").replace_strict(start, return_dtype=pl.Int64) + pl.col("row")
    return Quarantine(
        runs=sum(q.runs for q in parts),
        rows=sum(q.rows for q in parts),
        problems=dict(sorted(problems.items())),
        frame=frame.sort(order, maintain_order=True),
    )
