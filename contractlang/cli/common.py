"""What every command shares: consoles, output formats, standard output that fails cleanly, and
the guard that turns errors into documented exit codes (never a traceback).

Standard output is written through :data:`out` or :func:`write_stdout`, standard error through
:data:`err`: both write text as rich's console prints it, and make that console only when it
is needed (:class:`Output`). A write that
fails — a full disk, a closed descriptor — is ``E501`` naming ``standard output``, exit 2; a
pipe closed by its reader (``contractlang … | head``) ends the command quietly, exit 0.

The entry point (:func:`contractlang.cli.app.main`) wraps ``sys.stdout`` and ``sys.stderr``
(:func:`tag_streams`) so that a failed write says which stream failed (:class:`StreamFailed`)
wherever it happens — in a command, or in typer writing its help or a usage error before any
command runs (:func:`stream_failed`). Standard error that cannot be written (a full disk,
``2>/dev/full``) is exit 2: its ``E501`` is attempted, though it can seldom be read.
SIGTERM and SIGHUP stop a command the way Ctrl-C does (:func:`stop_on_signals`): files being
written are cleaned up, exit 130 — at once (``os._exit``) when a streamed polars write the
signal stopped is still at work in its thread (:func:`_exit_at_once_if_still_writing`).
"""

from __future__ import annotations

import errno
import functools
import io
import os
import signal
import sys
from collections.abc import Callable, Sequence
from enum import StrEnum
from typing import TYPE_CHECKING, NoReturn, ParamSpec, TextIO, TypeVar, cast

import typer

from contractlang.diagnostics import Diagnostic, Source, render_all, to_json_text
from contractlang.errors import (
    STDERR,
    STDOUT,
    ContractlangError,
    ExitCode,
    InternalError,
    cannot_write,
    os_reason,
)

if TYPE_CHECKING:
    from rich.console import Console
    from rich.status import Status

P = ParamSpec("P")
R = TypeVar("R")

#: The exit code of a command stopped by Ctrl-C, SIGTERM or SIGHUP (128 + SIGINT, as shells
#: report an interrupted command; typer exits so on ``KeyboardInterrupt``).
INTERRUPTED = 130


class PipeClosed(Exception):
    """The reader of standard output went away (EPIPE): stop quietly."""


class StreamFailed(Exception):
    """A write to ``sys.stdout`` or ``sys.stderr`` failed: which stream, and the
    ``OSError``. No ``OSError`` itself, so typer's own handler (EPIPE: exit 1) lets it by."""

    def __init__(self, stream: str, exc: OSError) -> None:
        super().__init__(f"cannot write {stream}: {exc}")
        self.stream = stream
        self.error = exc


class _Tagged:
    """A standard stream whose failed writes raise :class:`StreamFailed` naming it; all else
    is the stream's own."""

    def __init__(self, stream: TextIO, name: str) -> None:
        self._stream = stream
        self._name = name

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except OSError as exc:
            raise StreamFailed(self._name, exc) from None

    def flush(self) -> None:
        try:
            self._stream.flush()
        except OSError as exc:
            raise StreamFailed(self._name, exc) from None

    def __getattr__(self, name: str) -> object:
        return getattr(self._stream, name)


def tag_streams() -> None:
    """Wrap ``sys.stdout`` and ``sys.stderr`` (see the module's docstring); once."""
    for attr, name in (("stdout", STDOUT), ("stderr", STDERR)):
        stream = getattr(sys, attr)
        if stream is not None and not isinstance(stream, _Tagged):
            setattr(sys, attr, _Tagged(stream, name))


def stream_failed(exc: StreamFailed) -> int:
    """The exit code of a command whose standard output or error could not be written, after
    saying so where it can: a closed pipe on standard output 0 (quietly), else 2 with
    ``E501`` attempted on standard error. The failed stream is pointed at /dev/null, so the
    interpreter's last flush does not fail again."""
    if exc.stream == STDOUT and exc.error.errno == errno.EPIPE:
        _silence(sys.stdout)
        return int(ExitCode.OK)
    if exc.stream == STDOUT:
        _silence(sys.stdout)
    try:
        print_diagnostics(cannot_write(exc.stream, os_reason(exc.error)).diagnostics, {})
    except StreamFailed:
        _silence(sys.stderr)  # the message stays in its buffer
    return int(ExitCode.BAD_INPUT)


class Interrupted(KeyboardInterrupt):
    """The command was sent SIGTERM or SIGHUP: handled as Ctrl-C is."""


def stop_on_signals() -> None:
    """SIGTERM and SIGHUP raise :class:`Interrupted` (as Ctrl-C raises ``KeyboardInterrupt``),
    so a file being written is removed on the way out (:func:`contractlang.cli.files.write_file`)
    and the command exits 130. A signal ignored when the command started stays ignored
    (``nohup``)."""

    def stop(signum: int, _frame: object) -> None:
        raise Interrupted(signal.Signals(signum).name)

    for s in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(s) is not signal.SIG_IGN:
            signal.signal(s, stop)


class _StandardOutput(io.TextIOBase):
    """``sys.stdout`` as it is at each write, with its failures in our words."""

    def write(self, text: str) -> int:
        return self._do(lambda s: s.write(text))

    def flush(self) -> None:
        self._do(lambda s: s.flush())

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return bool(sys.stdout is not None and sys.stdout.isatty())

    def fileno(self) -> int:
        if sys.stdout is None:
            raise OSError(errno.EBADF, "standard output is closed")
        return sys.stdout.fileno()

    @staticmethod
    def _do(action: Callable[[TextIO], int | None]) -> int:
        stream = sys.stdout
        if stream is None:
            raise cannot_write(STDOUT, "it is closed")
        try:
            return action(stream) or 0
        except BrokenPipeError:
            raise PipeClosed from None
        except StreamFailed as failed:  # sys.stdout tagged by the entry point
            if failed.error.errno == errno.EPIPE:
                raise PipeClosed from None
            raise cannot_write(STDOUT, os_reason(failed.error)) from None
        except OSError as exc:
            if exc.errno == errno.EPIPE:
                raise PipeClosed from None
            raise cannot_write(STDOUT, os_reason(exc)) from None
        except ValueError:  # "I/O operation on closed file"
            raise cannot_write(STDOUT, "it is closed") from None


_stdout = _StandardOutput()

#: The characters rich's text drops (``rich.control.STRIP_CONTROL_CODES``): bell, backspace,
#: vertical tab, form feed, carriage return.
_RICH_DROPS = dict.fromkeys((7, 8, 11, 12, 13))


class Output:
    """Standard output or standard error, written as rich's console prints text; the console
    itself (its width, whether it is a terminal, a status spinner) is made when first asked
    for: importing rich is a cost ``check`` and ``fmt``, which print only text, need not pay."""

    def __init__(self, *, stderr: bool) -> None:
        self._stderr = stderr

    def print(self, text: str = "", *, markup: bool = False, end: str = "\n") -> None:
        """What ``Console.print(text, markup=markup, end=end)`` writes with no emoji codes,
        highlighting nor wrapping: the text without the control characters rich drops. A text
        with a tab (rich lays tabs out by cells) or with markup goes to rich itself."""
        if "\t" in text or (markup and "[" in text):
            self.console.print(text, markup=markup, end=end)
            return
        stream = sys.stderr if self._stderr else _stdout
        stream.write(text.translate(_RICH_DROPS) + end)
        stream.flush()

    @functools.cached_property
    def console(self) -> Console:
        """The rich console (no emoji codes: rich would show ``:smile:`` in a file name, a
        source line or a message as an emoji)."""
        # imported here, when first needed: start-up time (`check` and `fmt` never need it)
        from rich.console import Console  # noqa: PLC0415

        if self._stderr:
            return Console(stderr=True, highlight=False, soft_wrap=True, emoji=False)
        return Console(file=cast(TextIO, _stdout), highlight=False, soft_wrap=True, emoji=False)

    @property
    def is_terminal(self) -> bool:
        return self.console.is_terminal

    @property
    def width(self) -> int:
        return self.console.width

    def status(self, message: str) -> Status:
        return self.console.status(message)


#: Results go to stdout; diagnostics, progress and notes to stderr.
out = Output(stderr=False)
err = Output(stderr=True)


def write_stdout(text: str) -> None:
    """Write ``text`` to standard output (see the module's docstring)."""
    _stdout.write(text)


class OutputFormat(StrEnum):
    text = "text"
    json = "json"


def print_diagnostics(
    diags: Sequence[Diagnostic], sources: dict[str, Source], fmt: OutputFormat = OutputFormat.text
) -> None:
    """Diagnostics in the chosen format: text to stderr, JSON to stdout."""
    if fmt is OutputFormat.json:
        write_stdout(to_json_text(diags) + "\n")
    elif diags:
        err.print(render_all(diags, sources), markup=False)


def exit_with(code: ExitCode) -> NoReturn:
    raise typer.Exit(int(code))


def debugging() -> bool:
    """``CONTRACTLANG_DEBUG`` set to anything but empty, ``0``, ``false`` or ``no``."""
    return os.environ.get("CONTRACTLANG_DEBUG", "").strip().lower() not in ("", "0", "false", "no")


def guarded(fmt_param: str | None = "fmt") -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Decorate a command: bad input exits 2 with its diagnostics, a bug exits 3 with a short
    message (set ``CONTRACTLANG_DEBUG=1`` for the traceback); standard output is flushed
    before the command ends, so a failure to write it is reported too."""

    def deco(fn: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(fn)
        def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
            fmt = kwargs.get(fmt_param, OutputFormat.text) if fmt_param else OutputFormat.text
            try:
                try:
                    return fn(*args, **kwargs)
                finally:
                    _stdout.flush()
            except PipeClosed:
                _silence_stdout()
                exit_with(ExitCode.OK)
            except KeyboardInterrupt:
                _exit_at_once_if_still_writing(INTERRUPTED)
                raise
            except (typer.Exit, typer.Abort, StreamFailed):
                raise  # StreamFailed: standard error failed, handled by the entry point
            except ContractlangError as exc:
                to_stdout = str(fmt) == OutputFormat.json.value and not _about_stdout(exc)
                try:
                    print_diagnostics(
                        exc.diagnostics,
                        exc.sources,
                        OutputFormat.json if to_stdout else OutputFormat.text,
                    )
                    if to_stdout:
                        _stdout.flush()
                except PipeClosed:
                    _silence_stdout()
                except ContractlangError as again:  # stdout failed while reporting
                    print_diagnostics(again.diagnostics, {}, OutputFormat.text)
                exit_with(ExitCode.BAD_INPUT)
            except (InternalError, Exception) as exc:  # the last line of defence
                _internal(exc)
            except BaseException as exc:  # a panic in polars' Rust code is no Exception
                if not _is_panic(exc):
                    raise
                _internal(exc)

        return wrapper

    return deco


def _exit_at_once_if_still_writing(code: int) -> None:
    """Exit with ``code`` at once, standard streams flushed, when a streamed polars write a
    signal stopped is still at work in another thread
    (:func:`contractlang.trace.sink.stopped_writes_running`): its file is shut and removed,
    but tearing the interpreter down under that thread would abort the process. The module
    is looked up, not imported: a command that never streamed a write has not loaded it (nor
    polars)."""
    sink = sys.modules.get("contractlang.trace.sink")
    if sink is None or not sink.stopped_writes_running():
        return
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError, StreamFailed):
            pass
    os._exit(int(code))


def _internal(exc: BaseException) -> NoReturn:
    """An internal error: a line saying so, exit 3 (the exception itself when debugging)."""
    if debugging():
        raise exc
    err.print(
        f"internal error: {type(exc).__name__}: {exc}\n"
        "this is a bug in contractlang; rerun with CONTRACTLANG_DEBUG=1 for details",
        markup=False,
    )
    exit_with(ExitCode.INTERNAL)


def _is_panic(exc: BaseException) -> bool:
    """Whether ``exc`` is a panic of Rust code (``pyo3_runtime.PanicException``, which derives
    from ``BaseException``: it escaped the guard, and the process exited 1, "not met")."""
    kind = type(exc)
    return kind.__name__ == "PanicException" and kind.__module__ == "pyo3_runtime"


def _about_stdout(exc: ContractlangError) -> bool:
    return any(d.code == "E501" and STDOUT in d.message for d in exc.diagnostics)


def _silence_stdout() -> None:
    """After EPIPE: point standard output at /dev/null, so the interpreter's last flush does
    not fail again (the way Python's documentation advises)."""
    _silence(sys.stdout)


def _silence(stream: TextIO | None) -> None:
    """Point ``stream``'s descriptor at /dev/null (see :func:`_silence_stdout`)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())  # type: ignore[union-attr]
    except (OSError, ValueError, AttributeError):
        pass
