"""Which value a budget's `pN(...)` gives, exactly, over n runs whose values are all distinct.

The rule (docs/language.md: "linear interpolation between closest ranks"; docs/evaluate.md,
Budgets: "numpy's default: position N/100 × (n − 1)"): with the n values in increasing order,
numbered from 0, the position is N × (n − 1) / 100; its whole part i and its hundredths h are
``divmod(N × (n − 1), 100)``, and the value is the i-th plus h/100 of the step to the (i+1)-th
(just the i-th when h = 0). It is not the nearest rank: p95 of 20 values is 5/100 of the way
from the 19th smallest to the 20th, not the 19th.

Every path that computes a percentile is checked against that rule, computed here in integers
and Fractions from the trace's own inputs: per-run values (`p95(net)`, and the p50, p95 and max
cost per accepted run of the totals), per-run quotients (`evaluate/quotients.py`), quotients
too wide for 128 bits (Python fractions), `evaluate --shards` (the global step measures the
budgets from every shard's runs), and `simulate`'s bootstrap (weighted by draws). A percentile
of money per GPU-time is shown in the unit of its limit (`9 USD per gpu_hour`).
"""

from __future__ import annotations

import json
from datetime import timedelta
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from support.cli import no_traceback, run
from support.events import T0
from support.scenario import accepted, released, started, trace_frame

from contractlang.evaluate.results import ContractResult
from contractlang.lang.terms import Terms
from contractlang.pipeline.evaluation import evaluate
from contractlang.pipeline.language import terms_from_text
from contractlang.pipeline.shards import evaluate_sharded
from contractlang.simulate.bootstrap import Figure
from contractlang.simulate.monte_carlo import value_side

SIZES = (1, 2, 19, 20, 21, 100, 101)
PERCENTILES = (0, 1, 50, 90, 95, 99, 100)

#: A quotient whose per-run fractions can pass 128 bits, so the budget computes it run by run in
#: Python fractions: (3600 / 607)¹⁴ = 3600¹⁴ / 607¹⁴ in lowest terms (607 is prime), and
#: 607¹⁴ > 2¹²⁹.
WIDE = " * ".join(["(billable_gpu_time / metered_gpu_time)"] * 14)


def position(n_pct: int, n: int) -> tuple[int, int]:
    """The documented position of ``pN`` over ``n`` values, times 100, split into the index
    (from 0) of the lower closest rank and the hundredths past it."""
    return divmod(n_pct * (n - 1), 100)


def documented(values: list[Fraction], n_pct: int) -> Fraction:
    """``pN`` of ``values`` by the documented rule, in Fractions."""
    ordered = sorted(values)
    i, h = position(n_pct, len(ordered))
    if h == 0:
        return ordered[i]
    return ordered[i] + (ordered[i + 1] - ordered[i]) * Fraction(h, 100)


def test_the_documented_positions_by_hand() -> None:
    # (N, n): N × (n − 1) = whole hundreds + hundredths → (index from 0, hundredths)
    assert position(95, 20) == (18, 5)  # 95 × 19 = 1805: 5/100 past the 19th smallest
    assert position(95, 21) == (19, 0)  # 95 × 20 = 1900: the 20th smallest exactly
    assert position(95, 19) == (17, 10)  # 95 × 18 = 1710
    assert position(90, 19) == (16, 20)  # 90 × 18 = 1620
    assert position(99, 100) == (98, 1)  # 99 × 99 = 9801
    assert position(99, 101) == (99, 0)  # 99 × 100 = 9900: the 100th smallest
    assert position(1, 100) == (0, 99)  # 1 × 99 = 99: 99/100 past the smallest
    assert position(1, 101) == (1, 0)  # 1 × 100 = 100: the 2nd smallest
    assert position(50, 2) == (0, 50)  # 50 × 1 = 50: halfway between the two
    assert position(100, 20) == (19, 0)  # 100 × 19 = 1900: the largest
    assert position(0, 101) == (0, 0)  # 0: the smallest
    assert position(95, 1) == (0, 0)  # 95 × 0 = 0: the only one


# The runs: run k (k = 0 … n − 1) holds 1 GPU for s(m) seconds, m = 53·k mod n, priced from
# the trace at p(j) per GPU-hour, j = 37·k mod n (a permutation for every n here: 37 and 53
# divide none of them), billed at least 1 hour (every s(m) < 3600): its net is p(j) USD
# exactly, and its billable over metered GPU-time is 3600 / s(m). Both grow faster than
# linearly (interpolating between the wrong pair of ranks gives another value), and neither
# is given in order.


def price(j: int) -> Decimal:
    """p(j) = j² / 4 + 1 USD per GPU-hour: 1, 1.25, 2, 3.25, 5, … (two places at most)."""
    return Decimal(j * j) / 4 + 1


def seconds(m: int) -> int:
    """s(m) = 600 + 7m + ⌊m² / 5⌋: 600, 607, 614, 622, …, 3300 at m = 100."""
    return 600 + 7 * m + m * m // 5


def runs(n: int) -> list[tuple[str, Decimal, int]]:
    return [(f"run{k:03d}", price(37 * k % n), seconds(53 * k % n)) for k in range(n)]


def trace(n: int) -> list[dict[str, object]]:
    def wall(s: int) -> str:
        return (T0 + timedelta(seconds=s)).strftime("%Y-%m-%d %H:%M:%S")

    rows = []
    for run_id, p, s in runs(n):
        alloc = run_id.replace("run", "a")
        rows += [started(run_id, alloc, 0, gpus=1, price=str(p)), released(run_id, alloc, wall(s)),
                 accepted(run_id, wall(s + 60))]  # fmt: skip
    return rows


def budget(name: str, measure: str, limit: str) -> str:
    lines = "".join(f"  require p{k}({measure}) <= {limit}\n" for k in PERCENTILES)
    return f'budget "{name}" {{\n{lines}}}\n'


TERMS = (
    'contract "c" {\n  currency USD\n  rate trace.price per gpu_hour\n'
    "  billing minimum 1 hour\n}\n"
    + budget("plain", "net", "1000000 USD")
    + budget("quotient", "billable_gpu_time / metered_gpu_time", "1000000")
    + budget("wide", WIDE, "1000000000000")  # 6¹⁴ < 8 × 10¹⁰
)


def expected(n: int) -> dict[str, list[Fraction]]:
    """Each budget's values by the documented rule, from the runs' inputs."""
    nets = [Fraction(p) for _, p, _ in runs(n)]
    quotients = [Fraction(3600, s) for _, _, s in runs(n)]
    return {
        "plain": [documented(nets, k) for k in PERCENTILES],
        "quotient": [documented(quotients, k) for k in PERCENTILES],
        "wide": [documented([q**14 for q in quotients], k) for k in PERCENTILES],
    }


def measured(c: ContractResult) -> dict[str, list[Fraction | None]]:
    return {b.name: [r.value for r in b.requirements] for b in c.budgets}


@pytest.fixture(scope="module")
def terms() -> Terms:
    return terms_from_text(TERMS)


@pytest.mark.parametrize("n", SIZES)
def test_every_percentile_of_distinct_values(terms: Terms, n: int) -> None:
    (c,) = evaluate(terms, trace_frame(trace(n))).contracts
    nets = sorted(Fraction(p) for _, p, _ in runs(n))
    assert sorted(Fraction(x) for x in c.runs_table()["net"]) == nets  # every run bills p(j)
    if n > 1:  # a run of 607 seconds: the wide quotient needs more than 128 bits
        assert max((Fraction(3600, s) ** 14).denominator for _, _, s in runs(n)) > 2**127
    assert measured(c) == expected(n)
    # the totals' cost per accepted run (every run accepted: its net): p50, p95 and max
    cost = c.totals.cost_per_accepted_run
    assert (cost["p50"], cost["p95"], cost["max"]) == (
        documented(nets, 50),
        documented(nets, 95),
        documented(nets, 100),
    )


def test_p95_of_20_runs_by_hand(terms: Terms) -> None:
    (c,) = evaluate(terms, trace_frame(trace(20))).contracts
    values = measured(c)
    at = PERCENTILES.index(95)
    # nets p(0) … p(19) = j² / 4 + 1; 95 × 19 = 1805 → 5/100 from the 19th smallest, p(18) =
    # 324 / 4 + 1 = 82, to the 20th, p(19) = 361 / 4 + 1 = 91.25: 82 + 0.05 × 9.25 = 82.4625
    assert values["plain"][at] == Fraction("82.4625")
    # quotients 3600 / s(m), increasing as s decreases: the 19th smallest is 3600 / s(1) =
    # 3600 / 607, the 20th 3600 / s(0) = 6: 3600/607 + 0.05 × (6 − 3600/607)
    # = 0.95 × 3600/607 + 0.3 = 3420/607 + 3/10 = (34200 + 1821) / 6070 = 36021 / 6070
    assert values["quotient"][at] == Fraction(36021, 6070)
    # p50 of 20: 50 × 19 = 950 → halfway from the 10th smallest, p(9) = 81/4 + 1 = 21.25, to
    # the 11th, p(10) = 26: 23.625
    assert values["plain"][PERCENTILES.index(50)] == Fraction("23.625")


@pytest.mark.parametrize("n", [1, 2, 20, 21, 101])
def test_the_sharded_path_gives_the_same_values(terms: Terms, tmp_path: Path, n: int) -> None:
    path = tmp_path / "t.parquet"
    trace_frame(trace(n)).write_parquet(path)
    # 3 shards: every run in one of them by its CRC-32; the budgets measured on all the runs
    (c,) = evaluate_sharded(terms, path, shards=3).contracts
    assert measured(c) == expected(n)
    cost = c.totals.cost_per_accepted_run
    nets = [Fraction(p) for _, p, _ in runs(n)]
    assert (cost["p50"], cost["p95"]) == (documented(nets, 50), documented(nets, 95))


@pytest.mark.parametrize("n", [2, 20, 21])
def test_the_bootstrap_weighs_each_run_by_its_draws(terms: Terms, n: int) -> None:
    """`simulate`'s bootstrap: on a resample, each run counts as often as it was drawn, and
    pN is the documented rule over that many values (with repeats)."""
    (c,) = evaluate(terms, trace_frame(trace(n))).contracts
    inputs = {run_id: (Fraction(p), Fraction(3600, s)) for run_id, p, s in runs(n)}
    order = c.runs["run_id"].to_list()
    # three resamples: every run once; run k of the table 1 + k mod 3 times; run k of the
    # table twice if k is even, else not at all
    weights = [
        [1] * n,
        [1 + k % 3 for k in range(n)],
        [2 if k % 2 == 0 else 0 for k in range(n)],
    ]
    counts = np.array(weights, dtype=np.int64)
    for name, which in (("plain", 0), ("quotient", 1)):
        (b,) = [x for x in terms.budgets if x.name == name]
        for k, req in zip(PERCENTILES, b.requires, strict=True):
            fig = Figure(value_side(req), c.runs)
            fig.update(counts)
            want = [
                documented([inputs[r][which] for r, w in zip(order, row, strict=True)
                            for _ in range(w)], k)
                for row in weights
            ]  # fmt: skip
            assert fig.values == want, (name, k)


PER_GPU_HOUR = """\
contract "c" {
  currency USD
  rate trace.price per gpu_hour
}

budget "b" {
  require p50(net / metered_gpu_time) <= 9 USD per gpu_hour
  require p95(net / metered_gpu_time) <= 9 USD per gpu_hour
}
"""


def test_a_percentile_of_money_per_gpu_time_is_shown_in_the_unit_of_its_limit(
    tmp_path: Path,
) -> None:
    # two runs of 1 GPU for 1 hour at 6 and 10 USD per GPU-hour: net / metered_gpu_time is 6
    # and 10 USD per GPU-hour, held in USD per GPU-second (÷ 3600). p50: 50 × 1 = 50 → 6 +
    # 0.50 × 4 = 8 (1.00 to spare); p95: 95 × 1 = 95 → 6 + 0.95 × 4 = 9.80 (0.80 over)
    rows = []
    for run_id, p in (("r1", "6"), ("r2", "10")):
        rows += [started(run_id, run_id + "a", 0, gpus=1, price=p),
                 released(run_id, run_id + "a", 60), accepted(run_id, 61)]  # fmt: skip
    spot = tmp_path / "t.spot"
    spot.write_text(PER_GPU_HOUR, encoding="utf-8")
    path = tmp_path / "t.parquet"
    trace_frame(rows).write_parquet(path)
    (c,) = evaluate(terms_from_text(PER_GPU_HOUR), path).contracts
    p50, p95 = c.budgets[0].requirements
    assert (p50.value, p95.value) == (Fraction(8, 3600), Fraction("9.8") / 3600)
    assert (p50.verdict, p95.verdict) == ("met", "not met")
    result = run("evaluate", spot, path, "--format", "json")
    no_traceback(result)
    assert result.exit_code == 1, result.output
    reqs = json.loads(result.stdout)["contracts"][0]["budgets"][0]["requirements"]
    shown = [{k: r[k] for k in ("value", "limit", "unit", "margin")} for r in reqs]
    assert shown == [
        {"value": "8.00", "limit": "9.00", "unit": "USD per gpu_hour", "margin": "1.00"},
        {"value": "9.80", "limit": "9.00", "unit": "USD per gpu_hour", "margin": "-0.80"},
    ]
    text = " ".join(run("evaluate", spot, path).stdout.split())
    assert "<= 9 USD per gpu_hour: 8.00 USD per gpu_hour" in text
    assert "<= 9 USD per gpu_hour: 9.80 USD per gpu_hour" in text
