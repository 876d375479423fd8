"""The worked audit of docs/reconcile.md and the sacct example of docs/import.md are the real
output of the commands they show: each `$ contractlang …` command in them is run here, in a
folder holding `examples/audit/`, and its output compared with the page, line for line."""

from __future__ import annotations

import shlex
import shutil
from pathlib import Path

import pytest
from support.cli import run

ROOT = Path(__file__).resolve().parents[1]


def sessions(page: str) -> list[tuple[list[str], str]]:
    """Each `$ contractlang …` command of the page's code blocks (continued by a trailing
    backslash) with the output shown under it (up to the next command or the block's end)."""
    found: list[tuple[list[str], str]] = []
    lines = page.splitlines()
    k = 0
    while k < len(lines):
        if not lines[k].startswith("$ contractlang "):
            k += 1
            continue
        command = lines[k][2:]
        while command.endswith("\\"):
            k += 1
            command = command[:-1] + lines[k].strip()
        k += 1
        shown = []
        while k < len(lines) and not lines[k].startswith(("$ ", "```")):
            shown.append(lines[k])
            k += 1
        found.append((shlex.split(command)[1:], "\n".join(shown) + "\n"))
    return found


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    shutil.copytree(ROOT / "examples" / "audit", tmp_path / "examples" / "audit")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_the_worked_audit_is_what_the_commands_print(folder: Path) -> None:
    steps = sessions((ROOT / "docs" / "reconcile.md").read_text(encoding="utf-8"))
    assert [args[0] for args, _ in steps] == ["import", "import", "reconcile"]
    for args, shown in steps:
        result = run(*args)
        assert result.exit_code == (1 if args[0] == "reconcile" else 0), result.output
        assert result.stdout == shown, args


def test_the_sacct_example_of_the_import_page(folder: Path) -> None:
    steps = sessions((ROOT / "docs" / "import.md").read_text(encoding="utf-8"))
    sacct = [(args, shown) for args, shown in steps if args[:2] == ["import", "sacct"]]
    assert len(sacct) == 1
    args, shown = sacct[0]
    result = run(*args)
    assert result.exit_code == 0
    assert result.stdout == shown
