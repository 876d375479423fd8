"""A contract's bill at many price multipliers, exactly, for `compare`'s price to pass (design
§8): the allocations no credit can reach are priced for every multiplier in one pass of exact
integers, and only the others are evaluated again from the charge.

At multiplier m every rate's price is m times as written; credits' and caps' own money is
unchanged. Whether a credit applies can change with m only through the parts of its ``when``
that read a charge fact (``charge``, ``replayed_cost``): where a conjunct that reads none of
them is false (or none), the whole condition is false at every m (``false and x`` is false,
``none and x`` is none or false, and a condition that is none does not hold). So the
allocations split once, at the staged evaluation:

- *reachable*: all the charge-free conjuncts of at least one credit hold. These are evaluated
  at each m by the code of :func:`~contractlang.compare.variants.at_multiplier` (rates from
  the charge on, credits, allocation caps), in groups by the credits that can reach them: a
  credit that cannot reach an allocation is none there at every m, and is not computed;
- *the rest*: no credit line at any m, so the credit pool is 0 and an allocation cap cuts
  nothing (its limit is never below 0: checked, else this module declines). Their money is the
  charge line alone: ``round(n × m × f)`` with ``n`` = price × GPUs × billable µs an exact
  integer and ``f`` one exact fraction.

The decimal evaluation rounds the same exact value, once it has been held at 20 places (or at
the price's own places times the multiplier's, when those are more): within 2·10⁻²⁰ of it (one
cut of the tail's quotient and one of the cast to 20 places), so both round to the same line
unless the exact value lies within that distance of a rounding half without being on it. A
batch with a line within 10⁻¹⁸ of a half (checked exactly, in integers, where that can happen
at all: a denominator finer than 10⁻¹⁸ of the minor unit) is declined; so is a multiplier whose
places with the price's pass 20 (the cast would then cut the exact part too), and a batch whose
decimals could pass their 38 digits (:func:`_fits_decimals`), which the decimal evaluation
reports as E405 — declined, each multiplier is evaluated whole, which reports it. A multiplier
whose evaluation finds an amount too large (E405) is declined the same way, so the message
names the allocation or run the evaluation of the whole would name.

Both halves' sums per run, with the staged run sums' other columns (which m does not move),
are settled by the caps above the allocation as any evaluation is.

Example::

    >>> from fractions import Fraction
    >>> from contractlang import generate_trace, load_trace, derive_facts, terms_from_text
    >>> from contractlang.compare.variants import at_multiplier
    >>> from contractlang.evaluate.contract_run import ContractRun
    >>> from contractlang.evaluate.engine import stage_contract
    >>> terms = terms_from_text('''contract "c" { currency USD rate 2 USD per gpu_hour
    ...   credit "queue" 10% of charge when queue_wait > 1 minute }''')
    >>> allocations, runs = derive_facts(load_trace(generate_trace(20, seed=1))).collect()
    >>> run = ContractRun.of(terms.contracts[0], "c.spot", None)
    >>> staged = stage_contract(run, allocations, runs)
    >>> [(_, fast)] = prices_at(repricing(staged), [Fraction(3, 2)])
    >>> fast == at_multiplier(staged, Fraction(3, 2)).totals
    True
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import TYPE_CHECKING

import polars as pl

from contractlang.compare.variants import priceable
from contractlang.compile import Env, condition
from contractlang.decimals import MICROS, MONEY_SCALE, dec, lit_decimal
from contractlang.errors import ContractlangError
from contractlang.evaluate.billing import pick_rate
from contractlang.evaluate.caps import cap_percent
from contractlang.evaluate.contract_run import ContractClauses
from contractlang.evaluate.results import Totals
from contractlang.evaluate.settings import Settings
from contractlang.evaluate.stages import (
    Staged,
    amounts,
    charge,
    fit_sums,
    need,
    priced,
    through,
)
from contractlang.lang import ast
from contractlang.lang.exact import constant_value
from contractlang.lang.facts import FACTS, Stage

if TYPE_CHECKING:
    from polars._typing import PolarsIntegerType

#: The facts a price multiplier moves (design §6's charge stage).
CHARGE_FACTS = frozenset(n for n, f in FACTS.items() if f.stage == Stage.CHARGE)
#: The run sums a price multiplier moves; the others are the staged evaluation's.
MOVED = ("gross_minor", "credit_lines_minor", "alloc_cap_minor", "pool_minor")
#: The largest integer a charge numerator times a multiplier may reach (Int128, with room).
_INT128_ROOM = 2**125
#: … and below which 64-bit integers hold every step of the rounding.
_INT64_ROOM = 2**62
#: The most credits whose reach the split keeps as bits of one 64-bit integer (2⁰ … 2⁶²).
_MAX_CREDITS = 63
#: The most places of the minor unit the rounding argument holds for (a half then has at most
#: 19 places, within the 20 the decimals keep).
_MAX_PRECISION = 18
#: The row's position in the staged run sums (an integer key to group and join on).
_RUN = "_run_pos"


def reads_charge(expr: ast.Expr) -> bool:
    """Whether ``expr`` reads a fact a price multiplier moves.

    >>> from contractlang import terms_from_text
    >>> terms = terms_from_text('''contract "c" { currency USD rate 1 USD per gpu_hour
    ...   credit "x" 5 USD when gpus > 8 gpus and (charge > 5 USD or attempt > 1)
    ...                         and sku == "a" }''')
    >>> [reads_charge(e) for e in ast.conjuncts(terms.contracts[0].clauses[-1].when)]
    [False, True, False]
    """
    return any(isinstance(n, ast.Name) and n.name in CHARGE_FACTS for n in ast.walk(expr))


def may_apply(credit: ast.Credit, env: Env) -> pl.Expr:
    """True where ``credit`` can apply at some multiplier: its conjuncts that read no charge
    fact all hold (every conjunct that reads one may hold at some m)."""
    free = [c for c in ast.conjuncts(credit.when) if not reads_charge(c)]
    return pl.all_horizontal([condition(c, env) for c in free]) if free else pl.lit(True)


#: The reachable allocations are evaluated in groups by the credits that can reach them: the
#: largest groups each alone, the rest together (with every credit that can reach one of them).
GROUPS = 4


@dataclass(frozen=True)
class Repricing:
    """A staged contract split for the price search: the allocations a credit may reach, in
    groups by the credits that can, and the others' exact charge numerators (see the module's
    docstring)."""

    staged: Staged
    #: the decimal places the picked prices need (:func:`~.variants.priceable`)
    places: int
    #: (the credits that can reach them, the staged allocations' rows with the run's position)
    reachable: tuple[tuple[frozenset[int], pl.DataFrame], ...]
    numerators: pl.DataFrame  # the rest: the run's position and ``n`` (Int128)
    high: int  # the largest ``n``
    base: Fraction  # ``f``: a charge line at m is ``n × m × f``, rounded
    #: the rest's largest price × GPUs (the price an integer of its places) and billable µs
    price_gpus: int
    longest_us: int
    #: the price's per-µs factor (``n/d``: a billable time's remainder modulo ``d`` is the
    #: decimal evaluation's tail)
    per_us: Fraction

    @property
    def reachable_rows(self) -> int:
        return sum(frame.height for _, frame in self.reachable)


def repricing(staged: Staged) -> Repricing | None:
    """``staged`` split for :func:`prices_at`, or ``None`` where the integer pass cannot be
    exact or the split cannot be kept: a negative price (a negative charge numerator), a
    numerator that could pass 128 bits (largest price × largest GPUs × longest billable time),
    a price beyond the decimals at its places, an allocation cap whose limit could be below 0
    (the checker refuses that, E209), more credits than the bits of a 64-bit integer hold, or
    a precision past 18 places. Then each multiplier is evaluated whole."""
    s = staged.run.settings
    if not all(_never_negative(cap) for cap, _ in staged.run.caps["allocation"]):
        return None
    c = staged.run.clauses
    if len(c.credits) > _MAX_CREDITS or s.precision > _MAX_PRECISION:
        return None
    staged = priceable(staged)
    places = need(staged.run.price_places, "the prices' places")
    positions = need(staged.sums, "the runs' sums").select("run_id").with_row_index(_RUN)
    allocations = need(staged.wide, "the allocations' amounts")
    wide = allocations.join(positions, on="run_id", how="left", maintain_order="left")
    env = Env(columns=dict(wide.schema), promises=s.promise_exprs)
    # which credits can reach each allocation, as bits: credit k is 2^k
    reach = pl.sum_horizontal(
        [may_apply(x, env).cast(pl.Int64) * (1 << k) for k, x in enumerate(c.credits)]
        or [pl.lit(0, pl.Int64)]
    )
    try:
        flagged = wide.with_columns(_reach=reach)
    except pl.exceptions.PolarsError:  # a conjunct that cannot be read alone: no split
        return None
    free = flagged.filter(pl.col("_reach") == 0).lazy()
    lf, base, units, per_us = _numerator(free, s, c, places)
    try:
        parts = lf.select(_RUN, units.alias("_units"), "gpus", "billable_us").collect()
    except pl.exceptions.PolarsError:  # a price beyond the decimals at its places
        return None
    low, top, gpus, longest = parts.select(
        pl.col("_units").min().alias("low"),
        pl.col("_units").max().alias("top"),
        pl.col("gpus").max(),
        pl.col("billable_us").max(),
    ).row(0)
    low, top, gpus, longest = low or 0, top or 0, gpus or 0, longest or 0
    # n = price × GPUs × µs is taken in 128 bits, which wrap: bound it by the largest of each
    price_gpus = top * gpus
    if low < 0 or price_gpus * longest >= _INT128_ROOM:
        return None
    n = pl.col("_units") * pl.col("gpus").cast(pl.Int128) * pl.col("billable_us").cast(pl.Int128)
    numerators = parts.select(_RUN, n.fill_null(0).alias("n"))
    (high,) = numerators.select(pl.col("n").max()).row(0)
    groups = _groups(flagged.filter(pl.col("_reach") != 0))
    return Repricing(
        staged, places, groups, numerators, int(high or 0), base, price_gpus, longest, per_us,
    )  # fmt: skip


def _groups(reached: pl.DataFrame) -> tuple[tuple[frozenset[int], pl.DataFrame], ...]:
    """The reachable allocations in at most :data:`GROUPS` groups by the credits that can
    reach them (``_reach``, as bits): each of the largest alone, the rest together."""
    if reached.height == 0:
        return ()
    counts = reached["_reach"].value_counts(sort=True, name="count")
    codes = counts["_reach"].to_list()
    alone, together = codes[: GROUPS - 1], codes[GROUPS - 1 :]
    out = []
    for code in alone:
        out.append((code, reached.filter(pl.col("_reach") == code)))
    if together:
        union = functools.reduce(operator.or_, together)
        out.append((union, reached.filter(pl.col("_reach").is_in(together))))
    return tuple(
        (frozenset(k for k in range(code.bit_length()) if code >> k & 1), frame.drop("_reach"))
        for code, frame in out
    )


def prices_at(
    rep: Repricing | None, multipliers: Sequence[Fraction]
) -> list[tuple[pl.DataFrame, Totals]] | None:
    """The settled runs and totals at each of ``multipliers`` — exactly those of
    :func:`~contractlang.compare.variants.at_multiplier` — or ``None`` where the integer pass
    would not be exact (a charge too large for it: then each is evaluated whole, and reports
    what is out of range)."""
    if rep is None or not multipliers:
        return None
    if not _fits_decimals(rep, multipliers) or any(
        rep.places + lit_decimal(m)[1] > MONEY_SCALE for m in multipliers
    ):
        return None
    factors = [rep.base * m for m in multipliers]
    reach = rep.high * max((f.numerator for f in factors), default=1)
    if reach >= _INT128_ROOM or _near_a_half(rep, factors):
        return None
    # 64-bit integers where every product, and twice every remainder, fits (faster)
    widest = max(rep.high, reach, 2 * max(f.denominator for f in factors))
    narrow = widest < _INT64_ROOM
    dtype: PolarsIntegerType = pl.Int64 if narrow else pl.Int128
    s = rep.staged.run.settings
    n = pl.col("n").cast(dtype)
    lines = [
        _rounded(n * pl.lit(f.numerator, dtype), f.denominator, s, dtype)
        .cast(pl.Int128)
        .sum()
        .alias(f"_gross_{k}")
        for k, f in enumerate(factors)
    ]
    charges = rep.numerators.lazy().group_by(_RUN).agg(lines).collect()
    out = []
    for k, m in enumerate(multipliers):
        free = charges.select(_RUN, pl.col(f"_gross_{k}").alias("_free"))
        try:
            settled = _settle(rep, free, _reached(rep, m))
        except ContractlangError:  # E405: the evaluation of the whole names where
            return None
        out.append((need(settled.runs, "the settled runs"), need(settled.totals, "the totals")))
    return out


def _fits_decimals(rep: Repricing, multipliers: Sequence[Fraction]) -> bool:
    """Whether every decimal the evaluation of the allocations no credit reaches would hold
    stays 100 times inside its 38 digits at every one of ``multipliers``: price × m × GPUs
    times a tail below the per-µs factor's denominator, or times the whole units of the
    longest billable time; at the scale the product is held (at least 20 places). Where it may
    not, the evaluation of the whole reports E405."""
    m = max(multipliers)
    scale = max(MONEY_SCALE, rep.places + max(lit_decimal(x)[1] for x in multipliers))
    d, n = rep.per_us.denominator, max(rep.per_us.numerator, 1)
    times = max(d, rep.longest_us // d + 1, 3600 * 10**6)
    held = rep.price_gpus * m * times * n * 10 ** (scale - rep.places)
    # the largest charge line in minor units: held as a Decimal(38, 20) times the minor unit
    minor = rep.high * rep.base * m
    return held < 10**36 and minor < 10**17


def _near_a_half(rep: Repricing, factors: Sequence[Fraction]) -> bool:
    """Whether a charge line of the allocations no credit reaches lies within 10⁻¹⁸ of the
    currency of a rounding half, without being on it, at one of ``factors``: where the decimal
    evaluation's value, held at 20 places, may round the other way. With ``n × a / d`` the line
    in minor units and ``r = n × a mod d``, that is ``0 < |2r − d| < 2d × minor / 10¹⁸``: only
    a denominator that fine can have one, so most batches need no pass at all."""
    minor = rep.staged.run.settings.minor
    checks = []
    for k, f in enumerate(factors):
        a, d = f.numerator, f.denominator
        bound = -(-2 * d * minor // 10**18)  # ceil(2d·minor / 10^18)
        if bound <= 1:
            continue
        off = (2 * ((pl.col("n") * pl.lit(a, pl.Int128)) % pl.lit(d, pl.Int128)) - d).abs()
        near = (off > 0) & (off < pl.lit(bound, pl.Int128))
        checks.append(near.any().alias(f"_half_{k}"))
    if not checks:
        return False
    return any(rep.numerators.select(checks).row(0))


def _reached(rep: Repricing, m: Fraction) -> pl.DataFrame:
    """The reachable allocations' moved sums per run at ``m``, evaluated from the charge (each
    group computing only the credits that can reach it; the others are none there at every
    m)."""
    run = replace(rep.staged.run, multiplier=m)
    lines = [f"credit_{k}_minor" for k in range(len(run.clauses.credits))]
    cuts = [f"cap_{k}_minor" for k in range(len(run.caps["allocation"]))]
    columns = ("run_id", "alloc_id", _RUN, "charge_minor", "credit_pool_minor", *lines, *cuts)
    pieces = []
    for credits, frame in rep.reachable:
        group = Staged(replace(run, credits_reaching=credits), lazy=frame.lazy())
        billed = through(group, first=charge, until=amounts)  # the charge to the caps (7a)
        pieces.append(need(billed.lazy, "the allocations").select(columns))
    if not pieces:
        return pl.DataFrame(schema={_RUN: pl.UInt32, **dict.fromkeys(MOVED, pl.Int128)})
    collected = through(Staged(run, lazy=pl.concat(pieces)), first=amounts, until=priced)
    wide = need(collected.wide, "the allocations' amounts")

    def total(exprs: list[pl.Expr]) -> pl.Expr:
        return pl.sum_horizontal(exprs or [pl.lit(0, pl.Int64)]).cast(pl.Int128).sum()

    return wide.group_by(_RUN).agg(
        gross_minor=total([pl.col("charge_minor")]),
        credit_lines_minor=total([pl.col(x).fill_null(0) for x in lines]),
        alloc_cap_minor=total([pl.col(x) for x in cuts]),
        pool_minor=total([pl.col("credit_pool_minor")]),
    )


def _settle(rep: Repricing, free: pl.DataFrame, reached: pl.DataFrame) -> Staged:
    """The staged run sums with the moved ones at the multiplier (``free``: the charge lines
    of allocations no credit reaches), through the stages from their check that they fit 64
    bits: the caps above, each run's net, the totals."""
    sums = need(rep.staged.sums, "the runs' sums")
    size = sums.height

    def per_run(frame: pl.DataFrame, column: str) -> pl.Series:
        """``frame``'s ``column`` at each run's position (0 for a run it does not hold)."""
        out = pl.zeros(size, dtype=pl.Int128, eager=True)
        return out.scatter(frame[_RUN], frame[column]) if frame.height else out

    moved = {x: per_run(reached, x) for x in MOVED}
    moved["gross_minor"] = moved["gross_minor"] + per_run(free, "_free")
    return through(replace(rep.staged, sums=sums.with_columns(**moved)), first=fit_sums)


def _never_negative(cap: ast.Cap) -> bool:
    """Whether an allocation cap's limit is at least 0 wherever the charge is."""
    pct = cap_percent(cap)
    if pct is not None:
        return pct >= 0
    value = constant_value(cap.limit)
    return value is not None and value >= 0


def _numerator(
    lf: pl.LazyFrame, s: Settings, c: ContractClauses, places: int
) -> tuple[pl.LazyFrame, Fraction, pl.Expr, Fraction]:
    """The picked price as an exact integer of its own ``places`` (its decimal's unscaled
    value: the places drop nothing, :func:`~contractlang.compare.variants.price_places`), the
    fraction that turns ``n = price × gpus × billable_us`` into minor units, and the price's
    factor per µs."""
    lf, price = pick_rate(lf, c, s, chosen=True)
    units = price.expr.cast(dec(places)).to_physical()
    return lf, price.factor * MICROS * s.minor / 10**places, units, price.factor * MICROS


def _rounded(
    numerator: pl.Expr, denominator: int, s: Settings, dtype: PolarsIntegerType = pl.Int128
) -> pl.Expr:
    """``numerator / denominator`` (both ≥ 0) rounded to an integer by the contract's rule:
    half away from zero, or half to even."""
    d = pl.lit(denominator, dtype=dtype)
    q, twice = numerator // d, (numerator % d) * 2
    tie = twice == d
    up = (twice > d) | (tie & (q % 2 == 1) if s.rounding == "half_even" else tie)
    return q + up.cast(dtype)
