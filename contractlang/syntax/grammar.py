"""The grammar, loaded once: ``spot.lark`` as a LALR parser that builds the AST as it parses
(:func:`parser`), and the words of its terminals.

Keywords are reserved only where the grammar expects them: the lexer is offered ``NAME`` in
every parser state (:class:`_AlwaysName`), and lark's contextual lexer turns a word into a
keyword only in states that accept that keyword. Comments are collected by a lexer callback
into the list set with :func:`collecting_comments`.
"""

from __future__ import annotations

import contextvars
import functools
import importlib.util
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from lark import Lark, Token

from contractlang.syntax.lower import Builder

__all__ = [
    "KEYWORDS",
    "WORD",
    "collecting_comments",
    "keyword_terminals",
    "parser",
    "terminal_text",
    "tree_parser",
]


class _AlwaysName:
    """A pass-through post-lexer whose only job is ``always_accept``: lark's contextual lexer
    then tries ``NAME`` in every state, so a word is read whole (``capacity`` is never
    ``cap`` + ``acity``) and becomes a keyword only where the parser accepts that keyword."""

    always_accept = ("NAME",)

    def process(self, stream: Iterator[Token]) -> Iterator[Token]:
        return stream


_comments: contextvars.ContextVar[list[Token] | None] = contextvars.ContextVar(
    "contractlang_comments", default=None
)


def _collect_comment(token: Token) -> Token:
    sink = _comments.get()
    if sink is not None:
        sink.append(token)
    return token


def _has_interegular() -> bool:
    return importlib.util.find_spec("interegular") is not None


_COMMENTS = {"COMMENT": _collect_comment}


@functools.cache
def parser() -> Lark:
    """The parser of every file: LALR, building the AST as it reduces (the builder of
    :mod:`contractlang.syntax.lower` is its transformer, given every token of each rule), so no
    tree is built; it returns the file's items."""
    return _lark(keep_all_tokens=True, transformer=Builder(), lexer_callbacks=_COMMENTS)


@functools.cache
def tree_parser() -> Lark:
    """The same grammar building lark's tree, positions propagated: only to measure a file
    that may nest too deep (:func:`contractlang.syntax.lower.nesting_error`)."""
    return _lark(propagate_positions=True)


def _lark(**options: Any) -> Lark:
    # strict=True makes lark refuse grammar conflicts; lark's strict mode also checks terminal
    # collisions and needs the `interegular` package for that. Without it the grammar is
    # still checked for LALR conflicts by tests/test_parse.py::test_grammar_is_conflict_free.
    # cache=True: the LALR tables are built once and kept in the temporary directory (keyed by
    # the grammar, the options and lark's version), so a `check` starts in a tenth of the time;
    # a cache file that cannot be written or read is rebuilt, never an error.
    return Lark.open_from_package(
        "contractlang.syntax",
        "spot.lark",
        parser="lalr",
        lexer="contextual",
        strict=_has_interegular(),
        maybe_placeholders=True,
        postlex=_AlwaysName(),
        cache=True,
        **options,
    )


@functools.cache
def terminal_text() -> dict[str, str]:
    """Terminal name → its literal text, for the terminals that are fixed strings."""
    return {t.name: t.pattern.value for t in parser().terminals if t.pattern.type == "str"}


WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


@functools.cache
def keyword_terminals() -> dict[str, str]:
    return {name: text for name, text in terminal_text().items() if WORD.match(text)}


#: Every word that is a keyword somewhere in the grammar.
KEYWORDS: frozenset[str] = frozenset({
    "allocation", "and", "at", "billing", "budget", "cap", "contract", "credit", "credits",
    "currency", "ends", "exclude", "false", "in", "increment", "minimum", "none", "not",
    "notice", "of", "or", "per", "period", "precision", "promise", "rate", "reclaim",
    "require", "restart", "rounding", "trace", "true", "when", "within",
})  # fmt: skip


@contextmanager
def collecting_comments() -> Iterator[list[Token]]:
    """The comment tokens the parser meets while the ``with`` block parses."""
    tokens: list[Token] = []
    reset = _comments.set(tokens)
    try:
        yield tokens
    finally:
        _comments.reset(reset)
