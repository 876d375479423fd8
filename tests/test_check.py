"""The checker, rule by rule: each rule with input that passes and input that fails.

Positions are 1-based (line, column). Where a test pins a column, the comment beside it counts
the characters before the span.
"""

from __future__ import annotations

import itertools
import re
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from contractlang.check import CheckResult, check
from contractlang.codes import CODES
from contractlang.diagnostics import Diagnostic, Severity, sort_key
from contractlang.errors import ContractlangError
from contractlang.lang import ast as A
from contractlang.lang.exact import constant_value, is_constant
from contractlang.lang.facts import FACTS
from contractlang.lang.show import show
from contractlang.pipeline.language import check_texts, load_terms, parse, terms_from_text

ROOT = Path(__file__).resolve().parents[1]

#: The example file of docs/language.md ("An example"), verbatim: one contract and one budget
#: using most kinds of clause, with comments and blank lines.
DESIGN_EXAMPLE = (ROOT / "tests" / "data" / "design_example.spot").read_text(encoding="utf-8")


# --------------------------------------------------------------------------- helpers


def run(text: str, name: str = "t.spot") -> CheckResult:
    """Parse (which must succeed) and check."""
    parsed = parse(text, name)
    assert parsed.ok, [d.render(parsed.source) for d in parsed.diagnostics]
    assert parsed.file is not None
    return check(parsed.file)


def contract(*clauses: str, currency: str | None = "USD", rate: bool = True) -> str:
    """A contract with one clause per line: line 1 is `contract "c" {`, line 2 the currency,
    line 3 a plain rate (when ``rate``), then ``clauses`` one per line."""
    lines = ['contract "c" {']
    if currency:
        lines.append(f"  currency {currency}")
    if rate:
        lines.append("  rate 2 USD per gpu_hour when capacity == spot")
    lines.extend(f"  {c}" for c in clauses)
    lines.append("}")
    return "\n".join(lines) + "\n"


def budget(*requires: str) -> str:
    body = "\n".join(f"  require {r}" for r in requires)
    return f'budget "b" {{\n{body}\n}}\n'


def codes(text: str) -> list[str]:
    return [d.code for d in run(text).diagnostics]


def only(text: str, code: str) -> Diagnostic:
    """The one diagnostic of ``text``, which must have ``code``."""
    diags = run(text).diagnostics
    assert [d.code for d in diags] == [code], [d.render() for d in diags]
    return diags[0]


def clean(text: str) -> None:
    diags = run(text).diagnostics
    assert diags == (), [d.render() for d in diags]


def when(cond: str) -> str:
    """A contract whose only extra clause is an exclusion with this condition (line 4)."""
    return contract(f'exclude "x" allocation when {cond}')


def credit(amount: str, cond: str = "end_reason == failed") -> str:
    return contract(f'credit "k" {amount} when {cond}')


# --------------------------------------------------------------------------- whole files


def test_design_example_checks_clean() -> None:
    clean(DESIGN_EXAMPLE)


def test_design_example_is_the_example_of_the_language_page() -> None:
    # the copy the tests parse, check and format is the page's example, so what they prove of
    # it holds of what a reader sees
    text = (ROOT / "docs" / "language.md").read_text(encoding="utf-8")
    section = text[text.index("\n## An example\n") :]
    block = section.split("```\n", 2)[1]
    assert block == DESIGN_EXAMPLE


def test_rulesets_check_clean() -> None:
    # every negotiated contract in rulesets/ must check clean, warnings included
    assert (ROOT / "rulesets").is_dir()
    for path in sorted((ROOT / "rulesets").glob("*.spot")):
        parsed = parse(path.read_text(), str(path))
        assert parsed.file is not None, [d.render(parsed.source) for d in parsed.diagnostics]
        diags = check(parsed.file).diagnostics
        assert diags == (), [d.render(parsed.source) for d in diags]


def test_check_takes_one_file_or_several() -> None:
    a = parse('contract "a" { currency USD rate 1 USD per gpu_hour }', "a.spot").file
    b = parse('contract "a" { currency USD rate 1 USD per gpu_hour }', "b.spot").file
    assert a is not None
    assert b is not None
    assert check(a).ok
    result = check([a, b])
    assert [d.code for d in result.diagnostics] == ["E103"]
    assert not result.ok


def test_empty_file_is_clean() -> None:
    assert check(A.SpotFile(())).diagnostics == ()


def test_all_problems_are_collected_and_sorted() -> None:
    text = contract(
        "billing increment 0 seconds",  # line 4: E213
        'credit "k" 5 hours when end_reason == failed',  # line 5: E207
        'exclude "e" allocation when replayd_time > 1 hour',  # line 6: E101
    )
    diags = run(text).diagnostics
    assert [(d.code, d.span.line) for d in diags] == [("E213", 4), ("E207", 5), ("E101", 6)]
    assert all(d.file == "t.spot" for d in diags)


def test_warnings_alone_are_ok() -> None:
    result = run(
        contract(rate=False).replace("}", "  rate 1 USD per gpu_hour\n  rate 2 USD per gpu_hour\n}")
    )
    assert [d.code for d in result.diagnostics] == ["W001"]
    assert result.ok
    assert result.warnings == result.diagnostics
    assert result.errors == ()


def test_one_mistake_is_reported_once() -> None:
    # `foo` is unknown; the sum and the comparison above it are not reported again
    d = only(when("(foo + 1 hour) * 2 > 5 USD"), "E101")
    assert d.message == "unknown name `foo`"


# --------------------------------------------------------------------------- names


def test_unknown_name_suggests_the_closest_valid_name() -> None:
    d = only(when("replayd_time > 1 hour"), "E101")
    assert d.message == "unknown name `replayd_time`"
    assert d.help == "did you mean `replayed_time`?"
    # line 4 is `  exclude "x" allocation when replayd_time > 1 hour`:
    # 2 spaces + `exclude "x" allocation when ` (28) = 30 characters before it
    assert (d.span.line, d.span.col, d.span.end_col) == (4, 31, 31 + len("replayd_time"))


def test_unknown_name_without_a_close_match_has_no_help() -> None:
    d = only(when("xyzzy > 1 hour"), "E101")
    assert d.help is None


def test_suggestions_come_only_from_names_valid_there() -> None:
    # `charge` exists but an exclusion cannot read it, so it is not suggested there...
    d = only(when("chargee > 1 USD"), "E101")
    assert d.help is None or "`charge`" not in d.help
    # ...while a credit can read it
    d = only(credit("10% of chargee"), "E101")
    assert d.help == "did you mean `charge`?"


def test_enum_members_are_names() -> None:
    clean(when("end_reason == failed or capacity in [spot, reserved]"))


def test_declared_promises_read_as_time() -> None:
    clean(
        contract(
            "promise reclaim notice 2 minutes",
            "promise restart within 15 minutes",
            'exclude "x" allocation when notice_lead < promised_notice',
            'credit "k" 10% of charge when replacement_wait > promised_restart',
        )
    )


@pytest.mark.parametrize(
    ("name", "clause"),
    [
        ("promised_notice", "promise reclaim notice"),
        ("promised_restart", "promise restart within"),
    ],
)
def test_undeclared_promise(name: str, clause: str) -> None:
    d = only(when(f"notice_lead < {name}"), "E105")
    assert d.message.startswith(f"`{name}` is read here, but contract `c` makes no")
    assert d.help is not None
    assert f"`{clause} " in d.help


def test_trace_column_is_a_plain_number() -> None:
    clean(
        contract(
            "rate trace.price per gpu_hour", 'exclude "x" allocation when trace.spot_score > 3'
        )
    )
    d = only(when("trace.spot_score > 3 minutes"), "E202")
    assert d.message == "cannot compare a plain number with time"


# --------------------------------------------------------------------------- levels and stages


def test_per_run_fact_in_a_contract() -> None:
    d = only(when("reclaims > 2"), "E107")
    assert d.message == "`reclaims` is a per-run fact; contract terms read facts of one allocation"


@pytest.mark.parametrize(
    ("clause", "fact", "message"),
    [
        (
            'exclude "x" allocation when charge > 1 USD',
            "charge",
            "`charge` is known only after rates apply; an exclusion cannot read it",
        ),
        (
            'exclude "x" allocation when billable_time > 1 hour',
            "billable_time",
            "`billable_time` is known only after exclusions and billing rounding apply; "
            "an exclusion cannot read it",
        ),
        (
            "rate 1 USD per gpu_hour when replayed_cost > 1 USD",
            "replayed_cost",
            "`replayed_cost` is known only after rates apply; a rate cannot read it",
        ),
        (
            'exclude "x" replayed_time when charge > 1 USD',
            "charge",
            "`charge` is known only after rates apply; an exclusion cannot read it",
        ),
    ],
)
def test_later_stage_is_an_error(clause: str, fact: str, message: str) -> None:
    d = only(contract(clause), "E106")
    assert d.message == message


def test_credits_may_read_charge_facts() -> None:
    clean(
        contract(
            'credit "a" 10% of charge when billable_time > 1 hour',
            'credit "b" 50% of replayed_cost when end_reason == failed and charge > 5 USD',
        )
    )


def test_budget_reads_run_facts_inside_aggregates() -> None:
    clean(budget("p95(net) <= 5 USD", "mean(lost_steps) < 100", "share(reclaims > 2) < 10%"))


def test_budget_fact_outside_an_aggregate() -> None:
    d = only(budget("net <= 5 USD"), "E109")
    assert d.message == "`net` is a per-run fact; a budget reads it through an aggregate over runs"
    assert d.help == "write `p95(net)` or `mean(net)`"
    d = only(budget("share(accepted) >= 90% + accepted"), "E109")
    assert d.help == "write `share(accepted)`"


def test_aggregate_inside_an_aggregate() -> None:
    d = only(budget("mean(p95(net)) <= 5 USD"), "E109")
    assert d.message.startswith("`p95` is inside another aggregate")


@pytest.mark.parametrize("call", ["mean(runtime)", "p95(runtime)", "max(runtime)", "count(true)"])
def test_aggregate_in_a_contract(call: str) -> None:
    d = only(when(f"{call} > 1"), "E109")
    func = call.split("(", maxsplit=1)[0]
    assert d.message == f"`{func}` is an aggregate over runs; only a budget's `require` can use it"


def test_allocation_fact_in_a_budget() -> None:
    d = only(budget("mean(replayed_time) <= 1 hour"), "E107")
    assert d.message == "`replayed_time` is a fact of one allocation; budgets read per-run facts"
    assert d.help is not None
    assert "`lost_gpu_time`" in d.help


def test_trace_column_in_a_budget() -> None:
    only(budget("mean(trace.price) <= 1"), "E107")


def test_promise_in_a_budget() -> None:
    only(budget("mean(time_to_accept) <= promised_restart"), "E107")


# --------------------------------------------------------------------------- units and types


@pytest.mark.parametrize(
    "amount",
    [
        "2.10 USD per gpu_hour * gpus * (replacement_wait - 15 minutes)",
        "gpus * (replacement_wait - 15 minutes) * 2.10 USD per gpu_hour",
        "(replacement_wait - 15 minutes) * 2.10 USD per gpu_hour * gpus",
        "2.10 USD per gpu_hour * (gpu_time / runtime) * replacement_wait",
    ],
)
def test_money_in_any_order(amount: str) -> None:
    # USD/(gpu·time) × gpu × time = USD, whatever the order
    clean(credit(amount, "replacement_wait > 15 minutes"))


def test_adding_money_and_time() -> None:
    d = only(contract("rate 2.10 USD per gpu_hour + 1 hour"), "E201")
    assert d.message == "cannot add money per GPU-time (USD) and time"
    assert [r.message for r in d.related] == [
        "`2.10 USD per gpu_hour` is money per GPU-time (USD)",
        "`1 hour` is time",
    ]
    # line 4 is `  rate 2.10 USD per gpu_hour + 1 hour`: operands at 8 and 32
    assert [(r.span.line, r.span.col) for r in d.related] == [(4, 8), (4, 32)]
    assert (d.span.col, d.span.end_col) == (8, 38)


def test_subtracting_needs_equal_units() -> None:
    d = only(when("runtime - 1 USD > 1 hour"), "E201")
    assert d.message == "cannot subtract money (USD) from time"
    assert [r.message for r in d.related] == ["`runtime` is time", "`1 USD` is money (USD)"]


def test_comparing_time_with_money() -> None:
    d = only(when("runtime > 5 USD"), "E202")
    assert d.message == "cannot compare time with money (USD)"


def test_comparing_gpus_with_a_bare_number_suggests_a_unit() -> None:
    d = only(when("gpus >= 8"), "E202")
    assert d.message == "cannot compare GPUs with a plain number"
    assert d.help == "give `8` a unit, as in `8 gpus`"
    clean(when("gpus >= 8 gpus"))


def test_same_dimension_divides_to_a_plain_number() -> None:
    clean(when("replayed_time / runtime > 50%"))
    clean(budget("mean(lost_gpu_time / metered_gpu_time) <= 5%"))
    d = only(when("replayed_time / gpu_time > 50%"), "E202")
    # time / (gpu × time) = gpu^-1
    assert d.message == "cannot compare gpu^-1 with a plain number"


def test_percent_of_has_its_operands_type() -> None:
    clean(credit("10% of charge"))
    clean(when("replayed_time > 10% of runtime"))
    d = only(credit("10% of runtime"), "E207")
    assert d.message == 'credit "k" must be an amount of money, but `10% of runtime` is time'


def test_percent_of_a_string() -> None:
    d = only(when('10% of sku == "x"'), "E203")
    assert d.message == "`X% of` takes a number, but `sku` is a string"


def test_none_is_compatible_with_anything() -> None:
    clean(when("coalesce(notice_lead, none, 0 seconds) < 1 minute"))
    clean(contract("rate coalesce(trace.price per gpu_hour, none)"))
    clean(contract("rate none when capacity == reserved", "rate none per gpu_hour"))


def test_conditions_must_be_true_or_false() -> None:
    d = only(when("runtime"), "E204")
    assert d.message == "a `when` condition must be true or false, but `runtime` is time"
    d = only(when("runtime > 1 hour and gpus"), "E204")
    assert d.message == "`and` needs true or false on both sides, but `gpus` is GPUs"
    d = only(when("not sku"), "E204")
    assert d.message == "`not` needs true or false, but `sku` is a string"


def test_both_sides_of_and_are_checked() -> None:
    # the unknown name on the left does not hide the non-boolean on the right
    assert codes(when("foo > 1 and runtime")) == ["E101", "E204"]


def test_strings_compare_with_strings() -> None:
    clean(when('sku == "H100-80G" and zone != "us-east-1a"'))
    d = only(when("sku == 5"), "E203")
    assert d.message == "cannot compare a string with a plain number"


def test_enum_member_of_another_enum() -> None:
    d = only(when("capacity == reclaimed"), "E203")
    assert d.message == "`reclaimed` is an `end_reason`, not a `capacity`"
    assert [r.message for r in d.related] == [
        "`capacity` is one of `spot`, `on_demand` or `reserved`",
        "`reclaimed` is an `end_reason`",
    ]
    # the note on the fact lists its members; a help line would only repeat it
    assert d.help is None
    d = only(when("coalesce(capacity, spot) == reclaimed"), "E203")
    assert d.help == "`capacity` is one of `spot`, `on_demand` or `reserved`"


def test_enum_member_in_quotes() -> None:
    d = only(when('capacity == "spot"'), "E203")
    assert d.message == "cannot compare a `capacity` with a string"
    assert d.help == "write `spot` without quotes"
    d = only(when('capacity == "gpu"'), "E203")
    assert d.help == "`capacity` is one of `spot`, `on_demand` or `reserved`"


def test_in_checks_each_option() -> None:
    clean(when("end_reason in [reclaimed, failed]"))
    clean(when("end_reason not in [released]"))
    diags = run(when('capacity in [spot, reclaimed, "x"]')).diagnostics
    assert [d.code for d in diags] == ["E203", "E203"]
    # line 4: `  exclude "x" allocation when capacity in [spot, reclaimed, "x"]`;
    # `reclaimed` follows 30 + len("capacity in [spot, ") = 49 characters
    assert [d.span.col for d in diags] == [50, 61]


def test_ordering_needs_numbers() -> None:
    d = only(when('sku < "A"'), "E202")
    assert d.message == "`<` orders numbers; it cannot compare a string with a string"


def test_comparison_with_none_warns() -> None:
    d = only(when("notice_lead == none"), "W003")
    assert d.severity is Severity.WARNING
    assert d.help == "use `coalesce(notice_lead, <default>)` to give a missing value a default"
    only(when("end_reason in [none, failed]"), "W003")


def test_unknown_unit() -> None:
    d = only(when("runtime > 5 minuts"), "E102")
    assert d.message == "unknown unit `minuts`"
    assert d.help == "did you mean `minute`?"
    # the caret is under the unit only: 30 + len("runtime > 5 ") = 42 characters before it
    assert (d.span.col, d.span.end_col) == (43, 43 + len("minuts"))


def test_lowercase_currency_suggests_the_code() -> None:
    d = only(credit("5 usd"), "E102")
    assert d.help == "did you mean `USD`?"


def test_unknown_unit_after_per() -> None:
    d = only(contract("rate trace.price per gpuhour"), "E102")
    assert d.help == "did you mean `gpu_hour`?"


def test_plain_number_per_unit_takes_the_contracts_currency() -> None:
    clean(contract("rate trace.price per gpu_hour", currency="EUR", rate=False))
    # a bare number per hour is money per time, in the contract's currency
    d = only(contract("rate 3 per hour", currency="EUR", rate=False), "E206")
    assert (
        d.message == "a rate must be money per GPU-time, but `3 per hour` is money per time (EUR)"
    )


# --------------------------------------------------------------------------- currency


def test_missing_currency() -> None:
    d = only(contract(currency=None), "E302")
    assert d.message == "contract `c` has no `currency`"
    # line 1 is `contract "c" {`: the name span is `"c"` at column 10
    assert (d.span.line, d.span.col) == (1, 10)


def test_repeated_currency() -> None:
    d = only(contract("currency USD"), "E302")
    assert d.message == "contract `c` sets its currency more than once"
    assert [(r.span.line, r.message) for r in d.related] == [(2, "the currency is first set here")]


def test_money_in_another_currency() -> None:
    d = only(credit("5 EUR"), "E205")
    assert d.message == "`5 EUR` is in EUR, but contract `c` is in USD"
    assert [(r.span.line, r.span.col, r.message) for r in d.related] == [
        (2, 3, "the contract's currency is set here")
    ]


def test_rate_in_another_currency() -> None:
    d = only(contract("rate 2 EUR per gpu_hour"), "E205")
    assert d.message == "`2 EUR` is in EUR, but contract `c` is in USD"


def test_invalid_currency_code() -> None:
    d = only(contract(currency="usd", rate=False).replace("}", "  rate 1 per gpu_hour\n}"), "E213")
    assert d.message.startswith("`usd` is not a currency code")
    assert d.help == "did you mean `USD`?"


def test_one_currency_per_requirement() -> None:
    d = only(budget("p95(net) <= 10 USD + 5 EUR"), "E205")
    assert d.message == "`5 EUR` is in EUR, but this requirement is in USD"
    clean(budget("p95(net) <= 10 EUR", "p95(gross) <= 10 USD"))


# --------------------------------------------------------------------------- calls


def test_scalar_functions() -> None:
    clean(when("max(runtime, 1 hour) > 2 hours and min(gpus, 8 gpus) > 1 gpus"))
    clean(when("coalesce(replacement_wait, 0 seconds) > 15 minutes"))


def test_coalesce_needs_two_arguments() -> None:
    d = only(when("coalesce(runtime) > 1 hour"), "E108")
    assert d.message == "`coalesce` takes two or more arguments"


def test_coalesce_of_different_types() -> None:
    d = only(when("coalesce(runtime, 5 USD) > 1 hour"), "E201")
    assert d.message == "`coalesce` needs arguments of one unit, but gets time and money (USD)"
    d = only(when('coalesce(sku, 5) == "x"'), "E203")
    assert (
        d.message == "`coalesce` needs arguments of one type, but gets a string and a plain number"
    )


def test_min_of_different_units() -> None:
    d = only(when("min(runtime, 8 gpus) > 1 hour"), "E201")
    assert d.message == "`min` needs arguments of one unit, but gets time and GPUs"


def test_unknown_function() -> None:
    d = only(budget("meen(net) <= 5 USD"), "E108")
    assert d.message == "unknown function `meen`"
    assert d.help == "did you mean `mean`?"
    # `  require ` is 10 characters: the function name starts at column 11
    assert (d.span.line, d.span.col, d.span.end_col) == (2, 11, 15)


def test_percentiles() -> None:
    clean(
        budget("p0(net) >= 0 USD", "p50(net) <= 1 USD", "p100(net) <= 2 USD", "p99(lost_steps) < 5")
    )
    d = only(budget("p101(net) <= 5 USD"), "E108")
    assert d.message == "`p101` is not a percentile; use `p0` to `p100`"


def test_aggregate_arity() -> None:
    d = only(budget("mean(net, gross) <= 5 USD"), "E108")
    assert d.message == "`mean` takes one argument, not 2"


def test_aggregate_of_a_boolean() -> None:
    d = only(budget("mean(accepted) >= 50%"), "E211")
    assert d.message == "`mean` aggregates numbers, but `accepted` is true/false"
    assert d.help == "use `share(accepted)` for the share of runs where it is true"


def test_share_and_count_take_conditions() -> None:
    clean(budget("count(accepted) >= 10", "share(net > 100 USD) < 5%"))
    d = only(budget("share(net) >= 90%"), "E204")
    assert d.message == "`share` counts runs where a condition is true, but `net` is money"
    # count is a plain number
    only(budget("count(accepted) >= 10 USD"), "E202")


# --------------------------------------------------------------------------- clauses


def test_rate_must_be_money_per_gpu_time() -> None:
    d = only(contract("rate 2 USD per hour"), "E206")
    assert (
        d.message
        == "a rate must be money per GPU-time, but `2 USD per hour` is money per time (USD)"
    )
    d = only(contract("rate trace.price"), "E206")
    assert d.help == "write `trace.price per gpu_hour`"
    d = only(contract("rate 2 USD"), "E206")
    assert d.help == "write a price per GPU-time, such as `2 USD per gpu_hour`"


def test_rate_may_scale_a_price() -> None:
    clean(contract("rate trace.price per gpu_hour * 110% when capacity == reserved"))


@pytest.mark.parametrize(
    ("clause", "message"),
    [
        ("billing increment 0 seconds", "`billing increment` must be more than 0 seconds"),
        ("billing increment (-1 minute)", "`billing increment` must be more than 0 seconds"),
        ("billing minimum (-1 minute)", "`billing minimum` cannot be negative"),
        ("promise reclaim notice (-(30 seconds))", "`promise reclaim notice` cannot be negative"),
        (
            "billing increment (runtime)",
            "`billing increment` must be a constant duration, not one read from each allocation",
        ),
        (
            "promise restart within (replacement_wait)",
            "`promise restart within` must be a constant duration, not one read from each "
            "allocation",
        ),
        (
            "billing increment 0.0000001 seconds",
            "`billing increment` must be a whole number of microseconds",
        ),
    ],
)
def test_invalid_durations(clause: str, message: str) -> None:
    d = only(contract(clause), "E213")
    assert d.message == message


def test_valid_durations() -> None:
    clean(
        contract(
            "billing increment (1 hour + 30 minutes)",
            "billing minimum 0 seconds",
            "promise reclaim notice 0 seconds",
            "promise restart within 1 day",
        )
    )


def test_setting_that_is_not_a_duration() -> None:
    d = only(contract("billing increment 5 USD"), "E208")
    assert d.message == "`billing increment` takes a duration, but `5 USD` is money (USD)"
    d = only(contract("promise reclaim notice 2 gpu_hours"), "E208")
    assert d.message == "`promise reclaim notice` takes a duration, but `2 gpu_hours` is GPU-time"


def test_billing_period() -> None:
    clean(contract('billing period ends 17:00 "America/New_York"'))
    clean(contract('billing period ends 00:00 "UTC"'))
    d = only(contract('billing period ends 24:00 "UTC"'), "E213")
    assert d.message == "`24:00` is not a time of day; write it as HH:MM from 00:00 to 23:59"
    d = only(contract('billing period ends 17:00 "America/New_Yrok"'), "E213")
    assert d.message == '"America/New_Yrok" is not a known time zone'
    assert d.help == 'did you mean "America/New_York"?'
    # `  billing period ends 17:00 ` is 28 characters: the zone starts at column 29
    assert (d.span.col, d.span.end_col) == (29, 29 + len('"America/New_Yrok"'))


def test_rounding_and_precision() -> None:
    clean(contract("rounding half_even", "precision 0"))
    clean(contract("rounding half_up", "precision 10"))
    d = only(contract("rounding half_evn"), "E213")
    assert d.message == "`half_evn` is not a rounding mode; use `half_up` or `half_even`"
    assert d.help == "did you mean `half_even`?"
    d = only(contract("precision 11"), "E213")
    assert d.message == "`precision 11` is out of range; use 0 to 10 decimal places"


@pytest.mark.parametrize(
    ("first", "second", "key"),
    [
        ("billing increment 1 minute", "billing increment 1 second", "billing increment"),
        ("billing minimum 1 minute", "billing minimum 1 second", "billing minimum"),
        (
            "promise reclaim notice 30 seconds",
            "promise reclaim notice 2 minutes",
            "promise reclaim notice",
        ),
        (
            "promise restart within 1 hour",
            "promise restart within 2 hours",
            "promise restart within",
        ),
        ("rounding half_up", "rounding half_even", "rounding"),
        ("precision 2", "precision 3", "precision"),
        ('billing period ends 17:00 "UTC"', 'billing period ends 18:00 "UTC"', "billing period"),
    ],
)
def test_repeated_settings(first: str, second: str, key: str) -> None:
    # (caps may repeat at a level: see test_caps_may_repeat_at_a_level)
    d = only(contract(first, second), "E303")
    assert d.message == f"`{key}` is set more than once in contract `c`"
    assert d.span.line == 5
    assert [(r.span.line, r.message) for r in d.related] == [(4, "it is first set here")]


def test_caps_at_different_levels_are_not_repeats() -> None:
    clean(contract("cap credits at 30% of gross per run", "cap credits at 50000 USD per month"))


def test_term_names_are_unique() -> None:
    d = only(
        contract(
            'exclude "late" allocation when runtime < 1 hour',
            'credit "late" 10% of charge when replacement_wait > 1 hour',
        ),
        "E304",
    )
    assert d.message == 'the name "late" is used by two terms of contract `c`'
    assert d.span.line == 5
    assert [r.span.line for r in d.related] == [4]


@pytest.mark.parametrize(
    ("clause", "message"),
    [
        ('exclude "x" allocation', 'exclusion "x" has no `when` condition'),
        ('exclude "x" replayed_time', 'exclusion "x" has no `when` condition'),
        ('credit "x" 10% of charge', 'credit "x" has no `when` condition'),
    ],
)
def test_missing_when(clause: str, message: str) -> None:
    d = only(contract(clause), "E301")
    assert d.message == message
    assert d.help is not None
    assert "`when` is optional only on rates" in d.help


def test_rate_without_when_is_fine() -> None:
    clean(contract("rate 1 USD per gpu_hour", rate=False))


def test_duration_exclusion_takes_a_duration() -> None:
    clean(contract('exclude "x" 10 minutes when end_reason == failed'))
    d = only(contract('exclude "x" gpu_time when end_reason == failed'), "E208")
    assert d.message == (
        'exclusion "x" takes a duration out of billable time, but `gpu_time` is GPU-time'
    )


def test_credit_must_be_money() -> None:
    clean(credit("50 USD"))
    d = only(credit("replayed_time"), "E207")
    assert d.message == 'credit "k" must be an amount of money, but `replayed_time` is time'


@pytest.mark.parametrize(
    "limit", ["50000 USD", "0 USD", "30% of gross", "100% of gross", "(1000 USD * 2)"]
)
def test_valid_caps(limit: str) -> None:
    clean(contract(f"cap credits at {limit} per month"))


@pytest.mark.parametrize(
    ("limit", "message"),
    [
        (
            "5 hours",
            "a cap limit is a constant amount of money or `X% of gross`, but `5 hours` is time",
        ),
        (
            "(30% of charge)",
            "a cap limit is a constant amount of money or `X% of gross`; "
            "`30% of charge` is not constant",
        ),
        (
            "(gross)",
            "a cap limit is a constant amount of money or `X% of gross`; "
            "`gross` can be read only as `X% of gross`",
        ),
        ("(-5 USD)", "a cap limit cannot be negative"),
    ],
)
def test_invalid_cap_limits(limit: str, message: str) -> None:
    d = only(contract(f"cap credits at {limit} per run"), "E209")
    assert d.message == message


def test_cap_over_100_percent() -> None:
    d = only(contract("cap credits at 101% of gross per run"), "E210")
    assert d.message == "a cap over 100% of gross never cuts anything"


def test_cap_in_another_currency() -> None:
    only(contract("cap credits at 5 EUR per run"), "E205")


def test_cap_level() -> None:
    d = only(contract("cap credits at 5 USD per monthly"), "E213")
    assert d.message == (
        "`monthly` is not a cap level; use `allocation`, `run`, `month` or `contract`"
    )
    assert d.help == "did you mean `month`?"


def test_gross_outside_a_cap() -> None:
    d = only(credit("10% of gross"), "E107")
    assert d.help == "`gross` can be read only in `cap credits at X% of gross`"


def test_contract_without_a_rate() -> None:
    d = only(contract(rate=False), "E305")
    assert d.message == "contract `c` has no rate, so nothing in it can be priced"


# --------------------------------------------------------------------------- across files


def test_duplicate_contract_in_one_file() -> None:
    text = contract() + contract()
    diags = run(text).diagnostics
    assert [d.code for d in diags] == ["E103"]
    # the second contract starts on line 5 (the first takes lines 1-4)
    assert diags[0].span.line == 5
    assert [r.span.line for r in diags[0].related] == [1]


def test_duplicate_names_across_files() -> None:
    a = parse(contract() + budget("p95(net) <= 1 USD"), "a.spot").file
    b = parse(budget("p95(net) <= 2 USD") + contract(), "b.spot").file
    assert a is not None
    assert b is not None
    diags = check([a, b]).diagnostics
    assert [(d.code, d.file) for d in diags] == [("E104", "b.spot"), ("E103", "b.spot")]
    assert diags[0].message == "budget `b` is defined more than once"
    assert diags[1].help == (
        "`c` is first defined in a.spot at line 1; give each contract its own name"
    )


# --------------------------------------------------------------------------- lints


def test_rate_after_a_catch_all_is_never_reached() -> None:
    text = contract("rate 3 USD per gpu_hour", "rate 4 USD per gpu_hour when capacity == spot")
    diags = run(text).diagnostics
    assert [(d.code, d.span.line) for d in diags] == [("W001", 5)]
    assert [r.span.line for r in diags[0].related] == [4]


def test_when_true_is_a_catch_all() -> None:
    text = contract("rate 3 USD per gpu_hour when true", "rate 4 USD per gpu_hour")
    assert codes(text) == ["W001"]


def test_rate_from_the_trace_falls_through() -> None:
    clean(contract("rate trace.price per gpu_hour", "rate 4 USD per gpu_hour"))


def test_conditional_rates_fall_through() -> None:
    clean(contract("rate 3 USD per gpu_hour when gpus > 8 gpus", "rate 4 USD per gpu_hour"))


def test_replay_refunded_twice() -> None:
    text = contract(
        'exclude "replay" replayed_time when end_reason == reclaimed',
        'credit "refund" 100% of replayed_cost when notice_lead < 1 minute',
    )
    d = only(text, "W002")
    assert d.message == (
        'credit "refund" refunds `replayed_cost` and exclusion "replay" already takes '
        "`replayed_time` out of billable time; where both apply, the replay would be refunded "
        "twice"
    )
    assert d.span.line == 5
    assert [r.span.line for r in d.related] == [4]


@pytest.mark.parametrize(
    ("exclusion", "credit_when"),
    [
        ("end_reason == reclaimed", "end_reason == failed"),
        ("end_reason == reclaimed and runtime > 1 hour", "gpus > 1 gpus and end_reason == failed"),
        ("end_reason in [reclaimed]", "end_reason not in [reclaimed, released]"),
        ("end_reason == reclaimed", "end_reason != reclaimed"),
        ("runtime < 1 hour", "runtime >= 1 hour"),
        ("runtime < 1 hour", "runtime > 2 hours"),
        ('sku == "a"', 'sku == "b"'),
        ("notice_lead < 30 seconds", "not (notice_lead < 30 seconds)"),
    ],
)
def test_disjoint_conditions_do_not_warn(exclusion: str, credit_when: str) -> None:
    clean(
        contract(
            f'exclude "replay" replayed_time when {exclusion}',
            f'credit "refund" 50% of replayed_cost when {credit_when}',
        )
    )


@pytest.mark.parametrize(
    ("exclusion", "credit_when"),
    [
        ("end_reason == reclaimed", "end_reason in [reclaimed, failed]"),
        ("runtime < 1 hour", "runtime <= 1 hour"),
        ("runtime <= 1 hour", "runtime >= 1 hour"),
        ("end_reason == reclaimed or end_reason == failed", "end_reason == failed"),
    ],
)
def test_overlapping_conditions_warn(exclusion: str, credit_when: str) -> None:
    text = contract(
        f'exclude "replay" replayed_time when {exclusion}',
        f'credit "refund" 50% of replayed_cost when {credit_when}',
    )
    assert codes(text) == ["W002"]


def test_refund_of_charge_does_not_warn() -> None:
    clean(
        contract(
            'exclude "replay" replayed_time when end_reason == reclaimed',
            'credit "refund" 10% of charge when end_reason == reclaimed',
        )
    )


# --------------------------------------------------------------------------- budgets


def test_require_must_be_a_comparison() -> None:
    d = only(budget("share(accepted) >= 90% and p95(net) < 1 USD"), "E212")
    assert d.help == "write one `require` per condition"
    only(budget("share(accepted)"), "E212")


def test_require_measures_one_side() -> None:
    d = only(budget("p95(net) <= p50(net)"), "E212")
    assert d.message.startswith("both sides of this `require` are measured")
    d = only(budget("1 < 2"), "E212")
    assert d.message.startswith("this `require` measures nothing")


def test_limit_may_be_on_the_left() -> None:
    clean(budget("12000 USD >= p95(cost_per_accepted_run)"))


def test_require_units() -> None:
    d = only(budget("p95(time_to_accept) <= 72 USD"), "E202")
    assert d.message == "cannot compare time with money (USD)"
    clean(budget("p95(time_to_accept) <= 3 days", "sum(lost_gpu_time) <= 1000 gpu_hours"))


# --------------------------------------------------------------------------- helpers


def _expr(text: str) -> A.Expr:
    """The condition of an exclusion, parsed."""
    f = parse(when(text)).file
    assert f is not None
    clause = f.contracts[0].clauses[2]
    assert isinstance(clause, A.ExcludeAllocation)
    assert clause.when is not None
    return clause.when


@pytest.mark.parametrize(
    ("text", "constant"),
    [
        ("1 hour + 30 minutes", True),
        ("max(1 hour, 2 hours)", True),
        ("coalesce(none, 5 USD)", True),
        ("runtime", False),
        ("trace.price per gpu_hour", False),
        ("promised_notice", False),
        ("mean(net)", False),
        ("max(net)", False),
        ("foo(1, 2)", False),
    ],
)
def test_is_constant(text: str, constant: bool) -> None:
    f = parse(f'budget "b" {{ require {text} <= 0 }}').file
    assert f is not None
    expr = f.budgets[0].requires[0].expr
    assert isinstance(expr, A.Compare)
    assert is_constant(expr.left) is constant


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("1 hour + 30 minutes", Fraction(5400)),  # 3600 + 30 × 60 = 5400 s
        ("2.10 USD per gpu_hour", Fraction(21, 36000)),  # 2.10 / 3600 = 21/36000 USD per GPU-s
        ("30% of 200 USD", Fraction(60)),  # 0.30 × 200 = 60
        ("-(1 minute) * 2", Fraction(-120)),  # -60 × 2 = -120 s
        ("max(1 hour, 90 minutes)", Fraction(5400)),  # max(3600, 5400)
        ("1 hour / 0 seconds", None),  # x / 0 is none
        ("5 minuts", None),  # unknown unit
        ("runtime", None),
    ],
)
def test_constant_value(text: str, value: Fraction | None) -> None:
    f = parse(f'budget "b" {{ require {text} <= 0 }}').file
    assert f is not None
    expr = f.budgets[0].requires[0].expr
    assert isinstance(expr, A.Compare)
    assert constant_value(expr.left) == value


def test_show_round_trips_precedence() -> None:
    expr = _expr('(replacement_wait - 15 minutes) * 2 > 1 hour and not (sku == "a")')
    assert show(expr) == '(replacement_wait - 15 minutes) * 2 > 1 hour and not sku == "a"'


def test_hand_built_ast_without_spans() -> None:
    # the checker does not need positions: an AST built by hand checks the same
    c = A.Contract(
        "h",
        (
            A.Currency("USD"),
            A.Rate(A.Per(A.Quantity(Decimal("2"), "USD"), "gpu_hour")),
            A.Credit("k", A.Name("runtime"), A.Bool(True)),
        ),
    )
    diags = check(A.SpotFile((c,))).diagnostics
    assert [d.code for d in diags] == ["E207"]


# --------------------------------------------------------------------------- terms


def test_terms_from_text() -> None:
    t = terms_from_text(DESIGN_EXAMPLE, "design.spot")
    assert [c.name for c in t.contracts] == ["northwind-spot-v3"]
    assert [b.name for b in t.budgets] == ["fy27-pretraining"]
    assert t.warnings == ()
    assert set(t.sources) == {"design.spot"}


def test_terms_keep_warnings() -> None:
    t = terms_from_text(contract("rate 3 USD per gpu_hour", "rate 4 USD per gpu_hour"))
    assert [d.code for d in t.warnings] == ["W001"]


def test_terms_raise_on_errors_with_warnings_included() -> None:
    text = contract("rate 3 USD per gpu_hour", "rate 4 USD per gpu_hour", "billing increment 5 USD")
    with pytest.raises(ContractlangError) as info:
        terms_from_text(text, "bad.spot")
    assert sorted(d.code for d in info.value.diagnostics) == ["E208", "W001"]
    assert set(info.value.sources) == {"bad.spot"}


def test_terms_raise_on_syntax_errors() -> None:
    with pytest.raises(ContractlangError) as info:
        terms_from_text('contract "c" { rate 2 USD per gpu_hour capacity == spot }')
    assert [d.code for d in info.value.diagnostics] == ["E002"]


def test_load_terms_checks_files_together(tmp_path: Path) -> None:
    (tmp_path / "a.spot").write_text(contract())
    (tmp_path / "b.spot").write_text(budget("p95(net) <= 1 USD"))
    t = load_terms([tmp_path / "a.spot", tmp_path / "b.spot"])
    assert [f.name for f in t.files] == [str(tmp_path / "a.spot"), str(tmp_path / "b.spot")]
    assert [c.name for c in t.contracts] == ["c"]
    assert [b.name for b in t.budgets] == ["b"]
    (tmp_path / "c.spot").write_text(contract())
    with pytest.raises(ContractlangError) as info:
        load_terms([tmp_path / "a.spot", tmp_path / "c.spot"])
    assert [d.code for d in info.value.diagnostics] == ["E103"]


def test_load_terms_unreadable_file(tmp_path: Path) -> None:
    with pytest.raises(ContractlangError) as info:
        load_terms([tmp_path / "missing.spot"])
    assert [d.code for d in info.value.diagnostics] == ["E013"]


# --------------------------------------------------------------------------- docs

LANGUAGE_MD = ROOT / "docs" / "language.md"


def test_every_language_code_is_documented() -> None:
    # every syntax, name, type, structure code (E0xx-E3xx) and every W00x warning has an entry
    text = LANGUAGE_MD.read_text()
    wanted = [c for c in CODES if re.fullmatch(r"E[0-3]\d\d|W00\d", c)]
    assert "E101" in wanted
    assert "W003" in wanted
    missing = [c for c in wanted if f"**`{c}` —" not in text]
    assert missing == []


def _doc_examples() -> list[tuple[str, str]]:
    """(input, output) pairs of the Diagnostics section: an input block followed by a block of
    `error[...]`/`warning[...]` lines."""
    text = LANGUAGE_MD.read_text()
    section = text[text.index("### Syntax and input (E0xx)") :]
    blocks = re.findall(r"```\n(.*?)```", section, re.S)
    heads = ("error[", "warning[")
    return [
        (a, b)
        for a, b in itertools.pairwise(blocks)
        if b.startswith(heads)
        and not a.startswith(heads)
        and "…" not in a
        and not a.startswith("contractlang")
    ]


def _as_file(snippet: str) -> str:
    """A documented snippet as a file: clauses go in a USD contract (with a rate that never
    fires, unless the snippet has rates), `require` lines in a budget."""
    lines = snippet.strip("\n").split("\n")
    requires = [line for line in lines if line.startswith("require")]
    others = [line for line in lines if not line.startswith("require")]
    text = ""
    if others and others[0].startswith(("contract", "budget")):
        text += "\n".join(others) + "\n"
    elif others:
        rate = (
            ""
            if any(x.startswith("rate") for x in others)
            else "  rate 9 USD per gpu_hour when gpus > 100 gpus\n"
        )
        body = "\n".join("  " + line for line in others)
        text += f'contract "draft" {{\n  currency USD\n{rate}{body}\n}}\n'
    if requires:
        text += 'budget "b" {\n' + "\n".join("  " + r for r in requires) + "\n}\n"
    return text


def test_documented_messages_are_what_check_prints() -> None:
    examples = _doc_examples()
    assert len(examples) >= 35
    for snippet, output in examples:
        checked = check_texts([(_as_file(snippet), "x.spot")])
        headlines = [d.headline().split(": ", 1)[1] for d in checked.diagnostics]
        helps = [d.help for d in checked.diagnostics]
        for line in output.strip("\n").split("\n"):
            if line.startswith(("error[", "warning[")):
                assert line in headlines, (snippet, headlines)
            elif line.startswith("help: "):
                assert line.removeprefix("help: ") in helps, (snippet, helps)


# --------------------------------------------------------------------------- robustness

_ATOMS = [
    *FACTS,
    "promised_notice",
    "promised_restart",
    "spot",
    "reclaimed",
    "nonsense",
    "gross",
    "3",
    "2.10",
    "5%",
    "30 seconds",
    "1 hour",
    "8 gpus",
    "10 gpu_hours",
    "50 USD",
    "2 EUR",
    "4 minuts",
    "2.10 USD per gpu_hour",
    "trace.price per gpu_hour",
    "trace.price",
    '"H100-80G"',
    "true",
    "none",
]
_CALLS = ["coalesce", "min", "max", "mean", "sum", "p95", "p101", "share", "count", "foo"]
_BINARY = ["+", "-", "*", "/", "==", "!=", "<", ">=", "and", "or"]


def _expressions() -> st.SearchStrategy[str]:
    atoms = st.sampled_from(_ATOMS)

    def extend(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        return st.one_of(
            st.builds(lambda a, op, b: f"({a} {op} {b})", inner, st.sampled_from(_BINARY), inner),
            st.builds(lambda a: f"not ({a})", inner),
            st.builds(lambda a: f"-({a})", inner),
            st.builds(lambda a: f"10% of ({a})", inner),
            st.builds(
                lambda f, args: f"{f}({', '.join(args)})",
                st.sampled_from(_CALLS),
                st.lists(inner, max_size=3),
            ),
            st.builds(
                lambda a, opts: f"({a} in [{', '.join(opts)}])", inner, st.lists(inner, max_size=3)
            ),
        )

    return st.recursive(atoms, extend, max_leaves=8)


_PLACES = [
    "rate {e}",
    "rate 2 USD per gpu_hour when {e}",
    'exclude "x" allocation when {e}',
    'exclude "x" ({e}) when true',
    'credit "x" ({e}) when {e}',
    "cap credits at ({e}) per run",
    "billing increment ({e})",
    "promise reclaim notice ({e})",
]


@settings(max_examples=300, deadline=None)
@given(expr=_expressions(), place=st.sampled_from([*_PLACES, "require {e}"]))
def test_checker_never_crashes(expr: str, place: str) -> None:
    clause = place.format(e=expr)
    if place.startswith("require"):
        text = f'budget "b" {{ {clause} }}'
    else:
        text = f'contract "c" {{ currency USD promise restart within 1 hour {clause} }}'
    parsed = parse(text, "fuzz.spot")
    assume(parsed.file is not None)
    assert parsed.file is not None
    result = check(parsed.file)
    assert list(result.diagnostics) == sorted(result.diagnostics, key=sort_key)
    for d in result.diagnostics:
        assert d.code in CODES
        assert d.message
        assert d.message[0] in '`"' or d.message[0].islower(), d.message
        assert "Error" not in d.message
        d.render(parsed.source)  # renders without error
    # the same input gives the same diagnostics
    assert check(parsed.file) == result


def test_nesting_at_the_parsers_limit_checks() -> None:
    # the parser accepts up to 100 levels; the checker recurses over them, and explaining a
    # mismatch at the bottom walks the whole expression again
    depth = 95
    expr = "1 minute + (" * depth + "5 USD" + ")" * depth
    result = run(when(f"{expr} > 1 hour"))
    assert [d.code for d in result.diagnostics] == ["E201"]


def test_caps_may_repeat_at_a_level() -> None:
    # "the lesser of 30% of gross and 1000 USD per run": two run caps, the tighter binds
    clean(contract("cap credits at 30% of gross per run", "cap credits at 1000 USD per run"))


@pytest.mark.parametrize("limit", ["10 USD / 0", "none"])
def test_require_limit_without_a_value(limit: str) -> None:
    # a constant limit that is none (literally, or 10 USD ÷ 0) would leave nothing to compare
    diags = [d for d in run(budget(f"mean(net) <= {limit}")).diagnostics if d.is_error]
    assert [(d.code, d.span.line, d.span.col) for d in diags] == [("E213", 2, 24)]
    # line 2 is `  require mean(net) <= …`: the limit starts after 2 + 8 + 13 = 23 characters
