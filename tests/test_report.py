"""Reports: `--report PATH.html` is one self-contained page (no script, nothing fetched, a chart
per figure), `--report PATH.md` fits a pull-request comment (no HTML, < 65,000 characters for
five drafts); every string from a trace or a contract is escaped; one hand-checked Markdown
report is kept as a golden file."""

from __future__ import annotations

import math
import re
from fractions import Fraction
from pathlib import Path

import pytest
from support.cli import no_traceback, run
from support.compared import rulesets_attributed
from support.scenario import accepted, reclaimed, released, started, trace_frame

from contractlang.compare import compare
from contractlang.pipeline.language import terms_from_text
from contractlang.render.report import render_html, render_markdown

ROOT = Path(__file__).resolve().parents[1]
RULESETS = sorted((ROOT / "rulesets").glob("*.spot"))
EXAMPLE = ROOT / "examples" / "trace.parquet"
GOLDEN = ROOT / "tests" / "golden" / "compare_report.md"

DRAFTS = """
contract "steady" {
  currency USD
  rate 2 USD per gpu_hour
}

contract "lenient" {
  currency USD
  rate 3 USD per gpu_hour
  exclude "reclaimed early" allocation when end_reason == reclaimed and runtime < 1 hour
}

budget "b" {
  require p95(cost_per_accepted_run) <= 25 USD
  require share(accepted) >= 50%
}
"""

EVENTS = [
    # r1: 1 GPU reclaimed after 30 min, then 1 GPU for 5 h; accepted
    started("r1", "r1-a1", 0, gpus=1),
    reclaimed("r1", "r1-a1", 30),
    started("r1", "r1-a2", 40, gpus=1),
    released("r1", "r1-a2", 340),
    accepted("r1", 341),
    # r2: 2 GPUs for 2 h; accepted
    started("r2", "r2-a1", 0, gpus=2),
    released("r2", "r2-a1", 120),
    accepted("r2", 121),
    # r3: 1 GPU for 10 h; never accepted
    started("r3", "r3-a1", 0, gpus=1),
    released("r3", "r3-a1", 600),
]


@pytest.fixture(scope="module")
def small() -> object:
    return compare(
        terms_from_text(DRAFTS, "drafts.spot"), trace_frame(EVENTS), attribute_clauses=True
    )


def test_the_golden_markdown_report(small) -> None:  # type: ignore[no-untyped-def]
    text = render_markdown(small)
    assert text == GOLDEN.read_text(encoding="utf-8")
    # Hand-checked figures it holds:
    # steady (2 USD/GPU-h): r1 = 0.5 h × 2 + 5 h × 2 = 11.00, r2 = 2 GPUs × 2 h × 2 = 8.00,
    # r3 = 10 h × 2 = 20.00: net 39.00; p95 of the accepted (8.00, 11.00) = 8 + 3 × 0.95 = 10.85
    assert "| net billed \\(USD\\) | 39.00 | 57.00 |" not in text  # parentheses are not escaped
    assert "| net billed (USD) | 39.00 | 57.00 |" in text
    # lenient (3 USD/GPU-h, r1's 30-minute reclaimed allocation excluded): r1 = 5 h × 3 = 15.00,
    # r2 = 12.00, r3 = 30.00: net 57.00 (+18.00); p95 = 12 + 3 × 0.95 = 14.85
    assert "| cost per accepted run p95 (USD) | 10.85 | 14.85 |" in text
    assert "| Δ net billed vs steady | +0.00 USD | +18.00 USD |" in text
    # steady ranks first: both meet the budget, steady with the larger margin (25 − 10.85)
    assert (
        "best: steady, p95(cost\\_per\\_accepted\\_run) 10.85 USD, 14.15 USD under the limit"
        in text
    )
    # without the exclusion lenient bills r1's first allocation too: 0.5 h × 3 = 1.50
    assert "| reclaimed early | exclusion | 10 | -1.50 USD |" in text
    # share(accepted) = 2 of 3 runs
    assert "66.6667%" in text


def _cents(x: Fraction) -> Fraction:
    """A ledger line: rounded once to the cent, half away from zero (x ≥ 0 here)."""
    return Fraction(math.floor(x * 100 + Fraction(1, 2)), 100)


def _p95(low: Fraction, high: Fraction) -> Fraction:
    """p95 of two accepted runs' costs: linear between the closest ranks."""
    return low + (high - low) * Fraction(95, 100)


def test_the_price_to_pass_is_the_last_multiplier_that_passes_within_a_tenth_of_a_percent(
    small,  # type: ignore[no-untyped-def]
) -> None:
    # steady at m: r1 = cents(0.5 h × 2m) + cents(5 h × 2m), r2 = cents(2 × 2 h × 2m); the budget
    # needs p95 ≤ 25 (share(accepted) = 2/3 whatever m). Without rounding: m ≤ 25 / 10.85.
    def steady(m: Fraction) -> Fraction:
        return _p95(_cents(8 * m), _cents(1 * m) + _cents(10 * m))

    # lenient: r1 = cents(5 h × 3m) (its first allocation excluded), r2 = cents(2 × 2 h × 3m)
    def lenient(m: Fraction) -> Fraction:
        return _p95(_cents(12 * m), _cents(15 * m))

    for name, p95 in (("steady", steady), ("lenient", lenient)):
        price = small.contract(name).to_pass.price
        m = price.largest
        assert p95(m) <= 25, name
        assert p95(m * Fraction(1001, 1000)) > 25, name
        assert price.at_largest.p95 == p95(m), name


def test_the_markdown_report_of_five_drafts_fits_a_comment_and_holds_no_html() -> None:
    cmp = rulesets_attributed()
    text = render_markdown(cmp)
    assert len(text) < 65_000
    assert not re.search(r"(?<!\\)<", text), "an unescaped < could open an HTML tag"
    for c in cmp.contracts:
        assert c.name in text


EVIL = "<script>alert(1)</script>\x1b[31m"


@pytest.fixture(scope="module")
def evil(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    """Reports of a contract and a run whose names hold a script tag and a terminal escape."""
    spot = DRAFTS.replace('"steady"', '"' + EVIL + '"')
    events = [dict(e, run_id=EVIL + "run" if e["run_id"] == "r3" else e["run_id"]) for e in EVENTS]
    cmp = compare(terms_from_text(spot, "evil.spot"), trace_frame(events), attribute_clauses=True)
    assert any(c.name == EVIL for c in cmp.contracts)
    return render_html(cmp), render_markdown(cmp)


def test_html_escapes_every_name_from_a_trace_or_a_contract(evil: tuple[str, str]) -> None:
    html, _ = evil
    assert "<script" not in html.lower()
    assert "\x1b" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;\\x1b[31m" in html  # the contract, as text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;\\x1b[31mrun" in html  # the run, as text


def test_markdown_escapes_every_name_from_a_trace_or_a_contract(evil: tuple[str, str]) -> None:
    _, md = evil
    assert "\x1b" not in md
    assert not re.search(r"(?<!\\)<", md)
    assert "\\<script\\>alert(1)\\</script\\>\\\\x1b[31m" not in md  # `[` is escaped too
    assert "\\<script\\>alert(1)\\</script\\>\\\\x1b\\[31m" in md


def test_the_html_report_is_self_contained(small) -> None:  # type: ignore[no-untyped-def]
    html = render_html(small)
    assert html.startswith("<!DOCTYPE html>")
    assert "<script" not in html.lower()
    assert not re.search(r"<link|<img|<iframe|@import|url\(", html, re.IGNORECASE)
    # no address but the SVG namespaces (names, not fetched)
    addresses = set(re.findall(r"https?://[^\s\"'<>)]+", html))
    assert addresses <= {"http://www.w3.org/2000/svg", "http://www.w3.org/1999/xlink"}
    charts = re.findall(r'<figure class="chart" id="chart-([a-z]+)">', html)
    assert charts == ["cost", "usage", "lost", "clauses", "price"]
    assert html.count("<svg") >= len(charts)
    # it opens with the verdict, before any chart
    assert html.index('id="verdict"') < html.index("<svg")


def test_reports_from_the_command_line(tmp_path: Path) -> None:
    html, md = tmp_path / "out.html", tmp_path / "out.md"
    result = run("compare", *RULESETS, EXAMPLE, "--report", html, "--attribute")
    no_traceback(result)
    assert result.exit_code == 1
    assert html.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    result = run("evaluate", *RULESETS, EXAMPLE, "--report", md)
    assert result.exit_code == 1
    assert md.read_text(encoding="utf-8").startswith("# 5 drafts against budget")
    bad = run("compare", *RULESETS, EXAMPLE, "--report", tmp_path / "out.pdf")
    assert bad.exit_code == 2
    assert "must end in `.html` or `.md`" in bad.output
    nowhere = run("compare", *RULESETS, EXAMPLE, "--report", tmp_path / "no" / "out.md")
    assert nowhere.exit_code == 2
    assert "does not exist" in nowhere.output
