"""Files are never lost and never the cause of an internal error: no output overwrites an input
or another output, writes are atomic, symlinks are written through, devices and FIFOs are
written directly, and every failure to write — standard output included — is E501, exit 2."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import polars as pl
import pytest
from support.cli import no_traceback, run
from support.events import frame, released, started

from contractlang.cli import files
from contractlang.errors import ContractlangError

CONTRACT = 'contract "c" {\n  currency USD\n  rate 2.10 USD per gpu_hour\n}\n'
UNFORMATTED = 'contract "c" {currency USD rate 2 USD per gpu_hour}'


@pytest.fixture
def inputs(tmp_path: Path) -> tuple[Path, Path]:
    spot = tmp_path / "c.spot"
    spot.write_text(CONTRACT)
    t0 = datetime(2025, 1, 1, tzinfo=UTC)
    rows = [
        {**started("r1", "a1", 0, 8), "ts": t0},
        {**released("r1", "a1", 0), "ts": t0 + timedelta(hours=1)},
    ]
    trace = tmp_path / "t.parquet"
    frame(rows).write_parquet(trace)
    return spot, trace


def cli(*args: object, stdout: int | None = None) -> subprocess.CompletedProcess[bytes]:
    """The real command in a child process (for what stdout itself does)."""
    return subprocess.run(
        [sys.executable, "-m", "contractlang", *map(str, args)],
        stdout=stdout if stdout is not None else subprocess.PIPE,
        stderr=subprocess.PIPE,
        check=False,
    )


# --------------------------------------------------------------------------- planned outputs


@pytest.mark.parametrize("flag", ["--ledger", "--runs"])
def test_an_output_may_not_overwrite_the_trace(inputs: tuple[Path, Path], flag: str) -> None:
    spot, trace = inputs
    before = trace.read_bytes()
    result = run("evaluate", spot, trace, flag, trace)
    no_traceback(result)
    assert result.exit_code == 2
    assert f"error[E502]: `{flag} {trace}` would overwrite the input `{trace}`" in result.stderr
    assert trace.read_bytes() == before


def test_an_output_may_not_overwrite_a_terms_file_even_through_a_link(
    inputs: tuple[Path, Path], tmp_path: Path
) -> None:
    spot, trace = inputs
    link = tmp_path / "link.csv"
    link.symlink_to(spot)
    result = run("evaluate", spot, trace, "--runs", link)
    assert result.exit_code == 2
    assert "would overwrite the input" in result.stderr
    assert spot.read_text() == CONTRACT


@pytest.mark.parametrize("flag", ["--ledger", "--runs", "--report"])
def test_an_output_name_the_system_refuses_is_e502(
    inputs: tuple[Path, Path], tmp_path: Path, flag: str
) -> None:
    """A file name of 300 bytes (the limit is 255): the check of the path itself failed with
    OSError (exit 3), before any work."""
    spot, trace = inputs
    target = tmp_path / ("n" * 300 + (".html" if flag == "--report" else ".csv"))
    result = run("evaluate", spot, trace, flag, target)
    no_traceback(result)
    assert result.exit_code == 2
    assert f"error[E502]: `{flag} {target}`: file name too long" in result.stderr


def test_two_outputs_may_not_be_one_file(inputs: tuple[Path, Path], tmp_path: Path) -> None:
    spot, trace = inputs
    same = tmp_path / "x.csv"
    other = tmp_path / "sub" / ".." / "x.csv"
    (tmp_path / "sub").mkdir()
    result = run("evaluate", spot, trace, "--ledger", same, "--runs", other)
    assert result.exit_code == 2
    assert f"`--runs {other}` is the same file as `--ledger {same}`" in result.stderr
    assert not same.exists()  # refused before any work


def test_trace_facts_outputs_are_planned_too(inputs: tuple[Path, Path], tmp_path: Path) -> None:
    _, trace = inputs
    out = tmp_path / "f.parquet"
    result = run("trace", "facts", trace, "--out", out, "--runs-out", out)
    assert result.exit_code == 2
    assert "is the same file as" in result.stderr
    result = run("trace", "facts", trace, "--out", trace)
    assert result.exit_code == 2
    assert "would overwrite the input" in result.stderr


# --------------------------------------------------------------------------- atomic writes


def test_a_failed_write_leaves_the_old_file_and_no_temporary(
    inputs: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spot, trace = inputs
    ledger = tmp_path / "ledger.parquet"
    ledger.write_bytes(b"the ledger of last month")

    def half_then_fail(self: pl.DataFrame, path: Path, **kw: object) -> None:
        Path(path).write_bytes(b"PAR1 half a file")
        raise pl.exceptions.ComputeError("No space left on device (os error 28): " + str(path))

    monkeypatch.setattr(pl.DataFrame, "write_parquet", half_then_fail)
    result = run("evaluate", spot, trace, "--ledger", ledger)
    no_traceback(result)
    assert result.exit_code == 2
    assert f"error[E501]: cannot write `{ledger}`: no space left on device" in result.stderr
    assert ledger.read_bytes() == b"the ledger of last month"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.spot", "ledger.parquet", "t.parquet"]


def test_a_symlinked_output_is_written_through_and_the_link_stays(
    inputs: tuple[Path, Path], tmp_path: Path
) -> None:
    spot, trace = inputs
    real = tmp_path / "real.csv"
    real.write_text("old\n")
    link = tmp_path / "ledger.csv"
    link.symlink_to(real)
    result = run("evaluate", spot, trace, "--ledger", link)
    assert result.exit_code == 0, result.output
    assert link.is_symlink()
    assert real.read_text().startswith("contract,run_id,alloc_id,kind")


def test_an_existing_output_keeps_its_mode(inputs: tuple[Path, Path], tmp_path: Path) -> None:
    spot, trace = inputs
    runs = tmp_path / "runs.csv"
    runs.write_text("old\n")
    runs.chmod(0o640)
    assert run("evaluate", spot, trace, "--runs", runs).exit_code == 0
    assert stat.S_IMODE(runs.stat().st_mode) == 0o640
    assert runs.read_text().startswith("contract,run_id")


def test_a_device_is_written_directly_and_its_error_reported(
    inputs: tuple[Path, Path], tmp_path: Path
) -> None:
    spot, trace = inputs
    full = tmp_path / "full.csv"
    full.symlink_to("/dev/full")
    result = run("evaluate", spot, trace, "--ledger", full)
    no_traceback(result)
    assert result.exit_code == 2
    assert f"error[E501]: cannot write `{full}`: no space left on device" in result.stderr


def test_a_fifo_is_written_directly(inputs: tuple[Path, Path], tmp_path: Path) -> None:
    spot, trace = inputs
    fifo = tmp_path / "runs.csv"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    result = run("evaluate", spot, trace, "--runs", fifo)
    reader.join(timeout=30)
    assert result.exit_code == 0, result.output
    assert got
    assert got[0].startswith(b"contract,run_id")
    assert stat.S_ISFIFO(fifo.stat().st_mode)


def test_csv_cannot_hold_a_nested_column(tmp_path: Path) -> None:
    t0 = datetime(2025, 1, 1, tzinfo=UTC)
    trace = tmp_path / "t.parquet"
    frame(
        [
            {**started("r1", "a1", 0, 8), "ts": t0, "meta": {"team": "llm"}},
            {**released("r1", "a1", 0), "ts": t0 + timedelta(hours=1), "meta": {"team": "llm"}},
        ]
    ).write_parquet(trace)
    out = tmp_path / "facts.csv"
    result = run("trace", "facts", trace, "--out", out)
    no_traceback(result)
    assert result.exit_code == 2
    assert "CSV cannot hold column `trace.meta`, which holds records or lists" in result.stderr
    assert not out.exists()


def test_write_file_replaces_atomically(tmp_path: Path) -> None:
    target = tmp_path / "a.csv"
    target.write_text("old")
    files.write_file(target, lambda p: p.write_text("new"))
    assert target.read_text() == "new"
    assert [p.name for p in tmp_path.iterdir()] == ["a.csv"]


def _pair(tmp_path: Path) -> tuple[Path, Path, tuple[int, int]]:
    """Two files with old text; the first's identity (device, inode)."""
    first, second = tmp_path / "expected.json", tmp_path / "expected-ledger.csv"
    first.write_text("old json")
    second.write_text("old csv")
    st = first.stat()
    return first, second, (st.st_dev, st.st_ino)


def _replace_failing_at(
    monkeypatch: pytest.MonkeyPatch, failing: Path, exc: BaseException, *, after: bool = False
) -> None:
    """``os.replace`` onto ``failing`` raises ``exc`` (before renaming, or after it with
    ``after``); every other rename is done."""
    real = os.replace

    def replace(src: object, dst: object) -> None:
        if Path(str(dst)) == failing and not after:
            raise exc
        real(src, dst)  # type: ignore[arg-type]
        if Path(str(dst)) == failing:
            raise exc

    monkeypatch.setattr(os, "replace", replace)


def test_write_together_writes_every_file(tmp_path: Path) -> None:
    first, second, _ = _pair(tmp_path)
    third = tmp_path / "new.csv"
    files.write_together(
        [
            (p, lambda t, n=n: t.write_text(n))
            for p, n in ((first, "1"), (second, "2"), (third, "3"))
        ]
    )
    assert [p.read_text() for p in (first, second, third)] == ["1", "2", "3"]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["expected.json", "expected-ledger.csv", "new.csv"]
    )  # no temporary file, no old file's second name


@pytest.mark.parametrize("links", [True, False], ids=["hard link", "no hard links: a copy"])
def test_a_failed_second_rename_puts_the_first_file_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, links: bool
) -> None:
    first, second, identity = _pair(tmp_path)
    if not links:

        def no_link(src: object, dst: object) -> None:
            raise OSError(1, "Operation not permitted")

        monkeypatch.setattr(os, "link", no_link)
    _replace_failing_at(monkeypatch, second, OSError(28, "No space left on device"))
    with pytest.raises(ContractlangError) as failed:
        files.write_together(
            [
                (first, lambda t: t.write_text("new json")),
                (second, lambda t: t.write_text("new csv")),
            ]
        )
    (diag,) = failed.value.diagnostics
    assert diag.code == "E501"
    assert diag.message == f"cannot write `{second}`: no space left on device"
    assert first.read_text() == "old json"
    assert second.read_text() == "old csv"
    if links:  # the very file it was, put back under its name
        assert (first.stat().st_dev, first.stat().st_ino) == identity
    assert sorted(p.name for p in tmp_path.iterdir()) == ["expected-ledger.csv", "expected.json"]


def test_a_signal_between_the_renames_puts_the_first_file_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Ctrl-C (or SIGTERM, SIGHUP: cli.common.Interrupted) just after the first rename
    first, second, identity = _pair(tmp_path)
    _replace_failing_at(monkeypatch, first, KeyboardInterrupt(), after=True)
    with pytest.raises(KeyboardInterrupt):
        files.write_together(
            [
                (first, lambda t: t.write_text("new json")),
                (second, lambda t: t.write_text("new csv")),
            ]
        )
    assert (first.read_text(), second.read_text()) == ("old json", "old csv")
    assert (first.stat().st_dev, first.stat().st_ino) == identity
    assert sorted(p.name for p in tmp_path.iterdir()) == ["expected-ledger.csv", "expected.json"]


def test_a_new_file_is_removed_again_when_the_next_cannot_be_renamed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    new, old = tmp_path / "expected.json", tmp_path / "expected-ledger.csv"
    old.write_text("old csv")
    _replace_failing_at(monkeypatch, old, OSError(5, "Input/output error"))
    with pytest.raises(ContractlangError):
        files.write_together(
            [(new, lambda t: t.write_text("new json")), (old, lambda t: t.write_text("new csv"))]
        )
    assert [p.name for p in tmp_path.iterdir()] == ["expected-ledger.csv"]
    assert old.read_text() == "old csv"


def test_a_file_that_cannot_be_put_back_is_said_with_where_its_old_text_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second, _ = _pair(tmp_path)
    real = os.replace

    def replace(src: object, dst: object) -> None:
        if Path(str(dst)) == second or str(src).endswith(".old"):  # the put-back fails too
            raise OSError(5, "Input/output error")
        real(src, dst)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(ContractlangError) as failed:
        files.write_together(
            [
                (first, lambda t: t.write_text("new json")),
                (second, lambda t: t.write_text("new csv")),
            ]
        )
    (kept,) = tmp_path.glob(".expected.json.*.old")
    assert failed.value.diagnostics[0].message == (
        f"cannot write `{second}`: input/output error; `{first}` was written and could not be "
        f"put back (its old text is in `{kept}`)"
    )
    assert kept.read_text() == "old json"
    assert first.read_text() == "new json"
    assert second.read_text() == "old csv"


@pytest.mark.parametrize("spoil", ["folder", "read-only", "under a file", "loop"])
def test_a_file_that_cannot_be_written_is_refused_before_any_is(tmp_path: Path, spoil: str) -> None:
    first, second, _ = _pair(tmp_path)
    if spoil == "folder":
        second.unlink()
        second.mkdir()
        reason = "it is a folder"
    elif spoil == "read-only":
        second.chmod(0o444)  # refused by its mode, as root too
        reason = "the file is read-only"
    elif spoil == "under a file":
        second = first / "expected-ledger.csv"
        reason = "not a directory"
    else:
        second.unlink()
        second.symlink_to(second.name)
        reason = "it is a symbolic link that loops"
    before = sorted(p.name for p in tmp_path.iterdir())
    with pytest.raises(ContractlangError) as failed:
        files.write_together(
            [
                (first, lambda t: t.write_text("new json")),
                (second, lambda t: t.write_text("new csv")),
            ]
        )
    assert failed.value.diagnostics[0].message == f"cannot write `{second}`: {reason}"
    assert first.read_text() == "old json"
    assert sorted(p.name for p in tmp_path.iterdir()) == before


# --------------------------------------------------------------------------- standard output


def test_a_full_standard_output_is_e501(inputs: tuple[Path, Path]) -> None:
    spot, trace = inputs
    with open("/dev/full", "wb") as full:
        proc = cli("evaluate", spot, trace, "--format", "json", stdout=full.fileno())
    assert proc.returncode == 2
    assert b"error[E501]: cannot write standard output: no space left on device" in proc.stderr
    assert b"Traceback" not in proc.stderr


def test_a_closed_standard_output_is_e501(inputs: tuple[Path, Path]) -> None:
    spot, trace = inputs
    proc = subprocess.run(
        f'"{sys.executable}" -m contractlang evaluate "{spot}" "{trace}" >&-',
        shell=True,
        capture_output=True,
        check=False,
    )
    assert proc.returncode == 2
    assert b"error[E501]: cannot write standard output: it is closed" in proc.stderr
    assert proc.stderr.count(b"E501") == 1
    assert b"Traceback" not in proc.stderr


def test_a_pipe_closed_by_its_reader_ends_quietly(tmp_path: Path) -> None:
    big = tmp_path / "big.ndjson"
    assert run("trace", "generate", "--runs", "300", "--out", big).exit_code == 0
    proc = subprocess.run(
        f'"{sys.executable}" -m contractlang trace validate "{big}" --format json | head -c 20',
        shell=True,
        capture_output=True,
        check=False,
        executable="/bin/bash",
    )
    assert proc.returncode == 0
    assert proc.stderr == b""


# --------------------------------------------------------------------------- fmt


def test_fmt_writes_through_a_symlink_and_keeps_the_mode(tmp_path: Path) -> None:
    real = tmp_path / "real.spot"
    real.write_text(UNFORMATTED)
    real.chmod(0o640)
    link = tmp_path / "link.spot"
    link.symlink_to(real)
    result = run("fmt", link)
    assert result.exit_code == 0, result.output
    assert link.is_symlink()
    assert real.read_text() == 'contract "c" {\n  currency USD\n  rate 2 USD per gpu_hour\n}\n'
    assert stat.S_IMODE(real.stat().st_mode) == 0o640


def test_fmt_refuses_a_read_only_file(tmp_path: Path) -> None:
    path = tmp_path / "ro.spot"
    path.write_text(UNFORMATTED)
    path.chmod(0o444)
    result = run("fmt", path)
    no_traceback(result)
    assert result.exit_code == 2
    assert f"error[E501]: cannot write `{path}`: the file is read-only" in result.stderr
    assert path.read_text() == UNFORMATTED


def test_check_takes_directories_and_standard_input(tmp_path: Path) -> None:
    (tmp_path / "a.spot").write_text(CONTRACT)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.spot").write_text(CONTRACT.replace('"c"', '"d"'))
    result = run("check", tmp_path)
    assert result.exit_code == 0
    assert "checked 2 files: no problems" in result.stderr
    piped = run("check", "-", input=CONTRACT)
    assert piped.exit_code == 0
    assert "checked 1 file: no problems" in piped.stderr


def test_a_symlink_that_loops_is_refused_and_stays_a_link(
    inputs: tuple[Path, Path], tmp_path: Path
) -> None:
    """Writing "through" a link that points at itself (or round a cycle) would replace the
    link with a file: the output is refused before any work (E502), and a write that meets
    one anyway is E501; the links stay as they were."""
    spot, trace = inputs
    loop = tmp_path / "loop.csv"
    loop.symlink_to(loop.name)
    one, two = tmp_path / "one.csv", tmp_path / "two.csv"
    one.symlink_to(two.name)
    two.symlink_to(one.name)
    for link in (loop, one):
        result = run("evaluate", spot, trace, "--ledger", link)
        assert result.exit_code == 2, result.output
        assert f"error[E502]: `--ledger {link}`: it is a symbolic link that loops" in (
            result.stderr
        )
        no_traceback(result)
    folder = tmp_path / "out"
    folder.symlink_to(folder.name)
    with pytest.raises(ContractlangError) as planned:
        files.Outputs().add_folder(folder, "--trace-out")
    assert planned.value.diagnostics[0].code == "E502"
    assert planned.value.diagnostics[0].message.endswith("it is a symbolic link that loops")
    with pytest.raises(ContractlangError) as written:
        files.write_file(loop, lambda p: p.write_text("x"))
    assert written.value.diagnostics[0].code == "E501"
    assert written.value.diagnostics[0].message.endswith("it is a symbolic link that loops")
    inside = folder / "ledger.csv"  # the output is no link, a folder on its way is
    result = run("evaluate", spot, trace, "--ledger", inside)
    assert result.exit_code == 2, result.output
    assert f"`--ledger {inside}`: a folder on its way is a symbolic link that loops" in (
        result.stderr
    )
    assert [p.is_symlink() for p in (loop, one, two, folder)] == [True] * 4
    assert os.readlink(loop) == loop.name
    assert not list(tmp_path.glob(".*.tmp"))


# --------------------------------------------------------------------------- non-UTF-8 names


def _latin1(folder: Path, name: bytes) -> Path:
    """A path whose name holds a byte that is not UTF-8 (`\\xff`), as Python keeps it."""
    return folder / os.fsdecode(name)


@pytest.mark.parametrize(
    "command",
    [
        ["evaluate", "{spot}", "{trace}"],
        ["evaluate", "{spot}", "{trace}", "--shards", "2"],
        ["compare", "{spot}", "{trace}"],
        ["reconcile", "{spot}", "{trace}"],
        ["trace", "validate", "{trace}"],
        ["trace", "merge", "{trace}", "{trace}", "--out", "{out}"],
    ],
)
def test_a_trace_whose_name_is_not_utf8_is_t017(
    inputs: tuple[Path, Path], tmp_path: Path, command: list[str]
) -> None:
    """polars cannot take such a name (it ended in exit 3): T017 says why, exit 2."""
    spot, good = inputs
    trace = _latin1(tmp_path, b"t\xff.parquet")
    trace.write_bytes(good.read_bytes())
    args = [a.format(spot=spot, trace=trace, out=tmp_path / "m.parquet") for a in command]
    result = run(*args)
    no_traceback(result)
    assert result.exit_code == 2, result.output
    assert "error[T017]" in result.output
    assert "its name is not UTF-8 text" in result.output


def test_an_output_whose_name_is_not_utf8_is_e502(
    inputs: tuple[Path, Path], tmp_path: Path
) -> None:
    spot, trace = inputs
    out = _latin1(tmp_path, b"ledger\xff.csv")
    result = run("evaluate", spot, trace, "--ledger", out)
    no_traceback(result)
    assert result.exit_code == 2
    assert "error[E502]" in result.output
    assert "its name is not UTF-8 text" in result.output
    assert not out.exists()


def test_an_import_of_a_file_whose_name_is_not_utf8_names_its_default_output(
    tmp_path: Path,
) -> None:
    """The default output takes the input's name: refused before any work, E502."""
    src = _latin1(tmp_path, b"jobs\xff.txt")
    src.write_bytes((Path(__file__).parent / "data" / "sacct_requeue.txt").read_bytes())
    result = run("import", "sacct", src, "--tz", "UTC")
    no_traceback(result)
    assert result.exit_code == 2
    assert "error[E502]" in result.output
    # given an output with a UTF-8 name, the same file imports
    ok = run("import", "sacct", src, "--tz", "UTC", "--out", tmp_path / "jobs.parquet")
    assert ok.exit_code == 0, ok.output


def test_a_focus_parquet_whose_name_is_not_utf8_is_i001(tmp_path: Path) -> None:
    src = _latin1(tmp_path, b"invoice\xff.parquet")
    pl.DataFrame({"BilledCost": ["1.00"]}).write_parquet(tmp_path / "x.parquet")
    src.write_bytes((tmp_path / "x.parquet").read_bytes())
    result = run("import", "focus", src, "--run-from", "resource", "--out", tmp_path / "o.parquet")
    no_traceback(result)
    assert result.exit_code == 2
    assert "error[I001]" in result.output
    assert "its name is not UTF-8 text" in result.output
