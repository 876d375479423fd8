"""What a contract's clauses become in evaluation: terms, each with the column that holds its
amount for every allocation (or run), so the ledger, the run sums and ``explain`` read the same
numbers."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from contractlang.lang import ast
from contractlang.lang.show import source_text
from contractlang.lang.vocabulary import CapLevel

TermKind = Literal["charge", "exclusion", "credit", "cap"]


@dataclass(frozen=True)
class Term:
    """A clause that produces ledger lines, and the column that holds its per-row amount
    (minor units for money terms, microseconds for duration exclusions)."""

    kind: TermKind
    label: str  # the exclusion/credit name, or the clause as written for rates and caps
    line: int | None
    column: str
    index: int = 0
    clause: ast.Clause | None = field(default=None, compare=False)


@dataclass(frozen=True)
class AllocationPlan:
    """The terms of a contract at allocation level, in evaluation order."""

    whole_exclusions: tuple[Term, ...]
    duration_exclusions: tuple[Term, ...]
    rates: tuple[Term, ...]
    credits: tuple[Term, ...]
    caps: tuple[Term, ...] = ()


@dataclass(frozen=True)
class CapCut:
    """A cap that acts above the allocation, and the column of per-run cuts it made."""

    level: CapLevel
    label: str
    line: int | None
    column: str
    clause: ast.Cap | None


def term_label(clause: ast.Clause, text: str | None) -> str:
    """How the ledger names a clause: an exclusion's or credit's name, else the clause as
    written (``rate 2.10 USD per gpu_hour when capacity == spot``)."""
    match clause:
        case ast.ExcludeAllocation(name=n) | ast.ExcludeDuration(name=n) | ast.Credit(name=n):
            return n
    written = source_text(clause.span, text)
    return written if written else type(clause).__name__.lower()
