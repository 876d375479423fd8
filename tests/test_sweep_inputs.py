"""Bad-input sweep: inputs read whole are bounded (a workload, a fixture's manifest), a FOCUS
column given twice is an error, and the smaller findings of the sweep."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.cli import no_traceback, run

from contractlang.tomlfile import MAX_BYTES

ROOT = Path(__file__).resolve().parent.parent
SIMULATE = ROOT / "examples" / "simulate"
WORKLOAD = (
    (SIMULATE / "workload.toml").read_text(encoding="utf-8").replace("runs = 2000", "runs = 2")
)


def _padded(path: Path, text: str) -> Path:
    """``text`` with a comment that takes the file past :data:`MAX_BYTES` (valid TOML still)."""
    path.write_text(text + "#" + "x" * MAX_BYTES + "\n", encoding="utf-8")
    return path


def test_a_workload_larger_than_the_limit_is_e607_naming_the_file_and_the_limit(
    tmp_path: Path,
) -> None:
    big = _padded(tmp_path / "w.toml", WORKLOAD)
    result = run("simulate", SIMULATE / "drafts.spot", "--workload", big)
    no_traceback(result)
    assert result.exit_code == 2, result.output
    assert f"error[E607]: cannot read `{big}`: it is larger than 1 MiB (1,048,576 bytes)" in (
        result.output
    )


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero")
def test_a_workload_that_never_ends_is_refused_not_read_forever() -> None:
    result = run("simulate", SIMULATE / "drafts.spot", "-w", "/dev/zero")
    no_traceback(result)
    assert result.exit_code == 2
    assert "error[E607]: cannot read `/dev/zero`: it is larger than 1 MiB" in result.output


def test_a_workload_at_the_limit_is_read(tmp_path: Path) -> None:
    at = tmp_path / "w.toml"
    body = WORKLOAD + "#"
    at.write_text(body + "x" * (MAX_BYTES - len(body.encode()) - 1) + "\n", encoding="utf-8")
    assert at.stat().st_size == MAX_BYTES
    result = run("simulate", SIMULATE / "drafts.spot", "--workload", at)
    no_traceback(result)
    assert result.exit_code == 0, result.output


def test_a_fixture_manifest_larger_than_the_limit_is_f001(tmp_path: Path) -> None:
    folder = tmp_path / "big"
    folder.mkdir()
    _padded(folder / "fixture.toml", 'story = "big"\n')
    result = run("test", folder)
    no_traceback(result)
    assert result.exit_code == 2
    assert "error[F001]: cannot read" in result.output
    assert "larger than 1 MiB" in result.output


FOCUS_HEADER = "BilledCost,ChargeCategory,ChargePeriodStart,ChargePeriodEnd,Tags"
FOCUS_ROW = '12.50,Usage,2025-03-01T00:00:00Z,2025-03-01T01:00:00Z,"{""run"": ""r1""}"'


@pytest.mark.parametrize("again", ["BilledCost", " billedcost "])
def test_a_focus_column_named_twice_is_i003_naming_it(tmp_path: Path, again: str) -> None:
    export = tmp_path / "invoice.csv"
    export.write_text(
        f"{FOCUS_HEADER},{again}\n{FOCUS_ROW},99.00\n", encoding="utf-8", newline="\n"
    )
    out = tmp_path / "invoice.parquet"
    result = run("import", "focus", export, "--run-from", "tag:run", "--out", out)
    no_traceback(result)
    assert result.exit_code == 2, result.output
    assert (
        f"error[I003]: `{export}` names the column `BilledCost` more than once in its header "
        "(columns 1 and 6)"
    ) in result.output
    assert not out.exists()


def test_a_focus_export_with_each_column_once_imports(tmp_path: Path) -> None:
    export = tmp_path / "invoice.csv"
    export.write_text(f"{FOCUS_HEADER}\n{FOCUS_ROW}\n", encoding="utf-8", newline="\n")
    out = tmp_path / "invoice.parquet"
    result = run("import", "focus", export, "--run-from", "tag:run", "--out", out)
    no_traceback(result)
    assert result.exit_code == 0, result.output
    assert out.exists()


@pytest.mark.parametrize(
    ("start", "ok"),
    [
        ("2025-03-01T00:00:00.123456789Z", False),
        ("2025-03-01 00:00:00.1234567+01:00", False),
        ("2025-03-01T00:00:00.123456000Z", True),
        ("2025-03-01T00:00:00.123456Z", True),
    ],
)
def test_a_workload_start_finer_than_a_microsecond_is_e605_not_cut(
    tmp_path: Path, start: str, ok: bool
) -> None:
    workload = tmp_path / "w.toml"
    workload.write_text(f"start = {start}\n" + WORKLOAD, encoding="utf-8")
    result = run("simulate", SIMULATE / "drafts.spot", "--workload", workload)
    no_traceback(result)
    if ok:
        assert result.exit_code == 0, result.output
    else:
        assert result.exit_code == 2
        assert f"w.toml:1:1: error[E605]: `start` `{start}` is finer than a microsecond" in (
            result.output
        )


def test_two_drafts_whose_trace_files_would_be_one_are_e502_naming_both(tmp_path: Path) -> None:
    terms = tmp_path / "t.spot"
    one = 'contract "NAME" {\n  currency USD\n  rate 1.00 USD per gpu_hour\n}\n'
    terms.write_text(one.replace("NAME", "a/b") + one.replace("NAME", "a_b"), encoding="utf-8")
    traces = tmp_path / "traces"
    result = run("rehearse", terms, "--mock", "--trace-out", traces)
    no_traceback(result)
    assert result.exit_code == 2, result.output
    assert (
        f"error[E502]: `--trace-out {traces}`: the drafts `a/b` and `a_b` would both be "
        f"written to `{traces / 'a_b.parquet'}`"
    ) in result.output
    assert not traces.exists()
