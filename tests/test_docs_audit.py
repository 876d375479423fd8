"""The worked audit of docs/reconcile.md and the examples of docs/import.md are the real
output of the commands they show: each `$ contractlang …` command in them is run here, in a
folder holding `examples/audit/` (or, for the real data, `../shared/realdata`), and its output
compared with the page, line for line (a line of `…` alone stands for the lines it abridges)."""

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
    # the import of the bundled sample, then the bill of a shipped ruleset over it
    shutil.copytree(ROOT / "rulesets", folder / "rulesets")
    steps = sessions((ROOT / "docs" / "import.md").read_text(encoding="utf-8"))
    sacct = [
        (args, shown)
        for args, shown in steps
        if args[:2] == ["import", "sacct"] or args[0] == "evaluate"
    ]
    assert [args[0] for args, _ in sacct] == ["import", "evaluate"]
    for args, shown in sacct:
        result = run(*args)
        assert result.exit_code == 0, result.output
        assert result.stdout == shown, args


REALDATA = ROOT.parent / "shared" / "realdata"


def abridged_match(shown: str, printed: str) -> bool:
    """Whether ``printed`` is ``shown`` where a line of ``…`` alone (indented) stands for one
    or more lines indented at least as deep."""
    want, got = shown.splitlines(), printed.splitlines()
    i = 0
    for k, line in enumerate(want):
        if line.strip() == "…":
            depth = len(line) - len(line.lstrip())
            after = want[k + 1] if k + 1 < len(want) else None
            start = i
            while i < len(got) and got[i].startswith(" " * depth) and got[i] != after:
                i += 1
            if i == start:
                return False
            continue
        if i >= len(got) or got[i] != line:
            return False
        i += 1
    return i == len(got)


def test_an_abridged_listing_matches_only_what_it_abridges() -> None:
    shown = "a\n  b\n    …\n  c\n"
    assert abridged_match(shown, "a\n  b\n    x\n    y\n  c\n")
    assert not abridged_match(shown, "a\n  b\n  c\n")  # … stands for at least one line
    assert not abridged_match(shown, "a\n  b\nz\n  c\n")  # and only for deeper ones
    assert not abridged_match(shown, "a\n  b\n    x\n  d\n")


@pytest.mark.skipif(not REALDATA.is_dir(), reason="../shared/realdata is not here")
@pytest.mark.parametrize("kind", ["focus", "attempts", "availability"])
def test_the_real_data_examples_of_the_import_page(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    # the page's commands read ../shared/realdata from the project's root: run them from a
    # folder whose ../shared is the real one, so they print the same paths
    (tmp_path / "shared").symlink_to(REALDATA.parent)
    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path / "work")
    steps = sessions((ROOT / "docs" / "import.md").read_text(encoding="utf-8"))
    found = [(args, shown) for args, shown in steps if args[:2] == ["import", kind]]
    assert len(found) == 1
    args, shown = found[0]
    result = run(*args)
    assert result.exit_code == 0, result.output
    assert abridged_match(shown, result.stdout), result.stdout
