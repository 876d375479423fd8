"""Budget measures known between two bounds, and when the bounds are enough.

A mean of per-run quotients is kept as bounds rather than as one huge fraction
(:mod:`~contractlang.evaluate.quotients`). A requirement's value — an arithmetic expression
over its aggregates — is then bounded by interval arithmetic (:func:`interval`), and the bounds
decide the requirement (:func:`decides`) when neither the limit nor any point where a shown
figure could round differently lies between them. Otherwise the exact value is computed.

Why this is enough: every figure contractlang shows of a measure, of its limit or of its margin
(terminal, JSON) has at most 30 decimal places in its display unit, and display units are
integers of base units or percent (1/100). So a shown figure rounds differently for two values
only if some multiple of ``1 / (2 · 10³²)`` — :data:`GRID` — lies between them (or, for a
margin, ``limit − GRID · j``). When no such point lies within the bounds, the exact value and
any value between the bounds show the same digits and get the same verdict.

>>> b = Bounded(Fraction(1, 4), Fraction(1, 4) + Fraction(1, 10**50), lambda: Fraction(1, 4))
>>> decides(b.low, b.high, Fraction(1, 20))
False
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

from contractlang.lang import ast, exact

#: Every figure shown has at most 30 places in a unit of base units × an integer or 1/100.
GRID = Fraction(1, 2 * 10**32)


@dataclass(frozen=True)
class Bounded:
    """An aggregate known to lie in ``[low, high]``; ``exact()`` computes it (costly)."""

    low: Fraction
    high: Fraction
    exact: Callable[[], Fraction]


def _grid_between(low: Fraction, high: Fraction, origin: Fraction = Fraction(0)) -> bool:
    """Whether some ``origin + GRID · j`` lies in ``[low, high]``."""
    return math.ceil((low - origin) / GRID) <= math.floor((high - origin) / GRID)


def decides(low: Fraction, high: Fraction, limit: Fraction) -> bool:
    """Whether any value in ``[low, high]`` shows the same figures, margin and verdict against
    ``limit`` as every other: the limit is not within the bounds, and no rounding point of the
    value or of its margin is."""
    if low <= limit <= high:
        return False
    return not _grid_between(low, high) and not _grid_between(limit - high, limit - low)


Interval = tuple[Fraction, Fraction] | None


def interval(e: ast.Expr, leaf: Callable[[ast.Expr], Fraction | Bounded | None]) -> Interval:
    """Bounds of a budget-level expression whose aggregates (``leaf``) are exact or
    :class:`Bounded`; None when they cannot be bounded (none, or a divisor that may be 0)."""
    match e:
        case ast.Call() if ast.is_aggregate_call(e):
            got = leaf(e)
            if isinstance(got, Bounded):
                return got.low, got.high
            return None if got is None else (got, got)
        case ast.Unary(op="-", operand=o):
            inner = interval(o, leaf)
            return None if inner is None else (-inner[1], -inner[0])
        case ast.Binary(op=op, left=lhs, right=rhs):
            a, b = interval(lhs, leaf), interval(rhs, leaf)
            return None if a is None or b is None else _binary(op, a, b)
        case ast.Per(amount=a, unit=u):
            inner, factor = interval(a, leaf), exact.unit_factor(u)
            if inner is None or factor is None:
                return None
            return inner[0] / factor, inner[1] / factor
        case ast.PercentOf(percent=p, operand=o):
            inner = interval(o, leaf)
            return None if inner is None else _scale(inner, Fraction(p.value) / 100)
        case ast.Call(func="min" | "max" as func, args=args) if len(args) >= 2:
            parts = [interval(a, leaf) for a in args]
            if any(p is None for p in parts):
                return None
            pick = min if func == "min" else max
            return pick(p[0] for p in parts if p), pick(p[1] for p in parts if p)
        case ast.Call(func="coalesce"):
            return None  # which argument is none is exact; the exact path decides
    value = exact.evaluate(e)
    return (value, value) if isinstance(value, Fraction) else None


def _scale(a: tuple[Fraction, Fraction], k: Fraction) -> tuple[Fraction, Fraction]:
    lo, hi = a[0] * k, a[1] * k
    return (lo, hi) if lo <= hi else (hi, lo)


def _binary(op: str, a: tuple[Fraction, Fraction], b: tuple[Fraction, Fraction]) -> Interval:
    if op == "+":
        return a[0] + b[0], a[1] + b[1]
    if op == "-":
        return a[0] - b[1], a[1] - b[0]
    if op == "/":
        if b[0] <= 0 <= b[1]:
            return None
        b = (1 / b[1], 1 / b[0])
    corners = [x * y for x in a for y in b]
    return min(corners), max(corners)
