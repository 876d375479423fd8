"""The pytest plugin: a team's own ``pytest`` runs its contractlang fixtures.

Registered by the ``pytest11`` entry point (``pyproject.toml``), so installing contractlang is
all it takes: pytest collects every folder holding a ``fixture.toml`` as one test item, which
fails with the same readable diff as ``contractlang test`` (``docs/fixtures.md``).
``--contractlang-update`` rewrites the expectations, as ``contractlang test --update`` does.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from contractlang.cli.test import write_expectations
from contractlang.diagnostics import render_all
from contractlang.errors import ExitCode
from contractlang.fixtures import MANIFEST, FixtureResult, run_fixture, update_fixture
from contractlang.fixtures.report import outcome_lines

__all__ = ["FixtureFile", "FixtureItem"]

UPDATE = "--contractlang-update"
#: The expectations ``--contractlang-update`` wrote in this session.
WRITTEN = pytest.StashKey[list[Path]]()
#: The width of a failure's diff in pytest's report.
WIDTH = 100


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("contractlang", "contractlang regression fixtures")
    group.addoption(
        UPDATE,
        action="store_true",
        default=False,
        help="rewrite the expected output of the contractlang fixtures collected, from what "
        "their inputs give now (contractlang test --update)",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.stash[WRITTEN] = []


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    written = config.stash.get(WRITTEN, [])
    if written:
        terminalreporter.section("contractlang fixtures updated")
        for path in written:
            terminalreporter.write_line(f"wrote {path.as_posix()}")


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if file_path.name == MANIFEST:
        return FixtureFile.from_parent(parent, path=file_path)
    return None


class FixtureFile(pytest.File):
    """A ``fixture.toml``: its folder is one fixture."""

    def collect(self) -> Iterator[pytest.Item]:
        yield FixtureItem.from_parent(self, name=self.path.parent.name)


class FixtureFailed(Exception):
    """A fixture that did not pass, with its outcome."""

    def __init__(self, outcome: FixtureResult) -> None:
        super().__init__(outcome.status)
        self.outcome = outcome


class FixtureItem(pytest.Item):
    """One fixture, run as ``contractlang test`` runs it."""

    def runtest(self) -> None:
        outcome = run_fixture(self._folder())
        if self.config.getoption(UPDATE):
            outcome = update_fixture(outcome, write_expectations)
            self.config.stash[WRITTEN].extend(outcome.written)
        if outcome.exit_code is not ExitCode.OK:
            raise FixtureFailed(outcome)

    def _folder(self) -> Path:
        folder = self.path.parent
        try:
            return folder.relative_to(Path.cwd())
        except ValueError:
            return folder

    def repr_failure(
        self,
        excinfo: pytest.ExceptionInfo[BaseException],
        style: Any = None,
    ) -> str | Any:
        if isinstance(excinfo.value, FixtureFailed):
            o = excinfo.value.outcome
            update = f"pytest {UPDATE} {self.nodeid.partition('::')[0]}"
            text = "\n".join(outcome_lines(o, WIDTH, limit=None, update=update))
            if o.diagnostics:
                text += "\n" + render_all(list(o.diagnostics), dict(o.sources))
            return text
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"contractlang fixture {self.name}"
