"""Lark's parse tree → the typed AST of :mod:`contractlang.lang.ast`.

This is the only module that knows the shape of lark's tree (the rule names and aliases of
``spot.lark``). Every node gets the span of the text it came from.

Before anything recursive runs, :func:`nesting_depth` measures the tree iteratively; a tree
nested deeper than :data:`MAX_NESTING` levels is one ``E009`` diagnostic instead of a
``RecursionError`` here or in a later pass (checker, formatter, compiler). Lowering also
reports the few lexical mistakes the grammar lets through: an unknown escape in a string
(``E007``) and a ``precision`` that is not a whole number (``E004``).

    >>> from contractlang import parse
    >>> parse('budget "b" { require p95(time_to_accept) <= 72 hours }').file.items[0].requires[0]
    Require(expr=Compare(op='<=', left=Call(func='p95', ...), right=Quantity(...)))
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from decimal import Decimal

from lark import Token, Tree

from contractlang.diagnostics import NO_SPAN, Diagnostic, Span, error
from contractlang.lang import ast
from contractlang.lang.vocabulary import CompareOp
from contractlang.syntax.describe import token_span

__all__ = ["MAX_NESTING", "lower", "nesting_depth"]

#: How deeply expressions may nest (each operator, call, parenthesised group or list is a
#: level). Deeper input is an ``E009`` diagnostic. Recursive passes over the AST stay well
#: inside Python's default recursion limit of 1000 frames at this depth.
MAX_NESTING = 100

LarkTree = Tree[Token]


class _LowerError(Exception):
    """Stops lowering at the first diagnostic (carried in ``diag``)."""

    def __init__(self, diag: Diagnostic) -> None:
        super().__init__(diag.message)
        self.diag = diag


def lower(
    tree: LarkTree,
    comments: Sequence[ast.Comment] = (),
    filename: str = "<input>",
) -> tuple[ast.SpotFile, list[Diagnostic]]:
    """Lower a parse tree of ``spot.lark``'s ``start`` rule to a :class:`~ast.SpotFile`.

    Returns the file and diagnostics; when there are errors the file is partial (empty) and
    should not be used.
    """
    found = _too_deep(tree)
    if found is not None:
        node, chain = found
        if chain is None:
            message = f"expression nested more than {MAX_NESTING} levels deep"
            help_ = "split the expression into simpler terms"
        else:
            message = f"a chain of more than {MAX_NESTING} `{chain}` is too long for one expression"
            help_ = "split it into several terms (several credits, say), each a shorter chain"
        diag = error("E009", message, _span(node), file=filename, help=help_)
        return ast.SpotFile((), tuple(comments), filename), [diag]
    lowerer = _Lowerer(filename)
    try:
        items = tuple(lowerer.item(t) for t in _trees(tree.children))
    except _LowerError as exc:
        return ast.SpotFile((), tuple(comments), filename), [exc.diag]
    return ast.SpotFile(items, tuple(comments), filename), []


def nesting_depth(tree: LarkTree) -> int:
    """The depth of ``tree`` (a lone tree is 1), measured without recursion."""
    best = 0
    stack: list[tuple[LarkTree, int]] = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        best = max(best, depth)
        stack.extend((c, depth + 1) for c in node.children if isinstance(c, Tree))
    return best


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


# --------------------------------------------------------------------------- spans


def _span(node: LarkTree | Token) -> Span:
    if isinstance(node, Token):
        return token_span(node)
    meta = node.meta
    if getattr(meta, "empty", True):
        return NO_SPAN
    return Span(meta.line, meta.column, meta.end_line, meta.end_column, meta.start_pos,
                meta.end_pos)  # fmt: skip


def _trees(children: Sequence[object]) -> list[LarkTree]:
    return [c for c in children if isinstance(c, Tree)]


def _token(node: object) -> Token:
    assert isinstance(node, Token), node
    return node


def _tree(node: object) -> LarkTree:
    assert isinstance(node, Tree), node
    return node


# --------------------------------------------------------------------------- the lowerer

_ESCAPE = re.compile(r"\\(.)")


class _Lowerer:
    def __init__(self, filename: str) -> None:
        self.filename = filename
        self._exprs: dict[str, Callable[[LarkTree], ast.Expr]] = {
            "or_": self._logic("or"),
            "and_": self._logic("and"),
            "not_": self._unary("not"),
            "neg": self._unary("-"),
            "eq": self._compare("=="),
            "ne": self._compare("!="),
            "lt": self._compare("<"),
            "le": self._compare("<="),
            "gt": self._compare(">"),
            "ge": self._compare(">="),
            "in_": self._in(negated=False),
            "not_in": self._in(negated=True),
            "add": self._binary("+"),
            "sub": self._binary("-"),
            "mul": self._binary("*"),
            "div": self._binary("/"),
            "percent_of": self._percent_of,
            "per": self._per,
            "number": self._number,
            "quantity": self._quantity,
            "percent": self._percent,
            "string": lambda t: ast.String(self.string(_token(t.children[0])), _span(t)),
            "true": lambda t: ast.Bool(True, _span(t)),
            "false": lambda t: ast.Bool(False, _span(t)),
            "none": lambda t: ast.NoneLit(_span(t)),
            "name": lambda t: ast.Name(str(t.children[0]), _span(t)),
            "trace_column": lambda t: ast.TraceColumn(str(t.children[0]), _span(t)),
            "call": self._call,
        }

    # ---- blocks

    def item(self, t: LarkTree) -> ast.Item:
        name_tok = _token(t.children[0])
        name = self.string(name_tok)
        if t.data == "contract":
            clauses = tuple(self.clause(c) for c in _trees(t.children[1:]))
            return ast.Contract(name, clauses, _span(t), _span(name_tok))
        if t.data == "budget":
            reqs = tuple(
                ast.Require(self.expr(_tree(r.children[0])), _span(r))
                for r in _trees(t.children[1:])
            )
            return ast.Budget(name, reqs, _span(t), _span(name_tok))
        raise AssertionError(f"unknown block {t.data}")  # pragma: no cover

    def clause(self, t: LarkTree) -> ast.Clause:
        c = t.children
        span = _span(t)
        match t.data:
            case "currency":
                return ast.Currency(str(c[0]), span)
            case "rounding":
                return ast.Rounding(str(c[0]), span)
            case "precision":
                tok = _token(c[0])
                if not tok.isdigit():
                    self.fail(
                        "E004",
                        f"`precision` takes a whole number of decimal places, found `{tok}`",
                        _span(tok),
                        help="write it as in `precision 2`",
                    )
                return ast.Precision(int(tok), span)
            case "rate":
                return ast.Rate(self.expr(c[0]), self.opt(c[1]), span)
            case "billing_increment":
                return ast.BillingIncrement(self.expr(c[0]), span)
            case "billing_minimum":
                return ast.BillingMinimum(self.expr(c[0]), span)
            case "billing_period":
                return ast.BillingPeriod(str(c[0]), self.string(_token(c[1])), span)
            case "promise_notice":
                return ast.Promise("notice", self.expr(c[0]), span)
            case "promise_restart":
                return ast.Promise("restart", self.expr(c[0]), span)
            case "exclude_allocation":
                return ast.ExcludeAllocation(self.string(_token(c[0])), self.opt(c[1]), span)
            case "exclude_duration":
                name = self.string(_token(c[0]))
                return ast.ExcludeDuration(name, self.expr(c[1]), self.opt(c[2]), span)
            case "credit":
                name = self.string(_token(c[0]))
                return ast.Credit(name, self.expr(c[1]), self.opt(c[2]), span)
            case "cap":
                return ast.Cap(self.expr(c[0]), str(c[1]), span)
        raise AssertionError(f"unknown clause {t.data}")  # pragma: no cover

    # ---- expressions

    def opt(self, node: object) -> ast.Expr | None:
        return None if node is None else self.expr(node)

    def expr(self, node: object) -> ast.Expr:
        t = _tree(node)
        build = self._exprs.get(str(t.data))
        if build is None:  # pragma: no cover - every rule of spot.lark is in the table
            raise AssertionError(f"unknown expression {t.data}")
        return build(t)

    def _logic(self, op: ast.LogicOp) -> Callable[[LarkTree], ast.Expr]:
        def build(t: LarkTree) -> ast.Expr:
            return ast.Logic(op, self.expr(t.children[0]), self.expr(t.children[1]), _span(t))

        return build

    def _compare(self, op: CompareOp) -> Callable[[LarkTree], ast.Expr]:
        def build(t: LarkTree) -> ast.Expr:
            return ast.Compare(op, self.expr(t.children[0]), self.expr(t.children[1]), _span(t))

        return build

    def _binary(self, op: ast.ArithOp) -> Callable[[LarkTree], ast.Expr]:
        def build(t: LarkTree) -> ast.Expr:
            return ast.Binary(op, self.expr(t.children[0]), self.expr(t.children[1]), _span(t))

        return build

    def _unary(self, op: ast.UnaryOp) -> Callable[[LarkTree], ast.Expr]:
        def build(t: LarkTree) -> ast.Expr:
            return ast.Unary(op, self.expr(t.children[0]), _span(t))

        return build

    def _in(self, *, negated: bool) -> Callable[[LarkTree], ast.Expr]:
        def build(t: LarkTree) -> ast.Expr:
            options = tuple(self.expr(o) for o in _tree(t.children[1]).children)
            return ast.In(self.expr(t.children[0]), options, negated, _span(t))

        return build

    def _percent_of(self, t: LarkTree) -> ast.Expr:
        percent = self._percent(_tree(t.children[0]))
        return ast.PercentOf(percent, self.expr(t.children[1]), _span(t))

    def _per(self, t: LarkTree) -> ast.Expr:
        return ast.Per(self.expr(t.children[0]), str(t.children[1]), _span(t))

    def _number(self, t: LarkTree) -> ast.Expr:
        tok = _token(t.children[0])
        return ast.Number(Decimal(str(tok)), str(tok), _span(t))

    def _quantity(self, t: LarkTree) -> ast.Expr:
        tok = _token(t.children[0])
        return ast.Quantity(Decimal(str(tok)), str(t.children[1]), str(tok), _span(t))

    def _percent(self, t: LarkTree) -> ast.Percent:
        tok = _token(t.children[0])
        return ast.Percent(Decimal(str(tok)), str(tok), _span(t))

    def _call(self, t: LarkTree) -> ast.Expr:
        func = _token(t.children[0])
        args = tuple(self.expr(a) for a in t.children[1:])
        return ast.Call(str(func), args, _span(t), _span(func))

    # ---- helpers

    def string(self, tok: Token) -> str:
        """The value of a STRING token: quotes removed, ``\\"`` and ``\\\\`` unescaped."""
        body = str(tok)[1:-1]

        def unescape(m: re.Match[str]) -> str:
            char = m.group(1)
            if char not in ('"', "\\"):
                start = (tok.start_pos or 0) + 1 + m.start()
                col = (tok.column or 1) + 1 + m.start()
                line = tok.line or 1
                self.fail(
                    "E007",
                    f"unknown escape `\\{char}` in a string",
                    Span(line, col, line, col + 2, start, start + 2),
                    help='only `\\"` and `\\\\` are escapes; write `\\\\` for a backslash',
                )
            return char

        return _ESCAPE.sub(unescape, body)

    def fail(self, code: str, message: str, span: Span, help: str | None = None) -> None:
        raise _LowerError(error(code, message, span, file=self.filename, help=help))
