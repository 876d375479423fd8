"""`contractlang trace validate|facts|generate`: exit codes, output, files written."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from support.cli import no_traceback
from support.cli import run as run_cli
from typer.testing import Result

from contractlang.cli import trace as cli_trace
from contractlang.errors import os_reason
from contractlang.lang.frames import ALLOCATION_SCHEMA, RUN_SCHEMA

ROOT = Path(__file__).resolve().parents[1]
HEADER = "run_id,alloc_id,ts,source,event,gpus,step"
VALID = [
    "r1,,2025-01-01T00:00:00Z,scheduler,requested,,",
    "r1,a1,2025-01-01T00:05:00Z,scheduler,started,8,",
    "r1,,2025-01-01T00:35:00Z,job,checkpoint,,100",
    "r1,a1,2025-01-01T00:50:00Z,scheduler,reclaimed,,130",
    "r1,,2025-01-01T01:00:00Z,job,accepted,,",
]


def run(*args: str) -> Result:
    return run_cli("trace", *args)


def csv(tmp_path: Path, rows: list[str], name: str = "t.csv") -> Path:
    path = tmp_path / name
    path.write_text("\n".join([HEADER, *rows]) + "\n", encoding="utf-8")
    return path


def test_validate_a_valid_trace_exits_0_with_a_summary(tmp_path: Path) -> None:
    result = run("validate", str(csv(tmp_path, VALID)))
    no_traceback(result)
    assert result.exit_code == 0
    lines = {line.split()[0] + " " + line.split()[1]: line for line in result.stdout.splitlines()}
    assert lines["rows read"].split()[2] == "5"
    assert lines["lost GPU-hours"].split()[2] == "2.00"  # 8 GPUs × (50 − 35) min = 2 h
    assert result.stdout.splitlines()[-1] == "5 rows: valid"
    assert result.stderr == ""


def test_validate_totals_warnings(tmp_path: Path) -> None:
    rows = [*VALID[:3], "r1,,2025-01-01T00:40:00Z,job,checkpoint,,90", *VALID[3:]]
    result = run("validate", str(csv(tmp_path, rows)))
    assert result.exit_code == 0, result.output
    assert "warning[W101]" in result.stderr  # step 90 after step 100
    assert result.stdout.splitlines()[-1] == "6 rows: valid, 1 warning"


def test_validate_an_invalid_trace_exits_2_naming_the_row(tmp_path: Path) -> None:
    rows = list(VALID)
    rows[1] = rows[1].replace(",8,", ",-8,")
    rows.append("r1,a1,2025-01-01T00:06:00Z,scheduler,strated,,")
    result = run("validate", str(csv(tmp_path, rows)))
    no_traceback(result)
    assert result.exit_code == 2
    path = tmp_path / "t.csv"
    assert f"{path}: row 2: error[T011]: `gpus` must be positive, not `-8`" in result.stderr
    assert f"{path}: row 6: error[T004]: unknown event `strated`" in result.stderr
    assert "help: did you mean `started`?" in result.stderr
    assert result.stdout == ""
    # 5 + 1 rows; T011 on row 2, T004 on row 6
    assert result.stderr.splitlines()[-1] == "6 rows: invalid, 2 errors in 2 rows"


def test_validate_totals_when_no_row_was_checked(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text("run_id,alloc_id,ts,source,event\n", encoding="utf-8")  # no `gpus`
    result = run("validate", str(path))
    assert result.exit_code == 2
    assert "error[T001]: missing required column `gpus`" in result.stderr
    assert result.stderr.splitlines()[-1] == "invalid, 1 error; no rows were checked"


def test_validate_json(tmp_path: Path) -> None:
    result = run("validate", str(csv(tmp_path, VALID)), "--format", "json")
    assert result.exit_code == 0
    doc = json.loads(result.stdout)
    assert doc["valid"] is True
    assert doc["summary"]["rows_read"] == 5
    assert doc["summary"]["facts"]["lost_gpu_hours"] == "2.000000"
    assert str(tmp_path) not in result.stdout  # no paths: the same trace, the same bytes
    again = run("validate", str(csv(tmp_path, VALID, "u.csv")), "--format", "json")
    assert again.stdout == result.stdout


def test_validate_json_on_an_invalid_trace(tmp_path: Path) -> None:
    result = run("validate", str(csv(tmp_path, VALID[:2])), "--format", "json")
    assert result.exit_code == 2
    doc = json.loads(result.stdout)
    assert [(d["code"], d["line"]) for d in doc["diagnostics"]] == [("T014", 2)]


def test_open_at_closes_open_allocations(tmp_path: Path) -> None:
    path = csv(tmp_path, VALID[:3])
    assert run("validate", str(path)).exit_code == 2
    result = run("validate", str(path), "--open-at", "2025-01-01T02:00:00+00:00")
    assert result.exit_code == 0, result.output
    assert "1 closed at --open-at" in result.stdout


# (Python reads 7 fractional digits and cuts the last without a word; a trace keeps µs)
@pytest.mark.parametrize("value", ["2025-01-01T02:00:00", "soon", "2025-01-01T02:00:00.1234567Z"])
def test_a_bad_open_at_exits_2(tmp_path: Path, value: str) -> None:
    result = run("validate", str(csv(tmp_path, VALID)), "--open-at", value)
    no_traceback(result)
    assert result.exit_code == 2
    assert f"error[E502]: `--open-at {value}`" in result.stderr  # a command-line error
    assert "rows" not in result.stderr  # and no trace total: the trace was not looked at


def test_max_problems(tmp_path: Path) -> None:
    rows = [f"r1,,2025-01-01T00:{m:02d}:00Z,job,progres,," for m in range(30)]
    result = run("validate", str(csv(tmp_path, rows)), "--max-problems", "5")
    assert result.exit_code == 2
    assert result.stderr.count("error[T004]") == 5
    assert "found 30 problems; the first 5 are shown" in result.stderr
    assert result.stderr.splitlines()[-1] == "30 rows: invalid, 30 errors in 30 rows"


def test_unreadable_trace_exits_2(tmp_path: Path) -> None:
    result = run("validate", str(tmp_path / "missing.parquet"))
    no_traceback(result)
    assert result.exit_code == 2
    assert "error[T017]: cannot read" in result.stderr


def test_facts_writes_both_tables(tmp_path: Path) -> None:
    out, runs = tmp_path / "facts.parquet", tmp_path / "runs.csv"
    result = run("facts", str(csv(tmp_path, VALID)), "--out", str(out), "--runs-out", str(runs))
    no_traceback(result)
    assert result.exit_code == 0, result.output
    allocations = pl.read_parquet(out)
    assert dict(allocations.schema) == ALLOCATION_SCHEMA
    assert allocations["replayed_time"].item().total_seconds() == 900  # 50 − 35 minutes
    table = pl.read_csv(runs, infer_schema=False)
    assert table.columns == list(RUN_SCHEMA)
    assert table["lost_gpu_time"].item() == "7200.000000"  # seconds: 8 × 900
    assert f"wrote the run facts to {runs}" in result.stderr


def test_facts_rejects_an_unknown_output_format(tmp_path: Path) -> None:
    result = run("facts", str(csv(tmp_path, VALID)), "--out", str(tmp_path / "f.xlsx"))
    no_traceback(result)
    assert result.exit_code == 2


@pytest.mark.parametrize("command", ["facts", "generate"])
def test_out_under_a_regular_file_is_a_clean_error(tmp_path: Path, command: str) -> None:
    afile = tmp_path / "afile"
    afile.write_text("", encoding="utf-8")
    target = afile / "f.parquet"
    args = [str(csv(tmp_path, VALID))] if command == "facts" else ["--runs", "2"]
    result = run(command, *args, "--out", str(target))
    no_traceback(result)
    assert result.exit_code == 2
    assert "internal error" not in result.output
    assert f"error[E502]: `--out {target}`: `{afile}` is a file, not a folder" in result.stderr


def test_generate_reports_a_failed_write_cleanly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(batches: object, path: Path, kind: str | None = None) -> None:
        raise OSError(f"Permission denied (os error 13): {path}")  # as polars raises it

    monkeypatch.setattr(cli_trace, "write_generated", refuse)
    out = tmp_path / "g.ndjson"
    result = run("generate", "--runs", "2", "--out", str(out))
    no_traceback(result)
    assert result.exit_code == 2
    assert f"error[E501]: cannot write `{out}`: permission denied" in result.stderr


@pytest.mark.parametrize(
    ("exc", "reason"),
    [
        (OSError("Not a directory (os error 20): /tmp/a/b.parquet"), "not a directory"),
        (OSError(13, "Permission denied"), "permission denied"),
        (OSError(""), "write error"),
    ],
)
def test_os_reason(exc: OSError, reason: str) -> None:
    assert os_reason(exc) == reason


def test_generate_is_deterministic_and_valid(tmp_path: Path) -> None:
    a, b = tmp_path / "a.parquet", tmp_path / "b.parquet"
    first = run("generate", "--runs", "20", "--seed", "3", "--out", str(a))
    assert first.exit_code == 0, first.output
    assert first.stderr.startswith("wrote ")
    assert run("generate", "--runs", "20", "--seed", "3", "--out", str(b)).exit_code == 0
    assert a.read_bytes() == b.read_bytes()
    assert run("validate", str(a)).exit_code == 0


def test_generate_csv_and_bad_paths(tmp_path: Path) -> None:
    path = tmp_path / "g.csv"
    assert run("generate", "--runs", "3", "--out", str(path)).exit_code == 0
    assert run("validate", str(path)).exit_code == 0
    bad = run("generate", "--runs", "3", "--out", str(tmp_path / "g.txt"))
    no_traceback(bad)
    assert bad.exit_code == 2
    naive = run("generate", "--runs", "3", "--start", "2025-01-01", "--out", str(path))
    assert naive.exit_code == 2
    assert "error[E502]: `--start 2025-01-01` has no UTC offset" in naive.stderr
    word = run("generate", "--runs", "3", "--start", "soon", "--out", str(path))
    assert word.exit_code == 2
    assert "error[E502]: `--start soon` is not an ISO 8601 timestamp" in word.stderr
    assert "--open-at" not in naive.stderr + word.stderr


def test_merge_into_csv_refuses_text_with_a_nul(tmp_path: Path) -> None:
    """A NUL in a text value (an NDJSON `\\u0000`) is a valid trace, but CSV cannot hold it:
    the reader takes the file for binary. It was written, and could not be read back."""
    src = tmp_path / "t.ndjson"
    src.write_text(
        '{"run_id":"r1","alloc_id":"a1","ts":"2025-03-03T09:00:00Z","source":"scheduler",'
        '"event":"started","gpus":8,"sku":"H\\u0000X"}\n'
        '{"run_id":"r1","alloc_id":"a1","ts":"2025-03-03T10:00:00Z","source":"scheduler",'
        '"event":"released"}\n',
        encoding="utf-8",
    )
    out = tmp_path / "m.csv"
    bad = run_cli("trace", "merge", str(src), "--out", str(out))
    no_traceback(bad)
    assert bad.exit_code == 2
    assert "the column `sku` holds text with a NUL character, which CSV cannot hold" in bad.stderr
    assert not out.exists()
    parquet = tmp_path / "m.parquet"
    assert run_cli("trace", "merge", str(src), "--out", str(parquet)).exit_code == 0
    assert run_cli("trace", "validate", str(parquet)).exit_code == 0
