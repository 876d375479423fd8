"""The reaper of a rehearsal: a tiny process of its own, outside the job's process group and
session, that kills the job's process groups when `rehearse` dies without doing it itself
(``SIGKILL``, a crash of the interpreter, the machine's out-of-memory killer).

`rehearse` writes ``+PGID`` on the reaper's standard input when it starts a job's group and
``-PGID`` once it has killed the group itself. When the input ends — `rehearse` exited,
however it exited, so the pipe's last writer is gone — the reaper sends ``SIGKILL`` to every
group still listed, then exits. It ignores the signals a terminal or a shell sends (the job's
group is what they are for).

It is run by its path (``python -I -S reaper.py``), not as a module of the package: it
imports nothing of contractlang, so it starts in a few milliseconds and stands apart from
the process it watches.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys


def main() -> None:
    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
        signal.signal(s, signal.SIG_IGN)
    groups: set[int] = set()
    for line in sys.stdin:
        sign, number = line[:1], line[1:].strip()
        if number.isdigit():
            (groups.add if sign == "+" else groups.discard)(int(number))
    for pgid in sorted(groups):
        with contextlib.suppress(OSError):  # gone already, or not ours to kill
            os.killpg(pgid, signal.SIGKILL)


if __name__ == "__main__":
    main()
