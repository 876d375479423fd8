"""The plain conversion of command-line values (``contractlang/cli/values.py``) gives what
typer's pydantic adapters give: the same values, the same errors, the same exit codes. typer's
own conversion is reached here by its private name: this test is what checks the plain one
against it, in the typer versions ``tests/test_typer_range.py`` allows."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

import pytest
import typer
import typer.core
from typer._coercion import build_runtime_param
from typer.testing import CliRunner

from contractlang.cli import values
from contractlang.cli.common import OutputFormat


class Colour(StrEnum):
    red = "red"
    green = "green"


def demo() -> typer.Typer:
    app = typer.Typer(add_completion=False)

    @app.command()
    def main(
        files: Annotated[list[str], typer.Argument(metavar="FILE...")],
        fmt: Annotated[OutputFormat, typer.Option("--format")] = OutputFormat.text,
        name: Annotated[str | None, typer.Option("--name")] = None,
        flag: Annotated[bool, typer.Option("--flag", envvar="DEMO_FLAG")] = False,
        colours: Annotated[list[Colour] | None, typer.Option("--colour")] = None,
        loose: Annotated[Colour, typer.Option("--loose", case_sensitive=False)] = Colour.red,
        count: Annotated[int, typer.Option("--count", min=1)] = 1,
    ) -> None:
        typer.echo(repr((files, fmt, name, flag, colours, loose, count)))

    return app


CASES = [
    ["a.spot"],
    ["a.spot", "b.spot", "--format", "json"],
    ["a.spot", "--format", "JSON"],
    ["a.spot", "--format", "xml"],
    ["a.spot", "--format", ""],
    ["a.spot", "--name", "x y", "--flag"],
    ["a.spot", "--name", "\udcff"],
    ["a.spot", "--colour", "red", "--colour", "green"],
    ["a.spot", "--colour", "blue"],
    ["a.spot", "--loose", "GREEN"],
    ["a.spot", "--loose", "Blue"],
    ["a.spot", "--count", "3"],
    ["a.spot", "--count", "0"],
    [],
    ["--format", "json"],
]


@pytest.mark.parametrize("args", CASES)
@pytest.mark.parametrize("env", [{}, {"DEMO_FLAG": "1"}, {"DEMO_FLAG": "no"}, {"DEMO_FLAG": "x"}])
def test_plain_conversion_is_typers(
    args: list[str], env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    runner = CliRunner()
    monkeypatch.setattr(typer.core, values.HOOK, values.Hook(build_runtime_param))
    plain = runner.invoke(demo(), args, env=env)
    monkeypatch.setattr(typer.core, values.HOOK, build_runtime_param)
    adapted = runner.invoke(demo(), args, env=env)
    assert (plain.exit_code, plain.output) == (adapted.exit_code, adapted.output)
    assert plain.exception is None or isinstance(plain.exception, SystemExit)


def test_the_command_line_converts_with_the_plain_conversion() -> None:
    import contractlang.cli.app  # noqa: F401, PLC0415 - installs it, as the entry point does

    installed = getattr(typer.core, values.HOOK)
    assert isinstance(installed, values.Hook)
    assert installed.typers is build_runtime_param
    assert values.install()  # a second time: still typer's own conversion behind it, once
    assert getattr(typer.core, values.HOOK) is installed


def test_a_typer_without_the_hook_converts_every_value_itself(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delattr(typer.core, values.HOOK)
    assert not values.install()
    assert not hasattr(typer.core, values.HOOK)


def test_plain_values_never_reach_typers_conversion(monkeypatch: pytest.MonkeyPatch) -> None:
    def refused(described: values.Described) -> values.Conversion:
        raise AssertionError(f"typer's conversion built for {described.annotation}")

    app = typer.Typer(add_completion=False)

    @app.command()
    def main(
        files: Annotated[list[str], typer.Argument(metavar="FILE...")],
        fmt: Annotated[OutputFormat, typer.Option("--format")] = OutputFormat.text,
        name: Annotated[str | None, typer.Option("--name")] = None,
        flag: Annotated[bool, typer.Option("--flag")] = False,
        colours: Annotated[list[Colour] | None, typer.Option("--colour")] = None,
        loose: Annotated[Colour, typer.Option("--loose", case_sensitive=False)] = Colour.red,
    ) -> None:
        typer.echo(repr((files, fmt, name, flag, colours, loose)))

    monkeypatch.setattr(typer.core, values.HOOK, values.Hook(refused))
    given = ["a", "b", "--format", "json", "--flag", "--colour", "green", "--loose", "GREEN"]
    done = CliRunner().invoke(app, given)
    assert done.exit_code == 0, done.output
    expected = (["a", "b"], OutputFormat.json, None, True, [Colour.green], Colour.green)
    assert done.output == repr(expected) + "\n"
