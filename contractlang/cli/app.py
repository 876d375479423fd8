"""The `contractlang` command: a typer app with one module per command."""

from __future__ import annotations

import importlib

import typer

app = typer.Typer(
    name="contractlang",
    help="Evaluate spot GPU contract terms against usage traces.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

#: Command modules; each defines ``register(app)``.
COMMANDS: list[str] = ["check", "evaluate", "explain", "fmt", "trace"]

for _name in COMMANDS:
    importlib.import_module(f"contractlang.cli.{_name}").register(app)


def main() -> None:
    app()
