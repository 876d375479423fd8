"""The driver of ``contractlang simulate``: terms and a workload → one simulated trace per set
of promises → each contract evaluated on its trace by the normal pipeline → the Monte Carlo
error of every figure.

    load terms and the workload → group contracts by promises → per group: simulate the
    trace in batches into Parquet, evaluate its contracts (:func:`contractlang.evaluate`) →
    bootstrap every contract's figures on the same resamples
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path

import polars as pl

from contractlang.diagnostics import NO_SPAN, Diagnostic, Span, error, warning
from contractlang.errors import ContractlangError, cannot_write, os_reason
from contractlang.evaluate.results import ContractResult, Evaluation
from contractlang.lang.ast import Contract
from contractlang.lang.numbers import duration_human
from contractlang.lang.terms import Terms
from contractlang.pipeline.chosen import check_chosen
from contractlang.pipeline.evaluation import EvaluateOptions, TermsLike, evaluate
from contractlang.pipeline.language import load_terms
from contractlang.simulate.bootstrap import RESAMPLES
from contractlang.simulate.generate import BATCH_RUNS, OutOfRange, Simulator
from contractlang.simulate.monte_carlo import flip_warnings, monte_carlo
from contractlang.simulate.provider import group_by_promises
from contractlang.simulate.ranking import rank
from contractlang.simulate.results import SimulatedContract, SimulatedTrace, Simulation
from contractlang.simulate.workload import (
    TRACE_WARNINGS_SAID,
    LoadedWorkload,
    Workload,
    load_workload,
)
from contractlang.simulate.write import place, sink_atomically
from contractlang.tomlfile.problems import problem

Progress = Callable[[str], None]


def simulate(
    terms: TermsLike,
    workload: LoadedWorkload | str | Path,
    *,
    trace_dir: Path | None = None,
    resamples: int = RESAMPLES,
    contracts: Sequence[str] | None = None,
    baseline: str | None = None,
    progress: Progress | None = None,
    batch_runs: int = BATCH_RUNS,
) -> Simulation:
    """Simulate ``workload`` under every contract of ``terms`` (or those in ``contracts``),
    each measured against ``baseline`` (the first contract unless named) and ranked.

    ``trace_dir`` (a folder that exists) keeps each contract's trace as
    :func:`trace_files` names it (contracts with the same promises share one trace: the files
    are copies). The traces are put in place only once every one is simulated and evaluated,
    so a failure leaves none of them changed. Raises
    :class:`~contractlang.errors.ContractlangError` on bad terms or a bad workload.
    """
    step = progress or (lambda _msg: None)
    step("reading terms")
    t = terms if isinstance(terms, Terms) else load_terms(_paths(terms))
    chosen = choose(t, contracts, baseline)
    step("reading the workload")
    lw = workload if isinstance(workload, LoadedWorkload) else load_workload(workload)
    w = lw.workload
    groups = group_by_promises(chosen)
    names = file_names([c.name for c in chosen])
    traces: list[SimulatedTrace] = []
    results: list[tuple[ContractResult, SimulatedTrace]] = []
    evaluations: list[Evaluation] = []
    warnings: list[Diagnostic] = []
    staged: list[tuple[Path, list[Path]]] = []  # a written trace and where it goes
    with tempfile.TemporaryDirectory(prefix="contractlang-simulate-") as tmp:
        try:
            for index, (promises, members) in enumerate(groups, start=1):
                path = _staging(trace_dir or Path(tmp), names[members[0].name])
                staged.append((path, []))
                sim = Simulator(w, lw.availability, promises)

                def batches(sim: Simulator = sim, index: int = index) -> Iterator[pl.DataFrame]:
                    for start in range(0, w.runs, batch_runs):
                        step(f"simulating trace {index} of {len(groups)}: runs from {start + 1:,}")
                        yield sim.batch(start, min(start + batch_runs, w.runs))

                try:
                    events = sink_atomically(path, sim.columns.schema(), batches)
                except OutOfRange as exc:
                    raise _out_of_range(lw, exc) from None
                step(f"evaluating trace {index} of {len(groups)}")
                try:
                    only = EvaluateOptions(contracts=[c.name for c in members])
                    ev = evaluate(t, path, only, progress=step)
                except ContractlangError as exc:
                    raise _explained(exc, w) from None
                targets = (
                    [trace_dir / f"{names[c.name]}.parquet" for c in members] if trace_dir else []
                )
                staged[-1] = (path, targets)
                gave_up = sorted(sim.tally.gave_up)
                trace = SimulatedTrace(
                    index, promises, tuple(c.name for c in members), events, len(gave_up),
                    tuple(targets),
                )  # fmt: skip
                if gave_up:
                    warnings.append(_gave_up_warning(lw, trace))
                traces.append(trace)
                evaluations.append(ev)
                results.extend((c, trace) for c in ev.contracts)
            for path, targets in staged:
                place(path, targets)
        finally:
            for path, _ in staged:
                path.unlink(missing_ok=True)
    step("bootstrapping the Monte Carlo error")
    order = {c.name: i for i, c in enumerate(chosen)}
    results.sort(key=lambda pair: order[pair[0].name])
    base = baseline or chosen[0].name
    base_index = next(i for i, (r, _) in enumerate(results) if r.name == base)
    errors = monte_carlo([r for r, _ in results], t, resamples, w.seed, base_index)
    ranking = rank([r for r, _ in results], t.budgets)
    simulated = tuple(
        SimulatedContract(r, trace, mc, ranking.order.index(r.name) + 1, delta)
        for (r, trace), (mc, delta) in zip(results, errors, strict=True)
    )
    for s in simulated:
        warnings.extend(flip_warnings(s.name, s.monte_carlo))
    # what the trace would warn about on its rows the workload has said at its key
    trace_warnings = [
        d for ev in evaluations for d in ev.trace.warnings if d.code not in TRACE_WARNINGS_SAID
    ]
    return Simulation(
        workload=w,
        availability=lw.availability,
        traces=tuple(traces),
        contracts=simulated,
        evaluations=tuple(evaluations),
        budgets=t.budgets,
        warnings=(*t.warnings, *lw.warnings, *trace_warnings, *warnings),
        sources={**t.sources, lw.source.name: lw.source},
        baseline=base,
        ranking=ranking,
    )


def choose(terms: Terms, contracts: Sequence[str] | None, baseline: str | None) -> list[Contract]:
    """The contracts to simulate, in the order of the terms: all, or those named; E502 for a
    name the terms do not have, or a baseline that is not among them."""
    check_chosen(terms, [*(contracts or ()), *([baseline] if baseline else [])])
    chosen = [c for c in terms.contracts if contracts is None or c.name in contracts]
    if baseline is not None and baseline not in [c.name for c in chosen]:
        names = ", ".join(f"`{n}`" for n in contracts or ())
        diag = error(
            "E502",
            f"`--baseline {baseline}` is not among the contracts simulated ({names})",
            NO_SPAN,
            file="contractlang",
            help=f"add `--contract {baseline}`, or choose the baseline among them",
        )
        raise ContractlangError([diag], terms.sources)
    return chosen


def trace_files(terms: Terms, folder: Path, contracts: Sequence[str] | None = None) -> list[Path]:
    """Where ``simulate(…, trace_dir=folder)`` keeps the traces: one file per contract chosen
    (all of them, or those in ``contracts``), in the order of the terms."""
    chosen = [c.name for c in terms.contracts if contracts is None or c.name in contracts]
    return [folder / f"{name}.parquet" for name in file_names(chosen).values()]


#: The longest file name a contract's trace gets, before ``-2``… and ``.parquet``.
MAX_NAME = 100


def file_names(contracts: Sequence[str]) -> dict[str, str]:
    """A file name for each contract: its name with characters other than letters, digits,
    ``.``, ``_`` and ``-`` replaced by ``_``, cut at 100 characters as ``rehearse --trace-out``
    cuts it (``-2``, ``-3``… added when two would collide).

    >>> file_names(["aws spot/v2", "aws_spot_v2"])
    {'aws spot/v2': 'aws_spot_v2', 'aws_spot_v2': 'aws_spot_v2-2'}
    """
    out: dict[str, str] = {}
    taken: set[str] = set()
    for name in contracts:
        base = re.sub(r"[^A-Za-z0-9._-]", "_", name).strip(".")[:MAX_NAME].strip(".")
        base = base or "contract"
        candidate, n = base, 1
        while candidate.lower() in taken:
            n += 1
            candidate = f"{base}-{n}"
        taken.add(candidate.lower())
        out[name] = candidate
    return out


def _staging(folder: Path, name: str) -> Path:
    """A file of its own in ``folder`` to write a trace to before it is put in place."""
    try:
        fd, path = tempfile.mkstemp(prefix=f".{name}.", suffix=".simulating.parquet", dir=folder)
    except OSError as exc:
        raise cannot_write(folder / f"{name}.parquet", os_reason(exc)) from None
    os.close(fd)
    return Path(path)


def _gave_up_warning(lw: LoadedWorkload, trace: SimulatedTrace) -> Diagnostic:
    w = lw.workload
    span = lw.spans.of(("max_allocations",)) or lw.spans.of(("runs",))
    return warning(
        "W602",
        f"{trace.gave_up:,} of {w.runs:,} runs gave up after {w.max_allocations:,} "
        f"allocations under {trace.promises.describe()}: they end not accepted",
        span if span is not None else Span(1, 1, 1, 2),
        file=lw.source.name,
        help="raise `max_allocations`, or checkpoint more often",
    )


def _out_of_range(lw: LoadedWorkload, exc: OutOfRange) -> ContractlangError:
    """E605 at the first key of ``exc.keys`` the workload writes (else the first)."""
    key = next((k for k in exc.keys if lw.spans.of(k) is not None), exc.keys[0])
    diag = problem("E605", exc.message, key, lw.spans, lw.source, help=exc.help, value=False)
    return ContractlangError([diag], {lw.source.name: lw.source})


def _explained(exc: ContractlangError, w: Workload) -> ContractlangError:
    """Evaluation errors with help for a simulated trace: its only extra column is `price`,
    there when the workload gives one (without it, `trace.price` is none and a rate reading
    it prices nothing: E401); an amount too large comes from the job's size."""
    price = "add `price = …` (per GPU-hour) to the workload: the trace then has `price`"
    size = (
        f"the simulated allocations hold {w.gpus:,} GPUs for up to "
        f"{duration_human(w.longest_allocation_us)}: lower the rate or the job's size"
    )
    diags = [
        replace(d, help=price)
        if d.code == "E401" and w.price is None and "price is none" in (d.help or "")
        else replace(d, help=size)
        if d.code == "E405"
        else d
        for d in exc.diagnostics
    ]
    return ContractlangError(diags, exc.sources)


def _paths(terms: str | Path | Sequence[str | Path]) -> list[str | Path]:
    if isinstance(terms, (str, Path)):
        return [terms]
    return list(terms)
