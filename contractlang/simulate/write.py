"""Frames made one batch at a time, streamed into one Parquet file: memory holds a batch, not
the trace.

Polars' streaming engine pulls the batches from a Python generator (an IO source,
``polars.io.plugins.register_io_source``) and sinks them to zstd Parquet in order, so the
same batches give the same bytes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import polars as pl
from polars.io.plugins import register_io_source


def write_batches(
    path: Path, schema: dict[str, pl.DataType], batches: Callable[[], Iterator[pl.DataFrame]]
) -> int:
    """Write every frame of ``batches()`` (each with ``schema``) to ``path``; the rows written.

    An exception raised while making a batch is raised here as it was, not as a polars error.
    """
    rows = 0
    failure: list[BaseException] = []

    def source(
        with_columns: list[str] | None,
        predicate: pl.Expr | None,
        n_rows: int | None,
        batch_size: int | None,
    ) -> Iterator[pl.DataFrame]:
        nonlocal rows
        try:
            for frame in batches():
                rows += frame.height
                yield frame if with_columns is None else frame.select(with_columns)
        except Exception as exc:
            failure.append(exc)
            raise

    frame = register_io_source(source, schema=schema, validate_schema=True)
    try:
        frame.sink_parquet(path, compression="zstd", statistics=True, maintain_order=True)
    except Exception:
        if failure:
            raise failure[0] from None
        raise
    return rows
