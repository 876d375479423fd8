"""One way for tests to run the command line: the real app, in process."""

from __future__ import annotations

from typer.testing import CliRunner, Result

from contractlang.cli.app import app


def run(*args: object, input: str | None = None) -> Result:
    """``contractlang ARGS…``; paths may be given as ``Path`` objects."""
    return CliRunner().invoke(app, [str(a) for a in args], input=input)


def no_traceback(result: Result) -> None:
    """The command ended with its own exit code, not an exception."""
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
