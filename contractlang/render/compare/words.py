"""A comparison in words, shared by the terminal, the Markdown and the HTML report: the verdict
that opens each, what it takes each draft to pass, the clauses' effects.

Each sentence is a list of chunks: a line may break between chunks, never inside one (a figure
with its unit, a multiplier). Names are as written; each renderer escapes them its own way.

>>> multiplier_text(Fraction("8.84375")), multiplier_text(Fraction(10))
('8.843×', '10×')
>>> multiplier_text(Fraction("0.1234565"), up=True)
'0.124×'
"""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction

from contractlang.compare.model import (
    Attribution,
    ComparedContract,
    Comparison,
    ContractFigures,
    ToPass,
)
from contractlang.evaluate.results import (
    BudgetResult,
    ContractResult,
    DisplayUnit,
    RequirementResult,
)
from contractlang.lang.numbers import plain
from contractlang.render.common.layout import words
from contractlang.render.common.numbers import measure_human, money

#: Places a multiplier is shown to (the bisection finds it to 0.1 %).
MULTIPLIER_PLACES = 3
PRICE_NOTE = (
    "m multiplies the price of every rate clause; money amounts written in credits and caps "
    "stay as they are"
)


def multiplier_text(m: Fraction, *, up: bool = False) -> str:
    """A multiplier for people, to 3 places: rounded down (an upper end: the draft still
    passes there), or up for the lower end of an interval."""
    unit = 10**MULTIPLIER_PLACES
    q = m * unit
    whole = math.ceil(q) if up else math.floor(q)
    text = plain(Decimal(whole).scaleb(-MULTIPLIER_PLACES).normalize())
    return f"{text}×"


def percent_change(m: Fraction) -> str:
    """``m`` as a change of price: ``+37.2%``, ``-12.5%`` (rounded toward no change)."""
    pct = (m - 1) * 100
    tenth = Fraction(math.floor(abs(pct) * 10), 10)
    shown = plain(Decimal(tenth.numerator) / Decimal(tenth.denominator))
    return f"{'+' if pct >= 0 else '-'}{shown}%"


def cash(c: ContractResult, amount: Fraction | None, *, sign: bool = False) -> str:
    """Money in currency units, with the contract's currency."""
    if amount is None:
        return "none"
    minor = amount * c.settings.minor
    if minor.denominator == 1:
        return money(int(minor), c.settings.precision, c.settings.currency, sign=sign)
    text = measure_human(amount, DisplayUnit(c.settings.currency, Fraction(1), "money"))
    return f"+{text}" if sign and amount >= 0 else text


def minor_cash(c: ContractResult, minor: int, *, sign: bool = False) -> str:
    return money(minor, c.settings.precision, c.settings.currency, sign=sign)


def requirement_value(r: RequirementResult, precision: int) -> str:
    return measure_human(r.value, r.unit, precision)


def _side(r: RequirementResult) -> str:
    return {"<": "under", "<=": "under", ">": "above", ">=": "above"}.get(r.op, "from")


def ranking_of(c: ContractResult, budget: str) -> RequirementResult | None:
    b = next((b for b in c.budgets if b.name == budget), None)
    return b.headline if b is not None else None


def verdict_chunks(cmp: Comparison) -> list[str]:
    """The plain-language first line: how many drafts meet the ranking budget and the best,
    or what keeps each from passing."""
    cs = [c.result for c in cmp.ranked]
    n = len(cs)
    drafts = f"draft{'' if n == 1 else 's'}"
    if cmp.ranking is None:
        best = cs[0]
        return [
            *words(f"{n} {drafts} compared, no budget given; lowest net billed:"),
            f"{best.name},",
            minor_cash(best, best.totals.net_minor) + ".",
        ]
    budget = cmp.ranking
    meeting = [c for c in cs if _met(c, budget)]
    if meeting:
        best = meeting[0]
        head = ranking_of(best, budget)
        out = [*words(f"{len(meeting)} of {n} {drafts} meet{'s' if n == 1 else ''}"), budget + ";"]
        out += ["best:", f"{best.name}" + ("," if head is not None else ".")]
        if head is not None and head.margin is not None:
            measure = cmp.headline or head.text
            amount = measure_human(abs(head.margin), head.unit, best.settings.precision)
            out += [
                measure,
                requirement_value(head, best.settings.precision) + ",",
                amount,
                *words(f"{_side(head)} the limit."),
            ]
        return out
    failing = {
        c.name: tuple(r.text for r in _budget(c, budget).requirements if not r.met) for c in cs
    }
    common = set.intersection(*(set(v) for v in failing.values())) if failing else set()
    first = words(f"none of the {n} {drafts} meets") if n > 1 else words("the draft does not meet")
    if common and all(set(v) == common for v in failing.values()):
        ordered = [t for t in next(iter(failing.values())) if t in common]
        every = "every draft fails" if n > 1 else "it fails"
        out = [*first, budget + ":", *words(every), *_joined(ordered)]
        if not any(_moved(cmp, cs[0], budget, ordered)):
            out[-1] += ","
            out += words("which the trace decides: no clause or price changes "
                         + ("it." if len(ordered) == 1 else "them."))  # fmt: skip
        else:
            out[-1] += "."
        return out
    out = [*first, budget + ";", *words("what keeps each from passing:")]
    for k, c in enumerate(cs):
        end = "." if k == len(cs) - 1 else ";"
        out += [c.name, "—", *_joined(failing[c.name])[:-1], _joined(failing[c.name])[-1] + end]
    return out


def _moved(cmp: Comparison, c: ContractResult, budget: str, texts: list[str]) -> list[bool]:
    """For each requirement text of ``budget``, whether the terms move it."""
    b = next(b for b in c.budgets if b.name == budget)
    index = {r.text: i for i, r in enumerate(b.requirements)}
    return [index[t] in cmp.moved.get(budget, ()) for t in texts]


def _joined(texts: tuple[str, ...] | list[str]) -> list[str]:
    """Requirement texts as chunks joined by commas and a final “and”; each text stays whole."""
    out: list[str] = []
    for k, t in enumerate(texts):
        if k and k == len(texts) - 1:
            out.append("and")
        out.append(t + ("," if k < len(texts) - 2 else ""))
    return out or ["nothing"]


def _budget(c: ContractResult, name: str) -> BudgetResult:
    return next(b for b in c.budgets if b.name == name)


def _met(c: ContractResult, budget: str) -> bool:
    return any(b.name == budget and b.met for b in c.budgets)


def to_pass_chunks(cc: ComparedContract) -> list[list[str]]:
    """What it takes ``cc`` to meet the ranking budget, one sentence per finding."""
    tp = cc.to_pass
    if tp is None:
        return []
    out: list[list[str]] = []
    if tp.fixed_failures:
        out.append(
            [
                *_joined([r.text for r in tp.fixed_failures]),
                *words(
                    "— measured on the trace alone: no clause and no price changes "
                    + ("it" if len(tp.fixed_failures) == 1 else "them")
                    + "."
                ),
            ]
        )
    elif not tp.met:
        if tp.clauses:
            names = [f"“{c.label}”" for c in tp.clauses]
            out.append([*words("removing one clause would make it pass:"), *_joined(names)])
        else:
            out.append(words("no single clause removed would make it pass."))
    out += price_chunks(tp, cc.result)
    return out


def price_chunks(tp: ToPass, c: ContractResult) -> list[list[str]]:
    """The price to pass (or headroom) as sentences."""
    p = tp.price
    if p is None:
        return [words("no requirement of the budget depends on the terms: prices do not matter.")]
    scope = "" if p.scope == "budget" else " the requirements the terms can move"
    if not p.intervals:
        never = _joined(list(p.never)) if p.never else ["the budget"]
        return [[*words(f"no price multiplier m in [0, 10] meets{scope or ' it'};"), *never,
                 *words("never passes.")]]  # fmt: skip
    largest = p.largest
    assert largest is not None
    if p.monotone:
        end = multiplier_text(largest)
        at = p.at_largest
        tail = [] if at is None or at.p95 is None else [
            *words("p95 cost per accepted run there:"), cash(c, at.p95) + "."
        ]  # fmt: skip
        if largest == 10:
            said = [*words(f"meets{scope or ' it'} at every multiplier up to"), "10×;"]
        elif tp.met or (p.scope == "terms" and largest >= 1):
            said = [*words(f"price headroom:{scope or ' the budget'} stay{'' if scope else 's'}"
                           " met up to m ="), end,
                    f"({percent_change(largest)}", *words("on every rate);")]  # fmt: skip
        else:
            said = [*words(f"price to pass:{scope or ' the budget'} "
                           f"{'are' if scope else 'is'} met at m ≤"), end,
                    f"({percent_change(largest)}", *words("on every rate);")]  # fmt: skip
        return [[*said, *tail]]
    spans = [
        f"[{multiplier_text(lo, up=True)[:-1]}, {multiplier_text(hi)[:-1]}]"
        for lo, hi in p.intervals
    ]
    return [[*words(f"pass/fail is not monotone in m; meets{scope or ' it'} for m in"),
             *_joined(spans)]]  # fmt: skip


def signed_measure(value: Fraction, unit: DisplayUnit, precision: int) -> str:
    """A change of a measure, with its sign: ``+12.00 USD``, ``-0.5%``."""
    text = measure_human(value, unit, precision)
    return text if value < 0 else "+" + text


def attribution_chunks(
    a: Attribution,
    c: ContractResult,
    base: ContractFigures,
    ranking: str | None,
    measure: str | None,
) -> list[str]:
    """One clause's effect: its name, then what changes when it is taken out."""
    head = [f"“{a.clause.label}”", f"({a.clause.kind}, line {a.clause.line}):"]
    if a.without is None:
        return [*head, *words(f"cannot be evaluated without it: {a.error}")]
    w = a.without
    out = [*head, *words("without it, net"), minor_cash(c, w.net_minor - base.net_minor, sign=True)]
    moved = a.headline_change
    if ranking is not None and moved is not None and moved != 0:
        r = ranking_of(c, ranking)
        if r is not None:
            out += ["and", measure or r.text, signed_measure(-moved, r.unit, c.settings.precision)]
    if ranking is not None:
        before, after = base.met(ranking), w.met(ranking)
        if before != after:
            out.append(f"— {ranking} {'met' if after else 'no longer met'}")
    out[-1] += "."
    return out
