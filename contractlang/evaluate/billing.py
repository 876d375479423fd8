"""One contract applied to every allocation: steps (2)–(6) of the order of evaluation
(docs/evaluate.md, "Order of evaluation").

(2) whole-allocation exclusions, (3) duration exclusions, (4) increment and minimum,
(5) first matching rate → ``charge`` (and ``replayed_cost``), (6) credits; the allocation caps
of step (7) follow in :mod:`contractlang.evaluate.caps`, and :mod:`contractlang.evaluate.stages`
runs them in order. The result extends the allocation facts with one column per term, so the
ledger, the run sums and ``explain`` read the same numbers. Money before rounding is
``Decimal(38, 20)``; each ledger line is rounded once into integer *minor units* (cents), and
everything after — pools, caps, sums — is exact integer arithmetic.

Columns added: ``runtime_us``; ``excluded_by`` (index of the whole-allocation exclusion that
applies, or null); ``excl_<j>_us`` per duration exclusion; ``billable_us`` and
``billable_time``; ``rate_index`` and ``price_per_gpu_hour`` of the rate that applies;
``charge`` and ``replayed_cost`` (Decimal 38,20); ``charge_minor``; ``credit_<m>`` (Decimal
38,20, null where the credit does not apply) and ``credit_<m>_minor``; ``credit_pool_minor``,
the sum of the credits (before caps).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from decimal import Decimal
from fractions import Fraction

import polars as pl

from contractlang.compile import Env, compile_expr, condition
from contractlang.decimals import (
    MICROS,
    MONEY_SCALE,
    Arithmetic,
    Val,
    align,
    dec,
    lit_decimal,
    mul,
    to_micros,
    to_money,
)
from contractlang.evaluate.contract_run import ContractClauses, ContractRun
from contractlang.evaluate.plan import Term
from contractlang.evaluate.settings import Settings, round_up
from contractlang.lang import ast
from contractlang.lang.numbers import INT64_MAX, MICROS_PER_HOUR


def minor_units(expr: pl.Expr, s: Settings) -> pl.Expr:
    """Round a high-precision amount once, to the currency's minor unit, as an integer."""
    rounded = expr.round(s.precision, mode=s.polars_round_mode)  # type: ignore[arg-type]
    return (rounded * pl.lit(s.minor, dtype=dec(0))).cast(pl.Int64)


def price_times_time(per_gpu: Val, us: pl.Expr, arithmetic: Arithmetic) -> pl.Expr:
    """``per_gpu`` (money per GPU and unit of time, with its factor) × ``us`` microseconds, as
    money at :data:`MONEY_SCALE`, exact, without any intermediate wider than one unit of the
    price's own time.

    With ``f`` the factor per microsecond written ``n/d``, ``us = w·d + r`` (``0 <= r < d``):
    ``p·us·n/d = p·w·n + p·r·n/d``. The first term is exact at ``p``'s scale (at most
    :data:`MONEY_SCALE` places), so it passes through the rounding of the second unchanged —
    the sum is the same number, at the same 20 places, as ``p·us·n/d`` computed whole, but
    ``p·us`` need not fit 18 integer digits (10,000 GPUs for a year at 3.50 USD per GPU-hour is
    1.1 × 10^18 GPU-µs·USD; ``p·w`` is 3.1 × 10^8).

    A ``d`` longer than an hour comes from a price whose factor keeps divisions by constants
    exactly (``trace.price per gpu_hour / 1.15 / 53.34``, ``gpu_time × 1 USD / gpus² /
    hours²``): the rest ``r`` then reaches as far as ``d`` (past every ``us`` when ``d`` is
    beyond 64 bits, where polars would read ``us // d`` as none), and ``p·r`` can pass 38
    digits for a ``p`` that is not large. Where it could (``|p| × d`` beyond them), the row
    takes the price per GPU-hour instead, held at :data:`MONEY_SCALE` places (rounded once,
    as ``price_per_gpu_hour`` is), split at whole hours as above."""
    d = (per_gpu.factor * MICROS).denominator
    if d <= MICROS_PER_HOUR:
        return _split_at(per_gpu, us, d, arithmetic)
    fits = per_gpu.expr.abs() < _digits(10**38 // d, per_gpu.scale)
    zero = pl.lit(0, dtype=dec(per_gpu.scale))
    exact = _split_at(
        replace(per_gpu, expr=pl.when(fits).then(per_gpu.expr).otherwise(zero)), us, d, arithmetic
    )
    per_hour = Val(per_gpu.expr, "num", per_gpu.scale, per_gpu.factor * 3600)
    hourly = to_money(per_hour, arithmetic)
    hourly = pl.when(fits).then(pl.lit(0, dtype=dec(MONEY_SCALE))).otherwise(hourly)
    held = Val(hourly, "num", MONEY_SCALE, Fraction(1, 3600))
    by_hour = _split_at(held, us, MICROS_PER_HOUR, arithmetic)
    return pl.when(fits).then(exact).otherwise(by_hour)


def _split_at(per_gpu: Val, us: pl.Expr, d: int, arithmetic: Arithmetic) -> pl.Expr:
    """``per_gpu × us`` as ``p·w·n + p·r·n/d`` (:func:`price_times_time`)."""
    if d > INT64_MAX:  # past every `us`: w = 0
        whole = pl.lit(0, dtype=dec(0))
        rest = us.cast(dec(0))
    else:
        whole = (us // d).cast(dec(0))
        rest = (us % d).cast(dec(0))
    exact = mul(per_gpu, Val(whole, "num", 0, d * MICROS))  # factor f·d = n: no division
    tail = mul(per_gpu, Val(rest, "num", 0, MICROS))
    return to_money(exact, arithmetic) + to_money(tail, arithmetic)


def _digits(m: int, scale: int) -> pl.Expr:
    """The decimal whose digits are ``m`` (below 10^38) at ``scale`` places."""
    return pl.lit(Decimal(m).scaleb(-scale), dtype=dec(scale))


def _env(lf: pl.LazyFrame, s: Settings) -> Env:
    return Env(columns=dict(lf.collect_schema()), promises=s.promise_exprs)


def apply_exclusions(
    facts: pl.LazyFrame, run: ContractRun
) -> tuple[pl.LazyFrame, tuple[Term, ...], tuple[Term, ...]]:
    """Steps (2) and (3): ``runtime_us``, ``excluded_by``, ``excl_<j>_us`` and what remains,
    ``remaining_us``; the whole-allocation and the duration exclusion terms."""
    c = run.clauses
    env = _env(facts, run.settings)
    whole, durs = c.whole, c.durations
    # (2) whole-allocation exclusions: the first that applies names the line
    excluded_by: pl.Expr = pl.lit(None, dtype=pl.Int32)
    for i in reversed(range(len(whole))):
        excluded_by = (
            pl.when(condition(whole[i].when, env)).then(pl.lit(i, pl.Int32)).otherwise(excluded_by)
        )
    lf = facts.with_columns(
        runtime_us=pl.col("runtime").dt.total_microseconds(), excluded_by=excluded_by
    )

    # (3) duration exclusions, in file order, each taking what remains (never below 0)
    lf = lf.with_columns(
        remaining_us=pl.when(pl.col("excluded_by").is_null())
        .then(pl.col("runtime_us"))
        .otherwise(0)
    )
    dur_terms = []
    for j, x in enumerate(durs):
        col = f"excl_{j}_us"
        wanted = to_micros(compile_expr(x.duration, env), run.arithmetic)
        wanted = wanted.fill_null(0).clip(lower_bound=0)
        applies = condition(x.when, env)
        removed = pl.when(applies).then(pl.min_horizontal(wanted, pl.col("remaining_us")))
        lf = lf.with_columns(removed.otherwise(0).alias(col)).with_columns(
            remaining_us=pl.col("remaining_us") - pl.col(col)
        )
        dur_terms.append(Term("exclusion", c.label(x), x.span.line, col, j, x))
    whole_terms = tuple(
        Term("exclusion", c.label(x), x.span.line, "excluded_by", i, x) for i, x in enumerate(whole)
    )
    return lf, whole_terms, tuple(dur_terms)


def apply_billable(lf: pl.LazyFrame, s: Settings) -> pl.LazyFrame:
    """Step (4): ``billable_us`` and ``billable_time``, the increment and the minimum applied
    to what the exclusions left."""
    inc, minimum = s.increment_us, s.minimum_us
    rounded = round_up(pl.col("remaining_us"), inc)
    billable = (
        pl.when(pl.col("excluded_by").is_not_null() | (rounded <= 0))
        .then(0)
        .otherwise(pl.max_horizontal(rounded, pl.lit(minimum, pl.Int64)))
    )
    return lf.with_columns(billable_us=billable).with_columns(
        billable_time=pl.duration(microseconds=pl.col("billable_us"))
    )


def pick_rate(
    lf: pl.LazyFrame, c: ContractClauses, s: Settings, *, chosen: bool = False
) -> tuple[pl.LazyFrame, Val]:
    """``rate_index`` and ``_price``: the first rate whose condition holds and whose price is
    not none. The prices are brought to one factor and scale and the applicable one picked
    (the returned value reads ``_price``). ``chosen``: ``lf`` already holds this contract's
    ``rate_index`` (a variant that changes no rate's condition), so only the price is read."""
    env = _env(lf, s)
    rates = c.rates
    prices = [compile_expr(r.price, env) for r in rates]
    aligned, factor, scale = align(prices)
    rate_index: pl.Expr = pl.lit(None, dtype=pl.Int32)
    picked: pl.Expr = pl.lit(None, dtype=dec(scale))
    for k in reversed(range(len(rates))):
        if chosen:
            ok = pl.col("rate_index") == k
        else:
            ok = condition(rates[k].when, env) & prices[k].expr.is_not_null()
            rate_index = pl.when(ok).then(pl.lit(k, pl.Int32)).otherwise(rate_index)
        picked = pl.when(ok).then(aligned[k].cast(dec(scale))).otherwise(picked)
    if chosen:
        return lf.with_columns(_price=picked), Val(pl.col("_price"), "num", scale, factor)
    lf = lf.with_columns(rate_index=rate_index, _price=picked)
    return lf, Val(pl.col("_price"), "num", scale, factor)


def apply_rates(lf: pl.LazyFrame, run: ContractRun) -> tuple[pl.LazyFrame, tuple[Term, ...]]:
    """Step (5): the first rate whose condition holds and whose price is not none, its price
    (times ``run.multiplier``, when given; ``run.price_places``: how many decimal places the
    prices need), ``charge``, ``replayed_cost`` and
    ``charge_minor``. With a multiplier, ``lf`` holds the rates chosen at m = 1 (the
    multiplier changes no rate's condition, nor whether its price is none)."""
    c, s, multiplier, places = run.clauses, run.settings, run.multiplier, run.price_places
    lf, price = pick_rate(lf, c, s, chosen=multiplier is not None)
    factor = price.factor
    rate_terms = tuple(
        Term("charge", c.label(r), r.span.line, "charge_minor", k, r) for k, r in enumerate(c.rates)
    )
    if places is not None and places < price.scale:
        price = Val(price.expr.cast(dec(places)), "num", places, factor)
    if multiplier is not None:
        m, m_scale = lit_decimal(multiplier)
        price = mul(price, Val(m, "num", m_scale))
    per_gpu = mul(price, Val(pl.col("gpus").cast(dec(0)), "num", 0))
    arithmetic = run.arithmetic
    money = {
        "price_per_gpu_hour": to_money(
            Val(price.expr, "num", price.scale, factor * 3600), arithmetic
        ),
        "charge": price_times_time(per_gpu, pl.col("billable_us"), arithmetic),
    }
    if _reads(c.credits, "replayed_cost"):
        replay_us = pl.min_horizontal(
            pl.col("replayed_time").dt.total_microseconds(), pl.col("billable_us")
        )
        money["replayed_cost"] = price_times_time(per_gpu, replay_us, arithmetic)
    else:  # no term reads it: not worth a column of decimal products
        money["replayed_cost"] = pl.lit(None, dtype=dec(MONEY_SCALE))
    lf = lf.with_columns(**money).drop("_price")
    lf = lf.with_columns(charge_minor=minor_units(pl.col("charge"), s).fill_null(0))
    return lf, rate_terms


def apply_credits(lf: pl.LazyFrame, run: ContractRun) -> tuple[pl.LazyFrame, tuple[Term, ...]]:
    """Step (6): each credit a money amount where its condition holds (below zero counts as
    zero), ``credit_<m>`` and ``credit_<m>_minor`` (their sum, the pool, is
    :func:`credit_pool`). Only the credits in ``run.credits_reaching`` (all when none) are
    computed: the others' columns are none."""
    c, s, only = run.clauses, run.settings, run.credits_reaching
    env = _env(lf, s)
    credit_terms = []
    for m, x in enumerate(c.credits):
        col = f"credit_{m}"
        credit_terms.append(Term("credit", c.label(x), x.span.line, f"{col}_minor", m, x))
        if only is not None and m not in only:
            none = pl.lit(None, dtype=dec(MONEY_SCALE)), pl.lit(None, dtype=pl.Int64)
            lf = lf.with_columns(none[0].alias(col), none[1].alias(f"{col}_minor"))
            continue
        amount = to_money(compile_expr(x.amount, env), run.arithmetic)
        value = pl.when(condition(x.when, env)).then(amount).otherwise(None)
        lf = lf.with_columns(value.alias(col))
        zero = pl.lit(0, dtype=dec(MONEY_SCALE))
        clipped = pl.max_horizontal(pl.col(col), zero)
        lf = lf.with_columns(
            pl.when(pl.col(col).is_null())
            .then(None)
            .otherwise(minor_units(clipped, s))
            .alias(f"{col}_minor")
        )
    return lf, tuple(credit_terms)


def credit_pool(terms: Sequence[Term]) -> pl.Expr:
    """The sum of the credit lines of ``terms`` (an allocation's pool before its caps)."""
    pool: pl.Expr = pl.lit(0, pl.Int64)
    for t in terms:
        pool = pool + pl.col(t.column).fill_null(0)
    return pool


def _reads(clauses: Sequence[ast.Credit], fact: str) -> bool:
    """Whether any of ``clauses`` reads ``fact``."""
    return any(ast.reads(e, fact) for c in clauses for e in (c.amount, c.when))
