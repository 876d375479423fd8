"""Calls: the scalar functions (``coalesce``, ``min``, ``max`` of two or more values) and the
aggregates over runs, which only a budget's ``require`` may use and which do not nest.
"""

from __future__ import annotations

from dataclasses import replace

from contractlang.check.context import (
    Ctx,
    Infers,
    Typed,
    currency_clash,
    merge_currency,
    noun,
)
from contractlang.diagnostics import NO_SPAN, Span, did_you_mean
from contractlang.lang import ast as A
from contractlang.lang.show import show
from contractlang.lang.types import ERROR, NONE, PLAIN_NUMBER, Type
from contractlang.lang.vocabulary import (
    AGGREGATES,
    COMMON_PERCENTILES,
    COUNTING_AGGREGATES,
    SCALAR_FUNCTIONS,
    percentile,
)


def call(inf: Infers, expr: A.Call, ctx: Ctx) -> Typed:
    f, args, span = expr.func, expr.args, expr.span
    fspan = expr.func_span if expr.func_span != NO_SPAN else span
    pct = percentile(f)
    if f in AGGREGATES or pct is not None:
        if f in ("min", "max") and len(args) != 1:
            return scalar_call(inf, expr, ctx, fspan)
        return aggregate(inf, expr, ctx, fspan, pct)
    if f in SCALAR_FUNCTIONS:
        return scalar_call(inf, expr, ctx, fspan)
    known = list(SCALAR_FUNCTIONS)
    if ctx.in_budget:
        known += [*AGGREGATES, *COMMON_PERCENTILES]
    suggestion = did_you_mean(f, known)
    inf.report.error(
        "E108",
        f"unknown function `{f}`",
        fspan,
        help=f"did you mean `{suggestion}`?"
        if suggestion
        else "functions are " + ", ".join(f"`{k}`" for k in dict.fromkeys(known)),
    )
    return Typed(ERROR, span, "")


def aggregate(inf: Infers, expr: A.Call, ctx: Ctx, fspan: Span, pct: int | None) -> Typed:
    f, args, span = expr.func, expr.args, expr.span
    if not ctx.in_budget:
        inf.report.error(
            "E109",
            f"`{f}` is an aggregate over runs; only a budget's `require` can use it",
            fspan,
            help="contract terms read one allocation; `min` and `max` of two or more "
            "values work here"
            if f in ("min", "max")
            else None,
        )
        return Typed(ERROR, span, "")
    if ctx.in_aggregate:
        inf.report.error(
            "E109",
            f"`{f}` is inside another aggregate; aggregates run over runs and do not nest",
            fspan,
        )
        return Typed(ERROR, span, "")
    if pct is not None and pct > 100:
        inf.report.error(
            "E108",
            f"`{f}` is not a percentile; use `p0` to `p100`",
            fspan,
        )
        return Typed(ERROR, span, "")
    if len(args) != 1:
        inf.report.error(
            "E108",
            f"`{f}` takes one argument, not {len(args)}",
            fspan,
        )
        return Typed(ERROR, span, "")
    inner = replace(ctx, in_aggregate=True)
    a = inf.infer(args[0], inner)
    if a.failed:
        return Typed(ERROR, span, "")
    if f in COUNTING_AGGREGATES:
        if a.type.kind not in ("bool", "none"):
            inf.report.error(
                "E204",
                f"`{f}` counts runs where a condition is true, but {a.origin}",
                args[0].span,
                help=f"write a condition, such as `{f}(net > 10000 USD)`",
            )
            return Typed(ERROR, span, "")
        return Typed(PLAIN_NUMBER, span, expr=expr)
    if not a.type.is_numeric:
        if a.type.kind == "none":
            return Typed(NONE, span, a.origin)
        inf.report.error(
            "E211",
            f"`{f}` aggregates numbers, but {a.origin}",
            args[0].span,
            help=f"use `share({show(args[0])})` for the share of runs where it is true"
            if a.type.kind == "bool"
            else None,
        )
        return Typed(ERROR, span, "")
    return Typed(a.type, span, expr=expr)


def scalar_call(inf: Infers, expr: A.Call, ctx: Ctx, fspan: Span) -> Typed:
    f, args, span = expr.func, expr.args, expr.span
    if len(args) < 2:
        inf.report.error(
            "E108",
            f"`{f}` takes two or more arguments"
            + (" (or one, as an aggregate in a budget)" if f != "coalesce" else ""),
            fspan,
        )
        for a in args:
            inf.infer(a, ctx)
        return Typed(ERROR, span, "")
    typed = [inf.infer(a, ctx) for a in args]
    if any(t.failed for t in typed):
        return Typed(ERROR, span, "")
    known = [t for t in typed if t.type.kind != "none"]
    if not known:
        return Typed(NONE, span, expr=expr)
    first = known[0]
    for t in known[1:]:
        lt, rt = first.type, t.type
        if f != "coalesce" and not (lt.is_numeric and rt.is_numeric):
            bad = first if not lt.is_numeric else t
            inf.report.error("E203", f"`{f}` takes numbers, but {bad.origin}", bad.span)
            return Typed(ERROR, span, "")
        if lt.kind == rt.kind == "number" and lt.dim != rt.dim:
            inf.report.mismatch(
                "E201",
                f"`{f}` needs arguments of one unit, but gets {noun(lt)} and {noun(rt)}",
                span,
                first,
                t,
            )
            return Typed(ERROR, span, "")
        if currency_clash(lt, rt):
            inf.report.mismatch(
                "E205",
                f"`{f}` needs arguments in one currency, but gets {noun(lt)} and {noun(rt)}",
                span,
                first,
                t,
            )
            return Typed(ERROR, span, "")
        if lt.kind != rt.kind or lt.enum != rt.enum:
            inf.report.mismatch(
                "E203",
                f"`{f}` needs arguments of one type, but gets {noun(lt)} and {noun(rt)}",
                span,
                first,
                t,
            )
            return Typed(ERROR, span, "")
    result = first.type
    for other in known[1:]:
        result = Type(result.kind, result.dim, merge_currency(result, other.type), result.enum)
    return Typed(result, span, expr=expr)
