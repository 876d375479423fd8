"""One allocation's processes: the job's command as a real child in its own process group,
its stdout and events file read by threads, notices and the reclaim sent to the whole group.

A job is started with ``start_new_session=True``, so it and everything it starts (unless a
process leaves the group on purpose) share one process group: a notice reaches every
process, ``SIGKILL`` to the group reclaims them all, and :func:`survivors` can tell whether
any is left. A :class:`Reaper` kills the groups if `rehearse` itself dies first. Everything
the threads read arrives on one queue, stamped with the real monotonic time it was read.
"""

from __future__ import annotations

import contextlib
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import IO, Literal

from contractlang.diagnostics import NO_SPAN, error
from contractlang.errors import ContractlangError, cannot_write, os_reason

POLL_SECONDS = 0.01  # how often the events file is read
REAPER = Path(__file__).with_name("reaper.py")
GRACE_SECONDS = 5.0  # how long a reclaimed job may take to close its output


@dataclass(frozen=True)
class Line:
    """A line the job wrote: on stdout, or in its events file (``number`` from 1)."""

    real_ns: int
    source: Literal["stdout", "events"]
    number: int
    text: str


@dataclass(frozen=True)
class Exited:
    """The job's first process ended (``returncode`` < 0: killed by that signal)."""

    real_ns: int
    returncode: int


@dataclass(frozen=True)
class Closed:
    """A source has nothing more to say: stdout reached its end, or the events file was
    read for the last time."""

    source: Literal["stdout", "events"]


Item = Line | Exited | Closed


class Reaper:
    """The rehearsal's reaper (:mod:`contractlang.rehearse.reaper`): while it runs, every
    job group it was told of is killed if `rehearse` itself dies. Use as a context manager;
    without a reaper (it could not start) a rehearsal still runs, unguarded against its own
    ``SIGKILL``."""

    def __init__(self) -> None:
        self.proc: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> Reaper:
        with contextlib.suppress(OSError):
            self.proc = subprocess.Popen(
                [sys.executable, "-I", "-S", str(REAPER)],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
        return self

    def __exit__(self, *_: object) -> None:
        if self.proc is None:
            return
        with contextlib.suppress(OSError):
            assert self.proc.stdin is not None
            self.proc.stdin.close()  # the end of its input: it kills what is still listed
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=5)

    def watch(self, pgid: int) -> None:
        self._say(f"+{pgid}")

    def forget(self, pgid: int) -> None:
        self._say(f"-{pgid}")

    def _say(self, line: str) -> None:
        if self.proc is None or self.proc.stdin is None:
            return
        with contextlib.suppress(OSError, ValueError):  # the reaper is gone: nothing to tell
            self.proc.stdin.write(line.encode() + b"\n")
            self.proc.stdin.flush()


class Job:
    """The processes of one allocation. Use :meth:`start`."""

    def __init__(
        self,
        proc: subprocess.Popen[bytes],
        events: Path,
        out_log: IO[bytes],
        reaper: Reaper | None = None,
    ) -> None:
        self.proc = proc
        self.pgid = proc.pid  # a new session: the first process leads the group
        self.reaper = reaper
        if reaper is not None:
            reaper.watch(self.pgid)
        self.items: queue.Queue[Item] = queue.Queue()
        self.exited: Exited | None = None
        self.closed: set[str] = set()
        self._out_log = out_log
        self._events = events
        self._stop = threading.Event()
        self._threads = [
            threading.Thread(target=self._read_stdout, daemon=True),
            threading.Thread(target=self._tail_events, daemon=True),
            threading.Thread(target=self._wait, daemon=True),
        ]
        for t in self._threads:
            t.start()

    @classmethod
    def start(
        cls,
        argv: Sequence[str],
        env: Mapping[str, str],
        logs: Path,
        events: Path,
        reaper: Reaper | None = None,
    ) -> Job:
        """Start ``argv`` with ``env``; its stdout is read (and kept in ``LOGS.out``), its
        stderr goes to ``LOGS.err``; ``reaper`` is told of its group. A command that cannot
        start is ``E701``."""
        out_log = _log_file(f"{logs}.out")  # (the stdout reader closes it)
        try:
            err_log = _log_file(f"{logs}.err")
        except ContractlangError:
            out_log.close()
            raise
        with err_log:
            try:
                proc = subprocess.Popen(
                    list(argv),
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=err_log,
                    env=dict(env),
                    start_new_session=True,
                )
            except OSError as exc:
                out_log.close()
                reason = (exc.strerror or str(exc)).lower()
                raise ContractlangError(
                    [
                        error(
                            "E701",
                            f"cannot start `{argv[0]}`: {reason}",
                            NO_SPAN,
                            file="contractlang",
                        )
                    ]
                ) from None
        return cls(proc, events, out_log, reaper)

    # ------------------------------------------------------------------ reading

    def _read_stdout(self) -> None:
        assert self.proc.stdout is not None
        n = 0
        with self._out_log:
            for raw in iter(self.proc.stdout.readline, b""):
                now = time.monotonic_ns()
                n += 1
                self._out_log.write(raw)
                self._out_log.flush()
                self.items.put(Line(now, "stdout", n, raw.decode("utf-8", errors="replace")))
        self.proc.stdout.close()
        self.items.put(Closed("stdout"))

    def _tail_events(self) -> None:
        offset, n, partial = 0, 0, b""
        while True:
            last = self._stop.wait(POLL_SECONDS)
            chunk = b""
            with contextlib.suppress(FileNotFoundError), open(self._events, "rb") as f:
                f.seek(offset)
                chunk = f.read()
            offset += len(chunk)
            now = time.monotonic_ns()
            *lines, partial = (partial + chunk).split(b"\n")
            if last and partial:
                lines, partial = [*lines, partial], b""
            for raw in lines:
                n += 1
                self.items.put(Line(now, "events", n, raw.decode("utf-8", errors="replace")))
            if last:
                self.items.put(Closed("events"))
                return

    def _wait(self) -> None:
        code = self.proc.wait()
        self.items.put(Exited(time.monotonic_ns(), code))

    def next(self, timeout: float | None) -> Item | None:
        """The next thing read, or ``None`` after ``timeout`` seconds."""
        try:
            item = self.items.get(timeout=timeout)
        except queue.Empty:
            return None
        if isinstance(item, Exited):
            self.exited = item
        elif isinstance(item, Closed):
            self.closed.add(item.source)
        return item

    def running(self) -> bool:
        """Whether the job's first process has not exited yet. Its exit may still be on its
        way through the queue (and the process not yet reaped): a notice sent then would
        reach no job, so this asks the system, without reaping it."""
        if self.exited is not None or self.proc.returncode is not None:
            return False
        try:
            flags = os.WEXITED | os.WNOHANG | os.WNOWAIT
            return os.waitid(os.P_PID, self.proc.pid, flags) is None
        except ChildProcessError:  # reaped already by the thread that waits for it
            return False

    # ------------------------------------------------------------------ signals

    def signal(self, sig: signal.Signals) -> bool:
        """Send ``sig`` to every process of the group; ``False`` when none is left."""
        try:
            os.killpg(self.pgid, sig)
        except ProcessLookupError:
            return False
        return True

    def kill(self) -> None:
        """Reclaim: ``SIGKILL`` to the whole group (also to what outlived the first process)."""
        self.signal(signal.SIGKILL)

    def abandon(self) -> None:
        """Kill the group and stop reading the events file, without waiting (an error or an
        interrupt is on its way out)."""
        self.kill()
        self._stop.set()
        if self.reaper is not None:
            self.reaper.forget(self.pgid)

    def close(self, grace: float | None = None) -> tuple[list[Item], list[int], bool]:
        """After :meth:`kill`: wait until the first process is reaped and stdout is closed
        (at most ``grace`` seconds), read the events file a last time, and return what was
        still unread, the processes of the group still running, and whether the job's stdout
        is still open (held by a process that left the group)."""
        grace = GRACE_SECONDS if grace is None else grace
        deadline = time.monotonic() + grace
        rest: list[Item] = []
        self._stop.set()
        while self.exited is None or len(self.closed) < 2:
            item = self.next(max(deadline - time.monotonic(), 0))
            if item is None:
                break
            rest.append(item)
        alive = survivors(self.pgid, wait=grace)
        if self.reaper is not None and not alive:
            self.reaper.forget(self.pgid)
        return rest, alive, "stdout" not in self.closed


def _log_file(path: str) -> IO[bytes]:
    try:
        return open(path, "wb")
    except OSError as exc:
        raise cannot_write(path, os_reason(exc)) from None


def survivors(pgid: int, wait: float = 0.0) -> list[int]:
    """The processes of group ``pgid`` still running (zombies waiting for a parent to reap
    them are not running), checked until none is left or ``wait`` seconds have passed."""
    deadline = time.monotonic() + wait
    while True:
        alive = _members(pgid)
        if not alive or time.monotonic() >= deadline:
            return alive
        time.sleep(0.02)


def _members(pgid: int) -> list[int]:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return []
    except PermissionError:
        return [pgid]
    proc = Path("/proc")
    if not proc.is_dir():
        return [pgid]  # no process table to read: the group exists
    found = []
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()  # after `pid (comm) `
        if len(fields) > 2 and fields[0] != "Z" and int(fields[2]) == pgid:
            found.append(int(entry.name))
    return sorted(found)


class Interrupted(KeyboardInterrupt):
    """``contractlang rehearse`` itself was told to stop (SIGTERM or SIGHUP): handled as
    Ctrl-C is."""


@contextlib.contextmanager
def stop_on_signals() -> Iterator[None]:
    """While a rehearsal runs, SIGTERM and SIGHUP to contractlang raise :class:`Interrupted`
    (as Ctrl-C raises ``KeyboardInterrupt``), so the job's group is reclaimed on the way out
    and no process outlives the command. Only the main thread can install handlers."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, _frame: FrameType | None) -> None:
        raise Interrupted(signal.Signals(signum).name)

    old = {s: signal.signal(s, stop) for s in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for s, handler in old.items():
            signal.signal(s, handler)
