"""The JSON document of `contractlang reconcile --format json` (schema
``contractlang.reconcile/1``, ``docs/reconcile.md``) and the dispute table of ``--out``.

Stable: the same inputs give the same bytes, keys sorted; no paths, no clock times; every
amount is an exact decimal string. It says what the invoiced amounts are net of: the invoice's
lines of every kind (``invoice_lines``: charges, reversals, adjustments, credit lines of
positive amount, credits, tax), and each comparison's (``invoiced_lines``).
"""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import polars as pl

from contractlang.diagnostics import Diagnostic
from contractlang.lang.numbers import exact_difference
from contractlang.reconcile.model import (
    ContractReconciliation,
    Lines,
    MonthTotal,
    ReconciledAmount,
    Reconciliation,
)
from contractlang.render.reconcile.words import (
    fact_text,
    money_text,
    reason_text,
    rows_json,
    rows_text,
)
from contractlang.trace.problems import Sources

SCHEMA = "contractlang.reconcile/1"


def reconciliation_to_json(r: Reconciliation) -> dict[str, Any]:
    precision = max((c.contract.settings.precision for c in r.contracts), default=2)
    return {
        "schema": SCHEMA,
        "tolerance": money_text(r.tolerance, precision),
        "discrepancy": r.has_discrepancy,
        "set_aside": None
        if r.set_aside is None
        else {
            "runs": r.set_aside.runs,
            "invoice_lines": r.set_aside.lines,
            "amount": money_text(r.set_aside.amount, precision),
            "unreadable_amounts": r.set_aside.unreadable,
        },
        "trace": {
            "files": len(r.sources.names),
            "events": r.evaluation.trace.summary.rows_read,
            "invoice_lines": r.invoice_lines,
        },
        "contracts": [contract_to_json(c, r.sources) for c in r.contracts],
        "warnings": [warning_to_json(w, r.sources) for w in r.warnings],
    }


def render_json(r: Reconciliation) -> str:
    doc = reconciliation_to_json(r)
    return json.dumps(doc, indent=2, ensure_ascii=False, sort_keys=True) + "\n"


def warning_to_json(w: Diagnostic, sources: Sources) -> dict[str, Any]:
    """A warning about an invoice line: its code, message and help, and its row as
    ``invoice_rows`` gives one (the file by its place among the trace files: no paths)."""
    return {
        "code": w.code,
        "message": w.message,
        "help": w.help,
        "file": sources.names.index(w.file) + 1 if w.file in sources.names else None,
        "row": w.span.line,
    }


def lines_to_json(lines: tuple[Lines, ...], money: Any) -> dict[str, Any]:
    """Invoice lines by kind: ``{"reversal": {"count": 1, "amount": "-1500.00"}}``."""
    return {x.kind: {"count": x.count, "amount": money(x.amount)} for x in lines}


def _money(c: ContractReconciliation) -> Any:
    p = c.contract.settings.precision

    def money(d: Decimal | None) -> str | None:
        return None if d is None else money_text(d, p)

    return money


def contract_to_json(c: ContractReconciliation, sources: Sources) -> dict[str, Any]:
    money = _money(c)
    s = c.contract.settings
    total = c.total()
    due, given = c.credits()
    charges, owed = c.claims()
    return {
        "name": c.name,
        "currency": s.currency,
        "precision": s.precision,
        "summary": {
            k: {"count": v.count, "amount": money(v.amount)} for k, v in c.summary().items()
        },
        "totals": {
            "expected": money(total.expected),
            "invoiced": money(total.invoiced),
            "difference": money(exact_difference(total.invoiced, total.expected)),
            "over_billed": money(total.over_billed),
            "under_billed": money(total.under_billed),
            "charges_over_billed": money(charges),
            "credits_owed": money(owed),
            "owed_to_provider": money(c.owed_to_provider()),
            "credits_due": money(due),
            "credits_invoiced": money(given),
        },
        "invoice_lines": lines_to_json(c.invoice, money),
        "months": [_month(m, money) for m in c.months()],
        "lines": [line_to_json(x, money, sources) for x in c.lines],
    }


def _month(m: MonthTotal, money: Any) -> dict[str, Any]:
    return {
        "month": m.month or None,
        "expected": money(m.expected),
        "invoiced": money(m.invoiced),
        "over_billed": money(m.over_billed),
        "under_billed": money(m.under_billed),
    }


def _flat(x: ReconciledAmount, money: Any) -> dict[str, Any]:
    """The fields of a comparison that both the JSON line and the dispute row carry."""
    return {
        "run_id": x.run_id,
        "alloc_id": x.alloc_id,
        "kind": x.kind,
        "status": x.status,
        "month": x.month,
        "expected": money(x.expected),
        "invoiced": money(x.invoiced),
        "difference": money(x.difference),
        "term": x.term,
        "line": x.line,
    }


def line_to_json(x: ReconciledAmount, money: Any, sources: Sources) -> dict[str, Any]:
    return {
        **_flat(x, money),
        "basis": [
            {
                "kind": b.kind,
                "term": b.term,
                "line": b.line,
                "alloc_id": b.alloc_id,
                "amount": money(b.amount),
            }
            for b in x.basis
        ],
        "reasons": [
            {
                "kind": r.kind,
                "term": r.term,
                "line": r.line,
                "alloc_id": r.alloc_id,
                "condition": r.condition,
                "facts": {name: fact_text(v) for name, v in r.facts},
                "text": reason_text(r),
            }
            for r in x.reasons
        ],
        "invoice_rows": rows_json(x.invoice_rows, sources),
        "invoiced_lines": lines_to_json(x.invoiced_lines, money),
    }


DISPUTE_COLUMNS = [
    "contract",
    "run_id",
    "alloc_id",
    "kind",
    "status",
    "month",
    "expected",
    "invoiced",
    "difference",
    "term",
    "line",
    "reasons",
    "invoice_rows",
]
#: The dispute table's amounts, exact decimal text: kept as they are in a CSV file, a negative
#: difference included, where its text cells are escaped for a spreadsheet.
DISPUTE_NUMBERS = ("expected", "invoiced", "difference")


def dispute_table(r: Reconciliation) -> pl.DataFrame:
    """Every comparison of every contract as one row, amounts as exact decimal text (``--out``);
    the reasons as sentences joined by `` | ``, the invoice's trace rows by spaces."""
    rows: list[dict[str, Any]] = []
    for c in r.contracts:
        money = _money(c)
        for x in c.lines:
            rows.append(
                {
                    "contract": c.name,
                    **_flat(x, money),
                    "reasons": " | ".join(reason_text(y) for y in x.reasons) or None,
                    "invoice_rows": rows_text(x.invoice_rows, r.sources, most=len(x.invoice_rows))
                    or None,
                }
            )
    schema: dict[str, pl.DataType] = dict.fromkeys(DISPUTE_COLUMNS, pl.String())
    schema["line"] = pl.Int64()
    return pl.DataFrame(rows, schema=schema)
