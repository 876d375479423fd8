"""The broken-file corpus: each `tests/broken/NAME.spot` gives exactly the text in
`NAME.expected` when checked (what `contractlang check NAME.spot` prints on stderr, run from
`tests/broken/`).

Regenerate with ``UPDATE_GOLDEN=1 pytest tests/test_broken.py`` after a deliberate change, then
read every changed expected file before accepting it.

Also here: the JSON format and the exit codes of `contractlang check`.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from support.cli import run
from typer.testing import Result

BROKEN = Path(__file__).resolve().parent / "broken"
CORPUS = sorted(BROKEN.glob("*.spot"))
UPDATE = os.environ.get("UPDATE_GOLDEN") == "1"


@pytest.fixture
def in_broken(monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(BROKEN)
    return BROKEN


def run_check(*args: str) -> Result:
    return run("check", *args)


def test_corpus_is_large_enough() -> None:
    assert len(CORPUS) >= 30


@pytest.mark.parametrize("path", CORPUS, ids=[p.stem for p in CORPUS])
def test_broken_file(path: Path, in_broken: Path) -> None:
    result = run_check(path.name)
    expected_path = path.with_suffix(".expected")
    if UPDATE:
        expected_path.write_text(result.stderr)
    expected = expected_path.read_text()
    assert result.stderr == expected
    assert result.stdout == ""
    # every file in the corpus is broken: it has at least one diagnostic, and the exit code
    # says whether any is an error
    assert f"{path.name}:" in expected
    has_error = "error[" in expected
    assert result.exit_code == (2 if has_error else 0)


def test_every_expected_file_has_its_spot_file() -> None:
    stems = {p.stem for p in CORPUS}
    orphans = [p.name for p in BROKEN.glob("*.expected") if p.stem not in stems]
    assert orphans == []


def test_json_format(in_broken: Path) -> None:
    result = run_check("--format", "json", "enum_mismatch.spot", "lint_unreachable_rate.spot")
    assert result.exit_code == 2
    doc = json.loads(result.stdout)
    rows = [
        (d["file"], d["code"], d["severity"], d["line"], d["column"]) for d in doc["diagnostics"]
    ]
    # enum_mismatch.spot line 4 is `  rate 2.10 USD per gpu_hour when capacity == "spot"`:
    # `capacity` follows `  rate 2.10 USD per gpu_hour when ` (2 + 5 + 5 + 4 + 4 + 9 + 5 = 34
    # characters), so it starts at column 35; line 5 likewise
    assert rows == [
        ("enum_mismatch.spot", "E203", "error", 4, 35),
        ("enum_mismatch.spot", "E203", "error", 5, 35),
        # both files name their contract "draft", and files are checked together; the name
        # `"draft"` follows `contract ` (9 characters) on line 2
        ("lint_unreachable_rate.spot", "E103", "error", 2, 10),
        ("lint_unreachable_rate.spot", "W001", "warning", 5, 3),
    ]
    first = doc["diagnostics"][0]
    assert first["message"] == "cannot compare a `capacity` with a string"
    assert first["help"] == "write `spot` without quotes"
    # the related notes point at each operand: `capacity` at 35, `"spot"` after `capacity == `
    # (12 characters) at 47
    assert [(r["line"], r["column"]) for r in first["related"]] == [(4, 35), (4, 47)]
    # the summary still goes to stderr
    assert result.stderr == "3 errors, 1 warning in 2 files\n"


def test_json_format_clean(in_broken: Path, tmp_path: Path) -> None:
    good = tmp_path / "good.spot"
    good.write_text('contract "c" { currency USD rate 2 USD per gpu_hour }\n')
    result = run_check("--format", "json", str(good))
    assert result.exit_code == 0
    assert json.loads(result.stdout) == {"diagnostics": []}
    assert result.stderr == "checked 1 file: no problems\n"


def test_exit_0_when_clean(tmp_path: Path) -> None:
    for name in ("a.spot", "b.spot"):
        (tmp_path / name).write_text(
            f'contract "{name}" {{ currency USD rate 2 USD per gpu_hour }}\n'
        )
    result = run_check(str(tmp_path / "a.spot"), str(tmp_path / "b.spot"))
    assert result.exit_code == 0
    assert result.stderr == "checked 2 files: no problems\n"
    assert result.stdout == ""


def test_exit_0_with_only_warnings(in_broken: Path) -> None:
    result = run_check("lint_unreachable_rate.spot")
    assert result.exit_code == 0
    assert result.stderr.endswith("\n1 warning in 1 file\n")


def test_exit_2_on_any_error_among_good_files(in_broken: Path, tmp_path: Path) -> None:
    good = tmp_path / "good.spot"
    good.write_text('contract "c" { currency USD rate 2 USD per gpu_hour }\n')
    result = run_check(str(good), "no_rate.spot")
    assert result.exit_code == 2
    assert result.stderr.endswith("\n1 error in 1 file\n")


def test_exit_2_on_unreadable_file(tmp_path: Path) -> None:
    missing = tmp_path / "missing.spot"
    result = run_check(str(missing))
    assert result.exit_code == 2
    assert result.stderr == (
        f"{missing}: error[E013]: cannot read `{missing}`: no such file or directory\n"
        "\n1 error in 1 file\n"
    )


def test_exit_2_without_files() -> None:
    result = run_check()
    assert result.exit_code == 2


def test_files_are_checked_together(tmp_path: Path) -> None:
    for name in ("a.spot", "b.spot"):
        (tmp_path / name).write_text('contract "same" { currency USD rate 2 USD per gpu_hour }\n')
    result = run_check(str(tmp_path / "a.spot"), str(tmp_path / "b.spot"))
    assert result.exit_code == 2
    assert "error[E103]: contract `same` is defined more than once" in result.stderr
