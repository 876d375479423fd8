"""`contractlang test` (docs/fixtures.md): a fixture without expectations fails with the hint,
``--update`` writes them and says so, a change fails with a readable diff, a broken manifest
is exit 2 with the key and its line, ``--filter`` and ``--format json``, and the highest exit
code wins."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.cli import no_traceback
from support.cli import run as run_cli

from contractlang.fixtures.manifest import load_fixture
from contractlang.fixtures.run import produce

CONTRACT = 'contract "c" {\n  currency USD\n  rate 2.00 USD per gpu_hour\n}\n'
# r1: 8 GPUs for 1 h; r2: 2 GPUs for 30 min
TRACE = """\
run_id,alloc_id,ts,source,event,gpus
r1,r1-a1,2025-01-01T00:00:00Z,scheduler,started,8
r1,r1-a1,2025-01-01T01:00:00Z,scheduler,released,
r2,r2-a1,2025-01-02T00:00:00Z,scheduler,started,2
r2,r2-a1,2025-01-02T00:30:00Z,scheduler,released,
"""
MANIFEST = """\
story = "two short runs at a flat rate"
terms = ["c.spot"]
trace = "trace.csv"
expected = "expected.json"
ledger = "expected-ledger.csv"
"""


def run(*args: object) -> tuple[int, str]:
    result = run_cli(*args)
    no_traceback(result)
    return result.exit_code, result.output


def make(folder: Path, manifest: str = MANIFEST, contract: str = CONTRACT) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "fixture.toml").write_text(manifest, encoding="utf-8")
    (folder / "c.spot").write_text(contract, encoding="utf-8")
    (folder / "trace.csv").write_text(TRACE, encoding="utf-8")
    return folder


@pytest.fixture
def fixture(tmp_path: Path) -> Path:
    """A fixture whose expectations are written (by ``--update``)."""
    folder = make(tmp_path / "flat")
    code, _ = run("test", "--update", folder)
    assert code == 0
    return folder


def test_without_expectations_a_fixture_fails_with_the_hint_then_update_writes_them(
    tmp_path: Path,
) -> None:
    folder = make(tmp_path / "flat")
    code, out = run("test", folder)
    assert code == 1
    assert "FAIL    " in out
    assert "two short runs at a flat rate" in out
    said = " ".join(out.split())
    assert f"no expected output yet: run `contractlang test --update {folder.as_posix()}`" in said
    assert "(it writes `expected.json`, `expected-ledger.csv`)" in said
    assert not (folder / "expected.json").exists()

    code, out = run("test", "--update", folder)
    assert code == 0
    assert f"wrote {(folder / 'expected.json').as_posix()}" in out
    assert f"wrote {(folder / 'expected-ledger.csv').as_posix()}" in out
    assert "1 fixture: 1 updated" in out

    code, out = run("test", folder)
    assert code == 0
    assert "1 fixture: 1 passed" in out
    # what was written: 8 GPU-h × 2.00 = 16.00 and 1 GPU-h × 2.00 = 2.00
    doc = json.loads((folder / "expected.json").read_text())
    assert doc["contracts"][0]["totals"]["net"] == "18.00"
    ledger = (folder / "expected-ledger.csv").read_text().splitlines()
    assert [line.rsplit(",", 1)[1] for line in ledger[1:]] == ["16.00", "2.00"]


def test_a_changed_rate_fails_with_the_figures_that_moved_and_by_how_much(fixture: Path) -> None:
    (fixture / "c.spot").write_text(CONTRACT.replace("2.00", "2.01"), encoding="utf-8")
    code, out = run("test", fixture)
    assert code == 1
    # r1: 8 GPU-h × 2.01 = 16.08 (+0.08); r2: 1 GPU-h × 2.01 = 2.01 (+0.01); net 18.09
    for line in [
        "  c",
        "    gross 18.00 → 18.09 USD (+0.09)",
        "    net 18.00 → 18.09 USD (+0.09)",
        "  c runs",
        "    run r1 net 16.00 → 16.08 USD (+0.08)",
        "    run r2 net 2.00 → 2.01 USD (+0.01)",
        "  c ledger, run r1, allocation r1-a1",
        "    charge amount 16.00 → 16.08 USD (+0.08)",
        "  terms",
    ]:
        assert f"\n  {line}\n" in out, line
    assert "charge term (2 lines) rate 2.00 USD per gpu_hour → rate 2.01 USD per" in out
    assert "`c.spot` sha256" in out
    assert f"accept it: contractlang test --update {fixture.as_posix()}" in " ".join(out.split())
    # within 80 columns, but for the lines that hold the fixture's (long, temporary) path
    assert max(len(line) for line in out.splitlines() if fixture.name not in line) <= 80


def test_update_says_which_files_it_changed(fixture: Path) -> None:
    expected_ledger = (fixture / "expected-ledger.csv").read_bytes()
    # a comment: the terms' text (and digest) change, no figure and no ledger line does
    (fixture / "c.spot").write_text("# flat\n" + CONTRACT.replace("\n}", " # list price\n}"))
    code, out = run("test", fixture)
    assert code == 1
    assert "no figure moved; only the inputs or the lines the results point at" in out
    assert "charge (2 lines) line 3 → 4" in out
    code, out = run("test", "--update", fixture)
    assert code == 0
    assert "wrote" in out
    assert f"wrote {(fixture / 'expected.json').as_posix()}" in out
    assert (fixture / "expected-ledger.csv").read_bytes() != expected_ledger  # its lines moved
    code, out = run("test", "--update", fixture)
    assert code == 0
    assert "wrote" not in out
    assert "1 fixture: 1 passed" in out


@pytest.mark.parametrize("spoil", ["folder", "read-only", "under a file"])
def test_update_writes_a_fixtures_expectations_together_or_not_at_all(
    tmp_path: Path, spoil: str
) -> None:
    ledger = "sub/expected-ledger.csv" if spoil == "under a file" else "expected-ledger.csv"
    first = make(tmp_path / "a-first", MANIFEST.replace("expected-ledger.csv", ledger))
    second = make(tmp_path / "b-second")
    (first / "sub").mkdir()
    code, _ = run("test", "--update", tmp_path)
    assert code == 0
    for folder in (first, second):  # both expectations of both fixtures move
        (folder / "c.spot").write_text(CONTRACT.replace("2.00", "2.01"), encoding="utf-8")
    target = first / ledger
    if spoil == "folder":  # a folder where the ledger should be: root cannot write it either
        target.unlink()
        target.mkdir()
        reason = "it is a folder"
    elif spoil == "read-only":  # refused by its mode, which holds for root too
        target.chmod(0o444)
        reason = "the file is read-only"
    else:  # a path through a regular file
        target.unlink()
        (first / "sub").rmdir()
        (first / "sub").write_text("", encoding="utf-8")
        reason = "not a directory"
    before = {p.name: p.read_bytes() for p in first.iterdir() if p.is_file()}
    result = run_cli("test", "--update", tmp_path)
    no_traceback(result)
    assert result.exit_code == 2
    out = result.output
    assert f"BROKEN  {first.as_posix()}" in out
    assert f"error[E501]: cannot write `{target}`: {reason}" in result.stderr
    assert f"wrote {(first / 'expected.json').as_posix()}" not in out
    assert "to write the expected output anew" not in out
    assert f"updated {second.as_posix()}" in out  # the next fixture ran, and was updated
    assert f"wrote {(second / 'expected-ledger.csv').as_posix()}" in out
    assert "2 fixtures: 1 updated, 1 broken" in out
    # the first fixture's expectations as they were: its document was not rewritten alone
    assert {p.name: p.read_bytes() for p in first.iterdir() if p.is_file()} == before
    assert not [p for p in first.rglob(".*") if p.is_file()]  # no temporary file left
    code, out = run("test", second)
    assert code == 0
    doc = json.loads(run_cli("test", "--update", tmp_path, "--format", "json").stdout)
    assert [f["status"] for f in doc["fixtures"]] == ["broken", "pass"]
    (diag,) = doc["fixtures"][0]["diagnostics"]
    assert (diag["code"], diag["message"]) == ("E501", f"cannot write `{target}`: {reason}")


BROKEN = [
    (
        'story = "s"\nterms = ["c.spot"]\ntrase = "trace.csv"\n',
        "3:1: error[F003]: unknown key `trase`",
    ),
    ('terms = ["c.spot"]\ntrace = "trace.csv"\n', "1:1: error[F004]: missing key `story`"),
    (
        'story = "s"\nterms = "c.spot"\ntrace = "trace.csv"\n',
        '2:9: error[F005]: `terms` must be a list in brackets, not `"c.spot"`',
    ),
    (
        'story = "s"\nterms = ["c.spot"]\ntrace = "trace.csv"\nchecked_by_hand = "yes"\n',
        '4:19: error[F005]: `checked_by_hand` must be `true` or `false`, not `"yes"`',
    ),
    ('story = "s"\nterms = ["nope.spot"]\ntrace = "trace.csv"\n', "2:9: error[F007]: `nope.spot`"),
    ('story = "s"\nterms = ["c.spot"]\ntrace = "nope.csv"\n', "3:9: error[F007]: `nope.csv`"),
    (
        'story = "s"\nterms = ["c.spot"]\n',
        "error[F006]: a fixture needs a `trace` or a `[generate]`",
    ),
    (
        'story = "s"\nterms = ["c.spot"]\ntrace = "trace.csv"\n[generate]\nruns = 2\nseed = 1\n',
        "3:9: error[F006]: a fixture needs a `trace` or a `[generate]` table, not both",
    ),
    (
        'story = "s"\nterms = ["/etc/c.spot"]\ntrace = "trace.csv"\n',
        "2:9: error[F006]: `/etc/c.spot` must be relative to the fixture's folder",
    ),
    (
        'story = "s"\nterms = ["c.spot"]\ntrace = "trace.csv"\nexpected = "e.txt"\n',
        "4:12: error[F006]: `expected` must name a `.json` file, not `e.txt`",
    ),
    (
        'story = "s"\nterms = ["c.spot"]\ntrace = "trace.csv"\nledger = "trace.csv"\n',
        "4:10: error[F006]: `ledger` is the same file as `trace`",
    ),
    (
        'story = "s"\nterms = ["c.spot"]\ntrace = "trace.csv"\nledger = "../b/trace.csv"\n',
        "4:10: error[F006]: `ledger` must be inside the fixture's folder, not `../b/trace.csv`",
    ),
    (
        'story = "s"\nterms = ["c.spot"]\ntrace = "trace.csv"\nopen_at = 2025-01-01T00:00:00\n',
        "4:11: error[F006]: `open_at` needs a UTC offset",
    ),
    ('story = "s"\nterms = [\n', "error[F002]: not valid TOML"),
    (
        'story = ""\nterms = []\ntrace = "trace.csv"\n',
        "2:9: error[F006]: `terms` must not be empty",
    ),
    (
        'story = "s"\nterms = ["c.spot"]\n[generate]\nruns = 0\nseed = 1\n',
        "4:8: error[F006]: `generate.runs` must be at least 1, not `0`",
    ),
]


@pytest.mark.parametrize(("manifest", "said"), BROKEN)
def test_a_broken_manifest_names_the_key_and_its_line(
    tmp_path: Path, manifest: str, said: str
) -> None:
    folder = make(tmp_path / "broken", manifest)
    code, out = run("test", folder)
    assert code == 2
    assert f"BROKEN  {folder.as_posix()}" in out
    assert f"{(folder / 'fixture.toml').as_posix()}:{said}" in out or (
        said.startswith("error") and said in out
    )
    assert "1 fixture: 1 broken" in out


def test_update_may_not_write_an_expectation_over_another_fixtures_trace(tmp_path: Path) -> None:
    a = make(tmp_path / "a", MANIFEST.replace("expected-ledger.csv", "../b/trace.csv"))
    b = make(tmp_path / "b")
    code, out = run("test", "--update", a, b)
    assert code == 2
    assert "`ledger` must be inside the fixture's folder, not `../b/trace.csv`" in out
    assert (b / "trace.csv").read_text(encoding="utf-8") == TRACE


def test_a_manifest_that_is_not_text_is_f001(tmp_path: Path) -> None:
    folder = make(tmp_path / "binary")
    (folder / "fixture.toml").write_bytes(b'story = "\xff"\n')
    code, out = run("test", folder)
    assert code == 2
    assert "error[F001]: cannot read" in out
    assert "it is not UTF-8 text" in out


def test_the_other_fixtures_still_run_and_the_highest_code_wins(
    tmp_path: Path, fixture: Path
) -> None:
    make(tmp_path / "broken", MANIFEST + "colour = 1\n")
    code, out = run("test", tmp_path)
    assert code == 2
    assert "2 fixtures: 1 passed, 1 broken" in out
    (fixture / "c.spot").write_text(CONTRACT.replace("2.00", "3.00"), encoding="utf-8")
    code, out = run("test", tmp_path)
    assert code == 2
    assert "2 fixtures: 1 failed, 1 broken" in out


def test_bad_terms_or_trace_make_a_broken_fixture_that_update_leaves_alone(fixture: Path) -> None:
    (fixture / "c.spot").write_text('contract "c" {\n  currency USD\n}\n', encoding="utf-8")
    code, out = run("test", "--update", fixture)
    assert code == 2
    assert "error[E305]" in out  # a contract with no rate
    assert "wrote" not in out
    (fixture / "c.spot").write_text(CONTRACT, encoding="utf-8")
    (fixture / "trace.csv").write_text(TRACE.replace("scheduler,started,8", "scheduler,started,-8"))
    code, out = run("test", fixture)
    assert code == 2
    assert "trace.csv: row 1:" in out


def test_an_expectation_that_cannot_be_read_is_f009_and_update_writes_it_anew(
    fixture: Path,
) -> None:
    (fixture / "expected.json").write_text('{"schema": "contractlang.evaluate/1",\n  "x": }\n')
    code, out = run("test", fixture)
    assert code == 2
    assert "expected.json:2:8: error[F009]: the expected output" in out
    assert "is not JSON" in out
    (fixture / "expected.json").write_text('{"schema": "something.else/2"}\n')
    code, out = run("test", fixture)
    assert code == 2
    assert "is not a `contractlang.evaluate/1` document" in out
    assert "to write the expected output anew:" in out
    code, out = run("test", "--update", fixture)
    assert code == 0
    assert "wrote" in out
    code, _ = run("test", fixture)
    assert code == 0


COLUMNS = "contract,run_id,alloc_id,kind,term,line,month,date,quantity_gpu_hours,amount"
LISTED = ", ".join(f"`{c}`" for c in COLUMNS.split(","))


@pytest.mark.parametrize(
    ("header", "said"),
    [
        (COLUMNS.removesuffix(",amount"), "`amount` is missing"),
        (
            COLUMNS.replace("amount", "amount_usd"),
            "`amount` is missing; `amount_usd` is not a ledger column",
        ),
        (COLUMNS + ",note", "`note` is not a ledger column"),
        (COLUMNS.replace("term", "line"), "`term` is missing; `line` is named twice"),
        (COLUMNS.replace("quantity_gpu_hours,amount", "amount,quantity_gpu_hours"), None),
    ],
    ids=["missing", "renamed", "extra", "twice", "reordered"],
)
def test_an_expected_ledger_without_the_ledgers_columns_is_f009_naming_them(
    fixture: Path, header: str, said: str | None
) -> None:
    ledger = fixture / "expected-ledger.csv"
    lines = ledger.read_text(encoding="utf-8").splitlines()
    assert lines[0] == COLUMNS
    rows = [dict(zip(COLUMNS.split(","), line.split(","), strict=True)) for line in lines[1:]]
    columns = header.split(",")
    body = [",".join(row.get(c, "x") for c in columns) for row in rows]
    ledger.write_text("\n".join([header, *body]) + "\n", encoding="utf-8")
    code, out = run("test", fixture)
    if said is None:  # the same columns in another order: the same ledger
        assert code == 0, out
        return
    assert code == 2
    assert f"BROKEN  {fixture.as_posix()}" in out
    flat = " ".join(out.split())
    error = f"error[F009]: the expected output `{ledger}` does not have the ledger's columns:"
    assert f"{ledger.as_posix()}:1:1: {error} {said}" in flat
    assert f"a ledger's columns are {LISTED}" in flat
    assert "to write the expected output anew" in out
    code, _ = run("test", "--update", fixture)
    assert code == 0
    assert ledger.read_text(encoding="utf-8").splitlines()[0] == COLUMNS


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("", "1:1: error[F009]: {} does not have the ledger's columns: it has no header"),
        (
            COLUMNS + "\nc,r1,r1-a1,charge,t,3,2025-01,2025-01-01,8.000000,16.00,oops\n",
            "2:1: error[F009]: {} has a row of 11 fields under its 10 columns",
        ),
        (COLUMNS + "\nc,r1\n", "2:1: error[F009]: {} has a row of 2 fields under its 10 columns"),
    ],
    ids=["empty", "a row too long", "a row too short"],
)
def test_an_expected_ledger_whose_rows_do_not_fit_its_columns_is_f009(
    fixture: Path, text: str, said: str
) -> None:
    ledger = fixture / "expected-ledger.csv"
    ledger.write_text(text, encoding="utf-8")
    code, out = run("test", fixture)
    assert code == 2  # not a failure with empty diff lines, nor a crash
    said = said.format(f"the expected output `{ledger}`")
    assert f"{ledger.as_posix()}:{said}" in " ".join(out.split())


def test_paths_that_hold_no_fixture_are_f008(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, out = run("test", tmp_path / "nowhere")
    assert code == 2
    assert "error[F008]:" in out
    assert "does not exist" in out
    (tmp_path / "empty").mkdir()
    code, out = run("test", tmp_path / "empty")
    assert code == 2
    assert "no fixture under" in out
    monkeypatch.chdir(tmp_path)
    code, out = run("test")  # the default, fixtures/, is not there
    assert code == 2
    assert "`fixtures` does not exist" in out
    assert "give the folders that hold your fixtures" in out


def test_folders_are_searched_sorted_skipping_hidden_ones(tmp_path: Path) -> None:
    for name in ("b-second", "a-first", "nested/c-third", ".hidden/d"):
        make(tmp_path / name)
    code, out = run("test", "--update", tmp_path)
    assert code == 0
    found = [line.split()[1] for line in out.splitlines() if line.startswith("updated")]
    assert found == [(tmp_path / n).as_posix() for n in ("a-first", "b-second", "nested/c-third")]


def test_filter_selects_by_part_of_the_path_or_a_glob(tmp_path: Path) -> None:
    for name in ("aws-first-hour", "gcp-first-minute", "gcp-minimum"):
        make(tmp_path / name)
    code, out = run("test", "--update", tmp_path, "--filter", "gcp")
    assert "2 fixtures: 2 updated" in out
    code, out = run("test", tmp_path, "--filter", "*-first-*")
    assert code == 1  # aws-first-hour has no expectation yet
    assert "2 fixtures: 1 passed, 1 failed" in out
    code, out = run("test", tmp_path, "--filter", "azure")
    assert code == 2
    assert "error[F008]: no fixture matches `--filter azure`" in out
    assert "the fixtures found are `aws-first-hour`, `gcp-first-minute`, `gcp-minimum`" in out


def test_json_is_one_object_per_fixture_with_its_status_and_changed_figures(
    tmp_path: Path, fixture: Path
) -> None:
    make(tmp_path / "new")
    (fixture / "c.spot").write_text(CONTRACT.replace("2.00", "2.01"), encoding="utf-8")
    code, text = run("test", tmp_path, "--format", "json")
    assert code == 1
    doc = json.loads(text)
    assert doc["schema"] == "contractlang.test/1"
    assert doc["summary"] == {"fixtures": 2, "passed": 0, "updated": 0, "failed": 2, "broken": 0}
    flat, new = doc["fixtures"]
    assert flat["fixture"] == fixture.as_posix()
    assert flat["status"] == "fail"
    assert flat["figures_moved"] is True
    assert {
        "kind": "figure",
        "where": "c",
        "what": "net",
        "old": "18.00",
        "new": "18.09",
        "unit": "USD",
        "delta": "+0.09",
    } in flat["changes"]
    assert new["status"] == "no expectation"
    assert new["missing"] == [
        (tmp_path / "new" / p).as_posix() for p in ("expected.json", "expected-ledger.csv")
    ]
    _, again = run("test", tmp_path, "--format", "json")
    assert again == text


def test_a_generated_trace_gives_the_document_evaluate_gives_for_the_same_trace_file(
    tmp_path: Path,
) -> None:
    folder = make(
        tmp_path / "generated",
        'story = "forty generated runs"\nterms = ["c.spot"]\n[generate]\nruns = 40\nseed = 7\n',
    )
    code, _ = run("test", "--update", folder)
    assert code == 0
    code, _ = run("trace", "generate", "--runs", "40", "--seed", "7", "--out", tmp_path / "t.csv")
    assert code == 0
    result = run_cli("evaluate", folder / "c.spot", tmp_path / "t.csv", "--format", "json")
    # the digest names the events, not the file: the same document from the CSV file
    assert result.stdout == (folder / "expected.json").read_text()


def test_warnings_name_their_file_as_the_manifest_does_from_any_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the second rate is never reached (W001): a warning with its file in the document
    contract = CONTRACT.replace("gpu_hour\n", "gpu_hour\n  rate 3.00 USD per gpu_hour\n")
    folder = make(tmp_path / "warned", contract=contract)
    monkeypatch.chdir(tmp_path)
    from_above = produce(load_fixture(Path("warned")))
    monkeypatch.chdir(folder)
    from_inside = produce(load_fixture(Path(".")))
    assert from_above == from_inside
    (warning,) = json.loads(from_above.document)["warnings"]
    assert warning["code"] == "W001"
    assert warning["file"] == "c.spot"


def test_help_names_every_option(tmp_path: Path) -> None:
    code, out = run("test", "--help")
    assert code == 0
    for word in ("[FOLDER...]", "--update", "--filter", "PATTERN", "--format", "text|json"):
        assert word in out


def test_an_expectation_with_a_number_too_long_to_read_is_f009_not_a_crash(
    fixture: Path,
) -> None:
    (fixture / "expected.json").write_text('{"schema": ' + "9" * 5000 + "}\n")
    code, out = run("test", fixture)
    assert code == 2, out  # not a ValueError (Python's 4,300-digit limit), exit 3
    assert "error[F009]: the expected output" in out
    assert "is not JSON that can be read: a number in it has more digits than can be read" in out


def test_an_expectation_nested_too_deeply_is_f009_not_a_crash(fixture: Path) -> None:
    (fixture / "expected.json").write_text("[" * 100_000 + "]" * 100_000 + "\n")
    code, out = run("test", fixture)
    assert code == 2
    assert "error[F009]: the expected output" in out
    assert "is not JSON that can be read: lists or objects nested too deeply" in out
    code, _ = run("test", "--update", fixture)
    assert code == 0
    code, _ = run("test", fixture)
    assert code == 0


def test_expected_figures_of_28_digits_and_more_are_compared_exactly(fixture: Path) -> None:
    doc = json.loads((fixture / "expected.json").read_text())
    totals = doc["contracts"][0]["totals"]
    totals["net"] = "12345678901234567890123456.78"  # 28 significant digits
    totals["gross"] = "-123456789012345678901234567.891"  # 30
    (fixture / "expected.json").write_text(json.dumps(doc, indent=2) + "\n")
    ledger = (fixture / "expected-ledger.csv").read_text()
    (fixture / "expected-ledger.csv").write_text(
        ledger.replace(",16.00\n", ",-123456789012345678901234567.891\n")
    )
    result = run_cli("test", fixture)
    no_traceback(result)  # not a decimal.InvalidOperation, exit 3
    assert result.exit_code == 1
    said = " ".join(result.output.split())
    for line in [
        # 18.00 + 123456789012345678901234567.891 = 123456789012345678901234585.891
        "gross -123456789012345678901234567.891 → 18.00 USD (+123456789012345678901234585.891)",
        # 18.00 − 12345678901234567890123456.78 = −12345678901234567890123438.78
        "net 12345678901234567890123456.78 → 18.00 USD (-12345678901234567890123438.78)",
        # r1's one line: 16.00 + 123456789012345678901234567.891 = …583.891
        "run r1 net -123456789012345678901234567.891 → 16.00 USD"
        " (+123456789012345678901234583.891)",
        "charge amount -123456789012345678901234567.891 → 16.00 USD"
        " (+123456789012345678901234583.891)",
    ]:
        assert line in said, line
