"""Measuring a process: its peak resident memory and CPU time from inside, a whole process
timed from outside, and contractlang's bytecode compiled before anything is timed. Nothing
here imports polars (``bench_cli.py`` and ``bench_startup.py`` time processes that must not
inherit what importing it sets)."""

from __future__ import annotations

import compileall
import resource
import subprocess
import tempfile
import time
from pathlib import Path
from typing import NamedTuple


def peak_rss_kb() -> int:
    """This process's peak resident memory in kB: ``VmHWM`` on Linux. (Not ``ru_maxrss``:
    Linux carries it over from the parent through fork and exec, so a child would report the
    parent's peak.)"""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # kB on Linux, bytes on macOS


def peak_rss_gb() -> float:
    """:func:`peak_rss_kb` in GB of 10⁹ bytes. ``VmHWM`` belongs to the address space and
    starts afresh at exec; ``ru_maxrss``, the fallback, carries a parent's peak over fork and
    exec on Linux, so a driver that measures itself keeps itself small (it generates in a
    subprocess)."""
    return peak_rss_kb() / 1e6


def reset_peak() -> None:
    """Start the peak-RSS count afresh (Linux: writing 5 to clear_refs resets VmHWM), so a
    phase's peak is its own, not the floor's or its setup's."""
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as fh:
            fh.write("5")
    except OSError:
        pass


def current_rss_gb() -> float:
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1e6
    except OSError:
        pass
    return 0.0


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


PACKAGE = Path(__file__).resolve().parents[2] / "contractlang"


def compile_bytecode() -> str:
    """Compile contractlang's modules to bytecode, untimed, as installing a wheel does, so
    every child imports them as an installed copy would; returns a line saying so.

    (This sandbox sets ``PYTHONDONTWRITEBYTECODE=1`` and the project is an editable install:
    without this, every child compiled from source every module it imported, 0.15–0.25 s of
    each engine step's time, which no installed copy pays. Python still reads bytecode that
    is there under that setting; it only writes none.)"""
    if not compileall.compile_dir(PACKAGE, quiet=1):  # a read-only checkout, say
        return f"could not write bytecode in {PACKAGE}: each child compiles what it imports"
    return "contractlang's bytecode compiled first (untimed), as a wheel's install does"


TIME = "/usr/bin/time"  # GNU time: the peak resident memory of exactly one process


class Timed(NamedTuple):
    """One process timed from outside."""

    seconds: float  # wall clock
    cpu: float  # user + system seconds of the process
    peak_kb: int
    exit: int


def timed_process(cmd: list[str], env: dict[str, str] | None = None) -> Timed:
    """``cmd`` run once, its output discarded: the wall clock around it (:data:`TIME` gives
    hundredths only), its CPU time and peak resident memory from :data:`TIME` — a child
    forked from this process would inherit this process's own high-water mark."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as report:
        start = time.perf_counter()
        done = subprocess.run(
            [TIME, "-f", "%U %S %M", "-o", report.name, *cmd],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            check=False,
            env=env,
        )
        seconds = time.perf_counter() - start
        user, system, kb = report.read().strip().splitlines()[-1].split()
    return Timed(seconds, float(user) + float(system), int(kb), done.returncode)
