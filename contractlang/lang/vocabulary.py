"""The words of the language, written once: functions and aggregates, comparison operators and
their flips, enum members, cap levels, rounding modes and time units.

Every pass that needs one of these reads it here — the checker to resolve and suggest names,
the compiler and the budget interpreter to evaluate, the trace schema for its enums::

    >>> percentile("p95"), percentile("mean")
    (95, None)
    >>> FLIP["<="]
    '>='
    >>> ENUMS["end_reason"]
    ('released', 'reclaimed', 'failed')
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable
from typing import Any, Literal

#: Functions usable anywhere: ``coalesce(a, b, …)``, ``min(a, b, …)``, ``max(a, b, …)``.
SCALAR_FUNCTIONS: tuple[str, ...] = ("coalesce", "min", "max")
#: Aggregates over runs, usable only in a budget's ``require`` (plus ``pN``, any percentile
#: from ``p0`` to ``p100``; ``min``/``max`` are aggregates when they have one argument).
AGGREGATES: tuple[str, ...] = ("mean", "sum", "min", "max", "share", "count")
#: Aggregates that count runs where a condition holds (their argument is true/false).
COUNTING_AGGREGATES: tuple[str, ...] = ("share", "count")
#: Percentiles suggested when a function name is unknown.
COMMON_PERCENTILES: tuple[str, ...] = ("p50", "p90", "p95", "p99")

_PERCENTILE_RE = re.compile(r"^p([0-9]+)$")


def percentile(func: str) -> int | None:
    """The N of a ``pN`` aggregate name (``p95`` → 95), or None when ``func`` is not of that
    form. The value is not range-checked (``p101`` → 101; the checker reports it)."""
    m = _PERCENTILE_RE.match(func)
    return int(m.group(1)) if m else None


CompareOp = Literal["==", "!=", "<", "<=", ">", ">="]

#: A comparison with its sides swapped: ``a < b`` is ``b > a``.
FLIP: dict[str, CompareOp] = {"==": "==", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}

#: What each comparison means: Python's operators, on exact values (``Fraction``, ``str``,
#: ``bool``) and on polars expressions, which overload them.
COMPARE: dict[str, Callable[[Any, Any], Any]] = {
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}

#: The enums of the trace and the facts, with their members in schema order.
ENUMS: dict[str, tuple[str, ...]] = {
    "capacity": ("spot", "on_demand", "reserved"),
    "end_reason": ("released", "reclaimed", "failed"),
}

CapLevel = Literal["allocation", "run", "month", "contract"]
#: Cap levels, in the order caps apply (docs/evaluate.md, "Caps").
CAP_LEVELS: tuple[CapLevel, ...] = ("allocation", "run", "month", "contract")

RoundingMode = Literal["half_up", "half_even"]
#: ``half_up`` rounds half away from zero (the default); ``half_even`` to the even digit.
ROUNDING_MODES: tuple[RoundingMode, ...] = ("half_up", "half_even")

#: Time units in seconds; each is also written plural, and as GPU-time with ``gpu_``.
TIME_UNITS: dict[str, int] = {"second": 1, "minute": 60, "hour": 3600, "day": 86400}

#: The most decimal places `precision` allows.
MAX_PRECISION = 10
