"""What ``rehearse`` returns: each rehearsal's record, its trace and its evaluation, and the
drafts in the order of the terms. Renderers read these and nothing else."""

from __future__ import annotations

from dataclasses import dataclass, field

import polars as pl

from contractlang.diagnostics import Diagnostic, Source
from contractlang.evaluate.results import ContractResult, Evaluation
from contractlang.lang import ast
from contractlang.rehearse.record import Record
from contractlang.rehearse.settings import RehearsalSettings


@dataclass(frozen=True)
class Rehearsal:
    """One rehearsal: what happened, as a trace, evaluated under the drafts it prices."""

    record: Record
    trace: pl.DataFrame
    evaluation: Evaluation

    @property
    def contracts(self) -> tuple[ContractResult, ...]:
        return self.evaluation.contracts


@dataclass(frozen=True)
class RehearsalReport:
    """Every rehearsal of one ``contractlang rehearse``."""

    settings: RehearsalSettings
    rehearsals: tuple[Rehearsal, ...]
    budgets: tuple[ast.Budget, ...]
    order: tuple[str, ...]  # the drafts, in the order of the terms
    warnings: tuple[Diagnostic, ...] = ()  # of the terms
    sources: dict[str, Source] = field(default_factory=dict, repr=False)

    @property
    def verdict(self) -> str:
        """``met`` (every budget met under every draft), ``not met``, or ``no budget``."""
        if not self.budgets:
            return "no budget"
        met = all(c.budgets_met for r in self.rehearsals for c in r.contracts)
        return "met" if met else "not met"

    def drafts(self) -> list[tuple[ContractResult, Rehearsal]]:
        """Each draft's result with the rehearsal that priced it, in the terms' order."""
        found = {c.name: (c, r) for r in self.rehearsals for c in r.contracts}
        return [found[name] for name in self.order]

    def ledger(self) -> pl.DataFrame:
        return pl.concat([c.ledger() for c, _ in self.drafts()], how="vertical_relaxed")

    def runs_table(self) -> pl.DataFrame:
        return pl.concat([c.runs_table() for c, _ in self.drafts()], how="vertical_relaxed")
