"""The rules that read one row, or rows compared without their allocation: an event's source,
required values, positive GPUs (T005, T011, T015), values in the range the engine keeps
exactly and prices that cannot be (T020, T021, :mod:`~contractlang.trace.limits`); exact
duplicates (T012); and the warnings on one row: many GPUs, a high price (W103, W105).
(Checkpoint steps that go back, W101, are :mod:`~contractlang.trace.checkpoints`'.)"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, Literal

import polars as pl

from contractlang.lang.numbers import TRACE_DAYS
from contractlang.trace import problems as pb
from contractlang.trace.limits import HIGH_PRICE, MANY_GPUS, MAX_GPUS, MAX_STEP, MAX_TS, MIN_TS
from contractlang.trace.model import BAD, bad_flag
from contractlang.trace.schema import (
    EVENTS,
    INVOICE_EVENTS,
    LIFECYCLE_EVENTS,
    ROW,
    RUN_KEY,
    SOURCES,
)

_ORDER = list(EVENTS)
_EXPECTED_SOURCE = pl.Series(
    "expected", [SOURCES.index(EVENTS[e].source) for e in _ORDER], dtype=pl.UInt32
)
#: The polars engine of the validation's passes (measured faster than ``in-memory`` here).
ENGINE: Literal["streaming", "in-memory"] = "streaming"


def bad(ev: pl.DataFrame, column: str) -> pl.Expr:
    """Whether the row's value in ``column`` is bad (false when no value there is)."""
    flag = bad_flag(column)
    return pl.col(flag) if flag in ev.columns else pl.lit(False)


def _row_rules(ev: pl.DataFrame) -> dict[str, pl.Expr]:
    """Flags for the rules that need one row only, by name, over the dense columns (and, on
    invoice lines, ``amount``: :func:`_with_sparse`). A bad value is null here, and a null
    where a rule needs a value flags nothing; a bad `gpus` or `amount` is not a missing
    one."""
    event = pl.col("event")
    expected = pl.lit(_EXPECTED_SOURCE).gather(event.to_physical())
    flags = {
        "_wrong_source": pl.col("source").to_physical() != expected,
        "_no_alloc": event.is_in(list(LIFECYCLE_EVENTS)) & pl.col("alloc_id").is_null(),
        "_no_gpus": (event == "started") & pl.col("gpus").is_null() & ~bad(ev, "gpus"),
        "_no_amount": (
            event.is_in(list(INVOICE_EVENTS)) & pl.col("amount").is_null() & ~bad(ev, "amount")
        ),
        "_gpus": pl.col("gpus") <= 0,
        "_gpus_max": pl.col("gpus") > MAX_GPUS,
        "_ts_range": (pl.col("ts") < _utc(MIN_TS)) | (pl.col("ts") >= _utc(MAX_TS)),
        "_price_negative": pl.col("price") < 0,
        "_step_negative": pl.col("step") < 0,
        "_step_max": pl.col("step") > MAX_STEP,
    }
    return {name: flag.fill_null(False) for name, flag in flags.items()}


#: The row rules that read a sparse column: ``price``, on the rows that have one, and
#: ``amount``, on the invoice lines (whose ``amount`` may be missing).
_ON_SPARSE = ("_price_negative",)
_ON_INVOICES = ("_no_amount",)


def _with_sparse(ev: pl.DataFrame, sparse: pl.DataFrame, columns: Sequence[str]) -> pl.LazyFrame:
    """The invoice lines of ``ev`` with their sparse ``columns``."""
    lines = ev.lazy().filter(pl.col("event").is_in(list(INVOICE_EVENTS)))
    return lines.join(
        sparse.lazy().select(ROW, *columns), on=ROW, how="left", maintain_order="left"
    )


def _utc(moment: datetime) -> pl.Expr:
    return pl.lit(moment).dt.convert_time_zone("UTC").dt.cast_time_unit("us")


def _ts_text(expr: pl.Expr) -> pl.Expr:
    return expr.dt.to_string("%Y-%m-%dT%H:%M:%S%.fZ")


def row_problems(ev: pl.DataFrame, sparse: pl.DataFrame) -> list[pl.LazyFrame]:
    """The problems of the row rules over the dense columns ``ev`` and the ``sparse`` ones:
    one pass counts the rows each rule flags, and only the rules that flag a row are filtered
    again for their messages (usually none)."""
    flags = _row_rules(ev)
    invoices = _with_sparse(ev, sparse, ["amount"])
    on_dense = [n for n in flags if n not in (*_ON_SPARSE, *_ON_INVOICES)]
    frames = {n: ev.lazy() for n in on_dense}
    frames |= {n: sparse.lazy() for n in _ON_SPARSE} | dict.fromkeys(_ON_INVOICES, invoices)
    groups = (on_dense, _ON_SPARSE, _ON_INVOICES)
    counted = pl.collect_all(
        [frames[g[0]].select(flags[n].sum().alias(n) for n in g) for g in groups],
        engine=ENGINE,
    )
    counts = pl.concat(counted, how="horizontal")
    event = pb.backticked(pl.col("event"))
    messages: dict[str, tuple[str, pl.Expr]] = {
        "_wrong_source": (
            "T005",
            pl.concat_str(
                event,
                pl.lit(" events come from `"),
                pl.lit(pl.Series([EVENTS[e].source for e in _ORDER])).gather(
                    pl.col("event").to_physical()
                ),
                pl.lit("`, not "),
                pb.backticked(pl.col("source")),
            ),
        ),
        "_no_alloc": ("T015", pl.concat_str(event, pl.lit(" needs an `alloc_id`"))),
        "_no_gpus": ("T015", pl.lit("`started` needs `gpus`")),
        "_no_amount": (
            "T015",
            pl.concat_str(pl.lit("invoice line "), event, pl.lit(" needs an `amount`")),
        ),
        "_gpus": (
            "T011",
            pl.concat_str(pl.lit("`gpus` must be positive, not "), pb.backticked(pl.col("gpus"))),
        ),
        "_gpus_max": (
            "T020",
            pl.concat_str(
                pl.lit("`gpus` value "),
                pb.backticked(pl.col("gpus")),
                pl.lit(f" is more than contractlang supports in one allocation ({MAX_GPUS:,})"),
            ),
        ),
        "_ts_range": (
            "T020",
            pl.concat_str(
                pl.lit("timestamp "),
                pb.backticked(_ts_text(pl.col("ts"))),
                pl.lit(f" is outside the range contractlang supports ({TRACE_DAYS} UTC)"),
            ),
        ),
        "_price_negative": (
            "T021",
            pl.concat_str(
                pl.lit("`price` value "),
                pb.backticked(pb.decimal_text(pl.col("price"))),
                pl.lit(" is negative; a price per GPU-hour cannot be"),
            ),
        ),
        "_step_negative": (
            "T021",
            pl.concat_str(
                pl.lit("`step` value "),
                pb.backticked(pl.col("step")),
                pl.lit(" is negative; a training step counts from 0"),
            ),
        ),
        "_step_max": (
            "T020",
            pl.concat_str(
                pl.lit("`step` value "),
                pb.backticked(pl.col("step")),
                pl.lit(f" is more than contractlang supports ({MAX_STEP:,})"),
            ),
        ),
    }
    return [
        pb.problems(frames[n].filter(flags[n]), code, message)
        for n, (code, message) in messages.items()
        if counts.get_column(n).item()
    ]


def row_warnings(ev: pl.DataFrame, sparse: pl.DataFrame) -> list[pl.LazyFrame]:
    """W103 and W105: more GPUs in one allocation than is plausible, a price per GPU-hour
    higher than is plausible (each with its row); ``ev`` the dense columns, ``sparse`` the
    sparse ones."""
    lf = ev.lazy()
    gpus = (pl.col("event") == "started") & (pl.col("gpus") > MANY_GPUS)
    price = pl.col("price") > HIGH_PRICE
    return [
        pb.problems(
            lf.filter(gpus.fill_null(False)),
            "W103",
            pl.concat_str(
                pl.lit("an allocation of "),
                pl.col("gpus").cast(pl.String),
                pl.lit(f" GPUs: more than {MANY_GPUS:,} in one allocation is unusual"),
            ),
            help="check the `gpus` column: it counts the GPUs of one allocation",
        ),
        pb.problems(
            sparse.lazy().filter(price.fill_null(False)),
            "W105",
            pl.concat_str(
                pl.lit("`price` value "),
                pb.backticked(pb.decimal_text(pl.col("price"))),
                pl.lit(f" per GPU-hour is over {HIGH_PRICE:,}"),
            ),
            help="`price` is per GPU-hour; check its unit",
        ),
    ]


# --------------------------------------------------------------------------- duplicates


def duplicates(good: pl.LazyFrame, sparse: pl.DataFrame) -> pl.LazyFrame:
    """T012: rows equal in every column. Candidates share an integer key mixing the time, the
    run and the event (equal rows have equal keys; a few unequal rows may collide), found by
    one sort of the key; only candidates are compared in full, so which unequal rows collide
    does not change the result. ``good`` are the dense columns of the rows to check,
    ``sparse`` the sparse columns (of any rows: those of the candidates are joined on).

    The key is ordered by time first (:func:`_time_first_key`), so for a trace in time order,
    or nearly so, as logs usually are, it is nearly sorted already and sorts in well under
    half the time."""
    names = [*good.collect_schema().names(), *sparse.columns]
    # (`run_key` stands for `run_id`: one for each, null for none)
    cols = [c for c in dict.fromkeys(names) if c not in (ROW, BAD)]
    span = good.select(  # times as µs since 1970: a time out of range is no Python datetime
        pl.col("ts").dt.epoch("us").min().alias("lo"),
        pl.col("ts").dt.epoch("us").max().alias("hi"),
        pl.col(RUN_KEY).max().alias("runs"),
    ).collect(engine=ENGINE)
    key = _time_first_key(span.row(0, named=True))
    # one stable sort (streaming: much the fastest on a key nearly in order already); the
    # candidates are the rows whose key equals the one before or after
    k = pl.col("_key")
    rows = (
        good.select(ROW, key.alias("_key"))
        .sort("_key", maintain_order=True)
        .filter((k == k.shift(1)) | (k == k.shift(-1)))
        .collect(engine=ENGINE)
        .get_column(ROW)
    )
    if rows.is_empty():
        return pb.empty()
    candidates = (
        good.filter(pl.col(ROW).is_in(rows.implode()))
        .join(sparse.lazy(), on=ROW, how="left", maintain_order="left")
        .collect(engine=ENGINE)
    )
    dups = candidates.with_columns(pl.col(ROW).min().over(cols).alias("_first")).filter(
        pl.col(ROW) != pl.col("_first")
    )
    return pb.problems(
        dups,
        "T012",
        pl.concat_str(
            pl.lit("this row repeats "), pb.row_ref(pl.col("_first")), pl.lit(" exactly")
        ),
        help="remove the duplicate; an event is recorded once",
    )


def _time_first_key(span: dict[str, Any]) -> pl.Expr:
    """The duplicate check's key: ``µs since the first event`` (shifted right just enough to
    fit) above the run key above the event, when the trace's span and runs fit in 62 bits;
    otherwise the time, the event and the run mixed in a key that may wrap. Equal rows have
    equal keys either way."""
    event_bits = (len(EVENTS) - 1).bit_length()
    lo: int | None = span["lo"]
    hi: int | None = span["hi"]
    runs: int | None = span["runs"]
    if lo is None or hi is None or runs is None:
        mixed: pl.Expr = (
            pl.col("ts").dt.epoch("us") * 64 + pl.col("event").to_physical().cast(pl.Int64)
        ).xor(pl.col(RUN_KEY).cast(pl.Int64) * (1 << 40))  # wraps on overflow, which is fine
        return mixed
    low_bits = int(runs).bit_length() + event_bits
    drop = max(0, (hi - lo).bit_length() + low_bits - 62)
    since = (pl.col("ts").dt.epoch("us") - lo) // (1 << drop)
    low = pl.col(RUN_KEY).cast(pl.Int64) * (1 << event_bits)
    return since * (1 << low_bits) + low + pl.col("event").to_physical().cast(pl.Int64)


# --------------------------------------------------------------------------- order


def time_ordered(ev: pl.DataFrame) -> bool:
    """Whether the rows are in time order (nulls, from bad rows, are left out)."""
    ts = ev.get_column("ts")
    return bool(ts.is_sorted() or ts.drop_nulls().is_sorted())
