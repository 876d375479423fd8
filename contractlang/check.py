"""The checker: names, units, types, stages and lints over the AST, as diagnostics.

It runs after :mod:`contractlang.lower` and before anything is compiled. It is pure: it reads
the AST and returns every problem it finds, not only the first, and reports each mistake once
(a sub-expression that already failed has type :data:`types.ERROR` and is not reported again).

Example::

    >>> from contractlang.parse import parse
    >>> f = parse('contract "c" { currency USD rate 2 USD per gpu_hour + 1 hour }').file
    >>> [d.code for d in check(f).diagnostics]
    ['E201']

The rules are listed in ``docs/language.md``; in short: names resolve to facts, promises or
enum members; units combine by the dimension algebra of :mod:`contractlang.types`; a clause
reads only facts of its level (contracts: one allocation; budgets: runs, inside aggregates)
and of earlier stages (rates and exclusions: trace facts; credits: up to ``charge``); each
clause has its own shape rules; two lints find rates that are never reached (W001) and
replays that could be refunded twice (W002).
"""

from __future__ import annotations

import re
import zoneinfo
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import cache

from contractlang import ast as A
from contractlang import exact
from contractlang.diagnostics import (
    NO_SPAN,
    Diagnostic,
    Related,
    Span,
    did_you_mean,
    error,
    has_errors,
    sort_key,
    warning,
)
from contractlang.facts import FACTS, PROMISE_TYPE, PROMISES, Fact, Stage
from contractlang.types import (
    BOOL,
    ENUMS,
    ERROR,
    GPU,
    GPU_TIME,
    MONEY,
    NONE,
    PLAIN_NUMBER,
    STRING,
    TIME,
    UNITS,
    Dim,
    Type,
    enum_of_member,
    enum_type,
    is_currency_code,
    number,
)

__all__ = [
    "AGGREGATES",
    "SCALAR_FUNCTIONS",
    "CheckResult",
    "check",
    "constant_value",
    "is_aggregate_call",
    "is_constant",
    "percentile",
    "show",
]

#: Functions usable anywhere: ``coalesce(a, b, …)``, ``min(a, b, …)``, ``max(a, b, …)``.
SCALAR_FUNCTIONS: tuple[str, ...] = ("coalesce", "min", "max")
#: Aggregates over runs, usable only in a budget's ``require`` (plus ``pN``, any percentile;
#: ``min``/``max`` are aggregates when they have one argument).
AGGREGATES: tuple[str, ...] = ("mean", "sum", "min", "max", "share", "count")

_PERCENTILE_RE = re.compile(r"^p([0-9]+)$")
_TIME_RE = re.compile(r"^([0-9]{1,2}):([0-9]{2})$")
_ROUNDING_MODES = ("half_up", "half_even")
_MAX_PRECISION = 10
_MICROSECOND = Fraction(1, 1_000_000)
_CONTRACT_CURRENCY = "*"  # facts' money is in the contract's currency (facts.py)


@dataclass(frozen=True)
class CheckResult:
    """The diagnostics of a check, sorted by file, line and column."""

    diagnostics: tuple[Diagnostic, ...]

    @property
    def ok(self) -> bool:
        """True when there is no error (warnings allowed)."""
        return not has_errors(self.diagnostics)

    @property
    def errors(self) -> tuple[Diagnostic, ...]:
        return tuple(d for d in self.diagnostics if d.is_error)

    @property
    def warnings(self) -> tuple[Diagnostic, ...]:
        return tuple(d for d in self.diagnostics if not d.is_error)


def check(files: A.SpotFile | Sequence[A.SpotFile]) -> CheckResult:
    """Check one file or several together (contract and budget names must be unique across
    all of them). Diagnostics carry each file's ``name``.

    >>> check(A.SpotFile(items=())).ok
    True
    """
    seq = (files,) if isinstance(files, A.SpotFile) else tuple(files)
    checker = _Checker()
    checker.run(seq)
    return CheckResult(tuple(sorted(checker.diags, key=sort_key)))


# --------------------------------------------------------------------------- public helpers


def percentile(func: str) -> int | None:
    """The N of a ``pN`` aggregate name (``p95`` → 95), or None when ``func`` is not of that
    form. The value is not range-checked (``p101`` → 101; the checker reports it)."""
    m = _PERCENTILE_RE.match(func)
    return int(m.group(1)) if m else None


def is_aggregate_call(call: A.Call) -> bool:
    """Whether ``call`` is an aggregate over runs: ``mean``, ``sum``, ``share``, ``count``,
    ``pN`` and one-argument ``min``/``max``.

    >>> is_aggregate_call(A.Call("max", (A.Name("net"),)))
    True
    >>> is_aggregate_call(A.Call("max", (A.Name("runtime"), A.Name("queue_wait"))))
    False
    """
    if call.func in ("mean", "sum", "share", "count") or percentile(call.func) is not None:
        return True
    return call.func in ("min", "max") and len(call.args) == 1


def is_constant(expr: A.Expr) -> bool:
    """True when ``expr`` has no names, no ``trace.<column>`` and no aggregate or unknown
    call: its value is known before any trace is read.

    >>> from decimal import Decimal as D
    >>> is_constant(A.Binary("+", A.Quantity(D(1), "hour"), A.Quantity(D(30), "minutes")))
    True
    >>> is_constant(A.Per(A.TraceColumn("price"), "gpu_hour"))
    False
    """
    for node in A.walk(expr):
        if isinstance(node, (A.Name, A.TraceColumn)):
            return False
        if isinstance(node, A.Call) and (
            node.func not in SCALAR_FUNCTIONS or is_aggregate_call(node)
        ):
            return False
    return True


def constant_value(expr: A.Expr) -> Fraction | None:
    """The exact value of a constant numeric expression in base units — seconds, GPUs, GPU-
    seconds, one unit of currency (``per gpu_hour`` divides by 3600) — or None when it is not
    constant, not numeric, has an unknown unit or divides by zero. Percentages are fractions.

    >>> from decimal import Decimal as D
    >>> constant_value(A.Binary("+", A.Quantity(D(1), "hour"), A.Quantity(D(30), "minutes")))
    Fraction(5400, 1)
    >>> constant_value(A.Per(A.Quantity(D("3.6"), "USD"), "gpu_hour"))
    Fraction(1, 1000)
    """
    value = exact.evaluate(expr)
    return value if isinstance(value, Fraction) else None


# --------------------------------------------------------------------------- wording


def _noun(t: Type) -> str:
    """A type as a noun phrase in a sentence: ``time``, ``money (USD)``, ``a string``."""
    if t.kind == "number":
        if t.dim.is_plain:
            return "a plain number"
        shown = number(t.dim, None if t.currency == _CONTRACT_CURRENCY else t.currency)
        return shown.describe()
    if t.kind == "enum":
        return f"{_article(t.enum or '')} `{t.enum}`"
    if t.kind == "string":
        return "a string"
    return t.describe()


def _article(word: str) -> str:
    return "an" if word[:1].lower() in "aeiou" else "a"


def _members(enum: str) -> str:
    names = [f"`{m}`" for m in ENUMS[enum]]
    return ", ".join(names[:-1]) + " or " + names[-1]


def _num(value: object, text: str) -> str:
    return text if text else str(value)


_PREC = {"or": 1, "and": 2, "not": 3, "cmp": 4, "+": 5, "-": 5, "*": 6, "/": 6, "neg": 7}


def show(expr: A.Expr) -> str:
    """A compact source-like rendering of ``expr``, for messages.

    >>> from decimal import Decimal as D
    >>> show(A.Binary("-", A.Name("replacement_wait"), A.Quantity(D(15), "minutes")))
    'replacement_wait - 15 minutes'
    """
    return _show(expr, 0)


def _show(expr: A.Expr, outer: int) -> str:
    text, prec = _show_prec(expr)
    return f"({text})" if prec < outer else text


def _show_prec(expr: A.Expr) -> tuple[str, int]:
    atom = 9
    match expr:
        case A.Number(value=v, text=t):
            return _num(v, t), atom
        case A.Percent(value=v, text=t):
            s = _num(v, t)
            return (s if s.endswith("%") else s + "%"), atom
        case A.Quantity(value=v, unit=u, text=t):
            s = _num(v, t)
            return (s if s.endswith(u) else f"{s} {u}"), atom
        case A.Per(amount=a, unit=u):
            return f"{_show(a, atom)} per {u}", 8
        case A.PercentOf(percent=pct, operand=o):
            return f"{_show(pct, atom)} of {_show(o, 8)}", 8
        case A.Name(name=n):
            return n, atom
        case A.TraceColumn(column=c):
            return f"trace.{c}", atom
        case A.String(value=v):
            return f'"{v}"', atom
        case A.Bool(value=b):
            return ("true" if b else "false"), atom
        case A.NoneLit():
            return "none", atom
        case A.Unary(op="-", operand=o):
            return f"-{_show(o, _PREC['neg'])}", _PREC["neg"]
        case A.Unary(operand=o):
            return f"not {_show(o, _PREC['not'])}", _PREC["not"]
        case A.Binary(op=op, left=lhs, right=rhs):
            p = _PREC[op]
            return f"{_show(lhs, p)} {op} {_show(rhs, p + 1)}", p
        case A.Compare(op=op, left=lhs, right=rhs):
            p = _PREC["cmp"]
            return f"{_show(lhs, p + 1)} {op} {_show(rhs, p + 1)}", p
        case A.Logic(op=op, left=lhs, right=rhs):
            p = _PREC[op]
            return f"{_show(lhs, p)} {op} {_show(rhs, p + 1)}", p
        case A.In(value=v, options=opts, negated=neg):
            p = _PREC["cmp"]
            inner = ", ".join(_show(o, 0) for o in opts)
            return f"{_show(v, p + 1)} {'not in' if neg else 'in'} [{inner}]", p
        case A.Call(func=f, args=args):
            return f"{f}({', '.join(_show(a, 0) for a in args)})", atom
    raise AssertionError(f"unknown expression node {expr!r}")  # pragma: no cover


def _quote(expr: A.Expr, limit: int = 40) -> str | None:
    text = show(expr)
    return f"`{text}`" if len(text) <= limit else None


def _origin(expr: A.Expr, t: Type) -> str:
    """Where a value's type came from, as a note says it: "`replacement_wait` is time"."""
    quoted = _quote(expr)
    subject = quoted if quoted else "this"
    return f"{subject} is {_noun(t)}"


def _tail(span: Span, width: int) -> Span:
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

_STAGE_AFTER = {
    Stage.BILLABLE: "exclusions and billing rounding apply",
    Stage.CHARGE: "rates apply",
    Stage.RUN: "a whole run is billed",
}

#: In a budget, the per-run fact that sums an allocation fact, for help text.
_RUN_COUNTERPART = {
    "gpu_time": "metered_gpu_time",
    "runtime": "metered_gpu_time",
    "replayed_time": "lost_gpu_time",
    "replayed_steps": "lost_steps",
    "billable_time": "billable_gpu_time",
    "charge": "gross",
    "end_reason": "reclaims",
}


@dataclass(frozen=True)
class _Ctx:
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
class _T:
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
        return _origin(self.expr, self.type)

    @property
    def failed(self) -> bool:
        return self.type.kind == "error"


def _concrete(currency: str | None) -> bool:
    return currency is not None and currency != _CONTRACT_CURRENCY


def _merge_currency(a: Type, b: Type) -> str | None:
    for c in (a.currency, b.currency):
        if _concrete(c):
            return c
    for c in (a.currency, b.currency):
        if c is not None:
            return c
    return None


def _currency_clash(a: Type, b: Type) -> bool:
    return (
        a.kind == b.kind == "number"
        and _concrete(a.currency)
        and _concrete(b.currency)
        and a.currency != b.currency
    )


# --------------------------------------------------------------------------- the checker


class _Checker:
    def __init__(self) -> None:
        self.diags: list[Diagnostic] = []
        self.file = "<input>"
        self.bad_prices: set[int] = set()  # ids of rate prices that failed to check

    # -- reporting

    def error(
        self,
        code: str,
        message: str,
        span: Span,
        *,
        help: str | None = None,
        related: Sequence[Related] = (),
    ) -> None:
        self.diags.append(
            error(code, message, span, file=self.file, help=help, related=tuple(related))
        )

    def warning(
        self,
        code: str,
        message: str,
        span: Span,
        *,
        help: str | None = None,
        related: Sequence[Related] = (),
    ) -> None:
        self.diags.append(
            warning(code, message, span, file=self.file, help=help, related=tuple(related))
        )

    def mismatch(
        self, code: str, message: str, span: Span, *operands: _T, help: str | None = None
    ) -> None:
        """A mismatch, with a note at each operand saying where its type came from."""
        self.error(
            code, message, span, help=help, related=[Related(o.span, o.origin) for o in operands]
        )

    # -- files

    def run(self, files: Sequence[A.SpotFile]) -> None:
        contracts: dict[str, tuple[str, A.Contract]] = {}
        budgets: dict[str, tuple[str, A.Budget]] = {}
        for f in files:
            self.file = f.name
            for item in f.items:
                if isinstance(item, A.Contract):
                    self.duplicate("contract", "E103", item.name, item.name_span, contracts)
                    contracts.setdefault(item.name, (f.name, item))
                    self.contract(item)
                else:
                    self.duplicate("budget", "E104", item.name, item.name_span, budgets)
                    budgets.setdefault(item.name, (f.name, item))
                    self.budget(item)

    def duplicate(
        self,
        what: str,
        code: str,
        name: str,
        span: Span,
        seen: dict[str, tuple[str, A.Contract]] | dict[str, tuple[str, A.Budget]],
    ) -> None:
        if name not in seen:
            return
        first_file, first = seen[name]
        message = f"{what} `{name}` is defined more than once"
        if first_file == self.file:
            self.error(
                code,
                message,
                span,
                help=f"give each {what} its own name",
                related=[Related(first.name_span, f"`{name}` is first defined here")],
            )
        else:
            line = first.name_span.line
            self.error(
                code,
                message,
                span,
                help=f"`{name}` is first defined in {first_file} at line {line}; "
                f"give each {what} its own name",
            )

    # -- contracts

    def contract(self, c: A.Contract) -> None:
        currency, currency_span = self.settings(c)
        promises = frozenset(cl.kind for cl in c.clauses if isinstance(cl, A.Promise))

        def ctx(role: str, stage: Stage) -> _Ctx:
            return _Ctx(
                role=role,
                max_stage=stage,
                currency=currency,
                currency_span=currency_span,
                currency_where=f"contract `{c.name}`",
                contract=c.name,
                promises=promises,
            )

        for cl in c.clauses:
            match cl:
                case A.Rate(price=price, when=when):
                    self.rate(price, when, ctx("rate", Stage.TRACE))
                case A.BillingIncrement(duration=d):
                    self.constant_duration(
                        d,
                        "billing increment",
                        ctx("billing increment", Stage.CHARGE),
                        positive=True,
                    )
                case A.BillingMinimum(duration=d):
                    self.constant_duration(
                        d, "billing minimum", ctx("billing minimum", Stage.CHARGE), positive=False
                    )
                case A.Promise(kind=kind, duration=d):
                    what = (
                        "promise reclaim notice" if kind == "notice" else "promise restart within"
                    )
                    self.constant_duration(d, what, ctx("promise", Stage.CHARGE), positive=False)
                case A.ExcludeAllocation(name=name, when=when):
                    self.require_when(cl, "exclusion", name, when, f'exclude "{name}" allocation')
                    self.condition(when, ctx("exclusion", Stage.TRACE))
                case A.ExcludeDuration(name=name, duration=d, when=when):
                    self.require_when(cl, "exclusion", name, when, f'exclude "{name}" {show(d)}')
                    self.exclusion_duration(name, d, ctx("exclusion", Stage.TRACE))
                    self.condition(when, ctx("exclusion", Stage.TRACE))
                case A.Credit(name=name, amount=amount, when=when):
                    self.require_when(cl, "credit", name, when, f'credit "{name}" {show(amount)}')
                    self.credit(name, amount, ctx("credit", Stage.CHARGE))
                    self.condition(when, ctx("credit", Stage.CHARGE))
                case A.Cap(limit=limit, level=level):
                    self.cap(cl, limit, level, ctx("cap", Stage.CHARGE))
                case _:
                    pass  # settings: checked in `settings`

        if not any(isinstance(cl, A.Rate) for cl in c.clauses):
            self.error(
                "E305",
                f"contract `{c.name}` has no rate, so nothing in it can be priced",
                c.name_span,
                help="add a rate such as `rate 2.10 USD per gpu_hour`",
            )
        self.unreachable_rates(c)
        self.double_refunds(c)

    def settings(self, c: A.Contract) -> tuple[str | None, Span | None]:
        """Currency, rounding, precision, billing period; repeated settings and term names.
        Returns the contract's currency (None when missing or invalid) and its clause's span."""
        first: dict[str, A.Clause] = {}
        terms: dict[str, A.Clause] = {}
        currency: str | None = None
        currency_span: Span | None = None
        currency_clauses = [cl for cl in c.clauses if isinstance(cl, A.Currency)]
        for cl in c.clauses:
            key = _setting_key(cl)
            if key is not None and not isinstance(cl, A.Currency):
                if key in first:
                    self.error(
                        "E303",
                        f"`{key}` is set more than once in contract `{c.name}`",
                        cl.span,
                        help="keep one of them",
                        related=[Related(first[key].span, "it is first set here")],
                    )
                else:
                    first[key] = cl
            if isinstance(cl, (A.ExcludeAllocation, A.ExcludeDuration, A.Credit)):
                kind = "credit" if isinstance(cl, A.Credit) else "exclusion"
                if cl.name in terms:
                    self.error(
                        "E304",
                        f'the name "{cl.name}" is used by two terms of contract `{c.name}`',
                        cl.span,
                        help=f"give this {kind} its own name; the ledger names each term",
                        related=[Related(terms[cl.name].span, "it is first used here")],
                    )
                else:
                    terms[cl.name] = cl
            match cl:
                case A.Rounding(mode=mode) if mode not in _ROUNDING_MODES:
                    self.error(
                        "E213",
                        f"`{mode}` is not a rounding mode; use `half_up` or `half_even`",
                        _tail(cl.span, len(mode)),
                        help=_did_you_mean(mode, _ROUNDING_MODES),
                    )
                case A.Precision(digits=digits) if not 0 <= digits <= _MAX_PRECISION:
                    self.error(
                        "E213",
                        f"`precision {digits}` is out of range; use 0 to {_MAX_PRECISION} "
                        "decimal places",
                        cl.span,
                    )
                case A.BillingPeriod():
                    self.billing_period(cl)
                case _:
                    pass

        if not currency_clauses:
            self.error(
                "E302",
                f"contract `{c.name}` has no `currency`",
                c.name_span,
                help="add `currency USD` (or the contract's currency code) to the contract",
            )
        for i, cl in enumerate(currency_clauses):
            if i > 0:
                self.error(
                    "E302",
                    f"contract `{c.name}` sets its currency more than once",
                    cl.span,
                    help="a contract is in one currency; keep one `currency` clause",
                    related=[Related(currency_clauses[0].span, "the currency is first set here")],
                )
                continue
            if is_currency_code(cl.code):
                currency, currency_span = cl.code, cl.span
            else:
                suggestion = cl.code.upper() if is_currency_code(cl.code.upper()) else None
                self.error(
                    "E213",
                    f"`{cl.code}` is not a currency code; a currency code is three capital "
                    "letters, such as `USD`",
                    _tail(cl.span, len(cl.code)),
                    help=f"did you mean `{suggestion}`?" if suggestion else None,
                )
        return currency, currency_span

    def billing_period(self, cl: A.BillingPeriod) -> None:
        m = _TIME_RE.match(cl.time)
        if m is None or int(m.group(1)) > 23 or int(m.group(2)) > 59:
            self.error(
                "E213",
                f"`{cl.time}` is not a time of day; write it as HH:MM from 00:00 to 23:59",
                cl.span,
            )
        if not _known_zone(cl.zone):
            self.error(
                "E213",
                f'"{cl.zone}" is not a known time zone',
                _tail(cl.span, len(cl.zone) + 2),
                help=_did_you_mean(cl.zone, _zones(), quote='"')
                or 'use an IANA time zone name, such as "America/New_York" or "UTC"',
            )

    def require_when(
        self, cl: A.Clause, kind: str, name: str, when: A.Expr | None, head: str
    ) -> None:
        if when is None:
            self.error(
                "E301",
                f'{kind} "{name}" has no `when` condition',
                cl.span,
                help=f"write `{head} when <condition>`; `when` is optional only on rates",
            )

    def rate(self, price: A.Expr, when: A.Expr | None, ctx: _Ctx) -> None:
        before = len(self.diags)
        t = self.infer(price, ctx)
        if (
            not t.failed
            and t.type.kind != "none"
            and not (t.type.is_numeric and t.type.dim == MONEY / GPU_TIME)
        ):
            if t.type.is_numeric and t.type.dim.is_plain:
                fix = f"write `{show(price)} per gpu_hour`"
            elif t.type.is_numeric and t.type.dim == MONEY:
                fix = f"write a price per GPU-time, such as `{show(price)} per gpu_hour`"
            else:
                fix = "write a price per GPU-time, such as `2.10 USD per gpu_hour`"
            self.error(
                "E206",
                f"a rate must be money per GPU-time, but {t.origin}",
                price.span,
                help=fix,
            )
        if t.failed or len(self.diags) > before:
            self.bad_prices.add(id(price))
        self.condition(when, ctx)

    def condition(self, when: A.Expr | None, ctx: _Ctx) -> None:
        if when is None:
            return
        t = self.infer(when, ctx)
        if not t.failed and t.type.kind not in ("bool", "none"):
            self.error(
                "E204",
                f"a `when` condition must be true or false, but {t.origin}",
                when.span,
            )

    def constant_duration(self, expr: A.Expr, what: str, ctx: _Ctx, *, positive: bool) -> None:
        t = self.infer(expr, ctx)
        if t.failed:
            return
        if not (t.type.is_numeric and t.type.dim == TIME):
            self.error(
                "E208",
                f"`{what}` takes a duration, but {t.origin}",
                expr.span,
                help="write a duration such as `1 minute` or `30 seconds`",
            )
            return
        if not is_constant(expr):
            self.error(
                "E213",
                f"`{what}` must be a constant duration, not one read from each allocation",
                expr.span,
                help="write a fixed duration such as `1 minute`",
            )
            return
        value = constant_value(expr)
        if value is None:
            self.error("E213", f"`{what}` has no value", expr.span)
        elif positive and value <= 0:
            self.error("E213", f"`{what}` must be more than 0 seconds", expr.span)
        elif value < 0:
            self.error("E213", f"`{what}` cannot be negative", expr.span)
        elif ctx.role.startswith("billing") and value % _MICROSECOND != 0:
            self.error("E213", f"`{what}` must be a whole number of microseconds", expr.span)

    def exclusion_duration(self, name: str, expr: A.Expr, ctx: _Ctx) -> None:
        t = self.infer(expr, ctx)
        if not t.failed and not (t.type.is_numeric and t.type.dim == TIME):
            if t.type.kind == "none":
                return
            self.error(
                "E208",
                f'exclusion "{name}" takes a duration out of billable time, but {t.origin}',
                expr.span,
                help="write a duration such as `replayed_time` or `10 minutes`, or "
                "`allocation` to exclude the whole allocation",
            )

    def credit(self, name: str, expr: A.Expr, ctx: _Ctx) -> None:
        t = self.infer(expr, ctx)
        if not t.failed and not (t.type.is_numeric and t.type.dim == MONEY):
            if t.type.kind == "none":
                return
            self.error(
                "E207",
                f'credit "{name}" must be an amount of money, but {t.origin}',
                expr.span,
                help="write money such as `10% of charge` or `50 USD`",
            )

    def cap(self, cl: A.Cap, limit: A.Expr, level: str, ctx: _Ctx) -> None:
        if level not in A.CAP_LEVELS:
            self.error(
                "E213",
                f"`{level}` is not a cap level; use `allocation`, `run`, `month` or `contract`",
                _tail(cl.span, len(level)),
                help=_did_you_mean(level, A.CAP_LEVELS),
            )
        form = "a cap limit is a constant amount of money or `X% of gross`"
        if isinstance(limit, A.PercentOf) and limit.operand == A.Name("gross"):
            pct = limit.percent.value
            if pct > 100:
                self.error(
                    "E210",
                    "a cap over 100% of gross never cuts anything",
                    limit.span,
                    help="a cap of 100% of gross is the most that can mean anything",
                )
            return
        if any(isinstance(n, A.Name) and n.name == "gross" for n in A.walk(limit)):
            self.error(
                "E209",
                f"{form}; `gross` can be read only as `X% of gross`",
                limit.span,
                help="write `30% of gross` or an amount such as `50000 USD`",
            )
            return
        t = self.infer(limit, ctx)
        if t.failed or t.type.kind == "none":
            return
        if not (t.type.is_numeric and t.type.dim == MONEY):
            self.error(
                "E209",
                f"{form}, but {t.origin}",
                limit.span,
                help="write `30% of gross` or an amount such as `50000 USD`",
            )
        elif not is_constant(limit):
            self.error(
                "E209",
                f"{form}; `{show(limit)}` is not constant",
                limit.span,
                help="write `30% of gross` or an amount such as `50000 USD`",
            )
        else:
            value = constant_value(limit)
            if value is not None and value < 0:
                self.error("E209", "a cap limit cannot be negative", limit.span)

    # -- lints

    def unreachable_rates(self, c: A.Contract) -> None:
        rates = [cl for cl in c.clauses if isinstance(cl, A.Rate)]
        catch_all: A.Rate | None = None
        for r in rates:
            if catch_all is not None:
                self.warning(
                    "W001",
                    "this rate is never reached",
                    r.span,
                    help="move it above the earlier rate, or give the earlier rate a `when`",
                    related=[
                        Related(
                            catch_all.span,
                            "this rate has no condition and a constant price, so it prices "
                            "every allocation",
                        )
                    ],
                )
            elif id(r.price) not in self.bad_prices and _prices_everything(r):
                catch_all = r

    def double_refunds(self, c: A.Contract) -> None:
        exclusions = [
            cl
            for cl in c.clauses
            if isinstance(cl, A.ExcludeDuration) and _reads(cl.duration, "replayed_time")
        ]
        credits = [
            cl
            for cl in c.clauses
            if isinstance(cl, A.Credit) and _reads(cl.amount, "replayed_cost")
        ]
        for cr in credits:
            for ex in exclusions:
                if _provably_disjoint(cr.when, ex.when):
                    continue
                self.warning(
                    "W002",
                    f'credit "{cr.name}" refunds `replayed_cost` and exclusion "{ex.name}" '
                    "already takes `replayed_time` out of billable time; where both apply, "
                    "the replay would be refunded twice",
                    cr.span,
                    help="make their conditions exclusive (e.g. `end_reason == reclaimed` in "
                    "one and `end_reason == failed` in the other), or drop one of them",
                    related=[Related(ex.span, f'exclusion "{ex.name}" is here')],
                )

    # -- budgets

    def budget(self, b: A.Budget) -> None:
        for req in b.requires:
            self.requirement(req)

    def requirement(self, req: A.Require) -> None:
        currency, currency_span = _first_currency(req.expr)
        ctx = _Ctx(
            role="require",
            max_stage=Stage.RUN,
            currency=currency,
            currency_span=currency_span,
            currency_where="this requirement",
            contract=None,
        )
        before = len(self.diags)
        t = self.infer(req.expr, ctx)
        inner_failed = t.failed or any(d.is_error for d in self.diags[before:])
        expr = req.expr
        example = "such as `require p95(cost_per_accepted_run) <= 12000 USD`"
        if not isinstance(expr, A.Compare):
            self.error(
                "E212",
                f"a `require` must be one comparison of a measured value with a limit, {example}",
                expr.span,
                help="write one `require` per condition" if isinstance(expr, A.Logic) else None,
            )
            return
        left_agg, right_agg = _has_aggregate(expr.left), _has_aggregate(expr.right)
        if left_agg and right_agg:
            self.error(
                "E212",
                "both sides of this `require` are measured; compare an aggregate with a "
                "constant limit",
                expr.span,
            )
        elif not left_agg and not right_agg:
            if not inner_failed:
                self.error(
                    "E212",
                    f"this `require` measures nothing; put an aggregate on one side, {example}",
                    expr.span,
                )
        else:
            limit = expr.right if left_agg else expr.left
            if not inner_failed and not is_constant(limit):
                self.error(
                    "E212",
                    f"the limit of a `require` must be constant, but `{show(limit)}` is not",
                    limit.span,
                )
            elif not inner_failed and constant_value(limit) is None:
                self.error(
                    "E213",
                    f"the limit `{show(limit)}` has no value (it is `none` or divides by zero)",
                    limit.span,
                    help="write the limit as a number with its unit, such as `12000 USD`",
                )

    # -- expressions

    def infer(self, expr: A.Expr, ctx: _Ctx) -> _T:
        """The type of ``expr``, reporting what is wrong inside it."""
        return self._infer(expr, ctx)

    def _infer(self, expr: A.Expr, ctx: _Ctx) -> _T:
        span = expr.span
        match expr:
            case A.Number() | A.Percent():
                return _T(PLAIN_NUMBER, span, expr=expr)
            case A.Quantity(unit=unit):
                resolved = self.unit(unit, _tail(span, len(unit)), ctx, expr)
                if resolved is None:
                    return _T(ERROR, span, "")
                dim, currency = resolved
                t = number(dim, currency)
                return _T(t, span, expr=expr)
            case A.Per(amount=amount, unit=unit):
                return self.per(expr, amount, unit, ctx)
            case A.PercentOf(operand=operand):
                o = self.infer(operand, ctx)
                if o.failed or o.type.kind == "none":
                    return _T(o.type, span, o.origin)
                if not o.type.is_numeric:
                    self.error("E203", f"`X% of` takes a number, but {o.origin}", operand.span)
                    return _T(ERROR, span, "")
                return _T(o.type, span, expr=expr)
            case A.Name():
                return self.name(expr, ctx)
            case A.TraceColumn(column=col):
                if ctx.in_budget:
                    self.error(
                        "E107",
                        f"`trace.{col}` is a column of one allocation; budgets read per-run facts",
                        span,
                    )
                    return _T(ERROR, span, "")
                return _T(
                    PLAIN_NUMBER,
                    span,
                    f"`trace.{col}` is a plain number (a trace column has no unit)",
                )
            case A.String():
                return _T(STRING, span, expr=expr)
            case A.Bool():
                return _T(BOOL, span, expr=expr)
            case A.NoneLit():
                return _T(NONE, span, "`none` is the missing value")
            case A.Unary(op=op, operand=operand):
                return self.unary(expr, op, operand, ctx)
            case A.Binary():
                return self.binary(expr, ctx)
            case A.Compare():
                return self.compare(expr, ctx)
            case A.Logic(op=op, left=lhs, right=rhs):
                failed = False
                for side in (lhs, rhs):
                    s = self.infer(side, ctx)
                    if s.failed:
                        failed = True
                    elif s.type.kind not in ("bool", "none"):
                        self.error(
                            "E204",
                            f"`{op}` needs true or false on both sides, but {s.origin}",
                            side.span,
                        )
                        failed = True
                return _T(ERROR if failed else BOOL, span, expr=expr)
            case A.In():
                return self.membership(expr, ctx)
            case A.Call():
                return self.call(expr, ctx)
        raise AssertionError(f"unknown expression node {expr!r}")  # pragma: no cover

    def unit(self, unit: str, span: Span, ctx: _Ctx, expr: A.Expr) -> tuple[Dim, str | None] | None:
        """Resolve a unit word to its dimension and currency, reporting unknown units and
        money in another currency."""
        if unit in UNITS:
            return UNITS[unit].dim, None
        if is_currency_code(unit):
            if _concrete(ctx.currency) and unit != ctx.currency:
                related = []
                if ctx.currency_span is not None:
                    where = (
                        "the contract's currency is set here"
                        if ctx.contract is not None
                        else f"the first amount in this requirement is in {ctx.currency}"
                    )
                    related.append(Related(ctx.currency_span, where))
                self.error(
                    "E205",
                    f"`{show(expr)}` is in {unit}, but {ctx.currency_where} is in {ctx.currency}",
                    expr.span,
                    help=f"write the amount in {ctx.currency}",
                    related=related,
                )
                return None
            return MONEY, unit
        candidates = list(UNITS)
        if _concrete(ctx.currency) and ctx.currency is not None:
            candidates.append(ctx.currency)
        if is_currency_code(unit.upper()):
            suggestion: str | None = unit.upper()
        else:
            suggestion = did_you_mean(unit, candidates)
        self.error(
            "E102",
            f"unknown unit `{unit}`",
            span,
            help=f"did you mean `{suggestion}`?"
            if suggestion
            else "units are seconds, minutes, hours, days, gpus, gpu_seconds, gpu_hours, "
            "gpu_days and currency codes such as `USD`",
        )
        return None

    def per(self, expr: A.Per, amount: A.Expr, unit: str, ctx: _Ctx) -> _T:
        a = self.infer(amount, ctx)
        u = self.unit(unit, _tail(expr.span, len(unit)), ctx, expr)
        if a.failed or u is None:
            return _T(ERROR, expr.span, "")
        if a.type.kind == "none":
            return _T(NONE, expr.span, a.origin)
        if not a.type.is_numeric:
            self.error("E203", f"`per` takes a number on its left, but {a.origin}", amount.span)
            return _T(ERROR, expr.span, "")
        udim, ucur = u
        if a.type.dim.is_plain:
            # a plain number per unit is a price in the contract's currency
            t = number(MONEY / udim, ctx.currency if ctx.currency else None)
        else:
            t = number(a.type.dim / udim, _merge_currency(a.type, number(udim, ucur)))
        return _T(t, expr.span, expr=expr)

    def name(self, expr: A.Name, ctx: _Ctx) -> _T:
        n, span = expr.name, expr.span
        fact = FACTS.get(n)
        if fact is not None:
            return self.fact(expr, fact, ctx)
        if n in PROMISES:
            kind = PROMISES[n]
            if ctx.in_budget:
                self.error(
                    "E107",
                    f"`{n}` is a promise of a contract; budgets read per-run facts",
                    span,
                )
                return _T(ERROR, span, "")
            if kind not in ctx.promises:
                clause = (
                    "promise reclaim notice 2 minutes"
                    if kind == "notice"
                    else "promise restart within 15 minutes"
                )
                self.error(
                    "E105",
                    f"`{n}` is read here, but contract `{ctx.contract}` makes no "
                    f"{'reclaim notice' if kind == 'notice' else 'restart'} promise",
                    span,
                    help=f"add a clause such as `{clause}` to the contract",
                )
                return _T(ERROR, span, "")
            return _T(PROMISE_TYPE, span, f"`{n}` is time (a promise of the contract)")
        enum = enum_of_member(n)
        if enum is not None:
            t = enum_type(enum)
            return _T(t, span, f"`{n}` is {_noun(t)}")
        suggestion = did_you_mean(n, self.valid_names(ctx))
        self.error(
            "E101",
            f"unknown name `{n}`",
            span,
            help=f"did you mean `{suggestion}`?" if suggestion else None,
        )
        return _T(ERROR, span, "")

    def valid_names(self, ctx: _Ctx) -> list[str]:
        members = [m for ms in ENUMS.values() for m in ms]
        if ctx.in_budget:
            return [f.name for f in FACTS.values() if f.level == "run"] + members
        facts = [
            f.name for f in FACTS.values() if f.level == "allocation" and f.stage <= ctx.max_stage
        ]
        return facts + list(PROMISES) + members

    def fact(self, expr: A.Name, fact: Fact, ctx: _Ctx) -> _T:
        n, span = fact.name, expr.span
        if not ctx.in_budget:
            if fact.level == "run":
                self.error(
                    "E107",
                    f"`{n}` is a per-run fact; contract terms read facts of one allocation",
                    span,
                    help="`gross` can be read only in `cap credits at X% of gross`"
                    if n == "gross"
                    else None,
                )
                return _T(ERROR, span, "")
            if fact.stage > ctx.max_stage:
                self.error(
                    "E106",
                    f"`{n}` is known only after {_STAGE_AFTER[fact.stage]}; "
                    f"{ctx.phrase()} cannot read it",
                    span,
                    help="rates and exclusions read trace facts; credits may also read "
                    "`billable_time`, `charge` and `replayed_cost`",
                )
                return _T(ERROR, span, "")
            t = fact.type
            if t.currency == _CONTRACT_CURRENCY:
                t = number(t.dim, ctx.currency)
            if t.kind == "enum":
                return _T(t, span, f"`{n}` is one of {_members(t.enum or '')}")
            return _T(t, span, f"`{n}` is {_noun(t)}")
        if fact.level == "allocation":
            counterpart = _RUN_COUNTERPART.get(n)
            self.error(
                "E107",
                f"`{n}` is a fact of one allocation; budgets read per-run facts",
                span,
                help=f"its per-run counterpart is `{counterpart}`" if counterpart else None,
            )
            return _T(ERROR, span, "")
        if not ctx.in_aggregate:
            example = f"share({n})" if fact.type == BOOL else f"p95({n})` or `mean({n})"
            self.error(
                "E109",
                f"`{n}` is a per-run fact; a budget reads it through an aggregate over runs",
                span,
                help=f"write `{example}`",
            )
            return _T(ERROR, span, "")
        return _T(fact.type, span, f"`{n}` is {_noun(fact.type)}")

    def unary(self, expr: A.Unary, op: str, operand: A.Expr, ctx: _Ctx) -> _T:
        o = self.infer(operand, ctx)
        if o.failed or o.type.kind == "none":
            return _T(o.type, expr.span, o.origin)
        if op == "not":
            if o.type.kind != "bool":
                self.error("E204", f"`not` needs true or false, but {o.origin}", operand.span)
                return _T(ERROR, expr.span, "")
            return _T(BOOL, expr.span, expr=expr)
        if not o.type.is_numeric:
            self.error("E203", f"cannot negate {_noun(o.type)}: {o.origin}", operand.span)
            return _T(ERROR, expr.span, "")
        return _T(o.type, expr.span, expr=expr)

    def binary(self, expr: A.Binary, ctx: _Ctx) -> _T:
        lhs, rhs = self.infer(expr.left, ctx), self.infer(expr.right, ctx)
        if lhs.failed or rhs.failed:
            return _T(ERROR, expr.span, "")
        lt, rt = lhs.type, rhs.type
        if lt.kind == "none" or rt.kind == "none":
            t = rt if lt.kind == "none" else lt
            return _T(t, expr.span, expr=expr)
        verb = _VERBS[expr.op].format(left=_noun(lt), right=_noun(rt))
        if not (lt.is_numeric and rt.is_numeric):
            self.mismatch("E203", f"{verb}: arithmetic needs numbers", expr.span, lhs, rhs)
            return _T(ERROR, expr.span, "")
        if _currency_clash(lt, rt):
            self.mismatch("E205", f"{verb}", expr.span, lhs, rhs)
            return _T(ERROR, expr.span, "")
        if expr.op in ("+", "-"):
            if lt.dim != rt.dim:
                self.mismatch("E201", verb, expr.span, lhs, rhs)
                return _T(ERROR, expr.span, "")
            t = number(lt.dim, _merge_currency(lt, rt))
        elif expr.op == "*":
            t = number(lt.dim * rt.dim, _merge_currency(lt, rt))
        else:
            t = number(lt.dim / rt.dim, _merge_currency(lt, rt))
        return _T(t, expr.span, expr=expr)

    def compare(self, expr: A.Compare, ctx: _Ctx) -> _T:
        lhs, rhs = self.infer(expr.left, ctx), self.infer(expr.right, ctx)
        if isinstance(expr.left, A.NoneLit) or isinstance(expr.right, A.NoneLit):
            self.none_comparison(
                expr, expr.right if isinstance(expr.left, A.NoneLit) else expr.left
            )
            return _T(BOOL, expr.span, expr=expr)
        if lhs.failed or rhs.failed:
            return _T(ERROR, expr.span, "")
        if expr.op in ("<", "<=", ">", ">="):
            for side in (lhs, rhs):
                if side.type.kind not in ("number", "none"):
                    self.mismatch(
                        "E202",
                        f"`{expr.op}` orders numbers; it cannot compare {_noun(lhs.type)} with "
                        f"{_noun(rhs.type)}",
                        expr.span,
                        lhs,
                        rhs,
                    )
                    return _T(ERROR, expr.span, "")
        if not self.comparable(expr.span, lhs, rhs, expr.left, expr.right):
            return _T(ERROR, expr.span, "")
        return _T(BOOL, expr.span, expr=expr)

    def none_comparison(self, expr: A.Expr, other: A.Expr) -> None:
        shown = _quote(other, 30)
        self.warning(
            "W003",
            "a comparison with `none` is never true: comparing with a missing value gives "
            "a missing value",
            expr.span,
            help=f"use `coalesce({shown.strip('`')}, <default>)` to give a missing value a default"
            if shown
            else "use `coalesce(<value>, <default>)` to give a missing value a default",
        )

    def comparable(self, span: Span, lhs: _T, rhs: _T, le: A.Expr, re_: A.Expr) -> bool:
        """Whether ``lhs`` and ``rhs`` can be compared with ``==``; reports why not."""
        lt, rt = lhs.type, rhs.type
        if lt.kind == "none" or rt.kind == "none":
            return True
        if lt.kind == rt.kind == "number":
            if lt.dim != rt.dim:
                self.mismatch(
                    "E202",
                    f"cannot compare {_noun(lt)} with {_noun(rt)}",
                    span,
                    lhs,
                    rhs,
                    help=_unit_hint(le, rt) or _unit_hint(re_, lt),
                )
                return False
            if _currency_clash(lt, rt):
                self.mismatch(
                    "E205", f"cannot compare {_noun(lt)} with {_noun(rt)}", span, lhs, rhs
                )
                return False
            return True
        if lt.kind == rt.kind == "enum":
            if lt.enum == rt.enum:
                return True
            member, other = (re_, lt) if isinstance(re_, A.Name) and _is_member(re_) else (le, rt)
            other_expr = le if member is re_ else re_
            if isinstance(member, A.Name) and _is_member(member):
                self.mismatch(
                    "E203",
                    f"`{member.name}` is {_noun(enum_type(enum_of_member(member.name) or ''))}"
                    f", not {_noun(other)}",
                    span,
                    lhs,
                    rhs,
                    # a fact's note already lists its members
                    help=None
                    if isinstance(other_expr, A.Name)
                    else f"`{other.enum}` is one of {_members(other.enum or '')}",
                )
            else:
                self.mismatch(
                    "E203", f"cannot compare {_noun(lt)} with {_noun(rt)}", span, lhs, rhs
                )
            return False
        if lt.kind == rt.kind:
            return True
        if {lt.kind, rt.kind} == {"enum", "string"}:
            enum_t = lt if lt.kind == "enum" else rt
            string = re_ if rt.kind == "string" else le
            enum = enum_t.enum or ""
            if isinstance(string, A.String) and string.value in ENUMS[enum]:
                fix = f"write `{string.value}` without quotes"
            else:
                fix = f"`{enum}` is one of {_members(enum)}"
            self.mismatch(
                "E203",
                f"cannot compare {_noun(lt)} with {_noun(rt)}",
                span,
                lhs,
                rhs,
                help=fix,
            )
            return False
        self.mismatch("E203", f"cannot compare {_noun(lt)} with {_noun(rt)}", span, lhs, rhs)
        return False

    def membership(self, expr: A.In, ctx: _Ctx) -> _T:
        v = self.infer(expr.value, ctx)
        ok = not v.failed
        for opt in expr.options:
            o = self.infer(opt, ctx)
            if isinstance(opt, A.NoneLit):
                self.none_comparison(expr, expr.value)
                continue
            if o.failed or v.failed:
                ok = False
                continue
            if not self.comparable(opt.span, v, o, expr.value, opt):
                ok = False
        return _T(BOOL if ok else ERROR, expr.span, expr=expr)

    def call(self, expr: A.Call, ctx: _Ctx) -> _T:
        f, args, span = expr.func, expr.args, expr.span
        fspan = expr.func_span if expr.func_span != NO_SPAN else span
        pct = percentile(f)
        if f in AGGREGATES or pct is not None:
            if f in ("min", "max") and len(args) != 1:
                return self.scalar_call(expr, ctx, fspan)
            return self.aggregate(expr, ctx, fspan, pct)
        if f in SCALAR_FUNCTIONS:
            return self.scalar_call(expr, ctx, fspan)
        known = list(SCALAR_FUNCTIONS)
        if ctx.in_budget:
            known += [*AGGREGATES, "p50", "p90", "p95", "p99"]
        suggestion = did_you_mean(f, known)
        self.error(
            "E108",
            f"unknown function `{f}`",
            fspan,
            help=f"did you mean `{suggestion}`?"
            if suggestion
            else "functions are " + ", ".join(f"`{k}`" for k in dict.fromkeys(known)),
        )
        return _T(ERROR, span, "")

    def aggregate(self, expr: A.Call, ctx: _Ctx, fspan: Span, pct: int | None) -> _T:
        f, args, span = expr.func, expr.args, expr.span
        if not ctx.in_budget:
            self.error(
                "E109",
                f"`{f}` is an aggregate over runs; only a budget's `require` can use it",
                fspan,
                help="contract terms read one allocation; `min` and `max` of two or more "
                "values work here"
                if f in ("min", "max")
                else None,
            )
            return _T(ERROR, span, "")
        if ctx.in_aggregate:
            self.error(
                "E109",
                f"`{f}` is inside another aggregate; aggregates run over runs and do not nest",
                fspan,
            )
            return _T(ERROR, span, "")
        if pct is not None and pct > 100:
            self.error(
                "E108",
                f"`{f}` is not a percentile; use `p0` to `p100`",
                fspan,
            )
            return _T(ERROR, span, "")
        if len(args) != 1:
            self.error(
                "E108",
                f"`{f}` takes one argument, not {len(args)}",
                fspan,
            )
            return _T(ERROR, span, "")
        inner = _Ctx(
            role=ctx.role,
            max_stage=ctx.max_stage,
            currency=ctx.currency,
            currency_span=ctx.currency_span,
            currency_where=ctx.currency_where,
            contract=ctx.contract,
            promises=ctx.promises,
            in_aggregate=True,
        )
        a = self.infer(args[0], inner)
        if a.failed:
            return _T(ERROR, span, "")
        if f in ("share", "count"):
            if a.type.kind not in ("bool", "none"):
                self.error(
                    "E204",
                    f"`{f}` counts runs where a condition is true, but {a.origin}",
                    args[0].span,
                    help=f"write a condition, such as `{f}(net > 10000 USD)`",
                )
                return _T(ERROR, span, "")
            return _T(PLAIN_NUMBER, span, expr=expr)
        if not a.type.is_numeric:
            if a.type.kind == "none":
                return _T(NONE, span, a.origin)
            self.error(
                "E211",
                f"`{f}` aggregates numbers, but {a.origin}",
                args[0].span,
                help=f"use `share({show(args[0])})` for the share of runs where it is true"
                if a.type.kind == "bool"
                else None,
            )
            return _T(ERROR, span, "")
        return _T(a.type, span, expr=expr)

    def scalar_call(self, expr: A.Call, ctx: _Ctx, fspan: Span) -> _T:
        f, args, span = expr.func, expr.args, expr.span
        if len(args) < 2:
            self.error(
                "E108",
                f"`{f}` takes two or more arguments"
                + (" (or one, as an aggregate in a budget)" if f != "coalesce" else ""),
                fspan,
            )
            for a in args:
                self.infer(a, ctx)
            return _T(ERROR, span, "")
        typed = [self.infer(a, ctx) for a in args]
        if any(t.failed for t in typed):
            return _T(ERROR, span, "")
        known = [t for t in typed if t.type.kind != "none"]
        if not known:
            return _T(NONE, span, expr=expr)
        first = known[0]
        for t in known[1:]:
            lt, rt = first.type, t.type
            if f != "coalesce" and not (lt.is_numeric and rt.is_numeric):
                bad = first if not lt.is_numeric else t
                self.error("E203", f"`{f}` takes numbers, but {bad.origin}", bad.span)
                return _T(ERROR, span, "")
            if lt.kind == rt.kind == "number" and lt.dim != rt.dim:
                self.mismatch(
                    "E201",
                    f"`{f}` needs arguments of one unit, but gets {_noun(lt)} and {_noun(rt)}",
                    span,
                    first,
                    t,
                )
                return _T(ERROR, span, "")
            if _currency_clash(lt, rt):
                self.mismatch(
                    "E205",
                    f"`{f}` needs arguments in one currency, but gets {_noun(lt)} and {_noun(rt)}",
                    span,
                    first,
                    t,
                )
                return _T(ERROR, span, "")
            if lt.kind != rt.kind or lt.enum != rt.enum:
                self.mismatch(
                    "E203",
                    f"`{f}` needs arguments of one type, but gets {_noun(lt)} and {_noun(rt)}",
                    span,
                    first,
                    t,
                )
                return _T(ERROR, span, "")
        result = first.type
        for other in known[1:]:
            result = Type(result.kind, result.dim, _merge_currency(result, other.type), result.enum)
        return _T(result, span, expr=expr)


_VERBS = {
    "+": "cannot add {left} and {right}",
    "-": "cannot subtract {right} from {left}",
    "*": "cannot multiply {left} by {right}",
    "/": "cannot divide {left} by {right}",
}


_EXAMPLE_UNIT = {TIME: "minutes", GPU: "gpus", GPU_TIME: "gpu_hours"}


def _unit_hint(expr: A.Expr, other: Type) -> str | None:
    """Help for a bare number compared with a quantity: "write `8 gpus`"."""
    if not isinstance(expr, A.Number):
        return None
    if other.dim == MONEY:
        unit = other.currency if _concrete(other.currency) else "USD"
    else:
        unit = _EXAMPLE_UNIT.get(other.dim, "")
    if not unit:
        return None
    return f"give `{show(expr)}` a unit, as in `{show(expr)} {unit}`"


def _setting_key(cl: A.Clause) -> str | None:
    match cl:
        case A.Currency():
            return "currency"
        case A.Rounding():
            return "rounding"
        case A.Precision():
            return "precision"
        case A.BillingIncrement():
            return "billing increment"
        case A.BillingMinimum():
            return "billing minimum"
        case A.BillingPeriod():
            return "billing period"
        case A.Promise(kind="notice"):
            return "promise reclaim notice"
        case A.Promise():
            return "promise restart within"
        case _:  # caps may repeat at a level: the tightest binds ("the lesser of …")
            return None


def _did_you_mean(word: str, candidates: Iterable[str], quote: str = "`") -> str | None:
    s = did_you_mean(word, candidates)
    return f"did you mean {quote}{s}{quote}?" if s else None


@cache
def _zones() -> frozenset[str]:
    return frozenset(zoneinfo.available_timezones())


def _known_zone(zone: str) -> bool:
    if zone in _zones():
        return True
    try:
        zoneinfo.ZoneInfo(zone)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):
        return False
    return True


def _is_member(expr: A.Name) -> bool:
    return expr.name not in FACTS and enum_of_member(expr.name) is not None


def _reads(expr: A.Expr, name: str) -> bool:
    return any(isinstance(n, A.Name) and n.name == name for n in A.walk(expr))


def _has_aggregate(expr: A.Expr) -> bool:
    return any(isinstance(n, A.Call) and is_aggregate_call(n) for n in A.walk(expr))


def _first_currency(expr: A.Expr) -> tuple[str | None, Span | None]:
    """The first currency written in a requirement, which the rest must match."""
    for node in A.walk(expr):
        if isinstance(node, (A.Quantity, A.Per)) and is_currency_code(node.unit):
            return node.unit, node.span
    return None, None


def _prices_everything(r: A.Rate) -> bool:
    """A rate with no condition (or ``when true``) and a constant, known price: every
    allocation that reaches it is priced by it."""
    unconditional = r.when is None or r.when == A.Bool(True)
    return (
        unconditional
        and is_constant(r.price)
        and not any(isinstance(n, A.NoneLit) for n in A.walk(r.price))
        and constant_value(r.price) is not None
    )


# --------------------------------------------------------------------------- disjointness


@dataclass(frozen=True)
class _Constraint:
    """What one conjunct says about one fact: it is one of ``allowed``, none of ``excluded``,
    or within an interval."""

    fact: str
    allowed: frozenset[object] | None = None
    excluded: frozenset[object] = frozenset()
    low: tuple[Fraction, bool] | None = None  # (bound, inclusive)
    high: tuple[Fraction, bool] | None = None


def _conjuncts(expr: A.Expr | None) -> Iterator[A.Expr]:
    if expr is None:
        return
    if isinstance(expr, A.Logic) and expr.op == "and":
        yield from _conjuncts(expr.left)
        yield from _conjuncts(expr.right)
    else:
        yield expr


def _literal(expr: A.Expr) -> object | None:
    match expr:
        case A.Name(name=n) if _is_member(expr):
            return ("member", n)
        case A.String(value=v):
            return ("string", v)
        case A.Bool(value=b):
            return ("bool", b)
        case _:
            return None


_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}


def _constraint(expr: A.Expr) -> _Constraint | None:
    match expr:
        case A.Compare(op=written, left=lhs, right=rhs):
            op: str = written
            if isinstance(rhs, A.Name) and rhs.name in FACTS and not isinstance(lhs, A.Name):
                lhs, rhs, op = rhs, lhs, _FLIP[op]
            if not (isinstance(lhs, A.Name) and lhs.name in FACTS):
                return None
            fact = lhs.name
            lit = _literal(rhs)
            if lit is not None and op in ("==", "!="):
                if op == "==":
                    return _Constraint(fact, allowed=frozenset([lit]))
                return _Constraint(fact, excluded=frozenset([lit]))
            value = constant_value(rhs) if is_constant(rhs) else None
            if value is None:
                return None
            match op:
                case "<" | "<=":
                    return _Constraint(fact, high=(value, op == "<="))
                case ">" | ">=":
                    return _Constraint(fact, low=(value, op == ">="))
                case "==":
                    return _Constraint(fact, low=(value, True), high=(value, True))
                case _:
                    return None
        case A.In(value=A.Name(name=fact), options=opts, negated=neg) if fact in FACTS:
            lits = [_literal(o) for o in opts]
            if any(lit is None for lit in lits):
                return None
            values = frozenset(lits)
            return _Constraint(fact, excluded=values) if neg else _Constraint(fact, allowed=values)
        case _:
            return None


def _contradict(a: _Constraint, b: _Constraint) -> bool:
    if a.fact != b.fact:
        return False
    if a.allowed is not None and b.allowed is not None and not (a.allowed & b.allowed):
        return True
    if a.allowed is not None and a.allowed <= b.excluded:
        return True
    if b.allowed is not None and b.allowed <= a.excluded:
        return True
    low = max((x for x in (a.low, b.low) if x is not None), default=None, key=_bound_key_low)
    high = min((x for x in (a.high, b.high) if x is not None), default=None, key=_bound_key_high)
    if low is None or high is None:
        return False
    if low[0] > high[0]:
        return True
    return low[0] == high[0] and not (low[1] and high[1])


def _bound_key_low(bound: tuple[Fraction, bool]) -> tuple[Fraction, int]:
    # for lower bounds, an exclusive bound at the same value is the tighter one
    return bound[0], 0 if bound[1] else 1


def _bound_key_high(bound: tuple[Fraction, bool]) -> tuple[Fraction, int]:
    return bound[0], 1 if bound[1] else 0


def _provably_disjoint(first: A.Expr | None, second: A.Expr | None) -> bool:
    """Whether two conditions can never both be true, judged from their conjuncts: one says
    ``X`` and the other ``not X``; or both constrain one fact in ways no value meets
    (``end_reason == reclaimed`` / ``end_reason == failed``, ``runtime < 1 hour`` /
    ``runtime >= 1 hour``). False means "they may overlap"."""
    a, b = list(_conjuncts(first)), list(_conjuncts(second))
    for x in a:
        for y in b:
            if A.Unary("not", x) == y or A.Unary("not", y) == x:
                return True
            cx, cy = _constraint(x), _constraint(y)
            if cx is not None and cy is not None and _contradict(cx, cy):
                return True
    return False
