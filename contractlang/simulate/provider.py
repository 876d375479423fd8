"""The simulated provider: it keeps each contract's promises, except where the workload says
it breaches them, and draws the replacement waits.

- **Notice**: a reclaim comes with the promised notice; no promise, no notice. With
  ``notice_breach_chance`` a reclaim's notice is breached: its lead is 0 (no notice at all).
- **Restart**: a replacement starts after the workload's draw, capped at the promised restart
  time when the contract promises one. With ``restart_breach_chance`` the promise is breached:
  the wait is the uncapped draw (a breach whenever the draw exceeds the promise).

Contracts with the same promises see the same provider, so they share one trace
(:func:`group_by_promises`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from contractlang.evaluate.settings import read_settings
from contractlang.lang import ast
from contractlang.lang.numbers import MICROS_PER_MINUTE, duration_human
from contractlang.simulate.reclaims import NEVER
from contractlang.simulate.streams import Streams
from contractlang.simulate.workload import MAX_WAIT_US, Replacement, Workload

I64 = npt.NDArray[np.int64]


@dataclass(frozen=True, order=True)
class Promises:
    """A contract's operational promises in microseconds (None: no promise)."""

    notice_us: int | None
    restart_us: int | None

    def describe(self) -> str:
        """``notice 30 s, restart 15 min`` (for people; exact, plain digits at any length).

        >>> Promises(1_000_001_000_000, None).describe()
        'notice 11 d 13 h 46 min 41 s, no restart promise'
        """
        notice = (
            "no notice" if self.notice_us is None else f"notice {duration_human(self.notice_us)}"
        )
        restart = (
            "no restart promise"
            if self.restart_us is None
            else f"restart {duration_human(self.restart_us)}"
        )
        return f"{notice}, {restart}"


def promises_of(contract: ast.Contract) -> Promises:
    p = read_settings(contract).promises_us
    return Promises(p.get("notice"), p.get("restart"))


def group_by_promises(
    contracts: Sequence[ast.Contract],
) -> list[tuple[Promises, list[ast.Contract]]]:
    """Contracts grouped by their promises, in the order each group first appears."""
    groups: dict[Promises, list[ast.Contract]] = {}
    for c in contracts:
        groups.setdefault(promises_of(c), []).append(c)
    return list(groups.items())


class Provider:
    """The promises of one group, kept (or breached) for the draws of ``streams``."""

    def __init__(self, workload: Workload, promises: Promises, streams: Streams) -> None:
        self.promises = promises
        self.streams = streams
        # A promise longer than any simulated time behaves as that time: a notice is at most
        # "never" (the reclaim comes after the job ends), a restart cap above the longest wait
        # never binds.
        self.notice_us = min(promises.notice_us or 0, int(NEVER))
        self.restart_us = (
            None if promises.restart_us is None else min(promises.restart_us, MAX_WAIT_US)
        )
        self.notice_breach = float(workload.reclaims.notice_breach_chance)
        self.replacement = workload.replacement
        self.restart_breach = (
            float(workload.replacement.restart_breach_chance) if workload.replacement else 0.0
        )

    def lead(self, run: I64, alloc: I64) -> I64:
        """The notice lead of each allocation's reclaim: the promise, or 0 when breached."""
        promised = self.notice_us
        lead = np.full(run.shape, promised, dtype=np.int64)
        if promised and self.notice_breach > 0:
            breached = self.streams.uniform("notice_breach", run, alloc) <= self.notice_breach
            lead[breached] = 0
        return lead

    def wait(self, run: I64, alloc: I64) -> I64:
        """The replacement wait before allocation ``alloc`` (which follows a reclaim)."""
        assert self.replacement is not None
        drawn = draw_wait(self.replacement, self.streams, run, alloc)
        cap = self.restart_us
        if cap is None:
            return drawn
        kept = np.minimum(drawn, cap)
        if self.restart_breach > 0:
            breached = self.streams.uniform("restart_breach", run, alloc) <= self.restart_breach
            kept = np.where(breached, drawn, kept)
        return kept


def draw_wait(rep: Replacement, streams: Streams, run: I64, alloc: I64) -> I64:
    """The workload's replacement wait in whole microseconds: exponential (mean), lognormal
    (median, sigma) or fixed."""
    scale = float(rep.scale_minutes) * MICROS_PER_MINUTE
    if rep.distribution == "fixed":
        return np.full(run.shape, round(scale), dtype=np.int64)
    if rep.distribution == "exponential":
        us = streams.exponential("replacement", run, alloc) * scale
    else:
        us = np.exp(streams.normal("replacement", run, alloc) * float(rep.shape)) * scale
    return np.rint(np.minimum(us, MAX_WAIT_US)).astype(np.int64)
