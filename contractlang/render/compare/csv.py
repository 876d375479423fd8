"""`contractlang compare --format csv`: one row per contract and figure, from the contracts'
entries of the JSON document (:mod:`~contractlang.render.compare.json`), so both always say the
same (the document's trace, and so its digest, is not needed).

Columns: ``contract``, ``rank``, ``section`` (``totals``, ``lost``, ``cost_per_accepted_run``,
``budget:<name>``, ``without:<clause>``, ``to_pass``), ``figure``, ``value``, ``delta`` (against
the baseline; for a ``without:`` row, with the clause − without it) and ``verdict`` (for
budget requirements).
"""

from __future__ import annotations

from typing import Any

import polars as pl

from contractlang.compare.model import Comparison
from contractlang.render.common.tables import spreadsheet_safe
from contractlang.render.compare.json import contract_entry

COLUMNS = ("contract", "rank", "section", "figure", "value", "delta", "verdict")
#: The columns of numbers written as text (``value`` holds an error's message on an ``error``
#: row): their number cells are never escaped for a spreadsheet, a signed delta included.
NUMBERS = ("rank", "value", "delta")


def _text(v: Any) -> str | None:
    if v is None:
        return None
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def compare_rows(cmp: Comparison) -> list[tuple[str | None, ...]]:
    rows: list[tuple[str | None, ...]] = []
    for entry in (contract_entry(c) for c in cmp.contracts):
        rows += [
            (entry["name"], str(entry["rank"]), *(_text(v) for v in f)) for f in _figures(entry)
        ]
    return rows


def _figures(entry: dict[str, Any]) -> list[tuple[Any, ...]]:
    """(section, figure, value, delta, verdict) for every figure of one contract's entry."""
    out: list[tuple[Any, ...]] = []
    d = entry["delta"]
    for k, v in entry["totals"].items():
        out.append(("totals", k, v, d["totals"].get(k), None))
    for k, v in entry["lost"].items():
        out.append(("lost", k, v, d["lost"][k], None))
    deltas = d["cost_per_accepted_run"] or {}
    for k, v in entry["cost_per_accepted_run"].items():
        out.append(("cost_per_accepted_run", k, v, deltas.get(k), None))
    for b, bd in zip(entry["budgets"], d["budgets"], strict=True):
        for req, rd in zip(b["requirements"], bd["requirements"], strict=True):
            section = f"budget:{b['name']}"
            out.append((section, req["require"], req["value"], rd["value"], req["verdict"]))
    for a in entry.get("attribution") or ():
        section = f"without:{a['clause']}"
        if a["without"] is None:
            out.append((section, "error", a["error"], None, None))
            continue
        for k in ("gross", "credits", "cap_cuts", "net", "p95_cost_per_accepted_run"):
            out.append((section, k, a["without"][k], a["change"][k], None))
    tp = entry.get("to_pass")
    if tp is not None and tp["price"] is not None:
        out.append(("to_pass", tp["price"]["kind"], tp["price"]["multiplier"], None, None))
    return out


def render_compare_csv(cmp: Comparison) -> str:
    """The CSV document, safe to open in a spreadsheet: a text cell that would start a formula
    (a contract named ``=x``, a requirement ``-sum(credits) …``) is written after a ``'``
    (:func:`~contractlang.render.common.tables.spreadsheet_safe`)."""
    frame = pl.DataFrame(compare_rows(cmp), schema=dict.fromkeys(COLUMNS, pl.String), orient="row")
    return spreadsheet_safe(frame, NUMBERS).write_csv()
