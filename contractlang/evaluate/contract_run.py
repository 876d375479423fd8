"""One contract as every stage of its evaluation reads it: the contract, its settings and caps,
its file and source text, the arithmetic its decimals take — made once per contract
(:meth:`ContractRun.of`) and passed to each stage, never read from ambient state. A variant
(``compare``'s) is the same with a field changed.

Example::

    >>> from contractlang import terms_from_text
    >>> terms = terms_from_text('''contract "c" { currency EUR rate 2 EUR per gpu_hour
    ...   cap credits at 5 EUR per run }''')
    >>> run = ContractRun.of(terms.contracts[0], "c.spot", None)
    >>> run.settings.currency, [label for _, label in run.caps["run"]], len(run.clauses.rates)
    ('EUR', ['cap'], 1)
    >>> run.arithmetic
    'quick'
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from fractions import Fraction

from contractlang.decimals import Arithmetic
from contractlang.evaluate.caps import Caps, caps_by_level
from contractlang.evaluate.plan import term_label
from contractlang.evaluate.settings import Settings, read_settings
from contractlang.lang import ast


@dataclass(frozen=True)
class ContractClauses:
    """A contract's allocation-level clauses by kind, in file order, with its source text (for
    the ledger's labels)."""

    whole: tuple[ast.ExcludeAllocation, ...]
    durations: tuple[ast.ExcludeDuration, ...]
    rates: tuple[ast.Rate, ...]
    credits: tuple[ast.Credit, ...]
    source_text: str | None

    @classmethod
    def of(cls, contract: ast.Contract, source_text: str | None) -> ContractClauses:
        cs = contract.clauses
        return cls(
            tuple(c for c in cs if isinstance(c, ast.ExcludeAllocation)),
            tuple(c for c in cs if isinstance(c, ast.ExcludeDuration)),
            tuple(c for c in cs if isinstance(c, ast.Rate)),
            tuple(c for c in cs if isinstance(c, ast.Credit)),
            source_text,
        )

    def label(self, clause: ast.Clause) -> str:
        return term_label(clause, self.source_text)


@dataclass(frozen=True)
class ContractRun:
    """A contract, what its clauses say (its settings, its caps by level), where it was
    written (its file, for diagnostics; its source text, for the ledger's labels), how its
    decimals are computed, and what a variant changes (a price multiplier; which credits
    and allocations are in view)."""

    contract: ast.Contract
    settings: Settings
    caps: Caps
    file: str
    source_text: str | None
    #: how the stages apply a factor (:data:`~contractlang.decimals.Arithmetic`): quick, and
    #: careful where the quick way overflows (the engine's ``run_stages`` runs them again so)
    arithmetic: Arithmetic = "quick"
    #: every rate's price × this (``compare``'s price search): the rates chosen at 1 stand
    multiplier: Fraction | None = None
    #: the decimal places the picked prices need, with a multiplier (``compare`` finds them)
    price_places: int | None = None
    #: the credits that can apply to the allocations, when not all: the others' lines are
    #: none there, not computed (the price search's allocations a credit can reach)
    credits_reaching: frozenset[int] | None = None
    #: the allocations are one shard's: E401 and W401, which read every allocation, are the
    #: global step's
    shard: bool = False

    @classmethod
    def of(cls, contract: ast.Contract, file: str, source_text: str | None) -> ContractRun:
        """``contract`` as written in ``file`` (whose text is ``source_text``)."""
        caps = caps_by_level(contract, source_text)
        return cls(contract, read_settings(contract), caps, file, source_text)

    @functools.cached_property
    def clauses(self) -> ContractClauses:
        """The allocation-level clauses of :attr:`contract`."""
        return ContractClauses.of(self.contract, self.source_text)
