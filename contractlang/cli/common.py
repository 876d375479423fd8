"""What every command shares: consoles, output formats, and the guard that turns errors into
documented exit codes (never a traceback)."""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable, Sequence
from enum import StrEnum
from typing import NoReturn, ParamSpec, TypeVar

import typer
from rich.console import Console

from contractlang.diagnostics import Diagnostic, Source, render_all, to_json_text
from contractlang.errors import ContractlangError, ExitCode, InternalError

P = ParamSpec("P")
R = TypeVar("R")

#: Results go to stdout; diagnostics, progress and notes to stderr.
out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)


class OutputFormat(StrEnum):
    text = "text"
    json = "json"


def print_diagnostics(
    diags: Sequence[Diagnostic], sources: dict[str, Source], fmt: OutputFormat = OutputFormat.text
) -> None:
    """Diagnostics in the chosen format: text to stderr, JSON to stdout."""
    if fmt is OutputFormat.json:
        sys.stdout.write(to_json_text(diags) + "\n")
    elif diags:
        err.print(render_all(diags, sources), markup=False)


def exit_with(code: ExitCode) -> NoReturn:
    raise typer.Exit(int(code))


def guarded(fmt_param: str | None = "fmt") -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Decorate a command: bad input exits 2 with its diagnostics, a bug exits 3 with a short
    message (set ``CONTRACTLANG_DEBUG=1`` for the traceback)."""

    def deco(fn: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(fn)
        def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
            fmt = kwargs.get(fmt_param, OutputFormat.text) if fmt_param else OutputFormat.text
            try:
                return fn(*args, **kwargs)
            except (typer.Exit, typer.Abort, KeyboardInterrupt):
                raise
            except ContractlangError as exc:
                print_diagnostics(exc.diagnostics, exc.sources, OutputFormat(str(fmt)))
                exit_with(ExitCode.BAD_INPUT)
            except (InternalError, Exception) as exc:  # the last line of defence
                if os.environ.get("CONTRACTLANG_DEBUG"):
                    raise
                err.print(
                    f"internal error: {type(exc).__name__}: {exc}\n"
                    "this is a bug in contractlang; rerun with CONTRACTLANG_DEBUG=1 for details",
                    markup=False,
                )
                exit_with(ExitCode.INTERNAL)

        return wrapper

    return deco
