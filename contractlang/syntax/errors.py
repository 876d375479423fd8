"""Syntax errors as diagnostics, classified by example.

How a syntax error becomes a message:

1. A character no terminal accepts is ``E006`` (an opening ``"`` without its closing one on the
   same line) or ``E007`` (:func:`contractlang.syntax.describe.bad_character`).
2. An unexpected token is classified by example: :data:`EXAMPLES` maps each kind of mistake to
   malformed snippets, and lark's ``UnexpectedInput.match_examples`` picks the example that
   failed in the same parser state. Examples only match at the same nesting depth, so each
   kind also has a rule over the parser's state (what it accepts, what the unexpected token
   is, which delimiters are open) that confirms an example's label and classifies the
   errors no example matches (:mod:`contractlang.syntax.kinds`). Anything else is ``E001``,
   which names what was found and what was expected, in words (never lark's terminal names).
"""

from __future__ import annotations

import functools

from lark import Token, Tree
from lark.exceptions import UnexpectedCharacters, UnexpectedInput, UnexpectedToken

from contractlang.diagnostics import Diagnostic, Source, Span, error
from contractlang.syntax.describe import bad_character
from contractlang.syntax.grammar import parser
from contractlang.syntax.kinds import RULES, Context, generic

__all__ = ["EXAMPLES", "syntax_error"]


#: Kinds of syntax mistake, each with malformed snippets that show it (for
#: ``UnexpectedInput.match_examples``). A kind's rule in :data:`RULES` must also hold for
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


def syntax_error(exc: UnexpectedInput, source: Source) -> Diagnostic:
    if isinstance(exc, UnexpectedCharacters):
        return bad_character(exc, source)
    if not isinstance(exc, UnexpectedToken):  # pragma: no cover - LALR raises only these two
        return error("E001", "cannot parse this file", Span(1, 1, 1, 2), file=source.name)
    state = exc.state
    stack = tuple(getattr(state, "value_stack", ()) or ())
    ctx = Context(exc.token, frozenset(exc.accepts or exc.expected), stack, source)
    label = _match_example(exc)
    if label is not None and RULES[label][0](ctx):
        return RULES[label][1](ctx)
    for applies, build in RULES.values():
        if applies(ctx):
            return build(ctx)
    return generic(ctx)


@functools.cache
def _example_errors() -> dict[str, UnexpectedInput]:
    """Each example's error, computed once (``match_examples`` re-raises these)."""
    out: dict[str, UnexpectedInput] = {}
    for snippets in EXAMPLES.values():
        for snippet in snippets:
            try:
                parser().parse(snippet)
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
