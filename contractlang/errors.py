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


class InternalError(Exception):
    """A bug in contractlang (exit code 3), never a user's mistake."""
