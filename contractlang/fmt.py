"""The canonical layout of `.spot` files: layout only, comments kept, meaning unchanged.

:func:`format_file` lays out a parsed :class:`~contractlang.lang.ast.SpotFile`; expressions
are printed by :mod:`contractlang.lang.show`.
:func:`contractlang.pipeline.language.format_source` parses a text, calls it, then **reparses
its output** and refuses (``E012``, nothing written) if the AST or the comments would change.

    >>> from decimal import Decimal
    >>> rate = ast.Rate(ast.Per(ast.Quantity(Decimal(2), "USD", "2"), "gpu_hour"))
    >>> format_file(ast.SpotFile((ast.Contract("c", (ast.Currency("USD"), rate)),)))
    'contract "c" {\\n  currency USD\\n  rate 2 USD per gpu_hour\\n}\\n'

The layout (docs/language.md repeats it):

- Blocks: ``contract "name" {`` on one line, each clause on its own line indented two spaces,
  ``}`` alone at the end; an empty block is ``contract "name" {}``. Top-level blocks are
  separated by one blank line.
- Clauses that stood on one line in the source stay on one line, in the same order (``fmt``
  never reorders or merges). Clauses are separated exactly as the source separated them: a
  blank line where there was at least one blank line, none where there was none (so two
  clauses written on one line each get their own line).
- A clause whose one-line form is wider than :data:`WIDTH` (100) columns, or that has a
  comment before its ``when``, breaks before ``when``; the ``when`` line is indented four
  spaces. Nothing else breaks: long expressions without ``when`` stay on one line.
- Spacing: one space around binary operators, comparisons, ``and``, ``or``, ``in``, ``per``
  and ``of``; none inside parentheses and brackets; ``, `` between arguments and list items;
  ``-x``, ``not x``, ``5%``, ``trace.price``, ``f(a, b)``, ``[a, b]``; ``-(-x)`` keeps its
  parentheses, and so does a comparison under ``not``: ``not (a == b)``.
- Parentheses: only where the grammar needs them to keep the tree (all binary operators are
  left-associative, so ``a - (b - c)`` keeps its parentheses and ``(a - b) - c`` loses them).
  A duration setting or cap limit that is not a plain number, quantity, percentage or
  ``X% of name`` is written in parentheses, as the grammar requires.
- Numbers keep the text they were written with (``2.10`` stays ``2.10``); strings are written
  with ``\\"`` and ``\\\\`` escapes.
- Comments: the text is kept (trailing spaces removed). A comment alone on its line stays
  before the clause or block that follows it (or at the end of its block or file), indented
  like it. A comment after code stays on that line, two spaces after the code. A comment
  inside a clause that spans several lines moves to its own line just before the clause,
  except a comment just before ``when``, which stays at the end of the clause's first line.
  A comment after ``{`` stays on the block's first line; one after ``}`` stays after it.
- The output has no trailing spaces, ``\\n`` line ends, and ends with one newline (an empty
  file stays empty).

Formatting is idempotent: ``format(format(x)) == format(x)``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from contractlang.diagnostics import NO_SPAN, Span
from contractlang.lang import ast
from contractlang.lang.show import show, string

__all__ = ["CONTINUATION", "INDENT", "WIDTH", "format_expr", "format_file"]

#: Lines longer than this break before ``when``.
WIDTH = 100
#: Indent of a clause inside a block.
INDENT = "  "
#: Indent of a ``when`` line that continues a clause.
CONTINUATION = "    "


# --------------------------------------------------------------------------- expressions


def format_expr(e: ast.Expr) -> str:
    """An expression in canonical form, with the fewest parentheses that keep its tree and
    the two that clarify (``not (a == b)``, ``-(-x)``): :func:`contractlang.lang.show.show`.

    >>> a, b, c = ast.Name("a"), ast.Name("b"), ast.Name("c")
    >>> format_expr(ast.Binary("-", a, ast.Binary("-", b, c)))
    'a - (b - c)'
    """
    return show(e, clarify=True)


_STARTS_WITH_ALLOCATION = re.compile(r"allocation(?![A-Za-z0-9_])")


def _setting(e: ast.Expr) -> str:
    """A duration setting: a number or quantity, anything else in parentheses."""
    if isinstance(e, ast.Number | ast.Quantity):
        return show(e)
    return f"({format_expr(e)})"


def _cap_limit(e: ast.Expr) -> str:
    if isinstance(e, ast.Number | ast.Quantity | ast.Percent):
        return show(e)
    if isinstance(e, ast.PercentOf) and isinstance(e.operand, ast.Name):
        return show(e)
    return f"({format_expr(e)})"


# --------------------------------------------------------------------------- clauses


def _head_and_when(clause: ast.Clause | ast.Require) -> tuple[str, ast.Expr | None]:
    """A clause as text up to its condition, and the condition (if it has one)."""
    match clause:
        case ast.Currency(code=code):
            return f"currency {code}", None
        case ast.Rounding(mode=mode):
            return f"rounding {mode}", None
        case ast.Precision(digits=digits):
            return f"precision {digits}", None
        case ast.Rate(price=price, when=when):
            return f"rate {format_expr(price)}", when
        case ast.BillingIncrement(duration=d):
            return f"billing increment {_setting(d)}", None
        case ast.BillingMinimum(duration=d):
            return f"billing minimum {_setting(d)}", None
        case ast.BillingPeriod(time=time, zone=zone):
            return f"billing period ends {time} {string(zone)}", None
        case ast.Promise(kind="notice", duration=d):
            return f"promise reclaim notice {_setting(d)}", None
        case ast.Promise(duration=d):
            return f"promise restart within {_setting(d)}", None
        case ast.ExcludeAllocation(name=name, when=when):
            return f"exclude {string(name)} allocation", when
        case ast.ExcludeDuration(name=name, duration=d, when=when):
            dur = format_expr(d)
            if _STARTS_WITH_ALLOCATION.match(dur):
                dur = f"({dur})"  # else it would read back as a whole-allocation exclusion
            return f"exclude {string(name)} {dur}", when
        case ast.Credit(name=name, amount=amount, when=when):
            return f"credit {string(name)} {format_expr(amount)}", when
        case ast.Cap(limit=limit, level=level):
            return f"cap credits at {_cap_limit(limit)} per {level}", None
        case ast.Require(expr=expr):
            return f"require {format_expr(expr)}", None
    raise TypeError(f"cannot format {type(clause).__name__}")  # pragma: no cover


# --------------------------------------------------------------------------- layout


@dataclass
class _Entry:
    """Output lines for one clause, block or own-line comment, and the source lines it came
    from (to keep blank lines where the source had them)."""

    first_line: int
    last_line: int
    lines: list[str] = field(default_factory=list)
    is_block: bool = False


def _pos(span: Span) -> int:
    return span.start_pos


def _without(comments: list[ast.Comment], taken: list[ast.Comment]) -> list[ast.Comment]:
    """``comments`` less ``taken``, by identity: comments with equal text are distinct."""
    ids = {id(c) for c in taken}
    return [c for c in comments if id(c) not in ids]


def _inside(c: ast.Comment, span: Span) -> bool:
    return span != NO_SPAN and span.start_pos < c.span.start_pos < span.end_pos


def format_file(file: ast.SpotFile) -> str:
    """Lay out a parsed file canonically (see the module docstring).

    Comments are placed by their spans, so ``file`` should come from
    :func:`contractlang.pipeline.language.parse`; a file built by hand (no spans) is laid out
    without blank lines between clauses.
    """
    comments = sorted(file.comments, key=lambda c: _pos(c.span))
    entries: list[_Entry] = []
    remaining = list(comments)
    for item in file.items:
        before = [c for c in remaining if c.span.start_pos < item.span.start_pos]
        inner = [c for c in remaining if _inside(c, item.span)]
        remaining = _without(remaining, before + inner)
        _own_line_or_trailing(before, entries, indent="")
        entries.append(_block(item, inner))
    _own_line_or_trailing(remaining, entries, indent="")
    lines = _join(entries, top_level=True)
    return "\n".join(lines) + "\n" if lines else ""


def _own_line_or_trailing(comments: list[ast.Comment], entries: list[_Entry], indent: str) -> None:
    """Add comments that stand between entries: after the previous entry on its last line,
    or on their own lines."""
    for c in comments:
        prev = entries[-1] if entries else None
        if prev is not None and prev.lines and c.span.line == prev.last_line and c.span.line:
            prev.lines[-1] += "  " + c.text.rstrip()
        else:
            entries.append(_Entry(c.span.line, c.span.line, [indent + c.text.rstrip()]))


def _block(item: ast.Item, comments: list[ast.Comment]) -> _Entry:
    if isinstance(item, ast.Contract):
        header = f"contract {string(item.name)} {{"
        members: Sequence[ast.Clause | ast.Require] = item.clauses
    else:
        header = f"budget {string(item.name)} {{"
        members = item.requires
    first_start = members[0].span.start_pos if members and members[0].span != NO_SPAN else None
    on_header = [
        c
        for c in comments
        if c.span.line == item.span.line and (first_start is None or c.span.start_pos < first_start)
    ]
    for c in on_header:
        header += "  " + c.text.rstrip()
    body: list[_Entry] = []
    remaining = _without(comments, on_header)
    for member in members:
        before = [c for c in remaining if c.span.start_pos < member.span.start_pos]
        inner = [c for c in remaining if _inside(c, member.span)]
        remaining = _without(remaining, before + inner)
        _own_line_or_trailing(before, body, indent=INDENT)
        body.append(_clause(member, inner))
    _own_line_or_trailing(remaining, body, indent=INDENT)
    span = item.span
    if not body:
        lines = [header[:-1] + "{}"] if not on_header else [header, "}"]
    else:
        lines = [header, *_join(body, top_level=False), "}"]
    return _Entry(span.line, span.end_line, lines, is_block=True)


def _clause(member: ast.Clause | ast.Require, inner: list[ast.Comment]) -> _Entry:
    head, when = _head_and_when(member)
    span = member.span
    moved = list(inner)
    head_comment: ast.Comment | None = None
    if when is not None and inner and all(c.span.start_pos < when.span.start_pos for c in inner):
        head_comment = inner[-1]
        moved = inner[:-1]
    lines = [INDENT + c.text.rstrip() for c in moved]
    if when is None:
        lines.append(INDENT + head)
    else:
        cond = format_expr(when)
        one_line = f"{INDENT}{head} when {cond}"
        if len(one_line) <= WIDTH and head_comment is None:
            lines.append(one_line)
        else:
            first = INDENT + head
            if head_comment is not None:
                first += "  " + head_comment.text.rstrip()
            lines.extend([first, f"{CONTINUATION}when {cond}"])
    return _Entry(span.line, span.end_line, lines)


def _join(entries: list[_Entry], *, top_level: bool) -> list[str]:
    """The entries' lines, with a blank line where the source had one (at most one), and
    always one after a top-level block."""
    out: list[str] = []
    prev: _Entry | None = None
    for entry in entries:
        if prev is not None and (
            entry.first_line - prev.last_line >= 2 or (top_level and prev.is_block)
        ):
            out.append("")
        out.extend(entry.lines)
        prev = entry
    return out
