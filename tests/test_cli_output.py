"""Standard output and standard error (``cli/common.py``'s ``Output``) write text exactly as
rich's console prints it, without importing rich for it."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from contractlang.cli import common

ROOT = Path(__file__).resolve().parents[1]

TEXTS = [
    "",
    "checked 1 file: no problems",
    "two\nlines",
    "a last newline\n",
    "trailing spaces   ",
    "bell\x07 backspace\x08 vertical tab\x0b form feed\x0c return\r\n end",
    "escape \x1b[31mred\x1b[0m, nul \x00, delete \x7f",
    "a\ttab, and\ttwo",
    "[bold]not markup[/bold] [link]",
    ":smile: :thumbs_up:",
    "wide 世界 🎉 and zero\u200bwidth",
    "a surrogate \udcff from a file name",
    "long " * 60,
]


@pytest.mark.parametrize("text", TEXTS)
@pytest.mark.parametrize("markup", [False, True])
@pytest.mark.parametrize("end", ["\n", ""])
@pytest.mark.parametrize("stderr", [True, False])
def test_output_writes_what_rich_prints(
    text: str, markup: bool, end: str, stderr: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = io.StringIO()
    Console(file=expected, highlight=False, soft_wrap=True, emoji=False).print(
        text, markup=markup, end=end
    )
    written = io.StringIO()
    monkeypatch.setattr(sys, "stderr" if stderr else "stdout", written)
    common.Output(stderr=stderr).print(text, markup=markup, end=end)
    assert written.getvalue() == expected.getvalue()


def test_check_and_fmt_do_not_import_rich() -> None:
    probe = (
        "import sys\n"
        "from contractlang.cli.app import make_app\n"
        "codes = []\n"
        "for argv in (['check', 'rulesets'], ['check', 'tests/broken/compare_time_money.spot'],\n"
        "             ['fmt', '--check', 'rulesets']):\n"
        "    try:\n"
        "        make_app([argv[0]])(argv, prog_name='contractlang')\n"
        "    except SystemExit as exc:\n"
        "        codes.append(exc.code)\n"
        "print(codes, 'rich' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip().splitlines()[-1] == "[0, 2, 0] False"
