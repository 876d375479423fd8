"""The one printer of expressions, and the source text of a clause as its author wrote it.

:func:`show` writes an expression back as source with the fewest parentheses that keep its
tree (all binary operators are left-associative, so ``a - (b - c)`` keeps its parentheses and
``(a - b) - c`` loses them). Messages use it as it is; the formatter asks it to ``clarify``
two forms that read badly without parentheses: ``not (a == b)`` (not ``not a == b``, which
reads like ``(not a) == b``) and ``-(-x)`` (not ``--x``, which reads like a typo)::

    >>> from contractlang.lang import ast
    >>> a, b = ast.Name("a"), ast.Name("b")
    >>> show(ast.Unary("not", ast.Compare("==", a, b)))
    'not a == b'
    >>> show(ast.Unary("not", ast.Compare("==", a, b)), clarify=True)
    'not (a == b)'

Binding levels, loosest first (``docs/architecture.md``, "The language surface"):
``or < and < not < comparison < + - < * / < unary - < X% of E < A per UNIT < atom``.
"""

from __future__ import annotations

from contractlang.diagnostics import Span
from contractlang.lang import ast

OR, AND, NOT, CMP, SUM, PROD, NEG, PCT, PER, ATOM = range(1, 11)


def level(e: ast.Expr) -> int:
    """How tightly ``e`` binds (a larger number binds tighter)."""
    match e:
        case ast.Logic(op="or"):
            return OR
        case ast.Logic():
            return AND
        case ast.Unary(op="not"):
            return NOT
        case ast.Compare() | ast.In():
            return CMP
        case ast.Binary(op="+" | "-"):
            return SUM
        case ast.Binary():
            return PROD
        case ast.Unary():
            return NEG
        case ast.PercentOf():
            return PCT
        case ast.Per():
            return PER
        case _:
            return ATOM


def show(e: ast.Expr, *, clarify: bool = False) -> str:
    """``e`` as source text (see the module's docstring).

    >>> from decimal import Decimal
    >>> a, b, c = ast.Name("a"), ast.Name("b"), ast.Name("c")
    >>> show(ast.Binary("-", a, ast.Binary("-", b, c)))
    'a - (b - c)'
    >>> show(ast.Binary("-", ast.Name("replacement_wait"), ast.Quantity(Decimal(15), "minutes")))
    'replacement_wait - 15 minutes'
    """
    return _Printer(clarify).expr(e, OR)


def quote(e: ast.Expr, limit: int = 40) -> str | None:
    """```e``` in backticks for a message, or None when it is longer than ``limit``."""
    text = show(e)
    return f"`{text}`" if len(text) <= limit else None


def source_text(span: Span, text: str | None) -> str | None:
    """The source text under ``span``, with runs of whitespace (line breaks included) as one
    space; None when there is no text or the span is empty.

    >>> source_text(Span(1, 1, 2, 5, 0, 12), "rate  2\\n USD x")
    'rate 2 USD'
    """
    if not text or span.end_pos <= span.start_pos:
        return None
    return " ".join(text[span.start_pos : span.end_pos].split())


def string(value: str) -> str:
    """A string literal: ``"…"`` with ``\\"`` and ``\\\\`` escapes."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


class _Printer:
    def __init__(self, clarify: bool) -> None:
        self.clarify = clarify

    def expr(self, e: ast.Expr, at_least: int) -> str:
        text = self.render(e)
        return f"({text})" if level(e) < at_least else text

    def render(self, e: ast.Expr) -> str:
        match e:
            case ast.Logic(op=op, left=left, right=right):
                lvl = level(e)
                return f"{self.expr(left, lvl)} {op} {self.expr(right, lvl + 1)}"
            case ast.Unary(op="not", operand=operand):
                return f"not {self.expr(operand, CMP + 1 if self.clarify else NOT)}"
            case ast.Unary(operand=operand):
                nested = isinstance(operand, ast.Unary) and operand.op == "-"
                return f"-{self.expr(operand, NEG + 1 if self.clarify and nested else NEG)}"
            case ast.Compare(op=op, left=left, right=right):
                return f"{self.expr(left, SUM)} {op} {self.expr(right, SUM)}"
            case ast.In(value=value, options=options, negated=negated):
                word = "not in" if negated else "in"
                items = ", ".join(self.expr(o, OR) for o in options)
                return f"{self.expr(value, SUM)} {word} [{items}]"
            case ast.Binary(op=op, left=left, right=right):
                lvl = level(e)
                return f"{self.expr(left, lvl)} {op} {self.expr(right, lvl + 1)}"
            case ast.PercentOf(percent=percent, operand=operand):
                return f"{self.render(percent)} of {self.expr(operand, PCT)}"
            case ast.Per(amount=amount, unit=unit):
                return f"{self.expr(amount, ATOM)} per {unit}"
            case ast.Number(value=value, text=text):
                return text or format(value, "f")
            case ast.Percent(value=value, text=text):
                return f"{text or format(value, 'f')}%"
            case ast.Quantity(value=value, unit=unit, text=text):
                return f"{text or format(value, 'f')} {unit}"
            case ast.String(value=value):
                return string(value)
            case ast.Bool(value=value):
                return "true" if value else "false"
            case ast.NoneLit():
                return "none"
            case ast.Name(name=name):
                return name
            case ast.TraceColumn(column=column):
                return f"trace.{column}"
            case ast.Call(func=func, args=args):
                return f"{func}({', '.join(self.expr(a, OR) for a in args)})"
        raise TypeError(f"cannot print {type(e).__name__}")  # pragma: no cover
