"""Problems found in a trace, collected as polars frames and turned into a few diagnostics.

A check returns a *problem frame* (:data:`PROBLEM_SCHEMA`): one row per problem with the trace
row it is about, the code and the message. Only the first ``max_problems`` (by row) become
:class:`~contractlang.diagnostics.Diagnostic` objects, so a trace with millions of bad rows costs
one frame, not millions of Python objects; the rest are counted (:class:`TraceInvalid` carries
the counts of an invalid trace).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import polars as pl

from contractlang.diagnostics import NO_SPAN, Diagnostic, Severity, Span, did_you_mean
from contractlang.errors import ContractlangError
from contractlang.trace.schema import CAPACITIES, EVENTS, SOURCES

#: Columns of a problem frame. ``suggest`` names a vocabulary (``event``, ``source``,
#: ``capacity``) from which a "did you mean" help is computed for ``value``.
PROBLEM_SCHEMA: dict[str, pl.DataType] = {
    "row": pl.Int64(),
    "code": pl.String(),
    "message": pl.String(),
    "help": pl.String(),
    "suggest": pl.String(),
    "value": pl.String(),
}

_VOCABULARY: dict[str, Sequence[str]] = {
    "event": list(EVENTS),
    "source": SOURCES,
    "capacity": CAPACITIES,
}


def problems(
    frame: pl.DataFrame | pl.LazyFrame,
    code: str,
    message: pl.Expr,
    *,
    help: pl.Expr | str | None = None,
    suggest: str | None = None,
    value: pl.Expr | None = None,
    keep: Sequence[str] = (),
) -> pl.LazyFrame:
    """A problem frame: one problem per row of ``frame`` (already filtered to the bad rows,
    with a ``row`` column), with ``message`` (and ``help``) computed from its columns;
    ``keep`` names columns of ``frame`` to carry along (e.g. to filter problems later)."""
    help_expr = pl.lit(help) if help is None or isinstance(help, str) else help
    return frame.lazy().select(
        pl.col("row").cast(pl.Int64),
        pl.lit(code).alias("code"),
        message.cast(pl.String).alias("message"),
        help_expr.cast(pl.String).alias("help"),
        pl.lit(suggest, dtype=pl.String).alias("suggest"),
        (value if value is not None else pl.lit(None)).cast(pl.String).alias("value"),
        *[pl.col(k) for k in keep],
    )


def empty() -> pl.LazyFrame:
    return pl.LazyFrame(schema=PROBLEM_SCHEMA)


@dataclass(frozen=True, slots=True)
class Sources:
    """The files a trace was read from, in order, and where each one's rows begin in the
    numbering the rules share (row 1 of the second file is global row ``starts[1] + 1``).
    Diagnostics name each row by its own file and its row there.

    >>> s = Sources(("a.csv", "b.csv"), (0, 10))
    >>> s.locate(3), s.locate(12)
    (('a.csv', 3), ('b.csv', 2))
    """

    names: tuple[str, ...]
    starts: tuple[int, ...] = (0,)

    @staticmethod
    def of(name: str | Sources) -> Sources:
        return name if isinstance(name, Sources) else Sources((name,), (0,))

    @property
    def label(self) -> str:
        """One name for all of them: ``a.csv + b.csv``."""
        return " + ".join(self.names)

    def locate(self, row: int) -> tuple[str, int]:
        """The file and the row in it of a global row (``row`` 0: the first file, no row)."""
        i, local = self.position(row)
        return self.names[i], local

    def position(self, row: int) -> tuple[int, int]:
        """The index of the file a global row is in (0 for the first: two files may share a
        name) and the row in it."""
        i = max(0, bisect.bisect_right(self.starts, row - 1) - 1)
        return i, row - self.starts[i] if row > 0 else 0


#: Marks a row number inside a message (:func:`row_ref`), filled in by :func:`collect`.
_ROW_MARK = "\x1f"
_ROW_REF = re.compile(_ROW_MARK + r"(\d+)" + _ROW_MARK)


def row_ref(expr: pl.Expr) -> pl.Expr:
    """A reference to another row in a message: ``row 3``, or ``row 3 of `b.csv``` when it is
    in another file than the row the message is about."""
    return pl.concat_str(pl.lit(_ROW_MARK), expr.cast(pl.String), pl.lit(_ROW_MARK))


def resolve(message: str, row: int, sources: Sources) -> str:
    """A problem's message with its references to other rows written out, as the diagnostic
    about ``row`` (a global row) shows it."""
    return _with_rows(message, sources.locate(row)[0], sources)


def _with_rows(message: str, file: str, sources: Sources) -> str:
    def local(m: re.Match[str]) -> str:
        name, row = sources.locate(int(m.group(1)))
        return f"row {row}" if name == file else f"row {row} of `{name}`"

    return _ROW_REF.sub(local, message) if _ROW_MARK in message else message


@dataclass(frozen=True, slots=True)
class Collected:
    """The diagnostics shown, how many problems were found, and the distinct rows they are
    about (whole-file diagnostics have none)."""

    shown: tuple[Diagnostic, ...]
    total: int
    rows: pl.Series = field(default_factory=lambda: pl.Series("row", [], dtype=pl.Int64))
    #: every problem found (``row``, ``code``, ``message``), shown or not
    found: pl.DataFrame = field(default_factory=lambda: empty().collect())

    @property
    def more(self) -> int:
        return self.total - len(self.shown)


def collect(
    frames: Iterable[pl.LazyFrame],
    *,
    file: str | Sources,
    limit: int,
    severity: Severity = Severity.ERROR,
    whole_file: Sequence[Diagnostic] = (),
) -> Collected:
    """Concatenate problem frames, keep the first ``limit`` by (row, code), count the rest.

    ``whole_file`` diagnostics (about the file, not a row) come first and count too."""
    sources = Sources.of(file)
    frame = pl.concat([f.select(list(PROBLEM_SCHEMA)) for f in frames] or [empty()]).collect()
    counted = frame.height
    room = max(0, limit - len(whole_file))
    first = frame.sort(["row", "code", "message"], maintain_order=True).head(room)
    shown = list(whole_file[:limit])
    for rec in first.iter_rows(named=True):
        help_text = rec["help"]
        if help_text is None and rec["suggest"] is not None and rec["value"] is not None:
            guess = did_you_mean(rec["value"], _VOCABULARY[rec["suggest"]])
            if guess is not None:
                help_text = f"did you mean `{guess}`?"
            else:
                help_text = "expected one of " + ", ".join(
                    f"`{v}`" for v in _VOCABULARY[rec["suggest"]]
                )
        name, row = sources.locate(rec["row"])
        shown.append(
            Diagnostic(
                rec["code"],
                _with_rows(rec["message"], name, sources),
                Span.point(row, 0) if rec["row"] > 0 else NO_SPAN,
                file=name,
                help=help_text,
                severity=severity,
            )
        )
    rows = frame.get_column("row").filter(frame.get_column("row") > 0).unique()
    return Collected(tuple(shown), counted + len(whole_file), rows, frame)


def more_problems(file: str, collected: Collected, limit: int) -> Diagnostic:
    """The whole-file note that says how many problems were found and how many are shown."""
    return Diagnostic(
        "T019",
        f"found {collected.total:,} problems; the first {len(collected.shown):,} are shown",
        NO_SPAN,
        file=file,
        help=f"pass `--max-problems N` to see more (now {limit:,})",
    )


#: The longest value a message shows whole; a longer one shows its start and its length.
SHOWN_CHARS = 40


def shortened(text: str) -> str:
    """``text`` as a message shows a value: whole up to :data:`SHOWN_CHARS` characters, else
    its start and how long it is.

    >>> shortened("2.10"), shortened("5" * 5000)
    ('2.10', '55555555555555555555… (5,000 characters)')
    """
    if len(text) <= SHOWN_CHARS:
        return text
    return f"{text[:20]}… ({len(text):,} characters)"


def shortened_text(expr: pl.Expr) -> pl.Expr:
    """:func:`shortened` for a column, in polars (no Python function: a plan holding one cannot
    be sent to a Ray task).

    >>> pl.select(shortened_text(pl.Series(["2.10", "5" * 5000, None]))).to_series().to_list()
    ['2.10', '55555555555555555555… (5,000 characters)', None]
    """
    text = expr.cast(pl.String)
    n = text.str.len_chars()
    # the length with a comma every three digits, from the right
    grouped = n.cast(pl.String).str.reverse().str.replace_all(r"(\d{3})", "${1},")
    count = grouped.str.strip_chars_end(",").str.reverse()
    cut = pl.concat_str(text.str.slice(0, 20), pl.lit("… ("), count, pl.lit(" characters)"))
    return pl.when(n <= SHOWN_CHARS).then(text).otherwise(cut)


def backticked(expr: pl.Expr) -> pl.Expr:
    """``expr`` as text in backticks (`null` shown as `none`)."""
    return pl.concat_str(pl.lit("`"), expr.cast(pl.String).fill_null("none"), pl.lit("`"))


def decimal_text(expr: pl.Expr) -> pl.Expr:
    """A decimal column as plain text without trailing zeros: ``2.100…0`` → ``2.1``,
    ``5.000…0`` → ``5``."""
    text = expr.cast(pl.String)
    return (
        pl.when(text.str.contains(r"\."))
        .then(text.str.replace(r"0+$", "").str.strip_chars_end("."))
        .otherwise(text)
    )


class TraceInvalid(ContractlangError):
    """An invalid trace: the diagnostics shown, and counts for a one-line total.

    ``rows`` is the number of rows read, ``errors`` the number of problems found (shown or
    not), ``error_rows`` the number of rows with at least one, ``warnings`` the number of
    warnings."""

    def __init__(
        self,
        diagnostics: list[Diagnostic],
        *,
        rows: int,
        errors: int,
        error_rows: int,
        warnings: int,
    ) -> None:
        super().__init__(diagnostics)
        self.rows = rows
        self.errors = errors
        self.error_rows = error_rows
        self.warnings = warnings
