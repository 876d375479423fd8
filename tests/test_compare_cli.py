"""`contractlang compare` on the command line: exit codes, JSON that is `evaluate`'s plus rank,
delta, attribution and to_pass, CSV, the 80-column terminal, and bad input."""

from __future__ import annotations

import copy
import csv
import io
import json
from decimal import Decimal as D
from pathlib import Path

import polars as pl
import pytest
from rich.cells import cell_len
from rich.console import Console
from support.cli import no_traceback, run
from support.compared import example_trace, rulesets_attributed
from support.events import frame, released, started

from contractlang.pipeline.evaluation import evaluate
from contractlang.pipeline.language import terms_from_text as load_terms_text
from contractlang.render.compare.terminal import comparison_figures, render_comparison

ROOT = Path(__file__).resolve().parents[1]
RULESETS = sorted((ROOT / "rulesets").glob("*.spot"))
EXAMPLE = ROOT / "examples" / "trace.parquet"


@pytest.fixture(scope="module")
def compared_json() -> dict:  # type: ignore[type-arg]
    result = run("compare", *RULESETS, EXAMPLE, "--attribute", "--format", "json")
    no_traceback(result)
    assert result.exit_code == 1  # no draft meets every budget on the example trace
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def test_contract_entries_are_evaluates_plus_rank_delta_attribution_and_to_pass(
    compared_json: dict,  # type: ignore[type-arg]
) -> None:
    evaluated = run("evaluate", *RULESETS, EXAMPLE, "--format", "json")
    assert evaluated.exit_code == 1
    theirs = {c["name"]: c for c in json.loads(evaluated.stdout)["contracts"]}
    doc = copy.deepcopy(compared_json)
    assert doc["schema"] == "contractlang.compare/1"
    assert doc["baseline"] == "aws-ec2-spot-linux"
    assert doc["ranking"] == {
        "budget": "fy27-pretraining",
        "headline": "p95(cost_per_accepted_run) <= 12000 USD",
    }
    for entry in doc["contracts"]:
        extra = {k: entry.pop(k) for k in ("rank", "delta", "attribution", "to_pass")}
        assert entry == theirs[entry["name"]]
        assert extra["to_pass"]["budget"] == "fy27-pretraining"
    assert sorted(c["rank"] for c in json.loads(json.dumps(compared_json))["contracts"]) == [
        1, 2, 3, 4, 5,
    ]  # fmt: skip


def test_json_is_stable_and_ranked_by_the_headline(compared_json: dict) -> None:  # type: ignore[type-arg]
    again = run("compare", *RULESETS, EXAMPLE, "--attribute", "--format", "json")
    assert json.loads(again.stdout) == compared_json
    by_rank = sorted(compared_json["contracts"], key=lambda c: c["rank"])
    p95 = [float(c["cost_per_accepted_run"]["p95"]) for c in by_rank]
    assert p95 == sorted(p95)  # no draft meets the budget: the largest headline margin first
    base = next(c for c in compared_json["contracts"] if c["name"] == "aws-ec2-spot-linux")
    assert base["delta"]["totals"]["net"] == "+0.00"
    north = next(c for c in compared_json["contracts"] if c["name"] == "northwind-negotiated")
    # 93,668.03 − 117,319.81 (evaluate's nets on this trace)
    assert north["delta"]["totals"]["net"] == "-23651.78"
    att = {a["clause"]: a for a in north["attribution"]}
    slow = att["slow replacement"]
    assert slow["kind"] == "credit"
    assert slow["line"] == 48
    # change = with − without, and gross + credits (after caps) = net
    w = slow["without"]
    assert D(w["gross"]) + D(w["credits"]) == D(w["net"])
    assert D(north["totals"]["net"]) - D(w["net"]) == D(slow["change"]["net"])


def test_baseline_and_budget_flags(tmp_path: Path) -> None:
    budget = tmp_path / "b.spot"
    budget.write_text('budget "cheap" { require sum(net) <= 100000 USD }\n', encoding="utf-8")
    drafts = [p for p in RULESETS if p.name != "fy27-budget.spot"]
    result = run("compare", *drafts, EXAMPLE, "--budget", budget, "--baseline",
                 "northwind-negotiated", "--format", "json")  # fmt: skip
    no_traceback(result)
    doc = json.loads(result.stdout)
    # only northwind bills under 100,000 USD (93,668.03): it meets the budget, exit 0
    assert result.exit_code == 0
    assert doc["ranking"]["budget"] == "cheap"
    assert doc["baseline"] == "northwind-negotiated"
    first = min(doc["contracts"], key=lambda c: c["rank"])
    assert first["name"] == "northwind-negotiated"
    assert doc["summary"].startswith(
        "1 of 5 drafts meet cheap; best: northwind-negotiated, sum(net)"
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--baseline", "northwind"], "the terms have no contract `northwind`"),
        (["--budget", "rulesets/aws-ec2-spot-linux.spot"], "defines no budget"),
        (["--budget", "examples/trace.parquet"], "must end in `.spot`"),
    ],
)
def test_bad_flags_are_exit_2_with_a_message(args: list[str], message: str) -> None:
    result = run("compare", *RULESETS, EXAMPLE, *[str(ROOT / a) if "/" in a else a for a in args])
    no_traceback(result)
    assert result.exit_code == 2
    assert message in result.output
    assert "error[E502]" in result.output


def test_json_errors_go_to_standard_output_as_json() -> None:
    result = run("compare", *RULESETS, EXAMPLE, "--baseline", "nope", "--format", "json")
    assert result.exit_code == 2
    (diag,) = json.loads(result.stdout)["diagnostics"]
    assert diag["code"] == "E502"
    assert "`nope`" in diag["message"]


def test_csv_has_a_row_per_contract_and_figure(compared_json: dict) -> None:  # type: ignore[type-arg]
    result = run("compare", *RULESETS, EXAMPLE, "--format", "csv")
    assert result.exit_code == 1
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert list(rows[0]) == ["contract", "rank", "section", "figure", "value", "delta", "verdict"]
    net = {
        r["contract"]: r["value"] for r in rows if (r["section"], r["figure"]) == ("totals", "net")
    }
    assert net == {c["name"]: c["totals"]["net"] for c in compared_json["contracts"]}
    req = [r for r in rows if r["section"] == "budget:fy27-pretraining"]
    assert len(req) == 5 * 4
    assert {r["verdict"] for r in req} == {"met", "not met"}
    # a requirement that starts with `-` is text a spreadsheet would run: escaped; a negative
    # figure is a number: as it is
    spend = {r["figure"] for r in rows if r["section"] == "budget:fy27-spend"}
    assert "'-sum(credits) / sum(gross) <= 10%" in spend
    credits = [r["value"] for r in rows if (r["section"], r["figure"]) == ("totals", "credits")]
    assert any(v.startswith("-") for v in credits)


@pytest.mark.parametrize("width", [60, 80, 120])
def test_the_terminal_fits_the_width_with_five_drafts_and_splits_no_figure(width: int) -> None:
    cmp = rulesets_attributed()
    file = io.StringIO()
    render_comparison(cmp, Console(file=file, width=width, color_system=None))
    lines = file.getvalue().splitlines()
    assert all(cell_len(line) <= width for line in lines), max(lines, key=cell_len)
    for f in comparison_figures(cmp):
        for cell in f.cells:
            assert any(cell in line for line in lines), (f.label, cell)
    for c in cmp.contracts:
        assert any(c.name in line for line in lines)
    assert lines[0].startswith("none of the 5 drafts meets fy27-pretraining")


def test_explain_attributes_each_clause_to_one_run() -> None:
    northwind = ROOT / "rulesets" / "northwind-negotiated.spot"
    result = run("explain", northwind, EXAMPLE, "--run", "run-000003", "--attribute")
    no_traceback(result)
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    said = next(x for x in lines if x.startswith("  “slow replacement” (credit, line 48)"))
    # the independent path: the contract with the clause deleted from its source text
    source = northwind.read_text(encoding="utf-8")
    start = source.index('  credit "slow replacement"')
    end = source.index("  credit", start + 10)
    edited = load_terms_text(source[:start] + source[end:])
    reference = evaluate(edited, example_trace()).contracts[0]
    row = reference.runs.filter(pl.col("run_id") == "run-000003").row(0, named=True)
    assert f"without it {row['net']:,} USD;" in said
    # with − without: the credit's one line, 10% of allocation a02's charge of 49.98 USD
    # (4.998 → 5.00 USD, shown in the bill above it)
    assert said.endswith("with − without: -5.00 USD")
    bad = run(
        "explain", northwind, EXAMPLE, "--run", "run-000003", "--attribute", "--format", "json"
    )
    assert bad.exit_code == 2


def test_one_of_each_is_said_in_the_singular(tmp_path: Path) -> None:
    trace = tmp_path / "one.parquet"
    frame([started("r1", "a1", 0, gpus=8), released("r1", "a1", 60)]).write_parquet(trace)
    spot = tmp_path / "c.spot"
    spot.write_text('contract "c" { currency USD rate 2 USD per gpu_hour }\n')
    evaluated = run("evaluate", spot, trace)
    assert evaluated.exit_code == 0, evaluated.output
    assert "1 contract over 1 run, 1 allocation," in evaluated.stdout
    compared = run("compare", spot, trace)
    assert compared.exit_code == 0, compared.output
    assert "1 draft over 1 run, 1 allocation," in compared.stdout
