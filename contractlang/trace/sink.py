"""Frames made one batch at a time, streamed into one Parquet file: memory holds a batch, not
the trace.

Polars' streaming engine pulls the batches from a Python generator (an IO source,
``polars.io.plugins.register_io_source``) and sinks them to zstd Parquet in order, so the
same batches give the same bytes, written once (no part files written and read again).

A long write stops as soon as it is asked to (:func:`write_in_thread`). Called in the main
thread, polars would hold back every Python signal handler but Ctrl-C's (polars hooks SIGINT
itself) until the whole file was written: SIGTERM waited minutes. So the file is written in a
thread of its own while the calling thread waits, where a signal's handler runs at once; and
polars writes through an :class:`Output` the calling thread shuts on the way out, so no byte
reaches the file after that, whatever polars or the batches are still doing (a polars call
cannot be interrupted: a batch being made goes on until its next step).
"""

from __future__ import annotations

import contextlib
import io
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, TypeVar, cast

import polars as pl
from polars.io.plugins import register_io_source

if TYPE_CHECKING:
    from _typeshed import ReadableBuffer

__all__ = [
    "GRACE_SECONDS",
    "Output",
    "Stopped",
    "sink_batches",
    "stopped_writes_running",
    "write_in_thread",
]

T = TypeVar("T")

#: How often the calling thread wakes while it waits, so that a signal's handler runs even
#: should the signal have reached another thread.
WAKE_SECONDS = 0.1

#: How long a stopped write is given to end before the exception is raised all the same (its
#: output is shut first: nothing more is written in any case).
GRACE_SECONDS = 1.0


class Stopped(Exception):
    """The write was stopped: its output is shut."""


class Output(io.RawIOBase):
    """A file written by other threads, which the thread that opened it can :meth:`shut`:
    every write after fails, and none is half done when it returns. Unbuffered: every byte
    written is with the system. It knows whether any thread still works for it
    (:attr:`running`).

    >>> import tempfile
    >>> out = Output(Path(tempfile.mkdtemp()) / "t.bin")
    >>> out.write(b"ab"), out.tell()
    (2, 2)
    >>> out.shut()
    >>> try:
    ...     out.write(b"c")
    ... except Stopped as exc:
    ...     print(exc)
    the write was stopped
    """

    def __init__(self, path: Path) -> None:
        super().__init__()
        self._file = path.open("wb", buffering=0)
        self._lock = threading.Lock()
        self._shut = False
        self._working = 0
        self.finished = threading.Event()  # set when the thread writing it has ended
        self.error: OSError | None = None  # the first write the system refused

    @property
    def stopped(self) -> bool:
        """Whether :meth:`shut` was called."""
        return self._shut

    @property
    def running(self) -> bool:
        """Whether the thread writing it, or a thread making its next batch, is still at
        work."""
        return not self.finished.is_set() or self._working > 0

    @contextlib.contextmanager
    def working(self) -> Iterator[None]:
        """A thread at work for this output (making a batch polars asked for)."""
        with self._lock:
            self._working += 1
        try:
            yield
        finally:
            with self._lock:
                self._working -= 1

    def writable(self) -> bool:
        return True

    def write(self, data: ReadableBuffer) -> int:
        with self._lock:
            self._check()
            view = memoryview(data).cast("B")
            done = 0
            try:
                while done < len(view):  # a raw write may take only part
                    done += self._file.write(view[done:]) or 0
            except OSError as exc:
                self.error = self.error or exc
                raise
            return done

    def raise_error(self) -> None:
        """Raise the system's error of a write that failed, if one did: polars reports it
        in its own words, which say less (``[Errno 28] No space left on device``)."""
        if self.error is not None:
            raise self.error

    def flush(self) -> None:
        """Nothing to flush: every write went to the system."""

    def tell(self) -> int:
        with self._lock:
            self._check()
            return self._file.tell()

    def shut(self) -> None:
        """Close the file: no byte is written after this returns."""
        with self._lock:
            self._shut = True
            self._file.close()

    def close(self) -> None:
        """Close the file (a failure to close is raised: ``OSError``)."""
        with self._lock:
            self._file.close()
        super().close()

    def _check(self) -> None:
        if self._shut:
            raise Stopped("the write was stopped")


def write_in_thread(path: Path, write: Callable[[Output], T]) -> T:
    """Open ``path`` for writing and call ``write`` with it in a thread of its own, waiting in
    this one; ``write``'s result, or its exception raised here.

    An exception raised here while waiting — ``KeyboardInterrupt``, or what a handler of
    SIGTERM raises — shuts the output at once, gives the write :data:`GRACE_SECONDS` to end
    (a ``write`` that checks :attr:`Output.stopped` between its steps ends sooner) and is
    raised: the caller may remove the file, which nothing writes any more. A write still at
    work then (a polars call of its thread, or of the batches', not done) makes
    :func:`stopped_writes_running` true. When ``write`` fails, its exception is raised once
    nothing works for the output any more (a batch being made is finished first).

    The calling thread waits on an event, not ``Thread.join``: Python 3.11 takes a join
    interrupted by a signal for the thread's end."""
    output = Output(path)
    result: list[T] = []
    failure: list[BaseException] = []

    def work() -> None:
        try:
            result.append(write(output))
        except BaseException as exc:  # raised in the calling thread
            failure.append(exc)
        finally:
            output.finished.set()

    worker = threading.Thread(target=work, name=f"write {path.name}", daemon=True)
    try:
        worker.start()
        while not output.finished.wait(WAKE_SECONDS):
            pass
    except BaseException:
        _stop(output, GRACE_SECONDS)
        raise
    if failure:  # no hurry on a failure: the batch being made, if one is, ends first
        interrupted = not isinstance(failure[0], Exception)  # Ctrl-C, seen by polars first
        _stop(output, GRACE_SECONDS if interrupted else None)
        raise failure[0]
    output.close()
    return result[0]


#: The outputs of the writes stopped by an exception.
_STOPPED: list[Output] = []


def _stop(output: Output, grace: float | None) -> None:
    """Shut ``output`` and wait until nothing works for it any more, or ``grace`` seconds."""
    _STOPPED.append(output)
    output.shut()
    deadline = time.monotonic() + (grace if grace is not None else float("inf"))
    while output.running and time.monotonic() < deadline:
        time.sleep(WAKE_SECONDS)


def stopped_writes_running() -> bool:
    """Whether a write stopped by an exception (a signal's) is still at work in a thread,
    though nothing it does reaches its file any more.

    A process should then end at once (``os._exit``) rather than tear its interpreter down:
    Python 3.11 ends a thread that wants the interpreter back during the teardown as C code
    ends it (``pthread_exit``), which polars' Rust frames cannot unwind through, and the
    process aborts (SIGABRT) instead of exiting."""
    return any(output.running for output in _STOPPED)


def sink_batches(
    path: Path, schema: dict[str, pl.DataType], batches: Callable[[], Iterator[pl.DataFrame]]
) -> int:
    """Write every frame of ``batches()`` (each with ``schema``) to ``path``; the rows written.

    ``batches`` is called once, and its frames are made in polars' threads; none is asked
    for once the write was stopped (:func:`write_in_thread`). An exception raised while
    making a batch is raised here as it was, not as a polars error; a failure to write raises
    polars' error (or ``OSError``). Callers that must not leave a half-written file write
    beside their target and rename.

    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "t.parquet"
    >>> sink_batches(p, {"x": pl.Int64()}, lambda: iter([pl.DataFrame({"x": [1, 2]})] * 3))
    6
    >>> pl.read_parquet(p)["x"].to_list()
    [1, 2, 1, 2, 1, 2]
    """
    return write_in_thread(path, lambda output: _sink(output, schema, batches))


def _sink(
    output: Output, schema: dict[str, pl.DataType], batches: Callable[[], Iterator[pl.DataFrame]]
) -> int:
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
            frames = batches()
            while not output.stopped:
                with output.working():
                    frame = next(frames, None)
                if frame is None:
                    return
                rows += frame.height
                yield frame if with_columns is None else frame.select(with_columns)
            raise Stopped("the write was stopped")
        except Exception as exc:
            failure.append(exc)
            raise

    frame = register_io_source(source, schema=schema, validate_schema=True)
    try:
        target = cast("IO[bytes]", output)  # polars asks only write, flush and tell of it
        frame.sink_parquet(target, compression="zstd", statistics=True, maintain_order=True)
    except Exception:
        if failure:
            raise failure[0] from None
        if output.stopped:
            raise Stopped("the write was stopped") from None
        output.raise_error()
        raise
    return rows
