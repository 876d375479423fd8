"""The formatter: the canonical layout, comments kept, idempotence, refusing to change the
meaning, and `contractlang fmt`'s exit codes."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from contractlang import fmt
from contractlang.cli.app import app as cli_app
from contractlang.fmt import WIDTH, format_expr, format_file
from contractlang.lang import ast
from contractlang.pipeline import parsing
from contractlang.pipeline.language import FormatResult, format_source, parse
from contractlang.syntax.parser import Parsed

ROOT = Path(__file__).resolve().parents[1]
RULESETS = sorted((ROOT / "rulesets").glob("*.spot"))
#: The example file of docs/language.md ("An example"), verbatim (tests/test_check.py checks
#: the copy against the page).
DESIGN_EXAMPLE = ROOT / "tests" / "data" / "design_example.spot"


def formatted(text: str) -> str:
    result = format_source(text)
    assert result.text is not None, [d.message for d in result.diagnostics]
    return result.text


# --------------------------------------------------------------------------- rulesets


def test_there_are_rulesets() -> None:
    names = {p.name for p in RULESETS}
    assert {
        "aws-ec2-spot-linux.spot",
        "gcp-spot-vms.spot",
        "azure-spot-vms.spot",
        "coreweave-spot.spot",
        "northwind-negotiated.spot",
        "fy27-budget.spot",
    } <= names


@pytest.mark.parametrize("path", RULESETS, ids=lambda p: p.name)
def test_every_ruleset_is_a_fixed_point(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    result = format_source(text, str(path))
    assert result.diagnostics == ()
    assert result.text == text
    assert result.changed is False


def test_design_example_keeps_its_ast_and_comments() -> None:
    text = DESIGN_EXAMPLE.read_text(encoding="utf-8")
    before = parse(text)
    out = formatted(text)
    after = parse(out)
    assert after.file == before.file
    assert before.file is not None
    assert after.file is not None
    assert [c.text for c in after.file.comments] == [c.text for c in before.file.comments]
    assert formatted(out) == out
    # the aligned trailing comment moves to two spaces after its clause
    assert "  rate trace.price per gpu_hour  # the market price recorded on the allocation\n" in out


# --------------------------------------------------------------------------- the layout

MESSY = """\


# header comment
   # another, indented
contract   "messy"{ # on the header
currency USD rate 2 USD per gpu_hour when capacity==spot   # trailing
  rate   trace.price per gpu_hour   # market price
    when capacity == spot



  # about the exclusion
  exclude "x" allocation # before when
     when a == b and (c or d) and -(-x) == 1 - (2 - 3) + ((4 - 5))
  cap credits at (5 USD + 2 USD) per month
  billing increment (1 minute)
  credit "z" 1 USD when (a
    # inside the condition
    == b) # after
  # end of block
}  # after the block
budget "b" {}
# end of file
"""

MESSY_FORMATTED = """\
# header comment
# another, indented
contract "messy" {  # on the header
  currency USD
  rate 2 USD per gpu_hour when capacity == spot  # trailing
  rate trace.price per gpu_hour  # market price
    when capacity == spot

  # about the exclusion
  exclude "x" allocation  # before when
    when a == b and (c or d) and -(-x) == 1 - (2 - 3) + (4 - 5)
  cap credits at (5 USD + 2 USD) per month
  billing increment 1 minute
  # inside the condition
  credit "z" 1 USD when a == b  # after
  # end of block
}  # after the block

budget "b" {}

# end of file
"""


def test_messy_input_formats_to_the_canonical_text() -> None:
    assert formatted(MESSY) == MESSY_FORMATTED


def test_canonical_text_is_a_fixed_point() -> None:
    result = format_source(MESSY_FORMATTED)
    assert (result.text, result.changed) == (MESSY_FORMATTED, False)


def test_comments_are_all_kept_in_order() -> None:
    before = parse(MESSY).file
    after = parse(MESSY_FORMATTED).file
    assert before is not None
    assert after is not None
    assert [c.text for c in after.comments] == [c.text for c in before.comments]
    # header, another, on the header, trailing, market price, about the exclusion, before
    # when, inside the condition, after, end of block, after the block, end of file: 12
    assert len(after.comments) == 12


def test_blank_lines_between_clauses_are_kept_and_collapsed() -> None:
    text = 'contract "c" {\n\n\n  currency USD\n  precision 2\n\n\n\n  rounding half_up\n\n}\n'
    # none after `{` or before `}`; the run of three blank lines becomes one
    assert formatted(text) == (
        'contract "c" {\n  currency USD\n  precision 2\n\n  rounding half_up\n}\n'
    )


def test_blocks_are_separated_by_one_blank_line() -> None:
    text = 'contract "a" {}\n\n\n\nbudget "b" {}\ncontract "c" {}'
    assert formatted(text) == 'contract "a" {}\n\nbudget "b" {}\n\ncontract "c" {}\n'


def test_a_comment_stays_attached_to_the_block_below_it() -> None:
    text = 'contract "a" {}\n# about b\nbudget "b" {}\n'
    assert formatted(text) == 'contract "a" {}\n\n# about b\nbudget "b" {}\n'


def test_empty_and_comment_only_files() -> None:
    assert formatted("") == ""
    assert formatted("\n\n  \n") == ""
    assert formatted("   # one\n\n\n# two   ") == "# one\n\n# two\n"


def test_a_block_with_only_a_header_comment() -> None:
    assert formatted('budget "b" {  # nothing yet\n}') == 'budget "b" {  # nothing yet\n}\n'


def _rate_with_sku(width: int) -> str:
    """A rate clause whose one-line form, indented, is ``width`` columns."""
    # "  rate 1 USD per gpu_hour when sku == " is 2 + 36 = 38 columns; the string adds its
    # letters and two quotes: 38 + k + 2 = width, so k = width - 40
    sku = "x" * (width - 40)
    return f'rate 1 USD per gpu_hour when sku == "{sku}"'


def test_a_clause_of_exactly_the_width_stays_on_one_line() -> None:
    out = formatted(f'contract "c" {{ {_rate_with_sku(WIDTH)} }}')
    line = out.splitlines()[1]
    assert len(line) == WIDTH == 100
    assert line == "  " + _rate_with_sku(WIDTH)


def test_a_clause_one_column_wider_breaks_before_when() -> None:
    out = formatted(f'contract "c" {{ {_rate_with_sku(WIDTH + 1)} }}')
    sku = "x" * (WIDTH + 1 - 40)
    assert out == f'contract "c" {{\n  rate 1 USD per gpu_hour\n    when sku == "{sku}"\n}}\n'


def test_a_short_clause_written_on_two_lines_is_joined() -> None:
    text = 'contract "c" {\n  rate 1 USD per gpu_hour\n    when sku == "A"\n}\n'
    assert formatted(text) == 'contract "c" {\n  rate 1 USD per gpu_hour when sku == "A"\n}\n'


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a - (b - c)", "a - (b - c)"),
        ("(a - b) - c", "a - b - c"),
        ("(a * b) + c", "a * b + c"),
        ("a * (b + c)", "a * (b + c)"),
        ("a / (b * c)", "a / (b * c)"),
        ("(a or b) and c", "(a or b) and c"),
        ("a or (b and c)", "a or b and c"),
        ("(a and b) and c", "a and b and c"),
        ("a and (b and c)", "a and (b and c)"),
        ("not (a == b)", "not (a == b)"),
        ("not(a)", "not a"),
        ("not (not a)", "not (not a)"),
        ("(not a) == b", "(not a) == b"),
        ("-(-x)", "-(-x)"),
        ("-(a + b)", "-(a + b)"),
        ("(-a) * b", "-a * b"),
        ("5 % of (a + b)", "5% of (a + b)"),
        ("(5% of a) * b", "5% of a * b"),
        ("5% of (2 USD per gpu_hour)", "5% of 2 USD per gpu_hour"),
        ("(a + b) per gpu_hour", "(a + b) per gpu_hour"),
        ("(5% of x) per gpu_hour", "(5% of x) per gpu_hour"),
        ("(a == b) == c", "(a == b) == c"),
        ("(a in [x]) == b", "(a in [x]) == b"),
        ("x in [ a,b ,(c)]", "x in [a, b, c]"),
        ("x not   in [ ]", "x not in []"),
        ("coalesce( a , b )", "coalesce(a, b)"),
        ("p95( x )", "p95(x)"),
        ("trace . price per gpu_hour", "trace.price per gpu_hour"),
        ("2.10USD per gpu_hour", "2.10 USD per gpu_hour"),
        ('"say \\"hi\\""', '"say \\"hi\\""'),
        ("0.50", "0.50"),
        ("1 hour+30 minutes", "1 hour + 30 minutes"),
    ],
)
def test_minimal_parentheses_and_spacing(text: str, expected: str) -> None:
    out = formatted(f'budget "b" {{ require {text} }}')
    assert out == f'budget "b" {{\n  require {expected}\n}}\n'


def test_settings_that_need_parentheses_keep_them() -> None:
    text = (
        'contract "c" { billing minimum (1 minute + 30 seconds) '
        'exclude "x" (allocation + 1 hour) exclude "y" (allocation) '
        "cap credits at (10% of gross * 2) per run }"
    )
    assert formatted(text) == (
        'contract "c" {\n'
        "  billing minimum (1 minute + 30 seconds)\n"
        '  exclude "x" (allocation + 1 hour)\n'
        '  exclude "y" (allocation)\n'
        "  cap credits at (10% of gross * 2) per run\n"
        "}\n"
    )


def test_format_expr_without_source() -> None:
    a, b, c = ast.Name("a"), ast.Name("b"), ast.Name("c")
    assert format_expr(ast.Binary("-", a, ast.Binary("-", b, c))) == "a - (b - c)"
    # a number built by hand has no text: its value is written plainly
    assert format_expr(ast.Quantity(Decimal("1E+3"), "USD")) == "1000 USD"


def test_format_file_of_a_file_built_by_hand() -> None:
    file = ast.SpotFile(
        (
            ast.Contract("c", (ast.Currency("USD"), ast.Precision(2))),
            ast.Budget("b", ()),
        )
    )
    assert (
        format_file(file) == 'contract "c" {\n  currency USD\n  precision 2\n}\n\nbudget "b" {}\n'
    )


# --------------------------------------------------------------------------- refusing


def test_syntax_errors_are_returned_not_formatted() -> None:
    result = format_source('contract "c" { rate 2 USD per gpu_hour capacity == spot }')
    assert result.text is None
    assert result.changed is False
    assert [d.code for d in result.diagnostics] == ["E002"]


def test_refuses_when_the_output_would_change_the_meaning(monkeypatch: pytest.MonkeyPatch) -> None:
    real = format_file

    def drops_a_clause(file: ast.SpotFile) -> str:
        return real(file).replace("  precision 2\n", "")

    monkeypatch.setattr(fmt, "format_file", drops_a_clause)
    result = format_source('contract "c" { currency USD precision 2 }', "c.spot")
    assert result == FormatResult(None, False, result.diagnostics)
    (d,) = result.diagnostics
    assert d.code == "E012"
    assert (
        d.message
        == "formatting would change the meaning of the file, so the file was left as it is"
    )


def test_refuses_when_a_comment_would_be_lost(monkeypatch: pytest.MonkeyPatch) -> None:
    real = format_file
    monkeypatch.setattr(fmt, "format_file", lambda f: real(f).replace("  # keep me", ""))
    result = format_source('contract "c" { currency USD  # keep me\n}')
    assert [d.code for d in result.diagnostics] == ["E012"]
    assert "comments" in result.diagnostics[0].message


def test_refuses_when_the_output_does_not_parse(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fmt, "format_file", lambda f: "contract {")
    result = format_source('contract "c" {}')
    assert [d.code for d in result.diagnostics] == ["E012"]


def test_a_formatted_text_is_parsed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    parses: list[str] = []
    real = parsing.parse_text

    def counted(text: str | bytes, filename: str = "<input>") -> Parsed:
        parses.append(filename)
        return real(text, filename)

    monkeypatch.setattr(parsing, "parse_text", counted)
    formatted = 'contract "c" {\n  currency USD  # kept\n}\n'
    assert format_source(formatted, "a.spot") == FormatResult(formatted, False, ())
    assert format_source(formatted.encode(), "b.spot") == FormatResult(formatted, False, ())
    assert parses == ["a.spot", "b.spot"]
    assert format_source(formatted.replace("\n", "\r\n"), "c.spot").changed
    assert format_source("\ufeff" + formatted, "d.spot") == FormatResult(formatted, False, ())
    assert parses == ["a.spot", "b.spot", "c.spot", "c.spot", "d.spot"]  # changed: reparsed


# --------------------------------------------------------------------------- the command


@pytest.fixture
def app() -> typer.Typer:
    """The real command line."""
    return cli_app


UNFORMATTED = 'contract "c" {currency USD}'
FORMATTED = 'contract "c" {\n  currency USD\n}\n'


def test_check_exits_0_when_formatted(app: typer.Typer, tmp_path: Path) -> None:
    path = tmp_path / "ok.spot"
    path.write_text(FORMATTED, encoding="utf-8")
    result = CliRunner().invoke(app, ["fmt", "--check", str(path)])
    assert result.exit_code == 0
    assert result.stdout == ""
    assert result.stderr == "1 file already formatted\n"


def test_check_exits_1_and_lists_unformatted_files(app: typer.Typer, tmp_path: Path) -> None:
    ok, bad = tmp_path / "ok.spot", tmp_path / "bad.spot"
    ok.write_text(FORMATTED, encoding="utf-8")
    bad.write_text(UNFORMATTED, encoding="utf-8")
    result = CliRunner().invoke(app, ["fmt", "--check", str(ok), str(bad)])
    assert result.exit_code == 1
    assert result.stdout == f"would reformat {bad}\n"
    assert bad.read_text(encoding="utf-8") == UNFORMATTED  # --check changes nothing


def test_check_exits_2_on_a_syntax_error(app: typer.Typer, tmp_path: Path) -> None:
    broken, bad = tmp_path / "broken.spot", tmp_path / "bad.spot"
    broken.write_text('contract "c" {\n  currency USD\n', encoding="utf-8")
    bad.write_text(UNFORMATTED, encoding="utf-8")
    result = CliRunner().invoke(app, ["fmt", "--check", str(broken), str(bad)])
    assert result.exit_code == 2  # a syntax error outranks an unformatted file
    assert f'{broken}:1:14: error[E003]: the `{{` of `contract "c"` is never closed' in (
        result.stderr
    )
    assert result.stdout == f"would reformat {bad}\n"


def test_unreadable_and_non_utf8_files_exit_2(app: typer.Typer, tmp_path: Path) -> None:
    missing = tmp_path / "missing.spot"
    binary = tmp_path / "binary.spot"
    binary.write_bytes(b'contract "\xff" {}')
    result = CliRunner().invoke(app, ["fmt", str(missing), str(binary)])
    assert result.exit_code == 2
    assert f"{missing}: error[E013]: cannot read `{missing}`: no such file or directory" in (
        result.stderr
    )
    assert "error[E008]" in result.stderr


def test_rewrites_only_files_that_change(app: typer.Typer, tmp_path: Path) -> None:
    ok, bad = tmp_path / "ok.spot", tmp_path / "bad.spot"
    ok.write_text(FORMATTED, encoding="utf-8")
    bad.write_text(UNFORMATTED, encoding="utf-8")
    ok_mtime = ok.stat().st_mtime_ns
    result = CliRunner().invoke(app, ["fmt", str(ok), str(bad)])
    assert result.exit_code == 0
    assert result.stdout == f"reformatted {bad}\n"
    assert result.stderr == "1 file reformatted, 1 file already formatted\n"
    assert bad.read_text(encoding="utf-8") == FORMATTED
    assert ok.stat().st_mtime_ns == ok_mtime
    assert not list(tmp_path.glob(".*.tmp"))


def test_a_directory_stands_for_its_spot_files(app: typer.Typer, tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.spot").write_text(UNFORMATTED, encoding="utf-8")
    (tmp_path / "notes.txt").write_text("not a spot file", encoding="utf-8")
    result = CliRunner().invoke(app, ["fmt", "--check", str(tmp_path)])
    assert result.exit_code == 1
    assert result.stdout == f"would reformat {tmp_path / 'sub' / 'a.spot'}\n"


def test_stdin_to_stdout(app: typer.Typer) -> None:
    result = CliRunner().invoke(app, ["fmt", "-"], input=UNFORMATTED)
    assert result.exit_code == 0
    assert result.stdout == FORMATTED
    check = CliRunner().invoke(app, ["fmt", "--check", "-"], input=UNFORMATTED)
    assert check.exit_code == 1
    assert check.stdout == "would reformat <stdin>\n"
    broken = CliRunner().invoke(app, ["fmt", "-"], input="contract")
    assert broken.exit_code == 2
    assert "<stdin>:1:9: error[E010]" in broken.stderr


def test_stdin_cannot_be_mixed_with_files(app: typer.Typer, tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["fmt", "-", str(tmp_path / "a.spot")])
    assert result.exit_code == 2


def test_a_refusal_exits_3(
    app: typer.Typer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(fmt, "format_file", lambda f: "")
    path = tmp_path / "c.spot"
    path.write_text(FORMATTED, encoding="utf-8")
    result = CliRunner().invoke(app, ["fmt", str(path)])
    assert result.exit_code == 3
    assert "error[E012]" in result.stderr
    assert path.read_text(encoding="utf-8") == FORMATTED
