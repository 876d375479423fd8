"""The JSON document of `contractlang compare --format json` (schema ``contractlang.compare/1``,
docs/compare.md).

Each entry of ``contracts`` is exactly `evaluate`'s contract entry
(:func:`~contractlang.render.evaluate.json.contract_to_json`) plus ``rank``, ``delta`` and, with
``--attribute``, ``attribution`` and ``to_pass``. Stable: the same inputs give the same bytes;
every exact number is a string.
"""

from __future__ import annotations

import json
from fractions import Fraction
from typing import Any

from contractlang.compare.model import (
    Attribution,
    ComparedContract,
    Comparison,
    ContractFigures,
    ToPass,
)
from contractlang.evaluate.results import BudgetResult, ContractResult, DisplayUnit
from contractlang.lang.numbers import plain, round_fraction
from contractlang.render.common.numbers import gpu_hours_str, measure, minor_to_str
from contractlang.render.compare.words import PRICE_NOTE, verdict_chunks
from contractlang.render.evaluate.json import contract_to_json, evaluation_to_json

SCHEMA = "contractlang.compare/1"
_MONEY = DisplayUnit("", Fraction(1), "money")


def comparison_to_json(cmp: Comparison) -> dict[str, Any]:
    doc = evaluation_to_json(cmp.evaluation)
    head = cmp.headline_requirement
    return {
        "schema": SCHEMA,
        "summary": " ".join(verdict_chunks(cmp)),
        "verdict": doc["verdict"],
        "ranking": None
        if cmp.ranking is None
        else {"budget": cmp.ranking, "headline": head.text if head is not None else None},
        "baseline": cmp.baseline,
        "trace": doc["trace"],
        "contracts": [contract_entry(c) for c in cmp.contracts],
        "warnings": doc["warnings"],
    }


def render_compare_json(cmp: Comparison) -> str:
    return json.dumps(comparison_to_json(cmp), indent=2, ensure_ascii=False) + "\n"


def contract_entry(c: ComparedContract) -> dict[str, Any]:
    """One contract's entry: `evaluate`'s, with its rank, its delta and its attribution."""
    entry = contract_to_json(c.result)
    entry["rank"] = c.rank
    entry["delta"] = delta_json(c)
    if c.attribution is not None:
        mine = ContractFigures.of(c.result, c.result.budgets)
        entry["attribution"] = [attribution_json(a, mine, c.result) for a in c.attribution]
        entry["to_pass"] = None if c.to_pass is None else to_pass_json(c.to_pass, c.result)
    return entry


def _signed(text: str | None) -> str | None:
    if text is None or text.startswith("-"):
        return text
    return "+" + text


def delta_json(c: ComparedContract) -> dict[str, Any]:
    """``c`` − the baseline, every figure as a signed string (``None`` where not comparable)."""
    r, d = c.result, c.delta
    p = r.settings.precision

    def cash(v: Fraction | None) -> str | None:
        return _signed(measure(v, _MONEY, p))

    return {
        "totals": {
            "metered_gpu_hours": _signed(gpu_hours_str(d.usage_us["metered"])),
            "excluded_gpu_hours": _signed(gpu_hours_str(d.usage_us["excluded"])),
            "billable_gpu_hours": _signed(gpu_hours_str(d.usage_us["billable"])),
            **(
                {k: cash(v) for k, v in d.money.items()}
                if d.money is not None
                else dict.fromkeys(("gross", "credits", "cap_cuts", "net"))
            ),
        },
        "lost": {"gpu_hours": _signed(gpu_hours_str(d.usage_us["lost"])), "steps": d.lost_steps},
        "cost_per_accepted_run": None
        if d.cost_per_accepted_run is None
        else {k: cash(v) for k, v in d.cost_per_accepted_run.items()},
        "budgets": [
            {
                "name": b.name,
                "requirements": [
                    {"require": req.text, "value": _signed(measure(v, req.unit, p))}
                    for req, v in zip(b.requirements, d.requirements[b.name], strict=True)
                ],
            }
            for b in r.budgets
        ],
    }


def figures_json(o: ContractFigures, r: ContractResult) -> dict[str, Any]:
    """The figures of one evaluation: money as strings, ``credits`` after caps."""
    p = r.settings.precision
    return {
        "gross": minor_to_str(o.gross_minor, p),
        "credits": minor_to_str(o.credits_minor, p),
        "cap_cuts": minor_to_str(o.cap_cuts_minor, p),
        "net": minor_to_str(o.net_minor, p),
        "p95_cost_per_accepted_run": measure(o.p95, _MONEY, p),
        "budgets_met": {b.name: b.met for b in o.budgets},
        "budgets": [_budget_values(b, p) for b in o.budgets],
    }


def _budget_values(b: BudgetResult, precision: int) -> dict[str, Any]:
    return {
        "name": b.name,
        "met": b.met,
        "requirements": [
            {
                "require": req.text,
                "value": measure(req.value, req.unit, precision),
                "verdict": req.verdict,
            }
            for req in b.requirements
        ],
    }


def attribution_json(a: Attribution, mine: ContractFigures, r: ContractResult) -> dict[str, Any]:
    p = r.settings.precision
    w = a.without
    change = None
    if w is not None:
        p95 = None if mine.p95 is None or w.p95 is None else mine.p95 - w.p95
        change = {
            "gross": _signed(minor_to_str(mine.gross_minor - w.gross_minor, p)),
            "credits": _signed(minor_to_str(mine.credits_minor - w.credits_minor, p)),
            "cap_cuts": _signed(minor_to_str(mine.cap_cuts_minor - w.cap_cuts_minor, p)),
            "net": _signed(minor_to_str(mine.net_minor - w.net_minor, p)),
            "p95_cost_per_accepted_run": _signed(measure(p95, _MONEY, p)),
        }
    return {
        "clause": a.clause.label,
        "kind": a.clause.kind,
        "line": a.clause.line,
        "without": None if w is None else figures_json(w, r),
        "change": change,
        "error": a.error,
    }


def multiplier_str(m: Fraction) -> str:
    """A multiplier (a terminating decimal: every one tried is) as a plain decimal string,
    exactly.

    >>> multiplier_str(Fraction(283, 32)), multiplier_str(Fraction(10))
    ('8.84375', '10')
    """
    digits = 0
    while (m * 10**digits).denominator != 1:
        digits += 1
    return plain(round_fraction(m, digits))


def to_pass_json(tp: ToPass, r: ContractResult) -> dict[str, Any]:
    p = tp.price
    price = None
    if p is not None:
        price = {
            "kind": "headroom" if tp.met else "price_to_pass",
            "applies_to": PRICE_NOTE,
            "scope": p.scope,
            "monotone": p.monotone,
            "multiplier": None if p.largest is None else multiplier_str(p.largest),
            "intervals": [[multiplier_str(lo), multiplier_str(hi)] for lo, hi in p.intervals],
            "at_multiplier": None if p.at_largest is None else figures_json(p.at_largest, r),
            "never_passes": list(p.never),
            "evaluations": sum(1 for x in p.probes if x.multiplier != 1),
        }
    return {
        "budget": tp.budget,
        "met": tp.met,
        "decided_by_trace": [
            {"require": x.text, "line": x.line, "verdict": x.verdict} for x in tp.fixed_failures
        ],
        "clauses": [{"clause": c.label, "kind": c.kind, "line": c.line} for c in tp.clauses],
        "price": price,
    }
