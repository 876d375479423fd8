"""Bad input always names its place, in our words: a trace file's broken row and line, a
`.spot` file's line whatever its line endings, the number that cannot be written; harmless
layout (byte-order marks, CRLF, trailing blank lines) is accepted in every format."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pytest
from support.cli import no_traceback, run
from support.events import frame, released, started
from support.scenario import evaluate_text

from contractlang import parse
from contractlang.errors import ContractlangError
from contractlang.pipeline.language import check_texts, format_source
from contractlang.trace import load_trace

HEADER = "run_id,alloc_id,ts,source,event,gpus"
ROWS = [
    "r1,a1,2025-01-01T00:00:00Z,scheduler,started,8",
    "r1,a1,2025-01-01T01:00:00Z,scheduler,released,",
]
NDJSON = [
    '{"run_id":"r1","alloc_id":"a1","ts":"2025-01-01T00:00:00Z","source":"scheduler",'
    '"event":"started","gpus":8}',
    '{"run_id":"r1","alloc_id":"a1","ts":"2025-01-01T01:00:00Z","source":"scheduler",'
    '"event":"released","gpus":null}',
]
#: Words from the reader libraries that a message must never show.
FOREIGN = re.compile(r"Error|Schema|polars|Tape|Exception|ComputeError|\bNone\b")


def write(tmp_path: Path, name: str, data: bytes | str) -> Path:
    path = tmp_path / name
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


def problem(path: Path) -> tuple[str, int, str]:
    with pytest.raises(ContractlangError) as info:
        load_trace(path)
    (d,) = [d for d in info.value.diagnostics if d.is_error]
    assert not FOREIGN.search(d.message), d.message
    return d.code, d.span.line, d.message


# --------------------------------------------------------------------------- trace files


def test_a_csv_row_with_too_many_fields_names_its_row_and_line(tmp_path: Path) -> None:
    path = write(tmp_path, "t.csv", "\n".join([HEADER, ROWS[0], ROWS[1] + ",extra"]) + "\n")
    code, row, message = problem(path)
    # the header is line 1, so data row 2 is line 3
    assert (code, row) == ("T017", 2)
    assert message == f"cannot read `{path}`: row 2 (line 3) has 7 fields, but the header names 6"


def test_a_csv_quote_never_closed_names_the_line_it_opens(tmp_path: Path) -> None:
    path = write(tmp_path, "t.csv", "\n".join([HEADER, ROWS[0], '"' + ROWS[1], ROWS[0]]) + "\n")
    code, row, message = problem(path)
    assert (code, row) == ("T017", 2)
    assert "a quote opened on line 3 is never closed" in message


def test_a_broken_ndjson_line_names_its_line_and_column(tmp_path: Path) -> None:
    path = write(tmp_path, "t.ndjson", "\n".join([NDJSON[0], NDJSON[1][:-1], NDJSON[0]]) + "\n")
    code, row, message = problem(path)
    assert (code, row) == ("T017", 2)
    # the second line lost its closing brace: the parser stops at its end
    assert message.startswith(f"cannot read `{path}`: line 2 is not valid JSON: ")
    assert f"(column {len(NDJSON[1])})" in message


def test_an_ndjson_line_that_is_not_an_object(tmp_path: Path) -> None:
    path = write(tmp_path, "t.ndjson", "\n".join([NDJSON[0], "[1, 2]"]) + "\n")
    assert problem(path)[:2] == ("T017", 2)


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("empty.csv", ""),
        ("empty.ndjson", ""),
        ("junk.parquet", "PAR1 but not really"),
        ("cut.parquet", None),
    ],
)
def test_unreadable_files_say_what_they_are_not(
    tmp_path: Path, name: str, content: str | None
) -> None:
    if content is None:
        good = tmp_path / "good.parquet"
        frame([started("r1", "a1", 0), released("r1", "a1", 60)]).write_parquet(good)
        content_bytes = good.read_bytes()[:100]
        path = write(tmp_path, name, content_bytes)
    else:
        path = write(tmp_path, name, content)
    code, _, message = problem(path)
    assert code == "T017"
    assert message.startswith(f"cannot read `{path}` as ")


LAYOUTS = {
    "plain.csv": "\n".join([HEADER, *ROWS]) + "\n",
    "crlf.csv": "\r\n".join([HEADER, *ROWS]) + "\r\n",
    "bom.csv": "\ufeff" + "\n".join([HEADER, *ROWS]) + "\n",
    "blank.csv": "\n".join([HEADER, *ROWS]) + "\n\n",
    "blanks.csv": "\r\n".join([HEADER, *ROWS]) + "\r\n\r\n  \r\n",
    "no-newline.csv": "\n".join([HEADER, *ROWS]),
    "plain.ndjson": "\n".join(NDJSON) + "\n",
    "bom.ndjson": "\ufeff" + "\n".join(NDJSON) + "\n",
    "crlf.ndjson": "\r\n".join(NDJSON) + "\r\n\r\n",
}


@pytest.mark.parametrize("name", sorted(LAYOUTS))
def test_harmless_layout_is_accepted_with_the_same_facts(tmp_path: Path, name: str) -> None:
    path = write(tmp_path, name, LAYOUTS[name])
    trace = load_trace(path)
    assert trace.summary.rows_read == 2  # blank lines are layout, not rows
    assert trace.summary.allocations == 1
    result = run("trace", "facts", path, "--format", "json")
    assert result.exit_code == 0, result.output
    baseline = run(
        "trace", "facts", write(tmp_path, "base.csv", LAYOUTS["plain.csv"]), "--format", "json"
    )
    assert json.loads(result.stdout)["summary"] == json.loads(baseline.stdout)["summary"]


# --------------------------------------------------------------------------- .spot text

CONTRACT_LINES = [
    'contract "c" {',
    "  currency USD",
    "  rate 2 USD per gpu_hour",
    "  rate 3 USD + 1 hour",
    "}",
]


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_spot_errors_name_their_line_whatever_the_line_endings(newline: str) -> None:
    text = newline.join(CONTRACT_LINES) + newline
    checked = check_texts([(text, "c.spot")])
    errors = [(d.code, d.span.line, d.span.col) for d in checked.diagnostics if d.is_error]
    # `3 USD + 1 hour` is on line 4; the `+` expression starts at column 8
    assert errors == [("E201", 4, 8)]


def test_fmt_rewrites_cr_line_endings() -> None:
    text = "\r".join(['contract "c" {', "  currency USD", "  rate 2 USD per gpu_hour", "}"]) + "\r"
    result = format_source(text, "c.spot")
    assert result.changed
    assert result.text == text.replace("\r", "\n")


@pytest.mark.parametrize(
    ("written", "help_"),
    [("1e400", None), ("1e-5", "write `0.00001`"), ("2.5E3", "write `2500`")],
)
def test_a_number_with_an_exponent_is_about_the_number(written: str, help_: str | None) -> None:
    r = parse(f'contract "c" {{\n  currency USD\n  rate {written} USD per gpu_hour  # 1e9\n}}\n')
    (d,) = r.diagnostics
    assert (d.code, d.span.line, d.span.col) == ("E004", 3, 8)
    assert (
        d.message == f"`{written}` is written with an exponent; numbers are written as plain digits"
    )
    if help_ is not None:
        assert d.help == help_


@pytest.mark.parametrize(
    "literal",
    ["1234567890123456789 USD", "0.1234567890123456789 USD", "12345678901234567890123456789 USD"],
)
def test_a_number_beyond_exact_digits_is_e213(literal: str) -> None:
    checked = check_texts(
        [(f'contract "c" {{ currency USD rate {literal} per gpu_hour }}', "c.spot")]
    )
    (d,) = [d for d in checked.diagnostics if d.is_error]
    assert d.code == "E213"
    assert "has more digits than contractlang keeps exactly" in d.message


@pytest.mark.parametrize(
    "clause",
    [
        "rate 2.10 USD per gpu_hour / 0",
        "rate 2.10 USD per gpu_hour / (2 - 2)",
        'credit "x" 10 USD / 0 when end_reason == reclaimed',
        'exclude "x" (1 hour / 0) when end_reason == reclaimed',
    ],
)
def test_a_constant_division_by_zero_is_caught_by_check(clause: str) -> None:
    text = f'contract "c" {{ currency USD rate 1 USD per gpu_hour {clause} }}'
    checked = check_texts([(text, "c.spot")])
    errors = [d for d in checked.diagnostics if d.is_error]
    assert [d.code for d in errors] == ["E213"]
    assert "divides by zero" in errors[0].message


def test_a_long_flat_sum_is_called_a_chain_not_a_nesting() -> None:
    chain = " + ".join(["1 hour"] * 150)
    r = parse(f'contract "c" {{ currency USD rate 2 USD per gpu_hour when runtime > {chain} }}')
    assert r.diagnostics[0].code == "E009"
    assert r.diagnostics[0].message == "a chain of more than 100 `+` is too long for one expression"
    nested = "(" * 0 + " + (".join(["1 hour"] * 120) + ")" * 119
    r = parse(f'contract "c" {{ currency USD rate 2 USD per gpu_hour when runtime > {nested} }}')
    assert r.diagnostics[0].message == "expression nested more than 100 levels deep"


def test_an_excerpt_of_a_huge_line_is_cut_around_the_span() -> None:
    padding = "x" * 400_000  # a line of about 400 KB
    rate = "rate 2 USD per gpu_hour"
    text = f'contract "c" {{ currency USD {rate} when sku == "{padding}" or sku == 5 }}'
    checked = check_texts([(text, "c.spot")])
    (d,) = [d for d in checked.diagnostics if d.is_error]
    rendered = d.render(checked.sources["c.spot"])
    excerpt, caret = rendered.splitlines()[1:3]
    assert len(excerpt) < 120
    assert len(caret) < 120
    # the caret stands under `sku == 5`
    offset = caret.index("^")
    assert excerpt[offset : offset + 8] == "sku == 5"


# --------------------------------------------------------------------------- evaluation


def test_trace_dot_a_schema_column_says_to_read_the_fact() -> None:
    spot = 'contract "c" {\n  currency USD\n  rate 2 USD per gpu_hour when trace.gpus > 0\n}\n'
    with pytest.raises(ContractlangError) as info:
        evaluate_text(spot, [started("r1", "a1", 0), released("r1", "a1", 60)])
    (d,) = info.value.diagnostics
    assert d.code == "E403"
    assert d.message == (
        "`trace.gpus` reads a column the trace schema defines; "
        "`trace.<column>` reads the columns beyond it"
    )
    assert d.help == "write the fact `gpus`"


def test_trace_dot_price_of_a_trace_without_prices_is_none() -> None:
    """`price` is the schema's one column terms read as `trace.price`: a trace without it (an
    imported sacct export) reads as none on every allocation, so the rate falls through — here
    to no rate at all (E401), whose help says the price is none; not E403."""
    spot = 'contract "c" {\n  currency USD\n  rate trace.price per gpu_hour\n}\n'
    with pytest.raises(ContractlangError) as info:
        evaluate_text(spot, frame([started("r1", "a1", 0), released("r1", "a1", 60)]).drop("price"))
    (d,) = info.value.diagnostics
    assert d.code == "E401"
    assert d.message.startswith("contract `c` prices no rate for 1 allocation(s)")
    assert "its price is none" in (d.help or "")


def test_trace_dot_price_of_a_trace_without_prices_falls_through() -> None:
    """With a rate after it, the allocation is priced by that rate: 1 GPU for 60 minutes at
    2.50 USD per GPU-hour is 2.50 USD."""
    spot = (
        'contract "c" {\n  currency USD\n  rate trace.price per gpu_hour\n'
        "  rate 2.50 USD per gpu_hour\n}\n"
    )
    rows = frame([started("r1", "a1", 0, gpus=1), released("r1", "a1", 60)]).drop("price")
    result = evaluate_text(spot, rows)
    c = result.contracts[0]
    assert c.money(c.totals.net_minor) == Decimal("2.50")


def test_a_column_of_records_is_described_in_words() -> None:
    spot = 'contract "c" {\n  currency USD\n  rate trace.meta per gpu_hour\n}\n'
    t0 = datetime(2025, 1, 1, tzinfo=UTC)
    rows = [
        {**started("r1", "a1", 0), "ts": t0, "meta": {"team": "llm"}},
        {**released("r1", "a1", 0), "ts": t0 + timedelta(hours=1), "meta": {"team": "llm"}},
    ]
    with pytest.raises(ContractlangError) as info:
        evaluate_text(spot, frame(rows))
    (d,) = info.value.diagnostics
    assert d.message == "trace column `meta` holds records, not numbers"


def test_an_unpriced_allocation_says_why(tmp_path: Path) -> None:
    spot = 'contract "c" {\n  currency USD\n  rate trace.price per gpu_hour\n}\n'
    with pytest.raises(ContractlangError) as info:
        evaluate_text(spot, [started("r1", "a1", 0, price="2.5"), released("r1", "a1", 60),
                             started("r2", "a2", 0, sku=""), released("r2", "a2", 60)])  # fmt: skip
    (d,) = info.value.diagnostics
    assert d.code == "E401"
    assert "`a2` of run `r2` (spot, no sku)" in d.message
    assert d.help is not None
    assert d.help.startswith("for `a2`, the rate at line 3 applies but its price is none")


def test_no_traceback_on_any_of_these_at_the_command_line(tmp_path: Path) -> None:
    for name, content in [("t.csv", HEADER + "\n" + ROWS[0] + ",x\n"), ("t.ndjson", "{\n")]:
        result = run("trace", "validate", write(tmp_path, name, content))
        no_traceback(result)
        assert result.exit_code == 2
