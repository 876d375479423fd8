"""The physical polars types of the facts frames the trace half produces and evaluation reads:
durations and GPU-time are ``pl.Duration("us")`` (GPU-time as GPU-microseconds: 1 GPU for 1
second is ``timedelta(seconds=1)``); counts are integers; money is ``pl.Decimal(38, 20)`` before
rounding; enums and strings are ``pl.String``. The catalog of names and types a term can read
is :mod:`contractlang.lang.facts`.
"""

from __future__ import annotations

import polars as pl

MONEY_DTYPE = pl.Decimal(38, 20)
DURATION = pl.Duration("us")
TIMESTAMP = pl.Datetime("us", "UTC")

#: Columns of the per-allocation facts frame produced by the trace half, in this order.
#: Extra trace columns follow, named ``trace.<column>`` (the value on the `started` row,
#: ``trace.price`` included when the trace has prices).
ALLOCATION_SCHEMA: dict[str, pl.DataType] = {
    "run_id": pl.String(),
    "alloc_id": pl.String(),
    "attempt": pl.Int64(),
    "start": TIMESTAMP,
    "end": TIMESTAMP,
    "gpus": pl.Int64(),
    "sku": pl.String(),
    "zone": pl.String(),
    "capacity": pl.String(),
    "end_reason": pl.String(),
    "runtime": DURATION,
    "gpu_time": DURATION,
    "queue_wait": DURATION,
    "notice_at": TIMESTAMP,
    "notice_lead": DURATION,
    "replacement_wait": DURATION,
    "last_checkpoint_at": TIMESTAMP,
    "last_checkpoint_step": pl.Int64(),
    "end_step": pl.Int64(),
    "replayed_time": DURATION,
    "replayed_steps": pl.Int64(),
}

#: Columns of the per-run facts frame produced by the trace half (money facts are added by
#: evaluation).
RUN_SCHEMA: dict[str, pl.DataType] = {
    "run_id": pl.String(),
    "accepted": pl.Boolean(),
    "time_to_accept": DURATION,
    "reclaims": pl.Int64(),
    "failures": pl.Int64(),
    "allocations": pl.Int64(),
    "metered_gpu_time": DURATION,
    "lost_gpu_time": DURATION,
    "lost_steps": pl.Int64(),
    "first_start": TIMESTAMP,
    "last_end": TIMESTAMP,
}


def aligned(frame: pl.DataFrame) -> pl.DataFrame:
    """``frame``, rechunked if its columns are not split into chunks at the same rows. Polars
    lines the columns up before an eager ``select``, ``with_columns`` or ``filter`` of a frame
    whose columns are chunked differently, copying them each time: 35 ms a call on a
    contract's frame of 929,183 allocations and 38 columns. A column computed apart and set
    beside the rows keeps its own chunks (the facts' ``queue_wait`` did), and every contract
    took several such steps over the frames made from them. (A constant column reads as one
    chunk here but costs polars nothing, so a frame with one is rechunked needlessly: call
    this where a frame is made from other frames' columns.)

    >>> two = pl.concat([pl.DataFrame({"x": [1]}), pl.DataFrame({"x": [2]})], rechunk=False)
    >>> beside = two.with_columns(pl.Series("y", [0, 0]))  # x in two chunks, y in one
    >>> [c.n_chunks() for c in aligned(beside).get_columns()]
    [1, 1]
    >>> aligned(two) is two
    True
    """
    columns = frame.get_columns()
    if not columns:
        return frame
    first = columns[0].chunk_lengths()
    if all(c.chunk_lengths() == first for c in columns[1:]):
        return frame
    return frame.rechunk()
