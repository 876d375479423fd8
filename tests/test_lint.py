"""The code is ruff and mypy clean: part of the test command, so CI enforces it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CODE = [d for d in ("contractlang", "tests", "bench") if (ROOT / d).is_dir()]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=ROOT, capture_output=True, text=True, check=False)


def test_ruff_clean() -> None:
    proc = _run(sys.executable, "-m", "ruff", "check", *CODE)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_mypy_clean() -> None:
    proc = _run(sys.executable, "-m", "mypy", "contractlang")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_ruff_format_clean() -> None:
    proc = _run(sys.executable, "-m", "ruff", "format", "--check", *CODE)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_python_dash_m_and_version() -> None:
    proc = _run(sys.executable, "-m", "contractlang", "--version")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("contractlang ")
