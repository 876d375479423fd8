"""What the checker cannot know until the trace and the amounts are in: trace columns the terms
read exist and are numeric (E403, E404), budgets share the contract's currency (E402), amounts
fit in exact decimals (E405), every charged allocation is priced by a rate (E401); and credits
that computed below zero (W401)."""

from __future__ import annotations

import typing
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import polars as pl

from contractlang.compile import Env, compile_expr, condition
from contractlang.diagnostics import Diagnostic, Source, error, warning
from contractlang.errors import ContractlangError
from contractlang.evaluate.budget import budget_currencies
from contractlang.evaluate.contract_run import ContractRun
from contractlang.evaluate.plan import AllocationPlan
from contractlang.evaluate.settings import read_settings
from contractlang.lang import ast
from contractlang.lang.facts import ABSENT_AS_NONE, FACTS, TRACE_PREFIX
from contractlang.lang.numbers import INT64_MAX
from contractlang.lang.terms import Terms
from contractlang.trace.columns import describe
from contractlang.trace.schema import COLUMNS

#: How many unpriced allocations an E401 error names before it counts the rest.
MAX_NAMED = 10


def check_against_trace(
    terms: Terms, contracts: Sequence[ast.Contract], allocations: pl.DataFrame
) -> None:
    """What the checker cannot know: trace columns exist and are numeric (E403/E404), and
    budgets share the contract's currency (E402)."""
    diags: list[Diagnostic] = []
    extras = sorted(
        c[len(TRACE_PREFIX) :] for c in allocations.columns if c.startswith(TRACE_PREFIX)
    )
    for contract in contracts:
        file = terms.file_of(contract)
        for node in _contract_nodes(contract):
            if not isinstance(node, ast.TraceColumn):
                continue
            col = TRACE_PREFIX + node.column
            if col not in allocations.columns and node.column == ABSENT_AS_NONE:
                continue  # none on every allocation (compile._trace_column)
            if col not in allocations.columns and node.column in COLUMNS:
                fact = f"`{node.column}`" if node.column in FACTS else None
                diags.append(
                    error(
                        "E403",
                        f"`trace.{node.column}` reads a column the trace schema defines; "
                        "`trace.<column>` reads the columns beyond it",
                        node.span,
                        file=file,
                        help=f"write the fact {fact}"
                        if fact
                        else "terms read the schema's columns through the facts derived "
                        "from them (docs/trace.md)",
                    )
                )
            elif col not in allocations.columns:
                listing = ", ".join(f"`{x}`" for x in extras) or "none"
                diags.append(
                    error(
                        "E403",
                        f"the trace has no column `{node.column}` (read by `trace.{node.column}`)",
                        node.span,
                        file=file,
                        help=f"columns the trace carries beyond the schema: {listing}",
                    )
                )
            elif not (allocations.schema[col].is_numeric()):
                diags.append(
                    error(
                        "E404",
                        f"trace column `{node.column}` holds "
                        f"{describe(allocations.schema[col])}, not numbers",
                        node.span,
                        file=file,
                    )
                )
        currency = read_settings(contract).currency
        for budget in terms.budgets:
            for code, q in budget_currencies(budget):
                if code != currency:
                    diags.append(
                        error(
                            "E402",
                            f"budget `{budget.name}` is in {code} but contract "
                            f"`{contract.name}` bills in {currency}",
                            q.span,
                            file=terms.file_of(budget),
                            help="every budget applies to every contract evaluated with it; "
                            "evaluate contracts of one currency together",
                        )
                    )
    if diags:
        raise ContractlangError(_dedupe(diags), terms.sources)


def _dedupe(diags: list[Diagnostic]) -> list[Diagnostic]:
    seen: set[tuple[str, str, int, int]] = set()
    out = []
    for d in diags:
        key = (d.code, d.file, d.span.line, d.span.col)
        if key not in seen:
            seen.add(key)
            out.append(d)
    return out


def _contract_nodes(contract: ast.Contract) -> list[ast.Expr]:
    """Every expression node in a contract's clauses."""
    exprs = [v for c in contract.clauses for v in vars(c).values() if _is_expr(v)]
    return [node for e in exprs for node in ast.walk(e)]


def _is_expr(value: object) -> bool:
    return isinstance(value, typing.get_args(ast.Expr))


def collect_amounts(lf: pl.LazyFrame, run: ContractRun) -> pl.DataFrame:
    """Collect a contract's allocation columns; an amount beyond the 38 digits of exact decimal
    arithmetic (20 after the point), or beyond 64-bit minor units, is a clean error (E405)
    naming the first allocation that computes it — found by halving the rows — never a
    wrapped figure or an internal error."""
    try:
        return lf.collect()
    except (pl.exceptions.InvalidOperationError, pl.exceptions.ComputeError) as exc:
        if not _overflowed(exc):
            raise
        if run.arithmetic == "quick":  # run again the careful way, which names the row
            raise too_large(run, None) from None
        try:
            where = _first_overflow(lf)
        except (pl.exceptions.InvalidOperationError, pl.exceptions.ComputeError):
            where = None  # a constant overflows: no row to name
    raise too_large(run, where)


@contextmanager
def amounts_kept(run: ContractRun) -> Iterator[None]:
    """E405, with no allocation to name, for an amount too large to keep exactly that polars
    finds while it plans the contract's columns — a constant of the terms (``1000000000000000
    USD * (0.0000000001 * (1 / 3))``), before any row is read."""
    try:
        yield
    except (pl.exceptions.InvalidOperationError, pl.exceptions.ComputeError) as exc:
        if not _overflowed(exc):
            raise
        raise too_large(run, None) from None


def too_large(run: ContractRun, where: str | None) -> ContractlangError:
    """E405 for ``run``'s contract, naming the allocation or run where it happened."""
    contract, file, source_text = run.contract, run.file, run.source_text
    at = f" for {where}" if where else ""
    return ContractlangError(
        [
            error(
                "E405",
                f"contract `{contract.name}` computes an amount too large to keep exactly{at}",
                contract.name_span,
                file=file,
                help="exact amounts hold 18 digits before the point, and 19 digits of minor "
                "units: an allocation's rate × GPUs × billed time, and a run's sums, must stay "
                "below them; check the rate and the allocation's GPUs and times",
            )
        ],
        {file: Source(file, source_text)} if source_text is not None else {},
    )


def fit_sums(runs: pl.DataFrame, columns: Sequence[str], run: ContractRun) -> pl.DataFrame:
    """``columns`` (128-bit sums) as 64-bit integers, or E405 naming the first run whose sum
    does not fit."""
    fits = pl.all_horizontal(pl.col(c).abs() <= INT64_MAX for c in columns)
    over = runs.filter(~fits)
    if over.height:
        raise too_large(run, f"run `{over['run_id'].sort()[0]}`")
    return runs.with_columns(pl.col(*columns).cast(pl.Int64))


def _overflowed(exc: Exception) -> bool:
    """Whether polars' error is a decimal that does not fit 38 digits. Polars 2.1 says so in
    three ways: an ``overflow``, a failed ``decimal … conversion``, and — where it rescales a
    decimal itself, as a sum of two scales does — ``division by zero Decimal`` (the
    compiler's own divisions never divide by zero: they read none there)."""
    text = str(exc)
    return (
        "overflow" in text
        or ("decimal" in text and "conversion" in text)
        or "division by zero Decimal" in text
    )


def _first_overflow(lf: pl.LazyFrame) -> str | None:
    """The allocation whose row makes ``lf`` fail (its plan is row by row), by bisection."""
    keys = lf.select("run_id", "alloc_id")
    lo, hi = 0, int(keys.select(pl.len()).collect().item())
    while hi - lo > 1:
        mid = (lo + hi) // 2
        try:
            lf.slice(lo, mid - lo).collect()
        except (pl.exceptions.InvalidOperationError, pl.exceptions.ComputeError):
            hi = mid
        else:
            lo = mid
    found = keys.slice(lo, 1).collect()
    if found.height == 0:
        return None
    run, alloc = found.row(0)
    return f"allocation `{alloc}` of run `{run}`"


def unpriced_allocations(wide: pl.DataFrame) -> pl.DataFrame:
    """The allocations that bill time but that no rate priced (E401), in ``wide``'s order."""
    unpriced = pl.col("rate_index").is_null() & (pl.col("billable_us") > 0)
    if not wide.select(unpriced.any()).item():  # as usual: no copy of the wide frame
        return wide.head(0)
    return wide.filter(unpriced)


def check_priced(run: ContractRun, unpriced: pl.DataFrame, count: int) -> None:
    """E401 when ``count`` allocations are unpriced: ``unpriced`` holds the first
    :data:`MAX_NAMED` of them (:func:`unpriced_allocations`), which the message names."""
    if count == 0:
        return
    contract, file, source_text = run.contract, run.file, run.source_text
    rows = unpriced.head(MAX_NAMED).to_dicts()
    named = "; ".join(
        f"`{r['alloc_id']}` of run `{r['run_id']}` ({r['capacity'] or 'no capacity'}, "
        f"{r['sku'] or 'no sku'})"
        for r in rows
    )
    more = count - len(rows)
    tail = f" and {more} more" if more else ""
    raise ContractlangError(
        [
            error(
                "E401",
                f"contract `{contract.name}` prices no rate for {count} "
                f"allocation(s): {named}{tail}",
                contract.name_span,
                file=file,
                help=f"{_why_unpriced(run, unpriced.head(1))}; add a rate whose condition "
                "holds for them (a rate without `when` prices everything left)",
            )
        ],
        {file: Source(file, source_text)} if source_text is not None else {},
    )


def _why_unpriced(run: ContractRun, first: pl.DataFrame) -> str:
    """Why no rate priced ``first`` (one allocation): each rate's condition, and its price
    where the condition holds."""
    env = Env(columns=dict(first.schema), promises=run.settings.promise_exprs)
    rates = run.clauses.rates
    holds = [first.select(condition(r.when, env)).item() for r in rates]
    priced = [
        bool(h) and first.select(compile_expr(r.price, env).expr.is_not_null()).item()
        for r, h in zip(rates, holds, strict=True)
    ]
    alloc = f"`{first['alloc_id'][0]}`"
    none_priced = [r for r, h, p in zip(rates, holds, priced, strict=True) if h and not p]
    if none_priced:
        lines = ", ".join(str(r.span.line) for r in none_priced)
        which = (
            f"rate at line {lines} applies"
            if len(none_priced) == 1
            else (f"rates at lines {lines} apply")
        )
        return (
            f"for {alloc}, the {which} but its price is none "
            "(a `trace.<column>` with no value on the allocation's `started` row?)"
        )
    return f"for {alloc}, the condition of no rate holds"


def negative_credits(wide: pl.DataFrame, plan: AllocationPlan) -> list[int]:
    """For each credit of ``plan``, how many allocations computed it below zero."""
    below = [(pl.col(t.column.removesuffix("_minor")) < 0).fill_null(False) for t in plan.credits]
    if not below:
        return []
    return [int(n) for n in wide.select(f.sum() for f in below).row(0)]


def negative_credit_warnings(
    counts: Sequence[int], plan: AllocationPlan, file: str
) -> list[Diagnostic]:
    """W401 for each credit that ``counts`` (:func:`negative_credits`) says went below zero."""
    out = []
    for t, n in zip(plan.credits, counts, strict=True):
        if n and t.clause is not None:
            out.append(
                warning(
                    "W401",
                    f"credit `{t.label}` computed a negative amount for {n} allocation(s); "
                    "counted as 0",
                    t.clause.span,
                    file=file,
                )
            )
    return out
