"""The regression fixtures of this repository (``fixtures/``, docs/fixtures.md): they pass;
every contract in ``rulesets/`` has one; their first expectations agree with the arithmetic in
their READMEs and their input digests with independent computations; they give the same bytes
from any trace format and row order; and removing any clause of a ruleset makes a fixture
fail with a diff that names the figure it moved."""

from __future__ import annotations

import csv
import hashlib
import json
import re
import shutil
from collections.abc import Iterator
from datetime import datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from support import digest as oracle
from support.cli import run

from contractlang.fixtures import find_fixtures, load_fixture, run_fixture
from contractlang.fixtures.diff import figures_moved
from contractlang.fixtures.report import outcome_lines
from contractlang.fixtures.run import FixtureResult, produce
from contractlang.pipeline.language import check_texts, parse
from contractlang.trace import load_trace
from contractlang.trace.generate import write_trace

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"
RULESETS = ROOT / "rulesets"
FOLDERS = find_fixtures([FIXTURES])


def fixture_id(folder: Path) -> str:
    return folder.name


# =========================================================================== they pass


def test_contractlang_test_passes_on_the_fixtures() -> None:
    result = run("test", FIXTURES)
    assert result.exit_code == 0, result.output
    assert f"{len(FOLDERS)} fixtures: {len(FOLDERS)} passed" in result.output


def test_every_contract_in_rulesets_has_a_hand_checked_fixture() -> None:
    contracts = {
        c.name: path.name for path in RULESETS.glob("*.spot") for c in _spot(path).contracts
    }
    assert len(contracts) == 5
    covered: dict[str, list[str]] = {}
    for folder in FOLDERS:
        fixture = load_fixture(folder)
        assert fixture.manifest.checked_by_hand, folder
        assert (folder / "README.md").is_file(), folder
        for doc_contract in json.loads(fixture.expected.read_text())["contracts"]:
            covered.setdefault(doc_contract["name"], []).append(folder.name)
    assert set(covered) == set(contracts)


def _spot(path: Path) -> Any:
    spot = parse(path.read_text(encoding="utf-8"), str(path)).file
    assert spot is not None
    return spot


# =========================================================================== by hand


def _readme_figures(folder: Path) -> list[tuple[str, str]]:
    """The rows of the README's "Expected figures" table: (figure, value)."""
    text = (folder / "README.md").read_text(encoding="utf-8")
    section = text.split("## Expected figures", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `([^`]+)` \| ([^|]+) \|$", section, flags=re.MULTILINE)
    assert rows, f"{folder.name}: no figures in its README"
    return [(figure, value.strip()) for figure, value in rows]


def _figure(contract: dict[str, Any], figure: str) -> Any:
    if figure.startswith("requirement "):
        text = figure.removeprefix("requirement ")
        found = [
            r["value"]
            for b in contract["budgets"]
            for r in b["requirements"]
            if r["require"] == text
        ]
        assert len(found) == 1, figure
        return found[0]
    value: Any = contract
    for key in figure.split("."):
        value = value[key]
    return value


@pytest.mark.parametrize("folder", FOLDERS, ids=fixture_id)
def test_the_expectations_are_the_figures_worked_out_in_the_readme(folder: Path) -> None:
    doc = json.loads(load_fixture(folder).expected.read_text(encoding="utf-8"))
    (contract,) = doc["contracts"]
    for figure, value in _readme_figures(folder):
        assert str(_figure(contract, figure)) == value, f"{folder.name}: {figure}"


@pytest.mark.parametrize("folder", FOLDERS, ids=fixture_id)
def test_the_ledger_sums_to_the_net_and_the_inputs_are_named_by_content(folder: Path) -> None:
    fixture = load_fixture(folder)
    doc = json.loads(fixture.expected.read_text(encoding="utf-8"))
    # the terms: SHA-256 of each file's bytes (no byte-order mark, no lone CR in these files)
    assert [t["sha256"] for t in doc["terms"]] == [
        hashlib.sha256(path.read_bytes()).hexdigest() for path in fixture.terms
    ]
    # the trace: the documented digest of the CSV, parsed here with the csv module alone
    assert fixture.trace is not None
    assert doc["trace"]["digest"] == oracle.digest(_csv_rows(fixture.trace))
    # the ledger's amounts add up to the net (docs/evaluate.md, "Outputs"), per contract
    assert fixture.ledger is not None
    with fixture.ledger.open(newline="", encoding="utf-8") as f:
        amounts = [Decimal(row["amount"]) for row in csv.DictReader(f)]
    assert str(sum(amounts, Decimal("0.00"))) == doc["contracts"][0]["totals"]["net"]


def _csv_rows(path: Path) -> list[dict[str, Any]]:
    def typed(column: str, text: str) -> Any:
        if text == "":
            return None
        if column in ("gpus", "step"):
            return int(text)
        if column in ("price", "quantity", "amount"):
            return Decimal(text)
        if column == "valid":
            return {"true": True, "false": False}[text]
        if column == "ts":
            return datetime.fromisoformat(text.replace("Z", "+00:00"))
        return text

    with path.open(newline="", encoding="utf-8") as f:
        return [{k: typed(k, v) for k, v in row.items()} for row in csv.DictReader(f)]


# =========================================================================== determinism


@pytest.fixture
def sandbox(tmp_path: Path) -> Path:
    """A copy of ``rulesets/`` and ``fixtures/`` (the manifests' relative paths still hold)."""
    shutil.copytree(RULESETS, tmp_path / "rulesets")
    shutil.copytree(FIXTURES, tmp_path / "fixtures")
    return tmp_path


def _retrace(folder: Path, name: str, frame: pl.DataFrame) -> None:
    """Point the fixture at ``name``, holding ``frame``."""
    write_trace(frame, folder / name)
    manifest = folder / "fixture.toml"
    text = manifest.read_text(encoding="utf-8")
    manifest.write_text(text.replace('trace = "trace.csv"', f'trace = "{name}"'), "utf-8")


@pytest.mark.parametrize("folder", FOLDERS, ids=fixture_id)
def test_the_same_bytes_from_any_format_any_row_order_and_any_run(
    sandbox: Path, folder: Path
) -> None:
    here = sandbox / "fixtures" / folder.name
    first = produce(load_fixture(here))
    assert produce(load_fixture(here)) == first  # twice
    events = load_trace(here / "trace.csv").as_frame()
    shuffled = events.sample(fraction=1.0, shuffle=True, seed=3)
    assert shuffled.rows() != events.rows()
    for name, frame in [
        ("trace.ndjson", events),
        ("trace.parquet", events),
        ("shuffled.csv", shuffled),
        ("shuffled.parquet", shuffled),
    ]:
        _retrace(here, name, frame)
        assert produce(load_fixture(here)) == first, name  # so it passes as the CSV does
        (here / "fixture.toml").write_text((folder / "fixture.toml").read_text("utf-8"), "utf-8")


def test_the_pytest_plugin_collects_the_fixtures_of_this_repository(
    pytestconfig: pytest.Config,
) -> None:
    """``testpaths`` holds ``fixtures``, so this suite runs every fixture as a test item."""
    assert "fixtures" in pytestconfig.getini("testpaths")
    assert pytestconfig.pluginmanager.has_plugin("contractlang")


# =========================================================================== clauses


def _clauses(path: Path) -> Iterator[tuple[str, int, int]]:
    """Every clause and ``require`` of a ruleset: its text and where it stands."""
    text = path.read_text(encoding="utf-8")
    spot = parse(text, str(path)).file
    assert spot is not None
    for item in spot.items:
        parts = item.clauses if hasattr(item, "clauses") else item.requires
        for part in parts:
            start, end = part.span.start_pos, part.span.end_pos
            yield " ".join(text[start:end].split()), start, end


def _fixtures_of(sandbox: Path, ruleset: str) -> list[Path]:
    return [
        f
        for f in find_fixtures([sandbox / "fixtures"])
        if any(Path(t).name == ruleset for t in load_fixture(f).manifest.terms)
    ]


#: Clauses that say what the language does anyway: taking them out moves no figure.
RESTATING_A_DEFAULT = {
    ("aws-ec2-spot-linux.spot", "billing increment 1 second"),
    ("gcp-spot-vms.spot", "billing increment 1 second"),
    ("northwind-negotiated.spot", "precision 2"),
    (
        "northwind-negotiated.spot",
        "rate none when capacity == reserved",
    ),  # a none rate prices nothing
}
#: Clauses the rest of their file needs: taking them out is a checker error.
NEEDED = {
    *((f, "currency USD") for f in ("aws-ec2-spot-linux.spot", "azure-spot-vms.spot")),
    *((f, "currency USD") for f in ("coreweave-spot.spot", "gcp-spot-vms.spot")),
    ("northwind-negotiated.spot", "currency USD"),
    ("northwind-negotiated.spot", "promise reclaim notice 2 minutes"),  # read as promised_notice
    ("northwind-negotiated.spot", "promise restart within 15 minutes"),  # promised_restart
}
#: Some removals and the line their diff must show (worked out by hand in the READMEs).
NAMED = {
    # AWS r3-a1 without the 60 s minimum: 6.88 × 45 / 3,600 = 0.086 → 0.09, not 0.11
    "billing minimum 60 seconds": "gross 93.49 → 93.47 USD (-0.02)",
    # CoreWeave r1-a2 ends 18:30 New York time: the billing day moves back to March 31
    'billing period ends 17:00 "America/New_York"': "charge date (1 line) 2025-04-01 → 2025-03-31",
    # Northwind r1-a8: 0.285 rounds half up to 0.29
    "rounding half_even": "gross 87.73 → 87.74 USD (+0.01)",
    # the month-cap fixture: without the contract cap its 50,000 cut is not given back
    "cap credits at 250000 USD per contract": "net 2832240.00 → 2782240.00 USD (-50000.00)",
    # the FY27 budgets: a requirement removed is named
    "require mean(reclaims) < 3": "requirement removed (was mean(reclaims) < 3)",
}
_PRICE = re.compile(r"rate (\d+\.\d\d) USD per gpu_hour")


def _text(o: FixtureResult) -> str:
    return "\n".join(outcome_lines(o, 80, limit=None))


@pytest.mark.parametrize("ruleset", sorted(p.name for p in RULESETS.glob("*.spot")))
def test_taking_out_any_clause_of_a_ruleset_fails_a_fixture_with_the_figure_it_moved(
    sandbox: Path, ruleset: str
) -> None:
    path = sandbox / "rulesets" / ruleset
    original = path.read_text(encoding="utf-8")
    folders = _fixtures_of(sandbox, ruleset)
    assert folders, f"no fixture uses {ruleset}"
    problems: list[str] = []
    seen: dict[str, str] = {}
    try:
        for clause, start, end in _clauses(path):
            mutated = original[:start] + original[end:]
            checked = check_texts([(mutated, str(path))])
            if not checked.ok:
                seen[clause] = "needed"
                continue
            path.write_text(mutated, encoding="utf-8")
            outcomes = (
                [run_fixture(f) for f in folders] if clause in NAMED else _first_moved(folders)
            )
            seen[clause] = _judge(clause, outcomes, problems)
            if seen[clause] == "unpriced":  # the price itself must still be watched
                price = _PRICE.search(clause)
                assert price is not None, clause
                bumped = str(Decimal(price.group(1)) + Decimal("0.01"))
                at = original.index(price.group(1), start)
                path.write_text(original[:at] + bumped + original[at + 4 :], encoding="utf-8")
                if not any(
                    o.status == "fail" and figures_moved(o.changes) for o in _first_moved(folders)
                ):
                    problems.append(f"{clause}: a price of {bumped} moves no figure")
            path.write_text(original, encoding="utf-8")
    finally:
        path.write_text(original, encoding="utf-8")
    assert not problems, "\n".join(problems)
    assert {c for c, how in seen.items() if how == "needed"} == {
        c for f, c in NEEDED if f == ruleset
    }
    assert {c for c, how in seen.items() if how == "default"} == {
        c for f, c in RESTATING_A_DEFAULT if f == ruleset
    }
    assert len(seen) >= 4


def _first_moved(folders: list[Path]) -> list[FixtureResult]:
    """Run the fixtures until one shows a moved figure (all of them when none does)."""
    outcomes = []
    for folder in folders:
        o = run_fixture(folder)
        outcomes.append(o)
        if o.status == "fail" and figures_moved(o.changes):
            break
    return outcomes


def _judge(clause: str, outcomes: list[FixtureResult], problems: list[str]) -> str:
    """How a fixture noticed the clause was gone: a moved figure (its text naming it), an
    allocation no rate prices any more (E401), or — for a clause restating a default — only
    the terms' digest."""
    moved = [o for o in outcomes if o.status == "fail" and figures_moved(o.changes)]
    if moved:
        texts = [_text(o) for o in moved]
        change = next(c for c in moved[-1].changes if c.kind not in ("line", "input"))
        if change.text() not in " ".join(texts[-1].split()):
            problems.append(f"{clause}: the diff does not show `{change.text()}`")
        if clause in NAMED and not any(NAMED[clause] in text for text in texts):
            problems.append(f"{clause}: expected `{NAMED[clause]}` in\n" + "\n".join(texts))
        return "moved"
    unpriced = [o for o in outcomes if any(d.code == "E401" for d in o.diagnostics)]
    if unpriced:
        message = next(d.message for d in unpriced[0].diagnostics if d.code == "E401")
        if not re.search(r"prices no rate .*`[\w-]+` of run `[\w-]+`", message):
            problems.append(f"{clause}: E401 does not name the allocation: {message}")
        return "unpriced"
    if outcomes and all(o.status == "fail" and not figures_moved(o.changes) for o in outcomes):
        text = _text(outcomes[0])
        if "no figure moved" not in text or "sha256" not in text:
            problems.append(f"{clause}: the diff does not say the terms alone changed:\n{text}")
        return "default"
    problems.append(f"{clause}: no fixture noticed it: {[o.status for o in outcomes]}")
    return "unnoticed"
