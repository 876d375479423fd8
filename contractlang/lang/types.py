"""Types and units of the language: a dimension algebra over currency, GPU and time.

A quantity's unit is a vector of exponents over three dimensions. Multiplication and division
add and subtract exponents; addition, subtraction and comparison need equal vectors; a quantity
divided by one of the same dimension is a plain number (docs/language.md, "Units and the
dimension algebra").

Each unit word also carries an exact factor to the base unit (second, GPU, one unit of the
currency), used by the compiler to keep arithmetic exact::

    >>> UNITS["gpu_hour"]
    UnitDef(dim=Dim(currency=0, gpu=1, time=1), factor=Fraction(3600, 1))
    >>> (MONEY / GPU_TIME).describe()
    'money per GPU-time'
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

from contractlang.lang.vocabulary import ENUMS, TIME_UNITS


@dataclass(frozen=True, slots=True)
class Dim:
    """Exponents over (currency, gpu, time)."""

    currency: int = 0
    gpu: int = 0
    time: int = 0

    def __mul__(self, other: Dim) -> Dim:
        return Dim(self.currency + other.currency, self.gpu + other.gpu, self.time + other.time)

    def __truediv__(self, other: Dim) -> Dim:
        return Dim(self.currency - other.currency, self.gpu - other.gpu, self.time - other.time)

    @property
    def is_plain(self) -> bool:
        return self == PLAIN

    def describe(self) -> str:
        """A short English name for the dimension, as messages show it."""
        named = _DIM_NAMES.get(self)
        if named:
            return named
        parts = []
        for label, exp in (("currency", self.currency), ("gpu", self.gpu), ("time", self.time)):
            if exp == 1:
                parts.append(label)
            elif exp != 0:
                parts.append(f"{label}^{exp}")
        return " × ".join(parts)


PLAIN = Dim()
MONEY = Dim(currency=1)
GPU = Dim(gpu=1)
TIME = Dim(time=1)
GPU_TIME = Dim(gpu=1, time=1)

_DIM_NAMES: dict[Dim, str] = {
    PLAIN: "plain number",
    MONEY: "money",
    GPU: "GPUs",
    TIME: "time",
    GPU_TIME: "GPU-time",
    MONEY / GPU_TIME: "money per GPU-time",
    MONEY / TIME: "money per time",
    MONEY / GPU: "money per GPU",
    Dim(time=-1): "per time",
}


@dataclass(frozen=True, slots=True)
class UnitDef:
    dim: Dim
    factor: Fraction  # how many base units (second, GPU) one of this unit is


def _units() -> dict[str, UnitDef]:
    table: dict[str, UnitDef] = {}
    for word, secs in TIME_UNITS.items():
        for form in (word, word + "s"):
            table[form] = UnitDef(TIME, Fraction(secs))
            table["gpu_" + form] = UnitDef(GPU_TIME, Fraction(secs))
    table["gpu"] = table["gpus"] = UnitDef(GPU, Fraction(1))
    return table


UNITS: dict[str, UnitDef] = _units()

CURRENCY_RE = re.compile(r"^[A-Z]{3}$")


def is_currency_code(word: str) -> bool:
    """ISO 4217 style: three capital letters (``USD``, ``EUR``)."""
    return bool(CURRENCY_RE.match(word))


Kind = Literal["number", "bool", "string", "enum", "none", "error"]


@dataclass(frozen=True, slots=True)
class Type:
    """The type of a value.

    ``number`` values have a dimension (``dim``) and, when money is involved, a currency.
    ``enum`` values name their enum (``capacity``, ``end_reason``). ``none`` is the type of the
    literal ``none``, compatible with anything. ``error`` stands for a sub-expression that
    already produced a diagnostic, so one mistake is reported once.
    """

    kind: Kind
    dim: Dim = PLAIN
    currency: str | None = None
    enum: str | None = None

    def describe(self) -> str:
        if self.kind == "number":
            base = self.dim.describe()
            return f"{base} ({self.currency})" if self.currency and self.dim.currency else base
        if self.kind == "enum":
            return f"`{self.enum}`"
        if self.kind == "bool":
            return "true/false"
        return self.kind

    @property
    def is_numeric(self) -> bool:
        return self.kind == "number"


def number(dim: Dim = PLAIN, currency: str | None = None) -> Type:
    return Type("number", dim, currency if dim.currency else None)


BOOL = Type("bool")
STRING = Type("string")
NONE = Type("none")
ERROR = Type("error")
PLAIN_NUMBER = number()


def enum_of_member(member: str) -> str | None:
    """The enum a bare member name belongs to (``spot`` → ``capacity``), if any."""
    for enum, members in ENUMS.items():
        if member in members:
            return enum
    return None


def enum_type(enum: str) -> Type:
    return Type("enum", enum=enum)
