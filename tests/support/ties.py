"""Drafts that tie, for the tests that a ranking keeps tied drafts in the order given
(`compare`'s, `simulate`'s): one run of 100 GPU-hours, and four drafts — three that bill it
exactly alike and `cheap`, which bills it for less — named in neither order alphabetically,
so a sort by name breaks a tie in both orders; a reversed tie-breaker or a sort that does not
keep the order given breaks it in one at least. Each test file writes its own drafts (their
arithmetic beside them) and budgets.

    text = tied_terms(CONTRACTS, REVERSED, budget)   # the drafts in that order, then the budget
    ranks(expected_order(GIVEN))                     # {"cheap": 1, "zeta": 2, …}
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from support.scenario import accepted, released, started

# 10 GPUs for 10 hours, released, accepted: 10 × 10 = 100 GPU-hours in one run.
HUNDRED_GPU_HOURS = [
    started("r1", "a1", 0, gpus=10),
    released("r1", "a1", 600),
    accepted("r1", 601),
]
# The same run, never accepted: its cost per accepted run is none under every draft.
NEVER_ACCEPTED = HUNDRED_GPU_HOURS[:2]

#: The drafts in the order given, and reversed; `cheap` is the one that does not tie.
GIVEN = ("zeta", "alpha", "cheap", "mid")
REVERSED = tuple(reversed(GIVEN))


def tied_terms(contracts: Mapping[str, str], order: Sequence[str], budget: str | None) -> str:
    """The drafts' text in ``order``, then the budget's, if any."""
    return "\n".join(contracts[name] for name in order) + ("\n" + budget if budget else "")


def expected_order(order: Sequence[str], all_tie: bool = False) -> list[str]:
    """`cheap` first, then the three tied drafts in the order given; when no draft has a
    figure to rank by, every draft ties and all keep the order given."""
    if all_tie:
        return list(order)
    return ["cheap", *(name for name in order if name != "cheap")]


def ranks(order: Sequence[str]) -> dict[str, int]:
    """Each draft's rank in ``order``, from 1."""
    return {name: k for k, name in enumerate(order, start=1)}


def write_drafts(folder: Path, contracts: Mapping[str, str], budgets: Mapping[str, str]) -> None:
    """Each draft in its own file (``NAME.spot``), each budget in its own (``budgetK.spot``,
    ``K`` from 0 in the order of ``budgets``)."""
    for name, text in contracts.items():
        (folder / f"{name}.spot").write_text(text, encoding="utf-8")
    for k, text in enumerate(budgets.values()):
        (folder / f"budget{k}.spot").write_text(text, encoding="utf-8")
