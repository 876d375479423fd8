"""Bad-input sweep: standard streams that cannot be written, and SIGTERM/SIGHUP mid-write.

These run the real entry point (``python -m contractlang``) in a child process: the streams
are tagged and the signals handled there, not in typer's in-process test runner."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
RULESET = ROOT / "rulesets" / "aws-ec2-spot-linux.spot"
FULL = Path("/dev/full")

needs_dev_full = pytest.mark.skipif(not FULL.exists(), reason="no /dev/full")


def _run(
    args: list[str], *, stdout_full: bool = False, stderr_full: bool = False
) -> tuple[int, str]:
    """``contractlang ARGS`` with standard output and/or error on /dev/full: the exit code,
    and what reached the stream that was not full."""
    with open(FULL, "w") as full:
        done = subprocess.run(
            [sys.executable, "-m", "contractlang", *args],
            check=False,
            stdout=full if stdout_full else subprocess.PIPE,
            stderr=full if stderr_full else subprocess.PIPE,
            text=True,
            cwd=ROOT,
            timeout=120,
        )
    return done.returncode, (done.stdout or "") + (done.stderr or "")


@needs_dev_full
@pytest.mark.parametrize(
    "args", [["--help"], ["evaluate", "--help"], ["trace", "generate", "--help"], ["--version"]]
)
def test_help_and_version_to_a_full_stdout_are_e501_not_a_traceback(args: list[str]) -> None:
    code, shown = _run(args, stdout_full=True)
    assert code == 2
    assert "Traceback" not in shown
    assert "error[E501]: cannot write standard output: no space left on device" in shown


@needs_dev_full
def test_diagnostics_to_a_full_stderr_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.spot"
    bad.write_text("bad bad\n")
    code, shown = _run(["check", str(bad)], stderr_full=True)
    assert (code, shown) == (2, "")


@needs_dev_full
def test_a_note_to_a_full_stderr_is_an_output_failure_exit_2() -> None:
    code, shown = _run(["check", str(RULESET)], stderr_full=True)
    assert (code, shown) == (2, "")


@needs_dev_full
def test_a_usage_error_to_a_full_stderr_keeps_exit_2() -> None:
    code, shown = _run(["chekc"], stderr_full=True)
    assert (code, shown) == (2, "")


@needs_dev_full
def test_both_streams_full_exit_2_quietly() -> None:
    with open(FULL, "w") as full:
        done = subprocess.run(
            [sys.executable, "-m", "contractlang", "--help"],
            check=False,
            stdout=full,
            stderr=full,
            cwd=ROOT,
            timeout=120,
        )
    assert done.returncode == 2


#: A child that runs ``contractlang fmt FILE`` with the write made slow: it writes half the
#: text, says so in ``MARKER``, and waits to be signalled.
_SLOW_WRITE = textwrap.dedent(
    """
    import pathlib, sys, time
    marker = pathlib.Path(sys.argv[1])
    real = pathlib.Path.write_text

    def slow(self, text, *args, **kwargs):
        real(self, text[: len(text) // 2], *args, **kwargs)
        real(marker.with_suffix(".part"), self.name)
        marker.with_suffix(".part").rename(marker)
        time.sleep(60)
        return real(self, text, *args, **kwargs)

    pathlib.Path.write_text = slow
    sys.argv = ["contractlang", "fmt", sys.argv[2]]
    from contractlang.cli.app import main
    main()
    """
)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_a_signal_mid_write_leaves_no_tmp_file_and_the_target_untouched(
    tmp_path: Path, sig: signal.Signals
) -> None:
    target = tmp_path / "terms.spot"
    before = RULESET.read_text().replace("  currency USD", "      currency   USD")
    target.write_text(before)
    marker = tmp_path / "writing"
    child = subprocess.Popen(
        [sys.executable, "-c", _SLOW_WRITE, str(marker), str(target)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not marker.exists():
            assert child.poll() is None, child.communicate()
            assert time.monotonic() < deadline, "the write never started"
            time.sleep(0.05)
        assert marker.read_text().endswith(".tmp")  # written beside the target
        assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
        child.send_signal(sig)
        _, errors = child.communicate(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == 130, errors
    assert "Traceback" not in errors
    assert sorted(p.name for p in tmp_path.iterdir()) == ["terms.spot", "writing"]
    assert target.read_text() == before


def test_a_signal_ignored_at_start_stays_ignored() -> None:
    """``nohup``-style: a command started with SIGHUP ignored keeps ignoring it."""
    script = textwrap.dedent(
        """
        import signal
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        from contractlang.cli import common
        common.stop_on_signals()
        assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
        assert signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL
        """
    )
    done = subprocess.run([sys.executable, "-c", script], check=False, cwd=ROOT, timeout=60)
    assert done.returncode == 0
