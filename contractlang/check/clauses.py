"""The rules of each clause: rates, billing settings, promises, exclusions, credits, caps, and
a budget's requirements.

Each clause has its shape rules (a rate is money per GPU-time, a credit is money, a billing
setting a constant duration, a cap limit a constant amount or ``X% of gross``) and reads facts
of its level and of earlier stages only (:class:`~contractlang.check.context.Ctx`): rates and
exclusions read trace facts, credits may also read ``billable_time``, ``charge`` and
``replayed_cost``; budgets read per-run facts through aggregates.
"""

from __future__ import annotations

from fractions import Fraction

from contractlang.check.context import Ctx, Reporter, first_currency, suggest, tail
from contractlang.check.infer import Inferrer
from contractlang.check.lints import double_refunds, unreachable_rates
from contractlang.check.settings import check_settings
from contractlang.lang import ast as A
from contractlang.lang.exact import constant_value, is_constant
from contractlang.lang.facts import Stage
from contractlang.lang.numbers import LONGEST_US, MICROS_PER_SECOND
from contractlang.lang.show import show
from contractlang.lang.types import GPU_TIME, MONEY, TIME
from contractlang.lang.vocabulary import CAP_LEVELS

_MICROSECOND = Fraction(1, MICROS_PER_SECOND)


class ClauseChecker:
    """Checks contracts and budgets, reporting into ``report``."""

    def __init__(self, report: Reporter) -> None:
        self.report = report
        self.inf = Inferrer(report)
        self.bad_prices: set[int] = set()  # ids of rate prices that failed to check

    def contract(self, c: A.Contract) -> None:
        currency, currency_span = check_settings(self.report, c)
        promises = frozenset(cl.kind for cl in c.clauses if isinstance(cl, A.Promise))

        def ctx(role: str, stage: Stage) -> Ctx:
            return Ctx(
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
            self.report.error(
                "E305",
                f"contract `{c.name}` has no rate, so nothing in it can be priced",
                c.name_span,
                help="add a rate such as `rate 2.10 USD per gpu_hour`",
            )
        unreachable_rates(self.report, c, self.bad_prices)
        double_refunds(self.report, c)

    def require_when(
        self, cl: A.Clause, kind: str, name: str, when: A.Expr | None, head: str
    ) -> None:
        if when is None:
            self.report.error(
                "E301",
                f'{kind} "{name}" has no `when` condition',
                cl.span,
                help=f"write `{head} when <condition>`; `when` is optional only on rates",
            )

    def rate(self, price: A.Expr, when: A.Expr | None, ctx: Ctx) -> None:
        before = len(self.report.diags)
        t = self.inf.infer(price, ctx)
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
            self.report.error(
                "E206",
                f"a rate must be money per GPU-time, but {t.origin}",
                price.span,
                help=fix,
            )
        if t.failed or len(self.report.diags) > before:
            self.bad_prices.add(id(price))
        self.condition(when, ctx)

    def condition(self, when: A.Expr | None, ctx: Ctx) -> None:
        if when is None:
            return
        t = self.inf.infer(when, ctx)
        if not t.failed and t.type.kind not in ("bool", "none"):
            self.report.error(
                "E204",
                f"a `when` condition must be true or false, but {t.origin}",
                when.span,
            )

    def constant_duration(self, expr: A.Expr, what: str, ctx: Ctx, *, positive: bool) -> None:
        t = self.inf.infer(expr, ctx)
        if t.failed:
            return
        if not (t.type.is_numeric and t.type.dim == TIME):
            self.report.error(
                "E208",
                f"`{what}` takes a duration, but {t.origin}",
                expr.span,
                help="write a duration such as `1 minute` or `30 seconds`",
            )
            return
        if not is_constant(expr):
            self.report.error(
                "E213",
                f"`{what}` must be a constant duration, not one read from each allocation",
                expr.span,
                help="write a fixed duration such as `1 minute`",
            )
            return
        value = constant_value(expr)
        if value is None:
            self.report.error("E213", f"`{what}` has no value", expr.span)
        elif positive and value <= 0:
            self.report.error("E213", f"`{what}` must be more than 0 seconds", expr.span)
        elif value < 0:
            self.report.error("E213", f"`{what}` cannot be negative", expr.span)
        elif value * MICROS_PER_SECOND > LONGEST_US:
            self.report.error(
                "E213",
                f"`{what}` is longer than any trace can be",
                expr.span,
                help="a trace covers at most 1900-01-01 to 2199-12-31 (300 years)",
            )
        elif ctx.role.startswith("billing") and value % _MICROSECOND != 0:
            self.report.error("E213", f"`{what}` must be a whole number of microseconds", expr.span)

    def exclusion_duration(self, name: str, expr: A.Expr, ctx: Ctx) -> None:
        t = self.inf.infer(expr, ctx)
        if not t.failed and not (t.type.is_numeric and t.type.dim == TIME):
            if t.type.kind == "none":
                return
            self.report.error(
                "E208",
                f'exclusion "{name}" takes a duration out of billable time, but {t.origin}',
                expr.span,
                help="write a duration such as `replayed_time` or `10 minutes`, or "
                "`allocation` to exclude the whole allocation",
            )

    def credit(self, name: str, expr: A.Expr, ctx: Ctx) -> None:
        t = self.inf.infer(expr, ctx)
        if not t.failed and not (t.type.is_numeric and t.type.dim == MONEY):
            if t.type.kind == "none":
                return
            self.report.error(
                "E207",
                f'credit "{name}" must be an amount of money, but {t.origin}',
                expr.span,
                help="write money such as `10% of charge` or `50 USD`",
            )

    def cap(self, cl: A.Cap, limit: A.Expr, level: str, ctx: Ctx) -> None:
        if level not in CAP_LEVELS:
            self.report.error(
                "E213",
                f"`{level}` is not a cap level; use `allocation`, `run`, `month` or `contract`",
                tail(cl.span, len(level)),
                help=suggest(level, CAP_LEVELS),
            )
        form = "a cap limit is a constant amount of money or `X% of gross`"
        if isinstance(limit, A.PercentOf) and limit.operand == A.Name("gross"):
            pct = limit.percent.value
            if pct > 100:
                self.report.error(
                    "E210",
                    "a cap over 100% of gross never cuts anything",
                    limit.span,
                    help="a cap of 100% of gross is the most that can mean anything",
                )
            return
        if any(isinstance(n, A.Name) and n.name == "gross" for n in A.walk(limit)):
            self.report.error(
                "E209",
                f"{form}; `gross` can be read only as `X% of gross`",
                limit.span,
                help="write `30% of gross` or an amount such as `50000 USD`",
            )
            return
        t = self.inf.infer(limit, ctx)
        if t.failed:
            return
        if t.type.kind == "none":
            self.report.error("E209", "a cap limit has no value (it is `none`)", limit.span)
            return
        if not (t.type.is_numeric and t.type.dim == MONEY):
            self.report.error(
                "E209",
                f"{form}, but {t.origin}",
                limit.span,
                help="write `30% of gross` or an amount such as `50000 USD`",
            )
        elif not is_constant(limit):
            self.report.error(
                "E209",
                f"{form}; `{show(limit)}` is not constant",
                limit.span,
                help="write `30% of gross` or an amount such as `50000 USD`",
            )
        else:
            value = constant_value(limit)
            if value is None:
                self.report.error(
                    "E209", "a cap limit has no value (it is `none`, or divides by zero)",
                    limit.span,
                )  # fmt: skip
            elif value < 0:
                self.report.error("E209", "a cap limit cannot be negative", limit.span)

    # -- lints

    # -- budgets

    def budget(self, b: A.Budget) -> None:
        for req in b.requires:
            self.requirement(req)

    def requirement(self, req: A.Require) -> None:
        currency, currency_span = first_currency(req.expr)
        ctx = Ctx(
            role="require",
            max_stage=Stage.RUN,
            currency=currency,
            currency_span=currency_span,
            currency_where="this requirement",
            contract=None,
        )
        before = len(self.report.diags)
        t = self.inf.infer(req.expr, ctx)
        inner_failed = t.failed or self.report.errors_since(before)
        expr = req.expr
        example = "such as `require p95(cost_per_accepted_run) <= 12000 USD`"
        if not isinstance(expr, A.Compare):
            self.report.error(
                "E212",
                f"a `require` must be one comparison of a measured value with a limit, {example}",
                expr.span,
                help="write one `require` per condition" if isinstance(expr, A.Logic) else None,
            )
            return
        left_agg, right_agg = A.has_aggregate(expr.left), A.has_aggregate(expr.right)
        if left_agg and right_agg:
            self.report.error(
                "E212",
                "both sides of this `require` are measured; compare an aggregate with a "
                "constant limit",
                expr.span,
            )
        elif not left_agg and not right_agg:
            if not inner_failed:
                self.report.error(
                    "E212",
                    f"this `require` measures nothing; put an aggregate on one side, {example}",
                    expr.span,
                )
        else:
            limit = expr.right if left_agg else expr.left
            if not inner_failed and not is_constant(limit):
                self.report.error(
                    "E212",
                    f"the limit of a `require` must be constant, but `{show(limit)}` is not",
                    limit.span,
                )
            elif not inner_failed and constant_value(limit) is None:
                self.report.error(
                    "E213",
                    f"the limit `{show(limit)}` has no value (it is `none` or divides by zero)",
                    limit.span,
                    help="write the limit as a number with its unit, such as `12000 USD`",
                )
