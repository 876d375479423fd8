"""Which rehearsals to run: drafts whose promises (after the flags) are the same share one.

Each rehearsal keeps its notice lead and replacement wait with where they came from: the
contract's promise, the flag, or, without either, none (no notice; no wait).

>>> from contractlang.pipeline.language import terms_from_text
>>> t = terms_from_text('''
... contract "a" { currency USD rate 1 USD per gpu_hour promise reclaim notice 30 seconds }
... contract "b" { currency USD rate 2 USD per gpu_hour promise reclaim notice 30 seconds }
... contract "c" { currency USD rate 1 USD per gpu_hour }''')
>>> [p.contracts for p in plan_rehearsals(t, None, None)]
[('a', 'b'), ('c',)]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from contractlang.evaluate.settings import read_settings
from contractlang.lang.terms import Terms

Origin = Literal["promise", "flag", "none"]


@dataclass(frozen=True)
class Timing:
    """A duration the scheduler keeps (µs), and where it came from."""

    us: int
    origin: Origin


@dataclass(frozen=True)
class RehearsalPlan:
    """One rehearsal: the drafts it prices, its notice lead and its replacement wait."""

    contracts: tuple[str, ...]
    notice: Timing
    replacement_wait: Timing

    @property
    def key(self) -> tuple[int, int]:
        return (self.notice.us, self.replacement_wait.us)


def _timing(flag_us: int | None, promised_us: int | None) -> Timing:
    if flag_us is not None:
        return Timing(flag_us, "flag")
    if promised_us is not None:
        return Timing(promised_us, "promise")
    return Timing(0, "none")


def plan_rehearsals(
    terms: Terms, notice_us: int | None, replacement_wait_us: int | None
) -> tuple[RehearsalPlan, ...]:
    """One plan per distinct (notice lead, replacement wait), in the order of the drafts."""
    groups: dict[tuple[int, int], list[str]] = {}
    timings: dict[tuple[int, int], tuple[Timing, Timing]] = {}
    for contract in terms.contracts:
        promises = read_settings(contract).promises_us
        notice = _timing(notice_us, promises.get("notice"))
        wait = _timing(replacement_wait_us, promises.get("restart"))
        key = (notice.us, wait.us)
        groups.setdefault(key, []).append(contract.name)
        timings.setdefault(key, (notice, wait))
    return tuple(RehearsalPlan(tuple(names), *timings[key]) for key, names in groups.items())
