"""The valid checkpoints in run order: sorted once while validating, for the rule that their
steps do not go back (W101) and for the facts' last checkpoint before each end
(:mod:`~contractlang.trace.derive`), which would otherwise sort them again.

Sorting the checkpoints (4 in 10 rows of a training trace) by run and time is the costly
part of both: at 3.8M checkpoints the sort takes 0.29 s and W101 on the sorted rows 0.05 s
(``bench/bench_pieces.py``); sorting them again for the facts took 0.43 s of a 0.54–0.62 s
lookup.
"""

from __future__ import annotations

import polars as pl

from contractlang.trace import asof
from contractlang.trace import problems as pb
from contractlang.trace.row_rules import ENGINE
from contractlang.trace.schema import ROW, RUN_KEY


def by_run(events: pl.LazyFrame, bad_valid: pl.Expr, time_ordered: bool) -> pl.DataFrame:
    """The valid checkpoints (``row``, ``run_key``, ``ts``, ``step``) sorted by run, then by
    time, ties in file order. A checkpoint whose `valid` is false or bad is left out, and so
    is one whose `ts` or `run_id` is bad or missing (it cannot be placed); a missing `valid`
    means valid. One without a `step` is kept (it is still a run's last checkpoint), and W101
    leaves it out. ``time_ordered`` says the rows are in time order already, as logs usually
    are: then a stable sort by run alone puts them in order, as it does whenever each run's
    checkpoints are in time order, which is checked (so a trace where they are not pays for
    that sort and a second one: 0.23 s more at 3.8M checkpoints).

    >>> ev = pl.DataFrame({"row": [1, 2, 3], "run_key": [1, 0, 0], "event": ["checkpoint"] * 3,
    ...     "ts": [3, 2, 1], "step": [5, 7, None], "valid": [True, None, True]})
    >>> by_run(ev.lazy(), pl.lit(False), time_ordered=False).get_column("row").to_list()
    [3, 2, 1]
    """
    ck = events.filter(
        (pl.col("event") == "checkpoint")
        & pl.col("valid").fill_null(True)
        & ~bad_valid
        & pl.col("ts").is_not_null()
        & pl.col(RUN_KEY).is_not_null()
    ).select(ROW, RUN_KEY, "ts", "step")
    # a stable sort by run alone is enough when each run's checkpoints come in time order,
    # as they do in a log in time order, or in files concatenated (one per source, say)
    frame = ck.sort(RUN_KEY, maintain_order=True).collect(engine=ENGINE)
    if frame.is_empty() or time_ordered or _each_run_in_time_order(frame):
        return frame
    # (stable sorts of that frame: within a run, its rows are in file order)
    runs, first, last = frame.select(
        pl.col(RUN_KEY).max(),
        pl.col("ts").dt.epoch("us").min().alias("first"),  # µs: a time out of range is no
        pl.col("ts").dt.epoch("us").max().alias("last"),  # Python datetime
    ).row(0)
    time_bits = max(1, (int(last) - int(first)).bit_length())
    if int(runs).bit_length() + time_bits > asof.MAX_KEY_BITS:
        key: pl.Expr | list[str] = [RUN_KEY, "ts"]
    else:  # (run, time) packed in one integer: a one-column sort, measured much the cheaper
        since = pl.col("ts").dt.epoch("us") - int(first)
        key = pl.col(RUN_KEY).cast(pl.Int64) * (1 << time_bits) + since
    return frame.lazy().sort(key, maintain_order=True).collect(engine=ENGINE)


def _each_run_in_time_order(ck: pl.DataFrame) -> bool:
    """Whether the rows of ``ck``, sorted by run, are in time order within each run."""
    ts, run = pl.col("ts"), pl.col(RUN_KEY)
    back = (ts < ts.shift(1)) & (run == run.shift(1))
    return not ck.select(back.any()).item()


def rollbacks(ordered: pl.DataFrame) -> pl.LazyFrame:
    """W101: a valid checkpoint whose step is below an earlier valid one of the run, in time
    order (ties in file order). ``ordered`` is :func:`by_run`'s frame; a checkpoint without
    a `step` is left out (there is nothing to compare)."""
    ck = _with_earlier_max(ordered.filter(pl.col("step").is_not_null()))
    return pb.problems(
        ck.filter(pl.col("step") < pl.col("_max")),
        "W101",
        pl.concat_str(
            pl.lit("checkpoint step "),
            pl.col("step").cast(pl.String),
            pl.lit(" is below an earlier valid checkpoint's step "),
            pl.col("_max").cast(pl.String),
        ),
        help="a deliberate rollback is fine; `last_checkpoint` is still the latest valid one",
    )


def _with_earlier_max(ck: pl.DataFrame) -> pl.LazyFrame:
    """``ck`` (checkpoints with a step, in run order) with ``_max``: the largest step of the
    run's checkpoints before each (null for a run's first).

    Said plainly: ``cum_max().shift(1).over(run_key)``. The same, faster: one running maximum
    over the whole frame of ``run_key × 2^bits + (step − lowest step)``, which in a run's rows
    can only come from a step of that run, since earlier runs pack below it. When the
    numbers do not fit in 62 bits, the plain way."""
    lo, hi, top = ck.select(
        pl.col("step").min().alias("lo"), pl.col("step").max().alias("hi"), pl.col(RUN_KEY).max()
    ).row(0)
    plain = ck.lazy().with_columns(pl.col("step").cum_max().shift(1).over(RUN_KEY).alias("_max"))
    if lo is None or hi is None or top is None:
        return plain
    lo_step, run_bits = int(lo), int(top).bit_length()
    step_bits = max(1, (int(hi) - lo_step).bit_length())
    if run_bits + step_bits > asof.MAX_KEY_BITS:
        return plain
    base = pl.col(RUN_KEY).cast(pl.Int64) * (1 << step_bits)
    packed = base + (pl.col("step") - lo_step)
    same_run = pl.col(RUN_KEY) == pl.col(RUN_KEY).shift(1)
    earlier = pl.when(same_run).then(packed.cum_max().shift(1) - base + lo_step)
    return ck.lazy().with_columns(earlier.alias("_max"))
