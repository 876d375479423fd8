"""Text → lark tree → AST, with every syntax error turned into a diagnostic.

:func:`parse` never raises on any input: it returns a :class:`ParseResult` with the AST
(``file``, ``None`` when there are syntax errors) and the diagnostics. A parse reports at most
one syntax error, the first (LALR parsing stops there)::

    >>> r = parse('contract "c" { rate 2 USD per gpu_hour capacity == spot }')
    >>> r.ok, r.diagnostics[0].code, r.diagnostics[0].message
    (False, 'E002', 'expected `when` before the condition starting at `capacity`')

How a syntax error becomes a message:

1. Input that is not text (undecodable bytes, NUL characters) is ``E008`` before lark sees it.
2. A character no terminal accepts is ``E006`` (an opening ``"`` without its closing one on the
   same line) or ``E007``.
3. An unexpected token is classified by example: :data:`EXAMPLES` maps each kind of mistake to
   malformed snippets, and lark's ``UnexpectedInput.match_examples`` picks the example that
   failed in the same parser state. Examples only match at the same nesting depth, so each
   kind also has a rule over the parser's state (what it accepts, what the unexpected token
   is, which delimiters are open) that confirms an example's label and classifies the
   errors no example matches. Anything else is ``E001``, which names what was found and what
   was expected, in words (never lark's terminal names).

The grammar is ``spot.lark``. Keywords are reserved only where the grammar expects them: the
lexer is offered ``NAME`` in every parser state (:class:`_AlwaysName`), and lark's
contextual lexer turns a word into a keyword only in states that accept that keyword.
Deeply nested expressions are rejected beyond :data:`contractlang.lower.MAX_NESTING` levels
(``E009``) before any recursive pass runs.
"""

from __future__ import annotations

import contextvars
import functools
import importlib.util
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lark import Lark, Token, Tree
from lark.exceptions import LarkError, UnexpectedCharacters, UnexpectedInput, UnexpectedToken

from contractlang.ast import Comment, SpotFile
from contractlang.diagnostics import Diagnostic, Related, Source, Span, did_you_mean, error
from contractlang.lower import lower

__all__ = ["EXAMPLES", "KEYWORDS", "ParseResult", "parse", "parse_path"]


@dataclass(frozen=True)
class ParseResult:
    """The outcome of parsing one source: the AST (``None`` on a syntax error), the
    diagnostics, and the source text they point into."""

    file: SpotFile | None
    diagnostics: tuple[Diagnostic, ...]
    source: Source

    @property
    def ok(self) -> bool:
        """True when the text parsed without errors."""
        return self.file is not None and not any(d.is_error for d in self.diagnostics)


# --------------------------------------------------------------------------- the parser


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


@functools.cache
def _parser() -> Lark:
    # strict=True makes lark refuse grammar conflicts; lark's strict mode also checks terminal
    # collisions and needs the `interegular` package for that. Without it the grammar is
    # still checked for LALR conflicts by tests/test_parse.py::test_grammar_is_conflict_free.
    return Lark.open_from_package(
        "contractlang",
        "spot.lark",
        parser="lalr",
        lexer="contextual",
        strict=_has_interegular(),
        propagate_positions=True,
        maybe_placeholders=True,
        postlex=_AlwaysName(),
        lexer_callbacks={"COMMENT": _collect_comment},
    )


@functools.cache
def _terminal_text() -> dict[str, str]:
    """Terminal name → its literal text, for the terminals that are fixed strings."""
    return {t.name: t.pattern.value for t in _parser().terminals if t.pattern.type == "str"}


_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


@functools.cache
def _keyword_terminals() -> dict[str, str]:
    return {name: text for name, text in _terminal_text().items() if _WORD.match(text)}


#: Every word that is a keyword somewhere in the grammar.
KEYWORDS: frozenset[str] = frozenset({
    "allocation", "and", "at", "billing", "budget", "cap", "contract", "credit", "credits",
    "currency", "ends", "exclude", "false", "in", "increment", "minimum", "none", "not",
    "notice", "of", "or", "per", "period", "precision", "promise", "rate", "reclaim",
    "require", "restart", "rounding", "trace", "true", "when", "within",
})  # fmt: skip


# --------------------------------------------------------------------------- entry points


def parse(text: str | bytes, filename: str = "<input>") -> ParseResult:
    """Parse the text of a `.spot` file.

    ``bytes`` are decoded as UTF-8 (a leading byte-order mark is dropped); text that is not
    UTF-8, or that holds a NUL character, is an ``E008`` diagnostic. Never raises on any
    input.

    >>> parse('budget "b" { require share(accepted) >= 90% }').ok
    True
    """
    decoded = _decode(text, filename)
    if isinstance(decoded, ParseResult):
        return decoded
    source = Source(filename, decoded)
    tokens: list[Token] = []
    reset = _comments.set(tokens)
    try:
        tree = _parser().parse(decoded)
    except UnexpectedInput as exc:
        return ParseResult(None, (_syntax_error(exc, source),), source)
    except LarkError as exc:  # pragma: no cover - lark raises UnexpectedInput for bad input
        diag = error("E001", f"cannot parse this file: {exc}", Span(1, 1, 1, 2), file=filename)
        return ParseResult(None, (diag,), source)
    finally:
        _comments.reset(reset)
    comments = tuple(Comment(str(t), _token_span(t)) for t in tokens)
    file, diags = lower(tree, comments=comments, filename=filename)
    if any(d.is_error for d in diags):
        return ParseResult(None, tuple(diags), source)
    return ParseResult(file, tuple(diags), source)


def parse_path(path: str | Path) -> ParseResult:
    """Read and parse a file. A missing or unreadable file is an ``E013`` diagnostic."""
    name = str(path)
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        reason = (exc.strerror or str(exc)).lower()
        diag = error("E013", f"cannot read `{name}`: {reason}", Span(0, 0, 0, 0), file=name)
        return ParseResult(None, (diag,), Source(name, ""))
    return parse(data, name)


# --------------------------------------------------------------------------- input checks


def _decode(text: str | bytes, filename: str) -> str | ParseResult:
    if isinstance(text, bytes):
        data = text
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            prefix = data[: exc.start].decode("utf-8-sig", errors="replace")
            shown = data.decode("utf-8-sig", errors="replace")
            span = _point_at(prefix)
            diag = error(
                "E008",
                f"the file is not UTF-8 text: byte 0x{data[exc.start]:02x} cannot be decoded",
                span,
                file=filename,
                help="save the file as UTF-8",
            )
            return ParseResult(None, (diag,), Source(filename, shown))
    elif text.startswith("\ufeff"):
        text = text[1:]
    nul = text.find("\x00")
    if nul >= 0:
        diag = error(
            "E008",
            "the input holds a NUL character, so it is not a text file",
            _point_at(text[:nul]),
            file=filename,
        )
        return ParseResult(None, (diag,), Source(filename, text.replace("\x00", " ")))
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        safe = text.encode("utf-8", errors="replace").decode("utf-8")
        diag = error(
            "E008",
            "the input holds a character that is not valid Unicode text",
            _point_at(text[: exc.start]),
            file=filename,
        )
        return ParseResult(None, (diag,), Source(filename, safe))
    return text


def _point_at(prefix: str) -> Span:
    """A one-character span just after ``prefix`` (line and column as lark counts: by ``\\n``)."""
    line = prefix.count("\n") + 1
    col = len(prefix) - (prefix.rfind("\n") + 1) + 1
    return Span.point(line, col, len(prefix))


def _token_span(tok: Token) -> Span:
    return Span(
        tok.line or 1,
        tok.column or 1,
        tok.end_line or tok.line or 1,
        tok.end_column or (tok.column or 1) + 1,
        tok.start_pos or 0,
        tok.end_pos or 0,
    )


# --------------------------------------------------------------------------- syntax errors

#: Kinds of syntax mistake, each with malformed snippets that show it (for
#: ``UnexpectedInput.match_examples``). A kind's rule in :data:`_RULES` must also hold for
#: the error at hand, so an example that failed in the same parser state for another reason
#: cannot mislabel it.
EXAMPLES: dict[str, tuple[str, ...]] = {
    "missing_when": (
        'contract "c" { rate 2 USD per gpu_hour capacity == spot }',
        'contract "c" { rate 2.10 USD per gpu_hour sku == "H100-80G" }',
        'contract "c" { rate trace.price per gpu_hour capacity == spot }',
        'contract "c" { rate price capacity == spot }',
        'contract "c" { exclude "x" allocation end_reason == reclaimed }',
        'contract "c" { exclude "x" replayed_time end_reason == reclaimed }',
        'contract "c" { exclude "x" 5 minutes runtime < 1 hour }',
        'contract "c" { credit "x" 10% of charge replacement_wait > 15 minutes }',
        'contract "c" { credit "x" 10% of replayed_cost end_reason == failed }',
        'contract "c" { credit "x" 2 USD per gpu_hour * gpus replacement_wait > 15 minutes }',
        'contract "c" { credit "x" 2 USD per gpu_hour * (a - b) replacement_wait > 15 minutes }',
    ),
    "number_expected": (
        'contract "c" { billing increment minute }',
        'contract "c" { billing minimum minute }',
        'contract "c" { billing increment seconds }',
        'contract "c" { precision USD }',
        'contract "c" { precision two }',
        'contract "c" { promise reclaim notice seconds }',
        'contract "c" { promise restart within minutes }',
        'contract "c" { cap credits at USD per month }',
    ),
    "misspelled_keyword": (
        'contrac "c" {}',
        'contract "c" { exlude "x" allocation when a }',
        'contract "c" { rate 2 USD per gpu_hour whn capacity == spot }',
        'contract "c" { billing incremnt 1 minute }',
        'contract "c" { promise reclam notice 30 seconds }',
        'contract "c" { cap credit at 5 USD per run }',
        'budget "b" { requre share(accepted) >= 90% }',
    ),
    "unclosed_block": (
        'contract "c" { currency USD',
        'contract "c" { rate 2 USD per gpu_hour',
        'contract "c" { currency USD contract "d" { }',
        'budget "b" { require share(accepted) >= 90%',
        'budget "b" { require share(accepted) >= 90% budget "d" { }',
    ),
    "unbalanced": (
        'contract "c" { rate (2 USD per gpu_hour }',
        'contract "c" { rate 2 USD per gpu_hour when (a == b }',
        'contract "c" { rate 2 USD per gpu_hour when a == b) }',
        'contract "c" { rate 2 when capacity in [spot, on_demand }',
        'budget "b" { require p95(cost_per_accepted_run <= 5 USD }',
        'budget "b" { require p95(x)) <= 5 USD }',
    ),
    "unexpected_eof": (
        "contract",
        'contract "c"',
        "budget",
        'budget "b"',
    ),
    "chained_comparison": (
        'budget "b" { require 1 < mean(x) < 3 }',
        'contract "c" { rate 2 when a == b == c }',
        'contract "c" { rate 2 when a < b <= c }',
    ),
    "unnamed_term": (
        'contract "c" { credit 10% of charge when a }',
        'contract "c" { exclude allocation when a }',
        'contract "c" { exclude replayed_time when a }',
        "contract c { }",
        "budget b { }",
    ),
}


@dataclass(frozen=True)
class _Context:
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
        return text if _WORD.match(text) else None

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
_COMPARE_TEXT = {"==", "!=", "<", "<=", ">", ">="}
#: Tokens that plausibly start a condition (a number or string rarely does).
_CONDITION_START = {"NAME", "LPAR", "NOT", "TRACE"}
_CLAUSE_WORDS = {
    "currency", "rounding", "precision", "rate", "billing", "promise", "exclude", "credit", "cap",
    "require",
}  # fmt: skip


def _syntax_error(exc: UnexpectedInput, source: Source) -> Diagnostic:
    if isinstance(exc, UnexpectedCharacters):
        return _bad_character(exc, source)
    if not isinstance(exc, UnexpectedToken):  # pragma: no cover - LALR raises only these two
        return error("E001", "cannot parse this file", Span(1, 1, 1, 2), file=source.name)
    state = exc.state
    stack = tuple(getattr(state, "value_stack", ()) or ())
    ctx = _Context(exc.token, frozenset(exc.accepts or exc.expected), stack, source)
    label = _match_example(exc)
    if label is not None and _RULES[label][0](ctx):
        return _RULES[label][1](ctx)
    for applies, build in _RULES.values():
        if applies(ctx):
            return build(ctx)
    return _generic(ctx)


@functools.cache
def _example_errors() -> dict[str, UnexpectedInput]:
    """Each example's error, computed once (``match_examples`` re-raises these)."""
    out: dict[str, UnexpectedInput] = {}
    for snippets in EXAMPLES.values():
        for snippet in snippets:
            try:
                _parser().parse(snippet)
            except UnexpectedInput as exc:
                out[snippet] = exc
            else:  # pragma: no cover - guarded by tests
                raise AssertionError(f"example parses without error: {snippet!r}")
    return out


def _raise_example(snippet: str) -> Tree[Token]:
    """The parse function ``match_examples`` calls: it re-raises the example's error."""
    raise _example_errors()[snippet]


def _match_example(exc: UnexpectedInput) -> str | None:
    if exc.state is None:  # pragma: no cover - the LALR parser always sets it
        return None
    _example_errors()
    # use_accepts=False: in lark 1.3.1 the use_accepts path formats a ParserState with `%d`
    # in a debug message and raises TypeError; each kind's rule checks the label instead.
    label: str | None = exc.match_examples(
        _raise_example, EXAMPLES, token_type_match_fallback=True, use_accepts=False
    )
    return label


# ---- the kinds: when each applies, and its message


_MATCHING = {"RPAR": "LPAR", "RSQB": "LSQB", "RBRACE": "LBRACE"}


def _unbalanced_applies(ctx: _Context) -> bool:
    opened = ctx.open_delimiters()
    inner = opened[-1].type if opened else None
    if ctx.token.type in _MATCHING:  # a closer that does not close the innermost opener
        return inner != _MATCHING[ctx.token.type]
    # a parenthesis or bracket left open where a clause, a block or the file ends
    return inner in ("LPAR", "LSQB") and (
        ctx.is_eof or ctx.word in _CLAUSE_WORDS or ctx.word in ("contract", "budget")
    )


def _unbalanced(ctx: _Context) -> Diagnostic:
    opened = ctx.open_delimiters()
    tok = ctx.token
    inner = opened[-1] if opened else None
    closes_nothing = inner is None or (tok.type != "RBRACE" and inner.type == "LBRACE")
    if inner is None or (tok.type in _MATCHING and closes_nothing):
        return error(
            "E011",
            f"unmatched `{tok}`",
            _token_span(tok),
            file=ctx.source.name,
            help=f"remove it, or add the `{_OPENER_OF[tok.type]}` it closes",
        )
    closer = _CLOSER[inner.type]
    where = "at the end of the file" if ctx.is_eof else f"before `{tok}` on line {tok.line}"
    related = () if ctx.is_eof else (Related(_token_span(tok), f"found `{tok}` here"),)
    return error(
        "E011",
        f"`{inner}` is never closed",
        _token_span(inner),
        file=ctx.source.name,
        help=f"add `{closer}` {where}",
        related=related,
    )


def _unclosed_block_applies(ctx: _Context) -> bool:
    opened = ctx.open_delimiters()
    return (
        bool(opened)
        and opened[-1].type == "LBRACE"
        and (ctx.is_eof or ctx.word in ("contract", "budget"))
    )


def _unclosed_block(ctx: _Context) -> Diagnostic:
    brace = ctx.open_delimiters()[-1]
    i = ctx.stack.index(brace)
    kind, name = (str(v) for v in ctx.stack[i - 2 : i]) if i >= 2 else ("block", "")
    tok = ctx.token
    where = "at the end of the file" if ctx.is_eof else f"before `{tok}` on line {tok.line}"
    related = () if ctx.is_eof else (Related(_token_span(tok), "the next block starts here"),)
    return error(
        "E003",
        f"the `{{` of `{kind} {name}` is never closed".replace("  ", " "),
        _token_span(brace),
        file=ctx.source.name,
        help=f"add `}}` {where}",
        related=related,
    )


def _eof_applies(ctx: _Context) -> bool:
    return ctx.is_eof


def _eof(ctx: _Context) -> Diagnostic:
    return error(
        "E010",
        f"unexpected end of file; expected {_describe_expected(ctx.accepts)}",
        _end_span(ctx),
        file=ctx.source.name,
    )


def _keyword_candidates(ctx: _Context) -> list[str]:
    kws = _keyword_terminals()
    return [kws[t] for t in ctx.accepts if t in kws]


def _misspelled_applies(ctx: _Context) -> bool:
    word = ctx.word
    if word is None or ctx.token.type in ctx.accepts:
        return False
    return did_you_mean(word, _keyword_candidates(ctx)) is not None


def _misspelled(ctx: _Context) -> Diagnostic:
    word = str(ctx.token)
    guess = did_you_mean(word, _keyword_candidates(ctx))
    return error(
        "E005",
        f"unknown keyword `{word}`",
        _token_span(ctx.token),
        file=ctx.source.name,
        help=f"did you mean `{guess}`?",
    )


def _chained_applies(ctx: _Context) -> bool:
    # `a < b <`: the parser stops with `a`, `<`, `b` on its stack
    if str(ctx.token) not in _COMPARE_TEXT and ctx.token.type not in ("IN", "NOT"):
        return False
    before = ctx.stack[-2] if len(ctx.stack) >= 2 else None
    return isinstance(before, Token) and (str(before) in _COMPARE_TEXT or before.type == "IN")


def _chained(ctx: _Context) -> Diagnostic:
    return error(
        "E001",
        f"comparisons do not chain: unexpected `{ctx.token}` after a comparison",
        _token_span(ctx.token),
        file=ctx.source.name,
        help="join two comparisons with `and`, as in `a < b and b < c`",
    )


def _missing_when_applies(ctx: _Context) -> bool:
    return (
        "WHEN" in ctx.accepts
        and ctx.token.type not in ctx.accepts
        and (ctx.token.type in _CONDITION_START)
    )


def _missing_when(ctx: _Context) -> Diagnostic:
    return error(
        "E002",
        f"expected `when` before the condition starting at `{_shown(ctx.token)}`",
        _token_span(ctx.token),
        file=ctx.source.name,
        help=f"write `when {_shown(ctx.token)} …`",
    )


def _number_expected_applies(ctx: _Context) -> bool:
    return "NUMBER" in ctx.accepts and "NAME" not in ctx.accepts and ctx.word is not None


def _number_expected(ctx: _Context) -> Diagnostic:
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
        _token_span(ctx.token),
        file=ctx.source.name,
        help=help_,
    )


def _unnamed_applies(ctx: _Context) -> bool:
    return ctx.accepts == {"STRING"}


def _unnamed(ctx: _Context) -> Diagnostic:
    prev = ctx.previous_token()
    what = str(prev) if prev is not None else "it"
    return error(
        "E001",
        f"expected a name in double quotes after `{what}`, found {_describe_found(ctx.token)}",
        _token_span(ctx.token),
        file=ctx.source.name,
        help=f'name it with a string, as in `{what} "my name" …`',
    )


_Rule = tuple[Callable[[_Context], bool], Callable[[_Context], Diagnostic]]

#: Kinds in priority order: the first whose rule holds classifies an error no example matched.
_RULES: dict[str, _Rule] = {
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


def _generic(ctx: _Context) -> Diagnostic:
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
    elif ctx.word == "require" and ctx.accepts & _CLAUSE_KEYWORDS:
        help_ = '`require` belongs in a `budget "name" { … }` block'
    elif ctx.word in _CLAUSE_WORDS and "REQUIRE" in ctx.accepts:
        help_ = f"`{ctx.word}` is a contract clause; a budget holds only `require` lines"
    return error(
        "E001",
        f"unexpected {_describe_found(ctx.token)}; "
        f"expected {_describe_expected(ctx.accepts, after_number=after_number)}",
        _token_span(ctx.token),
        file=ctx.source.name,
        help=help_,
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


def _bad_character(exc: UnexpectedCharacters, source: Source) -> Diagnostic:
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


def _shown(tok: Token, limit: int = 30) -> str:
    text = str(tok).replace("`", "'")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _describe_found(tok: Token) -> str:
    if tok.type == "$END":
        return "the end of the file"
    return f"`{_shown(tok)}`"


_OPERATORS = {"PLUS", "MINUS", "STAR", "SLASH", "LESSTHAN", "MORETHAN", "AND", "OR", "IN"}
_CLAUSE_KEYWORDS = {
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


def _describe_expected(accepts: Iterable[str], *, after_number: bool = False) -> str:
    """Plain words for what the parser would have accepted: ``a unit, `when`, `per`, an
    operator, a new clause, `%` or `}```. After a number a name can only be its unit."""
    texts = _terminal_text()
    rest = set(accepts)
    parts: list[str] = []
    if len(rest & _VALUE_START) >= 4:
        parts.append("an expression")
        rest -= _VALUE_START
    for n, words in _NAMED.items():
        if n in rest:
            parts.append("a unit" if n == "NAME" and after_number else words)
            rest.discard(n)
    operators = {n for n in rest if n in _OPERATORS or texts.get(n) in _COMPARE_TEXT}
    rest -= operators
    if operators:
        rest.discard("NOT")  # after a value, `not` is only the start of `not in`
    for n in _FIRST:
        if n in rest:
            parts.append(f"`{texts[n]}`")
            rest.discard(n)
    if operators:
        parts.append("an operator")
    clauses = rest & _CLAUSE_KEYWORDS
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


def _end_span(ctx: _Context) -> Span:
    """Just after the last piece of code (comments and blank lines after it do not count)."""
    end = 0
    for v in reversed(ctx.stack):
        if isinstance(v, Token) and v.end_pos is not None:
            end = v.end_pos
            break
        meta = getattr(v, "meta", None)
        if meta is not None and not getattr(meta, "empty", True):
            end = meta.end_pos
            break
    return _point_at(ctx.source.text[:end])
