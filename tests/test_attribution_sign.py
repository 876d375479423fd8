"""The sign of clause attribution (`compare --attribute`, `explain --attribute`), pinned on a
trace small enough to bill by hand.

docs/compare.md: a clause's attribution is the contract evaluated without it set beside the
contract with it; the JSON's `change` is with − without, the terminal says what the net and the
ranking budget's headline do without it (`without it, net +3.00 USD`), and `explain` prints
`with − without`. So taking out a credit or an exclusion raises the net (the clause is worth
money to the buyer), and taking out a cap (which had cut credits) or the billing minimum or
increment lowers it. Every figure below is computed by hand in the comments.
"""

from __future__ import annotations

import json
from decimal import Decimal
from fractions import Fraction
from io import StringIO
from pathlib import Path

import pytest
from rich.console import Console
from support.cli import no_traceback, run
from support.scenario import accepted, failed, reclaimed, released, started, trace_frame

from contractlang.compare import Comparison, compare
from contractlang.compare.attribution import headline_change, ranked
from contractlang.compare.model import ContractFigures
from contractlang.pipeline.language import terms_from_text
from contractlang.render.compare.terminal import render_comparison

# 6 USD per GPU-hour is 0.10 USD per GPU-minute; every allocation holds 1 GPU.
SPOT = """\
contract "signs" {
  currency USD
  rate 6 USD per gpu_hour
  billing increment 1 minute
  billing minimum 10 minutes
  exclude "early reclaim" allocation when end_reason == reclaimed and runtime < 1 hour
  credit "failure" 50% of charge when end_reason == failed
  cap credits at 1 USD per run
}

budget "b" {
  require mean(net) <= 5.20 USD
}
"""

# Times are minutes after 2025-01-01 00:00 UTC. With every clause, run by run:
#   r1: 30 min, reclaimed in its first hour → excluded: 0.00
#   r2: 2.5 min → 3 min by the increment → 10 min by the minimum: 10 × 0.10 = 1.00
#   r3: 61.5 min → 62 min by the increment: 62 × 0.10 = 6.20
#   r4: 120 min, failed: charge 120 × 0.10 = 12.00; credit 50% = −6.00; the run cap keeps
#       1.00 of it, a cap line of +5.00: net 12.00 − 6.00 + 5.00 = 11.00
#   r5: 60 min: 6.00
# gross 0 + 1.00 + 6.20 + 12.00 + 6.00 = 25.20; credits −6.00; cap cuts +5.00;
# net 25.20 − 6.00 + 5.00 = 24.20; headline mean(net) = 24.20 / 5 = 4.84 (met: ≤ 5.20).
EVENTS = [
    started("r1", "a1", 0, gpus=1), reclaimed("r1", "a1", 30), accepted("r1", 31),
    started("r2", "a2", 0, gpus=1), released("r2", "a2", 2.5), accepted("r2", 31),
    started("r3", "a3", 0, gpus=1), released("r3", "a3", 61.5), accepted("r3", 62),
    started("r4", "a4", 0, gpus=1), failed("r4", "a4", 120), accepted("r4", 121),
    started("r5", "a5", 0, gpus=1), released("r5", "a5", 60), accepted("r5", 61),
]  # fmt: skip

WITH = {"gross": 2520, "credits": -600 + 500, "cap_cuts": 500, "net": 2420}  # minor units

# Each clause taken out, by hand: (kind, line, gross, credits after caps, cap cuts, net),
# money in cents; the headline mean(net) without it is net / 5.
WITHOUT = {
    # r1 billed: 30 min × 0.10 = +3.00 → gross 28.20, net 27.20 (mean 5.44 > 5.20: not met)
    "early reclaim": ("exclusion", 6, 2820, -100, 500, 2720),
    # no credit, so nothing to cap: r4 bills 12.00 → net 25.20 (mean 5.04)
    "failure": ("credit", 7, 2520, 0, 0, 2520),
    # the whole 6.00 credit stands: r4 6.00 → net 25.20 − 6.00 = 19.20 (mean 3.84)
    "cap credits at 1 USD per run": ("cap", 8, 2520, -600, 0, 1920),
    # r2 bills 3 min: 0.30 instead of 1.00 → −0.70: gross 24.50, net 23.50 (mean 4.70)
    "billing minimum 10 minutes": ("billing", 5, 2450, -100, 500, 2350),
    # r3 bills 61.5 min: 6.15 instead of 6.20 → −0.05 (r2's 2.5 min still bills the 10-min
    # minimum): gross 25.15, net 24.15 (mean 4.83)
    "billing increment 1 minute": ("billing", 4, 2515, -100, 500, 2415),
}

# with − without, in cents: the sign each clause must carry
CHANGE = {
    "early reclaim": 2420 - 2720,  # −300: the exclusion saves the buyer 3.00
    "failure": 2420 - 2520,  # −100: the credit (after the cap) is worth 1.00
    "cap credits at 1 USD per run": 2420 - 1920,  # +500: the cap costs the buyer 5.00
    "billing minimum 10 minutes": 2420 - 2350,  # +70: the minimum costs 0.70
    "billing increment 1 minute": 2420 - 2415,  # +5: the increment costs 0.05
}


@pytest.fixture(scope="module")
def compared() -> Comparison:
    return compare(terms_from_text(SPOT), trace_frame(EVENTS), attribute_clauses=True)


def test_the_contract_as_written(compared: Comparison) -> None:
    (c,) = compared.contracts
    o = ContractFigures.of(c.result, c.result.budgets)
    assert (o.gross_minor, o.credits_minor, o.cap_cuts_minor, o.net_minor) == tuple(WITH.values())
    (req,) = c.result.budgets[0].requirements
    assert (req.value, req.verdict) == (Fraction(2420, 5 * 100), "met")  # 24.20 / 5 = 4.84


def test_each_clause_without_it_and_the_sign_of_its_change(compared: Comparison) -> None:
    (c,) = compared.contracts
    assert c.attribution is not None
    base = ContractFigures.of(c.result, c.result.budgets)
    got = {}
    for a in c.attribution:
        w = a.without
        assert w is not None, a.error
        got[a.clause.label] = (
            a.clause.kind, a.clause.line, w.gross_minor, w.credits_minor, w.cap_cuts_minor,
            w.net_minor,
        )  # fmt: skip
        # the net moves by with − without, and the headline by the same over 5 runs
        assert base.net_minor - w.net_minor == CHANGE[a.clause.label]
        assert headline_change(a, base, "b") == Fraction(CHANGE[a.clause.label], 5 * 100)
        assert a.headline_change == headline_change(a, base, "b")  # carried for the renderers
        (req,) = w.budgets[0].requirements
        assert req.value == Fraction(WITHOUT[a.clause.label][5], 5 * 100)
    assert got == WITHOUT
    signs = {label: (change > 0) - (change < 0) for label, change in CHANGE.items()}
    assert signs == {
        "early reclaim": -1,  # taking it out raises the net
        "failure": -1,  # taking it out raises the net
        "cap credits at 1 USD per run": 1,  # taking it out lowers the net
        "billing minimum 10 minutes": 1,  # taking it out lowers the net
        "billing increment 1 minute": 1,  # taking it out lowers the net
    }
    # without the exclusion the headline 27.20 / 5 = 5.44 passes the limit 5.20
    assert [a.clause.label for a in c.attribution if not a.without.met("b")] == [  # type: ignore[union-attr]
        "early reclaim"
    ]
    # by how much they move the headline, most first: 1.00, 0.60, 0.20, 0.14, 0.01
    by_effect = [
        "cap credits at 1 USD per run",
        "early reclaim",
        "failure",
        "billing minimum 10 minutes",
        "billing increment 1 minute",
    ]
    assert [a.clause.label for a in ranked(c.attribution, base, "b")] == by_effect
    assert [a.clause.label for a in c.ranked_attribution] == by_effect


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("signs")
    (d / "signs.spot").write_text(SPOT, encoding="utf-8")
    trace_frame(EVENTS).write_parquet(d / "trace.parquet")
    return d


def cents(minor: int, sign: bool = False) -> str:
    """Cents as the JSON writes money: ``-300`` → ``-3.00``; with ``sign``, ``+`` before 0
    and above."""
    text = str(Decimal(minor).scaleb(-2))
    return "+" + text if sign and minor >= 0 else text


def test_the_json_says_with_minus_without(files: Path) -> None:
    result = run(
        "compare", files / "signs.spot", files / "trace.parquet", "--attribute", "--format", "json"
    )
    no_traceback(result)
    assert result.exit_code == 0, result.output
    (entry,) = json.loads(result.stdout)["contracts"]
    assert entry["totals"]["net"] == "24.20"
    by_clause = {a["clause"]: a for a in entry["attribution"]}
    assert set(by_clause) == set(WITHOUT)
    for label, (kind, line, gross, credits, cap_cuts, net) in WITHOUT.items():
        a = by_clause[label]
        assert (a["kind"], a["line"], a["error"]) == (kind, line, None)
        assert {k: a["without"][k] for k in ("gross", "credits", "cap_cuts", "net")} == {
            "gross": cents(gross), "credits": cents(credits), "cap_cuts": cents(cap_cuts),
            "net": cents(net),
        }  # fmt: skip
        assert a["change"]["net"] == cents(CHANGE[label], sign=True)
        assert a["change"]["gross"] == cents(WITH["gross"] - gross, sign=True)
        assert a["change"]["credits"] == cents(WITH["credits"] - credits, sign=True)
        assert a["change"]["cap_cuts"] == cents(WITH["cap_cuts"] - cap_cuts, sign=True)
    # the signs written out: the exclusion and the credit save money, the rest cost it
    assert {label: a["change"]["net"] for label, a in by_clause.items()} == {
        "early reclaim": "-3.00",
        "failure": "-1.00",
        "cap credits at 1 USD per run": "+5.00",
        "billing minimum 10 minutes": "+0.70",
        "billing increment 1 minute": "+0.05",
    }
    # p95 cost per accepted run (every run accepted; position 0.95 × 4 = 3.8, between the 4th
    # and 5th smallest): with, of 0, 1.00, 6.00, 6.20, 11.00: 6.20 + 0.8 × 4.80 = 10.04;
    # without the credit (r4 12.00): 6.20 + 0.8 × 5.80 = 10.84, change 10.04 − 10.84 = −0.80;
    # without the cap (r4 6.00; 0, 1.00, 6.00, 6.00, 6.20): 6.00 + 0.8 × 0.20 = 6.16, +3.88
    assert by_clause["failure"]["change"]["p95_cost_per_accepted_run"] == "-0.80"
    assert by_clause["cap credits at 1 USD per run"]["change"]["p95_cost_per_accepted_run"] == (
        "+3.88"
    )
    # the headline without each clause: net / 5
    for label, a in by_clause.items():
        (req,) = a["without"]["budgets"][0]["requirements"]
        assert req["value"] == str(Decimal(WITHOUT[label][5]).scaleb(-2) / 5)


# What the terminal says of each clause, most moving first (whitespace collapsed): "without
# it" is without − with, the opposite of the JSON's change.
SENTENCES = [
    "• “cap credits at 1 USD per run” (cap, line 8): without it, net -5.00 USD and mean(net)"
    " -1.00 USD.",
    "• “early reclaim” (exclusion, line 6): without it, net +3.00 USD and mean(net) +0.60 USD"
    " — b no longer met.",
    "• “failure” (credit, line 7): without it, net +1.00 USD and mean(net) +0.20 USD.",
    "• “billing minimum 10 minutes” (billing, line 5): without it, net -0.70 USD and mean(net)"
    " -0.14 USD.",
    "• “billing increment 1 minute” (billing, line 4): without it, net -0.05 USD and mean(net)"
    " -0.01 USD.",
]


def said(text: str) -> None:
    """Every sentence of :data:`SENTENCES` is in ``text``, in their order."""
    assert [s for s in SENTENCES if s not in text] == []
    at = [text.index(s) for s in SENTENCES]
    assert at == sorted(at)


def test_the_terminal_says_what_the_net_does_without_each_clause(compared: Comparison) -> None:
    out = StringIO()
    render_comparison(compared, Console(file=out, width=100, color_system=None), hints=False)
    said(" ".join(out.getvalue().split()))


def test_the_command_line_terminal_says_the_same(files: Path) -> None:
    result = run("compare", files / "signs.spot", files / "trace.parquet", "--attribute")
    no_traceback(result)
    assert result.exit_code == 0, result.output
    said(" ".join(result.stdout.split()))


def test_explain_gives_one_runs_net_with_minus_without(files: Path) -> None:
    # r4: the credit is worth 11.00 − 12.00 = −1.00, the cap costs 11.00 − 6.00 = +5.00; the
    # exclusion, minimum and increment do not touch a 120-minute failed allocation
    result = run(
        "explain", files / "signs.spot", files / "trace.parquet", "--run", "r4", "--attribute"
    )
    no_traceback(result)
    assert result.exit_code == 0, result.output
    assert (
        'what each clause does to run r4 under "signs" (net 11.00 USD):\n'
        "  “failure” (credit, line 7): without it 12.00 USD; with − without: -1.00 USD\n"
        "  “cap credits at 1 USD per run” (cap, line 8): without it 6.00 USD;"
        " with − without: +5.00 USD\n"
        "  no effect on this run: “billing increment 1 minute”, “billing minimum 10 minutes”,"
        " “early reclaim”\n"
    ) in result.stdout
