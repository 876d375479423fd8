"""Diagnostics: positions in source text, problems found in it, and how they are shown.

Every pass reports problems as :class:`Diagnostic` values and collects them rather than
stopping at the first. They render in one style::

    rulesets/x.spot:12:5: error[E201]: cannot add `money` and `time`
       12 |     rate 2.10 USD + 1 hour
          |          ^^^^^^^^^^^^^^^^^
    help: ...

and as JSON data with the same fields (:meth:`Diagnostic.to_json`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from contractlang.codes import CODES


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True, slots=True)
class Span:
    """A region of one source file: 1-based line and column, 0-based character offsets.

    ``end_line``/``end_col`` point one past the last character, as lark's ``end_column`` does.
    """

    line: int
    col: int
    end_line: int
    end_col: int
    start_pos: int = 0
    end_pos: int = 0

    @staticmethod
    def point(line: int, col: int, pos: int = 0) -> Span:
        return Span(line, col, line, col + 1, pos, pos + 1)

    def cover(self, other: Span) -> Span:
        """The smallest span holding both ``self`` and ``other``."""
        first, last = (self, other) if self.start_pos <= other.start_pos else (other, self)
        end = last if (last.end_pos, last.end_line) >= (first.end_pos, first.end_line) else first
        return Span(first.line, first.col, end.end_line, end.end_col, first.start_pos, end.end_pos)


NO_SPAN = Span(0, 0, 0, 0)


@dataclass(frozen=True, slots=True)
class Source:
    """A named source text. Diagnostics print lines from it."""

    name: str
    text: str

    def line_text(self, line: int) -> str:
        """Line ``line`` (from 1), lines ending at ``\n`` only (a ``\r`` before it dropped), as
        every reader numbers them: ``str.splitlines`` also breaks at U+2028, a form feed and
        more, and would show another line than the one a message names."""
        lines = self.text.split("\n")
        return lines[line - 1].removesuffix("\r") if 1 <= line <= len(lines) else ""


@dataclass(frozen=True, slots=True)
class Related:
    """A second place a diagnostic points at, e.g. where an operand's type came from."""

    span: Span
    message: str


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One problem, with its code, its place and, where it helps, a hint."""

    code: str
    message: str
    span: Span
    file: str = "<input>"
    help: str | None = None
    related: tuple[Related, ...] = ()
    severity: Severity = field(default=Severity.ERROR)

    def __post_init__(self) -> None:
        if self.code not in CODES:
            raise ValueError(f"unregistered diagnostic code {self.code}")

    @property
    def is_error(self) -> bool:
        return self.severity is Severity.ERROR

    def headline(self) -> str:
        """``file:line:col: error[CODE]: message``. Trace rows (``col`` 0) read
        ``file: row N: ...``; whole-file problems (``line`` 0) read ``file: ...``."""
        if self.span.line == 0:
            where = f"{self.file}:"
        elif self.span.col == 0:
            where = f"{self.file}: row {self.span.line}:"
        else:
            where = f"{self.file}:{self.span.line}:{self.span.col}:"
        return f"{where} {self.severity}[{self.code}]: {printable(self.message)}"

    def render(self, source: Source | None = None) -> str:
        """Render as text: headline, source line with carets, related notes, help."""
        out = [self.headline()]
        if source is not None and self.span.line > 0 and self.span.col > 0:
            out.extend(_excerpt(source, self.span))
        for rel in self.related:
            where = f"{self.file}:{rel.span.line}:{rel.span.col}"
            out.append(f"note: {printable(rel.message)} ({where})")
            if source is not None and rel.span.line > 0 and rel.span.col > 0:
                out.extend(_excerpt(source, rel.span))
        if self.help:
            out.append(f"help: {printable(self.help)}")
        return "\n".join(out)

    def to_json(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "severity": str(self.severity),
            "message": self.message,
            "file": self.file,
            "line": self.span.line,
            "column": self.span.col,
            "end_line": self.span.end_line,
            "end_column": self.span.end_col,
            "help": self.help,
            "related": [
                {"message": r.message, "line": r.span.line, "column": r.span.col}
                for r in self.related
            ],
        }


#: The most characters of a source line an excerpt shows; a longer line is cut around the span.
EXCERPT_WIDTH = 100


def _excerpt(source: Source, span: Span) -> list[str]:
    text = source.line_text(span.line)
    gutter = f"{span.line:>4} | "
    if span.end_line == span.line:
        width = max(1, span.end_col - span.col)
    else:
        width = max(1, len(text) - span.col + 1)
    start = span.col - 1
    if len(text) > EXCERPT_WIDTH:  # show a window of the line around the span, marked "…"
        first = max(0, min(start - EXCERPT_WIDTH // 4, len(text) - EXCERPT_WIDTH))
        last = first + EXCERPT_WIDTH
        shown = ("…" if first else "") + text[first:last] + ("…" if last < len(text) else "")
        start = start - first + (1 if first else 0)
        width = max(1, min(width, EXCERPT_WIDTH - (start - (1 if first else 0))))
        text = shown
    caret = " " * (len(gutter) - 2) + "| " + " " * start + "^" * width
    return [gutter + printable(text), caret]


#: Why a file whose name is not UTF-8 cannot be read or written, and what to do.
NOT_UTF8_NAME = "its name is not UTF-8 text"
RENAME = "rename it with UTF-8 characters only"


def utf8_name(path: str | Path) -> bool:
    """Whether a file's name is UTF-8 text: Python keeps the bytes of a name that is not as
    lone surrogates, which polars, given the name, cannot take.

    >>> import os
    >>> utf8_name("jobs.parquet"), utf8_name(os.fsdecode(b"jobs\\xff.parquet"))
    (True, False)
    """
    try:
        str(path).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def printable(text: str) -> str:
    """``text`` with its control characters (an escape sequence in a trace value, say) shown
    as ``\\x1b``, not obeyed by the terminal.

    >>> print(printable("run-\x1b[31m1"))
    run-\\x1b[31m1
    """
    return "".join(c if c.isprintable() or c == "\t" else f"\\x{ord(c):02x}" for c in text)


def shortened(text: str, most: int = 40) -> str:
    """A flag's text as a message quotes it: at most ``most`` characters.

    >>> shortened("1" * 50 + "s")
    '111111111111111111111111111111111111111…'
    """
    return text if len(text) <= most else text[: most - 1] + "…"


def error(code: str, message: str, span: Span, **kw: Any) -> Diagnostic:
    return Diagnostic(code, message, span, severity=Severity.ERROR, **kw)


def warning(code: str, message: str, span: Span, **kw: Any) -> Diagnostic:
    return Diagnostic(code, message, span, severity=Severity.WARNING, **kw)


def has_errors(diags: Iterable[Diagnostic]) -> bool:
    return any(d.is_error for d in diags)


def sort_key(d: Diagnostic) -> tuple[str, int, int, str]:
    return (d.file, d.span.line, d.span.col, d.code)


def render_all(diags: Sequence[Diagnostic], sources: dict[str, Source]) -> str:
    """Text for many diagnostics, in file and position order, blank line between each."""
    return "\n\n".join(d.render(sources.get(d.file)) for d in sorted(diags, key=sort_key))


def to_json_text(diags: Sequence[Diagnostic]) -> str:
    items = [d.to_json() for d in sorted(diags, key=sort_key)]
    return json.dumps({"diagnostics": items}, indent=2)


def did_you_mean(word: str, candidates: Iterable[str]) -> str | None:
    """The closest candidate by edit distance, if it is close enough to be a likely typo.

    >>> did_you_mean("replayed_tme", ["replayed_time", "runtime"])
    'replayed_time'
    """
    limit = max(1, min(3, len(word) // 3))
    lowered = word.lower()
    best: tuple[int, str] | None = None
    for cand in sorted(set(candidates)):
        dist = _distance(lowered, cand.lower(), limit)
        if dist <= limit and (best is None or dist < best[0]):
            best = (dist, cand)
    return None if best is None else best[1]


def _distance(a: str, b: str, limit: int) -> int:
    """The edit distance of ``a`` and ``b`` where it is at most ``limit``, else ``limit + 1``:
    only the cells within ``limit`` of the diagonal are computed, so a long word costs its
    length times ``limit``, not its length squared (a 1 MB name took 100 s to check).

    >>> _distance("kitten", "sitting", 3), _distance("kitten", "sitting", 2)
    (3, 3)
    """
    far = limit + 1
    if abs(len(a) - len(b)) > limit:
        return far
    prev, prev_lo = list(range(min(len(b), limit) + 1)), 0  # row 0, columns 0 … limit

    def above(j: int) -> int:
        """The previous row's cell in column ``j`` (``far`` outside its band)."""
        k = j - prev_lo
        return prev[k] if 0 <= k < len(prev) else far

    for i in range(1, len(a) + 1):
        lo = max(0, i - limit)
        cur: list[int] = []
        for j in range(lo, min(len(b), i + limit) + 1):
            left = cur[-1] if cur else far
            swap = above(j - 1) + (a[i - 1] != b[j - 1]) if j else far
            best = i if j == 0 else min(above(j) + 1, left + 1, swap)
            cur.append(min(best, far))
        if min(cur) > limit:
            return far
        prev, prev_lo = cur, lo
    return above(len(b))
