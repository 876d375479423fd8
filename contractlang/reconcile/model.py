"""What a reconciliation finds: one :class:`ReconciledAmount` per thing the contract and the invoice
can disagree on, each with the ledger lines behind its expected amount (:class:`Basis`), the
invoice lines its invoiced amount nets (:class:`Lines`, by kind) and the terms and facts that
decided them (:class:`Reason`), and the totals a finance analyst acts on.

Money is exact ``Decimal`` throughout: expected amounts at the contract's precision (they are
ledger lines), invoiced amounts as the invoice wrote them. Every sum and difference is taken in
:data:`~contractlang.lang.numbers.EXACT` (an invoice amount may have 38 digits; Python's
default context rounds to 28), and ``abs`` and negation as ``copy_abs``/``copy_negate``, which
never round.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal
from typing import Literal

from contractlang.diagnostics import Diagnostic
from contractlang.evaluate.results import ContractResult, Evaluation
from contractlang.lang.numbers import counted, exact_difference, exact_sum
from contractlang.trace.problems import Sources

Status = Literal["matched", "over_billed", "under_billed", "missing", "unexpected"]
STATUSES: tuple[Status, ...] = ("matched", "over_billed", "under_billed", "missing", "unexpected")
Kind = Literal["charge", "credit"]
ReasonKind = Literal["exclusion", "credit", "cap", "charge", "note"]
FactValue = timedelta | Decimal | int | bool | str | None
ZERO = Decimal(0)
#: An invoice line as reconciliation reads it: a ``charge`` of 0 or more, a ``reversal`` (a
#: ``charge`` below 0), an ``adjustment``, a ``positive_credit`` (a ``credit`` above 0 not
#: flagged a correction: a charge under another name), a ``credit`` (0 or less), a
#: ``credit_reversal`` (a ``credit`` above 0 flagged a correction: it takes back an earlier
#: credit) or a ``tax`` line (never compared).
LineKind = Literal[
    "charge", "reversal", "adjustment", "positive_credit", "credit", "credit_reversal", "tax"
]
LINE_KINDS: tuple[LineKind, ...] = (
    "charge",
    "reversal",
    "adjustment",
    "positive_credit",
    "credit",
    "credit_reversal",
    "tax",
)
#: The kinds netted together and compared with the contract's charges.
CHARGE_SIDE: tuple[LineKind, ...] = ("charge", "reversal", "adjustment", "positive_credit")
#: The kinds netted together and compared with the contract's credits after caps.
CREDIT_SIDE: tuple[LineKind, ...] = ("credit", "credit_reversal")


def status_of(expected: Decimal | None, invoiced: Decimal | None, tolerance: Decimal) -> Status:
    """``missing`` when nothing was invoiced, ``unexpected`` when nothing was expected, else
    ``matched`` within the tolerance, ``over_billed`` or ``under_billed``; invoice lines that
    net to exactly 0 where nothing is expected are ``matched``.

    >>> status_of(Decimal("10.00"), Decimal("10.02"), Decimal("0.05"))
    'matched'
    >>> status_of(Decimal("-4.20"), Decimal("-1.00"), ZERO)
    'over_billed'
    >>> status_of(None, Decimal("0.00"), ZERO), status_of(None, Decimal("0.01"), ZERO)
    ('matched', 'unexpected')
    """
    if invoiced is None:
        return "missing"
    if expected is None:
        # lines that net to nothing ask for nothing: a reversal and its re-bill on an invoice
        # of a month the contract bills nothing in
        return "matched" if invoiced == 0 else "unexpected"
    difference = exact_difference(invoiced, expected)
    if difference.copy_abs() <= tolerance:
        return "matched"
    return "over_billed" if difference > 0 else "under_billed"


@dataclass(frozen=True, slots=True)
class Basis:
    """A ledger line behind an expected amount: its kind (``charge``, ``credit``, ``cap``),
    term, source line, allocation and amount."""

    kind: str
    term: str
    line: int | None
    alloc_id: str | None
    amount: Decimal


@dataclass(frozen=True, slots=True)
class Lines:
    """Invoice lines of one kind (:data:`LINE_KINDS`): how many, and their exact sum."""

    kind: LineKind
    count: int
    amount: Decimal

    def words(self, amount: str | None = None) -> str:
        """These lines counted in words, with their ``amount`` as text when it is given.

        >>> Lines("reversal", 1, Decimal("-3.00")).words()
        '1 reversal'
        >>> Lines("positive_credit", 2, Decimal("1.50")).words("1.50 USD")
        '2 credit lines of positive amount (1.50 USD)'
        """
        noun, tail = _NOUNS[self.kind]
        shown = f" ({amount})" if amount is not None else ""
        return f"{counted(self.count, noun)}{tail}{shown}"


#: An invoice line of each kind in words, counted (``2 credit reversals``) and after its count
#: (``… of positive amount``): the reasons of a comparison and the summaries say the same.
_NOUNS: dict[LineKind, tuple[str, str]] = {
    "charge": ("charge line", ""),
    "reversal": ("reversal", ""),
    "adjustment": ("adjustment", ""),
    "positive_credit": ("credit line", " of positive amount"),
    "credit": ("credit line", ""),
    "credit_reversal": ("credit reversal", ""),
    "tax": ("tax line", ""),
}


def net_of(lines: Iterable[Lines], amount: Callable[[Lines], str] | None = None) -> str:
    """What an amount is net of, each kind of line in words (with its amount as ``amount``
    writes it, when given).

    >>> net_of([Lines("reversal", 1, Decimal("-3")), Lines("adjustment", 2, Decimal("1"))])
    'net of 1 reversal and 2 adjustments'
    """
    return "net of " + " and ".join(x.words(amount(x) if amount else None) for x in lines)


def counted_as_charges(lines: Lines, amount: str | None = None) -> str:
    """Credit lines of positive amount, as a charge counts them (``W801``).

    >>> counted_as_charges(Lines("positive_credit", 1, Decimal("0.75")), "0.75 USD")
    '1 credit line of positive amount (0.75 USD) counted as a charge'
    """
    return f"{lines.words(amount)} counted as {'a charge' if lines.count == 1 else 'charges'}"


@dataclass(frozen=True, slots=True)
class Reason:
    """Why the contract expects what it does: a term that applied (an exclusion, a credit, a
    cap, the rate that priced a charge) or a note (``unattributed``, ``nothing billable``), the
    condition as written, and the facts it read with their values for this allocation."""

    kind: ReasonKind
    term: str
    line: int | None
    alloc_id: str | None
    condition: str | None = None
    facts: tuple[tuple[str, FactValue], ...] = ()
    gpu_hours: Decimal | None = None  # exclusions: the GPU-hours not charged


@dataclass(frozen=True)
class ReconciledAmount:
    """One expected amount beside what was invoiced for it.

    - ``kind == "charge"`` with an ``alloc_id``: the allocation's charge line against the invoice
      lines of the charge side (:data:`CHARGE_SIDE`) carrying that ``alloc_id``, net;
    - ``kind == "charge"`` without one: the run's charges of ``month`` (of the allocations with
      no invoice line of their own) against the run-level invoice lines of the charge side of
      that month (the month of their invoice), net;
    - ``kind == "credit"``: the run's credits after caps against its invoice credit lines of 0
      or less.

    ``expected`` is None when the contract expects nothing, ``invoiced`` when nothing was
    invoiced; ``difference`` counts a None as 0. ``invoiced_lines`` are the invoiced amount's
    parts, by kind (in :data:`LINE_KINDS` order); ``invoice_rows`` the trace rows of the
    invoice lines (over several files, numbered on from one to the next:
    :attr:`Reconciliation.sources` says which file and row each is)."""

    run_id: str
    alloc_id: str | None
    kind: Kind
    month: str | None
    status: Status
    expected: Decimal | None
    invoiced: Decimal | None
    basis: tuple[Basis, ...] = ()
    reasons: tuple[Reason, ...] = ()
    invoice_rows: tuple[int, ...] = ()
    invoiced_lines: tuple[Lines, ...] = ()

    @property
    def difference(self) -> Decimal:
        return exact_difference(self.invoiced or ZERO, self.expected or ZERO)

    @property
    def term(self) -> str | None:
        """The terms behind the expected amount, in ledger order, each once."""
        seen: list[str] = []
        for b in self.basis:
            if b.term not in seen:
                seen.append(b.term)
        return "; ".join(seen) if seen else None

    @property
    def line(self) -> int | None:
        return next((b.line for b in self.basis if b.line is not None), None)


@dataclass(frozen=True, slots=True)
class StatusTotal:
    """How many comparisons have a status, and their amount: Σ |invoiced − expected| for
    matched, over- and under-billed; Σ |expected| for missing; Σ |invoiced| for unexpected."""

    count: int
    amount: Decimal


@dataclass(frozen=True, slots=True)
class MonthTotal:
    """A billing month: what the contract expects and what was invoiced, and how much of the
    difference is over-billed and under-billed (discrepancies beyond the tolerance only)."""

    month: str
    expected: Decimal
    invoiced: Decimal
    over_billed: Decimal
    under_billed: Decimal


@dataclass(frozen=True)
class ContractReconciliation:
    """The invoice lines of a trace reconciled with one contract's ledger; ``invoice``: the
    trace's invoice lines by kind (every kind of :data:`LINE_KINDS`, tax lines among them)."""

    contract: ContractResult
    lines: tuple[ReconciledAmount, ...]
    tolerance: Decimal
    invoice: tuple[Lines, ...] = ()

    @property
    def name(self) -> str:
        return self.contract.name

    def is_discrepancy(self, c: ReconciledAmount) -> bool:
        return c.difference.copy_abs() > self.tolerance

    @property
    def discrepancies(self) -> tuple[ReconciledAmount, ...]:
        return tuple(c for c in self.lines if self.is_discrepancy(c))

    def summary(self) -> dict[Status, StatusTotal]:
        out: dict[Status, StatusTotal] = {}
        for s in STATUSES:
            lines = [c for c in self.lines if c.status == s]
            if s == "missing":
                amount = exact_sum((c.expected or ZERO).copy_abs() for c in lines)
            elif s == "unexpected":
                amount = exact_sum((c.invoiced or ZERO).copy_abs() for c in lines)
            else:
                amount = exact_sum(c.difference.copy_abs() for c in lines)
            out[s] = StatusTotal(len(lines), amount)
        return out

    def months(self) -> tuple[MonthTotal, ...]:
        by: dict[str, list[ReconciledAmount]] = {}
        for c in self.lines:
            by.setdefault(c.month or "", []).append(c)
        return tuple(self._total(m, by[m]) for m in sorted(by))

    def total(self) -> MonthTotal:
        """Every month together (``month`` is ``total``)."""
        return self._total("total", list(self.lines))

    def _total(self, month: str, lines: list[ReconciledAmount]) -> MonthTotal:
        off = [c.difference for c in lines if self.is_discrepancy(c)]
        return MonthTotal(
            month=month,
            expected=exact_sum(c.expected or ZERO for c in lines),
            invoiced=exact_sum(c.invoiced or ZERO for c in lines),
            over_billed=exact_sum(d for d in off if d > 0),
            under_billed=exact_sum(d.copy_negate() for d in off if d < 0),
        )

    def invoice_lines(self, kind: LineKind) -> Lines:
        """The trace's invoice lines of one kind (``tax``: reported, never compared)."""
        return next((x for x in self.invoice if x.kind == kind), Lines(kind, 0, ZERO))

    def credits(self) -> tuple[Decimal, Decimal]:
        """The credits the contract's own terms give (after caps) and the credits invoiced
        (the credit lines of 0 or less, net of the credit reversals: a credit line of positive
        amount not flagged a correction is a charge)."""
        lines = [c for c in self.lines if c.kind == "credit"]
        due = exact_sum(c.expected or ZERO for c in lines)
        given = exact_sum(c.invoiced or ZERO for c in lines)
        return due, given

    def claims(self) -> tuple[Decimal, Decimal]:
        """The dispute letter's two claims, discrepancies beyond the tolerance only: charges
        invoiced beyond what the terms give (net of reversals and adjustments, a credit line
        of positive amount among them), and credits the terms give that the invoice does not
        (the credit owed by the contract's own terms); both ≥ 0. Each run's discrepancies are
        netted first (:meth:`_netted`): what one invoice billed beyond the terms and a later
        one took back is not claimed."""
        netted = self._netted()
        charges = exact_sum(d for (kind, _), d in netted.items() if kind == "charge" and d > 0)
        credits = exact_sum(d for (kind, _), d in netted.items() if kind == "credit" and d > 0)
        return charges, credits

    def owed_to_provider(self) -> Decimal:
        """What the invoice billed short of the terms (≥ 0), netted as :meth:`claims` nets."""
        return exact_sum(d.copy_negate() for d in self._netted().values() if d < 0)

    def _netted(self) -> dict[tuple[Kind, str], Decimal]:
        """The discrepancies beyond the tolerance summed by kind and run: a run's charges are
        one sum over its allocations and months — each invoice line is dated to the invoice
        it sits on, so a charge billed late, or billed 100.00 over in March and taken back in
        April, shows on both invoices and nets to nothing — and so are its credits."""
        out: dict[tuple[Kind, str], Decimal] = {}
        for c in self.discrepancies:
            key = (c.kind, c.run_id)
            out[key] = exact_sum((out.get(key, ZERO), c.difference))
        return out

    def largest(self, n: int = 5) -> tuple[ReconciledAmount, ...]:
        """The ``n`` largest discrepancies, by |difference| (then run, allocation, kind)."""
        ranked = sorted(
            self.discrepancies,
            key=lambda c: (
                c.difference.copy_abs().copy_negate(),
                c.run_id,
                c.alloc_id or "",
                c.kind,
            ),
        )
        return tuple(ranked[:n])


@dataclass(frozen=True, slots=True)
class SetAside:
    """The invoice lines of the runs a quarantine set aside (``--on-invalid quarantine``):
    not reconciled, so counted here — how many, of how many runs, and their amount (the
    lines whose amount could not be read are ``unreadable``, not in ``amount``)."""

    runs: int
    lines: int
    amount: Decimal
    unreadable: int = 0


@dataclass(frozen=True)
class Reconciliation:
    """Every contract of the terms reconciled with the trace's invoice lines."""

    contracts: tuple[ContractReconciliation, ...]
    evaluation: Evaluation
    invoice_lines: int
    tolerance: Decimal
    #: the invoice lines left out with the runs a quarantine set aside, if there are any
    set_aside: SetAside | None = None
    #: what the invoice lines give warning of (W801: a credit line of positive amount)
    warnings: tuple[Diagnostic, ...] = ()

    @property
    def sources(self) -> Sources:
        """The trace's files: :attr:`ReconciledAmount.invoice_rows` are rows of them all, numbered
        on from one file to the next (``sources.locate(row)`` gives the file and its row)."""
        return self.evaluation.trace.files

    @property
    def has_discrepancy(self) -> bool:
        """Some difference exceeds the tolerance."""
        return any(c.discrepancies for c in self.contracts)

    @property
    def checks_out(self) -> bool:
        """No discrepancy beyond the tolerance, and every invoice line reconciled (none set
        aside with a quarantined run): the command exits 0, else 1."""
        return not self.has_discrepancy and self.set_aside is None
