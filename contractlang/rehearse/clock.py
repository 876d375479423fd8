"""The rehearsal's recorded clock: real time while the job runs, scaled-back time while the
scheduler keeps a notice lead or a replacement wait.

With ``--time-scale X`` the scheduler waits ``lead / X`` of real time between a notice and its
reclaim and ``wait / X`` before the next allocation, and records both at their full length:
``lead`` and ``wait`` exactly. What the job reports during a notice lead is recorded ``X``
times further from the notice than it really was; outside notice leads and waits, recorded
time runs at the real pace. Recorded times are integer microseconds after the rehearsal's
start.

>>> c = Clock(Fraction(60), real_ns=0)
>>> c.at(2_000_000_000)            # 2 s of real running time
2000000
>>> c.scaled_from(2_000_000_000)   # a notice: from here on, time runs 60× faster
>>> c.at(2_500_000_000)            # 0.5 s later is 30 s later in the record
32000000
>>> c.real_deadline(120_000_000)   # a 2-minute lead ends 2 s (real) after the notice
4000000000
"""

from __future__ import annotations

from fractions import Fraction


class Clock:
    """Real monotonic nanoseconds → recorded microseconds, piecewise linear and monotone."""

    def __init__(self, scale: Fraction, real_ns: int) -> None:
        self.scale = scale
        self._real0 = real_ns
        self._rec0 = 0
        self._factor = Fraction(1)

    def at(self, real_ns: int) -> int:
        """The recorded time of a real instant at or after the last change of pace."""
        elapsed_us = Fraction(max(real_ns - self._real0, 0), 1000)
        return self._rec0 + int(elapsed_us * self._factor)

    def scaled_from(self, real_ns: int) -> None:
        """From ``real_ns`` on, recorded time runs ``scale`` times faster (a notice lead)."""
        self._rebase(real_ns, self.at(real_ns), self.scale)

    def resume(self, real_ns: int, recorded_us: int) -> None:
        """From ``real_ns`` on, which is recorded as ``recorded_us``, time runs at the real
        pace again (a new allocation starts)."""
        self._rebase(real_ns, recorded_us, Fraction(1))

    def real_deadline(self, recorded_us: int) -> int:
        """The real instant (ns) that the current pace records as ``recorded_us`` later than
        the last change of pace."""
        return self._real0 + int(Fraction(recorded_us * 1000) / self._factor)

    def real_span(self, recorded_us: int) -> float:
        """Seconds of real time that a scaled wait of ``recorded_us`` takes."""
        return float(Fraction(recorded_us, 1_000_000) / self.scale)

    def _rebase(self, real_ns: int, recorded_us: int, factor: Fraction) -> None:
        self._real0, self._rec0, self._factor = real_ns, recorded_us, factor
