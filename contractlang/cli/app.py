"""The `contractlang` command: a typer app with one module per command."""

from __future__ import annotations

import gc
import importlib
import keyword
import os
import sys
from typing import Any

import typer
from typer.core import TyperArgument

from contractlang.cli import common, values
from contractlang.version import __version__


def _no_python_types(self: TyperArgument, ctx: Any) -> str | None:
    """typer writes an argument's Python type beside its metavar in help (``FILE...
    <list[Path]>``); every argument here has a metavar that says what it takes."""
    return None if self.metavar else TyperArgument.display_type(self, ctx)


def _usage_name(self: TyperArgument) -> str:
    """The usage line in the usual form (``FILE...``, ``[FILE...]``), not typer's
    ``{FILE...}...``: every argument here with a metavar says its own repetition."""
    if not self.metavar:
        return _typer_usage_name(self)
    return self.metavar if self.required else f"[{self.metavar}]"


_typer_usage_name = TyperArgument._usage_display_name
TyperArgument.display_type_rich = _no_python_types  # type: ignore[method-assign,assignment]
TyperArgument._usage_display_name = _usage_name  # type: ignore[method-assign]
values.install()  # plain values converted without pydantic (start-up: cli/values.py)

HELP = (
    "Evaluate spot GPU contract terms against usage traces.\n\n"
    "Exit codes: 0 ok (every budget met), 1 a budget not met, a file not formatted or an "
    "invoice that disagrees with the terms, 2 bad input or an output that cannot be written, "
    "3 internal error, 130 interrupted (Ctrl-C, SIGTERM, SIGHUP)."
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"contractlang {__version__}")
        raise typer.Exit()


def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Show the version and exit."
    ),
) -> None:
    """Evaluate spot GPU contract terms against usage traces."""


#: Command modules; each defines ``register(app)``. A command named by a Python keyword lives in
#: a module with a trailing underscore (`import` in ``import_.py``).
COMMANDS: list[str] = [
    "check",
    "compare",
    "evaluate",
    "explain",
    "fmt",
    "import",
    "reconcile",
    "rehearse",
    "simulate",
    "test",
    "trace",
]


def make_app(commands: list[str]) -> typer.Typer:
    """The typer app with ``commands`` registered (each imports its module, and what it
    needs, only here)."""
    built = typer.Typer(
        name="contractlang",
        help=HELP,
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        rich_markup_mode=None,
    )
    built.callback()(_root)
    for name in commands:
        module = name + "_" if keyword.iskeyword(name) else name
        importlib.import_module(f"contractlang.cli.{module}").register(built)
    return built


def wanted(argv: list[str]) -> list[str]:
    """The commands a command line needs registered: the one it names, none for
    ``--version`` alone, every one otherwise (``--help``, a mistyped name).

    >>> wanted(["check", "a.spot"]), wanted(["--version"]), wanted(["chekc"]) == COMMANDS
    (['check'], [], True)
    """
    first = next((a for a in argv if not a.startswith("-")), None)
    if first in COMMANDS:
        return [first]
    return [] if argv == ["--version"] else COMMANDS


#: How polars' allocator (jemalloc, on Linux) gives memory back: dirty pages return to the
#: system after 200 ms and muzzy ones at once, where polars sets 500 ms and 1 s (it appends
#: a setting found in the environment to its own, and the later wins). Evaluation frees large
#: frames stage by stage (the trace's batches, the rules' groups, the events once the facts
#: are derived): on 10M events the peak is 1.39–1.43 GB instead of 1.58–1.69
#: (bench/bench_cli.py; docs/cli.md, "Memory").
ALLOCATOR = ("_RJEM_MALLOC_CONF", "dirty_decay_ms:200,muzzy_decay_ms:0")
#: The commands that never load polars (start-up time): their allocator is left alone.
_LIGHT = frozenset(("check", "fmt"))


def tune_allocator(commands: list[str]) -> None:
    """Load polars with :data:`ALLOCATOR`'s setting, unless the user has one of their own or
    ``commands`` (those :func:`wanted` registers) never load polars. jemalloc reads the
    setting as polars loads, so it is taken out of the environment again afterwards: the jobs
    ``rehearse`` runs, and any other child, get the user's environment as it was."""
    name, setting = ALLOCATOR
    if name in os.environ or not set(commands) - _LIGHT:
        return
    os.environ[name] = setting
    try:
        import polars  # noqa: F401, PLC0415 (jemalloc reads its setting as polars loads)
    finally:
        del os.environ[name]


def main() -> None:
    """The ``contractlang`` entry point: only the command asked for is imported, so
    ``--version``, ``check`` and ``fmt`` start without loading polars. Polars' allocator is
    tuned first (:data:`ALLOCATOR`).

    What the imports made (modules, classes, functions: a hundred thousand objects) lives as
    long as the process, so it is moved out of the garbage collector's sight
    (``gc.freeze``) before the command runs: each collection of the oldest objects walked
    all of it again.

    Standard output and error are tagged first, so that a failure to write either — in a
    command, or in typer writing its help, the version or a usage error — is reported as
    the stream's own failure (exit 2), never a traceback; SIGTERM and SIGHUP stop the
    command as Ctrl-C does (exit 130) (:mod:`contractlang.cli.common`)."""
    common.tag_streams()
    common.stop_on_signals()
    try:
        commands = wanted(sys.argv[1:])
        tune_allocator(commands)
        built = make_app(commands)
        gc.freeze()
        built(prog_name="contractlang")
    except common.StreamFailed as exc:
        sys.exit(common.stream_failed(exc))
    except KeyboardInterrupt:  # before a command ran (typer turns one in a command into 130)
        sys.exit(common.INTERRUPTED)


def __getattr__(name: str) -> Any:
    """``app``: every command registered (tests, ``python -m``, docs), built when first
    used."""
    if name == "app":
        globals()["app"] = built = make_app(COMMANDS)
        return built
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
