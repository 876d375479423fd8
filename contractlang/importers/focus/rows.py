"""FOCUS rows mapped to invoice lines column by column: every check a polars expression over all
rows, Python only once per distinct value (a category's spelling, a time, a ``Tags`` object).

A row is rejected for the first of these it fails, in this order (the order a row-by-row reading
checks them): its field count (I010); ``BilledCost``, ``ChargeCategory``, ``ChargePeriodStart``
present (I020); ``BilledCost`` an exact decimal (I021); ``ChargeCategory`` one of FOCUS's (I022);
``ChargeClass`` null or ``Correction`` (I022); ``ChargePeriodStart`` a time (I015). The rows
kept become one invoice line each, with their notes (I030–I046) and the report's figures.

The ChargeCategory decides the kind of line, never the sign (:data:`EVENTS`): a negative Usage
or Purchase line is a reversal — a negative ``charge``, flagged ``reversal`` — not a credit.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import polars as pl

from contractlang.codes import LAST_LINE_OPEN
from contractlang.diagnostics import NO_SPAN, did_you_mean, error
from contractlang.errors import ContractlangError
from contractlang.importers.columns import (
    found,
    notes,
    per_value,
    per_value_columns,
    value_series,
)
from contractlang.importers.csv_table import FIELDS, ROW, Table, column
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
from contractlang.importers.frame import MONEY, SOURCE_ROW, TRACE_DTYPES
from contractlang.importers.localtime import parse_timestamp
from contractlang.importers.result import Collector, Reject, last_line_detail, shortened
from contractlang.lang.frames import TIMESTAMP
from contractlang.lang.numbers import EXACT, counted
from contractlang.trace.schema import COLUMNS, REQUIRED_COLUMNS
from contractlang.trace.sums import exact_total, sum_parts

#: The messages of the notes (each code's one message).
MESSAGES = {
    "I032": "times without an offset read as UTC, as FOCUS requires",
    "I040": "values respelled as FOCUS spells them",
    "I036": "values FOCUS does not list, kept as written",
    "I039": "values that could not be read, left empty",
    "I030": "`Tags` that are not a JSON object (the row has no run key)",
    "I044": LAST_LINE_OPEN,
    "I045": "amounts stored as floating point, each read as the decimal its shortest text spells",
    "I046": "`ServiceProviderName` and `ProviderName` differ: `provider` is the "
    "ServiceProviderName",
}

#: Where in a row each caveat is met, for a row with several of one code (the order a
#: row-by-row reading meets them): the category, the enums, the amounts, the times.
_CATEGORY, _ENUMS = 1, 2
_DECIMALS = _ENUMS + len(ENUM_KEPT)
_TIMES = _DECIMALS + len(DECIMAL_KEPT)
_LATER = _TIMES + len(TIME_KEPT)


def map_rows(table: Table, index: dict[str, int], key: RunKey, c: Collector) -> pl.DataFrame:
    """The invoice lines of ``table`` (the trace frame, ``source_row`` their rows); rejects,
    notes, counts and figures go to ``c``."""
    rows = _Rows(table, index, key, c)
    return rows.run()


def _utc(ts: datetime | None) -> tuple[datetime | None, bool]:
    """A parsed time in UTC and whether it had no offset; None when it falls off the calendar
    in UTC (year 10000)."""
    if ts is None:
        return None, False
    if ts.tzinfo is None:
        return ts.replace(tzinfo=UTC), True
    try:
        return ts.astimezone(UTC), False
    except OverflowError:
        return None, False


def _time(text: str) -> tuple[datetime | None, bool, bool]:
    """``(time in UTC, without an offset, readable)`` of a time's text."""
    ts = parse_timestamp(text)
    utc, naive = _utc(ts)
    return utc, naive, ts is not None


class _Rows:
    def __init__(self, table: Table, index: dict[str, int], key: RunKey, c: Collector) -> None:
        self.table, self.index, self.key, self.c = table, index, key, c
        self.width = len(table.header)
        self.found: list[pl.DataFrame] = []
        self.messages = dict(MESSAGES)
        self.messages["I031"] = f"no run key ({key.describe()}): run `{UNATTRIBUTED}`"
        if key.tag is not None:
            self.messages["I041"] = (
                f"`Tags` that name `{key.tag}` twice, with different values (the row has no "
                "run key)"
            )
        self.tag_keys: set[str] = set()
        self.malformed = 0

    # ----------------------------------------------------------------------- the columns

    def run(self) -> pl.DataFrame:
        t = self.table.frame
        c = self.c
        c.rows_read = t.height
        blank = t.filter(pl.col(FIELDS) == 0).get_column(ROW)
        if blank.len():
            c.blanks(blank.len(), tuple(blank.head(5).to_list()))
        f = t.filter(pl.col(FIELDS) != 0) if blank.len() else t
        del t
        self.table.frame = self.table.frame.clear()  # read column by column below, then freed
        columns: list[pl.Series] = [f.get_column(ROW).rename("row"), f.get_column(FIELDS)]
        for x, i in self.index.items():
            text, written = value_series(f.drop_in_place(column(i)))
            columns.append(text.rename(f"v:{x}"))
            if x in REQUIRED:  # null where the value was a null (Parquet), not text
                columns.append(written.rename(f"written:{x}"))
        del f
        rejected, kept = self.checks(pl.DataFrame(columns))
        del columns
        self.reject(rejected)
        del rejected
        return self.lines(kept)

    # ----------------------------------------------------------------------- the checks

    def checks(self, f: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
        """The rows rejected (``_code``, ``_reason``) and the rows kept, with their amount
        (``_amount``, ``_exponent``), category, class and start; the first check a row fails
        is its reason (``pl.coalesce`` over the checks in order)."""
        v = {x: pl.col(f"v:{x}") for x in self.index}
        checks: list[tuple[pl.Expr, str, pl.Expr]] = [
            (
                pl.col(FIELDS) != self.width,
                "I010",
                pl.format("has {} fields, the header {}", pl.col(FIELDS), pl.lit(self.width)),
            )
        ]
        for x in REQUIRED:
            written = pl.col(f"written:{x}")
            shown = (
                pl.when(written)
                .then(pl.lit("`NULL`"))
                .when(written.is_null())
                .then(pl.lit("null"))
                .otherwise(pl.lit("empty"))
            )
            checks.append(
                (
                    v[x].is_null(),
                    "I020",
                    pl.format("`{}` is {}; FOCUS requires a value", pl.lit(x), shown),
                )
            )
        billed = fv.exact_column(f.get_column("v:BilledCost"))
        category = f.get_column("v:ChargeCategory")
        f = f.with_columns(
            _amount=billed.get_column("value"),
            _exponent=billed.get_column("exponent"),
            _amount_error=billed.get_column("error"),
            _category=per_value(category, _canonical(fv.CHARGE_CATEGORIES)),
            _category_hint=per_value(category, _category_hint),
        )
        checks += [
            (
                pl.col("_amount_error").is_not_null(),
                "I021",
                pl.concat_str(pl.lit("`BilledCost` "), pl.col("_amount_error")),
            ),
            (
                pl.col("_category").is_null(),
                "I022",
                pl.format(
                    "`ChargeCategory` `{}` is not a FOCUS category{}",
                    v["ChargeCategory"],
                    pl.col("_category_hint"),
                ),
            ),
        ]
        if "ChargeClass" in self.index:
            charge_class = f.get_column("v:ChargeClass")
            correction = per_value(charge_class, _canonical((fv.CORRECTION,)))
            f = f.with_columns(
                _class=charge_class.is_not_null(), _correction=correction.is_not_null()
            )
            checks.append(
                (
                    pl.col("_class") & ~pl.col("_correction"),
                    "I022",
                    pl.format("`ChargeClass` `{}` is not `Correction` or null", v["ChargeClass"]),
                )
            )
        else:
            f = f.with_columns(_class=pl.lit(False))
        f = f.with_columns(self.times("ChargePeriodStart", f, "_start"))
        checks.append(
            (
                pl.col("_start").is_null(),
                "I015",
                pl.format(
                    "`ChargePeriodStart` `{}` is not an ISO 8601 time", v["ChargePeriodStart"]
                ),
            )
        )
        f = f.with_columns(
            _code=pl.coalesce(pl.when(fails).then(pl.lit(code)) for fails, code, _ in checks),
            _reason=pl.coalesce(pl.when(fails).then(reason) for fails, _, reason in checks),
        )
        failed = f.get_column("_code").is_not_null()
        if not failed.any():
            return f.clear(), f  # no copy of a clean file
        return f.filter(failed), f.filter(~failed)

    def times(self, field: str, f: pl.DataFrame, name: str) -> list[pl.Series]:
        """A time column read once per distinct text: ``name`` (UTC), ``name:naive`` (it had
        no offset), ``name:readable`` (it is a time, even if off the calendar in UTC)."""
        schema = {name: TIMESTAMP, f"{name}:naive": pl.Boolean(), f"{name}:readable": pl.Boolean()}
        read = per_value_columns(f.get_column(f"v:{field}"), _time, schema)
        return [
            read.get_column(c).fill_null(False) if c != name else read.get_column(c) for c in schema
        ]

    def reject(self, rejected: pl.DataFrame) -> None:
        if rejected.height == 0:
            return
        rows = rejected.get_column("row").to_list()
        texts = self.table.records(rows)
        for row, code, reason in rejected.select("row", "_code", "_reason").iter_rows():
            self.c.reject(Reject(row, code, reason, texts[row]))

    # ----------------------------------------------------------------------- the lines

    def note(self, f: pl.DataFrame, where: pl.Expr, code: str, order: int, detail: pl.Expr) -> None:
        hits = f.filter(where)
        if hits.height:
            self.found.append(found(hits, code, order, detail))

    def lines(self, k: pl.DataFrame) -> pl.DataFrame:
        v = {x: pl.col(f"v:{x}") for x in self.index}
        k = self.naive(k, v)
        self.note(
            k,
            v["ChargeCategory"] != pl.col("_category"),
            "I040",
            _CATEGORY,
            pl.format("`ChargeCategory` `{}` → `{}`", v["ChargeCategory"], pl.col("_category")),
        )
        extra: dict[str, pl.Expr] = {}
        k = self.enums(k, v, extra)
        k = self.decimals(k, extra)
        self.floats(k, v)
        for x, col in TEXT_KEPT.items():
            if x in self.index:
                extra[col] = v[x]
        self.kept_times(k, v, extra)
        self.provider(k, v, extra)
        if self.table.unterminated is not None and self.table.unterminated_end is not None:
            last = pl.col("row") == self.table.unterminated
            ends = last_line_detail(*self.table.unterminated_end)
            self.note(k, last, "I044", _LATER, pl.lit(ends))
        k = k.with_columns(_run=self.runs(k))
        for n in notes(self.found, self.messages):
            self.c.noted(n)
        return self.events(k, extra)

    def naive(self, k: pl.DataFrame, v: dict[str, pl.Expr]) -> pl.DataFrame:
        """The times kept beside ``ts`` read (``_t:NAME``), and I032 once a row: its first
        time, ChargePeriodStart first, written without an offset."""
        times = ["ChargePeriodStart", *(x for x in TIME_KEPT if x in self.index)]
        for x in times[1:]:
            k = k.with_columns(self.times(x, k, f"_t:{x}"))
        naive = {"ChargePeriodStart": "_start:naive", **{x: f"_t:{x}:naive" for x in times[1:]}}
        self.note(
            k,
            pl.any_horizontal(pl.col(naive[x]) for x in times),
            "I032",
            0,
            pl.coalesce(
                pl.when(pl.col(naive[x])).then(pl.format("`{}` {}", pl.lit(x), v[x])) for x in times
            ),
        )
        return k

    def enums(
        self, k: pl.DataFrame, v: dict[str, pl.Expr], extra: dict[str, pl.Expr]
    ) -> pl.DataFrame:
        """The enums kept, spelled as FOCUS spells them (I040), or as written when FOCUS does
        not list them (I036)."""
        for order, (x, (col, allowed)) in enumerate(ENUM_KEPT.items(), start=_ENUMS):
            if x not in self.index:
                continue
            spelled = f"_spelled:{x}"
            k = k.with_columns(
                per_value(k.get_column(f"v:{x}"), _canonical(allowed)).alias(spelled)
            )
            text = v[x]
            self.note(
                k,
                text.is_not_null() & pl.col(spelled).is_null(),
                "I036",
                order,
                pl.format("`{}` `{}`", pl.lit(x), text),
            )
            self.note(
                k,
                pl.col(spelled).is_not_null() & (text != pl.col(spelled)),
                "I040",
                order,
                pl.format("`{}` `{}` → `{}`", pl.lit(x), text, pl.col(spelled)),
            )
            extra[col] = pl.coalesce(spelled, text)
        return k

    def decimals(self, k: pl.DataFrame, extra: dict[str, pl.Expr]) -> pl.DataFrame:
        """The amounts kept beside ``amount``, exact; one that cannot be read is left empty
        (I039)."""
        for order, (x, col) in enumerate(DECIMAL_KEPT.items(), start=_DECIMALS):
            if x not in self.index:
                continue
            read = fv.exact_column(k.get_column(f"v:{x}"))
            k = k.with_columns(
                read.get_column("value").alias(f"_dec:{x}"),
                read.get_column("error").alias(f"_dec_error:{x}"),
            )
            self.note(
                k,
                pl.col(f"_dec_error:{x}").is_not_null(),
                "I039",
                order,
                pl.format("`{}` {}", pl.lit(x), pl.col(f"_dec_error:{x}")),
            )
            extra[col] = pl.col(f"_dec:{x}")
        return k

    def kept_times(self, k: pl.DataFrame, v: dict[str, pl.Expr], extra: dict[str, pl.Expr]) -> None:
        """The times kept beside ``ts`` (read by :meth:`naive`); one that is not a time, or
        falls off the calendar in UTC, is left empty (I039)."""
        for order, (x, col) in enumerate(TIME_KEPT.items(), start=_TIMES):
            if x not in self.index:
                continue
            t, text = f"_t:{x}", v[x]
            self.note(
                k,
                text.is_not_null() & ~pl.col(f"{t}:readable"),
                "I039",
                order,
                pl.format("`{}` `{}` is not an ISO 8601 time", pl.lit(x), text),
            )
            self.note(
                k,
                text.is_not_null() & pl.col(f"{t}:readable") & pl.col(t).is_null(),
                "I039",
                order,
                pl.format("`{}` `{}` is out of range", pl.lit(x), text),
            )
            extra[col] = pl.col(t)

    def provider(self, k: pl.DataFrame, v: dict[str, pl.Expr], extra: dict[str, pl.Expr]) -> None:
        """``provider``: ServiceProviderName (FOCUS 1.3), else ProviderName; a row where both
        have a value and they differ is noted with both (I046)."""
        providers = [x for x in PROVIDERS if x in self.index]
        if providers:
            extra[PROVIDER] = pl.coalesce(v[x] for x in providers)
        if len(providers) == 2:
            service, provider = (v[x] for x in PROVIDERS)
            self.note(
                k,
                (service != provider).fill_null(False),
                "I046",
                _LATER,
                pl.format("`ServiceProviderName` `{}`, `ProviderName` `{}`", service, provider),
            )

    def floats(self, k: pl.DataFrame, v: dict[str, pl.Expr]) -> None:
        """I045 on each row with an amount read from a floating-point column (Parquet): the
        first such amount of the row."""
        stored = [
            x
            for x in ("BilledCost", *DECIMAL_KEPT)
            if x in self.index and self.index[x] in self.table.floats
        ]
        if not stored:
            return
        self.note(
            k,
            pl.any_horizontal(v[x].is_not_null() for x in stored),
            "I045",
            _LATER,
            pl.coalesce(
                pl.when(v[x].is_not_null()).then(pl.format("`{}` {}", pl.lit(x), v[x]))
                for x in stored
            ),
        )

    def runs(self, k: pl.DataFrame) -> pl.Series:
        """Each kept row's run, with the notes of the rows that have none; I002 when rows have
        tags but none the key ``--run-from`` names (see :meth:`require_tag`)."""
        if self.key.kind == "resource":
            run = k.get_column("v:ResourceId")
        else:
            assert self.key.tag is not None
            schema: dict[str, pl.DataType | None] = {
                "_kind": pl.String(),
                "_detail": pl.String(),
                "_run": pl.String(),
            }
            read = per_value_columns(
                k.get_column("v:Tags"), _tags(self.key.tag, self.tag_keys), schema
            )
            k = k.with_columns(read.get_column("_kind"), read.get_column("_detail"))
            self.malformed = int((k.get_column("_kind") == "I030").sum())
            self.note(k, pl.col("_kind") == "I030", "I030", 9, pl.col("_detail"))
            self.note(k, pl.col("_kind") == "I041", "I041", 9, pl.col("_detail"))
            run = read.get_column("_run")
            self.require_tag(k.height)
        k = k.with_columns(run.alias("_run"))
        self.note(k, pl.col("_run").is_null(), "I031", 10, pl.lit(""))
        return k.get_column("_run").fill_null(UNATTRIBUTED)

    def require_tag(self, mapped: int) -> None:
        """I002 when rows have tags but none the tag ``--run-from`` names, or no row has tags
        at all: every line would go to ``unattributed``, which is a wrong key, not an
        invoice. (Tags that are not JSON are reported row by row, I030: not fatal.)"""
        if not mapped or self.key.tag in self.tag_keys:
            return
        if not self.tag_keys and self.malformed:
            return
        raise missing_tag(self.c.source, self.key.tag or "", self.tag_keys)

    def events(self, k: pl.DataFrame, extra: dict[str, pl.Expr]) -> pl.DataFrame:
        """The invoice lines as a trace frame (the columns and types row-by-row events had),
        the report's counts and figures."""
        category = pl.col("_category").cast(pl.String)  # of no type in a frame of no rows
        k = k.with_columns(
            _event=category.replace_strict(EVENTS, return_dtype=pl.String),
            _reversal=category.is_in(REVERSIBLE) & (pl.col("_amount") < 0),
        )
        self.mapped(k)
        self.facts(k)
        trace = {
            "run_id": pl.col("_run"),
            "alloc_id": pl.lit(None, dtype=pl.String),
            "ts": pl.col("_start"),
            "source": pl.lit("invoice"),
            "event": pl.col("_event"),
            "gpus": pl.lit(None, dtype=pl.Int64),
        }
        used = {*REQUIRED_COLUMNS, *(["amount"] if k.height else [])}
        trace["amount"] = pl.col("_amount")
        extras: dict[str, pl.Expr] = {
            "charge_category": pl.col("_category"),
            "charge_class": pl.when(pl.col("_class")).then(pl.lit(fv.CORRECTION)),
            "correction": pl.col("_class"),
            "reversal": pl.col("_reversal"),
        }
        types: dict[str, pl.DataType] = {
            "charge_category": pl.String(),
            "charge_class": pl.String(),
            "correction": pl.Boolean(),
            "reversal": pl.Boolean(),
        }
        for x, (col, _) in ENUM_KEPT.items():
            if x in self.index:
                extras[col], types[col] = extra[col], pl.String()
        for x, col in DECIMAL_KEPT.items():
            if x in self.index:
                extras[col], types[col] = extra[col], MONEY
        for x, col in TEXT_KEPT.items():
            if x in self.index:
                extras[col], types[col] = extra[col], pl.String()
        if PROVIDER in extra:
            extras[PROVIDER], types[PROVIDER] = extra[PROVIDER], pl.String()
        for x, col in TIME_KEPT.items():
            if x in self.index:
                extras[col], types[col] = extra[col], TIMESTAMP
        extras[SOURCE_ROW], types[SOURCE_ROW] = pl.col("row"), pl.Int64()
        names = [x for x in COLUMNS if x in used]
        return k.select(
            *(trace[x].cast(TRACE_DTYPES[x]).alias(x) for x in names),
            *(e.cast(types[x]).alias(x) for x, e in extras.items()),
        )

    def mapped(self, k: pl.DataFrame) -> None:
        """The lines by kind, in the order each kind first appears."""
        counts = k.group_by("_event", maintain_order=True).len()
        for event, n in counts.iter_rows():
            self.c.mapped(f"{event} lines", n, one=f"{event} line")

    def facts(self, k: pl.DataFrame) -> None:
        """BilledCost sums by ChargeCategory, credits, reversals and corrections, for the
        report: exact, at the most places any of their amounts is written with (as
        ``Decimal`` sums them)."""

        def sums(frame: pl.DataFrame, by: str | None) -> dict[Any, tuple[int, str]]:
            agg = [pl.len().alias("_n"), *sum_parts("_amount"), pl.col("_exponent").min()]
            g = frame.group_by(by).agg(agg) if by else frame.select(agg)
            out: dict[Any, tuple[int, str]] = {}
            for row in g.iter_rows(named=True):
                total = exact_total(row, "_amount")
                exponent = min(0, row["_exponent"] or 0)
                shown = total.quantize(Decimal(1).scaleb(exponent), context=EXACT)
                out[row[by] if by else None] = (row["_n"], f"{shown:f}")
            return out

        by_category = sums(k, "_category")
        for cat in fv.CHARGE_CATEGORIES:
            if cat in by_category:
                n, total = by_category[cat]
                self.c.facts.append((f"BilledCost of {cat} ({counted(n, 'row')})", total))
        every = sums(k, None)[None][1] if k.height else "0"
        self.c.facts.append(("BilledCost of every row mapped", every))
        for label, where in (
            ("credits", pl.col("_event") == "credit"),
            ("reversals", pl.col("_reversal")),
            ("corrections", pl.col("_class")),
        ):
            some = k.filter(where)
            n, total = sums(some, None)[None] if some.height else (0, "0")
            self.c.facts.append((f"{label} ({counted(n, 'row')})", total))
        lost = k.filter(pl.col("_run") == UNATTRIBUTED)
        if lost.height:
            self.c.facts.append((f"BilledCost of run `{UNATTRIBUTED}`", sums(lost, None)[None][1]))


def missing_tag(name: str, tag: str, keys: set[str]) -> ContractlangError:
    """I002 for a ``--run-from tag:KEY`` no row's tags hold: the closest key, or the keys seen."""
    guess = did_you_mean(tag, keys)
    seen = ", ".join(f"`{k}`" for k in sorted(keys)[:8])
    more = f" and {len(keys) - 8:,} more" if len(keys) > 8 else ""
    if guess:
        hint = f"did you mean `{guess}`?"
    elif keys:
        hint = f"the rows' tags are {seen}{more}"
    else:
        hint = "no row has tags at all: try `--run-from resource`"
    message = (
        f"no row's `Tags` has the key `{tag}` (`--run-from tag:{tag}`): every line would have "
        "no run"
    )
    return ContractlangError([error("I002", message, NO_SPAN, file=name, help=hint)])


def _category_hint(text: str) -> str:
    guess = did_you_mean(text, fv.CHARGE_CATEGORIES)
    return f" (did you mean `{guess}`?)" if guess else ""


def _canonical(allowed: tuple[str, ...]) -> Callable[[str], str | None]:
    return lambda s: fv.canonical(s, allowed)


_TagsRead = tuple[str | None, str | None, str | None]


def _tags(tag: str, keys: set[str]) -> Callable[[str], _TagsRead]:
    """``Tags`` text → (the note it earns: I030, I041 or None; the note's detail; the run);
    the keys it holds are added to ``keys``."""

    def read(text: str) -> _TagsRead:
        try:
            parsed = fv.tags(text)
        except fv.NotTags as exc:
            return "I030", f"`{shortened(text)}`: {exc}", None
        keys.update(parsed)
        value = parsed.get(tag)
        if isinstance(value, fv.Ambiguous):
            return "I041", ", ".join(f"`{fv.tag_text(v)}`" for v in value), None
        return None, None, fv.tag_text(value)

    return read
