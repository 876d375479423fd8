"""`contractlang explain`: every line of one run's bill, with the facts and the term behind it,
in words a procurement analyst follows. Plain text (no markup), so it can be kept as a golden
file and pasted into a ticket."""

from __future__ import annotations

from datetime import datetime, timedelta
from decimal import Decimal
from fractions import Fraction
from typing import Any

import polars as pl

from contractlang.diagnostics import did_you_mean, printable
from contractlang.evaluate.results import ContractResult, Evaluation
from contractlang.lang import ast
from contractlang.lang.numbers import micros, plain, round_fraction
from contractlang.lang.show import source_text
from contractlang.render.common.numbers import (
    duration_human,
    gpu_hours_str,
    money,
)


class ExplainError(LookupError):
    """The run or allocation asked for is not in the trace; ``help`` suggests what is."""

    def __init__(self, message: str, help: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.help = help


def _src(node: ast.Expr | ast.Clause | None, text: str | None) -> str:
    return "" if node is None else source_text(node.span, text) or ""


def _ts(v: datetime | None) -> str:
    return "none" if v is None else v.strftime("%Y-%m-%d %H:%M:%S UTC")


def _us(v: timedelta | None) -> int | None:
    """A timedelta as exact microseconds."""
    if v is None:
        return None
    return micros(v)


def explain_runs(result: Evaluation, run_id: str, alloc_id: str | None = None) -> str:
    """The bill of one run (or one of its allocations) under every contract evaluated."""
    return "\n".join(explain_run(c, run_id, alloc_id) for c in result.contracts)


def select(
    r: ContractResult, run_id: str, alloc_id: str | None = None
) -> tuple[dict[str, Any], pl.DataFrame]:
    """One run's row of the per-run figures and its allocations (or the one asked for), in
    attempt order. Raises :class:`ExplainError` when the trace has no such run, or the run no
    such allocation, with a suggestion of what it has."""
    allocs = r.run_allocations(run_id)
    runs = r.runs.filter(pl.col("run_id") == run_id)
    if runs.height == 0:
        known = r.runs["run_id"].to_list()
        guess = did_you_mean(run_id, known)
        raise ExplainError(
            f"run `{run_id}` is not in the trace",
            help=f"did you mean `{guess}`?" if guess else None,
        )
    if alloc_id is not None:
        names = allocs["alloc_id"].to_list()
        allocs = allocs.filter(pl.col("alloc_id") == alloc_id)
        if allocs.height == 0:
            raise ExplainError(
                f"run `{run_id}` has no allocation `{alloc_id}`",
                help="its allocations: " + ", ".join(f"`{a}`" for a in names),
            )
    return runs.row(0, named=True), allocs


def explain_run(r: ContractResult, run_id: str, alloc_id: str | None = None) -> str:
    """The bill of one run (or one of its allocations) under one contract, as text
    (:func:`select` says which run)."""
    run, allocs = select(r, run_id, alloc_id)
    s = r.settings
    cur = s.currency

    def m(minor: int) -> str:
        return money(minor, s.precision, cur)

    out: list[str] = []
    out.append(f'run {run_id} under contract "{r.name}"')
    accepted = "accepted" if run["accepted"] else "not accepted"
    tta = run["time_to_accept"]
    out.append(
        f"  {accepted}"
        + (f" after {duration_human(_us(tta))}" if tta is not None else "")
        + f"; {run['allocations']} allocation(s), {run['reclaims']} reclaim(s), "
        f"{run['failures']} failure(s); settles in {run['settle_month'] or 'no month'}"
    )
    for row in allocs.iter_rows(named=True):
        out.append("")
        out.extend(_allocation(r, row, m))
    if alloc_id is None:
        out.append("")
        out.extend(_run_totals(r, run, m))
    # Each line is escaped on its own: a control character or line break inside a trace
    # value (a run ID, say) is shown, not obeyed, and cannot forge a line of the bill.
    return "\n".join(printable(line) for line in out) + "\n"


def _allocation(r: ContractResult, a: dict[str, Any], m: Any) -> list[str]:
    s = r.settings
    text = r.source_text
    lines = [
        f"allocation {a['alloc_id']} (attempt {a['attempt']}): {a['gpus']} × {a['sku']} "
        f"{a['capacity']} in {a['zone']}",
        f"  ran {_ts(a['start'])} → {_ts(a['end'])}: {duration_human(a['runtime_us'])} "
        f"({gpu_hours_str(a['gpus'] * a['runtime_us'])} GPU-hours); ended {a['end_reason']}",
    ]
    if a["end_reason"] == "reclaimed":
        lead = _us(a["notice_lead"])
        promise = s.promises_us.get("notice")
        said = "no notice" if not lead else f"notice {duration_human(lead)} before the end"
        if promise is not None and lead is not None:
            kept = "kept" if lead >= promise else "breached"
            said += f" (promised {duration_human(promise)}: {kept})"
        lines.append(f"  {said}")
    if a["end_reason"] in ("reclaimed", "failed"):
        wait = _us(a["replacement_wait"])
        promise = s.promises_us.get("restart")
        if wait is None:
            said = "never replaced"
        else:
            said = f"replacement started {duration_human(wait)} later"
            if promise is not None:
                kept = "kept" if wait <= promise else "breached"
                said += f" (promised within {duration_human(promise)}: {kept})"
        lines.append(f"  {said}")
        ckpt = a["last_checkpoint_at"]
        where = (
            f"last valid checkpoint {_ts(ckpt)} (step {a['last_checkpoint_step']})"
            if ckpt is not None
            else "no valid checkpoint"
        )
        steps = a["replayed_steps"]
        lines.append(
            f"  {where}; replayed {duration_human(_us(a['replayed_time']))}"
            + (f", {steps:,} steps" if steps is not None else "")
            + " of work lost"
        )
    plan = r.plan
    if a["excluded_by"] is not None:
        t = plan.whole_exclusions[a["excluded_by"]]
        cond = _src(getattr(t.clause, "when", None), text)
        lines.append(
            f'  excluded whole by "{t.label}" (line {t.line}) because {cond}: '
            f"{gpu_hours_str(a['gpus'] * a['runtime_us'])} GPU-hours not charged"
        )
        lines.extend(_credits(r, a, m))
        return lines
    removed_total = 0
    for t in plan.duration_exclusions:
        removed = a[t.column]
        if removed:
            removed_total += removed
            cond = _src(getattr(t.clause, "when", None), text)
            lines.append(
                f'  exclusion "{t.label}" (line {t.line}) because {cond}: '
                f"{duration_human(removed)} not billed "
                f"({gpu_hours_str(a['gpus'] * removed)} GPU-hours)"
            )
    remaining, rounded = a["remaining_us"], a["rounded_us"]
    inc, minimum = s.increment_us, s.minimum_us
    parts = [f"runtime {duration_human(a['runtime_us'])}"]
    if removed_total:
        parts.append(f"− {duration_human(removed_total)} excluded = {duration_human(remaining)}")
    if rounded != remaining:
        parts.append(f"rounded up to whole {duration_human(inc)} → {duration_human(rounded)}")
    if a["billable_us"] != rounded:
        parts.append(
            f"raised to the {duration_human(minimum)} minimum → {duration_human(a['billable_us'])}"
        )
    lines.append(f"  billable time: {'; '.join(parts)}")
    if a["rate_index"] is None:
        lines.append("  not charged: nothing to bill")
    else:
        t = plan.rates[a["rate_index"]]
        price = Fraction(Decimal(a["price_per_gpu_hour"]))
        exact = Fraction(Decimal(a["charge"]))
        lines.append(
            f"  charge by `{t.label}` (line {t.line}): "
            f"{_price(price, s.precision)} {s.currency} per GPU-hour"
            f" × {a['gpus']:,} GPUs × "
            f"{duration_human(a['billable_us'])} = {plain(round_fraction(exact, 6))} → "
            f"{m(a['charge_minor'])}"
        )
    lines.extend(_credits(r, a, m))
    return lines


def _price(price: Fraction, precision: int) -> str:
    """A price per GPU-hour with the places it has (up to 6) and at least the currency's:
    ``2.10``, ``4.25``, ``2.125``."""
    shown = round_fraction(price, 6).normalize()
    exponent = shown.as_tuple().exponent
    places = -exponent if isinstance(exponent, int) and exponent < 0 else 0
    return plain(round_fraction(price, max(places, precision)))


def _credits(r: ContractResult, a: dict[str, Any], m: Any) -> list[str]:
    lines = []
    for t in r.plan.credits:
        raw = a[t.column.removesuffix("_minor")]
        if raw is None:
            continue
        cond = _src(getattr(t.clause, "when", None), r.source_text)
        amount = _src(getattr(t.clause, "amount", None), r.source_text)
        exact = Fraction(Decimal(raw))
        if exact < 0:
            result = ", below zero: counted as 0"
        else:
            result = f", a credit line of {m(-(a[t.column] or 0))}"
        lines.append(
            f'  credit "{t.label}" (line {t.line}) because {cond}: {amount} = '
            f"{plain(round_fraction(exact, 6))} {r.settings.currency}{result}"
        )
    for t in r.plan.caps:
        cut = a[t.column]
        if cut:
            lines.append(f"  cap `{t.label}` (line {t.line}) gives back {m(cut)}")
    return lines


def _run_totals(r: ContractResult, run: dict[str, Any], m: Any) -> list[str]:
    lines = [f"run totals: gross {m(run['gross_minor'])}, credits {m(-run['credit_lines_minor'])}"]
    for cut in r.run_cuts:
        amount = run[cut.column]
        if not amount:
            continue
        where = f"(line {cut.line})" if cut.line is not None else "(always applies)"
        name = cut.label if cut.clause is None else f"`{cut.label}`"  # the rule, not a clause
        share = " (this run's share of the cut)" if cut.level in ("month", "contract") else ""
        lines.append(f"  {cut.level} cap {name} {where} gives back {m(amount)}{share}")
    lines.append(f"  cap cuts {m(run['cap_cuts_minor'])}; net {m(run['net_minor'])}")
    return lines
