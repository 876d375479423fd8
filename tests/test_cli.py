"""The command line as a whole: every command is registered, and `--help` lists them with the
exit codes."""

from __future__ import annotations

from support.cli import run

from contractlang.cli.app import COMMANDS, app


def test_every_command_module_is_registered() -> None:
    names = {c.name for c in app.registered_commands} | {
        g.name for g in app.registered_groups if g.name
    }
    assert names == set(COMMANDS)
    assert {"check", "evaluate", "explain", "fmt", "trace"} <= names


def test_help_lists_every_command_and_the_exit_codes() -> None:
    result = run("--help")
    assert result.exit_code == 0
    for name in COMMANDS:
        assert name in result.output
    assert "3 internal error" in result.output
