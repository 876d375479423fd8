"""Frames made one batch at a time, streamed into one Parquet file: memory holds a batch, not
the trace.

Polars' streaming engine pulls the batches from a Python generator (an IO source,
``polars.io.plugins.register_io_source``) and sinks them to zstd Parquet in order, so the
same batches give the same bytes, written once (no part files written and read again).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import polars as pl
from polars.io.plugins import register_io_source


def sink_batches(
    path: Path, schema: dict[str, pl.DataType], batches: Callable[[], Iterator[pl.DataFrame]]
) -> int:
    """Write every frame of ``batches()`` (each with ``schema``) to ``path``; the rows written.

    ``batches`` is called once. An exception raised while making a batch is raised here as it
    was, not as a polars error; a failure to write raises polars' error (or ``OSError``).
    Callers that must not leave a half-written file write beside their target and rename.

    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "t.parquet"
    >>> sink_batches(p, {"x": pl.Int64()}, lambda: iter([pl.DataFrame({"x": [1, 2]})] * 3))
    6
    >>> pl.read_parquet(p)["x"].to_list()
    [1, 2, 1, 2, 1, 2]
    """
    rows = 0
    failure: list[BaseException] = []
    calls = 0

    def source(
        with_columns: list[str] | None,
        predicate: pl.Expr | None,
        n_rows: int | None,
        batch_size: int | None,
    ) -> Iterator[pl.DataFrame]:
        nonlocal rows, calls
        calls += 1
        if calls > 1:  # a second pass would find the batches spent and write too few rows
            failure.append(RuntimeError("the batches were read twice"))
            raise failure[-1]
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
