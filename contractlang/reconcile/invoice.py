"""The invoice lines of a trace (``source == invoice``: ``charge`` and ``credit`` events), as
reconciliation reads them, and the check that they are in the contract's currency (``R001``)
when the trace says which currency they are in (a ``billing_currency`` column, as
``import focus`` writes it)."""

from __future__ import annotations

from decimal import Decimal

import polars as pl

from contractlang.diagnostics import Diagnostic, Span, error
from contractlang.errors import ContractlangError
from contractlang.reconcile.model import SetAside
from contractlang.trace.model import Trace, run_id_of
from contractlang.trace.schema import ROW
from contractlang.trace.sums import exact_column_total

CURRENCY = "billing_currency"
#: The columns of :func:`invoice_lines`.
COLUMNS = (ROW, "run_id", "alloc_id", "ts", "event", "amount")


def invoice_lines(trace: Trace) -> pl.DataFrame:
    """One row per invoice line: its trace row, run, allocation (null for run-level lines),
    time, event (``charge`` or ``credit``), amount, and currency when the trace has one."""
    if "amount" not in trace.columns:
        return pl.DataFrame(
            schema={
                ROW: pl.Int64(),
                "run_id": pl.String(),
                "alloc_id": pl.String(),
                "ts": pl.Datetime("us", "UTC"),
                "event": pl.String(),
                "amount": pl.Decimal(38, 18),
            }
        )
    sparse = trace.sparse.select(ROW, "amount", *([CURRENCY] if CURRENCY in trace.columns else []))
    extra = [pl.col(CURRENCY).cast(pl.String)] if CURRENCY in sparse.columns else []
    lines = trace.dense.filter(pl.col("source") == "invoice")
    return lines.join(sparse, on=ROW, how="left", maintain_order="left").select(
        pl.col(ROW),
        run_id_of(trace.run_ids),
        pl.col("alloc_id"),
        pl.col("ts"),
        pl.col("event").cast(pl.String),
        pl.col("amount"),
        *extra,
    )


def set_aside_lines(trace: Trace) -> SetAside | None:
    """The invoice lines of the runs a quarantine set aside (``source`` invoice, or a
    ``charge``/``credit`` event whose source could not be read), counted with their exact
    amount; None when there are none."""
    q = trace.quarantine
    if q is None or q.frame.height == 0:
        return None
    f = q.frame
    is_line = pl.col("source") == "invoice"
    if "event" in f.columns:
        is_line = is_line | pl.col("event").is_in(["charge", "credit"])
    lines = f.filter(is_line.fill_null(False))
    if lines.height == 0:
        return None
    has_amount = "amount" in lines.columns and isinstance(lines.schema["amount"], pl.Decimal)
    amount = exact_column_total(lines, "amount") if has_amount else Decimal(0)
    unreadable = lines.get_column("amount").null_count() if has_amount else lines.height
    runs = lines.get_column("run_id")
    return SetAside(
        runs.drop_nulls().n_unique() + runs.null_count(), lines.height, amount, unreadable
    )


def check_currency(lines: pl.DataFrame, currency: str, contract: str, trace: Trace) -> None:
    """R001 for invoice lines in another currency than the contract's (the first five rows,
    each in its own file, and how many there are)."""
    if CURRENCY not in lines.columns:
        return
    other = lines.filter(
        pl.col(CURRENCY).is_not_null() & (pl.col(CURRENCY).str.strip_chars() != currency)
    )
    if other.height == 0:
        return
    diags: list[Diagnostic] = []
    for row, code in other.select(ROW, CURRENCY).head(5).iter_rows():
        name, local = trace.locate(row)
        diags.append(
            error(
                "R001",
                f"invoice line in `{code}`, but contract `{contract}` bills in {currency}",
                Span.point(local, 0),
                file=name,
                help=f"{other.height:,} invoice line(s) are in another currency; reconcile them "
                "with a contract in that currency",
            )
        )
    raise ContractlangError(diags)
