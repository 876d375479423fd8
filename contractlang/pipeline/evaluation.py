"""The evaluation half of the pipeline: terms and a trace → facts → every contract evaluated.

    load terms (:mod:`~contractlang.pipeline.language`) → load the trace (read, normalise,
    validate: :mod:`contractlang.trace`) → derive the facts once → evaluate each contract
    (:mod:`contractlang.evaluate`)

Example::

    >>> from contractlang import generate_trace, terms_from_text
    >>> terms = terms_from_text('contract "c" { currency USD rate 2 USD per gpu_hour }')
    >>> evaluate(terms, generate_trace(3, seed=1)).verdict
    'no budget'
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from pathlib import Path

import polars as pl

from contractlang.evaluate.engine import Progress, evaluate_facts
from contractlang.evaluate.results import Evaluation
from contractlang.evaluate.trace_checks import check_chosen
from contractlang.lang.terms import Terms
from contractlang.pipeline.language import load_terms
from contractlang.trace.derive import Facts, derive_facts
from contractlang.trace.load import DEFAULT_CLOCK_SKEW, load_trace
from contractlang.trace.model import Trace

__all__ = ["TermsLike", "TraceLike", "evaluate", "load_inputs"]

TermsLike = Terms | str | Path | Sequence[str | Path]
TraceLike = Trace | str | Path | pl.DataFrame | pl.LazyFrame | Sequence[str | Path]


def evaluate(
    terms: TermsLike,
    trace: TraceLike,
    *,
    open_at: datetime | None = None,
    progress: Progress | None = None,
    contracts: Sequence[str] | None = None,
    clock_skew: timedelta = DEFAULT_CLOCK_SKEW,
    quarantine: bool = False,
) -> Evaluation:
    """Apply every contract in ``terms`` to ``trace`` and measure every budget.

    Raises :class:`~contractlang.errors.ContractlangError` on bad terms or a bad trace (exit
    code 2).
    """
    step = progress or (lambda _msg: None)
    t, tr, facts = load_inputs(
        terms,
        trace,
        open_at=open_at,
        clock_skew=clock_skew,
        quarantine=quarantine,
        progress=step,
        check=lambda t: check_chosen(t, contracts),
    )
    return evaluate_facts(t, tr, facts, progress=step, only=contracts)


def load_inputs(
    terms: TermsLike,
    trace: TraceLike,
    *,
    open_at: datetime | None = None,
    clock_skew: timedelta = DEFAULT_CLOCK_SKEW,
    quarantine: bool = False,
    progress: Progress | None = None,
    check: Callable[[Terms], None] | None = None,
) -> tuple[Terms, Trace, Facts]:
    """The checked terms, the loaded trace and its facts (derived once, lazily). ``check``
    runs on the terms before the trace is read: a wrong name should fail fast."""
    step = progress or (lambda _msg: None)
    step("reading terms")
    t = terms if isinstance(terms, Terms) else load_terms(_paths(terms))
    if check is not None:
        check(t)
    step("loading trace")
    tr = (
        trace
        if isinstance(trace, Trace)
        else load_trace(trace, open_at=open_at, clock_skew=clock_skew, quarantine=quarantine)
    )
    step("deriving facts")
    return t, tr, derive_facts(tr)


def _paths(terms: str | Path | Sequence[str | Path]) -> list[str | Path]:
    if isinstance(terms, (str, Path)):
        return [terms]
    return list(terms)
