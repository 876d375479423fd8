"""What every rule of the checker shares: where an expression stands (:class:`Ctx`), what it
was found to be (:class:`Typed`), where problems go (:class:`Reporter`), and the words messages
use for types.

Diagnostics are collected, never raised: every rule reports what it finds and goes on, and a
sub-expression that already failed has type :data:`~contractlang.lang.types.ERROR`, so one
mistake is reported once.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from contractlang.diagnostics import (
    NO_SPAN,
    Diagnostic,
    Related,
    Severity,
    Span,
    did_you_mean,
)
from contractlang.lang import ast as A
from contractlang.lang.facts import FACTS, Stage
from contractlang.lang.show import quote
from contractlang.lang.types import Type, enum_of_member, is_currency_code, number
from contractlang.lang.vocabulary import ENUMS

#: Facts' money is in the contract's currency (``facts.py``); the checker substitutes it.
CONTRACT_CURRENCY = "*"


@dataclass
class Reporter:
    """Collects the diagnostics of one check, each marked with the file being checked."""

    diags: list[Diagnostic] = field(default_factory=list)
    file: str = "<input>"

    def report(
        self,
        severity: Severity,
        code: str,
        message: str,
        span: Span,
        *,
        help: str | None = None,
        related: Sequence[Related] = (),
    ) -> None:
        self.diags.append(
            Diagnostic(code, message, span, self.file, help, tuple(related), severity=severity)
        )

    def error(self, code: str, message: str, span: Span, **kw: Any) -> None:
        self.report(Severity.ERROR, code, message, span, **kw)

    def warning(self, code: str, message: str, span: Span, **kw: Any) -> None:
        self.report(Severity.WARNING, code, message, span, **kw)

    def mismatch(
        self, code: str, message: str, span: Span, *operands: Typed, help: str | None = None
    ) -> None:
        """A mismatch, with a note at each operand saying where its type came from."""
        self.error(
            code, message, span, help=help, related=[Related(o.span, o.origin) for o in operands]
        )

    def errors_since(self, count: int) -> bool:
        """Whether an error was reported after the first ``count`` diagnostics."""
        return any(d.is_error for d in self.diags[count:])


class Infers(Protocol):
    """What the rules for operators and calls need of the expression checker
    (:class:`contractlang.check.infer.Inferrer`)."""

    report: Reporter

    def infer(self, expr: A.Expr, ctx: Ctx) -> Typed: ...


# --------------------------------------------------------------------------- wording


def noun(t: Type) -> str:
    """A type as a noun phrase in a sentence: ``time``, ``money (USD)``, ``a string``."""
    if t.kind == "number":
        if t.dim.is_plain:
            return "a plain number"
        shown = number(t.dim, None if t.currency == CONTRACT_CURRENCY else t.currency)
        return shown.describe()
    if t.kind == "enum":
        return f"{article(t.enum or '')} `{t.enum}`"
    if t.kind == "string":
        return "a string"
    return t.describe()


def article(word: str) -> str:
    return "an" if word[:1].lower() in "aeiou" else "a"


def members(enum: str) -> str:
    names = [f"`{m}`" for m in ENUMS[enum]]
    return ", ".join(names[:-1]) + " or " + names[-1]


def origin(expr: A.Expr, t: Type) -> str:
    """Where a value's type came from, as a note says it: "`replacement_wait` is time"."""
    quoted = quote(expr)
    subject = quoted if quoted else "this"
    return f"{subject} is {noun(t)}"


def tail(span: Span, width: int) -> Span:
    """The last ``width`` characters of a one-line span (the unit of ``30 minuts``, the zone
    of a `billing period` clause); the whole span when that cannot be told."""
    if span is NO_SPAN or span.line != span.end_line or span.end_col - width < span.col:
        return span
    return Span(
        span.end_line, span.end_col - width, span.end_line, span.end_col,
        span.end_pos - width, span.end_pos,
    )  # fmt: skip


# --------------------------------------------------------------------------- context


_ROLE_PHRASE = {
    "rate": "a rate",
    "exclusion": "an exclusion",
    "credit": "a credit",
    "cap": "a cap",
    "billing increment": "`billing increment`",
    "billing minimum": "`billing minimum`",
    "promise": "a promise",
    "require": "a budget",
}


@dataclass(frozen=True)
class Ctx:
    """Where an expression stands: which clause, which facts it may read, which currency."""

    role: str
    max_stage: Stage
    currency: str | None  # the contract's (or the require's) currency, if known
    currency_span: Span | None
    currency_where: str  # "contract `x`" / "this requirement"
    contract: str | None  # None in a budget
    promises: frozenset[str] = frozenset()
    in_aggregate: bool = False

    @property
    def in_budget(self) -> bool:
        return self.contract is None

    def phrase(self) -> str:
        return _ROLE_PHRASE.get(self.role, self.role)


@dataclass(frozen=True)
class Typed:
    """A typed expression: its type, its span and where the type came from (``note``, or
    worked out from ``expr`` only when a message needs it)."""

    type: Type
    span: Span
    note: str = ""
    expr: A.Expr | None = None

    @property
    def origin(self) -> str:
        if self.note or self.expr is None:
            return self.note
        return origin(self.expr, self.type)

    @property
    def failed(self) -> bool:
        return self.type.kind == "error"


def concrete(currency: str | None) -> bool:
    return currency is not None and currency != CONTRACT_CURRENCY


def merge_currency(a: Type, b: Type) -> str | None:
    for c in (a.currency, b.currency):
        if concrete(c):
            return c
    for c in (a.currency, b.currency):
        if c is not None:
            return c
    return None


def currency_clash(a: Type, b: Type) -> bool:
    return (
        a.kind == b.kind == "number"
        and concrete(a.currency)
        and concrete(b.currency)
        and a.currency != b.currency
    )


def suggest(word: str, candidates: Iterable[str], quote: str = "`") -> str | None:
    """ "did you mean `x`?" when ``word`` is a likely typo of a candidate."""
    s = did_you_mean(word, candidates)
    return f"did you mean {quote}{s}{quote}?" if s else None


def is_member(expr: A.Name) -> bool:
    """Whether a name is an enum member (and not a fact)."""
    return expr.name not in FACTS and enum_of_member(expr.name) is not None


def first_currency(expr: A.Expr) -> tuple[str | None, Span | None]:
    """The first currency written in a requirement, which the rest must match."""
    for node in A.walk(expr):
        if isinstance(node, (A.Quantity, A.Per)) and is_currency_code(node.unit):
            return node.unit, node.span
    return None, None
