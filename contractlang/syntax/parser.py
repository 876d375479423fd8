"""Text → AST, with every syntax error turned into a diagnostic.

:func:`parse_text` never raises on any input. A parse reports at most one problem: the first
syntax error (LALR parsing stops there), which :mod:`contractlang.syntax.errors` words; else
nesting too deep (``E009``); else the first lexical mistake the grammar lets through
(:mod:`contractlang.syntax.lower`, which builds the AST as lark parses). Input that is not
text (undecodable bytes, NUL characters) is ``E008`` before lark sees it.

    >>> r = parse_text('contract "c" { rate 2 USD per gpu_hour capacity == spot }')
    >>> r.file is None, r.diagnostics[0].code, r.diagnostics[0].message
    (True, 'E002', 'expected `when` before the condition starting at `capacity`')
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import cast

from lark.exceptions import LarkError, UnexpectedInput

from contractlang.diagnostics import Diagnostic, Source, Span, error
from contractlang.lang.ast import Comment, Item, SpotFile
from contractlang.syntax.describe import exponent_error, point_at, token_span
from contractlang.syntax.grammar import collecting_comments, parser, tree_parser
from contractlang.syntax.lower import (
    collecting_problems,
    first_problem,
    may_nest_too_deep,
    nesting_error,
)

__all__ = ["Parsed", "parse_text"]


@dataclass(frozen=True)
class Parsed:
    """The outcome of reading one source: the file (``None`` when there is a problem), the
    source text and the diagnostics."""

    file: SpotFile | None
    source: Source
    diagnostics: tuple[Diagnostic, ...] = ()


def parse_text(text: str | bytes, filename: str = "<input>") -> Parsed:
    """Read ``text`` as a `.spot` file.

    ``bytes`` are decoded as UTF-8 (a leading byte-order mark is dropped); text that is not
    UTF-8, or that holds a NUL character, is an ``E008`` diagnostic.
    """
    decoded = _decode(text, filename)
    if isinstance(decoded, Parsed):
        return decoded
    # a line ends with LF or CRLF, or with a lone CR (old Mac files): read that as LF, so lines
    # are counted right
    decoded = _LONE_CR.sub("\n", decoded)
    source = Source(filename, decoded)
    exponent = _exponent_number(decoded)
    if exponent is not None:
        return Parsed(None, source, (exponent_error(exponent, source),))
    with collecting_comments() as tokens, collecting_problems() as problems:
        try:
            items = cast(tuple[Item, ...], parser().parse(decoded))  # the builder's `start`
        except UnexpectedInput as exc:
            # imported on the first syntax error, for start-up time: a file that parses needs
            # none of the wording of syntax errors (errors.py and kinds.py, 7 ms to load)
            from contractlang.syntax.errors import syntax_error  # noqa: PLC0415

            return Parsed(None, source, (syntax_error(exc, source),))
        except LarkError as exc:  # pragma: no cover - lark raises UnexpectedInput for bad input
            diag = error("E001", f"cannot parse this file: {exc}", Span(1, 1, 1, 2), file=filename)
            return Parsed(None, source, (diag,))
    if may_nest_too_deep(items):
        deep = nesting_error(tree_parser().parse(decoded), filename)
        if deep is not None:
            return Parsed(None, source, (deep,))
    problem = first_problem(problems, filename)
    if problem is not None:
        return Parsed(None, source, (problem,))
    comments = tuple(Comment(str(t), token_span(t)) for t in tokens)
    return Parsed(SpotFile(items, comments, filename), source)


def _decode(text: str | bytes, filename: str) -> str | Parsed:
    if isinstance(text, bytes):
        data = text
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            prefix = data[: exc.start].decode("utf-8-sig", errors="replace")
            shown = data.decode("utf-8-sig", errors="replace")
            diag = error(
                "E008",
                f"the file is not UTF-8 text: byte 0x{data[exc.start]:02x} cannot be decoded",
                point_at(prefix),
                file=filename,
                help="save the file as UTF-8",
            )
            return _failed(filename, shown, diag)
    elif text.startswith("\ufeff"):
        text = text[1:]
    nul = text.find("\x00")
    if nul >= 0:
        diag = error(
            "E008",
            "the input holds a NUL character, so it is not a text file",
            point_at(text[:nul]),
            file=filename,
        )
        return _failed(filename, text.replace("\x00", " "), diag)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        safe = text.encode("utf-8", errors="replace").decode("utf-8")
        diag = error(
            "E008",
            "the input holds a character that is not valid Unicode text",
            point_at(text[: exc.start]),
            file=filename,
        )
        return _failed(filename, safe, diag)
    return text


_LONE_CR = re.compile(r"\r(?!\n)")
#: Strings and comments (skipped), and a number written with an exponent (`1e400`, `2.5E-3`).
_SCAN = re.compile(
    r'"(?:[^"\\\r\n]|\\.)*"|#[^\r\n]*|(?<![A-Za-z0-9_.])(\d+(?:\.\d+)?[eE][+-]?\d+)(?![A-Za-z0-9_])'
)


def _exponent_number(text: str) -> re.Match[str] | None:
    """The first number written with an exponent outside strings and comments: the grammar
    has none, and would otherwise read `1e400` as `1` followed by a name."""
    for m in _SCAN.finditer(text):
        if m.group(1) is not None:
            return m
    return None


def _failed(filename: str, shown: str, diag: Diagnostic) -> Parsed:
    return Parsed(None, Source(filename, shown), (diag,))
