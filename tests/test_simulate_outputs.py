"""`simulate`'s files: every input (the availability trace too) and every output (each
`--trace-out DIR/<contract>.parquet` too) is planned before any work, so no output overwrites an
input or another output; nothing is made before the inputs are checked; a failure leaves no
trace changed, nothing half-written, and no folder the command made."""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from support.cli import no_traceback, run
from support.workloads import write_workload

from contractlang.cli.files import Outputs
from contractlang.errors import ContractlangError

ROOT = Path(__file__).resolve().parents[1]
#: priority and priority-at-par share a trace (the same promises); basic has its own
TERMS = (ROOT / "examples" / "simulate" / "drafts.spot").read_text(encoding="utf-8")
# an availability trace with capacity most of the time (Bamboo add/remove rows, in ms)
BAMBOO = "0,add,n1\n36000000,remove,n1\n36600000,add,n1\n72000000,remove,n1\n"


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "t.spot").write_text(TERMS)
    write_workload(tmp_path, runs=20)
    return tmp_path


def simulate(files: Path, *args: object, workload: str = "w.toml") -> Any:
    result = run("simulate", files / "t.spot", "--workload", files / workload,
                 "--resamples", 100, *args)  # fmt: skip
    no_traceback(result)
    return result


def test_an_output_may_not_overwrite_the_availability_trace(files: Path) -> None:
    (files / "avail.csv").write_text(BAMBOO)
    write_workload(files, "a.toml", runs=20, rate_per_hour=None, trace="avail.csv",
                   replacement=False)  # fmt: skip
    for flag in ("--runs", "--ledger"):
        result = simulate(files, flag, files / "avail.csv", workload="a.toml")
        assert result.exit_code == 2
        assert (
            f"error[E502]: `{flag} {files / 'avail.csv'}` would overwrite the input "
            f"`{files / 'avail.csv'}`" in result.stderr
        )
        assert (files / "avail.csv").read_text() == BAMBOO
    # another spelling of the same file counts as the file
    (files / "sub").mkdir()
    result = simulate(files, "--runs", files / "sub" / ".." / "avail.csv", workload="a.toml")
    assert result.exit_code == 2
    assert "would overwrite the input" in result.stderr
    assert (files / "avail.csv").read_text() == BAMBOO


def test_a_trace_may_not_be_another_output(files: Path) -> None:
    (files / "td").mkdir()
    old = pl.DataFrame({"kept": [1]})
    old.write_parquet(files / "td" / "basic.parquet")
    before = (files / "td" / "basic.parquet").read_bytes()
    result = simulate(files, "--trace-out", files / "td", "--runs", files / "td" / "basic.parquet")
    assert result.exit_code == 2
    assert (
        f"error[E502]: `--trace-out {files / 'td' / 'basic.parquet'}` is the same file as "
        f"`--runs {files / 'td' / 'basic.parquet'}`" in result.stderr
    )
    assert (files / "td" / "basic.parquet").read_bytes() == before  # nothing was written
    assert sorted(p.name for p in (files / "td").iterdir()) == ["basic.parquet"]


def test_outputs_in_a_folder_still_to_be_made_are_checked_and_nothing_is_made(files: Path) -> None:
    td = files / "new"
    result = simulate(files, "--trace-out", td, "--ledger", td / "priority.parquet")
    assert result.exit_code == 2
    assert f"`--trace-out {td / 'priority.parquet'}` is the same file as `--ledger" in result.stderr
    assert not td.exists()
    # an output in the folder that is not a trace is fine: written once the folder is made
    result = simulate(files, "--trace-out", td, "--runs", td / "runs.csv")
    assert result.exit_code == 0  # no budget
    assert sorted(p.name for p in td.iterdir()) == [
        "basic.parquet", "priority-at-par.parquet", "priority.parquet", "runs.csv"
    ]  # fmt: skip


def test_the_trace_folder_may_not_be_an_output_file(files: Path) -> None:
    out = files / "x.parquet"
    result = simulate(files, "--runs", out, "--trace-out", out)
    assert result.exit_code == 2
    assert f"`--runs {out}` is the same path as `--trace-out {out}`" in result.stderr
    assert not out.exists()
    (files / "file").write_text("")
    result = simulate(files, "--trace-out", files / "file")
    assert result.exit_code == 2
    assert f"`--trace-out {files / 'file'}` is a file, not a folder" in result.stderr
    result = simulate(files, "--trace-out", files / "no" / "such")
    assert result.exit_code == 2
    assert f"the folder `{files / 'no'}` does not exist" in result.stderr
    assert not (files / "no").exists()


def test_a_folder_where_a_trace_must_go_is_e502_before_any_work(files: Path) -> None:
    (files / "out" / "basic.parquet").mkdir(parents=True)
    result = simulate(files, "--trace-out", files / "out")
    assert result.exit_code == 2
    assert f"`--trace-out {files / 'out' / 'basic.parquet'}`: " in result.stderr
    assert "is a folder" in result.stderr
    assert sorted(p.name for p in (files / "out").iterdir()) == ["basic.parquet"]


@pytest.mark.parametrize("broken", ["workload", "terms"])
def test_bad_inputs_make_no_trace_folder(files: Path, broken: str) -> None:
    if broken == "workload":
        write_workload(files, runs=0)  # `runs` must be at least 1
    else:
        (files / "t.spot").write_text('contract "c" {\n  currency USD\n  rate 2 USD\n}\n')
    result = simulate(files, "--trace-out", files / "td", "--runs", files / "r.csv")
    assert result.exit_code == 2
    assert "error[E" in result.stderr
    assert not (files / "td").exists()
    assert not (files / "r.csv").exists()


def fail_on_sink(monkeypatch: pytest.MonkeyPatch, call: int) -> None:
    """The ``call``-th Parquet sink fails as a full disk would."""
    real = pl.LazyFrame.sink_parquet
    calls = []

    def sink(self: pl.LazyFrame, path: Any, *args: Any, **kwargs: Any) -> Any:
        calls.append(path)
        if len(calls) == call:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(self, path, *args, **kwargs)

    monkeypatch.setattr(pl.LazyFrame, "sink_parquet", sink)


def test_a_failed_trace_leaves_every_trace_as_it_was(
    files: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    td = files / "td"
    td.mkdir()
    (td / "priority.parquet").write_text("the old trace")
    fail_on_sink(monkeypatch, 2)  # the first trace (priority's) is written; basic's fails
    result = simulate(files, "--trace-out", td)
    assert result.exit_code == 2
    assert "error[E501]: cannot write `" in result.stderr
    assert "no space left on device" in result.stderr
    # priority's new trace was never put in place: the old one stays, and nothing else is there
    assert (td / "priority.parquet").read_text() == "the old trace"
    assert sorted(p.name for p in td.iterdir()) == ["priority.parquet"]


def test_a_failure_removes_the_trace_folder_the_command_made(
    files: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fail_on_sink(monkeypatch, 1)
    result = simulate(files, "--trace-out", files / "td")
    assert result.exit_code == 2
    assert "error[E501]" in result.stderr
    assert not (files / "td").exists()


def test_names_that_would_share_a_file_get_their_own(files: Path) -> None:
    named = TERMS.replace('"priority"', '"a b"').replace('"basic"', '"a_b"')
    (files / "n.spot").write_text(named.replace('"priority-at-par"', '"A_B"'))
    result = run("simulate", files / "n.spot", "--workload", files / "w.toml",
                 "--resamples", 100, "--trace-out", files / "td")  # fmt: skip
    no_traceback(result)
    assert result.exit_code == 0  # no budget
    # `a b` → `a_b`; `a_b` would be the same file, so it is `a_b-2`, and `A_B` (the same file
    # on a file system that ignores case) `A_B-3` (docs/simulate.md)
    assert sorted(p.name for p in (files / "td").iterdir()) == [
        "A_B-3.parquet", "a_b-2.parquet", "a_b.parquet"
    ]  # fmt: skip
    # `a b` and `A_B` make the same promises: one trace, two copies; `a_b`'s is another
    td = files / "td"
    assert (td / "a_b.parquet").read_bytes() == (td / "A_B-3.parquet").read_bytes()
    assert (td / "a_b.parquet").read_bytes() != (td / "a_b-2.parquet").read_bytes()


def test_a_long_name_is_cut_at_100_characters_and_stays_its_own(files: Path) -> None:
    # a 10,000-character name exited 3 (a file name too long); cut as `rehearse --trace-out`
    # cuts it, two names that share their first 100 characters still get a file each
    long = "n" * 10_000
    named = TERMS.replace('"priority"', f'"{long}a"').replace('"basic"', f'"{long}b"')
    (files / "n.spot").write_text(named)
    result = run("simulate", files / "n.spot", "--workload", files / "w.toml",
                 "--resamples", 100, "--trace-out", files / "td")  # fmt: skip
    no_traceback(result)
    assert result.exit_code == 0, result.output
    names = sorted(p.name for p in (files / "td").iterdir())
    assert "n" * 100 + ".parquet" in names
    assert "n" * 100 + "-2.parquet" in names


def test_outputs_plan_a_folder_to_be_made(tmp_path: Path) -> None:
    plan = Outputs([tmp_path / "in.csv"])
    plan.add_folder(tmp_path / "d", "--trace-out")
    plan.add(tmp_path / "d" / "a.parquet", "--trace-out")  # its folder does not exist yet
    with pytest.raises(ContractlangError) as info:
        plan.add(tmp_path / "d" / "a.parquet", "--runs")
    assert "is the same file as `--trace-out" in info.value.diagnostics[0].message
    with pytest.raises(ContractlangError) as info:
        plan.add(tmp_path / "e" / "a.parquet", "--ledger")  # not a folder to be made
    assert "does not exist" in info.value.diagnostics[0].message
    with pytest.raises(ContractlangError):
        plan.add_folder(tmp_path / "in.csv" / "x", "--trace-out")
    plan.add(tmp_path / "f.parquet", "--runs")
    with pytest.raises(ContractlangError) as info:
        plan.add_folder(tmp_path / "f.parquet", "--trace-out")
    assert "is the same path as `--runs" in info.value.diagnostics[0].message
    assert not (tmp_path / "d").exists()
    assert os.listdir(tmp_path) == []
