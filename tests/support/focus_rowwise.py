"""The row-by-row FOCUS reader that ``import focus`` had before it was vectorised, kept as the
reference the vectorised reader is compared with (``tests/test_import_focus_reader.py``): every
row's mapping, rejection code, reason and row number, every note and figure must agree.

What follows is the original module's text, but for this paragraph, the entry point's name
(``import_focus_rowwise``) and what it shares with the package, imported from there: the lists
of columns and ``RunKey``, the header's index, the CSV records as :mod:`csv` reads them, the
messages of a tag no row has and of a file cut short, and the notes' messages; and extended, row
by row, as the mapping grew: the ChargeCategory deciding the kind of line (a negative Usage or
Purchase line a reversal, never a credit), the billing period and the other FOCUS 1.2 and 1.3
columns kept, the provider, and a last line without a line break.

``contractlang import focus``: a FOCUS billing export (CSV, FOCUS 1.0–1.3) as invoice lines.

Each row becomes one run-level invoice line (no ``alloc_id``), dated by its
``ChargePeriodStart``, with ``BilledCost`` as its exact ``amount``; its ChargeCategory decides
its kind (``charge``, ``credit``, ``adjustment``, ``tax``), and a negative Usage or Purchase
line is a ``charge`` flagged ``reversal``. The run is read from a tag (``--run-from tag:KEY``)
or is the ``ResourceId`` (``--run-from resource``); rows without one go to the run
``unattributed`` and are reported. ChargeCategory, ChargeClass, PricingCategory, EffectiveCost,
ListCost and the other columns an audit reads are kept beside ``amount``; a correction
(ChargeClass ``Correction``) is kept and flagged (``correction``).

Rows are the CSV's data rows, from 1 (the header is not a row).
"""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import polars as pl

from contractlang.diagnostics import did_you_mean
from contractlang.importers.csv_table import records
from contractlang.importers.focus import values as fv
from contractlang.importers.focus.columns import (
    DECIMAL_KEPT,
    ENUM_KEPT,
    EVENTS,
    PROVIDER,
    PROVIDERS,
    REQUIRED,
    REVERSIBLE,
    TEXT_KEPT,
    TIME_KEPT,
    UNATTRIBUTED,
    RunKey,
)
from contractlang.importers.focus.rows import MESSAGES, missing_tag
from contractlang.importers.focus.table import _header_index
from contractlang.importers.frame import MONEY, SOURCE_ROW, Events, validated
from contractlang.importers.localtime import parse_timestamp
from contractlang.importers.result import Collector, ImportResult, Reject, last_line_detail
from contractlang.importers.text import cut_short, format_error, read_text
from contractlang.lang.frames import TIMESTAMP
from contractlang.lang.numbers import EXACT, exact_sum


def import_focus_rowwise(path: str | Path, run_from: RunKey | str) -> ImportResult:
    """Read a FOCUS CSV export as invoice lines (see the module docstring)."""
    p = Path(path)
    name = str(p)
    key = run_from if isinstance(run_from, RunKey) else RunKey.parse(run_from)
    if key is None:
        raise ValueError(f"not a run key: {run_from!r} (use `tag:KEY` or `resource`)")
    text = read_text(p)
    rows = records(name, text)
    header = next(rows, None)
    if header is None:
        raise format_error(name, f"`{name}` is empty: it has no header")
    index = _header_index(name, header[0], key)
    c = Collector("focus", name)
    width = len(header[0])
    reader = _Reader(name, index, width, key, c)
    every = list(rows)
    whole = text.endswith(("\n", "\r"))
    if every and not whole and len(every[-1][0]) < width:  # the last line, cut short
        raise cut_short(name, text.count("\n") + 1, len(every[-1][0]), width)
    for n, (values, record) in enumerate(every, start=1):
        c.rows_read += 1
        if not values:
            c.blank(n)
            continue
        mapped = reader.events.height
        reader.read(n, values, record)
        if n == len(every) and not whole and reader.events.height > mapped:
            c.note("I044", MESSAGES["I044"], n, last_line_detail(text.count("\n") + 1, values[-1]))
    reader.require_tag()
    frame = reader.events.frame()
    trace = validated(frame, name, None)
    reader.facts()
    report = c.report(events=frame.height, runs=trace.summary.runs, allocations=0)
    return ImportResult(frame, trace, report)


def _utc(ts: datetime) -> datetime | None:
    """An aware time in UTC; None when that falls off the calendar (year 10000)."""
    try:
        return ts.astimezone(UTC)
    except OverflowError:
        return None


def _rows(n: int) -> str:
    return f"{n:,} row" + ("" if n == 1 else "s")


class _Reader:
    """Maps each data row to an invoice line, or rejects it."""

    def __init__(
        self, name: str, index: dict[str, int], width: int, key: RunKey, c: Collector
    ) -> None:
        self.name, self.index, self.width, self.key, self.c = name, index, width, key, c
        extras: dict[str, pl.DataType] = {
            "charge_category": pl.String(),
            "charge_class": pl.String(),
            "correction": pl.Boolean(),
            "reversal": pl.Boolean(),
        }
        for f, (col, _) in ENUM_KEPT.items():
            if f in index:
                extras[col] = pl.String()
        extras.update({col: MONEY for f, col in DECIMAL_KEPT.items() if f in index})
        extras.update({col: pl.String() for f, col in TEXT_KEPT.items() if f in index})
        if any(f in index for f in PROVIDERS):
            extras[PROVIDER] = pl.String()
        extras.update({col: TIMESTAMP for f, col in TIME_KEPT.items() if f in index})
        extras[SOURCE_ROW] = pl.Int64()
        self.events = Events(extras)
        self.sums: dict[str, Decimal] = {}
        self.counts: dict[str, int] = {}
        self.tag_keys: set[str] = set()
        self.malformed = 0  # rows whose Tags are not a JSON object

    def read(self, row: int, values: list[str], record: str) -> None:
        def reject(code: str, reason: str) -> None:
            self.c.reject(Reject(row, code, reason, record))

        if len(values) != self.width:
            return reject("I010", f"has {len(values)} fields, the header {self.width}")
        raw = {f: values[i] for f, i in self.index.items()}
        v = {f: (None if fv.is_null(t) else t.strip()) for f, t in raw.items()}
        for f in REQUIRED:
            if v[f] is None:
                shown = "`NULL`" if raw[f].strip() else "empty"
                return reject("I020", f"`{f}` is {shown}; FOCUS requires a value")
        billed, category, period = v["BilledCost"], v["ChargeCategory"], v["ChargePeriodStart"]
        assert billed is not None
        assert category is not None
        assert period is not None
        try:
            amount = fv.exact(billed)
        except fv.NotExact as exc:
            return reject("I021", f"`BilledCost` {exc}")
        cat = fv.canonical(category, fv.CHARGE_CATEGORIES)
        if cat is None:
            guess = did_you_mean(category, fv.CHARGE_CATEGORIES)
            hint = f" (did you mean `{guess}`?)" if guess else ""
            return reject("I022", f"`ChargeCategory` `{category}` is not a FOCUS category{hint}")
        charge_class = v.get("ChargeClass")
        if charge_class is not None and fv.canonical(charge_class, (fv.CORRECTION,)) is None:
            return reject("I022", f"`ChargeClass` `{charge_class}` is not `Correction` or null")
        ts = self._time(period)
        if ts is None:
            return reject("I015", f"`ChargePeriodStart` `{period}` is not an ISO 8601 time")
        self._naive(row, v)
        self._respelled(row, "ChargeCategory", category, cat)
        values_out = self._kept(row, v)
        run = self._run(row, v)
        event = EVENTS[cat]
        reversal = cat in REVERSIBLE and amount < 0
        self.events.add(
            run_id=run,
            ts=ts,
            source="invoice",
            event=event,
            amount=amount,
            charge_category=cat,
            charge_class=fv.CORRECTION if charge_class else None,
            correction=charge_class is not None,
            reversal=reversal,
            source_row=row,
            **values_out,
        )
        self.c.mapped(f"{event} lines", one=f"{event} line")
        self._add(cat, amount)
        self.counts[cat] = self.counts.get(cat, 0) + 1
        for label, hit in (
            ("credits", event == "credit"),
            ("reversals", reversal),
            ("corrections", bool(charge_class)),
        ):
            if hit:
                self.counts[label] = self.counts.get(label, 0) + 1
                self._add(label, amount)
        if run == UNATTRIBUTED:
            self._add(UNATTRIBUTED, amount)
        return None

    def _add(self, key: str, amount: Decimal) -> None:
        """``amount`` added to the sum ``key``, exactly (amounts have up to 38 digits)."""
        self.sums[key] = EXACT.add(self.sums.get(key, Decimal(0)), amount)

    def _time(self, text: str) -> datetime | None:
        ts = parse_timestamp(text)
        if ts is None:
            return None
        if ts.tzinfo is None:
            return ts.replace(tzinfo=UTC)
        return _utc(ts)

    def _naive(self, row: int, v: dict[str, str | None]) -> None:
        """I032 once for the row: its first time (ChargePeriodStart, then the other times
        kept) written without an offset."""
        for f in ("ChargePeriodStart", *TIME_KEPT):
            text = v.get(f)
            if f in self.index and text is not None:
                ts = parse_timestamp(text)
                if ts is not None and ts.tzinfo is None:
                    self.c.note("I032", MESSAGES["I032"], row, f"`{f}` {text}")
                    return

    def _respelled(self, row: int, field: str, text: str, spelled: str) -> None:
        if text != spelled:
            self.c.note(
                "I040",
                "values respelled as FOCUS spells them",
                row,
                f"`{field}` `{text}` → `{spelled}`",
            )

    def _kept(self, row: int, v: dict[str, str | None]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f, (col, allowed) in ENUM_KEPT.items():
            text = v.get(f)
            if f in self.index and text is not None:
                spelled = fv.canonical(text, allowed)
                if spelled is None:
                    self.c.note(
                        "I036",
                        "values FOCUS does not list, kept as written",
                        row,
                        f"`{f}` `{text}`",
                    )
                else:
                    self._respelled(row, f, text, spelled)
                out[col] = spelled or text
        for f, col in DECIMAL_KEPT.items():
            text = v.get(f)
            if f in self.index and text is not None:
                try:
                    out[col] = fv.exact(text)
                except fv.NotExact as exc:
                    self.c.note(
                        "I039", "values that could not be read, left empty", row, f"`{f}` {exc}"
                    )
        for f, col in TEXT_KEPT.items():
            if f in self.index:
                out[col] = v.get(f)
        providers = [f for f in PROVIDERS if f in self.index]
        if providers:
            service, provider = (v.get(f) for f in PROVIDERS)
            out[PROVIDER] = service if service is not None else provider
            if service is not None and provider is not None and service != provider:
                self.c.note(
                    "I046",
                    MESSAGES["I046"],
                    row,
                    f"`ServiceProviderName` `{service}`, `ProviderName` `{provider}`",
                )
        for f, col in TIME_KEPT.items():
            text = v.get(f)
            if f in self.index and text is not None:
                out[col] = self._kept_time(row, f, text)
        return out

    def _kept_time(self, row: int, field: str, text: str) -> datetime | None:
        ts = parse_timestamp(text)
        if ts is None:
            self.c.note(
                "I039",
                "values that could not be read, left empty",
                row,
                f"`{field}` `{text}` is not an ISO 8601 time",
            )
            return None
        utc = ts.replace(tzinfo=UTC) if ts.tzinfo is None else _utc(ts)
        if utc is None:
            self.c.note(
                "I039",
                "values that could not be read, left empty",
                row,
                f"`{field}` `{text}` is out of range",
            )
        return utc

    def _run(self, row: int, v: dict[str, str | None]) -> str:
        if self.key.kind == "resource":
            found = v.get("ResourceId")
        else:
            found = self._tag(row, v.get("Tags"))
        if found is None:
            self.c.note(
                "I031", f"no run key ({self.key.describe()}): run `{UNATTRIBUTED}`", row, ""
            )
            return UNATTRIBUTED
        return found

    def _tag(self, row: int, text: str | None) -> str | None:
        if text is None:
            return None
        try:
            parsed = fv.tags(text)
        except fv.NotTags as exc:
            self.malformed += 1
            shown = text if len(text) <= 40 else text[:37] + "…"
            self.c.note(
                "I030",
                "`Tags` that are not a JSON object (the row has no run key)",
                row,
                f"`{shown}`: {exc}",
            )
            return None
        self.tag_keys.update(parsed)
        assert self.key.tag is not None
        value = parsed.get(self.key.tag)
        if isinstance(value, fv.Ambiguous):
            self.c.note(
                "I041",
                f"`Tags` that name `{self.key.tag}` twice, with different values (the row "
                "has no run key)",
                row,
                ", ".join(f"`{fv.tag_text(v)}`" for v in value),
            )
            return None
        return fv.tag_text(value)

    def require_tag(self) -> None:
        """I002 when rows have tags but none the tag ``--run-from`` names, or no row has tags
        at all: every line would go to ``unattributed``, which is a wrong key, not an
        invoice. (Tags that are not JSON are reported row by row, I030: not fatal.)"""
        mapped = self.events.height  # with none, the import fails for that (I007)
        if self.key.kind != "tag" or self.key.tag in self.tag_keys or not mapped:
            return
        if not self.tag_keys and self.malformed:
            return
        raise missing_tag(self.name, self.key.tag or "", self.tag_keys)

    def facts(self) -> None:
        """BilledCost sums by ChargeCategory, credits, reversals and corrections, for the
        report."""

        def money(k: str) -> str:
            return f"{self.sums.get(k, Decimal(0)):f}"

        for cat in fv.CHARGE_CATEGORIES:
            if cat in self.counts:
                self.c.facts.append(
                    (f"BilledCost of {cat} ({_rows(self.counts[cat])})", money(cat))
                )
        total = exact_sum(self.sums.get(k, Decimal(0)) for k in fv.CHARGE_CATEGORIES)
        self.c.facts.append(("BilledCost of every row mapped", f"{total:f}"))
        for label in ("credits", "reversals", "corrections"):
            n = self.counts.get(label, 0)
            self.c.facts.append((f"{label} ({_rows(n)})", money(label)))
        if UNATTRIBUTED in self.sums:
            self.c.facts.append((f"BilledCost of run `{UNATTRIBUTED}`", money(UNATTRIBUTED)))
