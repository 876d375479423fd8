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
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Literal

import polars as pl

from contractlang.evaluate.engine import Progress, evaluate_contracts
from contractlang.evaluate.results import Evaluation
from contractlang.lang import ast
from contractlang.lang.terms import Terms
from contractlang.pipeline.chosen import check_chosen
from contractlang.pipeline.language import load_terms
from contractlang.pipeline.shards import (
    ReadOptions,
    Runner,
    auto_shards,
    estimate_events,
    evaluate_sharded,
    run_here,
)
from contractlang.trace.derive import Facts, derive_facts
from contractlang.trace.digest import with_digest
from contractlang.trace.load import DEFAULT_CLOCK_SKEW, load_trace
from contractlang.trace.model import Trace

__all__ = [
    "Engine",
    "EvaluateOptions",
    "TermsLike",
    "TraceLike",
    "evaluate",
    "evaluate_facts",
    "load_inputs",
]

#: Where shards run: in this process, or as Ray tasks.
Engine = Literal["local", "ray"]
TermsLike = Terms | str | Path | Sequence[str | Path]
TraceLike = Trace | str | Path | pl.DataFrame | pl.LazyFrame | Sequence[str | Path]


@dataclass(frozen=True)
class EvaluateOptions:
    """How :func:`evaluate` reads the trace, where it evaluates it and what it keeps. The
    defaults: every contract, the whole trace in this process, everything kept.

    With ``shards`` other than 1 (None: :func:`~contractlang.pipeline.shards.auto_shards`
    decides from the trace's size and the machine's memory), or ``engine="ray"``, the trace
    is evaluated one shard of its runs at a time (:mod:`~contractlang.pipeline.shards`),
    with the same results; without ``ledger`` a sharded evaluation keeps no allocations, and
    with ``all_columns`` every column of them (what a report reads), not only the ledger's.
    Without ``keep_events`` (and always when sharded) the evaluation's trace holds no events:
    they are let go once the facts are derived, and ``digest`` takes the trace's digest
    (:mod:`~contractlang.trace.digest`, for the JSON document) before they go; without it,
    asking that evaluation for its digest is an internal error, never a wrong digest.
    """

    #: the contracts to evaluate, by name (every one when none; E502 for a name the terms
    #: do not define)
    contracts: Sequence[str] | None = None
    #: how the trace is read (:func:`~contractlang.trace.load.load_trace`)
    open_at: datetime | None = None
    clock_skew: timedelta = DEFAULT_CLOCK_SKEW
    quarantine: bool = False
    #: how many shards of runs, and where they are evaluated
    shards: int | None = 1
    engine: Engine = "local"
    ray_address: str | None = None
    #: what the evaluation keeps
    ledger: bool = True
    keep_events: bool = True
    digest: bool = True
    all_columns: bool = False


def evaluate(
    terms: TermsLike,
    trace: TraceLike,
    options: EvaluateOptions = EvaluateOptions(),
    *,
    progress: Progress | None = None,
) -> Evaluation:
    """Apply every contract in ``terms`` (or those ``options`` names) to ``trace`` and measure
    every budget.

    Raises :class:`~contractlang.errors.ContractlangError` on bad terms or a bad trace (exit
    code 2).
    """
    o = options
    step = progress or (lambda _msg: None)
    step("reading terms")
    t = _terms(terms)
    check_chosen(t, o.contracts)  # before the trace: a wrong name should fail fast
    if not isinstance(trace, Trace) and (o.engine == "ray" or o.shards != 1):
        runner: Runner = run_here
        if o.engine == "ray":
            # the optional Ray engine (and Ray itself) load only when asked for
            from contractlang.pipeline.ray_engine import cluster_cpus, ray_runner  # noqa: PLC0415

            runner = ray_runner(o.ray_address)
        count = o.shards if o.shards is not None else auto_shards(estimate_events(trace))
        if o.engine == "ray" and o.shards is None:
            count = max(count, cluster_cpus(o.ray_address))
        if count > 1 or o.engine == "ray":
            return evaluate_sharded(
                t,
                trace,
                shards=count,
                options=ReadOptions(o.open_at, o.clock_skew, quarantine=o.quarantine),
                contracts=o.contracts,
                progress=step,
                ledger=o.ledger,
                runner=runner,
                digest=o.digest,
                all_columns=o.all_columns,
            )
    t, tr, facts = load_inputs(
        t,
        trace,
        open_at=o.open_at,
        clock_skew=o.clock_skew,
        quarantine=o.quarantine,
        progress=step,
    )
    if not o.keep_events:  # the facts hold all evaluation reads: let the events go
        if o.digest:
            step("taking the trace's digest")
            tr = with_digest(tr)
        allocations, runs = facts.collect()
        facts = Facts(allocations.lazy(), runs.lazy())
        tr = replace(tr, dense=tr.dense.head(0), sparse=tr.sparse.head(0), index=None, let_go=True)
    return evaluate_contracts(t, tr, facts, _chosen(t, o.contracts), progress=step)


def evaluate_facts(
    terms: Terms,
    trace: Trace,
    facts: Facts,
    *,
    progress: Progress | None = None,
    only: Sequence[str] | None = None,
) -> Evaluation:
    """Evaluate every contract of ``terms`` (or those named in ``only``: E502 for a name the
    terms do not define) over ``facts``, the facts of ``trace``, and measure every budget
    against each."""
    check_chosen(terms, only)
    return evaluate_contracts(terms, trace, facts, _chosen(terms, only), progress=progress)


def _chosen(terms: Terms, only: Sequence[str] | None) -> list[ast.Contract]:
    """The contracts of ``terms`` named in ``only`` (all when None), in the terms' order."""
    return [c for c in terms.contracts if only is None or c.name in only]


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
    if not isinstance(terms, Terms):
        step("reading terms")
    t = _terms(terms)
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


def _terms(terms: TermsLike) -> Terms:
    return terms if isinstance(terms, Terms) else load_terms(_paths(terms))


def _paths(terms: str | Path | Sequence[str | Path]) -> list[str | Path]:
    if isinstance(terms, (str, Path)):
        return [terms]
    return list(terms)
