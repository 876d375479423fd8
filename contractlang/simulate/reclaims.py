"""The reclaim processes, vectorised over runs.

- :class:`Poisson`: the provider decides to reclaim at rate λ per hour of capacity held with
  no reclaim pending (per allocation-hour); the reclaim follows the decision after the
  promised notice. So a kept notice is never short, and the number of decisions per run has
  mean λ × the time the run held capacity with no notice pending (λ × its time on capacity
  when there is no notice).
- :class:`Replay`: a public availability trace
  (:mod:`~contractlang.importers.availability.read`) replayed from a random offset per run,
  its end joined to its start. The job holds capacity whenever the trace has at least
  ``nodes`` instances, is reclaimed when it drops below, and is replaced when it rises again;
  a promised notice comes that long before the drop (or at the allocation's start, when it
  has not lasted that long: a breach).

Times are integer microseconds.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from contractlang.importers.availability.read import Availability
from contractlang.lang.numbers import MICROS_PER_HOUR
from contractlang.simulate.streams import Streams

I64 = npt.NDArray[np.int64]
#: "Never": later than any simulated time (about 290,000 years in microseconds, halved).
NEVER = np.int64(2**62)


class Poisson:
    """Reclaim decisions at ``rate_per_hour`` per allocation-hour."""

    def __init__(self, rate_per_hour: float, streams: Streams) -> None:
        self.mean_us = MICROS_PER_HOUR / rate_per_hour
        self.streams = streams

    def decision(self, run: I64, alloc: I64) -> I64:
        """How long after its start allocation ``alloc`` of each run is marked for reclaim
        (memoryless: one exponential draw per allocation)."""
        us = self.streams.exponential("reclaim", run, alloc) * self.mean_us
        return np.rint(np.minimum(us, float(NEVER))).astype(np.int64)


class Replay:
    """An availability trace as a cycle: where a run starts in it, and when capacity comes
    back or goes away after any time."""

    def __init__(self, availability: Availability, nodes: int, streams: Streams) -> None:
        self.span = availability.span_us
        self.streams = streams
        held = availability.held(nodes)
        if not held:
            raise ValueError("the trace never has the capacity the job needs")
        self.always = held == ((0, self.span),)
        # two laps, intervals that touch at the lap boundary merged
        laps = [*held, *((a + self.span, b + self.span) for a, b in held)]
        merged: list[tuple[int, int]] = []
        for a, b in laps:
            if merged and merged[-1][1] == a:
                merged[-1] = (merged[-1][0], b)
            else:
                merged.append((a, b))
        self.starts = np.array([a for a, _ in merged], dtype=np.int64)
        self.ends = np.array([b for _, b in merged], dtype=np.int64)

    def offsets(self, run: I64) -> I64:
        """Each run's starting point in the trace: uniform over its span."""
        u = self.streams.uniform("offset", run, 0)
        return np.minimum((u * self.span).astype(np.int64), self.span - 1)

    def _find(self, x: I64) -> tuple[I64, I64]:
        lap, at = np.divmod(x, self.span)
        i = np.searchsorted(self.ends, at, side="right")  # the first interval ending after `at`
        return lap * self.span, i

    def next_up(self, x: I64) -> I64:
        """The first time at or after ``x`` (trace time, any lap) with capacity."""
        base, i = self._find(x)
        out: I64 = base + np.maximum(self.starts[i], x - base)
        return out

    def next_down(self, x: I64) -> I64:
        """When capacity held at ``x`` goes away (:data:`NEVER` when it never does)."""
        if self.always:
            return np.full(x.shape, NEVER, dtype=np.int64)
        base, i = self._find(x)
        return base + self.ends[i]
