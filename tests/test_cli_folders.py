"""A folder given to `check` or `fmt` stands for every `.spot` file below it; one that cannot
be read is an error (E013), not a folder with no files (it was: "checked 0 files")."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from support.cli import no_traceback, run

from contractlang.cli.inputs import spot_paths

CONTRACT = 'contract "c" {\n  currency USD\n  rate 2.10 USD per gpu_hour\n}\n'


def test_a_folder_stands_for_its_spot_files_sorted(tmp_path: Path) -> None:
    for name in ("b/z.spot", "a.spot", "b/a.spot", "c.txt", "b/c/d.spot"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(CONTRACT, encoding="utf-8")
    found = [Path(p).relative_to(tmp_path).as_posix() for p in spot_paths([str(tmp_path)])]
    assert found == ["a.spot", "b/a.spot", "b/c/d.spot", "b/z.spot"]
    assert spot_paths(["-", "x.spot"]) == ["-", "x.spot"]


@pytest.mark.parametrize("command", [["check"], ["fmt", "--check"]])
def test_a_folder_that_cannot_be_read_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: list[str]
) -> None:
    (tmp_path / "ok.spot").write_text(CONTRACT, encoding="utf-8")
    locked = tmp_path / "locked"
    locked.mkdir()
    real = os.scandir

    def scandir(path: str | os.PathLike[str]) -> object:
        # as a folder without read permission answers (root reads every folder, so the
        # test cannot make one)
        if Path(path) == locked:
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)
    result = run(*command, tmp_path)
    no_traceback(result)
    assert result.exit_code == 2
    assert f"error[E013]: cannot read the folder `{locked}`: permission denied" in result.stderr


def test_an_empty_path_is_not_the_current_folder() -> None:
    result = run("check", "")
    no_traceback(result)
    assert result.exit_code == 2
    assert "error[E502]: an empty path was given" in result.stderr
