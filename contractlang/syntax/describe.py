"""Plain words for what the parser met and what it expected, and where in the text it was.

Messages never show lark's terminal names: ``describe_expected`` turns the set of acceptable
terminals into words (``a unit, `when`, `per`, an operator, a new clause or `}```).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from decimal import Decimal
from typing import Any

from lark import Token
from lark.exceptions import UnexpectedCharacters

from contractlang.diagnostics import Diagnostic, Source, Span, error
from contractlang.syntax.grammar import terminal_text
from contractlang.syntax.lower import end_pos


def point_at(prefix: str) -> Span:
    """A one-character span just after ``prefix`` (line and column as lark counts: by ``\\n``)."""
    line = prefix.count("\n") + 1
    col = len(prefix) - (prefix.rfind("\n") + 1) + 1
    return Span.point(line, col, len(prefix))


def exponent_error(m: re.Match[str], source: Source) -> Diagnostic:
    """E004 for a number written with an exponent (``1e400``): numbers are plain digits."""
    written = m.group(1)
    start = point_at(source.text[: m.start(1)])
    span = Span(start.line, start.col, start.line, start.col + len(written), m.start(1), m.end(1))
    value = Decimal(written)
    adjusted = value.adjusted()
    plain = format(value, "f") if -18 <= adjusted <= 18 else None
    return error(
        "E004",
        f"`{written}` is written with an exponent; numbers are written as plain digits",
        span,
        file=source.name,
        help=f"write `{plain}`"
        if plain
        else "numbers hold at most 18 digits before the point and 18 after",
    )


def token_span(tok: Token) -> Span:
    return Span(
        tok.line or 1,
        tok.column or 1,
        tok.end_line or tok.line or 1,
        tok.end_column or (tok.column or 1) + 1,
        tok.start_pos or 0,
        tok.end_pos or 0,
    )


_CHAR_HELP = {
    "=": "compare with `==`",
    "!": "write `!=` to compare, or `not` to negate",
    "&": "write `and`",
    "|": "write `or`",
    "'": 'strings are written in double quotes: `"H100-80G"`',
    ";": "clauses need no separator: start each on its own line",
    ":": "a time of day is written only after `billing period ends`, as in `17:00`",
}


def bad_character(exc: UnexpectedCharacters, source: Source) -> Diagnostic:
    pos = exc.pos_in_stream or 0
    text = source.text
    char = text[pos] if 0 <= pos < len(text) else ""
    line, col = exc.line, exc.column
    if char == '"':
        end = text.find("\n", pos)
        end = len(text) if end < 0 else end
        end_col = col + max(1, len(text[pos:end].rstrip("\r")))
        return error(
            "E006",
            'this string is not closed: a string ends with `"` on the same line',
            Span(line, col, line, end_col, pos, end),
            file=source.name,
            help='add the closing `"`',
        )
    help_ = _CHAR_HELP.get(char)
    if help_ is None and not char.isascii() and char.isalpha():
        help_ = "names are written with ASCII letters, digits and `_`"
    return error(
        "E007",
        f"unexpected character {_describe_char(char)}",
        Span.point(line, col, pos),
        file=source.name,
        help=help_,
    )


def _describe_char(char: str) -> str:
    if char == "`":
        return "'`'"
    if char.isprintable() and not char.isspace():
        return f"`{char}`"
    return f"U+{ord(char):04X}" if char else "at the end of the file"


# ---- words for tokens and terminals


def shown(tok: Token, limit: int = 30) -> str:
    text = str(tok).replace("`", "'")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def describe_found(tok: Token) -> str:
    if tok.type == "$END":
        return "the end of the file"
    return f"`{shown(tok)}`"


COMPARE_TEXT = {"==", "!=", "<", "<=", ">", ">="}
_OPERATORS = {"PLUS", "MINUS", "STAR", "SLASH", "LESSTHAN", "MORETHAN", "AND", "OR", "IN"}
CLAUSE_KEYWORDS = {
    "CURRENCY", "ROUNDING", "PRECISION", "RATE", "BILLING", "PROMISE", "EXCLUDE", "CREDIT",
    "CAP",
}  # fmt: skip
_VALUE_START = {"NUMBER", "NAME", "STRING", "LPAR", "MINUS", "NOT", "TRUE", "FALSE", "NONE",
                "TRACE"}  # fmt: skip
_NAMED = {
    "NAME": "a name",
    "NUMBER": "a number",
    "STRING": "a string in double quotes",
    "TIME": "a time of day such as `17:00`",
}
#: Keywords listed by name, first, in this order.
_FIRST = ["WHEN", "PER", "OF", "REQUIRE"]
#: Listed after operators and clauses, in this order; anything else follows, then the end.
_LATER = ["CONTRACT", "BUDGET"]


def describe_expected(accepts: Iterable[str], *, after_number: bool = False) -> str:
    """Plain words for what the parser would have accepted: ``a unit, `when`, `per`, an
    operator, a new clause, `%` or `}```. After a number a name can only be its unit."""
    texts = terminal_text()
    rest = set(accepts)
    parts: list[str] = []
    if len(rest & _VALUE_START) >= 4:
        parts.append("an expression")
        rest -= _VALUE_START
    for n, words in _NAMED.items():
        if n in rest:
            parts.append("a unit" if n == "NAME" and after_number else words)
            rest.discard(n)
    operators = {n for n in rest if n in _OPERATORS or texts.get(n) in COMPARE_TEXT}
    rest -= operators
    if operators:
        rest.discard("NOT")  # after a value, `not` is only the start of `not in`
    for n in _FIRST:
        if n in rest:
            parts.append(f"`{texts[n]}`")
            rest.discard(n)
    if operators:
        parts.append("an operator")
    clauses = rest & CLAUSE_KEYWORDS
    if clauses:
        rest -= clauses
        parts.append("a new clause" if len(clauses) > 2 else "a clause")
    for n in _LATER:
        if n in rest:
            parts.append(f"`{texts[n]}`")
            rest.discard(n)
    end = "$END" in rest
    rest.discard("$END")
    parts.extend(f"`{texts[n]}`" for n in sorted(rest, key=lambda n: texts.get(n, n)) if n in texts)
    if end:
        parts.append("the end of the file")
    if not parts:
        return "something else"
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " or " + parts[-1]


def end_span(stack: tuple[Any, ...], source: Source) -> Span:
    """Just after the last piece of code (comments and blank lines after it do not count)."""
    end = next((p for v in reversed(stack) if (p := end_pos(v)) is not None), 0)
    return point_at(source.text[:end])
