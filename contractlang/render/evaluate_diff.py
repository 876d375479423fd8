"""What changed between two `contractlang.evaluate/1` documents and two ledgers, in the words
a negotiator reads: which totals, which runs, which ledger lines, old → new and by how much
(``net 14.79 → 14.81 USD (+0.02)``), not a raw JSON diff.

:func:`diff_documents` walks two documents; :func:`diff_ledgers` matches two ledgers line by
line (an allocation's charge, each exclusion, credit and cap by its term). Both give
:class:`Change`\\ s in document order; :func:`change_lines` lays them out, grouped by where
they happened, within a width.

>>> old = {"contracts": [{"name": "nw", "currency": "USD", "totals": {"net": "14.79"}}]}
>>> new = {"contracts": [{"name": "nw", "currency": "USD", "totals": {"net": "14.81"}}]}
>>> print("\\n".join(change_lines(diff_documents(old, new), 80)))
nw
  net 14.79 → 14.81 USD (+0.02)
"""

from __future__ import annotations

import decimal
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Literal

from contractlang.diagnostics import printable
from contractlang.lang.numbers import EXACT
from contractlang.render.layout import wrap

__all__ = ["Change", "change_lines", "diff_documents", "diff_ledgers", "figures_moved"]

#: ``figure``: a number moved (with its delta); ``value``: a word or text changed; ``added``,
#: ``removed``: an item (a contract, a requirement, a ledger line …) appeared or went away;
#: ``line``: only the source line a result points at moved; ``input``: an input's digest.
Kind = Literal["figure", "value", "added", "removed", "line", "input"]


@dataclass(frozen=True)
class Change:
    """One difference: ``where`` it happened (a contract, a budget requirement, a ledger line),
    ``what`` changed, the old and new values as shown (None when added or removed), the unit,
    and for a number how much it moved (``+0.02``)."""

    kind: Kind
    where: str
    what: str
    old: str | None = None
    new: str | None = None
    unit: str = ""
    delta: str | None = None

    def text(self) -> str:
        """The change in words, without its ``where``.

        >>> Change("figure", "nw", "net", "14.79", "14.81", "USD", "+0.02").text()
        'net 14.79 → 14.81 USD (+0.02)'
        """
        return " ".join(self.chunks())

    def chunks(self) -> list[str]:
        """The words of :meth:`text`, grouped so that no figure is split from its unit."""
        unit = self.unit if self.unit in ("", "%") else f" {self.unit}"
        what = [printable(w) for w in self.what.split(" ") if w]
        if self.kind == "added":
            return [*what, "added:", f"{printable(self.new or '')}{unit}"]
        if self.kind == "removed":
            return [*what, "removed", f"(was {printable(self.old or '')}{unit})"]
        old, new = printable(self.old or "none"), printable(self.new or "none")
        if self.kind == "line":
            return [*what, f"line {old} → {new}"]
        if self.kind == "figure":
            return [*what, old, "→", f"{new}{unit}", f"({self.delta})"]
        if unit:  # a number on one side only (``1315.68 USD → none``)
            old, new = (x + unit if _is_number(x) else x for x in (old, new))
        return [*what, *old.split(" "), "→", *new.split(" ")]

    def to_json(self) -> dict[str, str | None]:
        return {
            "kind": self.kind,
            "where": self.where,
            "what": self.what,
            "old": self.old,
            "new": self.new,
            "unit": self.unit,
            "delta": self.delta,
        }


def figures_moved(changes: Iterable[Change]) -> bool:
    """Whether any change is more than a moved source line or an input's digest."""
    return any(c.kind not in ("line", "input") for c in changes)


def change_lines(
    changes: Sequence[Change], width: int, indent: int = 0, limit: int | None = None
) -> list[str]:
    """The changes as lines of at most ``width`` cells: each ``where`` once, its changes
    indented under it, wrapped between words (never inside a figure); with ``limit``, the
    first ``limit`` changes and how many more there are."""
    lines: list[str] = []
    pad = " " * indent
    where: str | None = None
    shown = changes if limit is None else changes[:limit]
    for c in shown:
        if c.where != where:
            where = c.where
            heading = wrap(printable(where).split(" "), width - indent, indent=4)
            lines.extend(pad + line for line in heading)
        lines.extend(pad + "  " + line for line in wrap(c.chunks(), width - indent - 2, indent=4))
    if len(shown) < len(changes):
        more = len(changes) - len(shown)
        lines.append(pad + f"… and {more:,} more change{'s' if more != 1 else ''}")
    return lines


# --------------------------------------------------------------------------- documents

_LABELS: dict[str, str] = {
    "accepted_runs": "accepted runs",
    "metered_gpu_hours": "metered GPU-hours",
    "excluded_gpu_hours": "excluded GPU-hours",
    "billable_gpu_hours": "billable GPU-hours",
    "cap_cuts": "cap cuts",
    "gpu_hours": "GPU-hours",
    "cost_per_accepted_run": "cost per accepted run",
    "reclaim_notice": "reclaim notice",
    "promised_seconds": "promised",
    "shortest_seconds": "shortest notice",
    "longest_wait_seconds": "longest wait",
    "never_replaced": "never replaced",
}
#: Keys whose values are money in the contract's currency.
_MONEY = frozenset({"gross", "credits", "cap_cuts", "net", "p50", "p95", "max"})
#: Sections of a contract whose keys are named with the section (``lost GPU-hours``).
_PREFIXED = frozenset({"lost", "cost_per_accepted_run", "reclaim_notice", "restart", "quarantine"})
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


@dataclass(frozen=True)
class _Ctx:
    where: str
    label: str = ""  # the words naming the parent section
    currency: str = ""
    unit: str | None = None  # the unit of ``value``, ``limit`` and ``margin`` (requirements)


def diff_documents(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[Change]:
    """Every difference between two evaluate documents, in document order."""
    out: list[Change] = []
    for key in _keys(old, new):
        a, b = old.get(key), new.get(key)
        if key == "contracts":
            _items(out, _Ctx(""), "contract", _as_list(a), _as_list(b))
        elif key == "terms":
            _terms(out, _as_list(a), _as_list(b))
        elif key == "trace":
            _walk(out, _Ctx("trace"), "", a, b)
        elif key == "warnings":
            _items(out, _Ctx("warnings"), "warning", _as_list(a), _as_list(b))
        else:
            _walk(out, _Ctx("evaluation"), key, a, b)
    return out


def _keys(*maps: Any) -> list[str]:
    """The keys of the mappings, in the order of the newest, then any only the older has."""
    keys: list[str] = []
    for m in reversed(maps):
        if isinstance(m, Mapping):
            keys.extend(k for k in m if k not in keys)
    return keys


def _as_list(v: Any) -> list[Any]:
    return list(v) if isinstance(v, list) else []


def _terms(out: list[Change], old: list[Any], new: list[Any]) -> None:
    """Terms files by name: a new digest is an input change; a file given or no longer
    given is added or removed."""
    before = {_get(t, "file"): t for t in old}
    after = {_get(t, "file"): t for t in new}
    for name in [*after, *(n for n in before if n not in after)]:
        a, b = before.get(name), after.get(name)
        if a is None:
            out.append(Change("added", "terms", f"`{name}`", new=_short(_get(b, "sha256"))))
        elif b is None:
            out.append(Change("removed", "terms", f"`{name}`", old=_short(_get(a, "sha256"))))
        elif _get(a, "sha256") != _get(b, "sha256"):
            what = f"`{name}` sha256"
            old_sha, new_sha = _short(_get(a, "sha256")), _short(_get(b, "sha256"))
            out.append(Change("input", "terms", what, old_sha, new_sha))


def _short(digest: Any) -> str:
    """A digest's first 12 hex digits (enough to tell two apart at a glance)."""
    text = str(digest)
    head, _, hexdigits = text.rpartition(":")
    return f"{head + ':' if head else ''}{hexdigits[:12]}…" if len(hexdigits) > 12 else text


def _get(item: Any, key: str) -> Any:
    return item.get(key) if isinstance(item, Mapping) else None


def _identity(item: Any, index: int) -> tuple[Any, ...]:
    """What names a list item across two documents: a contract or budget by its name, a
    requirement by its text, a warning by its code and message; anything else by position."""
    if isinstance(item, Mapping):
        for key in ("name", "require"):
            if key in item:
                return (key, item[key])
        if "code" in item and "message" in item:
            return ("warning", item["code"], item["message"], item.get("file"))
    return ("#", index)


def _describe(item: Any) -> str:
    if isinstance(item, Mapping):
        for key in ("name", "require", "message"):
            if key in item:
                return str(item[key])
        if "promised_seconds" in item:
            return f"promised {item['promised_seconds']} s"
    return _show(item)


def _items(out: list[Change], ctx: _Ctx, noun: str, old: list[Any], new: list[Any]) -> None:
    """Two lists matched item by item (:func:`_identity`)."""
    before = {_identity(x, i): x for i, x in enumerate(old)}
    after = {_identity(x, i): x for i, x in enumerate(new)}
    for key in [*after, *(k for k in before if k not in after)]:
        a, b = before.get(key), after.get(key)
        if a is None:
            out.append(Change("added", ctx.where or noun, noun, new=_describe(b)))
        elif b is None:
            out.append(Change("removed", ctx.where or noun, noun, old=_describe(a)))
        elif a != b:
            _walk(out, _item_ctx(ctx, noun, a, b), "", a, b)


def _item_ctx(ctx: _Ctx, noun: str, a: Any, b: Any) -> _Ctx:
    """Where the fields of a list item are: under a contract, a budget or a requirement."""
    if noun == "contract":
        currency = str(_get(b, "currency") or _get(a, "currency") or "")
        return _Ctx(str(_get(b, "name")), currency=currency)
    if noun == "budget":
        return _Ctx(f"{ctx.where}, budget {_get(b, 'name')}", currency=ctx.currency)
    if noun == "requirement":
        unit = str(_get(b, "unit") if _get(b, "unit") is not None else _get(a, "unit") or "")
        where = f"{ctx.where}: `{_get(b, 'require')}`"
        return _Ctx(where, currency=ctx.currency, unit=unit)
    return ctx


def _walk(out: list[Change], ctx: _Ctx, key: str, a: Any, b: Any) -> None:
    """A value of a document: sections recursed into, lists matched, leaves compared."""
    if a == b:
        return
    label = _label(ctx, key)
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        inner = _Ctx(ctx.where, label if key in _PREFIXED else ctx.label, ctx.currency, ctx.unit)
        for k in _keys(a, b):
            _walk(out, inner, k, a.get(k), b.get(k))
        return
    if isinstance(a, list) and isinstance(b, list):
        noun = {"budgets": "budget", "requirements": "requirement", "warnings": "warning"}
        _items(out, ctx, noun.get(key, label or key), a, b)
        return
    if _leaf(a) and _leaf(b):
        out.append(_leaf_change(ctx, key, label, a, b))
    elif a is None:
        out.append(Change("added", ctx.where, label, new=_describe(b)))
    elif b is None:
        out.append(Change("removed", ctx.where, label, old=_describe(a)))
    else:
        out.append(Change("value", ctx.where, label, _describe(a), _describe(b)))


def _leaf(v: Any) -> bool:
    return isinstance(v, (str, int, float, bool)) or v is None


def _leaf_change(ctx: _Ctx, key: str, label: str, a: Any, b: Any) -> Change:
    if key == "line":
        return Change("line", ctx.where, "", _show(a), _show(b))
    if key == "digest":
        return Change("input", ctx.where, label, _short(a), _short(b))
    delta = _delta(a, b)
    unit = _unit(ctx, key, b) or _unit(ctx, key, a)
    if delta is not None:
        return Change("figure", ctx.where, label, _show(a), _show(b), unit, delta)
    return Change("value", ctx.where, label, _show(a), _show(b), unit)


def _label(ctx: _Ctx, key: str) -> str:
    word = _LABELS.get(key, key.replace("_", " "))
    return f"{ctx.label} {word}".strip() if ctx.label else word


def _unit(ctx: _Ctx, key: str, value: Any) -> str:
    if not _is_number(value):
        return ""
    if key in ("value", "limit", "margin") and ctx.unit is not None:
        return ctx.unit
    if key in _MONEY:
        return ctx.currency
    if key.endswith("gpu_hours"):
        return "GPU-h"
    if key.endswith("seconds"):
        return "s"
    return ""


def _is_number(v: Any) -> bool:
    if isinstance(v, bool):
        return False
    return isinstance(v, int) or (isinstance(v, str) and _NUMBER.fullmatch(v) is not None)


def _delta(a: Any, b: Any) -> str | None:
    """``b − a`` with its sign, at the places of the more precise of the two (as an exact
    difference has them), exactly however many digits they have; None unless both are
    numbers.

    >>> _delta("12345678901234567890123456.78", "12345678901234567890123456.790")
    '+0.010'
    >>> _delta("-123456789012345678901234567.891", "18")
    '+123456789012345678901234585.891'
    """
    if not (_is_number(a) and _is_number(b)):
        return None
    x, y = str(a), str(b)
    d = _exact([x, y]).subtract(Decimal(y), Decimal(x))
    return f"+{d:f}" if d > 0 else f"{d:f}" if d < 0 else f"±{d:f}"


def _exact(numbers: Sequence[str]) -> decimal.Context:
    """A context in which the sum or difference of ``numbers`` (plain decimal text) is exact:
    :data:`~contractlang.lang.numbers.EXACT`, widened for numbers of more digits than it
    holds (an expected file may hold any). Python's default context keeps 28 digits: it
    rounded a sum of 29-digit amounts, and raised on quantizing a difference of them.

    >>> _exact(["1" * 300, "0.5"]).prec  # 300 whole digits, 1 place, 1 more for the carry
    302
    """
    whole = max((len(n.lstrip("-").partition(".")[0]) for n in numbers), default=0)
    places = max((_places(n) for n in numbers), default=0)
    digits = whole + places + len(str(len(numbers)))  # a sum of n numbers: n ≤ 10^len(n)
    if digits <= EXACT.prec:
        return EXACT
    wide = EXACT.copy()
    wide.prec = digits
    return wide


def _places(text: str) -> int:
    return len(text.partition(".")[2])


def _show(v: Any) -> str:
    if v is None:
        return "none"
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


# --------------------------------------------------------------------------- ledgers

_LEDGER_FIGURES = ("quantity_gpu_hours", "amount")
_LedgerKey = tuple[str, ...]


def diff_ledgers(
    old: Sequence[Mapping[str, str]],
    new: Sequence[Mapping[str, str]],
    currencies: Mapping[str, str] | None = None,
) -> list[Change]:
    """What changed between two ledgers (rows of text, as CSV gives them): first each run
    whose net (the sum of its lines) moved, then the changes of text (a charge's term, a
    month, a line number) once for all the lines they share, then each line whose amount or
    GPU-hours moved, that appeared or that went away. Lines are matched by contract, run,
    allocation, kind and, for all but an allocation's one charge, term; ``currencies`` names
    each contract's currency."""
    money = currencies or {}
    before, after = _keyed(old), _keyed(new)
    out: list[Change] = []
    shared: dict[tuple[str, ...], int] = {}
    for key in [*after, *(k for k in before if k not in after)]:
        a, b = before.get(key), after.get(key)
        row = b if b is not None else a
        assert row is not None
        where, what = _ledger_where(row), _ledger_what(row)
        unit = money.get(row.get("contract", ""), "")
        if a is None:
            out.append(Change("added", where, what, new=row.get("amount", ""), unit=unit))
        elif b is None:
            out.append(Change("removed", where, what, old=row.get("amount", ""), unit=unit))
        else:
            out.extend(_row_figures(where, what, a, b, unit, shared))
    texts = []
    for (contract, kind, column, x, y), n in shared.items():
        lines = f"({n} line{'s' if n != 1 else ''})"
        where = f"{contract} ledger"
        if column == "line":
            texts.append(Change("line", where, f"{kind} {lines}", x, y))
        else:
            what = f"{kind} {column} {lines}"
            texts.append(Change("value", where, what, x or "none", y or "none"))
    return [*_run_nets(old, new, money), *texts, *out]


def _run_nets(
    old: Sequence[Mapping[str, str]], new: Sequence[Mapping[str, str]], money: Mapping[str, str]
) -> list[Change]:
    """Each run whose lines sum to another net."""
    a, b = _nets(old), _nets(new)
    out = []
    for key in [*b, *(k for k in a if k not in b)]:
        contract, run = key
        where, what, unit = f"{contract} runs", f"run {run} net", money.get(contract, "")
        if key not in a:
            out.append(Change("added", where, f"run {run}", new=b[key], unit=unit))
        elif key not in b:
            out.append(Change("removed", where, f"run {run}", old=a[key], unit=unit))
        elif a[key] != b[key]:
            delta = _delta(a[key], b[key])
            out.append(Change("figure", where, what, a[key], b[key], unit, delta))
    return out


def _nets(rows: Sequence[Mapping[str, str]]) -> dict[tuple[str, str], str]:
    """Each run's net: the exact sum of its lines' amounts."""
    amounts: dict[tuple[str, str], list[str]] = {}
    for row in rows:
        key = (row.get("contract", ""), row.get("run_id", ""))
        amount = row.get("amount", "")
        amounts.setdefault(key, []).extend([amount] if _is_number(amount) else [])
    nets = {}
    for key, terms in amounts.items():
        with decimal.localcontext(_exact(terms)):
            nets[key] = f"{sum((Decimal(t) for t in terms), Decimal(0)):f}"
    return nets


def _keyed(rows: Sequence[Mapping[str, str]]) -> dict[_LedgerKey, Mapping[str, str]]:
    keyed: dict[_LedgerKey, Mapping[str, str]] = {}
    for row in rows:
        kind = row.get("kind", "")
        base = tuple(row.get(c, "") for c in ("contract", "run_id", "alloc_id"))
        term = "" if kind == "charge" else row.get("term", "")
        n = 0
        while (*base, kind, term, str(n)) in keyed:
            n += 1
        keyed[(*base, kind, term, str(n))] = row
    return keyed


def _ledger_where(row: Mapping[str, str]) -> str:
    alloc = row.get("alloc_id") or ""
    place = f"run {row.get('run_id', '')}" + (f", allocation {alloc}" if alloc else "")
    return f"{row.get('contract', '')} ledger, {place}"


def _ledger_what(row: Mapping[str, str]) -> str:
    kind = row.get("kind", "")
    return kind if kind == "charge" else f"{kind} `{row.get('term', '')}`"


def _row_figures(
    where: str,
    what: str,
    a: Mapping[str, str],
    b: Mapping[str, str],
    unit: str,
    shared: dict[tuple[str, ...], int],
) -> list[Change]:
    """A matched line's moved figures; its other changes counted in ``shared``."""
    out = []
    for column in _keys(a, b):
        x, y = a.get(column) or "", b.get(column) or ""
        if x == y:
            continue
        if column in _LEDGER_FIGURES and _delta(x, y) is not None:
            label = f"{what} {'amount' if column == 'amount' else 'GPU-hours'}"
            shown = unit if column == "amount" else "GPU-h"
            out.append(Change("figure", where, label, x, y, shown, _delta(x, y)))
        else:
            kind = _ledger_what(b)
            key = (b.get("contract", ""), kind, column, x, y)
            shared[key] = shared.get(key, 0) + 1
    return out
