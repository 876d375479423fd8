"""Setting aside the runs that break a rule (``--on-invalid quarantine=PATH``): every run with
an error, with all its rows, leaves the trace; what remains is validated again and evaluated.
Nothing is dropped silently: the set-aside rows, with the problems that sent them there, are
:class:`~contractlang.trace.model.Quarantine`'s frame, and every output counts them.

A row with no ``run_id`` cannot take its run with it: it is set aside alone.
"""

from __future__ import annotations

import polars as pl

from contractlang.trace import problems as pb
from contractlang.trace.model import BAD, Normalised, Quarantine, joined
from contractlang.trace.normalise import rekeyed
from contractlang.trace.schema import ROW, RUN_KEY


def set_aside(
    normal: Normalised, found: pl.DataFrame, sources: pb.Sources
) -> tuple[Normalised, Quarantine]:
    """``normal`` without the runs that ``found`` (every problem: ``row``, ``code``,
    ``message``; every bad value is one, as the loader lists them all in this mode) touches,
    and those runs."""
    ev = normal.events
    problem_rows = found.filter(pl.col("row") > 0).get_column("row")
    bad_rows = pl.concat([problem_rows, ev.filter(pl.col(BAD)).get_column(ROW).cast(pl.Int64)])
    touched = ev.filter(pl.col(ROW).is_in(bad_rows.implode()))
    runs = touched.get_column(RUN_KEY).drop_nulls().unique()
    lone = touched.filter(pl.col(RUN_KEY).is_null()).get_column(ROW)
    out = pl.col(RUN_KEY).is_in(runs.implode()) | pl.col(ROW).is_in(lone.implode())
    kept = ev.filter(~out)
    aside = joined(ev.filter(out), normal.sparse, normal.run_ids)
    keys = kept.get_column(RUN_KEY).drop_nulls().unique().sort()
    run_ids = normal.run_ids.gather(keys)
    kept = rekeyed(kept, normal.run_ids, run_ids)
    sparse = normal.sparse.join(kept.select(ROW), on=ROW, how="semi", maintain_order="left")
    messages = found.with_columns(
        pl.struct("row", "code", "message")
        .map_elements(
            lambda r: f"{r['code']}: {pb.resolve(r['message'], r['row'], sources)}",
            return_dtype=pl.String,
        )
        .alias("_text")
    )
    per_row = messages.group_by("row").agg(pl.col("_text").sort().str.join("; ").alias("problems"))
    frame = _frame(aside, per_row, sources)
    counts = found.filter(pl.col("row").is_in(aside.get_column(ROW).implode()))
    problems = dict(sorted(counts.group_by("code").len().iter_rows()))
    quarantine = Quarantine(
        runs=runs.len() + lone.len(), rows=aside.height, problems=problems, frame=frame
    )
    return _kept(normal, kept, sparse, run_ids), quarantine


def nothing_aside(normal: Normalised, sources: pb.Sources) -> Quarantine:
    """The quarantine of a trace with no problem: no run, no row."""
    empty = pb.empty().collect().select("row", pl.col("message").alias("problems"))
    return Quarantine(0, 0, {}, _frame(normal.full.head(0), empty, sources))


def _kept(
    normal: Normalised, events: pl.DataFrame, sparse: pl.DataFrame, run_ids: pl.Series
) -> Normalised:
    return Normalised(
        events=events,
        sparse=sparse,
        problems=pb.empty(),
        hidden=0,
        warnings=normal.warnings,
        extras=normal.extras,
        columns_read=normal.columns_read,
        bad_columns=normal.bad_columns,
        run_ids=run_ids,
    )


def _frame(aside: pl.DataFrame, per_row: pl.DataFrame, sources: pb.Sources) -> pl.DataFrame:
    """The set-aside rows as a trace, with where each came from and why it is here."""
    starts = pl.Series("starts", sources.starts, dtype=pl.Int64)
    rows = aside.get_column(ROW).cast(pl.Int64)
    index = starts.search_sorted(rows - 1, side="right") - 1
    names = pl.Series("file", sources.names, dtype=pl.String)
    own = {ROW, RUN_KEY, BAD} | {c for c in aside.columns if c.startswith(f"{BAD}:")}
    frame = aside.select(
        pl.col(c).cast(pl.String) if isinstance(t, pl.Enum) else pl.col(c)
        for c, t in aside.schema.items()
        if c not in own
    ).with_columns(
        names.gather(index).alias("file"),
        (rows - starts.gather(index)).alias("row"),
        rows.alias("_global"),
    )
    frame = frame.join(per_row.rename({"row": "_global"}), on="_global", how="left")
    first = (
        frame.filter(pl.col("problems").is_not_null())
        .sort("_global")
        .group_by("run_id", maintain_order=True)
        .agg(pl.col("problems").first().str.split("; ").list.first().alias("run_problem"))
    )
    return frame.join(first, on="run_id", how="left").sort("_global").drop("_global")
