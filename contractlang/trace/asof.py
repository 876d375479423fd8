"""As-of joins within a run, the lookups the facts are made of: the latest request before a
start, the last valid checkpoint before an end, the next start after an end."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

import polars as pl

from contractlang.trace.model import Trace
from contractlang.trace.schema import RUN_KEY

#: Packed (run, time) keys must fit in a signed 64-bit integer, with room to spare.
MAX_KEY_BITS = 62
#: An allocation's position in attempt order, by which lookups are set back beside it.
POSITION = "_position"


def utc(moment: datetime) -> pl.Expr:
    """A moment as a polars UTC microsecond timestamp literal."""
    return pl.lit(moment).dt.convert_time_zone("UTC").dt.cast_time_unit("us")


@dataclass(frozen=True)
class Keys:
    """As-of joins within a run.

    When the trace's runs and time span fit, (run, time) pairs are packed into one integer,
    ``run_key × 2^shift + µs since the first event``, so an as-of join within a run is a
    plain as-of join on that integer (a match from another run is then discarded), which is
    much cheaper than ``join_asof(by=…)`` on frames sorted by run and time. Otherwise, or
    when asked (``by_time``), ``join_asof(by=run_key)`` on both sides sorted by time alone,
    which is all it needs (each run's rows in time order): a stable sort by time is cheap on
    rows taken from a log in time order, where the packed key would need a full sort, and
    none is needed when the events are in time order (``ordered``) and the right side is
    rows of them in file order. All give the same rows.
    """

    origin: datetime | None
    shift: int = 0
    ordered: bool = False

    @staticmethod
    def of(trace: Trace) -> Keys:
        s = trace.summary
        ts = trace.dense.get_column("ts")
        ordered = not ts.null_count() and ts.is_sorted()
        if s.first_ts is None or s.last_ts is None:
            return Keys(None, ordered=ordered)
        moments = [s.first_ts, s.last_ts, *([trace.open_at] if trace.open_at else [])]
        lo, hi = min(moments), max(moments)
        span = (hi - lo) // timedelta(microseconds=1)
        shift = max(1, span.bit_length())
        if shift + max(1, s.runs.bit_length()) > MAX_KEY_BITS:
            return Keys(None, ordered=ordered)
        return Keys(lo, shift, ordered)

    def _key(self, column: str) -> pl.Expr:
        assert self.origin is not None
        since = (pl.col(column) - utc(self.origin)).dt.total_microseconds()
        return pl.col(RUN_KEY).cast(pl.Int64) * (1 << self.shift) + since

    def lookup(
        self,
        alloc: pl.LazyFrame,
        right: pl.LazyFrame,
        left_on: str,
        right_on: str,
        strategy: Literal["backward", "forward"],
        *,
        exact: bool = True,
        by_time: bool = False,
        right_in_file_order: bool = False,
        right_by_run: bool = False,
    ) -> pl.LazyFrame:
        """The columns of ``right`` (but ``run_key``) as-of joined to the rows of ``alloc``
        (which has a :data:`POSITION` column), in ``alloc``'s order: only the keys of
        ``alloc`` are sorted for the join, and its result sorted back."""
        narrow = alloc.select(POSITION, RUN_KEY, left_on)
        joined = self.asof(
            narrow,
            right,
            left_on,
            right_on,
            strategy,
            exact=exact,
            by_time=by_time,
            right_in_file_order=right_in_file_order,
            right_by_run=right_by_run,
        )
        columns = [c for c in right.collect_schema().names() if c != RUN_KEY]
        return joined.sort(POSITION).select(columns)

    def asof(
        self,
        left: pl.LazyFrame,
        right: pl.LazyFrame,
        left_on: str,
        right_on: str,
        strategy: Literal["backward", "forward"],
        *,
        exact: bool = True,
        by_time: bool = False,
        right_in_file_order: bool = False,
        right_by_run: bool = False,
    ) -> pl.LazyFrame:
        """Join to each row of ``left`` the row of ``right`` of the same run nearest in time:
        the latest at or before ``left_on`` (backward) or the earliest at or after it
        (forward); strictly before or after when ``exact`` is false. Ties in ``right``: the
        last (backward) or first (forward) in its current order. ``right_in_file_order``
        says ``right`` is rows of the events in file order, with ``right_on`` their time;
        ``right_by_run`` that it is sorted by run, then ``right_on``, ties in file order (its
        packed keys are then in order: it is not sorted again)."""
        if by_time or self.origin is None:
            in_order = self.ordered and right_in_file_order  # a stable sort would keep it
            return left.sort(left_on).join_asof(
                right if in_order else right.sort(right_on, maintain_order=True),
                left_on=left_on,
                right_on=right_on,
                by=RUN_KEY,
                strategy=strategy,
                allow_exact_matches=exact,
                check_sortedness=False,
            )
        columns = [c for c in right.collect_schema().names() if c != RUN_KEY]
        keyed_left = left.with_columns(self._key(left_on).alias("_lkey")).sort("_lkey")
        keyed_right = right.with_columns(self._key(right_on).alias("_rkey")).rename(
            {RUN_KEY: "_rrun"}
        )
        if not right_by_run:
            keyed_right = keyed_right.sort("_rkey", maintain_order=True)
        joined = keyed_left.join_asof(
            keyed_right,
            left_on="_lkey",
            right_on="_rkey",
            strategy=strategy,
            allow_exact_matches=exact,
            check_sortedness=False,
        )
        same_run = pl.col("_rrun") == pl.col(RUN_KEY)
        return joined.with_columns(
            pl.when(same_run).then(pl.col(c)).alias(c) for c in columns
        ).drop("_lkey", "_rkey", "_rrun")

    def next_start(self, alloc: pl.LazyFrame, starts: pl.LazyFrame) -> pl.LazyFrame:
        """``_next_start`` for each row of ``alloc`` (sorted by run and start, with a
        :data:`POSITION`), in its order: the start of the first *other* allocation of the run
        starting at or after the allocation's end. That is the earliest start at or after the
        end, unless it is the allocation's own start and no other allocation starts then (a
        zero-length allocation): then the earliest start strictly after it.

        With packed keys, ``alloc`` is itself the sorted list of starts: two binary searches
        of the end among the start keys find the first start at or after the end (``ge``) and
        the first strictly after it (``gt``), kept when of the same run; several allocations
        start at ``ge`` when the key after it is equal. Otherwise: as-of joins with the
        distinct starts of each run (``starts``) and their counts."""
        if self.origin is None:
            return self._next_start_joined(alloc, starts)
        skey, ekey = self._key("start"), self._key("end")
        height = pl.len().cast(pl.Int64)

        def find(side: Literal["left", "right"]) -> pl.Expr:
            found = skey.search_sorted(ekey, side=side).cast(pl.Int64)
            return pl.when(ekey.is_not_null()).then(found)

        def at(position: pl.Expr, column: pl.Expr) -> pl.Expr:
            return column.gather(pl.when(position < height).then(position))

        def start_in_run(position: pl.Expr) -> pl.Expr:
            same_run = at(position, pl.col(RUN_KEY)) == pl.col(RUN_KEY)
            return pl.when(same_run).then(at(position, pl.col("start")))

        # each search once, as a column: the expressions below read them several times, and
        # polars may compute an expression each time it appears (this lookup collected alone:
        # 1.56 s instead of 0.22 s at 929k allocations; in the whole facts plan, which shares
        # some of it, 0.1–0.15 s)
        searched = alloc.select(
            RUN_KEY,
            "start",
            skey.alias("_skey"),
            find("left").alias("_ge"),
            find("right").alias("_gt"),
        )
        ge, gt = pl.col("_ge"), pl.col("_gt")
        next_ge, next_gt = start_in_run(ge), start_in_run(gt)
        several = at(ge + 1, pl.col("_skey")) == at(ge, pl.col("_skey"))
        others_at = (next_ge != pl.col("start")) | several
        next_start = pl.when(others_at.fill_null(False)).then(next_ge).otherwise(next_gt)
        return searched.select(next_start.alias("_next_start"))

    def _next_start_joined(self, alloc: pl.LazyFrame, starts: pl.LazyFrame) -> pl.LazyFrame:
        start_groups = starts.group_by([RUN_KEY, "start"]).agg(pl.len().alias("_starting"))
        narrow = alloc.select(POSITION, RUN_KEY, "start", "end")
        narrow = self.asof(
            narrow,
            start_groups.select(RUN_KEY, pl.col("start").alias("_next_ge"), "_starting"),
            "end",
            "_next_ge",
            "forward",
        )
        narrow = self.asof(
            narrow,
            start_groups.select(RUN_KEY, pl.col("start").alias("_next_gt")),
            "end",
            "_next_gt",
            "forward",
            exact=False,
        )
        # a zero-length allocation finds its own start among those at its end: it needs
        # another allocation starting then, or else the next start strictly after
        others_at = (pl.col("_next_ge") != pl.col("start")) | (pl.col("_starting") >= 2)
        next_start = (
            pl.when(others_at.fill_null(False))
            .then(pl.col("_next_ge"))
            .otherwise(pl.col("_next_gt"))
        )
        return narrow.sort(POSITION).select(next_start.alias("_next_start"))
