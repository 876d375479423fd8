"""`contractlang fmt [--check] FILE…`: lay `.spot` files out canonically (see
:mod:`contractlang.fmt`), keeping their comments and meaning.

- Without ``--check``: rewrites each file that is not in canonical layout (only those) and
  prints ``reformatted FILE`` for each.
- ``--check``: changes nothing; prints ``would reformat FILE`` for each file that is not
  formatted.
- ``-`` reads the text from stdin and writes the formatted text to stdout (with ``--check``,
  writes nothing and only sets the exit code).
- A directory stands for every ``*.spot`` file below it.

Per-file lines go to stdout, diagnostics and the one-line summary to stderr.

Exit codes: 0 everything formatted (or now formatted); 1 with ``--check``, a file is not
formatted; 2 a file does not parse, is not UTF-8 or cannot be read; 3 the formatter refused
because its output would change the file's meaning (``E012``, a bug in contractlang). Every
file is processed before exiting, and the highest code wins.
"""

from __future__ import annotations

import sys
from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from contractlang.cli.common import err, exit_with, guarded, out, print_diagnostics, write_stdout
from contractlang.cli.files import write_file
from contractlang.cli.inputs import STDIN, spot_paths, usage_error
from contractlang.diagnostics import Diagnostic, Source
from contractlang.errors import ExitCode
from contractlang.pipeline.parsing import FormatResult, format_source, read_spot


class FormatStatus(Enum):
    """What formatting one file came to, and the exit code it asks for (with ``--check`` and
    without): the highest over all files wins."""

    FORMATTED = (ExitCode.OK, ExitCode.OK)  # already in canonical layout
    CHANGED = (ExitCode.NOT_MET, ExitCode.OK)  # not formatted: reported, or rewritten
    BAD = (ExitCode.BAD_INPUT, ExitCode.BAD_INPUT)  # unreadable, not UTF-8, does not parse
    REFUSED = (ExitCode.INTERNAL, ExitCode.INTERNAL)  # E012: a bug in the formatter

    def exit_code(self, *, check: bool) -> ExitCode:
        return self.value[0] if check else self.value[1]


def register(app: typer.Typer) -> None:
    app.command("fmt")(fmt_command)


@guarded(fmt_param=None)
def fmt_command(
    files: Annotated[
        list[str],
        typer.Argument(
            help="The `.spot` files (or directories of them) to format; `-` for stdin.",
            show_default=False,
            metavar="FILE...",
        ),
    ],
    check: Annotated[
        bool,
        typer.Option("--check", help="Change nothing; exit 1 if a file is not formatted."),
    ] = False,
) -> None:
    """Format `.spot` files in the canonical layout, keeping comments and meaning.

    Exit codes: 0 every file formatted (or now rewritten), 1 with --check a file is not
    formatted, 2 a file cannot be read or does not parse, 3 the formatter refused (a bug;
    3 internal error too), 130 interrupted.
    """
    if STDIN in files and len(files) > 1:
        raise usage_error("`-` (standard input) cannot be combined with other files")
    outcomes = [_format_one(path, check=check) for path in spot_paths(files)]
    changed = outcomes.count(FormatStatus.CHANGED)
    unchanged = outcomes.count(FormatStatus.FORMATTED)
    err.print(
        _summary(changed, unchanged, len(outcomes) - changed - unchanged, check=check),
        markup=False,
    )
    worst = max((o.exit_code(check=check) for o in outcomes), default=ExitCode.OK)
    if worst is not ExitCode.OK:
        exit_with(worst)


def _format_one(path: str, *, check: bool) -> FormatStatus:
    """Format one file (rewrite it, or with ``check`` only report it)."""
    name = "<stdin>" if path == STDIN else path
    data = read_spot(name, sys.stdin.buffer) if path == STDIN else read_spot(path)
    if isinstance(data, Diagnostic):
        print_diagnostics([data], {})
        return FormatStatus.BAD
    result = format_source(data, name)
    if result.text is None:
        text = data.decode("utf-8", errors="replace")
        print_diagnostics(result.diagnostics, {name: Source(name, text)})
        return _failure(result)
    if path == STDIN:
        if not check:
            write_stdout(result.text)
        elif result.changed:
            out.print(f"would reformat {name}", markup=False)
        return FormatStatus.CHANGED if result.changed else FormatStatus.FORMATTED
    if not result.changed:
        return FormatStatus.FORMATTED
    if check:
        out.print(f"would reformat {name}", markup=False)
    else:
        _write(Path(path), result.text)
        out.print(f"reformatted {name}", markup=False)
    return FormatStatus.CHANGED


def _failure(result: FormatResult) -> FormatStatus:
    return (
        FormatStatus.REFUSED
        if any(d.code == "E012" for d in result.diagnostics)
        else FormatStatus.BAD
    )


def _write(path: Path, text: str) -> None:
    """Replace the file's text: atomically, through a symlink to its target, keeping its mode,
    refusing a read-only file (:func:`contractlang.cli.files.write_file`)."""
    write_file(path, lambda target: target.write_text(text, encoding="utf-8", newline="\n"))


def _summary(changed: int, unchanged: int, failed: int, *, check: bool) -> str:
    """``2 files reformatted, 3 files left unchanged`` (or ``would be reformatted``)."""
    parts = []
    if changed:
        verb = "would be reformatted" if check else "reformatted"
        parts.append(f"{_plural(changed, 'file')} {verb}")
    if unchanged:
        parts.append(f"{_plural(unchanged, 'file')} already formatted")
    if failed:
        parts.append(f"{_plural(failed, 'file')} could not be formatted")
    return ", ".join(parts) if parts else "no files to format"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"
