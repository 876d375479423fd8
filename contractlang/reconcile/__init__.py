"""Reconciliation: the bill a contract implies beside the invoice lines in the trace
(``docs/reconcile.md``).

    >>> from decimal import Decimal
    >>> from contractlang import generate_trace, terms_from_text
    >>> terms = terms_from_text('contract "c" { currency USD rate 2 USD per gpu_hour }')
    >>> r = reconcile(terms, generate_trace(3, seed=1), tolerance=Decimal("0.01"))
    >>> sorted(r.contracts[0].summary())
    ['matched', 'missing', 'over_billed', 'under_billed', 'unexpected']

:func:`reconcile` evaluates every contract (:mod:`contractlang.pipeline`), reads the trace's
invoice lines (:mod:`~contractlang.reconcile.invoice`), compares them with each contract's
ledger (:mod:`~contractlang.reconcile.amounts`) and returns a
:class:`~contractlang.reconcile.model.Reconciliation`.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from decimal import Decimal

from contractlang.evaluate.engine import Progress
from contractlang.pipeline.evaluation import EvaluateOptions, TermsLike, TraceLike, evaluate
from contractlang.reconcile.amounts import invoice_totals, reconciled_amounts
from contractlang.reconcile.invoice import (
    check_currency,
    invoice_lines,
    positive_credit_warnings,
    set_aside_lines,
)
from contractlang.reconcile.model import (
    LINE_KINDS,
    STATUSES,
    ContractReconciliation,
    Lines,
    MonthTotal,
    Reason,
    ReconciledAmount,
    Reconciliation,
    SetAside,
    Status,
    StatusTotal,
)
from contractlang.trace.load import DEFAULT_CLOCK_SKEW, load_trace
from contractlang.trace.model import Trace

__all__ = [
    "LINE_KINDS",
    "STATUSES",
    "ContractReconciliation",
    "Lines",
    "MonthTotal",
    "Reason",
    "ReconciledAmount",
    "Reconciliation",
    "SetAside",
    "Status",
    "StatusTotal",
    "reconcile",
]


def reconcile(
    terms: TermsLike,
    trace: TraceLike,
    *,
    tolerance: Decimal = Decimal(0),
    open_at: datetime | None = None,
    progress: Progress | None = None,
    contracts: Sequence[str] | None = None,
    clock_skew: timedelta = DEFAULT_CLOCK_SKEW,
    quarantine: bool = False,
) -> Reconciliation:
    """Evaluate ``terms`` on ``trace`` (one source, or several read as one) and compare every
    contract's ledger with the trace's invoice lines; a difference of at most ``tolerance``
    (≥ 0) is ``matched``. ``open_at``, ``clock_skew`` and ``quarantine`` are read as
    :func:`~contractlang.trace.load_trace` reads them; the runs a quarantine sets aside, their
    invoice lines with them, are not reconciled: those lines are counted, with their amount,
    in ``Reconciliation.set_aside``.

    Invoice lines are compared net (``docs/reconcile.md``): a run's or an allocation's charges
    with their reversals, adjustments and credit lines of positive amount (each of those a
    ``W801`` warning, in ``Reconciliation.warnings``); ``tax`` lines are counted, never
    compared.

    Raises :class:`~contractlang.errors.ContractlangError` on bad terms, a bad trace, invoice
    lines in another currency than a contract's (``R001``) or a billing period start that
    cannot be read (``R002``)."""
    if tolerance < 0:
        raise ValueError("the tolerance cannot be negative")
    step = progress or (lambda _msg: None)
    step("loading trace")
    tr = (
        trace
        if isinstance(trace, Trace)
        else load_trace(trace, open_at=open_at, clock_skew=clock_skew, quarantine=quarantine)
    )
    result = evaluate(terms, tr, EvaluateOptions(contracts=contracts), progress=step)
    step("reconciling")
    lines = invoice_lines(tr)
    for c in result.contracts:
        check_currency(lines, c.settings.currency, c.name, tr)
    totals = invoice_totals(lines)
    recs = tuple(
        ContractReconciliation(c, reconciled_amounts(c, lines, tolerance), tolerance, totals)
        for c in result.contracts
    )
    warnings = tuple(positive_credit_warnings(lines, tr))
    return Reconciliation(recs, result, lines.height, tolerance, set_aside_lines(tr), warnings)
