"""`contractlang check FILE…`: parse and check `.spot` files, report every problem.

Exit 0 when there is no error (warnings are printed), 2 on any error or unreadable file.
A directory stands for every ``*.spot`` file below it; ``-`` reads standard input.
Diagnostics go to stderr as text, or to stdout as JSON with ``--format json``; a one-line
summary always goes to stderr.
"""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from contractlang.cli.common import OutputFormat, err, exit_with, guarded, print_diagnostics
from contractlang.cli.inputs import STDIN, spot_paths, usage_error
from contractlang.errors import ExitCode
from contractlang.pipeline.language import CheckedFiles, check_paths


def register(app: typer.Typer) -> None:
    app.command("check")(check_command)


@guarded()
def check_command(
    files: Annotated[
        list[str],
        typer.Argument(
            help="The `.spot` files (or directories of them) to check, together; `-` for stdin.",
            show_default=False,
            metavar="FILE...",
        ),
    ],
    fmt: Annotated[
        OutputFormat,
        typer.Option("--format", metavar="text|json", help="How to print diagnostics."),
    ] = OutputFormat.text,
) -> None:
    """Check `.spot` files: syntax, names, units, types, stages and lints.

    Exit codes: 0 no errors (warnings are printed), 2 an error or a file that cannot be read,
    3 internal error, 130 interrupted.
    """
    if STDIN in files and len(files) > 1:
        raise usage_error("`-` (standard input) cannot be combined with other files")
    checked = check_paths(spot_paths(files), stdin=sys.stdin.buffer)
    print_diagnostics(checked.diagnostics, checked.sources, fmt)
    if checked.diagnostics and fmt is OutputFormat.text:
        err.print("")
    err.print(summary(checked), markup=False)
    if not checked.ok:
        exit_with(ExitCode.BAD_INPUT)


def summary(checked: CheckedFiles) -> str:
    """One line: ``checked 6 files: no problems`` or ``2 errors, 1 warning in 1 file``."""
    diags = checked.diagnostics
    if not diags:
        return f"checked {_plural(checked.count, 'file')}: no problems"
    errors = sum(1 for d in diags if d.is_error)
    warnings = len(diags) - errors
    parts = []
    if errors:
        parts.append(_plural(errors, "error"))
    if warnings:
        parts.append(_plural(warnings, "warning"))
    files = len({d.file for d in diags})
    return f"{', '.join(parts)} in {_plural(files, 'file')}"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"
