"""Evaluate contracts against a trace: ledger, per-run figures, fleet metrics, budget verdicts.

Facts are derived once per trace and shared by every contract (design §10). Per contract:
allocation terms (:mod:`billing`), run sums, caps above the allocation (:mod:`caps`), then
metrics and budgets (:mod:`budget`). Example::

    >>> from contractlang.terms import terms_from_text
    >>> from contractlang.trace import generate_trace
    >>> terms = terms_from_text('contract "c" { currency USD rate 2 USD per gpu_hour }')
    >>> result = evaluate(terms, generate_trace(3, seed=1))
    >>> c = result.contracts[0]
    >>> c.ledger()["amount"].sum() == c.money(c.totals.net_minor)  # the ledger sums to net
    True
    >>> result.verdict
    'no budget'
"""

from __future__ import annotations

import typing
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import polars as pl

from contractlang import ast
from contractlang.billing import AllocationPlan, apply_contract, term_label
from contractlang.budget import BudgetResult, budget_currencies, evaluate_budget, exact_percentile
from contractlang.caps import CapCut, apply_pooled_caps, apply_run_caps
from contractlang.compile import dec
from contractlang.diagnostics import (
    NO_SPAN,
    Diagnostic,
    Source,
    did_you_mean,
    error,
    warning,
)
from contractlang.errors import ContractlangError
from contractlang.facts import TRACE_PREFIX
from contractlang.settings import Settings, read_settings
from contractlang.terms import Terms, load_terms
from contractlang.trace import Facts, Trace, derive_facts, load_trace

Progress = Callable[[str], None]
#: How many unpriced allocations an E401 error names before it counts the rest.
MAX_NAMED = 10


@dataclass(frozen=True)
class Totals:
    """A contract's totals over the whole trace. Money in minor units; time in µs."""

    runs: int
    accepted_runs: int
    allocations: int
    metered_gpu_us: int
    excluded_gpu_us: int
    billable_gpu_us: int
    lost_gpu_us: int
    lost_steps: int
    gross_minor: int
    credits_minor: int  # negative
    cap_cuts_minor: int  # positive
    net_minor: int
    cost_per_accepted_run: dict[str, Fraction | None]  # p50, p95, max (currency units)


@dataclass(frozen=True)
class PromiseBreaches:
    """How often the trace breached each promise of a contract."""

    notice_us: int | None
    reclaims: int
    notice_breaches: int
    shortest_notice_us: int | None
    restart_us: int | None
    replacements: int  # reclaimed or failed allocations followed by another
    restart_breaches: int
    never_replaced: int
    longest_wait_us: int | None


@dataclass(frozen=True)
class ContractResult:
    contract: ast.Contract
    settings: Settings
    plan: AllocationPlan
    allocations: pl.DataFrame  # facts + one column per term, per allocation
    runs: pl.DataFrame  # run facts + money, per run
    run_cuts: tuple[CapCut, ...]
    budgets: tuple[BudgetResult, ...]
    totals: Totals
    promises: PromiseBreaches
    warnings: tuple[Diagnostic, ...]
    source_text: str | None = field(default=None, repr=False)

    @property
    def name(self) -> str:
        return self.contract.name

    @property
    def budgets_met(self) -> bool:
        return all(b.met for b in self.budgets)

    def money(self, minor: int) -> Decimal:
        """Minor units as an exact Decimal at the contract's precision."""
        return Decimal(minor).scaleb(-self.settings.precision)

    def ledger(self) -> pl.DataFrame:
        from contractlang.ledger import build_ledger

        return build_ledger(self)

    def runs_table(self) -> pl.DataFrame:
        from contractlang.ledger import runs_table

        return runs_table(self)


@dataclass(frozen=True)
class Evaluation:
    """The result of :func:`evaluate`: one :class:`ContractResult` per contract."""

    contracts: tuple[ContractResult, ...]
    budgets: tuple[ast.Budget, ...]
    trace: Trace
    warnings: tuple[Diagnostic, ...] = ()  # of the terms and of the trace
    sources: dict[str, Source] = field(default_factory=dict, repr=False)

    @property
    def verdict(self) -> str:
        """``met`` (every budget met by every contract), ``not met``, or ``no budget``."""
        if not self.budgets:
            return "no budget"
        return "met" if all(c.budgets_met for c in self.contracts) else "not met"

    def ledger(self) -> pl.DataFrame:
        return pl.concat([c.ledger() for c in self.contracts], how="vertical_relaxed")

    def runs_table(self) -> pl.DataFrame:
        return pl.concat([c.runs_table() for c in self.contracts], how="vertical_relaxed")

    def contract(self, name: str) -> ContractResult:
        for c in self.contracts:
            if c.name == name:
                return c
        raise KeyError(name)


TermsLike = Terms | str | Path | Sequence[str | Path]
TraceLike = Trace | str | Path | pl.DataFrame | pl.LazyFrame


def evaluate(
    terms: TermsLike,
    trace: TraceLike,
    *,
    open_at: datetime | None = None,
    progress: Progress | None = None,
    contracts: Sequence[str] | None = None,
) -> Evaluation:
    """Apply every contract in ``terms`` to ``trace`` and measure every budget.

    Raises :class:`ContractlangError` on bad terms or a bad trace (exit code 2).
    """
    step = progress or (lambda _msg: None)
    step("reading terms")
    t = terms if isinstance(terms, Terms) else load_terms(_paths(terms))
    _check_chosen(t, contracts)  # before the trace: a wrong name should fail fast
    step("loading trace")
    tr = trace if isinstance(trace, Trace) else load_trace(trace, open_at=open_at)
    step("deriving facts")
    facts = derive_facts(tr)
    return evaluate_facts(t, tr, facts, progress=step, only=contracts)


def _paths(terms: str | Path | Sequence[str | Path]) -> list[str | Path]:
    if isinstance(terms, (str, Path)):
        return [terms]
    return list(terms)


def evaluate_facts(
    terms: Terms,
    trace: Trace,
    facts: Facts,
    *,
    progress: Progress | None = None,
    only: Sequence[str] | None = None,
) -> Evaluation:
    """Evaluate already-derived facts (shared by ``compare`` and attribution)."""
    step = progress or (lambda _msg: None)
    _check_chosen(terms, only)
    allocations, runs = facts.collect()
    chosen = [c for c in terms.contracts if only is None or c.name in only]
    _check_against_trace(terms, chosen, allocations)
    budgets = [(b, _source_of(terms, b)) for b in terms.budgets]
    results = []
    for contract in chosen:
        step(f"evaluating {contract.name}")
        results.append(
            evaluate_contract(
                contract,
                allocations,
                runs,
                budgets,
                _source_of(terms, contract),
                file=_file_of(terms, contract),
            )
        )
    return Evaluation(
        tuple(results),
        terms.budgets,
        trace,
        (*terms.warnings, *trace.warnings),
        terms.sources,
    )


def _check_chosen(terms: Terms, only: Sequence[str] | None) -> None:
    """Every contract asked for by name exists: a misspelt `--contract` must not evaluate
    nothing and report every budget met."""
    names = [c.name for c in terms.contracts]
    if not names:
        raise ContractlangError(
            [
                error(
                    "E502",
                    "the terms define no contract, so there is nothing to evaluate",
                    NO_SPAN,
                    file="contractlang",
                    help="give at least one `.spot` file with a `contract` block "
                    "(budgets apply to the contracts evaluated with them)",
                )
            ],
            terms.sources,
        )
    unknown = [n for n in only or () if n not in names]
    if not unknown:
        return
    diags = []
    for name in unknown:
        guess = did_you_mean(name, names)
        listing = ", ".join(f"`{n}`" for n in names) or "none"
        diags.append(
            error(
                "E502",
                f"the terms have no contract `{name}`",
                NO_SPAN,
                file="contractlang",
                help=f"did you mean `{guess}`?" if guess else f"the contracts are: {listing}",
            )
        )
    raise ContractlangError(diags, terms.sources)


def _source_of(terms: Terms, item: ast.Contract | ast.Budget) -> str | None:
    for f in terms.files:
        if any(i is item for i in f.items):
            src = terms.sources.get(f.name)
            return src.text if src else None
    return None


def _file_of(terms: Terms, item: ast.Contract | ast.Budget) -> str:
    for f in terms.files:
        if any(i is item for i in f.items):
            return f.name
    return "<input>"


def _check_against_trace(
    terms: Terms, contracts: Sequence[ast.Contract], allocations: pl.DataFrame
) -> None:
    """What the checker cannot know: trace columns exist and are numeric (E403/E404), and
    budgets share the contract's currency (E402)."""
    diags: list[Diagnostic] = []
    extras = sorted(
        c[len(TRACE_PREFIX) :] for c in allocations.columns if c.startswith(TRACE_PREFIX)
    )
    for contract in contracts:
        file = _file_of(terms, contract)
        for node in _contract_nodes(contract):
            if not isinstance(node, ast.TraceColumn):
                continue
            col = TRACE_PREFIX + node.column
            if col not in allocations.columns:
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
                        f"trace column `{node.column}` holds {allocations.schema[col]} values, "
                        "not numbers",
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
                            file=_file_of(terms, budget),
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


def evaluate_contract(
    contract: ast.Contract,
    allocations: pl.DataFrame,
    run_facts: pl.DataFrame,
    budgets: Sequence[tuple[ast.Budget, str | None]],
    source_text: str | None,
    *,
    file: str = "<input>",
) -> ContractResult:
    """One contract over collected facts; ``budgets`` pairs each budget with its source text."""
    s = read_settings(contract)
    lf, plan = apply_contract(allocations.lazy(), contract, s, source_text)
    wide = _collect_amounts(lf, contract, file, source_text)
    _check_priced(contract, wide, file, source_text)
    warnings = _negative_credit_warnings(wide, plan, file)

    per_run = wide.group_by("run_id").agg(
        gross_minor=pl.col("charge_minor").sum(),
        credit_lines_minor=pl.sum_horizontal(
            [pl.col(t.column).fill_null(0) for t in plan.credits] or [pl.lit(0, pl.Int64)]
        ).sum(),
        alloc_cap_minor=pl.sum_horizontal(
            [pl.col(t.column) for t in plan.caps] or [pl.lit(0, pl.Int64)]
        ).sum(),
        pool_minor=pl.col("credit_pool_minor").sum(),
        billable_gpu_us=(pl.col("gpus") * pl.col("billable_us")).sum(),
        excluded_gpu_us=(pl.col("gpus") * (pl.col("runtime_us") - pl.col("remaining_us"))).sum(),
    )
    runs = run_facts.join(per_run, on="run_id", how="left").with_columns(
        pl.col(
            "gross_minor",
            "credit_lines_minor",
            "alloc_cap_minor",
            "pool_minor",
            "billable_gpu_us",
            "excluded_gpu_us",
        ).fill_null(0),
        settle_month=s.billing_month(pl.col("last_end")),
    )
    caps_at: dict[str, list[tuple[ast.Cap, str]]] = {"run": [], "month": [], "contract": []}
    for c in contract.clauses:
        if isinstance(c, ast.Cap) and c.level in caps_at:
            caps_at[c.level].append((c, term_label(c, source_text)))
    runs, run_cuts = apply_run_caps(runs, caps_at["run"], s)
    runs, month_cuts = apply_pooled_caps(runs, caps_at["month"], "month", s)
    runs, contract_cuts = apply_pooled_caps(runs, caps_at["contract"], "contract", s)
    cuts = (*run_cuts, *month_cuts, *contract_cuts)
    above = pl.sum_horizontal([pl.col(c.column) for c in cuts])
    runs = runs.with_columns(
        cap_cuts_minor=pl.col("alloc_cap_minor") + above,
    ).with_columns(
        net_minor=pl.col("gross_minor") - pl.col("credit_lines_minor") + pl.col("cap_cuts_minor")
    )
    runs = _money_facts(runs, s)

    budget_results = tuple(evaluate_budget(b, runs, text) for b, text in budgets)
    return ContractResult(
        contract=contract,
        settings=s,
        plan=plan,
        allocations=wide,
        runs=runs,
        run_cuts=cuts,
        budgets=budget_results,
        totals=_totals(runs, wide),
        promises=_promises(wide, s),
        warnings=tuple(warnings),
        source_text=source_text,
    )


def _collect_amounts(
    lf: pl.LazyFrame, contract: ast.Contract, file: str, source_text: str | None
) -> pl.DataFrame:
    """Collect a contract's allocation columns; an amount beyond the 38 digits of exact decimal
    arithmetic (20 after the point) is a clean error (E405), not an internal one."""
    try:
        return lf.collect()
    except pl.exceptions.InvalidOperationError as exc:
        if "decimal" not in str(exc):
            raise
        raise ContractlangError(
            [
                error(
                    "E405",
                    f"contract `{contract.name}` computes an amount too large to keep exactly",
                    contract.name_span,
                    file=file,
                    help="exact amounts hold 18 digits before the point: an allocation's rate "
                    "× GPUs × billed microseconds must stay below 10^18; split longer "
                    "allocations",
                )
            ],
            {file: Source(file, source_text)} if source_text is not None else {},
        ) from None


def _money_facts(runs: pl.DataFrame, s: Settings) -> pl.DataFrame:
    """The per-run facts budgets read, under their fact names and exact types."""

    def money(col: str) -> pl.Expr:
        return pl.col(col).cast(dec(s.precision)) / pl.lit(s.minor, dtype=dec(0))

    return runs.with_columns(
        gross=money("gross_minor"),
        credits=-money("credit_lines_minor"),
        cap_cuts=money("cap_cuts_minor"),
        net=money("net_minor"),
        billable_gpu_time=pl.duration(microseconds=pl.col("billable_gpu_us")),
        excluded_gpu_time=pl.duration(microseconds=pl.col("excluded_gpu_us")),
    ).with_columns(
        cost_per_accepted_run=pl.when(pl.col("accepted")).then(pl.col("net")).otherwise(None)
    )


def _totals(runs: pl.DataFrame, wide: pl.DataFrame) -> Totals:
    def total(expr: pl.Expr) -> int:
        value = runs.select(expr.sum()).item()
        return int(value or 0)

    costs = runs["cost_per_accepted_run"]
    dist: dict[str, Fraction | None] = {
        "p50": exact_percentile(costs, Fraction(1, 2)),
        "p95": exact_percentile(costs, Fraction(95, 100)),
        "max": exact_percentile(costs, Fraction(1)),
    }
    return Totals(
        runs=runs.height,
        accepted_runs=total(pl.col("accepted").cast(pl.Int64)),
        allocations=wide.height,
        metered_gpu_us=total(pl.col("metered_gpu_time").dt.total_microseconds()),
        excluded_gpu_us=total(pl.col("excluded_gpu_us")),
        billable_gpu_us=total(pl.col("billable_gpu_us")),
        lost_gpu_us=total(pl.col("lost_gpu_time").dt.total_microseconds()),
        lost_steps=total(pl.col("lost_steps")),
        gross_minor=total(pl.col("gross_minor")),
        credits_minor=-total(pl.col("credit_lines_minor")),
        cap_cuts_minor=total(pl.col("cap_cuts_minor")),
        net_minor=total(pl.col("net_minor")),
        cost_per_accepted_run=dist,
    )


def _promises(wide: pl.DataFrame, s: Settings) -> PromiseBreaches:
    notice = s.promises_us.get("notice")
    restart = s.promises_us.get("restart")
    reclaimed = wide.filter(pl.col("end_reason") == "reclaimed")
    lead = reclaimed["notice_lead"].dt.total_microseconds()
    ended = wide.filter(pl.col("end_reason").is_in(["reclaimed", "failed"]))
    wait = ended["replacement_wait"].dt.total_microseconds()
    replaced = wait.drop_nulls()
    return PromiseBreaches(
        notice_us=notice,
        reclaims=reclaimed.height,
        notice_breaches=int((lead < notice).sum()) if notice is not None else 0,
        shortest_notice_us=_opt_int(lead.min()),
        restart_us=restart,
        replacements=replaced.len(),
        restart_breaches=int((replaced > restart).sum()) if restart is not None else 0,
        never_replaced=wait.null_count(),
        longest_wait_us=_opt_int(replaced.max()),
    )


def _opt_int(v: object) -> int | None:
    return None if v is None else int(v)  # type: ignore[call-overload]


def _check_priced(
    contract: ast.Contract, wide: pl.DataFrame, file: str, source_text: str | None
) -> None:
    unpriced = wide.filter(pl.col("rate_index").is_null() & (pl.col("billable_us") > 0))
    if unpriced.height == 0:
        return
    rows = unpriced.head(MAX_NAMED).to_dicts()
    named = "; ".join(
        f"`{r['alloc_id']}` of run `{r['run_id']}` ({r['capacity']}, {r['sku']})" for r in rows
    )
    more = unpriced.height - len(rows)
    tail = f" and {more} more" if more else ""
    raise ContractlangError(
        [
            error(
                "E401",
                f"contract `{contract.name}` prices no rate for {unpriced.height} "
                f"allocation(s): {named}{tail}",
                contract.name_span,
                file=file,
                help="add a rate whose condition holds for them (a rate without `when` "
                "prices everything left)",
            )
        ],
        {file: Source(file, source_text)} if source_text is not None else {},
    )


def _negative_credit_warnings(
    wide: pl.DataFrame, plan: AllocationPlan, file: str
) -> list[Diagnostic]:
    out = []
    for t in plan.credits:
        raw = t.column.removesuffix("_minor")
        n = int(wide.select((pl.col(raw) < 0).fill_null(False).sum()).item())
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
