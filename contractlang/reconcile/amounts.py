"""Tie one contract's ledger to the invoice lines by ``run_id`` (and ``alloc_id`` where the
invoice has one), and say for each pair whether it matches.

What is compared (``docs/reconcile.md``), the invoiced side always net:

- an allocation's ``charge`` line with the invoice lines of the charge side carrying its
  ``alloc_id`` — charges, reversals (negative charges), adjustments and credit lines of
  positive amount (charges under another name), summed;
- a run's run-level invoice lines of the charge side (no ``alloc_id``, as FOCUS imports give)
  of a billing month with the run's charge lines of that month, of the allocations that have
  no invoice line of their own. An invoice line's month is its invoice's (the contract's
  billing month of its ``billing_period_start``, :func:`line_month`) when the trace has one,
  else that of its charge period (``ts``); a charge's, that of its allocation's end;
- a run's ``credit`` and ``cap`` lines together (its credits after caps) with its invoice
  ``credit`` lines of 0 or less.

``tax`` lines are never compared. An allocation charge with neither an invoice line of its own
nor a run-level line of its month is ``missing``. Exclusion lines are never compared: they are
reasons, shown beside the comparison of their allocation (or run and month).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Any

import polars as pl

from contractlang.evaluate.results import ContractResult
from contractlang.evaluate.settings import Settings
from contractlang.importers.focus import UNATTRIBUTED
from contractlang.lang.numbers import counted, exact_sum
from contractlang.reconcile.invoice import PERIOD_START
from contractlang.reconcile.model import (
    CHARGE_SIDE,
    CREDIT_SIDE,
    LINE_KINDS,
    Basis,
    Kind,
    LineKind,
    Lines,
    Reason,
    ReconciledAmount,
    counted_as_charges,
    net_of,
    status_of,
)
from contractlang.reconcile.reasons import allocation_reasons, charge_reason, run_cap_reasons
from contractlang.trace.schema import ROW
from contractlang.trace.sums import exact_total, sum_parts

_Key = tuple[str, str]
#: How far into its invoice's billing period a line's month is read: the middle of the
#: period's first day, so a provider's days and the contract's may end up to 12 hours apart.
_INTO_PERIOD = pl.duration(hours=12)


@dataclass(frozen=True, slots=True)
class _Invoiced:
    """Invoice lines summed: the exact net, the trace rows, the earliest month, each kind, and
    how many lines were charged in each month (the billing month of their charge period)."""

    amount: Decimal
    rows: tuple[int, ...]
    first: str
    parts: tuple[Lines, ...]
    charged: dict[str, int]


def line_month(s: Settings, columns: Iterable[str]) -> pl.Expr:
    """An invoice line's billing month: the contract's billing month of the middle of the
    first day of its invoice's billing period (``billing_period_start`` + 12 h: an invoice of
    April in UTC is April under a contract whose months end at midnight in New York, where
    its first instant is still 31 March), else of its charge period (``ts``)."""
    by_charge = s.billing_month(pl.col("ts"))
    if PERIOD_START not in columns:
        return by_charge
    return pl.coalesce(s.billing_month(pl.col(PERIOD_START) + _INTO_PERIOD), by_charge)


def _grouped(frame: pl.DataFrame, keys: list[str]) -> dict[Any, _Invoiced]:
    """Invoice lines summed by ``keys``: the exact net, the trace rows, the earliest month and
    the count and sum of each kind (every line counted, however alike two lines are)."""
    if frame.height == 0:
        return {}
    g = frame.group_by([*keys, "kind"], maintain_order=True).agg(
        *sum_parts("amount"),
        pl.col(ROW),
        pl.len().alias("_n"),
        pl.col("month").min().alias("_first"),
        pl.col("charged"),
    )
    found: dict[Any, list[dict[str, Any]]] = {}
    for row in g.iter_rows(named=True):
        key = tuple(row[k] for k in keys)
        found.setdefault(key if len(key) > 1 else key[0], []).append(row)
    out: dict[Any, _Invoiced] = {}
    for key, rows in found.items():
        parts = sorted(
            (Lines(r["kind"], r["_n"], exact_total(r, "amount")) for r in rows),
            key=lambda x: LINE_KINDS.index(x.kind),
        )
        charged: dict[str, int] = {}
        for m in sorted(m for r in rows for m in r["charged"]):
            charged[m] = charged.get(m, 0) + 1
        out[key] = _Invoiced(
            exact_sum(p.amount for p in parts),
            tuple(sorted(n for r in rows for n in r[ROW])),
            min(r["_first"] for r in rows),
            tuple(parts),
            charged,
        )
    return out


def invoice_totals(lines: pl.DataFrame) -> tuple[Lines, ...]:
    """The invoice lines of every kind (:data:`LINE_KINDS`, none left out): how many, their
    exact sum."""
    g = lines.group_by("kind").agg(*sum_parts("amount"), pl.len().alias("_n"))
    got = {
        r["kind"]: Lines(r["kind"], r["_n"], exact_total(r, "amount"))
        for r in g.iter_rows(named=True)
    }
    return tuple(got.get(k, Lines(k, 0, Decimal(0))) for k in LINE_KINDS)


def reconciled_amounts(
    c: ContractResult, lines: pl.DataFrame, tolerance: Decimal
) -> tuple[ReconciledAmount, ...]:
    """Every comparison of contract ``c`` with the invoice ``lines``, ordered by month, run,
    allocation (attempt) and kind."""
    s = c.settings
    inv = lines.with_columns(
        month=line_month(s, lines.columns), charged=s.billing_month(pl.col("ts"))
    )
    # the charge side, net: charges, reversals, adjustments and positive credits together
    charges = inv.filter(pl.col("kind").is_in(CHARGE_SIDE))
    by_alloc = _grouped(charges.filter(pl.col("alloc_id").is_not_null()), ["run_id", "alloc_id"])
    by_month = _grouped(charges.filter(pl.col("alloc_id").is_null()), ["run_id", "month"])
    by_run = _grouped(inv.filter(pl.col("kind").is_in(CREDIT_SIDE)), ["run_id"])

    ledger = c.ledger()
    allocs = c.allocations.with_columns(_month=s.billing_month(pl.col("end")))
    month_of: dict[str, str] = dict(allocs.select("alloc_id", "_month").iter_rows())
    attempt: dict[str, int] = dict(allocs.select("alloc_id", "attempt").iter_rows())
    run_allocs: dict[_Key, list[str]] = {}
    of_run: dict[str, list[str]] = {}
    ordered = allocs.sort("run_id", "attempt").select("run_id", "alloc_id", "_month")
    for run, alloc, month in ordered.iter_rows():
        run_allocs.setdefault((run, month), []).append(alloc)
        of_run.setdefault(run, []).append(alloc)
    reasons = _reasons(c)
    known_runs = set(allocs.get_column("run_id").to_list())

    charge_lines: dict[str, Basis] = {}
    credit_lines: dict[str, list[Basis]] = {}
    settle: dict[str, str] = {}
    for row in ledger.iter_rows(named=True):
        if row["kind"] == "exclusion":
            continue
        b = Basis(row["kind"], row["term"], row["line"], row["alloc_id"], Decimal(row["amount"]))
        if row["kind"] == "charge":
            charge_lines[row["alloc_id"]] = b
        else:
            credit_lines.setdefault(row["run_id"], []).append(b)
            settle.setdefault(row["run_id"], row["month"])

    out: list[ReconciledAmount] = []

    def add(
        run: str,
        alloc: str | None,
        kind: Kind,
        month: str | None,
        basis: list[Basis],
        invoiced: _Invoiced | None,
        why: list[Reason],
    ) -> None:
        expected = exact_sum(b.amount for b in basis) if basis else None
        amount = invoiced.amount if invoiced is not None else None
        rows = invoiced.rows if invoiced is not None else ()
        parts = invoiced.parts if invoiced is not None else ()
        if invoiced is not None:
            why = [*why, *_notes(run, known_runs)]
        if expected is None and not why and kind == "charge" and alloc is not None:
            why = [Reason("note", "nothing billable", None, alloc)]
        why = [*why, *_net_notes(parts)]
        status = status_of(expected, amount, tolerance)
        out.append(
            ReconciledAmount(
                run,
                alloc,
                kind,
                month,
                status,
                expected,
                amount,
                tuple(basis),
                tuple(why),
                rows,
                parts,
            )
        )

    # allocation charges: with their own invoice lines, or with none at all
    run_of = dict(allocs.select("alloc_id", "run_id").iter_rows())
    for alloc in sorted(
        {*charge_lines, *(a for _, a in by_alloc)}, key=lambda a: attempt.get(a, 0)
    ):
        run = run_of[alloc]
        month = month_of[alloc]
        own = by_alloc.get((run, alloc))
        if own is None and (run, month) in by_month:
            continue  # compared with the run's lines of that month, below
        basis = [charge_lines[alloc]] if alloc in charge_lines else []
        add(run, alloc, "charge", month, basis, own, _kinds(reasons.get(alloc, []), "exclusion"))
    # run-level invoice charges, month by month
    for (run, month), billed in by_month.items():
        members = [a for a in run_allocs.get((run, month), []) if (run, a) not in by_alloc]
        basis = [charge_lines[a] for a in members if a in charge_lines]
        why = [r for a in members for r in _kinds(reasons.get(a, []), "exclusion")]
        add(run, None, "charge", month, basis, billed, [*why, *_charged_notes(month, billed)])
    # credits after caps, run by run
    runs = c.runs.filter(pl.col("run_id").is_in(list({*credit_lines, *by_run})))
    run_rows = {r["run_id"]: r for r in runs.iter_rows(named=True)}
    for run in sorted({*credit_lines, *by_run}):
        basis = credit_lines.get(run, [])
        invoiced = by_run.get(run)
        if invoiced is None and exact_sum(b.amount for b in basis) == 0:
            continue
        month = settle.get(run) or (invoiced.first if invoiced is not None else None)
        why = [r for a in of_run.get(run, []) for r in _kinds(reasons.get(a, []), "credit", "cap")]
        if run in run_rows:
            why += run_cap_reasons(c, run_rows[run])
        add(run, None, "credit", month, basis, invoiced, why)

    out = _with_charge_reasons(c, out, tolerance)
    kinds = {"charge": 0, "credit": 1}
    out.sort(
        key=lambda x: (
            x.month or "",
            x.run_id,
            x.alloc_id is None,
            attempt.get(x.alloc_id or "", 0),
            kinds[x.kind],
        )
    )
    return tuple(out)


def _with_charge_reasons(
    c: ContractResult, lines: list[ReconciledAmount], tolerance: Decimal
) -> list[ReconciledAmount]:
    """The discrepancies in charges, with how each allocation's charge was computed (only
    those: every allocation's would cost a row each, and a matched charge needs no reason)."""
    off = [
        x for x in lines if x.kind == "charge" and x.basis and x.difference.copy_abs() > tolerance
    ]
    allocs = {b.alloc_id for x in off for b in x.basis if b.alloc_id is not None}
    if not allocs:
        return lines
    rows = c.allocations.filter(pl.col("alloc_id").is_in(list(allocs)))
    how = {r["alloc_id"]: charge_reason(c, r) for r in rows.iter_rows(named=True)}
    marked = {id(x) for x in off}
    done: list[ReconciledAmount] = []
    for x in lines:
        if id(x) in marked:
            extra = [how[b.alloc_id] for b in x.basis if b.alloc_id in how]
            x = replace(x, reasons=(*x.reasons, *(r for r in extra if r is not None)))
        done.append(x)
    return done


def _kinds(reasons: Iterable[Reason], *kinds: str) -> list[Reason]:
    return [r for r in reasons if r.kind in kinds]


def _reasons(c: ContractResult) -> dict[str, list[Reason]]:
    """The reasons of every allocation that an exclusion, a credit or a cap touched."""
    plan = c.plan
    touched = [pl.col("excluded_by").is_not_null()]
    touched += [pl.col(t.column).fill_null(0) > 0 for t in plan.duration_exclusions]
    touched += [pl.col(t.column).fill_null(0) != 0 for t in plan.credits]
    touched += [pl.col(t.column).fill_null(0) > 0 for t in plan.caps]
    rows = c.allocations.filter(pl.any_horizontal(touched))
    return {row["alloc_id"]: allocation_reasons(c, row) for row in rows.iter_rows(named=True)}


def _charged_notes(month: str, billed: _Invoiced) -> list[Reason]:
    """The run-level lines of a month's invoice that were charged in another month (a
    correction, or a charge billed late): ``2 lines charged in 2026-03, on the invoice of
    2026-04``."""
    return [
        Reason(
            "note", f"{counted(n, 'line')} charged in {m}, on the invoice of {month}", None, None
        )
        for m, n in billed.charged.items()
        if m != month
    ]


def _net_notes(parts: Iterable[Lines]) -> list[Reason]:
    """What an invoiced amount nets besides charges: ``net of 1 reversal and 1 adjustment``;
    ``1 credit line of positive amount counted as a charge`` (W801)."""
    got = {p.kind: p for p in parts if p.count}
    out: list[Reason] = []
    net = [got[k] for k in _NETTED if k in got]
    if net:
        out.append(Reason("note", net_of(net), None, None))
    if "positive_credit" in got:
        text = f"{counted_as_charges(got['positive_credit'])} (W801)"
        out.append(Reason("note", text, None, None))
    return out


#: The kinds an invoiced amount is said to be net of (a comparison holds those of one side).
_NETTED: tuple[LineKind, ...] = ("reversal", "adjustment", "credit_reversal")


def _notes(run: str, known_runs: set[str]) -> list[Reason]:
    if run == UNATTRIBUTED:
        return [
            Reason(
                "note",
                "no run key on the invoice line",
                None,
                None,
                f"imported into run `{UNATTRIBUTED}`",
            )
        ]
    if run not in known_runs:
        return [Reason("note", "the trace has no allocation of this run", None, None)]
    return []
