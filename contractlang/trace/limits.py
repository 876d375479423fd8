"""What a trace may hold: the range the engine keeps exactly (beyond it a value is an error,
T020), what cannot be (a negative price or step, T021), and what is merely implausible (warnings
W103–W105). Every rule names its row.

Why these bounds make every integer product exact. Times are microseconds in a signed 64-bit
integer; so is GPU-time (GPU-µs). Timestamps lie in [1900, 2200), so any duration is below
300 years ≈ 9.5 × 10¹⁵ µs. An allocation's GPU-time (GPUs × runtime) and a run's (the sum
over its allocations) must each stay at or below :data:`MAX_GPU_US` = 2⁶³ − 1 GPU-µs (about
2.56 billion GPU-hours): validation computes both in 128-bit integers and rejects a trace that
goes beyond, so the 64-bit facts derived from a valid trace never wrap. Products the contract
adds (GPUs × billable time, which increments and minimums may raise above the runtime) are
computed in 128 bits during evaluation and checked against the same bound (E405).

    >>> MAX_GPU_US // 3_600_000_000  # GPU-hours one allocation, or one run, may hold
    2562047788
"""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

from contractlang.lang.numbers import INT64_MAX, MAX_TS, MIN_TS
from contractlang.trace.schema import DECIMAL_DTYPE

__all__ = [
    "HIGH_PRICE",
    "LONG_ALLOCATION",
    "MANY_GPUS",
    "MAX_DECIMAL",
    "MAX_GPUS",
    "MAX_GPU_US",
    "MAX_STEP",
    "MAX_TS",
    "MIN_TS",
]

#: The most GPUs one allocation may have.
MAX_GPUS = 10_000_000
#: The most GPU-time (GPU-µs) one allocation, or one run, may hold: a signed 64-bit integer.
MAX_GPU_US = INT64_MAX
#: The largest training step (so a run's sums of steps stay far inside 64 bits).
MAX_STEP = 10**15
#: The first value a money column (``price``, ``quantity``, ``amount``) cannot hold: its exact
#: ``Decimal(38, 18)`` keeps 20 digits before the point (more is T002).
MAX_DECIMAL = Decimal(10) ** (DECIMAL_DTYPE.precision - (DECIMAL_DTYPE.scale or 0))

#: Above this many GPUs in one allocation: W103.
MANY_GPUS = 100_000
#: An allocation longer than this: W104.
LONG_ALLOCATION = timedelta(days=365)
#: A price per GPU-hour above this: W105.
HIGH_PRICE = Decimal(1000)
