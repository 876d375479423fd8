"""Properties (hypothesis): formatting generated ASTs reads back as the same AST and is
idempotent; comments survive formatting; the parser returns diagnostics, never exceptions,
for random text, random bytes and mutated rulesets."""

from __future__ import annotations

import re
from decimal import Decimal
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contractlang.codes import CODES
from contractlang.fmt import format_file
from contractlang.lang import ast
from contractlang.pipeline.language import format_source, parse

ROOT = Path(__file__).resolve().parents[1]
RULESETS = sorted((ROOT / "rulesets").glob("*.spot"))

SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# --------------------------------------------------------------------------- AST strategies

# Words that are keywords where an expression starts cannot be names; every other word can,
# including words that are keywords elsewhere (`credits`, `allocation`, `per`, `when`, …).
EXPRESSION_KEYWORDS = {"true", "false", "none", "not", "trace"}
names = st.one_of(
    st.sampled_from(
        [
            "runtime",
            "gpus",
            "charge",
            "replayed_time",
            "capacity",
            "spot",
            "credits",
            "allocation",
            "period",
            "per",
            "when",
            "in",
            "notice_lead",
            "p95",
        ]
    ),
    st.from_regex(r"[a-z_][a-z0-9_]{0,8}", fullmatch=True).filter(
        lambda w: w not in EXPRESSION_KEYWORDS
    ),
)
# units follow a number, where keywords such as `when` or `per` are expected: real unit words
units = st.sampled_from(
    ["seconds", "minute", "hours", "day", "gpus", "gpu_hour", "gpu_seconds", "USD", "EUR"]
)
any_word = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True)
number_texts = st.from_regex(r"[0-9]{1,4}(\.[0-9]{1,3})?", fullmatch=True)
strings = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00\r\n"),
    max_size=12,
)


def _number(text: str) -> ast.Number:
    return ast.Number(Decimal(text), text)


def _percent(text: str) -> ast.Percent:
    return ast.Percent(Decimal(text), text)


leaves: st.SearchStrategy[ast.Expr] = st.one_of(
    number_texts.map(_number),
    number_texts.map(_percent),
    st.builds(lambda t, u: ast.Quantity(Decimal(t), u, t), number_texts, units),
    names.map(ast.Name),
    any_word.map(ast.TraceColumn),
    strings.map(ast.String),
    st.booleans().map(ast.Bool),
    st.just(ast.NoneLit()),
)


def _extend(inner: st.SearchStrategy[ast.Expr]) -> st.SearchStrategy[ast.Expr]:
    return st.one_of(
        st.builds(ast.Unary, st.sampled_from(["-", "not"]), inner),
        st.builds(ast.Binary, st.sampled_from(["+", "-", "*", "/"]), inner, inner),
        st.builds(ast.Compare, st.sampled_from(["==", "!=", "<", "<=", ">", ">="]), inner, inner),
        st.builds(ast.Logic, st.sampled_from(["and", "or"]), inner, inner),
        st.builds(ast.In, inner, st.lists(inner, max_size=3).map(tuple), negated=st.booleans()),
        st.builds(ast.Call, names, st.lists(inner, max_size=3).map(tuple)),
        st.builds(ast.PercentOf, number_texts.map(_percent), inner),
        st.builds(ast.Per, inner, any_word),
    )


exprs = st.recursive(leaves, _extend, max_leaves=12)
maybe = st.none() | exprs

clauses: st.SearchStrategy[ast.Clause] = st.one_of(
    st.builds(ast.Currency, any_word),
    st.builds(ast.Rounding, any_word),
    st.builds(ast.Precision, st.integers(0, 99)),
    st.builds(ast.Rate, exprs, maybe),
    st.builds(ast.BillingIncrement, exprs),
    st.builds(ast.BillingMinimum, exprs),
    st.builds(ast.BillingPeriod, st.from_regex(r"[0-9]{1,2}:[0-9]{2}", fullmatch=True), strings),
    st.builds(ast.Promise, st.sampled_from(["notice", "restart"]), exprs),
    st.builds(ast.ExcludeAllocation, strings, maybe),
    st.builds(ast.ExcludeDuration, strings, exprs, maybe),
    st.builds(ast.Credit, strings, exprs, maybe),
    st.builds(ast.Cap, exprs, any_word),
)
items: st.SearchStrategy[ast.Item] = st.one_of(
    st.builds(ast.Contract, strings, st.lists(clauses, max_size=5).map(tuple)),
    st.builds(ast.Budget, strings, st.lists(exprs.map(ast.Require), max_size=4).map(tuple)),
)
files = st.lists(items, max_size=3).map(lambda xs: ast.SpotFile(tuple(xs)))


@SETTINGS
@given(files)
def test_format_then_parse_gives_the_same_ast(file: ast.SpotFile) -> None:
    text = format_file(file)
    result = parse(text)
    assert result.ok, (text, [d.message for d in result.diagnostics])
    assert result.file == file, text


@SETTINGS
@given(files)
def test_formatting_is_idempotent(file: ast.SpotFile) -> None:
    once = format_source(format_file(file))
    assert once.text is not None, [d.message for d in once.diagnostics]
    twice = format_source(once.text)
    assert twice.text == once.text
    assert twice.changed is False


# --------------------------------------------------------------------------- comments


comment_words = st.from_regex(r"[ a-z!#]{0,10}", fullmatch=True)


@SETTINGS
@given(
    st.sampled_from(RULESETS),
    st.lists(
        st.tuples(st.integers(0, 10_000), st.booleans(), comment_words),
        max_size=6,
    ),
)
def test_comments_survive_anywhere(path: Path, inserts: list[tuple[int, bool, str]]) -> None:
    """Put comments on their own lines or after code, at random lines of a ruleset."""
    lines = path.read_text(encoding="utf-8").splitlines()
    for where, own_line, words in inserts:
        i = where % (len(lines) + 1)
        comment = f"# {words.strip()}"
        if own_line or i == len(lines) or not lines[i].strip():
            lines.insert(i, comment)
        else:
            lines[i] += "  " + comment
    text = "\n".join(lines) + "\n"
    before = parse(text)
    assert before.file is not None
    out = format_source(text)
    assert out.text is not None, [d.message for d in out.diagnostics]
    after = parse(out.text)
    assert after.file == before.file
    assert after.file is not None
    assert [c.text.rstrip() for c in after.file.comments] == [
        c.text.rstrip() for c in before.file.comments
    ]
    assert format_source(out.text).text == out.text


# --------------------------------------------------------------------------- robustness


def _assert_only_diagnostics(text: str | bytes) -> None:
    result = parse(text)  # must not raise
    assert all(d.code in CODES for d in result.diagnostics)
    assert (result.file is None) == any(d.is_error for d in result.diagnostics)
    for d in result.diagnostics:
        assert not re.search(r"__ANON|\$END|Token\(|Traceback", d.message), d.message
        d.render(result.source)  # renders without raising


TOKEN = re.compile(r'"(?:[^"\\\n]|\\.)*"|#[^\n]*|[A-Za-z_][A-Za-z0-9_]*|[0-9.:]+|\S')
RULESET_TOKENS = [TOKEN.findall(p.read_text(encoding="utf-8")) for p in RULESETS]


@SETTINGS
@given(st.text(max_size=200))
def test_random_text_gives_diagnostics_not_exceptions(text: str) -> None:
    _assert_only_diagnostics(text)


@SETTINGS
@given(st.binary(max_size=200))
def test_random_bytes_give_diagnostics_not_exceptions(data: bytes) -> None:
    _assert_only_diagnostics(data)


@SETTINGS
@given(
    st.sampled_from(range(len(RULESETS))),
    st.lists(
        st.tuples(
            st.sampled_from(["delete", "duplicate", "swap", "replace"]),
            st.integers(0, 10_000),
            st.integers(0, 10_000),
            st.sampled_from(["(", ")", "[", "]", "{", "}", '"', "when", "per", "%", "-", "#"]),
        ),
        min_size=1,
        max_size=4,
    ),
    st.sampled_from([" ", "\n"]),
)
def test_mutated_rulesets_give_diagnostics_not_exceptions(
    which: int, edits: list[tuple[str, int, int, str]], sep: str
) -> None:
    tokens = list(RULESET_TOKENS[which])
    for op, i, j, new in edits:
        if not tokens:
            break
        i %= len(tokens)
        j %= len(tokens)
        if op == "delete":
            del tokens[i]
        elif op == "duplicate":
            tokens.insert(i, tokens[j])
        elif op == "swap":
            tokens[i], tokens[j] = tokens[j], tokens[i]
        else:
            tokens[i] = new
    # a comment token runs to the end of its line: keep it from swallowing the rest
    text = "".join(t + ("\n" if t.startswith("#") else sep) for t in tokens)
    _assert_only_diagnostics(text)
