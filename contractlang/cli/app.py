"""The `contractlang` command: a typer app with one module per command."""

from __future__ import annotations

import gc
import importlib
import keyword
import os
import sys
from gettext import gettext
from typing import Any

import typer
from typer.core import TyperCommand

from contractlang.cli import common, values
from contractlang.version import __version__

values.install()  # plain values converted without pydantic (start-up: cli/values.py)


class Command(TyperCommand):
    """A command whose arguments show their metavar alone: the usage line in the usual form
    (``FILE...``, ``[FILE...]``), not typer's ``{FILE...}...``, and help without the Python
    type typer writes beside it (``FILE...  <list[Path]>``). Every argument here has a metavar
    that says what it takes and its own repetition; one without keeps typer's form.

    Each command is made one through typer's ``cls=`` (:func:`plain_arguments`), and only
    click's documented methods of a command are overridden."""

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        pieces = [self.options_metavar] if self.options_metavar else []
        for param in self.get_params(ctx):
            if param.param_type_name == "argument" and param.metavar:
                pieces.append(param.metavar if param.required else f"[{param.metavar}]")
            else:
                pieces.extend(param.get_usage_pieces(ctx))
        return pieces

    def format_options(self, ctx: Any, formatter: Any) -> None:
        arguments: list[tuple[str, str]] = []
        options: list[tuple[str, str]] = []
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is None:
                continue
            if param.param_type_name == "argument":
                arguments.append((param.metavar, record[1]) if param.metavar else record)
            elif param.param_type_name == "option":
                options.append(record)
        for title, records in ((gettext("Arguments"), arguments), (gettext("Options"), options)):
            if records:
                with formatter.section(title):
                    formatter.write_dl(records)


def plain_arguments(app: typer.Typer) -> None:
    """Every command of ``app``, and of the apps added to it, made a :class:`Command` (unless
    it names a class of its own: typer records its own, ``TyperCommand``, when none is
    named)."""
    for command in app.registered_commands:
        if command.cls in (None, TyperCommand):
            command.cls = Command
    for group in app.registered_groups:
        if group.typer_instance is not None:
            plain_arguments(group.typer_instance)


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
    plain_arguments(built)
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
