"""Lints: rates that are never reached (W001) and replays that may be refunded twice (W002),
with the small solver that tells when two conditions can never both hold."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from contractlang.check.context import Reporter, is_member
from contractlang.diagnostics import Related
from contractlang.lang import ast as A
from contractlang.lang.exact import constant_value, is_constant
from contractlang.lang.facts import FACTS
from contractlang.lang.vocabulary import FLIP


def unreachable_rates(report: Reporter, c: A.Contract, bad_prices: set[int]) -> None:
    """W001: a rate after one that prices every allocation is never reached."""
    rates = [cl for cl in c.clauses if isinstance(cl, A.Rate)]
    catch_all: A.Rate | None = None
    for r in rates:
        if catch_all is not None:
            report.warning(
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
        elif id(r.price) not in bad_prices and _prices_everything(r):
            catch_all = r


def double_refunds(report: Reporter, c: A.Contract) -> None:
    """W002: a credit of `replayed_cost` where an exclusion of `replayed_time` may also apply."""
    exclusions = [
        cl
        for cl in c.clauses
        if isinstance(cl, A.ExcludeDuration) and A.reads(cl.duration, "replayed_time")
    ]
    credits = [
        cl for cl in c.clauses if isinstance(cl, A.Credit) and A.reads(cl.amount, "replayed_cost")
    ]
    for cr in credits:
        for ex in exclusions:
            if _provably_disjoint(cr.when, ex.when):
                continue
            report.warning(
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


def _literal(expr: A.Expr) -> object | None:
    match expr:
        case A.Name(name=n) if is_member(expr):
            return ("member", n)
        case A.String(value=v):
            return ("string", v)
        case A.Bool(value=b):
            return ("bool", b)
        case _:
            return None


def _constraint(expr: A.Expr) -> _Constraint | None:
    match expr:
        case A.Compare(op=written, left=lhs, right=rhs):
            op: str = written
            if isinstance(rhs, A.Name) and rhs.name in FACTS and not isinstance(lhs, A.Name):
                lhs, rhs, op = rhs, lhs, FLIP[op]
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
    a, b = A.conjuncts(first), A.conjuncts(second)
    for x in a:
        for y in b:
            if A.Unary("not", x) == y or A.Unary("not", y) == x:
                return True
            cx, cy = _constraint(x), _constraint(y)
            if cx is not None and cy is not None and _contradict(cx, cy):
                return True
    return False
