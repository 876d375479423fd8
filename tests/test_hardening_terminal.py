"""Hardening, the terminal: the summary fits any width without splitting a figure or a name,
trace values cannot steer the terminal, help shows no Python types, and `explain --format
json` is the ledger's own lines."""

from __future__ import annotations

import io
import json
from decimal import Decimal
from functools import cache
from pathlib import Path
from typing import Any

import polars as pl
import pytest
import typer
from rich.cells import cell_len
from rich.console import Console, RenderableType
from support.cli import no_traceback, run
from support.scenario import accepted, released, started, trace_frame, write_spot

from contractlang.cli.app import COMMANDS, app
from contractlang.cli.common import debugging
from contractlang.evaluate.results import Evaluation
from contractlang.pipeline.evaluation import evaluate
from contractlang.pipeline.language import load_terms
from contractlang.render.common.layout import Figure, lay_out, wrap
from contractlang.render.common.numbers import measure_human
from contractlang.render.evaluate.terminal import figures, render_summary

ROOT = Path(__file__).resolve().parents[1]
RULESETS = sorted((ROOT / "rulesets").glob("*.spot"))
TRACE = ROOT / "examples" / "trace.parquet"


@cache
def fleet() -> Evaluation:
    """The five bundled drafts and the FY27 budgets on the bundled trace."""
    return evaluate(load_terms(RULESETS), TRACE)


def _console(width: int) -> tuple[Console, io.StringIO]:
    file = io.StringIO()
    return Console(file=file, width=width, color_system=None, legacy_windows=False), file


def shown(result: Evaluation, width: int) -> list[str]:
    console, file = _console(width)
    render_summary(result, console)
    return file.getvalue().splitlines()


@pytest.mark.parametrize("width", [60, 80, 120, 200])
def test_the_summary_fits_the_width_and_keeps_every_figure_whole(width: int) -> None:
    result = fleet()
    lines = shown(result, width)
    assert all(cell_len(line) <= width for line in lines), max(lines, key=cell_len)
    # Every figure of every contract is on one line somewhere, never broken across two.
    for f in figures(result):
        for cell in f.cells:
            assert any(cell in line for line in lines), (f.label, cell)
    # Every contract name is whole on a line, and every requirement's measured value too.
    for c in result.contracts:
        assert any(c.name in line for line in lines), c.name
    # So are the trace's span, and each requirement's measured value and margin with its unit.
    s = result.trace.summary
    assert any(f"{s.first_ts:%Y-%m-%d %H:%M} → {s.last_ts:%Y-%m-%d %H:%M} UTC" in x for x in lines)
    for c in result.contracts:
        for b in c.budgets:
            for r in b.requirements:
                assert r.value is not None
                assert r.margin is not None
                for figure in (r.value, abs(r.margin)):
                    said = measure_human(figure, r.unit, c.settings.precision)
                    assert any(said in line for line in lines), (r.text, said)


def test_the_wide_terminal_shows_the_drafts_side_by_side() -> None:
    lines = shown(fleet(), 200)
    header = next(line for line in lines if "aws-ec2-spot-linux" in line)
    assert all(c.name in header for c in fleet().contracts)


def test_the_80_column_terminal_groups_the_figures_with_a_row_per_draft() -> None:
    lines = shown(fleet(), 80)
    rows = [line for line in lines if line.startswith(" northwind-negotiated ")]
    # One row per group: runs, usage, bill, lost progress, cost per accepted run, promises.
    assert len(rows) == 6
    assert "net billed" in "\n".join(lines)


def _figures(n: int, value: str = "1,234,567.89") -> list[Figure]:
    return [
        Figure("bill", "gross", "gross", (value,) * n),
        Figure("bill", "net billed", "net", (value,) * n, bold=True),
    ]


def _text(parts: list[RenderableType], width: int) -> list[str]:
    console, file = _console(width)
    for p in parts:
        console.print(p)
    return file.getvalue().splitlines()


def test_long_names_are_lettered_with_a_legend_rather_than_cut() -> None:
    names = [f"provider-{k}-negotiated-draft-with-a-very-long-name" for k in range(3)]
    width = 60
    lines = _text(lay_out(names, _figures(3), width), width)
    assert all(cell_len(line) <= width for line in lines)
    assert not any(name in line for name in names for line in lines if "1,234" in line)
    for letter, name in zip("ABC", names, strict=True):
        assert f"{letter}  {name}" in lines  # the legend names each draft in full
    assert sum(line.count("1,234,567.89") for line in lines) == 6  # 2 figures × 3 drafts


def test_a_terminal_too_narrow_for_any_table_gets_one_block_per_draft() -> None:
    names = ["a" * 30, "b" * 30]
    lines = _text(lay_out(names, _figures(2, "123,456,789,012.34"), 40), 40)
    assert all(cell_len(line) <= 40 for line in lines)
    # Each block is titled by its draft.
    assert {"a" * 30, "b" * 30} <= {line.strip() for line in lines}
    assert sum(line.count("123,456,789,012.34") for line in lines) == 4


def test_wide_characters_are_measured_as_two_cells() -> None:
    names = ["東京リージョン契約", "大阪リージョン契約"]
    lines = _text(lay_out(names, _figures(2), 30), 30)
    assert all(cell_len(line) <= 30 for line in lines)
    assert all(any(n in line for line in lines) for n in names)


def test_prose_breaks_only_between_chunks() -> None:
    chunks = ["verdict:", "0", "of", "5", "contracts;", "1,906,331.97 USD", "to", "spare"]
    lines = wrap(chunks, 20, indent=4)
    assert lines == ["verdict: 0 of 5", "    contracts;", "    1,906,331.97 USD", "    to spare"]
    assert wrap(["a-chunk-wider-than-the-line"], 10) == ["a-chunk-wider-than-the-line"]


EVIL_RUN = "r-\x1b[31mred\x1b[0m\nforged line"


def _evil(tmp_path: Path) -> tuple[Path, Path]:
    spot = write_spot(
        tmp_path / "t.spot",
        'contract "c" {\n  currency USD\n  rate 2 USD per gpu_hour\n}\n',
    )
    trace = tmp_path / "t.parquet"
    trace_frame(
        [
            started(EVIL_RUN, "a1", "2026-03-02 10:00", gpus=1),
            released(EVIL_RUN, "a1", "2026-03-02 11:00"),
            accepted(EVIL_RUN, "2026-03-02 11:00"),
        ]
    ).write_parquet(trace)
    return spot, trace


def test_control_characters_in_a_run_id_are_shown_not_obeyed(tmp_path: Path) -> None:
    spot, trace = _evil(tmp_path)
    result = run("explain", spot, trace, "--run", EVIL_RUN)
    no_traceback(result)
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.stdout
    assert "r-\\x1b[31mred\\x1b[0m\\x0aforged line" in result.stdout
    assert not any(line.startswith("forged line") for line in result.stdout.splitlines())
    # The JSON keeps the value exactly: a tool reads it, not a terminal.
    doc = json.loads(run("explain", spot, trace, "--run", EVIL_RUN, "--format", "json").stdout)
    assert doc["run_id"] == EVIL_RUN


def test_words_between_colons_are_shown_as_written(tmp_path: Path) -> None:
    # rich reads `:smile:` as an emoji code unless told not to
    path = tmp_path / ":smile:.spot"
    path.write_text('contract "c" {\n  rate 2 USD + 1 hour  # :thumbs_up:\n}\n', encoding="utf-8")
    result = run("check", path)
    assert result.exit_code == 2
    assert f"{path}:2:8: error[E201]" in result.output
    assert "# :thumbs_up:" in result.output


def test_a_run_that_is_not_there_is_a_usage_error_naming_it_safely(tmp_path: Path) -> None:
    spot, trace = _evil(tmp_path)
    result = run("explain", spot, trace, "--run", "r-\x1b[2Jgone")
    no_traceback(result)
    assert result.exit_code == 2
    assert "\x1b" not in result.output
    assert "\\x1b[2Jgone" in result.output


def _commands() -> list[str]:
    """Every command and subcommand of the app, as typed (``trace validate``)."""
    root = typer.main.get_command(app)
    out: list[str] = []

    def walk(group: Any, prefix: str) -> None:
        for name, cmd in group.commands.items():
            if hasattr(cmd, "commands"):  # a group
                walk(cmd, f"{prefix}{name} ")
            else:
                out.append(prefix + name)

    walk(root, "")
    assert {c.split()[0] for c in out} == set(COMMANDS)
    return sorted(out)


@pytest.mark.parametrize("command", _commands())
def test_help_shows_no_python_types(command: str) -> None:
    args = [*command.split(), "--help"]
    result = run(*args)
    assert result.exit_code == 0, result.output
    for leaked in ("list[", "Path", "<int", "INTEGER RANGE", "TEXT", "PATH...", "OptionalT"):
        assert leaked not in result.output, (command, leaked)
    usage = result.output.strip().splitlines()[0]
    assert "{" not in usage, usage  # `FILE...`, the usual form, not typer's `{FILE...}...`
    assert "...." not in usage, usage


@pytest.mark.parametrize(
    ("value", "on"), [("", False), ("0", False), ("false", False), ("No", False), ("1", True)]
)
def test_debugging_is_off_unless_asked_for(
    monkeypatch: pytest.MonkeyPatch, value: str, on: bool
) -> None:
    monkeypatch.setenv("CONTRACTLANG_DEBUG", value)
    assert debugging() is on


def test_explain_json_is_the_ledger_of_the_run(tmp_path: Path) -> None:
    """Every line of the JSON is a line of `evaluate --ledger` for that run, and the run's
    figures are its row of `--runs`: the same numbers, computed once."""
    run_id = "run-000003"
    ledger = tmp_path / "ledger.parquet"
    runs = tmp_path / "runs.parquet"
    args = [*RULESETS, TRACE]
    done = run("evaluate", *args, "--ledger", ledger, "--runs", runs, "--format", "json")
    assert done.exit_code in (0, 1), done.output
    result = run("explain", *args, "--run", run_id, "--format", "json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["schema"] == "contractlang.explain/1"
    lines = pl.read_parquet(ledger).filter(pl.col("run_id") == run_id)
    per_run = pl.read_parquet(runs).filter(pl.col("run_id") == run_id)
    assert len(doc["contracts"]) == len(RULESETS) - 1  # the budget file has no contract
    for c in doc["contracts"]:
        mine = lines.filter(pl.col("contract") == c["name"])
        got = [
            (a["alloc_id"], ln["kind"], ln["term"], Decimal(ln["amount"]))
            for a in c["allocations"]
            for ln in a["lines"]
        ] + [(None, ln["kind"], ln["term"], Decimal(ln["amount"])) for ln in c["run_lines"]]
        want = [
            (r["alloc_id"], r["kind"], r["term"], Decimal(str(r["amount"])))
            for r in mine.iter_rows(named=True)
        ]
        assert sorted(got, key=repr) == sorted(want, key=repr)
        row = per_run.filter(pl.col("contract") == c["name"]).row(0, named=True)
        assert Decimal(c["run"]["net"]) == Decimal(str(row["net"]))
        assert sum(x[3] for x in got) == Decimal(c["run"]["net"])  # the lines sum to the net
