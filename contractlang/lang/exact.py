"""Exact arithmetic over the AST, in ``Fraction``s and base units (second, GPU, one unit of
currency): the one place that says what `+ - * /`, unary minus, `X% of E`, `A per U`,
`min`, `max` and `coalesce` mean on exact values. The checker uses it for constants
(:func:`constant_value`), budgets for their measures and per-run values; the polars compiler
implements the same semantics on columns (``tests/test_semantics_agree.py`` checks the two
agree).

None propagates through arithmetic and scalar `min`/`max`; ``x / 0`` is none; `coalesce`
picks the first value that is not none::

    >>> from decimal import Decimal as D
    >>> from contractlang.lang import ast
    >>> evaluate(ast.Binary("+", ast.Quantity(D(1), "hour"), ast.Quantity(D(30), "minutes")))
    Fraction(5400, 1)
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction

from contractlang.lang import ast
from contractlang.lang.types import UNITS, is_currency_code
from contractlang.lang.vocabulary import SCALAR_FUNCTIONS

Value = Fraction | bool | str | None


def unit_factor(unit: str) -> Fraction | None:
    """Base units in one ``unit`` (3600 for `hour`, 1 for a currency code), None if unknown."""
    if unit in UNITS:
        return UNITS[unit].factor
    if is_currency_code(unit):
        return Fraction(1)
    return None


def _no_leaf(_: ast.Expr) -> Value:
    return None


def evaluate(e: ast.Expr, leaf: Callable[[ast.Expr], Value] = _no_leaf) -> Value:
    """The exact value of ``e``. Nodes that are not literals or arithmetic (names, aggregates,
    comparisons, …) are asked of ``leaf``; by default they are none, so a non-constant
    expression evaluates to none."""
    match e:
        case ast.Number(value=v):
            return Fraction(v)
        case ast.Percent(value=v):
            return Fraction(v) / 100
        case ast.Quantity(value=v, unit=u):
            factor = unit_factor(u)
            return None if factor is None else Fraction(v) * factor
        case ast.Bool(value=b):
            return b
        case ast.NoneLit():
            return None
        case ast.Call(func="coalesce", args=args):
            for arg in args:
                got = evaluate(arg, leaf)
                if got is not None:
                    return got
            return None
        case ast.Per() | ast.PercentOf() | ast.Unary(op="-") | ast.Binary():
            pass
        case ast.Call(func="min" | "max", args=args) if len(args) >= 2:
            pass
        case _:
            return leaf(e)
    xs = [evaluate(c, leaf) for c in _operands(e)]
    nums = [x for x in xs if isinstance(x, Fraction)]
    return None if len(nums) != len(xs) else _apply(e, nums)


def is_constant(expr: ast.Expr) -> bool:
    """True when ``expr`` has no names, no ``trace.<column>`` and no aggregate or unknown
    call: its value is known before any trace is read.

    >>> from decimal import Decimal as D
    >>> is_constant(ast.Binary("+", ast.Quantity(D(1), "hour"), ast.Quantity(D(30), "minutes")))
    True
    >>> is_constant(ast.Per(ast.TraceColumn("price"), "gpu_hour"))
    False
    """
    for node in ast.walk(expr):
        if isinstance(node, (ast.Name, ast.TraceColumn)):
            return False
        if isinstance(node, ast.Call) and (
            node.func not in SCALAR_FUNCTIONS or ast.is_aggregate_call(node)
        ):
            return False
    return True


def constant_value(expr: ast.Expr) -> Fraction | None:
    """The exact value of a constant numeric expression in base units — seconds, GPUs, GPU-
    seconds, one unit of currency (``per gpu_hour`` divides by 3600) — or None when it is not
    constant, not numeric, has an unknown unit or divides by zero. Percentages are fractions.

    >>> from decimal import Decimal as D
    >>> constant_value(ast.Binary("+", ast.Quantity(D(1), "hour"), ast.Quantity(D(30), "minutes")))
    Fraction(5400, 1)
    >>> constant_value(ast.Per(ast.Quantity(D("3.6"), "USD"), "gpu_hour"))
    Fraction(1, 1000)
    """
    value = evaluate(expr)
    return value if isinstance(value, Fraction) else None


def _operands(e: ast.Expr) -> tuple[ast.Expr, ...]:
    match e:
        case ast.Per(amount=a) | ast.Unary(operand=a) | ast.PercentOf(operand=a):
            return (a,)
        case ast.Binary(left=lhs, right=rhs):
            return (lhs, rhs)
        case ast.Call(args=args):
            return args
    return ()


def _apply(e: ast.Expr, xs: list[Fraction]) -> Fraction | None:
    """One arithmetic node applied to its operands' values (none already excluded)."""
    match e:
        case ast.Per(unit=u):
            factor = unit_factor(u)
            return None if factor is None else xs[0] / factor
        case ast.PercentOf(percent=p):
            return Fraction(p.value) / 100 * xs[0]
        case ast.Unary():
            return -xs[0]
        case ast.Binary(op="+"):
            return xs[0] + xs[1]
        case ast.Binary(op="-"):
            return xs[0] - xs[1]
        case ast.Binary(op="*"):
            return xs[0] * xs[1]
        case ast.Binary():
            return None if xs[1] == 0 else xs[0] / xs[1]
        case ast.Call(func="min"):
            return min(xs)
        case _:
            return max(xs)
