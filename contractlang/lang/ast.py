"""The typed AST of a `.spot` file.

One small frozen dataclass per construct, each a :class:`Node`. Every node has a ``span`` that
equality ignores, so two parses of differently laid-out text compare equal when they mean the
same thing (the formatter relies on this). Only :mod:`contractlang.syntax.lower` builds these,
as lark parses; nothing after it sees lark. Words a clause takes from a fixed list (a cap
level, a rounding mode) are kept as written; the checker reports a word that is not on the list
(E213), and the typed accessors (:attr:`Cap.cap_level`, :attr:`Rounding.rounding_mode`) read
them after checking.

Example::

    >>> from contractlang import parse
    >>> f = parse('contract "c" { currency USD rate 2 USD per gpu_hour }').file
    >>> f.items[0].clauses[1] == Rate(Per(Quantity(Decimal("2"), "USD"), "gpu_hour"))
    True
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import Field, dataclass, field
from decimal import Decimal
from typing import Any, ClassVar, Literal

from contractlang.diagnostics import NO_SPAN, Span
from contractlang.lang.vocabulary import (
    AGGREGATES,
    CAP_LEVELS,
    ROUNDING_MODES,
    SCALAR_FUNCTIONS,
    CapLevel,
    CompareOp,
    RoundingMode,
    percentile,
)

# --------------------------------------------------------------------------- nodes


class Node:
    """What every node shares: equality and hashing by the fields that compare (not a span, nor
    the text a number was written with), and a repr of the fields that show — as the
    dataclass would generate them, but written once: each method a dataclass generates is
    compiled when the module is imported, a cost every start of ``contractlang check`` paid
    for these 33 classes."""

    __slots__ = ()
    __dataclass_fields__: ClassVar[dict[str, Field[Any]]]

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        key = _key(self.__class__)
        return bool(key(self) == key(other))

    def __hash__(self) -> int:
        return hash(_key(self.__class__)(self))

    def __repr__(self) -> str:
        shown = (
            f"{f.name}={getattr(self, f.name)!r}"
            for f in self.__dataclass_fields__.values()
            if f.repr
        )
        return f"{self.__class__.__qualname__}({', '.join(shown)})"


_KEYS: dict[type[Node], Callable[[Node], object]] = {}


def _key(cls: type[Node]) -> Callable[[Node], object]:
    """The values of ``cls``'s fields that compare, as one object (a tuple, or the one value)."""
    key = _KEYS.get(cls)
    if key is None:
        names = [f.name for f in cls.__dataclass_fields__.values() if f.compare]
        key = operator.attrgetter(*names) if names else _nothing
        _KEYS[cls] = key
    return key


def _nothing(node: Node) -> object:
    return ()


# --------------------------------------------------------------------------- expressions


@dataclass(frozen=True, eq=False, repr=False)
class Number(Node):
    """A plain number: ``3``, ``2.10``. ``text`` keeps the written form for the formatter."""

    value: Decimal
    text: str = field(default="", compare=False)
    span: Span = field(default=NO_SPAN, compare=False, repr=False)


@dataclass(frozen=True, eq=False, repr=False)
class Percent(Node):
    """``5%``: ``value`` is the written number (5); its meaning is ``value / 100``."""

    value: Decimal
    text: str = field(default="", compare=False)
    span: Span = field(default=NO_SPAN, compare=False, repr=False)


@dataclass(frozen=True, eq=False, repr=False)
class Quantity(Node):
    """A number with a unit as written: ``30 seconds``, ``1 hour``, ``50000 USD``, ``8 gpus``.

    ``unit`` is the word as written; the checker resolves it (time, GPU, GPU-time or a currency
    code) and reports unknown units.
    """

    value: Decimal
    unit: str
    text: str = field(default="", compare=False)
    span: Span = field(default=NO_SPAN, compare=False, repr=False)


@dataclass(frozen=True, eq=False, repr=False)
class Per(Node):
    """``<amount> per <unit>``: ``2.10 USD per gpu_hour``, ``trace.price per gpu_hour``.

    Binds tighter than ``*``. A plain-number ``amount`` takes the contract's currency.
    """

    amount: Expr
    unit: str
    span: Span = field(default=NO_SPAN, compare=False, repr=False)


@dataclass(frozen=True, eq=False, repr=False)
class PercentOf(Node):
    """``X% of E`` = ``X/100 × E``: ``10% of charge``, ``30% of gross``."""

    percent: Percent
    operand: Expr
    span: Span = field(default=NO_SPAN, compare=False, repr=False)


@dataclass(frozen=True, eq=False, repr=False)
class Name(Node):
    """A bare name: a fact (``runtime``), a promise (``promised_notice``) or an enum member
    (``spot``, ``reclaimed``). The checker resolves which."""

    name: str
    span: Span = field(default=NO_SPAN, compare=False, repr=False)


@dataclass(frozen=True, eq=False, repr=False)
class TraceColumn(Node):
    """``trace.<column>``: a column of the trace, read on the allocation's ``started`` row."""

    column: str
    span: Span = field(default=NO_SPAN, compare=False, repr=False)


@dataclass(frozen=True, eq=False, repr=False)
class String(Node):
    value: str
    span: Span = field(default=NO_SPAN, compare=False, repr=False)


@dataclass(frozen=True, eq=False, repr=False)
class Bool(Node):
    value: bool
    span: Span = field(default=NO_SPAN, compare=False, repr=False)


@dataclass(frozen=True, eq=False, repr=False)
class NoneLit(Node):
    """``none``: the missing value. Logic with it is three-valued (docs/language.md, "none and
    three-valued logic")."""

    span: Span = field(default=NO_SPAN, compare=False, repr=False)


UnaryOp = Literal["-", "not"]
ArithOp = Literal["+", "-", "*", "/"]
LogicOp = Literal["and", "or"]


@dataclass(frozen=True, eq=False, repr=False)
class Unary(Node):
    op: UnaryOp
    operand: Expr
    span: Span = field(default=NO_SPAN, compare=False, repr=False)


@dataclass(frozen=True, eq=False, repr=False)
class Binary(Node):
    """Arithmetic: ``+ - * /``."""

    op: ArithOp
    left: Expr
    right: Expr
    span: Span = field(default=NO_SPAN, compare=False, repr=False)


@dataclass(frozen=True, eq=False, repr=False)
class Compare(Node):
    op: CompareOp
    left: Expr
    right: Expr
    span: Span = field(default=NO_SPAN, compare=False, repr=False)


@dataclass(frozen=True, eq=False, repr=False)
class Logic(Node):
    op: LogicOp
    left: Expr
    right: Expr
    span: Span = field(default=NO_SPAN, compare=False, repr=False)


@dataclass(frozen=True, eq=False, repr=False)
class In(Node):
    """``value in [a, b]`` (``negated`` for ``not in``)."""

    value: Expr
    options: tuple[Expr, ...]
    negated: bool = False
    span: Span = field(default=NO_SPAN, compare=False, repr=False)


@dataclass(frozen=True, eq=False, repr=False)
class Call(Node):
    """A function call: scalar ``coalesce``, ``min``, ``max``; in budgets the aggregates
    ``mean``, ``sum``, ``min``, ``max``, ``share``, ``count`` and ``pN`` (``p95``)."""

    func: str
    args: tuple[Expr, ...]
    span: Span = field(default=NO_SPAN, compare=False, repr=False)
    func_span: Span = field(default=NO_SPAN, compare=False, repr=False)


Expr = (
    Number
    | Percent
    | Quantity
    | Per
    | PercentOf
    | Name
    | TraceColumn
    | String
    | Bool
    | NoneLit
    | Unary
    | Binary
    | Compare
    | Logic
    | In
    | Call
)


# --------------------------------------------------------------------------- contract clauses


@dataclass(frozen=True, eq=False, repr=False)
class Currency(Node):
    code: str
    span: Span = field(default=NO_SPAN, compare=False, repr=False)


@dataclass(frozen=True, eq=False, repr=False)
class Rounding(Node):
    """``rounding half_up|half_even``. ``half_up`` rounds half away from zero (the default).
    ``mode`` is the word as written."""

    mode: str
    span: Span = field(default=NO_SPAN, compare=False, repr=False)

    @property
    def rounding_mode(self) -> RoundingMode:
        """The mode of a checked clause."""
        for mode in ROUNDING_MODES:
            if mode == self.mode:
                return mode
        raise ValueError(f"`{self.mode}` is not a rounding mode (the checker reports it)")


@dataclass(frozen=True, eq=False, repr=False)
class Precision(Node):
    """``precision N``: ledger lines are rounded to N decimal places (default 2)."""

    digits: int
    span: Span = field(default=NO_SPAN, compare=False, repr=False)


@dataclass(frozen=True, eq=False, repr=False)
class Rate(Node):
    """``rate <price> [when <cond>]``: the first rate whose condition holds and whose price is
    not none prices the allocation."""

    price: Expr
    when: Expr | None = None
    span: Span = field(default=NO_SPAN, compare=False, repr=False)


@dataclass(frozen=True, eq=False, repr=False)
class BillingIncrement(Node):
    duration: Expr
    span: Span = field(default=NO_SPAN, compare=False, repr=False)


@dataclass(frozen=True, eq=False, repr=False)
class BillingMinimum(Node):
    duration: Expr
    span: Span = field(default=NO_SPAN, compare=False, repr=False)


@dataclass(frozen=True, eq=False, repr=False)
class BillingPeriod(Node):
    """``billing period ends 17:00 "America/New_York"``: moves day and month boundaries."""

    time: str
    zone: str
    span: Span = field(default=NO_SPAN, compare=False, repr=False)


PromiseKind = Literal["notice", "restart"]


@dataclass(frozen=True, eq=False, repr=False)
class Promise(Node):
    """``promise reclaim notice <duration>`` (kind ``notice``) or ``promise restart within
    <duration>`` (kind ``restart``). Read by terms as ``promised_notice``/``promised_restart``."""

    kind: PromiseKind
    duration: Expr
    span: Span = field(default=NO_SPAN, compare=False, repr=False)


@dataclass(frozen=True, eq=False, repr=False)
class ExcludeAllocation(Node):
    """``exclude NAME allocation when C``: the whole allocation is not charged."""

    name: str
    when: Expr | None
    span: Span = field(default=NO_SPAN, compare=False, repr=False)


@dataclass(frozen=True, eq=False, repr=False)
class ExcludeDuration(Node):
    """``exclude NAME <duration> when C``: that duration leaves billable time."""

    name: str
    duration: Expr
    when: Expr | None
    span: Span = field(default=NO_SPAN, compare=False, repr=False)


@dataclass(frozen=True, eq=False, repr=False)
class Credit(Node):
    """``credit NAME <money> when C``."""

    name: str
    amount: Expr
    when: Expr | None
    span: Span = field(default=NO_SPAN, compare=False, repr=False)


@dataclass(frozen=True, eq=False, repr=False)
class Cap(Node):
    """``cap credits at <money | X% of gross> per allocation|run|month|contract``. ``level``
    is the word as written."""

    limit: Expr
    level: str
    span: Span = field(default=NO_SPAN, compare=False, repr=False)

    @property
    def cap_level(self) -> CapLevel:
        """The level of a checked cap."""
        for level in CAP_LEVELS:
            if level == self.level:
                return level
        raise ValueError(f"`{self.level}` is not a cap level (the checker reports it)")


Clause = (
    Currency
    | Rounding
    | Precision
    | Rate
    | BillingIncrement
    | BillingMinimum
    | BillingPeriod
    | Promise
    | ExcludeAllocation
    | ExcludeDuration
    | Credit
    | Cap
)


@dataclass(frozen=True, eq=False, repr=False)
class Contract(Node):
    name: str
    clauses: tuple[Clause, ...]
    span: Span = field(default=NO_SPAN, compare=False, repr=False)
    name_span: Span = field(default=NO_SPAN, compare=False, repr=False)


# --------------------------------------------------------------------------- budgets


@dataclass(frozen=True, eq=False, repr=False)
class Require(Node):
    """``require <aggregate expression> <op> <limit>``."""

    expr: Expr
    span: Span = field(default=NO_SPAN, compare=False, repr=False)


@dataclass(frozen=True, eq=False, repr=False)
class Budget(Node):
    name: str
    requires: tuple[Require, ...]
    span: Span = field(default=NO_SPAN, compare=False, repr=False)
    name_span: Span = field(default=NO_SPAN, compare=False, repr=False)


Item = Contract | Budget


# --------------------------------------------------------------------------- files


@dataclass(frozen=True, eq=False, repr=False)
class Comment(Node):
    """A ``#`` comment: ``text`` includes the ``#``; ``line`` is where it stands."""

    text: str
    span: Span = field(default=NO_SPAN, compare=False, repr=False)


@dataclass(frozen=True, eq=False, repr=False)
class SpotFile(Node):
    """One parsed `.spot` file. ``comments`` are kept for the formatter, in source order;
    equality of files compares items only."""

    items: tuple[Item, ...]
    comments: tuple[Comment, ...] = field(default=(), compare=False)
    name: str = field(default="<input>", compare=False)

    @property
    def contracts(self) -> tuple[Contract, ...]:
        return tuple(i for i in self.items if isinstance(i, Contract))

    @property
    def budgets(self) -> tuple[Budget, ...]:
        return tuple(i for i in self.items if isinstance(i, Budget))


def children(expr: Expr) -> tuple[Expr, ...]:
    """The direct sub-expressions of ``expr``, in source order."""
    match expr:
        case Per(amount=a):
            return (a,)
        case PercentOf(percent=p, operand=o):
            return (p, o)
        case Unary(operand=o):
            return (o,)
        case Binary(left=lhs, right=rhs) | Compare(left=lhs, right=rhs):
            return (lhs, rhs)
        case Logic(left=lhs, right=rhs):
            return (lhs, rhs)
        case In(value=v, options=opts):
            return (v, *opts)
        case Call(args=args):
            return args
        case _:
            return ()


def is_aggregate_call(call: Call) -> bool:
    """Whether ``call`` is an aggregate over runs: a name of
    :data:`~contractlang.lang.vocabulary.AGGREGATES` or ``pN`` — but ``min`` and ``max`` only
    with one argument (with more, they are the scalar functions).

    >>> is_aggregate_call(Call("max", (Name("net"),)))
    True
    >>> is_aggregate_call(Call("max", (Name("runtime"), Name("queue_wait"))))
    False
    """
    if percentile(call.func) is not None:
        return True
    if call.func in SCALAR_FUNCTIONS:
        return call.func in AGGREGATES and len(call.args) == 1
    return call.func in AGGREGATES


def has_aggregate(expr: Expr) -> bool:
    """Whether an aggregate over runs stands anywhere in ``expr``."""
    return any(isinstance(n, Call) and is_aggregate_call(n) for n in walk(expr))


def reads(expr: Expr | None, name: str) -> bool:
    """Whether ``expr`` reads the fact (or promise) ``name``."""
    return expr is not None and any(isinstance(n, Name) and n.name == name for n in walk(expr))


def conjuncts(expr: Expr | None) -> list[Expr]:
    """The operands of ``expr``'s top-level ``and``s, in source order (none for no ``expr``)."""
    if expr is None:
        return []
    if isinstance(expr, Logic) and expr.op == "and":
        return [*conjuncts(expr.left), *conjuncts(expr.right)]
    return [expr]


def walk(expr: Expr) -> list[Expr]:
    """``expr`` and every expression below it, depth first, in source order."""
    out: list[Expr] = []
    stack: list[Expr] = [expr]
    while stack:
        node = stack.pop()
        out.append(node)
        stack.extend(reversed(children(node)))
    return out
