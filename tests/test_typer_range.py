"""The command line is used with the typer versions it was written for.

typer is at 0.x and breaks things in minor releases (0.26 vendored click, 0.27 changed how
help prints a metavar), and ``contractlang/cli`` leans on two things typer does not promise:
the name it calls to build a parameter's conversion (``cli/values.py``: ``check`` and ``fmt``
start without pydantic) and the help and usage a command writes (``cli/app.py``: arguments by
their metavar alone). So ``pyproject.toml`` pins typer below the next minor release, and this
test fails when the installed typer is outside that range.

Before widening the range, with the new typer installed:

- ``tests/test_cli_values.py``: the plain conversion still gives typer's values and errors;
- ``tests/test_startup.py``: ``check`` and ``fmt`` still import neither pydantic nor rich;
- ``scripts/snapshot_outputs.py`` and every help text and usage error (``--help`` of each
  command, a missing argument, an unknown option, a bad choice) byte for byte against the old
  typer, and ``tests/test_cli*.py``, ``tests/test_hardening_terminal.py``;
- ``bench/bench_startup.py``: the start-up figures of ``bench/README.md`` still hold.

Then change :data:`WRITTEN_FOR` and the pin in ``pyproject.toml`` together.
"""

from __future__ import annotations

import tomllib
from importlib.metadata import version
from pathlib import Path

from packaging.requirements import Requirement  # pytest's own dependency
from packaging.specifiers import SpecifierSet

ROOT = Path(__file__).resolve().parents[1]

#: The typer versions ``contractlang/cli`` was written for.
WRITTEN_FOR = SpecifierSet(">=0.29,<0.30")


def test_pyproject_pins_typer_to_the_versions_the_command_line_was_written_for() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    (typer,) = [r for r in map(Requirement, project["dependencies"]) if r.name == "typer"]
    assert typer.specifier == WRITTEN_FOR


def test_the_installed_typer_is_one_the_command_line_was_written_for() -> None:
    installed = version("typer")
    assert WRITTEN_FOR.contains(installed), (
        f"typer {installed} is outside {WRITTEN_FOR}, the versions contractlang's command line "
        "was written for: see this module's docstring for what to check before widening it"
    )
