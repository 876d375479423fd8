"""The invoice lines of a trace (``source == invoice``: ``charge``, ``credit``, ``adjustment``
and ``tax`` events), as reconciliation reads them: each of a kind
(:data:`~contractlang.reconcile.model.LINE_KINDS`: a negative charge is a reversal, a positive
credit a charge under another name), with its invoice's billing period start when the trace
has one (a ``billing_period_start`` column, as ``import focus`` writes it; ``R002`` when it
cannot be read); the check that they are in the contract's currency (``R001``) when the trace
says which currency they are in (a ``billing_currency`` column); and the warning for each
credit line of positive amount (``W801``)."""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal

import polars as pl

from contractlang.diagnostics import Diagnostic, Span, error, warning
from contractlang.errors import ContractlangError
from contractlang.lang.frames import TIMESTAMP
from contractlang.lang.numbers import EXACT, counted
from contractlang.reconcile.model import SetAside
from contractlang.trace.columns import describe
from contractlang.trace.model import Trace, run_id_of
from contractlang.trace.schema import INVOICE_EVENTS, ROW
from contractlang.trace.sums import exact_column_total

CURRENCY = "billing_currency"
#: The start of the billing period of the invoice a line sits on (FOCUS ``BillingPeriodStart``).
PERIOD_START = "billing_period_start"
#: Whether a line corrects an earlier one (FOCUS ``ChargeClass`` ``Correction``).
CORRECTION = "correction"
#: The columns of :func:`invoice_lines` (then ``billing_currency`` and ``billing_period_start``
#: when the trace has them).
COLUMNS = (ROW, "run_id", "alloc_id", "ts", "event", "amount", "kind")
#: The most rows a message lists; the help counts them all.
_SHOWN = 5


def _kind(correction: pl.Expr) -> pl.Expr:
    """The line's kind: a negative ``charge`` is a ``reversal``; a positive ``credit`` flagged
    a correction (FOCUS ``ChargeClass`` ``Correction``: ``correction`` true) a
    ``credit_reversal``, any other positive ``credit`` a ``positive_credit``; ``adjustment``
    and ``tax`` are their own."""
    event, amount = pl.col("event").cast(pl.String), pl.col("amount")
    return (
        pl.when(event == "charge")
        .then(pl.when(amount < 0).then(pl.lit("reversal")).otherwise(pl.lit("charge")))
        .when(event == "credit")
        .then(
            pl.when((amount > 0) & correction.fill_null(False))
            .then(pl.lit("credit_reversal"))
            .when(amount > 0)
            .then(pl.lit("positive_credit"))
            .otherwise(pl.lit("credit"))
        )
        .otherwise(event)
        .alias("kind")
    )


def _is_correction(dtype: pl.DataType) -> pl.Expr:
    """Whether a line's ``correction`` says it corrects an earlier one: a Boolean, or its text
    (``true``, in any case) as a CSV trace holds it."""
    col = pl.col(CORRECTION)
    if dtype == pl.Boolean:
        return col
    if dtype == pl.String:
        return col.str.strip_chars().str.to_lowercase() == "true"
    return pl.lit(False)


def invoice_lines(trace: Trace) -> pl.DataFrame:
    """One row per invoice line: its trace row, run, allocation (null for run-level lines),
    time (its charge period), event, amount, kind, and its currency and its invoice's billing
    period start (UTC) when the trace has them.

    Raises :class:`~contractlang.errors.ContractlangError` (``R002``) for a billing period
    start that is not a time with a zone."""
    if "amount" not in trace.columns:
        return pl.DataFrame(
            schema={
                ROW: pl.Int64(),
                "run_id": pl.String(),
                "alloc_id": pl.String(),
                "ts": TIMESTAMP,
                "event": pl.String(),
                "amount": pl.Decimal(38, 18),
                "kind": pl.String(),
            }
        )
    extras = [c for c in (CURRENCY, PERIOD_START) if c in trace.columns]
    flagged = CORRECTION in trace.sparse.columns
    sparse = trace.sparse.select(ROW, "amount", *extras, *([CORRECTION] if flagged else []))
    lines = trace.dense.filter(pl.col("source") == "invoice")
    out = lines.join(sparse, on=ROW, how="left", maintain_order="left").select(
        pl.col(ROW),
        run_id_of(trace.run_ids),
        pl.col("alloc_id"),
        pl.col("ts"),
        pl.col("event").cast(pl.String),
        pl.col("amount"),
        _kind(_is_correction(sparse.schema[CORRECTION]) if flagged else pl.lit(False)),
        *([pl.col(CURRENCY).cast(pl.String)] if CURRENCY in extras else []),
        *([pl.col(PERIOD_START)] if PERIOD_START in extras else []),
    )
    return _period_starts(out, trace) if PERIOD_START in extras else out


def _period_starts(lines: pl.DataFrame, trace: Trace) -> pl.DataFrame:
    """``billing_period_start`` as UTC times: timestamps with a zone, or ISO 8601 text with an
    offset (as ``ts`` is read); R002 for anything else on an invoice line."""
    col, dtype = pl.col(PERIOD_START), lines.schema[PERIOD_START]
    if lines.get_column(PERIOD_START).null_count() == lines.height:
        return lines.with_columns(pl.lit(None, dtype=TIMESTAMP).alias(PERIOD_START))
    if isinstance(dtype, pl.Datetime) and dtype.time_zone is not None:
        return lines.with_columns(col.dt.convert_time_zone("UTC").dt.cast_time_unit("us"))
    if dtype != pl.String:
        message = (
            f"`{PERIOD_START}` holds timestamps without a time zone"
            if isinstance(dtype, pl.Datetime)
            else f"`{PERIOD_START}` holds {describe(dtype)}, not times with a time zone"
        )
        rows = lines.filter(col.is_not_null()).get_column(ROW).to_list()
        raise _unreadable(rows, [message] * min(len(rows), _SHOWN), trace)
    text = col.str.strip_chars()
    iso = text.str.replace(r"^(\d{4}-\d{2}-\d{2}) ", "${1}T").str.replace(r"[Zz]$", "+00:00")
    parsed = iso.str.to_datetime(
        "%Y-%m-%dT%H:%M:%S%.f%z", time_unit="us", time_zone="UTC", strict=False
    )
    read = lines.with_columns(
        pl.when(text.str.len_bytes() > 0).then(parsed).alias("_start"), text.alias("_text")
    )
    bad = read.filter((pl.col("_text").str.len_bytes() > 0) & pl.col("_start").is_null())
    if bad.height:
        raise _unreadable(
            bad.get_column(ROW).to_list(),
            [
                f"billing period start `{t}` is not an ISO 8601 time with an offset"
                for t in bad.get_column("_text").head(_SHOWN).to_list()
            ],
            trace,
        )
    return read.with_columns(pl.col("_start").alias(PERIOD_START)).drop("_start", "_text")


def _unreadable(rows: Sequence[int], messages: Sequence[str], trace: Trace) -> ContractlangError:
    """R002 at the first rows (each in its own file), with how many there are."""
    diags: list[Diagnostic] = []
    for row, message in zip(rows[:_SHOWN], messages, strict=False):
        name, local = trace.locate(row)
        diags.append(
            error(
                "R002",
                message,
                Span.point(local, 0),
                file=name,
                help=f"{counted(len(rows), 'invoice line')} with a billing period start that "
                "cannot be read; write it like `2025-04-01T00:00:00Z` (a line's month is its "
                "invoice's)",
            )
        )
    return ContractlangError(diags)


def set_aside_lines(trace: Trace) -> SetAside | None:
    """The invoice lines of the runs a quarantine set aside (``source`` invoice, or an invoice
    event whose source could not be read), counted with their exact amount; None when there
    are none."""
    q = trace.quarantine
    if q is None or q.frame.height == 0:
        return None
    f = q.frame
    is_line = pl.col("source") == "invoice"
    if "event" in f.columns:
        is_line = is_line | pl.col("event").is_in(sorted(INVOICE_EVENTS))
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
    for row, code in other.select(ROW, CURRENCY).head(_SHOWN).iter_rows():
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


def amount_text(d: Decimal) -> str:
    """An invoice amount as written, with at least two places (never rounded).

    >>> amount_text(Decimal("5.000000000000000000")), amount_text(Decimal("0.125"))
    ('5.00', '0.125')
    """
    n = d.normalize(EXACT)
    exponent = n.as_tuple().exponent
    if isinstance(exponent, int) and exponent > -2:
        n = n.quantize(Decimal("0.01"), context=EXACT)
    return f"{n:f}"


def positive_credit_warnings(lines: pl.DataFrame, trace: Trace) -> list[Diagnostic]:
    """W801 for the credit lines of positive amount (the first five rows, each in its own
    file, and how many there are): a charge under another name, counted with the charges."""
    found = lines.filter(pl.col("kind") == "positive_credit")
    out: list[Diagnostic] = []
    for row, amount in found.select(ROW, "amount").head(_SHOWN).iter_rows():
        name, local = trace.locate(row)
        out.append(
            warning(
                "W801",
                f"credit line of positive amount `{amount_text(amount)}`: counted with the "
                "charges, not as a credit",
                Span.point(local, 0),
                file=name,
                help=f"{counted(found.height, 'credit line')} of positive amount; a credit "
                "lowers a bill, so reconcile counts a positive one as a charge beyond the terms",
            )
        )
    return out
