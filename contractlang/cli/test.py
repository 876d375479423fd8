"""`contractlang test [PATH…]`: run the regression fixtures under each path (default
``fixtures/``) and say, for each, whether its terms still give the bill it expects — and if
not, which figures moved and by how much. ``--update`` accepts a deliberate change.

The module is ``test.py``, which pytest's default patterns (``test_*.py``, ``*_test.py``) do
not collect as a test module.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated

import typer

from contractlang.cli.common import (
    OutputFormat,
    exit_with,
    guarded,
    out,
    print_diagnostics,
    write_stdout,
)
from contractlang.cli.files import write_together
from contractlang.cli.inputs import progress_status
from contractlang.errors import ExitCode
from contractlang.fixtures import FixtureResult, find_fixtures, run_fixture, select, update_fixture
from contractlang.fixtures.report import outcome_lines, render_json, summary_line


def write_expectations(files: Sequence[tuple[Path, str]]) -> None:
    """Write a fixture's expectations, as UTF-8 bytes, together or not at all
    (``cli.files.write_together``); E501 when one cannot be written."""
    write_together([(path, _writer(text)) for path, text in files])


def _writer(text: str) -> Callable[[Path], object]:
    return lambda target: target.write_bytes(text.encode("utf-8"))


def run_all(paths: list[Path], pattern: str | None, update: bool) -> list[FixtureResult]:
    """Run (and with ``update``, update) every fixture found and selected."""
    folders = select(find_fixtures(paths), pattern)
    outcomes = []
    with progress_status() as step:
        for n, folder in enumerate(folders, 1):
            step(f"fixture {n} of {len(folders)}: {folder.as_posix()}")
            outcome = run_fixture(folder)
            outcomes.append(update_fixture(outcome, write_expectations) if update else outcome)
    return outcomes


def register(app: typer.Typer) -> None:
    @app.command("test")
    @guarded()
    def test_cmd(
        paths: Annotated[
            list[Path] | None,
            typer.Argument(
                metavar="FOLDER...",
                help="Fixture folders, or folders holding them (default: fixtures).",
                show_default=False,
            ),
        ] = None,
        update: Annotated[
            bool,
            typer.Option(
                "--update",
                help="Rewrite the expectations of the selected fixtures from what their "
                "inputs give now (after a deliberate change); says which files changed.",
            ),
        ] = False,
        pattern: Annotated[
            str | None,
            typer.Option(
                "--filter",
                metavar="PATTERN",
                help="Only the fixtures whose path holds PATTERN (or matches it, with * ? [ ]).",
            ),
        ] = None,
        fmt: Annotated[
            OutputFormat,
            typer.Option("--format", metavar="text|json", help="text for people, json for CI"),
        ] = OutputFormat.text,
    ) -> None:
        """Run regression fixtures: does each contract still give the bill it expects?

        Exit codes: 0 every fixture passed (or was updated), 1 a fixture failed or has no
        expected output yet, 2 a broken fixture (bad manifest, terms or trace) or bad input,
        3 internal error, 130 interrupted.
        """
        outcomes = run_all(list(paths or []), pattern, update)
        if fmt is OutputFormat.json:
            write_stdout(render_json(outcomes))
        else:
            for outcome in outcomes:
                out.print("\n".join(outcome_lines(outcome, out.width)), markup=False)
                print_diagnostics(outcome.diagnostics, dict(outcome.sources))
            out.print(summary_line(outcomes), markup=False)
        exit_with(max((o.exit_code for o in outcomes), default=ExitCode.OK))
