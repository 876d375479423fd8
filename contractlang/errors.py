"""Exit codes and the exceptions that carry diagnostics to the command line; ``E501``, a file
that cannot be written, which every layer that writes one raises in the same words."""

from __future__ import annotations

import re
from collections.abc import Sequence
from enum import IntEnum

from contractlang.diagnostics import NO_SPAN, Diagnostic, Source, error

#: The standard streams, as a message names them (a file is named by its path, in backticks).
STDOUT = "standard output"
STDERR = "standard error"


class ExitCode(IntEnum):
    """The exit codes of every command, documented in the README and ``docs/cli.md``."""

    OK = 0  # success; all budgets met (or none given); files formatted
    NOT_MET = 1  # a budget not met; `fmt --check`: a file not formatted
    BAD_INPUT = 2  # bad input: language, trace, flags
    INTERNAL = 3  # an internal error (a bug): please report it


class ContractlangError(Exception):
    """Bad input, with the diagnostics that explain it (exit code 2)."""

    def __init__(
        self,
        diagnostics: Sequence[Diagnostic],
        sources: dict[str, Source] | None = None,
    ) -> None:
        self.diagnostics = list(diagnostics)
        self.sources = dict(sources or {})
        super().__init__("\n".join(d.headline() for d in self.diagnostics))

    def __reduce__(self) -> tuple[object, ...]:
        """Pickled with its attributes, not its message: a shard's error comes back from a
        Ray task whole (unpickled from ``args`` alone, it was rebuilt from the message text,
        and failed). Subclasses' own attributes come along."""
        return (_rebuilt, (type(self), self.args, self.__dict__))


def _rebuilt(
    kind: type[ContractlangError], args: tuple[object, ...], state: dict[str, object]
) -> ContractlangError:
    """A :class:`ContractlangError` (or subclass) unpickled: made without ``__init__``."""
    exc = kind.__new__(kind)
    exc.args = args
    exc.__dict__.update(state)
    return exc


class InternalError(Exception):
    """A bug in contractlang (exit code 3), never a user's mistake."""


def cannot_write(path: object, reason: str, help: str | None = None) -> ContractlangError:
    """E501: ``path`` (a file or folder, or :data:`STDOUT` or :data:`STDERR`) could not be
    written, and why (:func:`os_reason` of the exception, or words of the caller's own).

    >>> cannot_write("out.csv", "permission denied").diagnostics[0].message
    'cannot write `out.csv`: permission denied'
    >>> cannot_write(STDOUT, "no space left on device").diagnostics[0].message
    'cannot write standard output: no space left on device'
    """
    where = path if path in (STDOUT, STDERR) else f"`{path}`"
    message = f"cannot write {where}: {reason}"
    return ContractlangError([error("E501", message, NO_SPAN, file="contractlang", help=help)])


def os_reason(exc: BaseException) -> str:
    """Why a read or write failed, in lowercase words: ``exc.strerror``, or for the errors
    polars raises (``No space left on device (os error 28): /path``) their text without the
    code and path.

    >>> os_reason(OSError("Not a directory (os error 20): /tmp/a/b.parquet"))
    'not a directory'
    >>> os_reason(OSError(28, "No space left on device"))
    'no space left on device'
    """
    strerror = getattr(exc, "strerror", None)
    text = strerror or re.sub(r"\s*\(os error \d+\).*$", "", str(exc), flags=re.DOTALL)
    text = text.strip().splitlines()[0] if text.strip() else "write error"
    return text[0].lower() + text[1:]
