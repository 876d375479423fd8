"""The valid checkpoints in run order: sorted once while validating, for the rule that their
steps do not go back (W101) and for the facts' last checkpoint before each end
(:mod:`~contractlang.trace.derive`), which would otherwise sort them again.

Sorting the checkpoints (4 in 10 rows of a training trace) by run and time is the costly
part of both: measured at 3.8M checkpoints, 0.43 s of W101's 0.54 s, and of the facts'
lookup's 0.54–0.62 s.
"""

from __future__ import annotations

import polars as pl

from contractlang.trace import problems as pb
from contractlang.trace.row_rules import ENGINE
from contractlang.trace.schema import ROW, RUN_KEY

#: Packed keys must fit in a signed 64-bit integer, with room to spare.
_KEY_BITS = 62


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
    by_run_alone = ck.sort(RUN_KEY, maintain_order=True).collect(engine=ENGINE)
    if time_ordered or _each_run_in_time_order(by_run_alone):
        return by_run_alone
    bounds = ck.select(
        pl.col(RUN_KEY).max().alias("runs"),
        pl.col("ts").dt.epoch("us").min().alias("first"),  # µs: a time out of range is no
        pl.col("ts").dt.epoch("us").max().alias("last"),  # Python datetime
    ).collect(engine=ENGINE)
    runs, first, last = bounds.row(0)
    if runs is None or first is None or last is None:  # no checkpoint
        return ck.collect(engine=ENGINE)
    time_bits = max(1, (int(last) - int(first)).bit_length())
    if int(runs).bit_length() + time_bits > _KEY_BITS:
        return ck.sort([RUN_KEY, "ts"], maintain_order=True).collect(engine=ENGINE)
    # (run, time) packed in one integer: a one-column sort, measured much the cheaper
    since = pl.col("ts").dt.epoch("us") - int(first)
    packed = pl.col(RUN_KEY).cast(pl.Int64) * (1 << time_bits) + since
    return ck.sort(packed, maintain_order=True).collect(engine=ENGINE)


def _each_run_in_time_order(ck: pl.DataFrame) -> bool:
    """Whether the rows of ``ck``, sorted by run, are in time order within each run."""
    ts, run = pl.col("ts"), pl.col(RUN_KEY)
    back = (ts < ts.shift(1)) & (run == run.shift(1))
    return not ck.select(back.any()).item()


def rollbacks(ordered: pl.DataFrame) -> pl.LazyFrame:
    """W101: a valid checkpoint whose step is below an earlier valid one of the run, in time
    order (ties in file order). ``ordered`` is :func:`by_run`'s frame; a checkpoint without
    a `step` is left out (there is nothing to compare)."""
    ck = _with_earlier_max(ordered.lazy().filter(pl.col("step").is_not_null()), ordered)
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


def _with_earlier_max(ck: pl.LazyFrame, ordered: pl.DataFrame) -> pl.LazyFrame:
    """``ck`` (checkpoints with a step, in run order) with ``_max``: the largest step of the
    run's checkpoints before each (null for a run's first).

    Said plainly: ``cum_max().shift(1).over(run_key)``. The same, faster: one running maximum
    over the whole frame of ``run_key × 2^bits + (step − lowest step)``, which in a run's rows
    can only come from a step of that run, since earlier runs pack below it. When the
    numbers do not fit in 62 bits, the plain way."""
    lo, hi, top = ordered.select(
        pl.col("step").min().alias("lo"), pl.col("step").max().alias("hi"), pl.col(RUN_KEY).max()
    ).row(0)
    plain = ck.with_columns(pl.col("step").cum_max().shift(1).over(RUN_KEY).alias("_max"))
    if lo is None or hi is None or top is None:
        return plain
    lo_step, run_bits = int(lo), int(top).bit_length()
    step_bits = max(1, (int(hi) - lo_step).bit_length())
    if run_bits + step_bits > _KEY_BITS:
        return plain
    base = pl.col(RUN_KEY).cast(pl.Int64) * (1 << step_bits)
    packed = base + (pl.col("step") - lo_step)
    same_run = pl.col(RUN_KEY) == pl.col(RUN_KEY).shift(1)
    earlier = pl.when(same_run).then(packed.cum_max().shift(1) - base + lo_step)
    return ck.with_columns(earlier.alias("_max"))
