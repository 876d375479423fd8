"""The `contractlang` command: a typer app with one module per command."""

from __future__ import annotations

import importlib
import keyword

import typer

from contractlang.version import __version__

app = typer.Typer(
    name="contractlang",
    help="Evaluate spot GPU contract terms against usage traces.\n\n"
    "Exit codes: 0 ok (every budget met), 1 a budget not met, a file not formatted or an "
    "invoice that disagrees with the terms, 2 bad input, 3 internal error.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"contractlang {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Show the version and exit."
    ),
) -> None:
    """Evaluate spot GPU contract terms against usage traces."""


#: Command modules; each defines ``register(app)``. A command named by a Python keyword lives in
#: a module with a trailing underscore (`import` in ``import_.py``).
COMMANDS: list[str] = ["check", "evaluate", "explain", "fmt", "import", "reconcile", "trace"]

for _name in COMMANDS:
    _module = _name + "_" if keyword.iskeyword(_name) else _name
    importlib.import_module(f"contractlang.cli.{_module}").register(app)


def main() -> None:
    app()
