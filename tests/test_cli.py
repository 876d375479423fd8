"""The command line as a whole: every command is registered, and `--help` lists them with the
exit codes."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import typer.main
from support.cli import run

from contractlang.cli import trace as cli_trace
from contractlang.cli.app import COMMANDS, app
from contractlang.diagnostics import NO_SPAN, error
from contractlang.errors import ContractlangError
from contractlang.trace import read as read_module
from contractlang.trace.problems import TraceInvalid


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


def test_a_panic_in_polars_is_an_internal_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """A Rust panic (``pyo3_runtime.PanicException``) derives from ``BaseException``, not
    ``Exception``: it escaped the guard, and the process exited 1, which means "not met"."""

    def panic(*args: object, **kwargs: object) -> None:
        raise pl.exceptions.PanicException("called `Option::unwrap()` on a `None` value")

    monkeypatch.setattr(cli_trace, "load_trace", panic)
    result = run("trace", "validate", "t.parquet")
    assert result.exit_code == 3, result.output
    assert "internal error: PanicException: called `Option::unwrap()`" in result.stderr


def test_a_fixed_offset_time_zone_in_parquet_is_t017(tmp_path: Path) -> None:
    """A Parquet ``ts`` typed with a fixed offset (``timestamp(tz='+05:30')``, as pyarrow
    writes one) makes polars 2.1 panic while it reads the schema: said in our words."""
    hours = [datetime(2025, 3, 3, h) for h in (9, 10)]
    table = pa.table(
        {
            "run_id": ["r1", "r1"],
            "alloc_id": ["a1", "a1"],
            "ts": pa.array(hours, type=pa.timestamp("us", tz="+05:30")),
            "source": ["scheduler"] * 2,
            "event": ["started", "released"],
            "gpus": [8, None],
        }
    )
    path = tmp_path / "offset.parquet"
    pq.write_table(table, path)
    result = run("trace", "validate", str(path))
    assert result.exit_code == 2, result.output
    assert "error[T017]: cannot read" in result.stderr
    assert "a column's time zone `+05:30` is no zone polars reads" in result.stderr
    # found in the schema before polars reads it and panics: its Rust panic message (and,
    # under RUST_BACKTRACE, its stack) went to the process's stderr, past Python
    env = {**os.environ, "RUST_BACKTRACE": "1"}
    env.pop(read_module._LENIENT_ZONES, None)
    proc = subprocess.run(
        [sys.executable, "-m", "contractlang", "trace", "validate", str(path)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert proc.returncode == 2, proc.stderr
    assert "panicked" not in proc.stderr, proc.stderr
    assert "backtrace" not in proc.stderr, proc.stderr
    assert proc.stderr.splitlines()[0].endswith("is no zone polars reads"), proc.stderr
    # polars' leniency is lent for the schema only: the user's setting, or none, comes back
    assert read_module._LENIENT_ZONES not in os.environ
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(read_module._LENIENT_ZONES, "0")
        assert run("trace", "validate", str(path)).exit_code == 2
        assert os.environ[read_module._LENIENT_ZONES] == "0"


def test_a_bad_input_error_pickles_whole() -> None:
    """Errors cross process boundaries (Ray tasks) pickled: every attribute comes back."""
    diags = [error("T001", "missing required column `ts`", NO_SPAN, file="t.csv")]
    exc = TraceInvalid(diags, rows=3, errors=1, error_rows=1, warnings=0)
    back = pickle.loads(pickle.dumps(exc))
    assert type(back) is TraceInvalid
    assert (back.diagnostics, back.rows, back.errors, str(back)) == (diags, 3, 1, str(exc))
    plain = pickle.loads(pickle.dumps(ContractlangError(diags)))
    assert (type(plain), plain.diagnostics, plain.sources) == (ContractlangError, diags, {})


def _command_paths() -> list[tuple[str, ...]]:
    """Every command and subcommand of the app, as the words that name it."""
    root = typer.main.get_command(app)
    paths: list[tuple[str, ...]] = []

    def walk(command: object, words: tuple[str, ...]) -> None:
        subcommands = getattr(command, "commands", None)
        if subcommands is None:
            paths.append(words)
            return
        for name, sub in subcommands.items():
            walk(sub, (*words, name))

    walk(root, ())
    return paths


@pytest.mark.parametrize("words", _command_paths(), ids=" ".join)
def test_every_command_says_its_exit_codes_including_130(words: tuple[str, ...]) -> None:
    """Each command's help lists its exit codes, the interrupted one (130, docs/cli.md) too."""
    result = run(*words, "--help")
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "Exit codes: 0" in text, text
    assert "3 internal error" in text, text
    assert "130 interrupted" in text, text


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        (None, ("evaluate", "TERMS")),  # --shards auto counts the rows first
        (pa.list_(pa.timestamp("us", tz="+05:30")), ("trace", "validate")),
        (pa.struct([("t", pa.timestamp("us", tz="+05:30"))]), ("trace", "validate")),
    ],
    ids=["evaluate", "list", "struct"],
)
def test_a_zone_polars_cannot_read_is_t017_wherever_it_is_read(
    tmp_path: Path, extra: pa.DataType | None, words: tuple[str, ...]
) -> None:
    """The zone found on every path that reads a Parquet file (evaluate's `--shards auto`
    counts its rows first) and at any depth of a column's type: T017, exit 2, no panic."""
    hours = [datetime(2025, 3, 3, h) for h in (9, 10)]
    zone = "+05:30" if extra is None else "UTC"
    columns: dict[str, pa.Array] = {
        "run_id": pa.array(["r1", "r1"]),
        "alloc_id": pa.array(["a1", "a1"]),
        "ts": pa.array(hours, type=pa.timestamp("us", tz=zone)),
        "source": pa.array(["scheduler"] * 2),
        "event": pa.array(["started", "released"]),
        "gpus": pa.array([8, None]),
    }
    if isinstance(extra, pa.ListType):
        columns["when"] = pa.array([[hours[0]], []], type=extra)
    elif extra is not None:
        columns["when"] = pa.array([{"t": hours[0]}, None], type=extra)
    path = tmp_path / "zoned.parquet"
    pq.write_table(pa.table(columns), path)
    terms = tmp_path / "c.spot"
    terms.write_text('contract "c" {\n  currency USD\n  rate 2.10 USD per gpu_hour\n}\n')
    args = [str(terms) if w == "TERMS" else w for w in words]
    env = {k: v for k, v in os.environ.items() if k != read_module._LENIENT_ZONES}
    proc = subprocess.run(
        [sys.executable, "-m", "contractlang", *args, str(path)],
        capture_output=True,
        text=True,
        env={**env, "RUST_BACKTRACE": "1"},
        check=False,
    )
    assert proc.returncode == 2, proc.stderr
    assert "panicked" not in proc.stderr, proc.stderr
    assert "error[T017]" in proc.stderr, proc.stderr
    assert "a column's time zone `+05:30` is no zone polars reads" in proc.stderr
