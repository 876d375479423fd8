"""Comparisons and membership: what may be compared with what, and why not.

``<``, ``<=``, ``>`` and ``>=`` order numbers of one dimension; ``==`` and ``!=`` also compare
enum members with their enum and strings with strings; ``in [..]`` compares with each option.
A comparison with ``none`` is never true (W003).
"""

from __future__ import annotations

from contractlang.check.context import (
    Ctx,
    Infers,
    Typed,
    concrete,
    currency_clash,
    is_member,
    members,
    noun,
)
from contractlang.diagnostics import Span
from contractlang.lang import ast as A
from contractlang.lang.show import quote, show
from contractlang.lang.types import (
    BOOL,
    ERROR,
    GPU,
    GPU_TIME,
    MONEY,
    TIME,
    Type,
    enum_of_member,
    enum_type,
)
from contractlang.lang.vocabulary import ENUMS


def comparison_type(inf: Infers, expr: A.Compare, ctx: Ctx) -> Typed:
    lhs, rhs = inf.infer(expr.left, ctx), inf.infer(expr.right, ctx)
    if isinstance(expr.left, A.NoneLit) or isinstance(expr.right, A.NoneLit):
        none_comparison(inf, expr, expr.right if isinstance(expr.left, A.NoneLit) else expr.left)
        return Typed(BOOL, expr.span, expr=expr)
    if lhs.failed or rhs.failed:
        return Typed(ERROR, expr.span, "")
    if expr.op in ("<", "<=", ">", ">="):
        for side in (lhs, rhs):
            if side.type.kind not in ("number", "none"):
                inf.report.mismatch(
                    "E202",
                    f"`{expr.op}` orders numbers; it cannot compare {noun(lhs.type)} with "
                    f"{noun(rhs.type)}",
                    expr.span,
                    lhs,
                    rhs,
                )
                return Typed(ERROR, expr.span, "")
    if not comparable(inf, expr.span, lhs, rhs, expr.left, expr.right):
        return Typed(ERROR, expr.span, "")
    return Typed(BOOL, expr.span, expr=expr)


def none_comparison(inf: Infers, expr: A.Expr, other: A.Expr) -> None:
    shown = quote(other, 30)
    inf.report.warning(
        "W003",
        "a comparison with `none` is never true: comparing with a missing value gives "
        "a missing value",
        expr.span,
        help=f"use `coalesce({shown.strip('`')}, <default>)` to give a missing value a default"
        if shown
        else "use `coalesce(<value>, <default>)` to give a missing value a default",
    )


def comparable(inf: Infers, span: Span, lhs: Typed, rhs: Typed, le: A.Expr, re_: A.Expr) -> bool:
    """Whether ``lhs`` and ``rhs`` can be compared with ``==``; reports why not."""
    lt, rt = lhs.type, rhs.type
    if lt.kind == "none" or rt.kind == "none":
        return True
    if lt.kind == rt.kind == "number":
        if lt.dim != rt.dim:
            inf.report.mismatch(
                "E202",
                f"cannot compare {noun(lt)} with {noun(rt)}",
                span,
                lhs,
                rhs,
                help=_unit_hint(le, rt) or _unit_hint(re_, lt),
            )
            return False
        if currency_clash(lt, rt):
            inf.report.mismatch(
                "E205", f"cannot compare {noun(lt)} with {noun(rt)}", span, lhs, rhs
            )
            return False
        return True
    if lt.kind == rt.kind == "enum":
        if lt.enum == rt.enum:
            return True
        member, other = (re_, lt) if isinstance(re_, A.Name) and is_member(re_) else (le, rt)
        other_expr = le if member is re_ else re_
        if isinstance(member, A.Name) and is_member(member):
            inf.report.mismatch(
                "E203",
                f"`{member.name}` is {noun(enum_type(enum_of_member(member.name) or ''))}"
                f", not {noun(other)}",
                span,
                lhs,
                rhs,
                # a fact's note already lists its members
                help=None
                if isinstance(other_expr, A.Name)
                else f"`{other.enum}` is one of {members(other.enum or '')}",
            )
        else:
            inf.report.mismatch(
                "E203", f"cannot compare {noun(lt)} with {noun(rt)}", span, lhs, rhs
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
            fix = f"`{enum}` is one of {members(enum)}"
        inf.report.mismatch(
            "E203",
            f"cannot compare {noun(lt)} with {noun(rt)}",
            span,
            lhs,
            rhs,
            help=fix,
        )
        return False
    inf.report.mismatch("E203", f"cannot compare {noun(lt)} with {noun(rt)}", span, lhs, rhs)
    return False


def membership(inf: Infers, expr: A.In, ctx: Ctx) -> Typed:
    v = inf.infer(expr.value, ctx)
    ok = not v.failed
    for opt in expr.options:
        o = inf.infer(opt, ctx)
        if isinstance(opt, A.NoneLit):
            none_comparison(inf, expr, expr.value)
            continue
        if o.failed or v.failed:
            ok = False
            continue
        if not comparable(inf, opt.span, v, o, expr.value, opt):
            ok = False
    return Typed(BOOL if ok else ERROR, expr.span, expr=expr)


_EXAMPLE_UNIT = {TIME: "minutes", GPU: "gpus", GPU_TIME: "gpu_hours"}


def _unit_hint(expr: A.Expr, other: Type) -> str | None:
    """Help for a bare number compared with a quantity: "write `8 gpus`"."""
    if not isinstance(expr, A.Number):
        return None
    if other.dim == MONEY:
        unit = other.currency if concrete(other.currency) else "USD"
    else:
        unit = _EXAMPLE_UNIT.get(other.dim, "")
    if not unit:
        return None
    return f"give `{show(expr)}` a unit, as in `{show(expr)} {unit}`"
