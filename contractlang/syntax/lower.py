"""lark's reductions → the typed AST of :mod:`contractlang.lang.ast`, as lark parses.

lark calls a :class:`Builder` method each time it reduces a rule of ``spot.lark`` (the rule's
name or alias; :mod:`contractlang.syntax.grammar` passes the builder as the LALR parser's
``transformer``), with the rule's parts as written: tokens (keywords and punctuation too, the
parser keeps every token), the nodes already built, ``None`` for an optional part left out.
No parse tree is built. This is the only module that knows the rules, their aliases and their
parts.

Every node gets the span of its text, from its first token to its last: what lark's
``propagate_positions`` gave a tree node. A parenthesised expression keeps the span of what is
inside the parentheses, and the node around it starts or ends at the parenthesis.

The builder also reports the few lexical mistakes the grammar lets through: an unknown escape
in a string (``E007``) and a ``precision`` that is not a whole number (``E004``), into the
list :func:`collecting_problems` sets; the first in the text is the file's diagnostic
(:func:`first_problem`). Nesting deeper than :data:`MAX_NESTING` levels is ``E009``: the
expressions long enough to nest that deep are measured (:func:`may_nest_too_deep`), and only
then is the text parsed again as lark's tree, which :func:`nesting_error` measures as lark
built it.

    >>> from contractlang import parse
    >>> parse('budget "b" { require p95(time_to_accept) <= 72 hours }').file.items[0].requires[0]
    Require(expr=Compare(op='<=', left=Call(func='p95', ...), right=Quantity(...)))
"""

from __future__ import annotations

import contextvars
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, fields
from decimal import Decimal
from typing import Any

from lark import Token, Tree

from contractlang.diagnostics import NO_SPAN, Diagnostic, Span, error
from contractlang.lang import ast
from contractlang.lang.vocabulary import CompareOp

__all__ = [
    "MAX_NESTING",
    "Builder",
    "collecting_problems",
    "end_pos",
    "first_problem",
    "may_nest_too_deep",
    "nesting_error",
]

#: How deeply expressions may nest (each operator, call, list and percentage is a level of
#: lark's tree; parentheses are not). Deeper input is an ``E009`` diagnostic. Recursive passes
#: over the AST stay well inside Python's default recursion limit of 1000 frames at this depth.
MAX_NESTING = 100


# --------------------------------------------------------------------------- spans


# lark types a token's positions as optional; its lexer sets every one, so tokens are `Any` here


def _token_span(tok: Any) -> Span:
    """A lexer token's span (every one has its positions; ``describe.token_span`` also covers
    tokens without them, and is slower, for every token of a parse)."""
    return Span(tok.line, tok.column, tok.end_line, tok.end_column, tok.start_pos, tok.end_pos)


def _cover(first: Any, last: Any) -> Span:
    """From the start of ``first`` to the end of ``last``: each a token, a node or a
    :class:`_Paren` (which spans its parentheses)."""
    if isinstance(first, Token):
        t: Any = first
        line, col, pos = t.line, t.column, t.start_pos
    else:
        s = first.span
        line, col, pos = s.line, s.col, s.start_pos
    if isinstance(last, Token):
        u: Any = last
        return Span(line, col, u.end_line, u.end_column, pos, u.end_pos)
    e = last.span
    return Span(line, col, e.end_line, e.end_col, pos, e.end_pos)


class _Paren:
    """``( expr )``: the expression, and the span of the parentheses around it."""

    __slots__ = ("inner", "span")

    def __init__(self, inner: ast.Expr, span: Span) -> None:
        self.inner = inner
        self.span = span


@dataclass(frozen=True, slots=True)
class _Options:
    """The list after ``in``: its expressions and the span of its brackets."""

    exprs: tuple[ast.Expr, ...]
    span: Span


def _expr(value: Any) -> ast.Expr:
    """An expression part: a node, or a parenthesised one."""
    return value.inner if isinstance(value, _Paren) else value


def _opt(value: Any) -> ast.Expr | None:
    return None if value is None else _expr(value)


def end_pos(value: Any) -> int | None:
    """Where a value on lark's parser stack ends in the text, as the tree lark built had it:
    a token's end; a node's (a parenthesised expression's own, before the parenthesis);
    a helper tree's (``_clause``, a repetition) last part's."""
    if isinstance(value, Token):
        return value.end_pos
    if isinstance(value, _Paren):
        return value.inner.span.end_pos
    if isinstance(value, Tree):
        return next((p for c in reversed(value.children) if (p := end_pos(c)) is not None), None)
    span = getattr(value, "span", None)
    return span.end_pos if isinstance(span, Span) and span != NO_SPAN else None


# --------------------------------------------------------------------------- problems

_Problem = tuple[Span, str, str, str | None]  # span, code, message, help

_problems: contextvars.ContextVar[list[_Problem] | None] = contextvars.ContextVar(
    "contractlang_problems", default=None
)


@contextmanager
def collecting_problems() -> Iterator[list[_Problem]]:
    """The lexical problems the builder meets while the ``with`` block parses."""
    found: list[_Problem] = []
    reset = _problems.set(found)
    try:
        yield found
    finally:
        _problems.reset(reset)


def _problem(span: Span, code: str, message: str, help: str | None = None) -> None:
    sink = _problems.get()
    if sink is not None:
        sink.append((span, code, message, help))


def first_problem(problems: Sequence[_Problem], filename: str) -> Diagnostic | None:
    """The diagnostic of the problem first in the text, if any."""
    if not problems:
        return None
    span, code, message, help_ = min(problems, key=lambda p: p[0].start_pos)
    return error(code, message, span, file=filename, help=help_)


_ESCAPE = re.compile(r"\\(.)")


def _string(tok: Any) -> str:
    """The value of a STRING token: quotes removed, ``\\"`` and ``\\\\`` unescaped."""
    body = str(tok)[1:-1]
    if "\\" not in body:
        return body

    def unescape(m: re.Match[str]) -> str:
        char = m.group(1)
        if char not in ('"', "\\"):
            start = tok.start_pos + 1 + m.start()
            col = tok.column + 1 + m.start()
            _problem(
                Span(tok.line, col, tok.line, col + 2, start, start + 2),
                "E007",
                f"unknown escape `\\{char}` in a string",
                help='only `\\"` and `\\\\` are escapes; write `\\\\` for a backslash',
            )
        return char

    return _ESCAPE.sub(unescape, body)


# --------------------------------------------------------------------------- the builder

_Build = Callable[["Builder", list[Any]], Any]


def _logic(op: ast.LogicOp) -> _Build:
    def build(self: Builder, c: list[Any]) -> ast.Expr:
        return ast.Logic(op, _expr(c[0]), _expr(c[2]), _cover(c[0], c[2]))

    return build


def _compare(op: CompareOp) -> _Build:
    def build(self: Builder, c: list[Any]) -> ast.Expr:
        return ast.Compare(op, _expr(c[0]), _expr(c[2]), _cover(c[0], c[2]))

    return build


def _binary(op: ast.ArithOp) -> _Build:
    def build(self: Builder, c: list[Any]) -> ast.Expr:
        return ast.Binary(op, _expr(c[0]), _expr(c[2]), _cover(c[0], c[2]))

    return build


def _unary(op: ast.UnaryOp) -> _Build:
    def build(self: Builder, c: list[Any]) -> ast.Expr:
        return ast.Unary(op, _expr(c[1]), _cover(c[0], c[1]))

    return build


def _paren(self: Builder, c: list[Any]) -> _Paren:
    return _Paren(_expr(c[1]), _cover(c[0], c[2]))


def _options(self: Builder, c: list[Any]) -> _Options:
    """``[a, b]``: every other part is an expression."""
    return _Options(tuple(_expr(v) for v in c[1:-1:2]), _cover(c[0], c[-1]))


def _last(c: list[Any]) -> Any:
    """The last part given (an optional ``when`` left out is ``None``)."""
    return next(v for v in reversed(c) if v is not None)


class Builder:
    """The AST of each rule of ``spot.lark`` from its parts (see the module's docstring)."""

    # ---- the file and its blocks

    def start(self, c: list[Any]) -> tuple[ast.Item, ...]:
        return tuple(c)

    def contract(self, c: list[Any]) -> ast.Contract:
        return ast.Contract(_string(c[1]), tuple(c[3:-1]), _cover(c[0], c[-1]), _token_span(c[1]))

    def budget(self, c: list[Any]) -> ast.Budget:
        return ast.Budget(_string(c[1]), tuple(c[3:-1]), _cover(c[0], c[-1]), _token_span(c[1]))

    def require(self, c: list[Any]) -> ast.Require:
        return ast.Require(_expr(c[1]), _cover(c[0], c[1]))

    # ---- clauses

    def currency(self, c: list[Any]) -> ast.Currency:
        return ast.Currency(str(c[1]), _cover(c[0], c[1]))

    def rounding(self, c: list[Any]) -> ast.Rounding:
        return ast.Rounding(str(c[1]), _cover(c[0], c[1]))

    def precision(self, c: list[Any]) -> ast.Precision:
        tok = c[1]
        if not tok.isdigit():
            _problem(
                _token_span(tok),
                "E004",
                f"`precision` takes a whole number of decimal places, found `{tok}`",
                help="write it as in `precision 2`",
            )
            return ast.Precision(0, _cover(c[0], tok))
        return ast.Precision(int(tok), _cover(c[0], tok))

    def rate(self, c: list[Any]) -> ast.Rate:
        return ast.Rate(_expr(c[1]), _opt(c[3]), _cover(c[0], _last(c)))

    def billing_increment(self, c: list[Any]) -> ast.BillingIncrement:
        return ast.BillingIncrement(_expr(c[2]), _cover(c[0], c[2]))

    def billing_minimum(self, c: list[Any]) -> ast.BillingMinimum:
        return ast.BillingMinimum(_expr(c[2]), _cover(c[0], c[2]))

    def billing_period(self, c: list[Any]) -> ast.BillingPeriod:
        return ast.BillingPeriod(str(c[3]), _string(c[4]), _cover(c[0], c[4]))

    def promise_notice(self, c: list[Any]) -> ast.Promise:
        return ast.Promise("notice", _expr(c[3]), _cover(c[0], c[3]))

    def promise_restart(self, c: list[Any]) -> ast.Promise:
        return ast.Promise("restart", _expr(c[3]), _cover(c[0], c[3]))

    def exclude_allocation(self, c: list[Any]) -> ast.ExcludeAllocation:
        return ast.ExcludeAllocation(_string(c[1]), _opt(c[4]), _cover(c[0], _last(c)))

    def exclude_duration(self, c: list[Any]) -> ast.ExcludeDuration:
        name = _string(c[1])
        return ast.ExcludeDuration(name, _expr(c[2]), _opt(c[4]), _cover(c[0], _last(c)))

    def credit(self, c: list[Any]) -> ast.Credit:
        name = _string(c[1])
        return ast.Credit(name, _expr(c[2]), _opt(c[4]), _cover(c[0], _last(c)))

    def cap(self, c: list[Any]) -> ast.Cap:
        return ast.Cap(_expr(c[3]), str(c[5]), _cover(c[0], c[5]))

    # ---- expressions

    or_ = _logic("or")
    and_ = _logic("and")
    not_ = _unary("not")
    neg = _unary("-")
    eq = _compare("==")
    ne = _compare("!=")
    lt = _compare("<")
    le = _compare("<=")
    gt = _compare(">")
    ge = _compare(">=")
    add = _binary("+")
    sub = _binary("-")
    mul = _binary("*")
    div = _binary("/")
    # `( expr )` where an atom, a duration or a cap's limit stands
    atom = _paren
    duration = _paren
    cap_limit = _paren

    def in_(self, c: list[Any]) -> ast.In:
        return ast.In(_expr(c[0]), c[2].exprs, False, _cover(c[0], c[2]))

    def not_in(self, c: list[Any]) -> ast.In:
        return ast.In(_expr(c[0]), c[3].exprs, True, _cover(c[0], c[3]))

    def percent_of(self, c: list[Any]) -> ast.PercentOf:
        return ast.PercentOf(c[0], _expr(c[2]), _cover(c[0], c[2]))

    def per(self, c: list[Any]) -> ast.Per:
        return ast.Per(_expr(c[0]), str(c[2]), _cover(c[0], c[2]))

    def number(self, c: list[Any]) -> ast.Number:
        tok = c[0]
        return ast.Number(Decimal(tok), str(tok), _token_span(tok))

    def quantity(self, c: list[Any]) -> ast.Quantity:
        tok = c[0]
        return ast.Quantity(Decimal(tok), str(c[1]), str(tok), _cover(tok, c[1]))

    def percent(self, c: list[Any]) -> ast.Percent:
        tok = c[0]
        return ast.Percent(Decimal(tok), str(tok), _cover(tok, c[1]))

    def string(self, c: list[Any]) -> ast.String:
        return ast.String(_string(c[0]), _token_span(c[0]))

    def true(self, c: list[Any]) -> ast.Bool:
        return ast.Bool(True, _token_span(c[0]))

    def false(self, c: list[Any]) -> ast.Bool:
        return ast.Bool(False, _token_span(c[0]))

    def none(self, c: list[Any]) -> ast.NoneLit:
        return ast.NoneLit(_token_span(c[0]))

    def name(self, c: list[Any]) -> ast.Name:
        return ast.Name(str(c[0]), _token_span(c[0]))

    def trace_column(self, c: list[Any]) -> ast.TraceColumn:
        return ast.TraceColumn(str(c[2]), _cover(c[0], c[2]))

    def call(self, c: list[Any]) -> ast.Call:
        args = tuple(_expr(v) for v in c[2:-1:2])
        return ast.Call(str(c[0]), args, _cover(c[0], c[-1]), _token_span(c[0]))

    list = _options  # last: in the class's body, `list` is this rule from here on


# --------------------------------------------------------------------------- nesting (E009)


def may_nest_too_deep(items: Iterable[ast.Item]) -> bool:
    """Whether an expression of ``items`` may nest more than :data:`MAX_NESTING` levels of
    lark's tree. Each level holds a token of its own, so only a clause longer than that many
    characters can; those are measured (with a margin: :func:`nesting_error` decides)."""
    for item in items:
        parts: Sequence[ast.Clause | ast.Require] = (
            item.clauses if isinstance(item, ast.Contract) else item.requires
        )
        for part in parts:
            if (
                part.span.end_pos - part.span.start_pos > MAX_NESTING
                and _levels(part) >= MAX_NESTING
            ):
                return True
    return False


def _below(node: object) -> Sequence[object]:
    """The nodes one level of lark's tree below ``node`` (an `in`'s list is a level)."""
    if isinstance(node, tuple):  # the options of an `in`
        return node
    if isinstance(node, ast.In):
        return (node.value, node.options)
    if isinstance(node, ast.Call):
        return node.args
    names = _OPERANDS.get(type(node))
    if names is None:
        names = _OPERANDS[type(node)] = tuple(f.name for f in fields(node) if f.compare)  # type: ignore[arg-type]
    return [v for name in names if isinstance(v := getattr(node, name), ast.Node)]


#: Each node class's fields that compare: its operands, and words and numbers (not nodes).
_OPERANDS: dict[type, tuple[str, ...]] = {}


def _levels(node: object) -> int:
    """How many levels of lark's tree ``node`` spans, measured without recursion."""
    best = 0
    stack: list[tuple[object, int]] = [(node, 1)]
    while stack:
        n, depth = stack.pop()
        best = max(best, depth)
        stack.extend((c, depth + 1) for c in _below(n))
    return best


LarkTree = Tree[Token]


def nesting_error(tree: LarkTree, filename: str) -> Diagnostic | None:
    """``E009`` if lark's tree of the file nests deeper than :data:`MAX_NESTING` expression
    levels, at the first node found below them."""
    found = _too_deep(tree)
    if found is None:
        return None
    node, chain = found
    if chain is None:
        message = f"expression nested more than {MAX_NESTING} levels deep"
        help_ = "split the expression into simpler terms"
    else:
        message = f"a chain of more than {MAX_NESTING} `{chain}` is too long for one expression"
        help_ = "split it into several terms (several credits, say), each a shorter chain"
    return error("E009", message, _tree_span(node), file=filename, help=help_)


#: Operators that chain (``a + b + c`` nests as ``(a + b) + c``), by their rule name.
_CHAINS = {"add": "+", "sub": "-", "mul": "*", "div": "/", "and_": "and", "or_": "or"}


def _too_deep(tree: LarkTree) -> tuple[LarkTree, str | None] | None:
    """The first node found below :data:`MAX_NESTING` expression levels, if any, and the
    operator when the levels above it are mostly one long chain of it (a flat ``a + b + …``,
    not a nesting anyone wrote).

    ``start`` → block → clause → expression: the first three levels are not expression
    nesting, so they are not counted.
    """
    limit = MAX_NESTING + 3
    # (node, depth, the chain operator of its parent, how long that chain is): `a + b + c` is
    # `(a + b) + c`, so a chain continues only down the left operands
    stack: list[tuple[LarkTree, int, str | None, int, bool]] = [(tree, 1, None, 0, False)]
    while stack:
        node, depth, op, run, left = stack.pop()
        if depth > limit:
            return node, (op if run > MAX_NESTING // 2 else None)
        here = _CHAINS.get(str(node.data))
        continues = here is not None and here == op and left
        length = 0 if here is None else (run + 1 if continues else 1)
        for k, child in enumerate(node.children):
            if isinstance(child, Tree):
                stack.append((child, depth + 1, here, length, k == 0))
    return None


def _tree_span(node: LarkTree) -> Span:
    meta = node.meta
    if getattr(meta, "empty", True):
        return NO_SPAN
    return Span(meta.line, meta.column, meta.end_line, meta.end_column, meta.start_pos,
                meta.end_pos)  # fmt: skip
