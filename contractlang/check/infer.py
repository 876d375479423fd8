"""The type of every expression: literals and units, names and facts, arithmetic.

:class:`Inferrer` walks an expression once, reporting what is wrong inside it and returning its
:class:`~contractlang.check.context.Typed` value; comparisons and membership
(:mod:`contractlang.check.comparisons`) and calls (:mod:`contractlang.check.calls`) have modules
of their own. Units combine by the dimension algebra of :mod:`contractlang.lang.types`; a name
resolves to a fact (of the clause's level and an earlier stage), a promise the contract makes,
or an enum member.
"""

from __future__ import annotations

from contractlang.check.calls import call
from contractlang.check.comparisons import comparison_type, membership
from contractlang.check.context import (
    CONTRACT_CURRENCY,
    Ctx,
    Reporter,
    Typed,
    concrete,
    currency_clash,
    members,
    merge_currency,
    noun,
    tail,
)
from contractlang.diagnostics import Related, Span, did_you_mean
from contractlang.lang import ast as A
from contractlang.lang.exact import constant_value, is_constant
from contractlang.lang.facts import FACTS, PROMISE_TYPE, PROMISES, Fact, Stage
from contractlang.lang.show import show
from contractlang.lang.types import (
    BOOL,
    ERROR,
    MONEY,
    NONE,
    PLAIN_NUMBER,
    STRING,
    UNITS,
    Dim,
    enum_of_member,
    enum_type,
    is_currency_code,
    number,
)
from contractlang.lang.vocabulary import ENUMS

STAGE_AFTER = {
    Stage.BILLABLE: "exclusions and billing rounding apply",
    Stage.CHARGE: "rates apply",
    Stage.RUN: "a whole run is billed",
}

#: In a budget, the per-run fact that sums an allocation fact, for help text.
RUN_COUNTERPART = {
    "gpu_time": "metered_gpu_time",
    "runtime": "metered_gpu_time",
    "replayed_time": "lost_gpu_time",
    "replayed_steps": "lost_steps",
    "billable_time": "billable_gpu_time",
    "charge": "gross",
    "end_reason": "reclaims",
}


#: The most digits a number literal holds before the point, and after it (the trace keeps
#: decimals to 18 places, and exact amounts hold 18 digits before the point).
MAX_DIGITS = 18

_VERBS = {
    "+": "cannot add {left} and {right}",
    "-": "cannot subtract {right} from {left}",
    "*": "cannot multiply {left} by {right}",
    "/": "cannot divide {left} by {right}",
}


class Inferrer:
    """Types expressions, reporting into ``report``."""

    def __init__(self, report: Reporter) -> None:
        self.report = report

    def infer(self, expr: A.Expr, ctx: Ctx) -> Typed:
        """The type of ``expr``, reporting what is wrong inside it."""
        return self._infer(expr, ctx)

    def _infer(self, expr: A.Expr, ctx: Ctx) -> Typed:
        span = expr.span
        match expr:
            case A.Number() | A.Percent():
                if not self.digits(expr):
                    return Typed(ERROR, span, "")
                return Typed(PLAIN_NUMBER, span, expr=expr)
            case A.Quantity(unit=unit):
                if not self.digits(expr):
                    return Typed(ERROR, span, "")
                resolved = self.unit(unit, tail(span, len(unit)), ctx, expr)
                if resolved is None:
                    return Typed(ERROR, span, "")
                dim, currency = resolved
                t = number(dim, currency)
                return Typed(t, span, expr=expr)
            case A.Per(amount=amount, unit=unit):
                return self.per(expr, amount, unit, ctx)
            case A.PercentOf(operand=operand):
                o = self.infer(operand, ctx)
                if o.failed or o.type.kind == "none":
                    return Typed(o.type, span, o.origin)
                if not o.type.is_numeric:
                    self.report.error(
                        "E203", f"`X% of` takes a number, but {o.origin}", operand.span
                    )
                    return Typed(ERROR, span, "")
                return Typed(o.type, span, expr=expr)
            case A.Name():
                return self.name(expr, ctx)
            case A.TraceColumn(column=col):
                if ctx.in_budget:
                    self.report.error(
                        "E107",
                        f"`trace.{col}` is a column of one allocation; budgets read per-run facts",
                        span,
                    )
                    return Typed(ERROR, span, "")
                return Typed(
                    PLAIN_NUMBER,
                    span,
                    f"`trace.{col}` is a plain number (a trace column has no unit)",
                )
            case A.String():
                return Typed(STRING, span, expr=expr)
            case A.Bool():
                return Typed(BOOL, span, expr=expr)
            case A.NoneLit():
                return Typed(NONE, span, "`none` is the missing value")
            case A.Unary(op=op, operand=operand):
                return self.unary(expr, op, operand, ctx)
            case A.Binary():
                return self.binary(expr, ctx)
            case A.Compare():
                return comparison_type(self, expr, ctx)
            case A.Logic(op=op, left=lhs, right=rhs):
                failed = False
                for side in (lhs, rhs):
                    s = self.infer(side, ctx)
                    if s.failed:
                        failed = True
                    elif s.type.kind not in ("bool", "none"):
                        self.report.error(
                            "E204",
                            f"`{op}` needs true or false on both sides, but {s.origin}",
                            side.span,
                        )
                        failed = True
                return Typed(ERROR if failed else BOOL, span, expr=expr)
            case A.In():
                return membership(self, expr, ctx)
            case A.Call():
                return call(self, expr, ctx)
        raise AssertionError(f"unknown expression node {expr!r}")  # pragma: no cover

    def digits(self, expr: A.Number | A.Percent | A.Quantity) -> bool:
        """A number literal within what is kept exactly: at most :data:`MAX_DIGITS` digits
        before the point and as many after (E213 otherwise)."""
        digits = expr.value.as_tuple()
        exponent = digits.exponent if isinstance(digits.exponent, int) else 0
        after = max(0, -exponent)
        before = max(0, len(digits.digits) + exponent)
        if before <= MAX_DIGITS and after <= MAX_DIGITS:
            return True
        written = expr.text or format(expr.value, "f")
        shown = written if len(written) <= 40 else written[:39] + "…"
        self.report.error(
            "E213",
            f"`{shown}` has more digits than contractlang keeps exactly",
            expr.span,
            help=f"a number holds at most {MAX_DIGITS} digits before the point and "
            f"{MAX_DIGITS} after",
        )
        return False

    def unit(self, unit: str, span: Span, ctx: Ctx, expr: A.Expr) -> tuple[Dim, str | None] | None:
        """Resolve a unit word to its dimension and currency, reporting unknown units and
        money in another currency."""
        if unit in UNITS:
            return UNITS[unit].dim, None
        if is_currency_code(unit):
            if concrete(ctx.currency) and unit != ctx.currency:
                related = []
                if ctx.currency_span is not None:
                    where = (
                        "the contract's currency is set here"
                        if ctx.contract is not None
                        else f"the first amount in this requirement is in {ctx.currency}"
                    )
                    related.append(Related(ctx.currency_span, where))
                self.report.error(
                    "E205",
                    f"`{show(expr)}` is in {unit}, but {ctx.currency_where} is in {ctx.currency}",
                    expr.span,
                    help=f"write the amount in {ctx.currency}",
                    related=related,
                )
                return None
            return MONEY, unit
        candidates = list(UNITS)
        if concrete(ctx.currency) and ctx.currency is not None:
            candidates.append(ctx.currency)
        if is_currency_code(unit.upper()):
            suggestion: str | None = unit.upper()
        else:
            suggestion = did_you_mean(unit, candidates)
        self.report.error(
            "E102",
            f"unknown unit `{unit}`",
            span,
            help=f"did you mean `{suggestion}`?"
            if suggestion
            else "units are seconds, minutes, hours, days, gpus, gpu_seconds, gpu_hours, "
            "gpu_days and currency codes such as `USD`",
        )
        return None

    def per(self, expr: A.Per, amount: A.Expr, unit: str, ctx: Ctx) -> Typed:
        a = self.infer(amount, ctx)
        u = self.unit(unit, tail(expr.span, len(unit)), ctx, expr)
        if a.failed or u is None:
            return Typed(ERROR, expr.span, "")
        if a.type.kind == "none":
            return Typed(NONE, expr.span, a.origin)
        if not a.type.is_numeric:
            self.report.error(
                "E203", f"`per` takes a number on its left, but {a.origin}", amount.span
            )
            return Typed(ERROR, expr.span, "")
        udim, ucur = u
        if a.type.dim.is_plain:
            # a plain number per unit is a price in the contract's currency
            t = number(MONEY / udim, ctx.currency if ctx.currency else None)
        else:
            t = number(a.type.dim / udim, merge_currency(a.type, number(udim, ucur)))
        return Typed(t, expr.span, expr=expr)

    def name(self, expr: A.Name, ctx: Ctx) -> Typed:
        n, span = expr.name, expr.span
        fact = FACTS.get(n)
        if fact is not None:
            return self.fact(expr, fact, ctx)
        if n in PROMISES:
            kind = PROMISES[n]
            if ctx.in_budget:
                self.report.error(
                    "E107",
                    f"`{n}` is a promise of a contract; budgets read per-run facts",
                    span,
                )
                return Typed(ERROR, span, "")
            if kind not in ctx.promises:
                clause = (
                    "promise reclaim notice 2 minutes"
                    if kind == "notice"
                    else "promise restart within 15 minutes"
                )
                self.report.error(
                    "E105",
                    f"`{n}` is read here, but contract `{ctx.contract}` makes no "
                    f"{'reclaim notice' if kind == 'notice' else 'restart'} promise",
                    span,
                    help=f"add a clause such as `{clause}` to the contract",
                )
                return Typed(ERROR, span, "")
            return Typed(PROMISE_TYPE, span, f"`{n}` is time (a promise of the contract)")
        enum = enum_of_member(n)
        if enum is not None:
            t = enum_type(enum)
            return Typed(t, span, f"`{n}` is {noun(t)}")
        suggestion = did_you_mean(n, self.valid_names(ctx))
        self.report.error(
            "E101",
            f"unknown name `{n}`",
            span,
            help=f"did you mean `{suggestion}`?" if suggestion else None,
        )
        return Typed(ERROR, span, "")

    def valid_names(self, ctx: Ctx) -> list[str]:
        members = [m for ms in ENUMS.values() for m in ms]
        if ctx.in_budget:
            return [f.name for f in FACTS.values() if f.level == "run"] + members
        facts = [
            f.name for f in FACTS.values() if f.level == "allocation" and f.stage <= ctx.max_stage
        ]
        return facts + list(PROMISES) + members

    def fact(self, expr: A.Name, fact: Fact, ctx: Ctx) -> Typed:
        n, span = fact.name, expr.span
        if not ctx.in_budget:
            if fact.level == "run":
                self.report.error(
                    "E107",
                    f"`{n}` is a per-run fact; contract terms read facts of one allocation",
                    span,
                    help="`gross` can be read only in `cap credits at X% of gross`"
                    if n == "gross"
                    else None,
                )
                return Typed(ERROR, span, "")
            if fact.stage > ctx.max_stage:
                self.report.error(
                    "E106",
                    f"`{n}` is known only after {STAGE_AFTER[fact.stage]}; "
                    f"{ctx.phrase()} cannot read it",
                    span,
                    help="rates and exclusions read trace facts; credits may also read "
                    "`billable_time`, `charge` and `replayed_cost`",
                )
                return Typed(ERROR, span, "")
            t = fact.type
            if t.currency == CONTRACT_CURRENCY:
                t = number(t.dim, ctx.currency)
            if t.kind == "enum":
                return Typed(t, span, f"`{n}` is one of {members(t.enum or '')}")
            return Typed(t, span, f"`{n}` is {noun(t)}")
        if fact.level == "allocation":
            counterpart = RUN_COUNTERPART.get(n)
            self.report.error(
                "E107",
                f"`{n}` is a fact of one allocation; budgets read per-run facts",
                span,
                help=f"its per-run counterpart is `{counterpart}`" if counterpart else None,
            )
            return Typed(ERROR, span, "")
        if not ctx.in_aggregate:
            example = f"share({n})" if fact.type == BOOL else f"p95({n})` or `mean({n})"
            self.report.error(
                "E109",
                f"`{n}` is a per-run fact; a budget reads it through an aggregate over runs",
                span,
                help=f"write `{example}`",
            )
            return Typed(ERROR, span, "")
        return Typed(fact.type, span, f"`{n}` is {noun(fact.type)}")

    def unary(self, expr: A.Unary, op: str, operand: A.Expr, ctx: Ctx) -> Typed:
        o = self.infer(operand, ctx)
        if o.failed or o.type.kind == "none":
            return Typed(o.type, expr.span, o.origin)
        if op == "not":
            if o.type.kind != "bool":
                self.report.error(
                    "E204", f"`not` needs true or false, but {o.origin}", operand.span
                )
                return Typed(ERROR, expr.span, "")
            return Typed(BOOL, expr.span, expr=expr)
        if not o.type.is_numeric:
            self.report.error("E203", f"cannot negate {noun(o.type)}: {o.origin}", operand.span)
            return Typed(ERROR, expr.span, "")
        return Typed(o.type, expr.span, expr=expr)

    def binary(self, expr: A.Binary, ctx: Ctx) -> Typed:
        lhs, rhs = self.infer(expr.left, ctx), self.infer(expr.right, ctx)
        if lhs.failed or rhs.failed:
            return Typed(ERROR, expr.span, "")
        lt, rt = lhs.type, rhs.type
        if lt.kind == "none" or rt.kind == "none":
            t = rt if lt.kind == "none" else lt
            return Typed(t, expr.span, expr=expr)
        verb = _VERBS[expr.op].format(left=noun(lt), right=noun(rt))
        if not (lt.is_numeric and rt.is_numeric):
            self.report.mismatch("E203", f"{verb}: arithmetic needs numbers", expr.span, lhs, rhs)
            return Typed(ERROR, expr.span, "")
        if currency_clash(lt, rt):
            self.report.mismatch("E205", f"{verb}", expr.span, lhs, rhs)
            return Typed(ERROR, expr.span, "")
        if expr.op == "/" and is_constant(expr.right) and constant_value(expr.right) == 0:
            self.report.error(
                "E213",
                f"`{show(expr)}` divides by zero, so its value is always none",
                expr.span,
                help="divide by something that is not 0, or write `none` if none is meant",
            )
            return Typed(ERROR, expr.span, "")
        if expr.op in ("+", "-"):
            if lt.dim != rt.dim:
                self.report.mismatch("E201", verb, expr.span, lhs, rhs)
                return Typed(ERROR, expr.span, "")
            t = number(lt.dim, merge_currency(lt, rt))
        elif expr.op == "*":
            t = number(lt.dim * rt.dim, merge_currency(lt, rt))
        else:
            t = number(lt.dim / rt.dim, merge_currency(lt, rt))
        return Typed(t, expr.span, expr=expr)
