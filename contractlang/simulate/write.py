"""Frames made one batch at a time, streamed into one Parquet file: memory holds a batch, not
the trace.

The batches stream through :func:`~contractlang.trace.sink.sink_batches`. The file is written
beside its target and renamed into place, so a failed write leaves no half-written file; a
failure to write is ``E501``.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import polars as pl

from contractlang.errors import cannot_write, os_reason
from contractlang.trace.sink import sink_batches


def sink_atomically(
    path: Path, schema: dict[str, pl.DataType], batches: Callable[[], Iterator[pl.DataFrame]]
) -> int:
    """:func:`~contractlang.trace.sink.sink_batches` into ``path`` whole or not at all: every
    frame of ``batches()`` (each with ``schema``) written beside it first and renamed into
    place, ``E501`` when it cannot be written; the rows written.

    An exception raised while making a batch is raised here as it was, not as a polars error.
    """
    partial = path.with_name(f".{path.name}.partial")
    try:
        rows = sink_batches(partial, schema, batches)
        os.replace(partial, path)
    except BaseException as exc:  # Ctrl-C and SIGTERM too: no `.partial` is left behind
        partial.unlink(missing_ok=True)
        if isinstance(exc, (OSError, pl.exceptions.PolarsError)):
            raise cannot_write(path, os_reason(exc)) from None
        raise
    return rows


def place(written: Path, targets: Sequence[Path]) -> None:
    """Put a written file at each of ``targets`` (contracts that share a trace each get one):
    copied beside the first targets and renamed into place, and ``written`` itself (in the
    same folder) renamed to the last; so a failure leaves each target as it was. E501 on
    failure."""
    if not targets:
        return
    *copies, last = targets
    for target in copies:
        partial = target.with_name(f".{target.name}.partial")
        try:
            shutil.copyfile(written, partial)
            os.replace(partial, target)
        except BaseException as exc:
            partial.unlink(missing_ok=True)
            if isinstance(exc, OSError):
                raise cannot_write(target, os_reason(exc)) from None
            raise
    try:
        os.replace(written, last)
    except OSError as exc:
        raise cannot_write(last, os_reason(exc)) from None
