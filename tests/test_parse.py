"""The parser and lowering: every construct to its AST, spans, keywords as names, and every
kind of syntax error with its code, position and message."""

from __future__ import annotations

import re
from decimal import Decimal
from pathlib import Path

import pytest
from lark import Lark
from lark.parsers.lalr_analysis import LALR_Analyzer

import contractlang.syntax.parser as syntax_parser
from contractlang.codes import CODES
from contractlang.lang import ast
from contractlang.lang.ast import (
    Bool,
    Budget,
    Call,
    Cap,
    Compare,
    Contract,
    Credit,
    Currency,
    ExcludeAllocation,
    ExcludeDuration,
    In,
    Logic,
    NoneLit,
    Per,
    PercentOf,
    Precision,
    Promise,
    Rate,
    Require,
    Rounding,
    String,
    TraceColumn,
    Unary,
)
from contractlang.pipeline.language import parse, parse_path
from contractlang.syntax.errors import EXAMPLES
from contractlang.syntax.grammar import KEYWORDS
from contractlang.syntax.grammar import parser as _parser
from contractlang.syntax.lower import MAX_NESTING

ROOT = Path(__file__).resolve().parents[1]
#: The example file of docs/language.md ("An example"), verbatim (tests/test_check.py checks
#: the copy against the page).
DESIGN_EXAMPLE = ROOT / "tests" / "data" / "design_example.spot"


# --------------------------------------------------------------------------- helpers


def N(text: str) -> ast.Number:
    return ast.Number(Decimal(text), text)


def Q(text: str, unit: str) -> ast.Quantity:
    return ast.Quantity(Decimal(text), unit, text)


def P(text: str) -> ast.Percent:
    return ast.Percent(Decimal(text), text)


def Nm(name: str) -> ast.Name:
    return ast.Name(name)


def B(op: ast.ArithOp, left: ast.Expr, right: ast.Expr) -> ast.Binary:
    return ast.Binary(op, left, right)


def C(op: ast.CompareOp, left: ast.Expr, right: ast.Expr) -> ast.Compare:
    return Compare(op, left, right)


def usd_per_gpu_hour(text: str) -> Per:
    return Per(Q(text, "USD"), "gpu_hour")


def contract_of(body: str) -> Contract:
    result = parse(f'contract "c" {{ {body} }}')
    assert result.ok, [d.render(result.source) for d in result.diagnostics]
    assert result.file is not None
    item = result.file.items[0]
    assert isinstance(item, Contract)
    return item


def clause(body: str) -> ast.Clause:
    (only,) = contract_of(body).clauses
    return only


def expr(text: str) -> ast.Expr:
    """The AST of an expression, read as a budget requirement."""
    result = parse(f'budget "b" {{ require {text} }}')
    assert result.ok, [d.render(result.source) for d in result.diagnostics]
    assert result.file is not None
    item = result.file.items[0]
    assert isinstance(item, Budget)
    return item.requires[0].expr


def only_error(text: str | bytes) -> tuple[str, int, int, str, str | None]:
    result = parse(text, "t.spot")
    assert result.file is None
    assert len(result.diagnostics) == 1
    d = result.diagnostics[0]
    return d.code, d.span.line, d.span.col, d.message, d.help


# --------------------------------------------------------------------------- the grammar


def test_grammar_is_conflict_free() -> None:
    # lark's strict=True needs the optional `interegular` package; the LALR part of strict
    # mode (no shift/reduce conflicts) is checked here directly
    analyzer = LALR_Analyzer(_parser().parser.parser_conf, strict=True)
    analyzer.compute_lalr()


def test_keywords_are_the_grammars_words() -> None:
    words = {
        t.pattern.value
        for t in _parser().terminals
        if t.pattern.type == "str" and re.fullmatch(r"[a-z_]+", t.pattern.value)
    }
    assert words == KEYWORDS


def test_empty_and_comment_only_files_parse() -> None:
    assert parse("").file == ast.SpotFile(())
    result = parse("# nothing here\n\n   \n")
    assert result.ok
    assert result.file is not None
    assert [c.text for c in result.file.comments] == ["# nothing here"]


# --------------------------------------------------------------------------- every clause


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("currency USD", Currency("USD")),
        ("rounding half_even", Rounding("half_even")),
        ("rounding half_upp", Rounding("half_upp")),  # a NAME: the checker says "did you mean"
        ("precision 4", Precision(4)),
        ("rate 2.10 USD per gpu_hour", Rate(usd_per_gpu_hour("2.10"))),
        (
            "rate 2 USD per gpu_hour when capacity == spot",
            Rate(usd_per_gpu_hour("2"), C("==", Nm("capacity"), Nm("spot"))),
        ),
        ("rate trace.price per gpu_hour", Rate(Per(TraceColumn("price"), "gpu_hour"))),
        ("billing increment 1 minute", ast.BillingIncrement(Q("1", "minute"))),
        ("billing minimum 60 seconds", ast.BillingMinimum(Q("60", "seconds"))),
        ("billing minimum 60", ast.BillingMinimum(N("60"))),
        (
            "billing minimum (1 minute + 30 seconds)",
            ast.BillingMinimum(B("+", Q("1", "minute"), Q("30", "seconds"))),
        ),
        (
            'billing period ends 17:00 "America/New_York"',
            ast.BillingPeriod("17:00", "America/New_York"),
        ),
        ('billing period ends 7:30 "UTC"', ast.BillingPeriod("7:30", "UTC")),
        ("promise reclaim notice 30 seconds", Promise("notice", Q("30", "seconds"))),
        ("promise restart within 15 minutes", Promise("restart", Q("15", "minutes"))),
        (
            'exclude "first hour" allocation when runtime < 1 hour',
            ExcludeAllocation("first hour", C("<", Nm("runtime"), Q("1", "hour"))),
        ),
        # `when` is optional in the grammar; the checker reports it missing (E301)
        ('exclude "all" allocation', ExcludeAllocation("all", None)),
        (
            'exclude "replay" replayed_time when end_reason == reclaimed',
            ExcludeDuration(
                "replay", Nm("replayed_time"), C("==", Nm("end_reason"), Nm("reclaimed"))
            ),
        ),
        ('exclude "x" 5 minutes', ExcludeDuration("x", Q("5", "minutes"), None)),
        (
            'exclude "x" allocation_time',  # a longer word is a name, not `allocation`
            ExcludeDuration("x", Nm("allocation_time"), None),
        ),
        (
            'credit "slow" 10% of charge when replacement_wait > promised_restart',
            Credit(
                "slow",
                PercentOf(P("10"), Nm("charge")),
                C(">", Nm("replacement_wait"), Nm("promised_restart")),
            ),
        ),
        (
            'credit "replay" 50% of replayed_cost',
            Credit("replay", PercentOf(P("50"), Nm("replayed_cost")), None),
        ),
        ("cap credits at 30% of gross per run", Cap(PercentOf(P("30"), Nm("gross")), "run")),
        ("cap credits at 50000 USD per month", Cap(Q("50000", "USD"), "month")),
        ("cap credits at 5 USD per allocation", Cap(Q("5", "USD"), "allocation")),
        ("cap credits at 25% per contract", Cap(P("25"), "contract")),
        ("cap credits at 100 per run", Cap(N("100"), "run")),
        ("cap credits at 5 USD per week", Cap(Q("5", "USD"), "week")),  # checker's to reject
        (
            "cap credits at (10 USD * 3) per run",
            Cap(B("*", Q("10", "USD"), N("3")), "run"),
        ),
    ],
)
def test_each_clause(body: str, expected: ast.Clause) -> None:
    assert clause(body) == expected


def test_contract_with_no_clauses_and_several_blocks() -> None:
    result = parse('contract "a" {}\nbudget "b" {}\ncontract "c" { currency EUR }')
    assert result.file is not None
    assert result.file.items == (
        Contract("a", ()),
        Budget("b", ()),
        Contract("c", (Currency("EUR"),)),
    )


def test_string_escapes() -> None:
    # the source text is: contract "say \"hi\" \\ bye" {}
    result = parse('contract "say \\"hi\\" \\\\ bye" {}')
    assert result.file is not None
    assert result.file.items[0].name == 'say "hi" \\ bye'


def test_the_first_lexical_mistake_in_the_text_is_reported() -> None:
    # the source text is: contract "c" { rate 1 when "a\q" in ["b\z"] precision 2.5 }
    text = 'contract "c" { rate 1 when "a\\q" in ["b\\z"] precision 2.5 }'
    code, line, col, message, _ = only_error(text)
    assert (code, line, col, message) == ("E007", 1, 30, "unknown escape `\\q` in a string")
    code, _, col, message, _ = only_error('contract "c\\z" { precision 2.5 }')
    assert (code, col) == ("E007", 12)
    code, _, col, message, _ = only_error('contract "c" { precision 2.5 credit "x\\q" 1 USD }')
    assert (code, col, message) == (
        "E004",
        26,
        "`precision` takes a whole number of decimal places, found `2.5`",
    )


def test_only_a_file_that_may_nest_too_deep_is_parsed_again_as_lark_tree(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    trees: list[str] = []
    real = syntax_parser.tree_parser

    def counted() -> Lark:
        trees.append("tree")
        return real()

    monkeypatch.setattr(syntax_parser, "tree_parser", counted)
    rulesets = Path(__file__).resolve().parents[1] / "rulesets"
    assert parse((rulesets / "northwind-negotiated.spot").read_text(encoding="utf-8")).ok
    long_flat = (
        'contract "c" { rate 1 when ' + " or ".join(f"a{i} == {i}" for i in range(40)) + " }"
    )
    assert parse(long_flat).ok
    assert trees == []
    almost = 'budget "b" { require ' + "not " * (MAX_NESTING - 1) + "a }"
    assert parse(almost).ok  # measured as lark's tree: not too deep after all
    assert trees == ["tree"]


def test_numbers_keep_their_written_text() -> None:
    rate = clause("rate 2.10 USD per gpu_hour")
    assert isinstance(rate, Rate)
    assert isinstance(rate.price, Per)
    amount = rate.price.amount
    assert isinstance(amount, ast.Quantity)
    assert (amount.value, amount.text) == (Decimal("2.10"), "2.10")
    pct = expr("5.50%")
    assert isinstance(pct, ast.Percent)
    assert (pct.value, pct.text) == (Decimal("5.50"), "5.50")


# --------------------------------------------------------------------------- expressions


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("3", N("3")),
        ("true", Bool(True)),
        ("false", Bool(False)),
        ("none", NoneLit()),
        ('"H100-80G"', String("H100-80G")),
        ("8 gpus", Q("8", "gpus")),
        ("10 gpu_hours", Q("10", "gpu_hours")),
        ("2 days", Q("2", "days")),
        ("5%", P("5")),
        ("trace.spot_price", TraceColumn("spot_price")),
        ("p95(cost_per_accepted_run)", Call("p95", (Nm("cost_per_accepted_run"),))),
        ("count(reclaims > 3)", Call("count", (C(">", Nm("reclaims"), N("3")),))),
        (
            "coalesce(queue_wait, 0 seconds)",
            Call("coalesce", (Nm("queue_wait"), Q("0", "seconds"))),
        ),
        ("f()", Call("f", ())),
        # left-associative arithmetic
        ("a - b - c", B("-", B("-", Nm("a"), Nm("b")), Nm("c"))),
        ("a - (b - c)", B("-", Nm("a"), B("-", Nm("b"), Nm("c")))),
        ("a / b * c", B("*", B("/", Nm("a"), Nm("b")), Nm("c"))),
        ("a + b * c", B("+", Nm("a"), B("*", Nm("b"), Nm("c")))),
        # `per` binds tighter than `*`
        (
            "2.10 USD per gpu_hour * gpus * (w - 15 minutes)",
            B(
                "*",
                B("*", usd_per_gpu_hour("2.10"), Nm("gpus")),
                B("-", Nm("w"), Q("15", "minutes")),
            ),
        ),
        # X% of E binds tighter than unary minus and `*`, looser than `per`
        ("-5% of x", Unary("-", PercentOf(P("5"), Nm("x")))),
        ("10% of charge * 2", B("*", PercentOf(P("10"), Nm("charge")), N("2"))),
        ("5% of 2 USD per gpu_hour", PercentOf(P("5"), usd_per_gpu_hour("2"))),
        ("5% of 10% of x", PercentOf(P("5"), PercentOf(P("10"), Nm("x")))),
        ("--x", Unary("-", Unary("-", Nm("x")))),
        # logic: or < and < not < comparison
        (
            "a or b and c",
            Logic("or", Nm("a"), Logic("and", Nm("b"), Nm("c"))),
        ),
        ("not a == b", Unary("not", C("==", Nm("a"), Nm("b")))),
        ("not not a", Unary("not", Unary("not", Nm("a")))),
        (
            "(a or b) and not c",
            Logic("and", Logic("or", Nm("a"), Nm("b")), Unary("not", Nm("c"))),
        ),
        ("x in [spot, on_demand]", In(Nm("x"), (Nm("spot"), Nm("on_demand")))),
        ('x not in ["a"]', In(Nm("x"), (String("a"),), negated=True)),
        ("x in []", In(Nm("x"), ())),
        ("a + 1 <= b", C("<=", B("+", Nm("a"), N("1")), Nm("b"))),
        ("a != b", C("!=", Nm("a"), Nm("b"))),
        ("a >= b", C(">=", Nm("a"), Nm("b"))),
    ],
)
def test_expressions(text: str, expected: ast.Expr) -> None:
    assert expr(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # words that are keywords elsewhere read as names inside expressions
        ("sum(credits) <= 0 USD", C("<=", Call("sum", (Nm("credits"),)), Q("0", "USD"))),
        ("notice_lead < promised_notice", C("<", Nm("notice_lead"), Nm("promised_notice"))),
        ("capacity == spot", C("==", Nm("capacity"), Nm("spot"))),
        ("period + notice + within", B("+", B("+", Nm("period"), Nm("notice")), Nm("within"))),
        ("rate * billing", B("*", Nm("rate"), Nm("billing"))),
        ("allocation == contract", C("==", Nm("allocation"), Nm("contract"))),
        ("trace_id == tracer", C("==", Nm("trace_id"), Nm("tracer"))),
        ("nonesuch or truest", Logic("or", Nm("nonesuch"), Nm("truest"))),
        ("capital in [at, of, per]", In(Nm("capital"), (Nm("at"), Nm("of"), Nm("per")))),
    ],
)
def test_keywords_are_names_where_no_keyword_fits(text: str, expected: ast.Expr) -> None:
    assert expr(text) == expected


def test_keyword_words_as_cap_levels_and_units() -> None:
    # after `per`, only a name fits: `contract` and `allocation` are levels there
    assert clause("cap credits at 1 USD per contract") == Cap(Q("1", "USD"), "contract")
    assert clause("cap credits at 1 USD per allocation") == Cap(Q("1", "USD"), "allocation")
    # a condition that starts with `cap…` is not the `cap` keyword
    rate = clause("rate 1 USD per gpu_hour when capacity == spot")
    assert isinstance(rate, Rate)
    assert rate.when == C("==", Nm("capacity"), Nm("spot"))


def test_design_example_parses_to_its_ast() -> None:
    text = DESIGN_EXAMPLE.read_text(encoding="utf-8")
    result = parse(text, "design.spot")
    assert result.ok, [d.render(result.source) for d in result.diagnostics]
    assert result.file is not None
    reclaimed = C("==", Nm("end_reason"), Nm("reclaimed"))
    contract = Contract(
        "northwind-spot-v3",
        (
            Currency("USD"),
            Rate(
                usd_per_gpu_hour("2.10"),
                Logic(
                    "and",
                    C("==", Nm("capacity"), Nm("spot")),
                    C("==", Nm("sku"), String("H100-80G")),
                ),
            ),
            Rate(usd_per_gpu_hour("4.25"), C("==", Nm("capacity"), Nm("on_demand"))),
            Rate(Per(TraceColumn("price"), "gpu_hour")),
            ast.BillingIncrement(Q("1", "minute")),
            ast.BillingMinimum(Q("1", "minute")),
            Promise("notice", Q("30", "seconds")),
            Promise("restart", Q("15", "minutes")),
            ExcludeAllocation(
                "reclaimed in the first hour",
                Logic("and", reclaimed, C("<", Nm("runtime"), Q("1", "hour"))),
            ),
            ExcludeDuration(
                "replay after short notice",
                Nm("replayed_time"),
                Logic("and", reclaimed, C("<", Nm("notice_lead"), Nm("promised_notice"))),
            ),
            Credit(
                "slow replacement",
                PercentOf(P("10"), Nm("charge")),
                C(">", Nm("replacement_wait"), Nm("promised_restart")),
            ),
            Credit(
                "restart delay",
                B(
                    "*",
                    B("*", usd_per_gpu_hour("2.10"), Nm("gpus")),
                    B("-", Nm("replacement_wait"), Q("15", "minutes")),
                ),
                C(">", Nm("replacement_wait"), Q("15", "minutes")),
            ),
            Cap(PercentOf(P("30"), Nm("gross")), "run"),
            Cap(Q("50000", "USD"), "month"),
        ),
    )
    budget = Budget(
        "fy27-pretraining",
        (
            Require(C("<=", Call("p95", (Nm("cost_per_accepted_run"),)), Q("12000", "USD"))),
            Require(
                C(
                    "<=",
                    Call("mean", (B("/", Nm("lost_gpu_time"), Nm("metered_gpu_time")),)),
                    P("5"),
                )
            ),
            Require(C("<=", Call("p95", (Nm("time_to_accept"),)), Q("72", "hours"))),
            Require(C(">=", Call("share", (Nm("accepted"),)), P("90"))),
        ),
    )
    assert result.file.items == (contract, budget)
    assert [c.text for c in result.file.comments] == [
        "# Northwind Cloud, spot H100, third draft.",
        "# the market price recorded on the allocation",
        "# billable time rounded up per allocation",
        "# per allocation that is charged at all",
    ]


# --------------------------------------------------------------------------- spans


def test_spans_point_at_the_source() -> None:
    text = 'contract "c" {\n  rate 2 USD per gpu_hour\n    when sku == "A"  # note\n}\n'
    result = parse(text)
    assert result.file is not None
    contract = result.file.items[0]
    assert isinstance(contract, Contract)
    # the block runs from `contract` (1:1) to `}` (4:1, so its end column is 2)
    assert (contract.span.line, contract.span.col) == (1, 1)
    assert (contract.span.end_line, contract.span.end_col) == (4, 2)
    # the name `"c"` is columns 10-12
    assert (contract.name_span.line, contract.name_span.col, contract.name_span.end_col) == (
        1,
        10,
        13,
    )
    rate = contract.clauses[0]
    assert isinstance(rate, Rate)
    # `rate` starts line 2 col 3; the clause ends after `"A"` on line 3 (col 19 + 1)
    assert (rate.span.line, rate.span.col, rate.span.end_line, rate.span.end_col) == (2, 3, 3, 20)
    assert rate.when is not None
    # `sku == "A"`: line 3, columns 10 to 19
    assert (rate.when.span.line, rate.when.span.col, rate.when.span.end_col) == (3, 10, 20)
    # the character offsets agree with the line and column
    assert text[rate.when.span.start_pos : rate.when.span.end_pos] == 'sku == "A"'
    (comment,) = result.file.comments
    assert comment.text == "# note"
    assert (comment.span.line, comment.span.col) == (3, 22)


def test_call_has_a_span_for_its_name() -> None:
    call = expr("  p95(x) <= 1")
    assert isinstance(call, Compare)
    assert isinstance(call.left, Call)
    # `budget "b" { require ` is 21 characters, then two spaces: `p95` is columns 24-26
    assert (call.left.func_span.col, call.left.func_span.end_col) == (24, 27)
    assert (call.left.span.col, call.left.span.end_col) == (24, 30)


# --------------------------------------------------------------------------- syntax errors


@pytest.mark.parametrize(
    ("text", "code", "line", "col", "message"),
    [
        # E002: a missing `when`
        (
            'contract "c" { rate 2 USD per gpu_hour capacity == spot }',
            "E002",
            1,
            40,
            "expected `when` before the condition starting at `capacity`",
        ),
        (
            'contract "c" {\n  exclude "x" allocation\n    end_reason == reclaimed\n}',
            "E002",
            3,
            5,
            "expected `when` before the condition starting at `end_reason`",
        ),
        (  # nested deeper than any example: classified by the rule, not an example
            'contract "c" { credit "x" ((1 USD)) * (2 + (3)) runtime > 1 hour }',
            "E002",
            1,
            49,
            "expected `when` before the condition starting at `runtime`",
        ),
        # E003: an unclosed block, pointing at its `{`
        (
            'contract "c" {\n  currency USD\n',
            "E003",
            1,
            14,
            'the `{` of `contract "c"` is never closed',
        ),
        (
            'budget "b" {\n  require share(accepted) >= 90%\n\ncontract "d" {}\n',
            "E003",
            1,
            12,
            'the `{` of `budget "b"` is never closed',
        ),
        # E004: a unit where a number is expected
        (
            'contract "c" { billing increment minute }',
            "E004",
            1,
            34,
            "expected a number, found `minute`",
        ),
        ('contract "c" { precision USD }', "E004", 1, 26, "expected a number, found `USD`"),
        (
            'contract "c" { precision 2.5 }',
            "E004",
            1,
            26,
            "`precision` takes a whole number of decimal places, found `2.5`",
        ),
        # E005: a misspelled keyword
        (
            'contract "c" { exlude "x" allocation when a }',
            "E005",
            1,
            16,
            "unknown keyword `exlude`",
        ),
        ('contrat "c" {}', "E005", 1, 1, "unknown keyword `contrat`"),
        (
            'contract "c" { rate 1 USD per gpu_hour whn a == b }',
            "E005",
            1,
            40,
            "unknown keyword `whn`",
        ),
        ('contract "c" { cap credit at 1 USD per run }', "E005", 1, 20, "unknown keyword `credit`"),
        # E006: an unterminated string
        (
            'contract "c" {\n  rate 1 when sku == "H100\n}',
            "E006",
            2,
            22,
            'this string is not closed: a string ends with `"` on the same line',
        ),
        # E007: an unexpected character
        ('contract "c" { rate 2 $ }', "E007", 1, 23, "unexpected character `$`"),
        ('contract "c" { rate 2 when a = b }', "E007", 1, 30, "unexpected character `=`"),
        ('contract "c" { rate "\\n" }', "E007", 1, 22, "unknown escape `\\n` in a string"),
        # E010: an unexpected end of file, just after the last code
        ('contract "c"   # trailing\n', "E010", 1, 13, "unexpected end of file; expected `{`"),
        ("budget", "E010", 1, 7, "unexpected end of file; expected a string in double quotes"),
        # E011: unbalanced parentheses and brackets, pointing at the one left open
        ('contract "c" { rate (2 USD per gpu_hour }', "E011", 1, 21, "`(` is never closed"),
        ('contract "c" { rate 1 when x in [a, b }', "E011", 1, 33, "`[` is never closed"),
        ('contract "c" { rate 1 when (a == b', "E011", 1, 28, "`(` is never closed"),
        ('contract "c" { rate 2 USD per gpu_hour) }', "E011", 1, 39, "unmatched `)`"),
        ('contract "c" {} }', "E011", 1, 17, "unmatched `}`"),
        (
            'contract "c" { rate 1 when (a\n  billing increment 1 minute }',
            "E011",
            1,
            28,
            "`(` is never closed",
        ),
        # E001: the rest, in plain words
        (
            'budget "b" { require 1 < mean(x) < 3 }',
            "E001",
            1,
            34,
            "comparisons do not chain: unexpected `<` after a comparison",
        ),
        (
            'contract "c" { credit 10% of charge when a }',
            "E001",
            1,
            23,
            "expected a name in double quotes after `credit`, found `10`",
        ),
        (
            'contract "c" { cap credits at 5 USD }',
            "E001",
            1,
            37,
            "unexpected `}`; expected `per`",
        ),
        (
            'contract "c" { rate 2 USD per gpu_hour when }',
            "E001",
            1,
            45,
            "unexpected `}`; expected an expression",
        ),
        (
            'contract "c" { rate 1 } }',
            "E011",
            1,
            25,
            "unmatched `}`",
        ),
        (
            "rate 2",
            "E001",
            1,
            1,
            "unexpected `rate`; expected `contract`, `budget` or the end of the file",
        ),
        (
            'contract "c" { billing period ends 5 "UTC" }',
            "E001",
            1,
            36,
            "unexpected `5`; expected a time of day such as `17:00`",
        ),
        (
            'contract "c" { rate 2 3 }',
            "E001",
            1,
            23,
            "unexpected `3`; expected a unit, `when`, `per`, an operator, a new clause, `%` or `}`",
        ),
    ],
)
def test_syntax_errors(text: str, code: str, line: int, col: int, message: str) -> None:
    got = only_error(text)
    assert got[:4] == (code, line, col, message)


def test_error_helps() -> None:
    assert only_error('contract "c" { exlude "x" allocation when a }')[4] == (
        "did you mean `exclude`?"
    )
    assert only_error('contract "c" { billing incremnt 1 minute }')[4] == (
        "did you mean `increment`?"
    )
    assert only_error('budget "b" { Require 1 > 0 }')[4] == "did you mean `require`?"
    assert only_error('contract "c" { billing increment minute }')[4] == (
        "write the number before the unit, as in `1 minute`"
    )
    assert only_error('contract "c" { rate 2 when a = b }')[4] == "compare with `==`"
    assert only_error('contract "c" { rate 1 USD per gpu_hour capacity == spot }')[4] == (
        "write `when capacity …`"
    )
    assert only_error('contract "c" {\n  currency USD\n')[4] == "add `}` at the end of the file"
    assert only_error('contract "c" { require 1 > 0 }')[3:] == (
        "unexpected `require`; expected a new clause or `}`",
        '`require` belongs in a `budget "name" { … }` block',
    )
    assert only_error('budget "b" { rate 1 }')[4] == (
        "`rate` is a contract clause; a budget holds only `require` lines"
    )


def test_unclosed_block_notes_where_the_next_block_starts() -> None:
    result = parse('contract "c" {\n  currency USD\n\ncontract "d" {}\n')
    (d,) = result.diagnostics
    (note,) = d.related
    assert (note.span.line, note.span.col, note.message) == (4, 1, "the next block starts here")
    assert d.help == "add `}` before `contract` on line 4"


def test_every_example_is_classified_as_its_kind() -> None:
    codes = {
        "missing_when": "E002",
        "number_expected": "E004",
        "misspelled_keyword": "E005",
        "unclosed_block": "E003",
        "unbalanced": "E011",
        "unexpected_eof": "E010",
        "chained_comparison": "E001",
        "unnamed_term": "E001",
    }
    assert set(codes) == set(EXAMPLES)
    for kind, snippets in EXAMPLES.items():
        for snippet in snippets:
            result = parse(snippet)
            assert [d.code for d in result.diagnostics] == [codes[kind]], (kind, snippet)


def test_generic_messages_never_show_lark_terminal_names() -> None:
    for text in [
        'contract "c" { rate 1 when a == }',
        'contract "c" { rate 1 when a < }',
        'contract "c" { rate 1 when a in }',
        'contract "c" { rate 1 when a == b, }',
        'budget "b" { require f(a b) }',
        'contract "c" { rate . }',
        'contract "c" { exclude "x" allocation when ( }',
    ]:
        (d,) = parse(text).diagnostics
        assert not re.search(r"__ANON|[A-Z]{3,}|\$END|Token\(", d.message), d.message


# --------------------------------------------------------------------------- input problems


def test_non_utf8_bytes() -> None:
    code, line, col, message, _ = only_error(b'contract "c" {\n  currency \xff\xfe\n}')
    assert (code, line, col) == ("E008", 2, 12)
    assert message == "the file is not UTF-8 text: byte 0xff cannot be decoded"


@pytest.mark.parametrize("text", ['contract "c" {\x00}', b'contract "c" {\x00}'])
def test_nul_characters(text: str | bytes) -> None:
    code, line, col, message, _ = only_error(text)
    assert (code, line, col) == ("E008", 1, 15)
    assert message == "the input holds a NUL character, so it is not a text file"


def test_lone_surrogate_is_not_text() -> None:
    assert only_error('contract "\ud800" {}')[0] == "E008"


def test_byte_order_mark_is_dropped() -> None:
    result = parse(b'\xef\xbb\xbfcontract "c" {}')
    assert result.ok
    assert result.source.text == 'contract "c" {}'


def test_utf8_text_in_strings_and_comments() -> None:
    result = parse('# Zürich — ok\ncontract "Nordwind Zürich" { currency CHF }'.encode())
    assert result.file is not None
    assert result.file.items[0].name == "Nordwind Zürich"


def test_crlf_line_ends() -> None:
    result = parse('contract "c" {\r\n  currency USD  # note\r\n}\r\n')
    assert result.file is not None
    assert [c.text for c in result.file.comments] == ["# note"]


def test_parse_path(tmp_path: Path) -> None:
    good = tmp_path / "good.spot"
    good.write_text('budget "b" { require share(accepted) >= 90% }', encoding="utf-8")
    result = parse_path(good)
    assert result.ok
    assert result.file is not None
    assert result.file.name == str(good)
    missing = parse_path(tmp_path / "missing.spot")
    (d,) = missing.diagnostics
    assert (d.code, d.file) == ("E013", str(tmp_path / "missing.spot"))
    assert d.message == f"cannot read `{tmp_path / 'missing.spot'}`: no such file or directory"
    assert parse_path(tmp_path).diagnostics[0].code == "E013"  # a directory


# --------------------------------------------------------------------------- deep nesting


def test_ten_thousand_nested_parentheses_are_accepted() -> None:
    # parentheses add no level: the AST is just the number
    result = parse('contract "c" { rate ' + "(" * 10_000 + "2" + ")" * 10_000 + " }")
    assert result.ok
    assert result.file is not None
    assert result.file.items[0].clauses == (Rate(N("2")),)


def test_five_thousand_nots_are_a_clean_error() -> None:
    code, line, _col, message, _ = only_error('budget "b" { require ' + "not " * 5000 + "a }")
    assert (code, line) == ("E009", 1)
    assert message == f"expression nested more than {MAX_NESTING} levels deep"


def test_nesting_limit_is_exact() -> None:
    # `not` × k then a name is k + 1 levels deep
    ok = 'budget "b" { require ' + "not " * (MAX_NESTING - 1) + "a }"
    assert parse(ok).ok
    too_deep = 'budget "b" { require ' + "not " * MAX_NESTING + "a }"
    assert only_error(too_deep)[0] == "E009"


@pytest.mark.parametrize(
    "text",
    [
        " + ".join(["1"] * 5000),
        "f(" * 3000 + "1" + ")" * 3000,
        "-" * 5000 + "1",
        "5% of " * 3000 + "x",
        "[" * 3000,
        "(" * 10_000,
    ],
)
def test_deep_or_long_input_never_crashes(text: str) -> None:
    result = parse(f'budget "b" {{ require {text} }}')
    assert result.file is None
    assert {d.code for d in result.diagnostics} <= set(CODES)
