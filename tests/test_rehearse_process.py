"""The interrupt process is robust: a job that ignores the notice is still reclaimed at the
deadline, a job that ends by itself ends its allocation as released (status 0) or failed,
and no process of the job outlives its allocation or `rehearse` itself (process groups).

The jobs here are small Python scripts (:data:`JOB`) that write their pid, and the pid of a
`sleep` they start, to a file, so the tests can look for them in the process table.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import subprocess
import sys
import time
from collections import deque
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path
from typing import ClassVar

import polars as pl
import pytest
from support.cli import no_traceback, run

from contractlang.errors import ContractlangError
from contractlang.pipeline.language import terms_from_text
from contractlang.rehearse import (
    RehearsalReport,
    RehearsalSettings,
    allocation,
    process,
    rehearse,
    scheduler,
)
from contractlang.rehearse.settings import evenly

ROOT = Path(__file__).resolve().parents[1]

#: A job: ``python job.py MODE PIDS``. MODE holds words: `ignore` (SIGTERM ignored, once
#: noted in ``PIDS.noticed``), `hang` (in its first allocation, stops reporting after step 5
#: and sleeps), `child` (starts a `sleep 60` in its group), `exit0` / `exit3` (ends with that
#: status after step 3), `events` (reports through $CONTRACTLANG_EVENTS instead of stdout),
#: `stop` (on SIGTERM, exits with status 0 after its next step, before its total), `linger`
#: (SIGTERM held back until it has reported its verdict, then it sleeps: SIGTERM kills it).
JOB = """
import hashlib, json, os, signal, subprocess, sys, time
mode, pids = sys.argv[1], sys.argv[2]
first = os.environ["CONTRACTLANG_ALLOC_ID"].endswith("-a1")
def note(pid):
    with open(pids, "a") as f:
        f.write(f"{pid}\\n")
note(os.getpid())
if "child" in mode:
    note(subprocess.Popen(["sleep", "60"]).pid)
noticed = []
def on_term(*_):
    noticed.append(1)
    open(pids + ".noticed", "a").close()
if "ignore" in mode or "stop" in mode:
    signal.signal(signal.SIGTERM, on_term)
if "linger" in mode:  # the notice waits until the verdict is out
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
def say(word, *rest, **fields):
    if "events" in mode:
        with open(os.environ["CONTRACTLANG_EVENTS"], "a") as f:
            f.write(json.dumps({"event": word, **fields}) + "\\n")
    else:
        print("contractlang:", word, *rest, flush=True)
say("total", 10, steps=10)
for i in range(1, 11):
    time.sleep(0.03)
    say("step", i, step=i)
    if i == 4 and "events" in mode:
        path = os.path.join(os.environ["CONTRACTLANG_CHECKPOINT_DIR"], "c4.bin")
        data = b"state after step 4"
        with open(path, "wb") as f:
            f.write(data)
        say("checkpoint", 4, path, step=4, path=path, sha256=hashlib.sha256(data).hexdigest())
        with open(os.environ["CONTRACTLANG_EVENTS"], "a") as f:
            f.write("{not json\\n")
    if i == 3 and "exit0" in mode:
        sys.exit(0)
    if i == 3 and "exit3" in mode:
        print("boom: the job broke", file=sys.stderr)
        sys.exit(3)
    if i == 5 and "hang" in mode and first:
        time.sleep(60)
    if noticed and "stop" in mode:
        sys.exit(0)
say("accepted")
if "linger" in mode and first:
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
    time.sleep(60)
"""

TERMS = """
contract "c" {
  currency USD
  rate trace.price per gpu_hour
  promise reclaim notice 1 second
}
"""


def job(tmp: Path, mode: str) -> tuple[tuple[str, ...], Path]:
    script = tmp / "job.py"
    script.write_text(JOB)
    pids = tmp / "pids"
    return (sys.executable, str(script), mode, str(pids)), pids


def pids_of(path: Path) -> list[int]:
    return [int(x) for x in path.read_text().split()] if path.exists() else []


def running(pid: int) -> bool:
    """In the process table and not a zombie."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


def group_gone(pgid: int, within: float = 10.0) -> bool:
    """``os.killpg(pgid, 0)`` fails: no process (not even a zombie) is left in the group.
    Zombies wait for PID 1 to reap them, which can take a second or two here."""
    deadline = time.monotonic() + within
    while True:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)


def run_job(
    tmp: Path, mode: str, terms: str = TERMS, at: tuple[Fraction, ...] = (Fraction(1, 2),)
) -> tuple[RehearsalReport, list[int], float]:
    argv, pids = job(tmp, mode)
    settings = RehearsalSettings(argv, "job", interrupts=at)
    began = time.monotonic()
    report = rehearse(terms_from_text(terms, "t.spot"), settings)
    return report, pids_of(pids), time.monotonic() - began


def ends(report: RehearsalReport) -> list[str]:
    (r,) = report.rehearsals
    return [a.end_reason for a in r.record.allocations]


def codes(report: RehearsalReport) -> list[str]:
    (r,) = report.rehearsals
    return [w.code for w in r.record.warnings]


def test_a_job_that_ignores_the_notice_is_reclaimed_at_the_deadline(tmp_path: Path) -> None:
    report, pids, took = run_job(tmp_path, "ignore hang child")
    assert ends(report) == ["reclaimed", "released"]
    (r,) = report.rehearsals
    a1 = r.record.allocations[0]
    assert a1.notice_us is not None
    assert a1.end_us - a1.notice_us == 1_000_000  # the promised second, exactly
    assert a1.end_step == 5
    assert a1.returncode == -signal.SIGKILL
    assert took >= 1.0  # the scheduler really waited out the notice
    # a1's job and its `sleep`, a2's job and its `sleep` (left running when a2's job exited)
    assert len(pids) == 4
    assert [p for p in pids if running(p)] == []
    assert all(group_gone(p) for p in (pids[0], pids[2]))


def test_a_job_that_stops_early_on_the_notice_is_reclaimed_at_the_deadline(
    tmp_path: Path,
) -> None:
    # the job exits with status 0 at step 6 of 10, on the notice (at 5): not finished, so the
    # capacity stays the provider's until the deadline, and the next allocation goes on
    report, _pids, took = run_job(tmp_path, "stop")
    assert ends(report) == ["reclaimed", "released"]
    (r,) = report.rehearsals
    a1 = r.record.allocations[0]
    assert a1.notice_us is not None
    assert a1.end_us - a1.notice_us == 1_000_000  # the promised second, exactly
    assert a1.returncode == 0
    assert took >= 1.0  # the scheduler waited out the lead after the job had gone
    assert r.record.result == "accepted"


def test_a_job_reclaimed_after_reporting_its_verdict_is_not_started_again(
    tmp_path: Path,
) -> None:
    # the notice (at 100%: step 10) kills the job while it lingers after `accepted`: the
    # allocation is reclaimed at the deadline, and the run, which has its result, is over
    report, _, _ = run_job(tmp_path, "linger", at=(Fraction(1),))
    assert ends(report) == ["reclaimed"]
    (r,) = report.rehearsals
    (a1,) = r.record.allocations
    assert a1.returncode == -signal.SIGTERM
    assert a1.notice_us is not None
    assert a1.end_us - a1.notice_us == 1_000_000
    assert r.record.result == "accepted"
    assert r.trace.filter(pl.col("event") == "accepted").height == 1
    assert codes(report) == []


def test_a_job_that_exits_early_ends_its_allocation_as_released(tmp_path: Path) -> None:
    report, pids, _ = run_job(tmp_path, "exit0 child", at=())
    assert ends(report) == ["released"]
    (r,) = report.rehearsals
    assert r.record.allocations[0].end_step == 3
    assert r.record.result is None
    assert codes(report) == ["W706"]  # no verdict
    assert [p for p in pids if running(p)] == []  # the `sleep` went with the allocation
    assert group_gone(pids[0])


def test_a_job_that_exits_with_an_error_ends_its_allocation_as_failed(tmp_path: Path) -> None:
    report, pids, _ = run_job(tmp_path, "exit3", at=())
    assert ends(report) == ["failed"]
    (r,) = report.rehearsals
    assert r.record.allocations[0].returncode == 3
    (failure,) = [w for w in r.record.warnings if w.code == "W704"]
    assert "exited with status 3" in failure.message
    assert "boom: the job broke" in failure.message
    facts = r.contracts[0].allocations.row(0, named=True)
    assert facts["end_reason"] == "failed"
    assert facts["replayed_steps"] == 3
    assert group_gone(pids[0])


# --------------------------------------------------------------------------- every interrupt


def test_an_interrupt_the_job_cannot_reach_fails_the_rehearsal_after_its_failure(
    tmp_path: Path,
) -> None:
    # the job fails at step 3; the interrupt was planned at 90% (step 9): never delivered
    with pytest.raises(ContractlangError) as exc:
        run_job(tmp_path, "exit3", at=(Fraction(9, 10),))
    failure, undelivered = exc.value.diagnostics  # the failure first, then why it matters
    assert failure.code == "W704"
    assert (undelivered.code, undelivered.severity) == ("E706", "error")
    assert undelivered.message == (
        "the rehearsal of `c` could not deliver interrupt 1 of 1 (at 90% of the progress, "
        "step 9): the job failed first, in allocation `rehearsal-a1`"
    )


#: A job that is reclaimed in its first allocation (it sleeps after step 2, where the first
#: interrupt comes; the notice, SIGTERM, kills it) and ends by itself at step 4 of 10 in its
#: second, long before the second interrupt's step (9).
ENDS_EARLY = """
import os, sys, time
first = os.environ["CONTRACTLANG_ALLOC_ID"].endswith("-a1")
print("contractlang: total 10", flush=True)
for i in range(1, 5):
    print(f"contractlang: step {i}", flush=True)
    if i == 2 and first:
        time.sleep(30)
print("contractlang: accepted", flush=True)
"""


def test_a_job_that_ends_before_the_last_interrupt_fails_the_rehearsal(tmp_path: Path) -> None:
    script = tmp_path / "job.py"
    script.write_text(ENDS_EARLY)
    (tmp_path / "t.spot").write_text(TERMS)
    command = shlex.join([sys.executable, str(script)])
    result = run("rehearse", tmp_path / "t.spot", "--command", command, "--at", "20%,90%")
    no_traceback(result)
    assert result.exit_code == 2, result.output
    said = " ".join(result.output.split())  # as printed, wrapped or not
    assert (
        "error[E706]: the rehearsal of `c` could not deliver interrupt 2 of 2 (at 90% of the "
        "progress, step 9): the job ended first, at step 4, in allocation `rehearsal-a2`"
    ) in said
    assert "plan the interrupts within the steps the job runs (`--at`)" in said
    assert "net billed" not in said  # no bill of a shorter failure path


EXIT = "exit"  # a script's line that is the job's first process ending with status 0


class FakeJob:
    """A job that says what its script says, each line stamped ``ms`` after it started (in
    the past, when negative), at once: rehearse's decisions, taken on those stamps, are the
    same however loaded the machine. Its first process ends at its script's `exit` line (a
    stamp in the past: it has gone before its lines are read); `{ckdir}` in a line is its
    checkpoint directory, where it has saved a file `state`. It keeps the signals it was
    sent, each with how many lines had been read then; killed, it has written nothing
    stamped after the last line read."""

    scripts: ClassVar[list[list[tuple[int, str]]]] = []  # one a start, in order
    started: ClassVar[list[FakeJob]] = []

    def __init__(self, script: list[tuple[int, str]], ckdir: str) -> None:
        (Path(ckdir) / "state").write_bytes(b"the state")
        t0 = time.monotonic_ns()
        self.items: deque[process.Line | process.Exited] = deque(
            process.Exited(t0 + ms * 1_000_000, 0)
            if text == EXIT
            else process.Line(t0 + ms * 1_000_000, "stdout", n, text.format(ckdir=ckdir))
            for n, (ms, text) in enumerate(script, 1)
        )
        gone = [i.real_ns for i in self.items if isinstance(i, process.Exited)]
        self.exit_ns = gone[0] if gone else None
        self.exited: process.Exited | None = None
        self.read, self.last_ns = 0, t0
        self.signals: list[tuple[str, int]] = []

    @classmethod
    def start(cls, _argv: object, env: dict[str, str], *_: object) -> FakeJob:
        script = cls.scripts[len(cls.started)]
        cls.started.append(cls(script, env["CONTRACTLANG_CHECKPOINT_DIR"]))
        return cls.started[-1]

    def next(self, timeout: float | None) -> process.Item | None:
        if not self.items:
            time.sleep(timeout or 0)
            return None
        item = self.items.popleft()
        self.read, self.last_ns = self.read + 1, item.real_ns
        if isinstance(item, process.Exited):
            self.exited = item
        return item

    def running(self) -> bool:
        return self.exit_ns is None or time.monotonic_ns() < self.exit_ns

    def signal(self, sig: signal.Signals) -> bool:
        self.signals.append((sig.name, self.read))
        return True

    def kill(self) -> None:
        self.signals.append(("SIGKILL", self.read))

    def close(self) -> tuple[list[process.Item], list[int], bool]:
        rest = [i for i in self.items if i.real_ns <= self.last_ns]
        self.items.clear()
        return rest, [], False

    def abandon(self) -> None:
        pass


def faked(monkeypatch: pytest.MonkeyPatch, *scripts: list[tuple[int, str]]) -> type[FakeJob]:
    monkeypatch.setattr(FakeJob, "scripts", list(scripts))
    monkeypatch.setattr(FakeJob, "started", [])
    monkeypatch.setattr(allocation, "Job", FakeJob)
    return FakeJob


def steps(first: int, last: int, at_ms: int, every_ms: int) -> list[tuple[int, str]]:
    """``step first`` … ``step last``, the first at ``at_ms``, then one every ``every_ms``."""
    return [
        (at_ms + i * every_ms, f"contractlang: step {n}")
        for i, n in enumerate(range(first, last + 1))
    ]


@pytest.mark.parametrize("restored", [140, 200])
def test_an_interrupt_whose_step_the_job_passed_during_a_notice_comes_at_its_restore(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, restored: int
) -> None:
    # 200 steps, interrupts at steps 67 and 134, a notice of 1 s (1 s of real time). In its
    # first allocation the job is noticed at step 67 (670 ms) and runs on through the lead,
    # past step 134, and saves its state of step `restored` before the reclaim (1,670 ms).
    # Its second allocation restores that state: past step 134, so the second interrupt comes
    # at the restore, at once — not at the first step after it (140), nor never (200: no
    # step is left; the job validates for 1.4 s, longer than the lead)
    saved = f"contractlang: checkpoint {restored} {{ckdir}}/state"
    first = [(0, "contractlang: total 200"), *steps(1, 150, 10, 10)]
    first.insert(first.index((1200, "contractlang: step 120")) + 1, (1200, saved))
    first += [(1700, "contractlang: step 151")]  # read after the deadline: the reclaim
    second = [(0, "contractlang: total 200"), (100, f"contractlang: restored {restored}")]
    second += steps(restored + 1, 200, 150, 50) if restored < 200 else []
    second += [(1500, "mock: validating"), (1600, "contractlang: accepted"), (1700, EXIT)]
    third = [(0, "contractlang: total 200"), (10, f"contractlang: restored {restored}")]
    third += [*steps(restored + 1, 200, 20, 1), (300, "contractlang: accepted"), (310, EXIT)]
    fake = faked(monkeypatch, first, second, third)
    settings = RehearsalSettings(("job",), "job", interrupts=evenly(2))
    report = rehearse(terms_from_text(TERMS, "t.spot"), settings)
    (r,) = report.rehearsals
    a1, a2, a3 = r.record.allocations
    assert [(a.end_reason, a.interrupt) for a in (a1, a2, a3)] == [
        ("reclaimed", 1),
        ("reclaimed", 2),
        ("released", None),
    ]
    assert [(i.step, i.alloc_id) for i in r.record.interrupts] == [
        (67, "rehearsal-a1"),
        (134, "rehearsal-a2"),
    ]
    # the notice went with the second line read, `restored`, and was recorded there
    assert fake.started[1].signals[0] == ("SIGTERM", 2)
    (restore,) = [e for e in r.record.events if e.event == "restored" and e.alloc_id == a2.alloc_id]
    assert a2.notice_us == restore.at_us
    assert a2.end_us - a2.notice_us == 1_000_000  # the promised second, exactly
    assert a2.restored_step == a3.restored_step == restored
    assert codes(report) == []  # each restored the last valid checkpoint


def test_a_notice_never_goes_to_a_job_that_has_gone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the job ran its 10 steps and exited before rehearse read a line of it (its stamps are
    # in the past): its step 5 cannot bring it a notice, and the rehearsal fails saying so
    gone = [(-50, "contractlang: total 10"), *steps(1, 10, -49, 1)]
    fake = faked(monkeypatch, [*gone, (-30, "contractlang: accepted"), (-20, EXIT)])
    settings = RehearsalSettings(("job",), "job")
    with pytest.raises(ContractlangError) as exc:
        rehearse(terms_from_text(TERMS, "t.spot"), settings)
    (d,) = exc.value.diagnostics
    assert (d.code, d.message) == (
        "E706",
        "the rehearsal of `c` could not deliver interrupt 1 of 1 (at 50% of the progress, "
        "step 5): the job ended in allocation `rehearsal-a1` at step 10, before the notice "
        "could reach it",
    )
    assert fake.started[0].signals == [("SIGKILL", 13)]  # no notice; the group killed at the end


def test_without_a_promised_notice_the_reclaim_comes_at_once(tmp_path: Path) -> None:
    terms = 'contract "c" { currency USD rate trace.price per gpu_hour }'
    report, pids, _ = run_job(tmp_path, "child", terms)
    assert ends(report) == ["reclaimed", "released"]
    (r,) = report.rehearsals
    assert r.trace.filter(pl.col("event") == "notice").is_empty()
    facts = r.contracts[0].allocations.row(0, named=True)
    assert facts["notice_lead"].total_seconds() == 0  # reclaimed, no notice: 0 s (docs/trace.md)
    assert facts["end_step"] == 5  # the report of step 5 (50% of 10) reclaimed it
    assert [p for p in pids if running(p)] == []


def test_a_job_may_report_through_the_events_file(tmp_path: Path) -> None:
    report, _, _ = run_job(tmp_path, "events")
    assert ends(report) == ["reclaimed", "released"]
    (r,) = report.rehearsals
    (c4, *_) = r.record.checkpoints
    assert (c4.step, c4.valid, c4.path) == (4, True, "c4.bin")
    assert r.record.result == "accepted"
    malformed = [w for w in r.record.warnings if w.code == "W701"]
    assert len(malformed) == 2  # once in each allocation
    # total, steps 1–4, the checkpoint, then the bad line: the 7th
    assert "line 7 of its events file: `{not json` was ignored: not JSON" in malformed[0].message


def rehearse_in_the_background(tmp: Path) -> tuple[subprocess.Popen[bytes], Path]:
    """`contractlang rehearse` in a process of its own, rehearsing a job that takes the
    notice (an hour's lead), ignores it and hangs, with a `sleep` in its group; returned once
    the notice has reached the job."""
    argv, pids = job(tmp, "ignore hang child")
    (tmp / "t.spot").write_text(TERMS.replace("1 second", "1 hour"))
    command = [sys.executable, "-m", "contractlang", "rehearse", str(tmp / "t.spot")]
    proc = subprocess.Popen(
        [*command, "--command", shlex.join(argv)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    noticed = Path(f"{pids}.noticed")  # the job's SIGTERM handler makes it
    deadline = time.monotonic() + 60
    while not noticed.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    return proc, pids


@contextlib.contextmanager
def nothing_left(proc: subprocess.Popen[bytes], pids: Path) -> Iterator[None]:
    """Whatever happens in the block, leave nothing running (the test may have failed)."""
    try:
        yield
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()
        for pid in pids_of(pids)[:1]:  # the job's group
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)


def test_no_process_outlives_rehearse_when_it_is_stopped(tmp_path: Path) -> None:
    proc, pids = rehearse_in_the_background(tmp_path)
    with nothing_left(proc, pids):
        assert Path(f"{pids}.noticed").exists(), proc.stderr and proc.stderr.read()
        assert len(pids_of(pids)) == 2
        assert running(pids_of(pids)[0])  # waiting out an hour's lead; its `sleep` died of it
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=20)
    assert proc.returncode == 130
    assert b"rehearsal interrupted" in stderr
    assert [p for p in pids_of(pids) if running(p)] == []
    assert group_gone(pids_of(pids)[0])


def test_no_process_outlives_rehearse_when_it_is_killed(tmp_path: Path) -> None:
    # SIGKILL cannot be caught: the reaper, a process of its own, sees rehearse go (the end
    # of its input) and kills the job's group, which would otherwise hang on for an hour
    proc, pids = rehearse_in_the_background(tmp_path)
    with nothing_left(proc, pids):
        assert Path(f"{pids}.noticed").exists(), proc.stderr and proc.stderr.read()
        job_pid = pids_of(pids)[0]
        assert running(job_pid)
        proc.kill()
        proc.communicate(timeout=20)
        assert group_gone(job_pid)
    assert proc.returncode == -signal.SIGKILL
    assert [p for p in pids_of(pids) if running(p)] == []


def test_a_rehearsal_that_outgrows_its_trace_is_stopped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a trace holds at most so much recorded time (before 2200; GPU-time within 64 bits):
    # here, pretending it is 1 s, a job that hangs is stopped there, its group with it
    monkeypatch.setattr(scheduler, "recorded_limit", lambda *_: (1_000_000, "a test's limit"))
    argv, pids = job(tmp_path, "ignore hang child")
    settings = RehearsalSettings(argv, "job", interrupts=())
    with pytest.raises(ContractlangError) as exc:
        rehearse(terms_from_text(TERMS, "t.spot"), settings)
    (d,) = exc.value.diagnostics
    assert (d.code, d.message) == (
        "E705",
        "the rehearsal was stopped at 1.0 s of recorded time: a trace of it holds at most "
        "1.0 s (a test's limit)",
    )
    assert len(pids_of(pids)) == 2
    assert group_gone(pids_of(pids)[0])  # SIGKILL went to the group on the way out
    # and a replacement wait that would start the next allocation past it (20 s) is refused
    monkeypatch.setattr(scheduler, "recorded_limit", lambda *_: (20_000_000, "a test's limit"))
    argv, _ = job(tmp_path, "child")
    settings = RehearsalSettings(argv, "job", replacement_wait_us=3_600_000_000)
    with pytest.raises(
        ContractlangError, match=r"the next allocation would start at 3,6\d\d\.\d s"
    ):
        rehearse(terms_from_text(TERMS, "t.spot"), settings)
    # as is a notice whose reclaim would be recorded past it: it is not even sent
    settings = RehearsalSettings(argv, "job", notice_us=3_600_000_000)
    with pytest.raises(ContractlangError, match=r"reclaim of `rehearsal-a1` would be recorded"):
        rehearse(terms_from_text(TERMS, "t.spot"), settings)


def test_a_process_that_leaves_the_group_is_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the one escape from a process group: a new session. rehearse cannot reclaim it, but
    # it sees the job's output still open after the end, and says so
    monkeypatch.setattr(process, "GRACE_SECONDS", 0.5)
    script = tmp_path / "j.py"
    pids = tmp_path / "pids"
    script.write_text(
        "import subprocess, sys\n"
        "p = subprocess.Popen(['sleep', '30'], start_new_session=True)\n"
        f"open({str(pids)!r}, 'w').write(str(p.pid))\n"
        "print('contractlang: accepted', flush=True)\n"
    )
    settings = RehearsalSettings((sys.executable, str(script)), "j", interrupts=())
    try:
        report = rehearse(terms_from_text(TERMS, "t.spot"), settings)
    finally:
        escaped = int(pids.read_text())
        os.kill(escaped, signal.SIGKILL)
    assert ends(report) == ["released"]
    (w,) = [w for w in report.rehearsals[0].record.warnings if w.code == "W705"]
    assert w.message == (
        "the job outlived allocation `rehearsal-a1`: a process that left its process group "
        "still holds its output"
    )


@pytest.mark.parametrize("sig", ["USR1", "INT"])
def test_the_notice_signal_can_be_chosen(tmp_path: Path, sig: str) -> None:
    script = tmp_path / "j.py"
    script.write_text(
        "import signal, sys, time\n"
        "got = []\n"
        f"signal.signal(signal.SIG{sig}, lambda *a: got.append(1))\n"
        "print('contractlang: total 4', flush=True)\n"
        "for i in range(1, 5):\n"
        "    print(f'contractlang: step {i}', flush=True)\n"
        "    time.sleep(0.1)\n"
        "    if got:\n"
        "        print('contractlang: restored 99', flush=True)\n"  # a visible sign it got it
        "        time.sleep(5)\n"
    )
    settings = RehearsalSettings(
        (sys.executable, str(script)),
        "j",
        interrupts=(Fraction(1, 2),),
        notice_signal=signal.Signals[f"SIG{sig}"],
        notice_us=500_000,
    )
    report = rehearse(terms_from_text(TERMS, "t.spot"), settings)
    (r,) = report.rehearsals
    assert r.record.allocations[0].restored_step == 99
    assert r.record.notice_signal == f"SIG{sig}"
