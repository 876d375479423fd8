"""Exit codes and the exceptions that carry diagnostics to the command line."""

from __future__ import annotations

from collections.abc import Sequence
from enum import IntEnum

from contractlang.diagnostics import Diagnostic, Source


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
