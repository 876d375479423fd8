"""Common random numbers: every random draw of a simulation is a pure function of its key
(seed, purpose, run, index), never of the order in which draws are made.

So two drafts that make different numbers of draws stay in step — run 17's third reclaim
draws the same number under every draft — and a batch of runs draws what the same runs would
draw in any other batch. A draw is the SplitMix64 output at one position of the seed's stream;
positions are unique per (purpose, run, index): ``purpose << 56 | run << 28 | index``, so
runs up to 2²⁸ and indices up to 2²⁸ per run and purpose. Vectorised over numpy arrays.

>>> s = Streams(seed=7)
>>> u = s.uniform("reclaim", np.array([0, 1, 2]), np.array([0, 0, 0]))
>>> bool(((u > 0) & (u <= 1)).all()), bool((u == s.uniform("reclaim", np.arange(3), 0)).all())
(True, True)
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from contractlang.errors import InternalError

U64 = npt.NDArray[np.uint64]
F64 = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

#: Each kind of draw has its own stream; a number here is part of every key (never reuse one).
PURPOSES: dict[str, int] = {
    "reclaim": 1,  # the time to the provider's next reclaim decision, per allocation
    "notice_breach": 2,  # whether a reclaim's notice is breached, per allocation
    "replacement": 3,  # the replacement wait, per allocation (two draws for a lognormal)
    "restart_breach": 4,  # whether the restart promise is breached, per allocation
    "checkpoint": 5,  # whether a save is valid, per save of the run
    "accept": 6,  # whether a finished attempt is accepted, per attempt
    "offset": 7,  # where in an availability trace the run starts, per run
}
RUN_BITS = 28
INDEX_BITS = 28
MAX_INDEX = (1 << INDEX_BITS) - 1

_MASK = (1 << 64) - 1
_GOLDEN = 0x9E3779B97F4A7C15


def _mix(z: U64) -> U64:
    """The SplitMix64 finalizer, on uint64 arrays (multiplication wraps, as it should)."""
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def _mix_int(x: int) -> int:
    x &= _MASK
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _MASK
    return x ^ (x >> 31)


class Streams:
    """The random streams of one seed."""

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self._key = np.uint64(_mix_int(seed + _GOLDEN))

    def bits(self, purpose: str, run: IntArray, index: IntArray | int) -> U64:
        """64 random bits per (run, index) of ``purpose``."""
        shape = np.shape(run)
        r = np.atleast_1d(np.asarray(run, dtype=np.int64))
        i = np.broadcast_to(np.asarray(index, dtype=np.int64), r.shape)
        if r.size and (int(r.max()) >> RUN_BITS or int(i.max()) > MAX_INDEX or i.min() < 0):
            raise InternalError("a random draw's run or index is out of range")
        position = (
            (np.uint64(PURPOSES[purpose]) << np.uint64(56))
            | (r.astype(np.uint64) << np.uint64(INDEX_BITS))
            | i.astype(np.uint64)
        )
        return _mix(position * np.uint64(_GOLDEN) + self._key).reshape(shape)

    def uniform(self, purpose: str, run: IntArray, index: IntArray | int) -> F64:
        """Uniform on (0, 1]: never 0, so ``-log(u)`` is finite."""
        b = self.bits(purpose, run, index)
        return ((b >> np.uint64(11)).astype(np.float64) + 1.0) * (1.0 / (1 << 53))

    def exponential(self, purpose: str, run: IntArray, index: IntArray | int) -> F64:
        """Exponential with mean 1."""
        return -np.log(self.uniform(purpose, run, index))

    def normal(self, purpose: str, run: IntArray, index: IntArray | int) -> F64:
        """Standard normal (Box–Muller from the draws at ``2·index`` and ``2·index + 1``)."""
        i = np.asarray(index, dtype=np.int64) * 2
        u1 = self.uniform(purpose, run, i)
        u2 = self.uniform(purpose, run, i + 1)
        return np.sqrt(-2.0 * np.log(u1)) * np.cos(2.0 * np.pi * u2)
