"""A contract's settings, read once from its clauses: currency, rounding, billing, promises.

Defaults (docs/language.md, "Contracts"): increment 1 second, no minimum, two decimal places
rounded half away from zero, billing day and month boundaries at midnight UTC.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import time
from fractions import Fraction
from typing import TypeVar

import polars as pl

from contractlang.errors import InternalError
from contractlang.lang import ast
from contractlang.lang.exact import constant_value
from contractlang.lang.numbers import MICROS_PER_SECOND
from contractlang.lang.vocabulary import RoundingMode

T = TypeVar("T", int, pl.Expr)


@dataclass(frozen=True)
class Settings:
    currency: str
    precision: int = 2
    rounding: RoundingMode = "half_up"
    increment_us: int = MICROS_PER_SECOND
    minimum_us: int = 0
    period_end: time = time(0, 0)
    period_zone: str = "UTC"
    #: promise kind (``notice``, ``restart``) → its duration in microseconds
    promises_us: dict[str, int] = field(default_factory=dict)
    #: promise name (``promised_notice``) → its duration expression, for the compiler
    promise_exprs: dict[str, ast.Expr] = field(default_factory=dict)

    @property
    def polars_round_mode(self) -> str:
        return "half_to_even" if self.rounding == "half_even" else "half_away_from_zero"

    @property
    def minor(self) -> int:
        """Minor units per currency unit: 100 for two decimal places."""
        return int(10**self.precision)

    def billing_date(self, ts: pl.Expr) -> pl.Expr:
        """The billing day a UTC timestamp falls in: the day ending at ``period_end`` local
        time, named by its date (so with the default midnight UTC, the calendar date)."""
        local = ts.dt.convert_time_zone(self.period_zone).dt.replace_time_zone(None)
        shift_minutes = (24 * 60 - (self.period_end.hour * 60 + self.period_end.minute)) % (24 * 60)
        if shift_minutes:
            local = local + pl.duration(minutes=shift_minutes)
        return local.dt.date()

    def billing_month(self, ts: pl.Expr) -> pl.Expr:
        return self.billing_date(ts).dt.strftime("%Y-%m")


def _micros(e: ast.Expr) -> int:
    value = constant_value(e)
    if value is None:
        raise InternalError("a checked duration evaluated to none")
    return round(value * MICROS_PER_SECOND)


def read_settings(contract: ast.Contract) -> Settings:
    """The settings of a checked contract."""
    currency = None
    kw: dict[str, object] = {}
    promises_us: dict[str, int] = {}
    promise_exprs: dict[str, ast.Expr] = {}
    for c in contract.clauses:
        match c:
            case ast.Currency(code=code):
                currency = code
            case ast.Precision(digits=d):
                kw["precision"] = d
            case ast.Rounding():
                kw["rounding"] = c.rounding_mode
            case ast.BillingIncrement(duration=d):
                kw["increment_us"] = _micros(d)
            case ast.BillingMinimum(duration=d):
                kw["minimum_us"] = _micros(d)
            case ast.BillingPeriod(time=t, zone=z):
                hh, mm = t.split(":")
                kw["period_end"] = time(int(hh), int(mm))
                kw["period_zone"] = z
            case ast.Promise(kind=k, duration=d):
                promises_us[k] = _micros(d)
                promise_exprs[f"promised_{k}"] = d
            case _:
                pass
    if currency is None:
        raise InternalError(f"contract `{contract.name}` has no currency after checking")
    return Settings(
        currency=currency,
        promises_us=promises_us,
        promise_exprs=promise_exprs,
        **kw,  # type: ignore[arg-type]
    )


def round_up(us: T, increment_us: int) -> T:
    """``us`` rounded up to a whole number of increments (an ``int``, or a polars expression
    of integers): the billing increment of step 4 (docs/evaluate.md, "Order of evaluation").

    >>> round_up(61_000_000, 60_000_000), round_up(0, 60_000_000)
    (120000000, 0)
    """
    return ((us + (increment_us - 1)) // increment_us) * increment_us


def floor_minor(amount: Fraction, minor: int) -> int:
    """A cap limit in minor units, rounded down (docs/evaluate.md, "Caps").

    >>> floor_minor(Fraction("100.019"), 100)
    10001
    """
    return (amount * minor).__floor__()
