"""Evaluating a trace one shard of its runs at a time, for traces larger than memory
(design §10, ``docs/scale.md``): the same results, to the byte, as evaluating it whole.

    read the files' schemas and run ids (:func:`~contractlang.trace.shards.read_files`)
    → deal the runs into shards by a stable hash of ``run_id``
    → for each shard, independently (:func:`run_shard`, here or as a Ray task): read and check
      its rows, derive its facts, bill its allocations and sum its runs' money (per contract,
      the stages of :mod:`~contractlang.evaluate.stages` before ``caps_above``)
    → the global step (:func:`conclude_shards`): the verdict on every shard's findings (the
      diagnostics of the whole trace), then per contract the caps above the run, every run's
      net, totals, promises and budgets, from the runs' sums alone (the stages from
      ``caps_above`` on).

What the driver holds is a function of runs, not events: every run's sums, and for a ledger
the columns of every allocation it reads (none when no ledger is asked for).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from pathlib import Path

import polars as pl

from contractlang.errors import ContractlangError, InternalError
from contractlang.evaluate.contract_run import ContractRun
from contractlang.evaluate.engine import Progress, contract_result, run_stages
from contractlang.evaluate.ledger import ledger_columns
from contractlang.evaluate.plan import AllocationPlan
from contractlang.evaluate.results import Evaluation, PromiseBreaches
from contractlang.evaluate.runs import merge_promises
from contractlang.evaluate.stages import Staged, caps_above, need, run_sums
from contractlang.evaluate.trace_checks import (
    MAX_NAMED,
    check_against_trace,
    check_priced,
    negative_credit_warnings,
)
from contractlang.lang.terms import Terms
from contractlang.trace.derive import derive_facts
from contractlang.trace.digest import digest_of, header_line, run_lines
from contractlang.trace.load import DEFAULT_CLOCK_SKEW, Source
from contractlang.trace.model import Trace, joined
from contractlang.trace.read import PARQUET_EXTS, lenient_zones
from contractlang.trace.schema import ROW, RUN_KEY
from contractlang.trace.shards import (
    LoadedShard,
    Shard,
    ShardPlan,
    TraceFiles,
    deal,
    load_shard,
    merge_shards,
    read_files,
    spanning,
)

#: Peak memory of evaluating one event, measured (bench/bench_scale.py): about 260 bytes at
#: 10M events; :func:`auto_shards` plans with this much.
BYTES_PER_EVENT = 300
#: The share of the machine's available memory one shard may take.
MEMORY_SHARE = 0.25


@dataclass(frozen=True)
class ReadOptions:
    """How every shard reads the trace (as :func:`~contractlang.trace.load.load_trace`)."""

    open_at: datetime | None = None
    clock_skew: timedelta = DEFAULT_CLOCK_SKEW
    max_problems: int = 50
    quarantine: bool = False


@dataclass(frozen=True)
class ShardTask:
    """Everything one shard's evaluation needs, picklable (a Ray task's argument)."""

    plan: ShardPlan
    shard: Shard
    terms: Terms
    contracts: tuple[str, ...]
    options: ReadOptions
    #: keep the allocation columns the ledger reads
    ledger: bool
    #: only read and check the rows (another shard broke a rule: nothing will be evaluated)
    check_only: bool = False
    #: take each run's digest (:func:`~contractlang.trace.digest.run_lines`)
    digest: bool = False
    #: keep every allocation column (a report explains runs from them), not the ledger's alone
    all_columns: bool = False


@dataclass(frozen=True)
class ContractPart:
    """One contract over one shard: its runs' sums, and what the global step adds up."""

    plan: AllocationPlan
    #: none when an allocation is unpriced (the global step's E401 comes first)
    sums: pl.DataFrame | None
    allocations: int
    unpriced: pl.DataFrame
    unpriced_count: int
    negative: tuple[int, ...]
    promises: PromiseBreaches
    ledger: pl.DataFrame


@dataclass(frozen=True)
class ShardResult:
    """One shard's result: what its check found (its events let go), and, when they break
    no rule, each contract's part, or the error evaluating it raised."""

    loaded: LoadedShard
    parts: tuple[ContractPart, ...] = ()
    #: the first error evaluating raised, with where: the contract's position (-1 before
    #: any contract) and the step (:data:`BILLING`, :data:`SUMMING`)
    error: tuple[int, int, ContractlangError] | None = None
    #: the shard's dense and sparse frames with no rows: the columns of the trace's events
    events: tuple[pl.DataFrame, pl.DataFrame] | None = field(default=None, repr=False)
    #: each run's digest line, when the task asked for them
    digests: tuple[str, ...] = ()


def run_shard(task: ShardTask) -> ShardResult:
    """Read, check, derive and bill one shard: the function every engine runs per shard."""
    o = task.options
    loaded = load_shard(
        task.plan,
        task.shard,
        open_at=o.open_at,
        max_problems=o.max_problems,
        clock_skew=o.clock_skew,
        quarantine=o.quarantine,
    )
    trace = loaded.trace
    loaded = replace(loaded, trace=None)  # the events are let go with this function's frame
    if trace is None or task.check_only:
        return ShardResult(loaded)
    schema = (trace.dense.head(0), trace.sparse.head(0))
    digests = tuple(run_lines(trace)) if task.digest else ()
    allocations, runs = derive_facts(trace).collect()
    del trace
    terms = task.terms
    chosen = [c for c in terms.contracts if c.name in task.contracts]
    try:
        check_against_trace(terms, chosen, allocations)
    except ContractlangError as exc:
        return ShardResult(loaded, error=(-1, BILLING, exc), events=schema, digests=digests)
    parts: list[ContractPart] = []
    for k, contract in enumerate(chosen):
        run = ContractRun.of(contract, terms.file_of(contract), terms.source_of(contract))
        staged = Staged(replace(run, shard=True), allocations, runs)
        try:  # the stages up to the runs' sums
            staged = run_stages(staged, until=run_sums)
        except ContractlangError as exc:
            return ShardResult(loaded, tuple(parts), (k, BILLING, exc), schema, digests)
        if staged.unpriced_count:  # E401, raised by the global step, which sees every shard's
            parts.append(_part(staged, task))
            continue
        try:  # the runs' sums, which the global step settles
            staged = run_stages(staged, first=run_sums, until=caps_above)
        except ContractlangError as exc:
            return ShardResult(loaded, tuple(parts), (k, SUMMING, exc), schema, digests)
        parts.append(_part(staged, task))
    return ShardResult(loaded, tuple(parts), None, schema, digests)


def _part(staged: Staged, task: ShardTask) -> ContractPart:
    wide = need(staged.wide, "the allocations' amounts")
    if task.all_columns:
        kept = wide
    elif task.ledger:
        kept = wide.select(ledger_columns(staged.plan))
    else:
        kept = wide.head(0).select("run_id")
    return ContractPart(
        plan=staged.plan,
        sums=staged.sums,
        allocations=staged.allocation_count,
        unpriced=need(staged.unpriced, "the unpriced allocations"),
        unpriced_count=staged.unpriced_count,
        negative=staged.negative,
        promises=need(staged.promises, "the promise breaches"),
        ledger=kept,
    )


#: The steps of one contract where an error may come from, in the order one evaluation
#: takes them: billing the allocations (E405), pricing them all (E401), the runs' sums (E405).
BILLING, PRICING, SUMMING = 0, 1, 2

#: Runs shard tasks and hands each result, as it comes, to the callback.
Runner = Callable[[Sequence[ShardTask], Callable[[ShardResult], None]], None]


def run_here(tasks: Sequence[ShardTask], done: Callable[[ShardResult], None]) -> None:
    """The local engine: one shard after another in this process."""
    for task in tasks:
        done(run_shard(task))


def auto_shards(events: int, available: int | None = None) -> int:
    """How many shards keep one shard's peak memory within :data:`MEMORY_SHARE` of the
    machine's available memory, planning :data:`BYTES_PER_EVENT` per event.

    >>> auto_shards(10_000_000, 22 * 2**30), auto_shards(100_000_000, 22 * 2**30)
    (1, 6)
    """
    free = available if available is not None else available_memory()
    budget = max(1, int(free * MEMORY_SHARE))
    return max(1, math.ceil(events * BYTES_PER_EVENT / budget))


def estimate_events(trace: Source | Sequence[Source]) -> int:
    """How many events ``trace`` holds, cheaply: a Parquet file's row count from its footer,
    a frame's height, and for a text file its size over 40 bytes (no trace row is shorter
    than that in practice, so the estimate errs towards more shards)."""
    items = [trace] if isinstance(trace, (str, Path, pl.DataFrame, pl.LazyFrame)) else trace
    total = 0
    for item in items:
        if isinstance(item, pl.DataFrame):
            total += item.height
        elif isinstance(item, pl.LazyFrame):
            total += int(item.select(pl.len()).collect().item())
        else:
            path = Path(item)
            try:
                if path.suffix.lower() in PARQUET_EXTS:
                    with lenient_zones():  # a zone polars cannot read is T017 when read
                        total += int(pl.scan_parquet(path).select(pl.len()).collect().item())
                else:
                    total += path.stat().st_size // 40
            except (OSError, pl.exceptions.PolarsError, TypeError):
                # reading it will say what is wrong with it (TypeError: a name polars cannot
                # take, not UTF-8)
                continue
    return total


def available_memory() -> int:
    """The memory the system can give without swapping (``MemAvailable``), in bytes; 4 GiB
    where it cannot tell."""
    try:
        with open("/proc/meminfo") as info:
            for line in info:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return int(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):
        return 4 * 2**30


def evaluate_sharded(
    terms: Terms,
    trace: Source | Sequence[Source],
    *,
    shards: int | None = None,
    options: ReadOptions = ReadOptions(),
    contracts: Sequence[str] | None = None,
    progress: Progress | None = None,
    ledger: bool = True,
    runner: Runner = run_here,
    files: TraceFiles | None = None,
    digest: bool = True,
    all_columns: bool = False,
) -> Evaluation:
    """Evaluate ``terms`` over ``trace`` in ``shards`` shards of runs (:func:`auto_shards`
    when None), each by ``runner``: the same :class:`Evaluation` as
    :func:`~contractlang.pipeline.evaluation.evaluate`, but that its trace holds no events
    and, without ``ledger``, its contracts no allocations (with ``all_columns``, every column
    of every allocation, as a report reads them); with ``digest`` it carries the trace's
    digest, taken a run at a time in the shards. ``contracts`` names contracts of ``terms``
    (E502 is the caller's: :func:`~contractlang.pipeline.chosen.check_chosen`)."""
    step = progress or (lambda _msg: None)
    step("reading the trace's runs")
    found = files if files is not None else read_files(trace)
    n = shards if shards is not None else auto_shards(found.rows)
    plan = deal(found, n)
    names = tuple(c.name for c in terms.contracts if contracts is None or c.name in contracts)
    tasks = [
        ShardTask(plan, s, terms, names, options, ledger, digest=digest, all_columns=all_columns)
        for s in plan.shards
    ]
    results: dict[int, ShardResult] = {}

    def done(result: ShardResult) -> None:
        results[result.loaded.shard.index] = result
        step(f"{len(results)} of {len(tasks)} shards done")

    step(f"0 of {len(tasks)} shards done")
    runner(tasks, done)
    while True:  # shards sharing an allocation (an error) are read again as one
        loaded = [results[t.shard.index].loaded for t in tasks]
        merged = spanning(loaded)
        if not merged:
            break
        members = {s.index for m in merged for s in (t.shard for t in tasks) if _within(s, m)}
        tasks = [t for t in tasks if t.shard.index not in members]
        redo = [
            ShardTask(
                plan, m, terms, names, options, ledger, digest=digest, all_columns=all_columns
            )
            for m in merged
        ]
        for index in members:
            del results[index]
        runner(redo, done)
        tasks = sorted([*tasks, *redo], key=lambda t: t.shard.index)
    done_results = [results[t.shard.index] for t in tasks]
    return conclude_shards(terms, plan, done_results, options, names, digest=digest)


def _within(shard: Shard, merged: Shard) -> bool:
    """Whether ``shard``'s runs are among ``merged``'s (a shard is merged whole or not at
    all; shard 0, which may hold no run, goes with the rows of no run)."""
    if shard.run_ids.len():
        return bool(shard.run_ids.head(1).is_in(merged.run_ids.implode()).item())
    return shard.with_null and merged.with_null


def conclude_shards(
    terms: Terms,
    plan: ShardPlan,
    results: Sequence[ShardResult],
    options: ReadOptions,
    names: Sequence[str],
    *,
    digest: bool = False,
) -> Evaluation:
    """The global step: the verdict on every shard's rows, then each contract's caps above
    the run, nets, totals, promises and budgets from every run's sums. Errors come in the
    order one evaluation of the whole trace meets them."""
    merged = merge_shards(
        plan,
        [r.loaded for r in results],
        max_problems=options.max_problems,
        clock_skew=options.clock_skew,
    )
    errors = [r.error for r in results if r.error is not None]
    first_error = min(errors, key=lambda e: (e[0], e[1])) if errors else None
    if first_error is not None and first_error[0] < 0:
        raise first_error[2]
    none = (
        pl.DataFrame(schema={ROW: pl.Int64(), RUN_KEY: pl.UInt32()}),
        pl.DataFrame(schema={ROW: pl.Int64()}),
    )
    dense, sparse = next((r.events for r in results if r.events is not None), none)
    columns = joined(dense, sparse, pl.Series("run_id", [], pl.String)).columns
    lines = (line for r in results for line in r.digests)
    trace = Trace(
        dense=dense,
        sparse=sparse,
        source=plan.sources.label,
        extras=merged.extras,
        warnings=merged.warnings,
        summary=merged.summary,
        open_at=options.open_at,
        columns_read=merged.columns_read,
        index=None,
        quarantine=merged.quarantine,
        digest=digest_of(header_line(columns), lines) if digest else None,
        let_go=True,
    )
    chosen = [c for c in terms.contracts if c.name in names]
    budgets = [(b, terms.source_of(b)) for b in terms.budgets]
    keep = bool(results) and all(r.parts for r in results)
    contracts = []
    for k, contract in enumerate(chosen):
        run = ContractRun.of(contract, terms.file_of(contract), terms.source_of(contract))
        parts = [r.parts[k] for r in results if len(r.parts) > k]
        if first_error is not None and first_error[:2] == (k, BILLING):
            raise first_error[2]
        count = sum(p.unpriced_count for p in parts)
        if count:
            unpriced = pl.concat([p.unpriced for p in parts], how="vertical_relaxed")
            first = unpriced.sort("run_id", "attempt").head(MAX_NAMED)
            check_priced(run, first, count)
        if first_error is not None and first_error[0] == k:
            raise first_error[2]
        if not parts:
            raise InternalError("a valid shard gave no part of a contract")
        terms_plan = parts[0].plan
        negative = [sum(c) for c in zip(*(p.negative for p in parts), strict=True)]
        sums = [need(p.sums, "a shard's runs' sums") for p in parts]
        staged = Staged(
            run,
            promises=merge_promises([p.promises for p in parts]),
            plan=terms_plan,
            wide=pl.concat([p.ledger for p in parts], how="vertical_relaxed"),
            allocation_count=sum(p.allocations for p in parts),
            warnings=tuple(negative_credit_warnings(negative, terms_plan, run.file)),
            sums=pl.concat(sums, how="vertical_relaxed").sort("run_id"),
        )
        result = contract_result(run_stages(staged, first=caps_above), budgets)
        contracts.append(replace(result, allocations_kept=keep and _has_ledger(staged)))
    return Evaluation(
        tuple(contracts), terms.budgets, trace, (*terms.warnings, *trace.warnings), terms.sources
    )


def _has_ledger(staged: Staged) -> bool:
    wide = need(staged.wide, "the allocations' ledger columns")
    return all(c in wide.columns for c in ledger_columns(staged.plan))
