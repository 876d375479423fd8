"""The Monte Carlo error: the bootstrap computes every budget aggregate exactly as `evaluate`
does (checked against the engine on runs repeated by their draw counts), its intervals have
the width a closed form predicts, and the outputs show them — with "needs more runs" where a
verdict flips inside an interval."""

from __future__ import annotations

import json
import math
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from rich.cells import cell_len
from support.cli import no_traceback, run
from support.workloads import write_workload

from contractlang.evaluate.budget import evaluate_budget
from contractlang.evaluate.results import DisplayUnit, RequirementResult
from contractlang.lang import ast
from contractlang.lang.numbers import round_fraction
from contractlang.pipeline.evaluation import evaluate
from contractlang.pipeline.language import load_terms
from contractlang.render.simulate.uncertainty import plus_minus
from contractlang.simulate import simulate
from contractlang.simulate.bootstrap import QUOTIENT_SCALE, Figure, resample_counts, run_bootstrap
from contractlang.simulate.monte_carlo import value_side
from contractlang.simulate.results import Interval, RequirementInterval
from contractlang.trace import generate_trace

ROOT = Path(__file__).resolve().parents[1]
RULESETS = ROOT / "rulesets"


Evaluated = tuple[pl.DataFrame, list[ast.Budget], dict[str, str]]


@pytest.fixture(scope="module")
def evaluated() -> Evaluated:
    """A generated trace (failures, credits, rejected and abandoned runs) under a real draft,
    with the three FY27 budgets: 16 requirements over every kind of aggregate."""
    terms = load_terms([RULESETS / "aws-ec2-spot-linux.spot", RULESETS / "fy27-budget.spot"])
    c = evaluate(terms, generate_trace(150, seed=3)).contracts[0]
    texts = {b.name: terms.source_of(b) or "" for b in terms.budgets}
    return c.runs, list(terms.budgets), texts


def requirements(
    budgets: list[ast.Budget],
) -> list[tuple[ast.Budget, int, ast.Require]]:
    return [(b, i, r) for b in budgets for i, r in enumerate(b.requires)]


def close(got: object, want: Fraction | None, quotient: bool) -> bool:
    if want is None or got is None:
        return got is want
    assert isinstance(got, Fraction)
    # a sum or mean of per-run quotients is summed at 10⁻¹⁸ (documented); all else is exact
    return abs(got - want) <= Fraction(1, QUOTIENT_SCALE) if quotient else got == want


def divides(req: ast.Require) -> bool:
    return any(isinstance(n, ast.Binary) and n.op == "/" for n in ast.walk(value_side(req)))


def test_on_the_runs_themselves_every_requirement_is_evaluates_value(evaluated: Evaluated) -> None:
    runs, budgets, texts = evaluated
    found = 0
    for budget, i, req in requirements(budgets):
        want = evaluate_budget(budget, runs, texts[budget.name]).requirements[i].value
        got = Figure(value_side(req), runs).point_value()
        assert close(got, want, divides(req)), (budget.name, i)
        found += 1
    assert found == 16


def test_on_a_resample_every_requirement_is_evaluates_value_on_the_repeated_runs(
    evaluated: Evaluated,
) -> None:
    """The independent check: repeat each run as often as the resample drew it, and let the
    engine measure that table."""
    runs, budgets, texts = evaluated
    (counts,) = resample_counts(runs.height, 3, seed=11)[:1]
    for row in counts:
        repeated = runs[np.repeat(np.arange(runs.height), row).tolist()]
        for budget, i, req in requirements(budgets):
            want = evaluate_budget(budget, repeated, texts[budget.name]).requirements[i].value
            got = Figure(value_side(req), runs)._evaluate(row[None, :])[0]
            assert close(got, want, divides(req)), (budget.name, i, req)


def test_resamples_are_seeded_and_draw_every_run_count() -> None:
    a = np.concatenate(resample_counts(50, 300, seed=1))
    b = np.concatenate(resample_counts(50, 300, seed=1))
    c = np.concatenate(resample_counts(50, 300, seed=2))
    assert a.shape == (300, 50)
    assert (a.sum(axis=1) == 50).all()  # each resample draws 50 runs
    assert (a == b).all()
    assert not (a == c).all()
    # chunks do not change the resamples
    assert (np.concatenate(resample_counts(50, 300, seed=1)) == a).all()


def test_the_interval_of_a_mean_has_the_width_of_its_standard_error() -> None:
    # 400 values 0…399 in cents: the mean's standard error is σ/√n with σ² = (n² − 1)/12, so
    # σ = 115.47 and σ/√400 = 5.774; a 95 % interval is about ± 1.96 × 5.774 = ± 11.3 cents
    values = pl.DataFrame({"net": pl.Series([f"{i / 100:.2f}" for i in range(400)]).cast(
        pl.Decimal(38, 2))})  # fmt: skip
    fig = Figure(ast.Call("mean", (ast.Name("net"),)), values)
    run_bootstrap([fig], values.height, 2000, seed=5)
    bounds = fig.interval()
    assert bounds is not None
    low, high = bounds
    half = float(high - low) / 2 * 100  # cents
    expected = 1.96 * math.sqrt((400**2 - 1) / 12) / math.sqrt(400)
    assert expected == pytest.approx(11.32, abs=0.01)
    assert half == pytest.approx(expected, rel=0.12)
    assert low < Fraction(1995, 1000) < high  # the mean, 1.995


UNIT = DisplayUnit("USD", Fraction(1), "money")


def req_interval(
    value: int, low: int, high: int, limit: int, op: str = "<="
) -> RequirementInterval:
    r = RequirementResult("p95(x) <= L", 2, op, Fraction(value), Fraction(limit), UNIT,
                          "met" if value <= limit else "not met")  # fmt: skip
    return RequirementInterval("b", r, Interval(Fraction(value), Fraction(low), Fraction(high)))


def test_needs_more_runs_when_the_limit_lies_inside_the_interval() -> None:
    assert req_interval(95, 90, 102, 100).needs_more_runs  # met, but 102 > 100
    assert req_interval(105, 98, 110, 100).needs_more_runs  # not met, but 98 ≤ 100
    assert not req_interval(95, 90, 99, 100).needs_more_runs
    assert not req_interval(95, 90, 100, 100).needs_more_runs  # `<= 100` holds at 100 too
    assert not req_interval(150, 120, 180, 100).needs_more_runs


def test_plus_minus_shows_two_significant_digits_of_the_error() -> None:
    assert plus_minus(Fraction(173345, 100), Fraction(4123, 100), UNIT) == "1,733 USD ± 41"
    assert plus_minus(Fraction(173345, 100), Fraction(4, 10), UNIT) == "1,733.45 USD ± 0.40"
    # never finer than cents for money
    assert plus_minus(Fraction(173345, 100), Fraction(1, 1000), UNIT) == "1,733.45 USD ± 0.00"
    assert plus_minus(Fraction(173345, 100), Fraction(0), UNIT) == "1,733.45 USD"
    hours = DisplayUnit("hours", Fraction(3600), "quantity")
    assert plus_minus(Fraction(3600 * 52), Fraction(1800), hours) == "52.00 hours ± 0.50"
    # large errors round the value to tens, thousands, …: two significant digits still
    assert plus_minus(Fraction(14590700), Fraction(200685), UNIT) == "14,590,000 USD ± 200,000"
    plain = DisplayUnit("", Fraction(1), "plain")
    assert plus_minus(Fraction(619), Fraction(138), plain) == "620 ± 140"
    # two digits that round up to three: 99.7 is 1.0 × 10², so the place is the tens
    assert plus_minus(Fraction(12345, 10), Fraction(997, 10), plain) == "1,230 ± 100"
    # a count keeps the error's place: 1,999 with an error of 1.5 is 1,999.0
    assert plus_minus(Fraction(1999), Fraction(3, 2), plain) == "1,999.0 ± 1.5"


@pytest.mark.parametrize("exponent", range(-3, 8))
def test_every_error_shows_two_significant_digits(exponent: int) -> None:
    """Against a second rounding, over many magnitudes: an error m × 10^e (1 ≤ m < 10) shows as
    round(m × 10) × 10^(e−1), half to even — two significant digits — or, when that rounds up
    to 100, as 10^(e+1) at the place 10^e; the value shows to the same place."""
    plain = DisplayUnit("", Fraction(1), "plain")
    for mantissa in (1000, 1049, 1050, 1234, 5000, 9949, 9950, 9999):
        m = Fraction(mantissa, 1000)
        err = m * Fraction(10) ** exponent
        r = round(m * 10)
        place = exponent - 1 if r < 100 else exponent
        expected = r * Fraction(10) ** (exponent - 1)
        shown = plus_minus(Fraction(10**9) + Fraction(1, 3), err, plain)
        value_text, error_text = shown.split(" ± ")
        assert Fraction(Decimal(error_text.replace(",", ""))) == expected, (err, shown)
        decimals = len(value_text.partition(".")[2])
        assert decimals == max(0, -place), (err, shown)
        assert len(error_text.partition(".")[2]) == decimals


# --------------------------------------------------------------------------- the outputs

DRAFT = 'contract "d" {\n  currency USD\n  rate 2.10 USD per gpu_hour\n}\n'


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("mc")
    (d / "d.spot").write_text(DRAFT)
    (d / "loose.spot").write_text(
        'budget "loose" {\n  require p95(cost_per_accepted_run) <= 1000000 USD\n}\n'
    )
    write_workload(d, runs=200)
    return d


def test_json_gives_every_figure_with_its_interval(files: Path) -> None:
    result = run("simulate", files / "d.spot", files / "loose.spot", "--workload",
                 files / "w.toml", "--format", "json", "--resamples", 200)  # fmt: skip
    no_traceback(result)
    assert result.exit_code == 0  # the loose budget is met
    doc = json.loads(result.stdout)
    (c,) = doc["contracts"]
    mc = c["monte_carlo"]
    assert (mc["runs"], mc["resamples"], mc["confidence"]) == (200, 200, "0.95")
    for key in ("mean", "p95"):
        fig = mc["cost_per_accepted_run"][key]
        low, high = fig["ci95"]
        assert float(low) <= float(fig["value"]) <= float(high)
    assert mc["cost_per_accepted_run"]["p95"]["value"] == c["cost_per_accepted_run"]["p95"]
    (req,) = mc["requirements"]
    assert req["require"] == "p95(cost_per_accepted_run) <= 1000000 USD"
    assert req["verdict"] == "met"
    assert req["needs_more_runs"] is False
    assert req["value"] == mc["cost_per_accepted_run"]["p95"]["value"]


def test_a_limit_inside_the_interval_needs_more_runs(files: Path) -> None:
    """A limit between the interval's low end and the value is not met (exit 1), one between
    the value and the high end is met (exit 0): each verdict could flip with more runs."""
    sim = simulate([files / "d.spot"], files / "w.toml", resamples=200)
    mean = sim.contracts[0].monte_carlo.mean_cost
    assert mean.value is not None
    assert mean.low is not None
    assert mean.high is not None
    below = round_fraction((mean.low + mean.value) / 2, 6)
    above = round_fraction((mean.value + mean.high) / 2, 6)
    assert mean.low < below < mean.value < above < mean.high
    for limit, verdict, code in ((below, "not met", 1), (above, "met", 0)):
        (files / "tight.spot").write_text(
            f'budget "tight" {{\n  require mean(cost_per_accepted_run) <= {limit} USD\n}}\n'
        )
        result = run("simulate", files / "d.spot", files / "tight.spot", "--workload",
                     files / "w.toml", "--resamples", 200)  # fmt: skip
        no_traceback(result)
        assert result.exit_code == code, limit
        assert (
            f"warning[W601]: contract `d`: `mean(cost_per_accepted_run) <= {limit} USD` is "
            f"{verdict} on 200 runs, but the limit lies inside its 95% interval" in result.stderr
        )
        said = " ".join(result.stdout.split())  # as read, whatever the line breaks
        assert f"— {verdict}, needs more runs" in said
        assert "1 verdict(s) need more runs." in said


def test_terminal_output_fits_80_columns_and_the_tables_name_the_contract(
    files: Path, tmp_path: Path
) -> None:
    (tmp_path / "two.spot").write_text(
        DRAFT + DRAFT.replace('"d"', '"e"').replace("rate 2.10", "rate 2.30")
        + 'budget "b" {\n  require p95(cost_per_accepted_run) <= 10 USD\n'
        "  require mean(lost_gpu_time / metered_gpu_time) <= 5%\n}\n"
    )  # fmt: skip
    result = run("simulate", tmp_path / "two.spot", "--workload", files / "w.toml",
                 "--runs", tmp_path / "runs.csv", "--ledger", tmp_path / "ledger.parquet",
                 "--resamples", 100)  # fmt: skip
    no_traceback(result)
    assert result.exit_code == 1  # p95 ≤ 10 USD is not met
    assert all(cell_len(line) <= 80 for line in result.stdout.splitlines()), result.stdout
    assert "p95  " in result.stdout
    assert " USD ± " in result.stdout
    runs = pl.read_csv(tmp_path / "runs.csv")
    assert runs["contract"].unique(maintain_order=True).to_list() == ["d", "e"]
    assert runs.height == 2 * 200
    ledger = pl.read_parquet(tmp_path / "ledger.parquet")
    assert set(ledger["contract"].unique()) == {"d", "e"}


def test_bad_flags_exit_2(files: Path) -> None:
    for args, fragment in (
        (("--resamples", 5), "`--resamples 5` must be between 100 and 100,000"),
        (("--contract", "dd"), "did you mean `d`?"),
        (("--runs", files / "runs.txt"), "the file must end in"),
    ):
        result = run("simulate", files / "d.spot", "--workload", files / "w.toml", *args)
        no_traceback(result)
        assert result.exit_code == 2, args
        assert fragment in result.output, result.output
    result = run("simulate", files / "w.toml", "--workload", files / "w.toml")
    assert result.exit_code == 2
    assert "is not a `.spot` terms file" in result.output


def test_report_of_a_simulation(files: Path, tmp_path: Path) -> None:
    report = tmp_path / "sim.md"
    result = run("simulate", files / "d.spot", files / "loose.spot", "--workload",
                 files / "w.toml", "--resamples", 200, "--report", report)  # fmt: skip
    no_traceback(result)
    assert result.exit_code == 0
    text = report.read_text(encoding="utf-8")
    assert text.startswith("# ")
    assert "Simulated: each draft is evaluated on the trace simulated under its own" in text
    # the report's net is the simulation's (the same evaluation)
    again = run("simulate", files / "d.spot", files / "loose.spot", "--workload",
                files / "w.toml", "--resamples", 200, "--format", "json")  # fmt: skip
    net = json.loads(again.stdout)["contracts"][0]["totals"]["net"]
    assert f"| net billed (USD) | {Decimal(net):,.2f} |" in text
