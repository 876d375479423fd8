"""A terms file is read to at most `MAX_SPOT_BYTES` (64 MiB): a larger file, or a device
that never ends, is E013 naming it and the limit, from `check`, `fmt` and their stdin."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.cli import no_traceback, run

from contractlang.pipeline import parsing

TERMS = 'contract "c" {\n  currency USD\n  rate 2 USD per gpu_hour\n}\n'


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero")
@pytest.mark.parametrize("command", [["check"], ["fmt", "--check"]])
def test_a_terms_file_that_never_ends_is_e013_not_read_forever(command: list[str]) -> None:
    result = run(*command, "/dev/zero")
    no_traceback(result)
    assert result.exit_code == 2, result.output
    assert "error[E013]: cannot read `/dev/zero`: it is larger than 64 MiB" in result.output


@pytest.mark.parametrize("command", [["check"], ["fmt", "--check"]])
def test_the_bound_holds_on_stdin(monkeypatch: pytest.MonkeyPatch, command: list[str]) -> None:
    monkeypatch.setattr(parsing, "MAX_SPOT_BYTES", len(TERMS) - 1)
    result = run(*command, "-", input=TERMS)
    no_traceback(result)
    assert result.exit_code == 2, result.output
    assert "error[E013]: cannot read `<stdin>`: it is larger than" in result.output


def test_a_file_at_the_bound_is_read_and_one_byte_more_is_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    terms = tmp_path / "c.spot"
    terms.write_text(TERMS, encoding="utf-8")
    monkeypatch.setattr(parsing, "MAX_SPOT_BYTES", len(TERMS))  # exactly the file's size
    assert run("check", terms).exit_code == 0
    monkeypatch.setattr(parsing, "MAX_SPOT_BYTES", len(TERMS) - 1)
    result = run("check", terms)
    assert result.exit_code == 2
    assert f"error[E013]: cannot read `{terms}`: it is larger than" in result.output
