"""Terms: `.spot` files that parsed and checked without error, with their sources.

:func:`contractlang.pipeline.load_terms` makes them; evaluation reads them. Nothing with an
error in it is ever a :class:`Terms`, so every pass after the checker may rely on checked
input. Warnings travel with them.
"""

from __future__ import annotations

from dataclasses import dataclass

from contractlang.diagnostics import Diagnostic, Source
from contractlang.lang.ast import Budget, Contract, SpotFile


@dataclass(frozen=True)
class Terms:
    """Checked terms: the files in the order given, their sources by file name, and the
    checker's warnings (there are no errors, or this would not exist)."""

    files: tuple[SpotFile, ...]
    sources: dict[str, Source]
    warnings: tuple[Diagnostic, ...] = ()

    @property
    def contracts(self) -> tuple[Contract, ...]:
        """Every contract, in file order."""
        return tuple(c for f in self.files for c in f.contracts)

    @property
    def budgets(self) -> tuple[Budget, ...]:
        """Every budget, in file order."""
        return tuple(b for f in self.files for b in f.budgets)

    def file_of(self, item: Contract | Budget) -> str:
        """The name of the file that defines ``item``."""
        found = self._file(item)
        return found.name if found is not None else "<input>"

    def source_of(self, item: Contract | Budget) -> str | None:
        """The text of the file that defines ``item``, if known."""
        found = self._file(item)
        src = self.sources.get(found.name) if found is not None else None
        return src.text if src else None

    def _file(self, item: Contract | Budget) -> SpotFile | None:
        return next((f for f in self.files if any(i is item for i in f.items)), None)
