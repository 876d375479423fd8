"""The terms and facts behind an expected amount: for an allocation, the exclusions that took
time out of its bill, the credits it earned, the caps that cut them; for a run, its run-level
caps. Each is a :class:`~contractlang.reconcile.model.Reason` naming the term, its source line,
its condition as written and the value of every fact the condition (or amount) reads."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from typing import Any

from contractlang.evaluate.plan import Term
from contractlang.evaluate.results import ContractResult
from contractlang.lang import ast
from contractlang.lang.facts import FACTS, PROMISES, TRACE_PREFIX
from contractlang.lang.numbers import gpu_hours
from contractlang.lang.show import show, source_text
from contractlang.reconcile.model import FactValue, Reason, ReasonKind


def _text(expr: ast.Expr | None, source: str | None) -> str | None:
    if expr is None:
        return None
    return source_text(expr.span, source) or show(expr)


def facts_read(
    exprs: tuple[ast.Expr | None, ...], row: dict[str, Any], c: ContractResult
) -> tuple[tuple[str, FactValue], ...]:
    """Each fact, promise and ``trace.<column>`` the expressions read, once, in the order they
    are read, with its value for this allocation (``row``: its row of the evaluated
    allocations)."""
    out: dict[str, FactValue] = {}
    for expr in exprs:
        if expr is None:
            continue
        for node in ast.walk(expr):
            if isinstance(node, ast.Name) and node.name not in out:
                if node.name in PROMISES:
                    us = c.settings.promises_us.get(PROMISES[node.name])
                    out[node.name] = None if us is None else timedelta(microseconds=us)
                elif node.name in FACTS and node.name in row:
                    out[node.name] = _value(row[node.name])
            elif isinstance(node, ast.TraceColumn):
                key = TRACE_PREFIX + node.column
                if key not in out and key in row:
                    out[key] = _value(row[key])
    return tuple(out.items())


def _value(v: Any) -> FactValue:
    if v is None or isinstance(v, (timedelta, Decimal, bool, int, str)):
        return v
    return str(v)


def allocation_reasons(c: ContractResult, row: dict[str, Any]) -> list[Reason]:
    """The exclusions, credits and allocation caps that applied to one allocation."""
    plan, alloc = c.plan, row["alloc_id"]

    def reason(t: Term, kind: ReasonKind, reads: tuple[str, ...], gpu_us: int | None) -> Reason:
        when = getattr(t.clause, "when", None)
        exprs = tuple(getattr(t.clause, attr, None) for attr in reads)
        return Reason(
            kind,
            t.label,
            t.line,
            alloc,
            _text(when, c.source_text),
            facts_read((when, *exprs), row, c),
            None if gpu_us is None else gpu_hours(gpu_us),
        )

    out: list[Reason] = []
    if row["excluded_by"] is not None:
        t = plan.whole_exclusions[row["excluded_by"]]
        out.append(reason(t, "exclusion", (), row["gpus"] * row["runtime_us"]))
    for t in plan.duration_exclusions:
        if row[t.column]:
            out.append(reason(t, "exclusion", ("duration",), row["gpus"] * row[t.column]))
    for t in plan.credits:
        if row[t.column.removesuffix("_minor")] is not None and row[t.column]:
            out.append(reason(t, "credit", ("amount",), None))
    out += [Reason("cap", t.label, t.line, alloc) for t in plan.caps if row[t.column]]
    return out


def charge_reason(c: ContractResult, row: dict[str, Any]) -> Reason | None:
    """How an allocation's charge was computed: the rate that priced it, its GPUs, runtime,
    billable time (after exclusions, increment and minimum) and price per GPU-hour."""
    if row["rate_index"] is None:
        return None
    t = c.plan.rates[row["rate_index"]]
    facts: tuple[tuple[str, FactValue], ...] = (
        ("gpus", row["gpus"]),
        ("runtime", _value(row["runtime"])),
        ("billable_time", _value(row["billable_time"])),
        ("price per GPU-hour", _value(row["price_per_gpu_hour"])),
    )
    return Reason("charge", t.label, t.line, row["alloc_id"], None, facts)


def run_cap_reasons(c: ContractResult, run: dict[str, Any]) -> list[Reason]:
    """The run, month and contract caps that cut one run's credits."""
    return [Reason("cap", cut.label, cut.line, None) for cut in c.run_cuts if run.get(cut.column)]
