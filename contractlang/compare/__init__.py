"""``contractlang compare``: drafts side by side over one derivation of the facts, ranked by a
budget's headline, with deltas against a baseline; with attribution, every removable clause's
effect and what it would take for each draft to pass (``docs/compare.md``)::

    from contractlang.compare import compare
    drafts = sorted(Path("rulesets").glob("*.spot"))
    c = compare(drafts, "examples/trace.parquet", attribute_clauses=True)
    c.ranked[0].name, c.ranked[0].to_pass
"""

from __future__ import annotations

from contractlang.compare.model import (
    Attribution,
    ComparedContract,
    Comparison,
    ContractFigures,
    PriceToPass,
    Probe,
    ToPass,
)
from contractlang.compare.run import compare

__all__ = [
    "Attribution",
    "ComparedContract",
    "Comparison",
    "ContractFigures",
    "PriceToPass",
    "Probe",
    "ToPass",
    "compare",
]
