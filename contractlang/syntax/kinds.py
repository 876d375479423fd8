"""The kinds of syntax mistake: for each, when it applies (a rule over the parser's state: what
it accepts, what the unexpected token is, which delimiters are open) and its message.

:data:`RULES` lists the kinds in priority order; :func:`generic` words anything else as
``E001``, naming what was found and what was expected.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from lark import Token

from contractlang.diagnostics import Diagnostic, Related, Source, did_you_mean, error
from contractlang.syntax.describe import (
    CLAUSE_KEYWORDS,
    COMPARE_TEXT,
    describe_expected,
    describe_found,
    end_span,
    shown,
    token_span,
)
from contractlang.syntax.grammar import WORD, keyword_terminals

__all__ = ["RULES", "Context", "generic"]


@dataclass(frozen=True)
class Context:
    """What we know about a syntax error: the token, what was acceptable, what is open."""

    token: Token
    accepts: frozenset[str]
    stack: tuple[Any, ...]
    source: Source

    @property
    def is_eof(self) -> bool:
        return self.token.type == "$END"

    @property
    def word(self) -> str | None:
        """The token's text when it is a word (a name or a keyword)."""
        text = str(self.token)
        return text if WORD.match(text) else None

    def open_delimiters(self) -> list[Token]:
        """The ``(``, ``[`` and ``{`` still open where the parser stopped, outermost first."""
        opened: list[Token] = []
        for v in self.stack:
            if not isinstance(v, Token):
                continue
            if v.type in _CLOSER:
                opened.append(v)
            elif v.type in _OPENER_OF and opened:
                opened.pop()
        return opened

    def previous_token(self) -> Token | None:
        """The token just before the error, if the parser has not folded it into a rule."""
        top = self.stack[-1] if self.stack else None
        return top if isinstance(top, Token) else None


_CLOSER = {"LPAR": ")", "LSQB": "]", "LBRACE": "}"}
_OPENER_OF = {"RPAR": "(", "RSQB": "[", "RBRACE": "{"}
#: Tokens that plausibly start a condition (a number or string rarely does).
_CONDITION_START = {"NAME", "LPAR", "NOT", "TRACE"}
_CLAUSE_WORDS = {
    "currency", "rounding", "precision", "rate", "billing", "promise", "exclude", "credit", "cap",
    "require",
}  # fmt: skip


_MATCHING = {"RPAR": "LPAR", "RSQB": "LSQB", "RBRACE": "LBRACE"}


def _unbalanced_applies(ctx: Context) -> bool:
    opened = ctx.open_delimiters()
    inner = opened[-1].type if opened else None
    if ctx.token.type in _MATCHING:  # a closer that does not close the innermost opener
        return inner != _MATCHING[ctx.token.type]
    # a parenthesis or bracket left open where a clause, a block or the file ends
    return inner in ("LPAR", "LSQB") and (
        ctx.is_eof or ctx.word in _CLAUSE_WORDS or ctx.word in ("contract", "budget")
    )


def _unbalanced(ctx: Context) -> Diagnostic:
    opened = ctx.open_delimiters()
    tok = ctx.token
    inner = opened[-1] if opened else None
    closes_nothing = inner is None or (tok.type != "RBRACE" and inner.type == "LBRACE")
    if inner is None or (tok.type in _MATCHING and closes_nothing):
        return error(
            "E011",
            f"unmatched `{tok}`",
            token_span(tok),
            file=ctx.source.name,
            help=f"remove it, or add the `{_OPENER_OF[tok.type]}` it closes",
        )
    closer = _CLOSER[inner.type]
    where = "at the end of the file" if ctx.is_eof else f"before `{tok}` on line {tok.line}"
    related = () if ctx.is_eof else (Related(token_span(tok), f"found `{tok}` here"),)
    return error(
        "E011",
        f"`{inner}` is never closed",
        token_span(inner),
        file=ctx.source.name,
        help=f"add `{closer}` {where}",
        related=related,
    )


def _unclosed_block_applies(ctx: Context) -> bool:
    opened = ctx.open_delimiters()
    return (
        bool(opened)
        and opened[-1].type == "LBRACE"
        and (ctx.is_eof or ctx.word in ("contract", "budget"))
    )


def _unclosed_block(ctx: Context) -> Diagnostic:
    brace = ctx.open_delimiters()[-1]
    i = ctx.stack.index(brace)
    kind, name = (str(v) for v in ctx.stack[i - 2 : i]) if i >= 2 else ("block", "")
    tok = ctx.token
    where = "at the end of the file" if ctx.is_eof else f"before `{tok}` on line {tok.line}"
    related = () if ctx.is_eof else (Related(token_span(tok), "the next block starts here"),)
    return error(
        "E003",
        f"the `{{` of `{kind} {name}` is never closed".replace("  ", " "),
        token_span(brace),
        file=ctx.source.name,
        help=f"add `}}` {where}",
        related=related,
    )


def _eof_applies(ctx: Context) -> bool:
    return ctx.is_eof


def _eof(ctx: Context) -> Diagnostic:
    return error(
        "E010",
        f"unexpected end of file; expected {describe_expected(ctx.accepts)}",
        end_span(ctx.stack, ctx.source),
        file=ctx.source.name,
    )


def _keyword_candidates(ctx: Context) -> list[str]:
    kws = keyword_terminals()
    return [kws[t] for t in ctx.accepts if t in kws]


def _misspelled_applies(ctx: Context) -> bool:
    word = ctx.word
    if word is None or ctx.token.type in ctx.accepts:
        return False
    return did_you_mean(word, _keyword_candidates(ctx)) is not None


def _misspelled(ctx: Context) -> Diagnostic:
    word = str(ctx.token)
    guess = did_you_mean(word, _keyword_candidates(ctx))
    return error(
        "E005",
        f"unknown keyword `{word}`",
        token_span(ctx.token),
        file=ctx.source.name,
        help=f"did you mean `{guess}`?",
    )


def _chained_applies(ctx: Context) -> bool:
    # `a < b <`: the parser stops with `a`, `<`, `b` on its stack
    if str(ctx.token) not in COMPARE_TEXT and ctx.token.type not in ("IN", "NOT"):
        return False
    before = ctx.stack[-2] if len(ctx.stack) >= 2 else None
    return isinstance(before, Token) and (str(before) in COMPARE_TEXT or before.type == "IN")


def _chained(ctx: Context) -> Diagnostic:
    return error(
        "E001",
        f"comparisons do not chain: unexpected `{ctx.token}` after a comparison",
        token_span(ctx.token),
        file=ctx.source.name,
        help="join two comparisons with `and`, as in `a < b and b < c`",
    )


def _missing_when_applies(ctx: Context) -> bool:
    return (
        "WHEN" in ctx.accepts
        and ctx.token.type not in ctx.accepts
        and (ctx.token.type in _CONDITION_START)
    )


def _missing_when(ctx: Context) -> Diagnostic:
    return error(
        "E002",
        f"expected `when` before the condition starting at `{shown(ctx.token)}`",
        token_span(ctx.token),
        file=ctx.source.name,
        help=f"write `when {shown(ctx.token)} …`",
    )


def _number_expected_applies(ctx: Context) -> bool:
    return "NUMBER" in ctx.accepts and "NAME" not in ctx.accepts and ctx.word is not None


def _number_expected(ctx: Context) -> Diagnostic:
    prev = ctx.previous_token()
    prev_type = prev.type if prev is not None else ""
    if prev_type == "PRECISION":
        help_ = "`precision` takes a number of decimal places, as in `precision 2`"
    elif prev_type == "AT":
        help_ = "write the limit as an amount, as in `50000 USD`, or as `30% of gross`"
    else:
        help_ = f"write the number before the unit, as in `1 {ctx.token}`"
    return error(
        "E004",
        f"expected a number, found `{ctx.token}`",
        token_span(ctx.token),
        file=ctx.source.name,
        help=help_,
    )


def _unnamed_applies(ctx: Context) -> bool:
    return ctx.accepts == {"STRING"}


def _unnamed(ctx: Context) -> Diagnostic:
    prev = ctx.previous_token()
    what = str(prev) if prev is not None else "it"
    return error(
        "E001",
        f"expected a name in double quotes after `{what}`, found {describe_found(ctx.token)}",
        token_span(ctx.token),
        file=ctx.source.name,
        help=f'name it with a string, as in `{what} "my name" …`',
    )


_Rule = tuple[Callable[[Context], bool], Callable[[Context], Diagnostic]]

#: Kinds in priority order: the first whose rule holds classifies an error no example matched.
RULES: dict[str, _Rule] = {
    "unbalanced": (_unbalanced_applies, _unbalanced),
    "unclosed_block": (_unclosed_block_applies, _unclosed_block),
    "unexpected_eof": (_eof_applies, _eof),
    "misspelled_keyword": (_misspelled_applies, _misspelled),
    "chained_comparison": (_chained_applies, _chained),
    "missing_when": (_missing_when_applies, _missing_when),
    "number_expected": (_number_expected_applies, _number_expected),
    "unnamed_term": (_unnamed_applies, _unnamed),
}


#: A hint for the generic message, by the keyword just before the unexpected token.
_AFTER_HELP = {
    "CURRENCY": "write a currency code, as in `currency USD`",
    "ROUNDING": "write `rounding half_up` or `rounding half_even`",
    "PER": "a cap applies per `allocation`, `run`, `month` or `contract`",
    "ENDS": 'write the time and the zone, as in `billing period ends 17:00 "America/New_York"`',
    "WHEN": "write a condition after `when`, as in `when capacity == spot`",
}


def generic(ctx: Context) -> Diagnostic:
    prev = ctx.previous_token()
    after_number = prev is not None and prev.type == "NUMBER"
    help_ = _AFTER_HELP.get(prev.type) if prev is not None else None
    if (
        prev is not None
        and prev.type == "PER"
        and "CAP" not in {getattr(v, "type", None) for v in ctx.stack}
    ):
        help_ = None
    if ctx.word in _CLAUSE_WORDS and "CONTRACT" in ctx.accepts:
        help_ = 'terms go inside a block: `contract "name" { … }` or `budget "name" { … }`'
    elif ctx.word == "require" and ctx.accepts & CLAUSE_KEYWORDS:
        help_ = '`require` belongs in a `budget "name" { … }` block'
    elif ctx.word in _CLAUSE_WORDS and "REQUIRE" in ctx.accepts:
        help_ = f"`{ctx.word}` is a contract clause; a budget holds only `require` lines"
    return error(
        "E001",
        f"unexpected {describe_found(ctx.token)}; "
        f"expected {describe_expected(ctx.accepts, after_number=after_number)}",
        token_span(ctx.token),
        file=ctx.source.name,
        help=help_,
    )
