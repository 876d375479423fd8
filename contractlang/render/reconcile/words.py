"""Reconciliation in words: exact money as text, the facts and terms behind an expected amount as
sentences, shared by the terminal summary, the JSON document and the dispute CSV.

>>> money_text(Decimal("42.000000000000000000"), 2), money_text(Decimal("0.0000008"), 2)
('42.00', '0.0000008')
>>> print(reason_text(Reason("exclusion", "first hour", 14, "7001#2", "runtime < 1 hour",
...     (("runtime", timedelta(minutes=39, seconds=12)),))))
allocation 7001#2 excluded by "first hour" (line 14) because runtime < 1 hour: runtime = 39 min 12 s
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from decimal import Decimal, Inexact
from fractions import Fraction

from contractlang.lang.numbers import EXACT, micros, round_fraction
from contractlang.reconcile.model import FactValue, Reason, ReconciledAmount
from contractlang.render.common.numbers import duration_human
from contractlang.trace.problems import Sources


def money_text(d: Decimal, precision: int, *, grouped: bool = False) -> str:
    """An exact amount as text: at ``precision`` places when that is exact, else every digit
    it has (never rounded); with thousands separators when ``grouped``."""
    try:  # exact when only zeros go (an invoice's 38 digits are more than the default 28)
        shown = d.quantize(Decimal(1).scaleb(-precision), context=EXACT)
    except Inexact:
        shown = d.normalize(EXACT)
    if shown == 0:
        shown = shown.copy_abs()  # no "-0.00"
    return f"{shown:,f}" if grouped else f"{shown:f}"


def fact_text(value: FactValue) -> str:
    """A fact's value as people read it: durations in words, money to 6 places at most."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, timedelta):
        return duration_human(micros(value))
    if isinstance(value, Decimal):
        return money_text(round_fraction(Fraction(value), 6, half_even=False), 2)
    return str(value)


def reason_text(r: Reason) -> str:
    """One reason as a sentence: the term, its line, its condition and the facts it read."""
    at = f" (line {r.line})" if r.line is not None else ""
    who = f"allocation {r.alloc_id} " if r.alloc_id else ""
    facts = ", ".join(f"{name} = {fact_text(v)}" for name, v in r.facts)
    because = f" because {r.condition}" if r.condition else ""
    tail = f": {facts}" if facts else ""
    if r.kind == "exclusion":
        head = f'{who}excluded by "{r.term}"{at}'
    elif r.kind == "credit":
        head = f'{who}credited by "{r.term}"{at}'
    elif r.kind == "cap":
        return f"{who}credits cut by `{r.term}`{at}".strip()
    elif r.kind == "charge":
        head = f"{who}charged by `{r.term}`{at}"
    else:
        return f"{r.term}: {r.condition}" if r.condition else r.term
    return f"{head}{because}{tail}"


def what(c: ReconciledAmount) -> str:
    """What a comparison is about: ``charge of allocation 7001#1``, ``credits of run 7001``."""
    if c.kind == "credit":
        return f"credits of run {c.run_id}"
    if c.alloc_id is not None:
        return f"charge of allocation {c.alloc_id} (run {c.run_id})"
    return f"charges of run {c.run_id} in {c.month}"


def rows_text(rows: Sequence[int], sources: Sources, most: int = 6) -> str:
    """Trace rows, each named by its own file: ``invoice.parquet row 8``, ``jobs.csv rows 2, 3;
    invoice.parquet row 8``; past ``most`` rows, ``and N more``.

    >>> rows_text([3, 12, 13], Sources(("jobs.csv", "invoice.csv"), (0, 10)))
    'jobs.csv row 3; invoice.csv rows 2, 3'
    """
    by_file: dict[int, list[int]] = {}
    for row in rows[:most]:
        i, local = sources.position(row)
        by_file.setdefault(i, []).append(local)
    parts = [
        f"{sources.names[i]} {'row' if len(local) == 1 else 'rows'} {', '.join(map(str, local))}"
        for i, local in by_file.items()
    ]
    rest = len(rows) - most
    return "; ".join(parts) + (f" and {rest:,} more" if rest > 0 else "")


def rows_json(rows: Sequence[int], sources: Sources) -> list[dict[str, int]]:
    """Trace rows as JSON: the file by its place among the trace files given (1 for the first:
    JSON names no paths) and the row in it."""
    out = []
    for row in rows:
        i, local = sources.position(row)
        out.append({"file": i + 1, "row": local})
    return out


def basis_text(c: ReconciledAmount) -> str:
    """The terms behind an expected amount, each once, with its line: names of credits in
    quotes, rates and caps as written."""
    seen: dict[str, str] = {}
    for b in c.basis:
        if b.term in seen:
            continue
        name = f'"{b.term}"' if b.kind == "credit" else b.term
        seen[b.term] = name + (f" (line {b.line})" if b.line is not None else "")
    return "; ".join(seen.values())


STATUS_WORDS = {
    "matched": "matched",
    "over_billed": "over-billed",
    "under_billed": "under-billed",
    "missing": "not invoiced",
    "unexpected": "invoiced, nothing expected",
}
