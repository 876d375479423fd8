"""Public availability traces read into capacity over time
(contractlang.importers.availability.read): both formats, every malformed input with its place,
and the real traces of ../shared/realdata."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest
from support.cli import no_traceback, run
from support.workloads import write_workload

from contractlang.diagnostics import render_all
from contractlang.errors import ContractlangError
from contractlang.importers.availability.read import (
    Stretch,
    parse_availability,
    parse_bamboo,
    parse_skypilot,
    read_availability,
)

S = 1_000_000  # µs per second
REALDATA = Path(__file__).resolve().parents[2] / "shared" / "realdata" / "traces"


def test_skypilot_reads_its_own_gap_and_counts_instances() -> None:
    text = '{"metadata": {"gap_seconds": 195}, "data": [0, 3, 3, 16, 0, 0, 1]}'
    a = parse_skypilot(text, "t.json")
    # data[i] covers [i·195, (i+1)·195) s; equal neighbours merge: 0 | 3 3 | 16 | 0 0 | 1
    assert a.stretches == (
        Stretch(0, 195 * S, 0),
        Stretch(195 * S, 3 * 195 * S, 3),
        Stretch(3 * 195 * S, 4 * 195 * S, 16),
        Stretch(4 * 195 * S, 6 * 195 * S, 0),
        Stretch(6 * 195 * S, 7 * 195 * S, 1),
    )
    assert a.span_us == 7 * 195 * S
    assert a.peak == 16
    # non-zero is available: ticks 1, 2, 3 and 6 → 4 of 7 ticks; two held stretches
    assert a.held(1) == ((195 * S, 4 * 195 * S), (6 * 195 * S, 7 * 195 * S))
    assert a.available_fraction(1) == Fraction(4, 7)
    # with 4 instances needed only the 16-instance tick holds
    assert a.held(4) == ((3 * 195 * S, 4 * 195 * S),)
    assert a.available_fraction(4) == Fraction(1, 7)


def test_skypilot_gap_may_be_fractional_and_extra_keys_are_ignored() -> None:
    text = '{"metadata": {"gap_seconds": 0.5}, "data": [1, 0], "prices": [0.918, 0.918]}'
    a = parse_availability(text, "t.json")
    assert a.format == "skypilot"
    assert a.stretches == (Stretch(0, S // 2, 1), Stretch(S // 2, S, 0))


def test_bamboo_counts_nodes_after_every_row_of_a_time() -> None:
    text = "0,add,n1\n0,add,n2\n60000,remove,n1\n60000,add,n3\n90000,remove,n2\n120000,add,n1\n"
    a = parse_bamboo(text, "t.csv")
    # 0 ms: n1, n2 → 2; 60 s: −n1 +n3 → still 2 (merged); 90 s: −n2 → 1; 120 s: +n1 → 2, the
    # last row, where the trace ends
    assert a.stretches == (Stretch(0, 90 * S, 2), Stretch(90 * S, 120 * S, 1))
    assert a.span_us == 120 * S
    assert a.held(2) == ((0, 90 * S),)


def test_bamboo_before_the_first_row_nothing_is_available() -> None:
    a = parse_availability("30000,add,a\n90000,remove,a\n", "t.csv")
    assert a.format == "bamboo"
    assert a.stretches == (Stretch(0, 30 * S, 0), Stretch(30 * S, 90 * S, 1))


BAD: list[tuple[str, str, str, str]] = [
    # (name, text, headline expected, a fragment of the rendering)
    ("syntax.json", '{"metadata": {"gap_seconds": 60}, "data": [1,', "t.json:1:46: error[E608]",
     "not valid JSON"),
    ("no_gap.json", '{"data": [1]}', "t.json:1:1: error[E608]", "missing `metadata.gap_seconds`"),
    ("zero_gap.json", '{"metadata": {"gap_seconds": 0}, "data": [1]}', "t.json:1:30: error[E609]",
     "`gap_seconds` must be a positive number of seconds"),
    ("text_gap.json", '{"metadata": {"gap_seconds": "300"}, "data": [1]}',
     "t.json:1:30: error[E609]", 'not `"300"`'),
    ("negative.json", '{"metadata": {"gap_seconds": 60},\n "data": [1, 1,\n  0, -2]}',
     "t.json:3:6: error[E609]", "`data[3]` is `-2`"),
    ("float.json", '{"metadata": {"gap_seconds": 60}, "data": [1, 0.5]}',
     "t.json:1:47: error[E609]", "`data[1]` is `0.5`"),
    ("bool.json", '{"metadata": {"gap_seconds": 60}, "data": [true]}',
     "t.json:1:44: error[E609]", "`data[0]` is `true`"),
    ("empty.json", '{"metadata": {"gap_seconds": 60}, "data": []}', "t.json:1:43: error[E608]",
     "`data` is empty"),
    ("array.json", "[1, 2]", "t.json:1:1: error[E608]", "expected a JSON object"),
    ("fields.csv", "0,add,n1\n10,add\n", "t.csv:2:1: error[E608]", "a row has 2 field(s)"),
    ("time.csv", "0,add,n1\n1.5,add,n2\n", "t.csv:2:1: error[E609]",
     "time `1.5` is not a whole number of milliseconds"),
    # `²` passes `str.isdigit` but not `int`: it must be a message, not an internal error
    ("digit.csv", "0,add,n1\n²,add,n2\n", "t.csv:2:1: error[E609]",
     "time `²` is not a whole number of milliseconds"),
    ("back.csv", "5,add,n1\n1,add,n2\n", "t.csv:2:1: error[E609]",
     "time goes back: `1` ms after `5` ms"),
    ("event.csv", "0,add,n1\n10,ad,n2\n", "t.csv:2:4: error[E609]", "did you mean `add`?"),
    ("twice.csv", "0,add,n1\n10,add,n1\n", "t.csv:2:8: error[E609]",
     "node `n1` is added again; it was added on line 1"),
    ("absent.csv", "0,add,n1\n10,remove,n2\n", "t.csv:2:11: error[E609]",
     "node `n2` is removed but is not present"),
    ("nothing.csv", "\n\n", "t.csv: error[E608]", "the file has no rows"),
    ("instant.csv", "0,add,n1\n0,add,n2\n", "t.csv: error[E608]", "the trace spans no time"),
]  # fmt: skip


@pytest.mark.parametrize(("name", "text", "headline", "fragment"), BAD, ids=[b[0] for b in BAD])
def test_malformed_traces_name_the_place(
    name: str, text: str, headline: str, fragment: str
) -> None:
    fmt = "skypilot" if name.endswith(".json") else "bamboo"
    with pytest.raises(ContractlangError) as info:
        parse_availability(text, "t.json" if fmt == "skypilot" else "t.csv", fmt)
    (diag,) = info.value.diagnostics
    shown = render_all(info.value.diagnostics, info.value.sources)
    assert shown.startswith(headline), shown
    assert fragment in shown
    assert "Traceback" not in shown
    assert diag.message == diag.message.lower()[:1] + diag.message[1:]


def test_files_that_cannot_be_read(tmp_path: Path) -> None:
    (tmp_path / "utf16.json").write_bytes('{"data": []}'.encode("utf-16"))
    (tmp_path / "t.txt").write_text("0,add,a\n")
    cases = {
        tmp_path / "missing.json": "no such file or directory",
        tmp_path / "utf16.json": "it is not UTF-8 text",
        tmp_path / "t.txt": "is neither `.json` (SkyPilot) nor `.csv` (Bamboo)",
    }
    for path, fragment in cases.items():
        with pytest.raises(ContractlangError) as info:
            read_availability(path)
        (diag,) = info.value.diagnostics
        assert diag.code == "E607"
        assert fragment in diag.message


# --------------------------------------------------------------------------- the real traces

needs_realdata = pytest.mark.skipif(not REALDATA.is_dir(), reason="../shared/realdata is absent")


@pytest.mark.realdata
@needs_realdata
def test_every_skypilot_and_spothedge_file_reads_with_its_own_gap() -> None:
    files = sorted(REALDATA.glob("skypilot-spot-traces/**/*.json"))
    files += sorted(REALDATA.glob("spothedge/**/*.json"))
    assert len(files) == 34 + 6  # MANIFEST: 34 SkyPilot JSON files (and a README), 6 SpotHedge
    for f in files:
        raw = json.loads(f.read_text())
        gap, data = raw["metadata"]["gap_seconds"], raw["data"]
        a = read_availability(f)
        assert a.span_us == len(data) * gap * S, f
        assert a.peak == max(data)
        # availability counted independently: ticks with a non-zero count
        assert a.available_fraction(1) == Fraction(sum(1 for x in data if x), len(data))
        if max(data) > 1:  # multi-node files: needing 2 counts the ticks with at least 2
            assert a.available_fraction(2) == Fraction(sum(1 for x in data if x >= 2), len(data))


@pytest.mark.realdata
@needs_realdata
def test_bamboo_p3_matches_its_manifest() -> None:
    a = read_availability(REALDATA / "bamboo" / "traces" / "p3-trace.csv")
    # MANIFEST: 344 rows, 177 adds, 167 removes, peak 32 nodes, last event at 40,920,000 ms
    assert a.span_us == 40_920_000 * 1000
    assert a.peak == 32
    rows = (REALDATA / "bamboo" / "traces" / "p3-trace.csv").read_text().split()
    adds = sum(1 for r in rows if ",add," in r)
    removes = sum(1 for r in rows if ",remove," in r)
    assert (len(rows), adds, removes) == (344, 177, 167)
    # the count just before the end is what the rows before the last time leave: the last
    # row (a remove at the last instant) ends the trace
    assert a.stretches[-1].count == 177 - 167 + 1


# --------------------------------------------------------------------------- lines of a Bamboo file


@pytest.mark.parametrize("odd", ["\u2028", "\u2029", "\x85", "\x0c"])
def test_a_node_name_holding_a_line_separator_keeps_every_line_its_number(odd: str) -> None:
    text = f"0,add,a\n0,add,b\n60000,add,n{odd}1\n120000,remove,a\n180000,remove,x\n"
    with pytest.raises(ContractlangError) as info:
        parse_bamboo(text, "t.csv")
    shown = render_all(info.value.diagnostics, info.value.sources)
    assert shown.startswith("t.csv:5:15: error[E609]: node `x` is removed but is not present")
    assert "   5 | 180000,remove,x" in shown
    # the node named with the separator counts as one node: 3 after 60 s, 2 after 120 s
    a = parse_bamboo(text.removesuffix("180000,remove,x\n"), "t.csv")
    assert [(s.start_us // S, s.count) for s in a.stretches] == [(0, 2), (60, 3)]
    assert a.final_count == 2


def test_a_whole_last_row_without_a_line_break_is_read_and_named() -> None:
    whole = "0,add,a\n0,add,b\n60000,remove,a\n120000,add,c\n180000,remove,b"
    a = parse_bamboo(whole, "t.csv")
    b = parse_bamboo(whole + "\n", "t.csv")
    # 2 nodes from 0 s, 1 from 60 s, 2 from 120 s; the last row at 180 s ends the trace
    assert a.stretches == b.stretches == (Stretch(0, 60 * S, 2), Stretch(60 * S, 120 * S, 1),
                                          Stretch(120 * S, 180 * S, 2))  # fmt: skip
    assert (a.final_count, a.open_line, a.open_row) == (1, 5, "180000,remove,b")
    assert (b.open_line, b.open_row) == (None, None)
    assert parse_bamboo(whole + "\r\n", "t.csv").open_line is None
    assert parse_bamboo(whole + "\n  ", "t.csv").open_line is None  # a blank last line


def test_a_last_row_cut_inside_a_field_is_e608() -> None:
    with pytest.raises(ContractlangError) as info:
        parse_bamboo("0,add,a\n1000,add,b\n1200,rem", "t.csv")
    shown = render_all(info.value.diagnostics, info.value.sources)
    assert shown.startswith(
        "t.csv:3:1: error[E608]: `t.csv` ends mid-line, on line 3, in a row that does not read "
        "whole (2 fields, not 3): cut short?"
    )
    assert "   3 | 1200,rem" in shown


def test_simulate_warns_of_a_last_line_without_a_line_break(tmp_path: Path) -> None:
    (tmp_path / "t.spot").write_text(
        'contract "c" {\n  currency USD\n  rate 2.10 USD per gpu_hour\n}\n', encoding="utf-8"
    )
    trace = tmp_path / "avail.csv"
    trace.write_text("0,add,a\n3600000,remove,a\n3600000,add,b\n7200000,remove,b")
    write_workload(tmp_path, runs=5, rate_per_hour=None, trace="avail.csv", replacement=False)
    args = ("simulate", tmp_path / "t.spot", "--workload", tmp_path / "w.toml", "--resamples", 100)
    result = run(*args)
    no_traceback(result)
    assert result.exit_code == 0, result.output
    assert f"{trace}:4:1: warning[I044]: the last line has no line break: it may have been cut" in (
        result.stderr
    )
    trace.write_text("0,add,a\n3600000,remove,a\n3600000,add,b\n7200000,remove,b\n")
    assert "I044" not in run(*args).stderr
    trace.write_text("0,add,a\n3600000,remove,a\n3600000,add,b\n7200000,rem")
    cut = run(*args)
    no_traceback(cut)
    assert cut.exit_code == 2, cut.output
    assert f"{trace}:4:1: error[E608]: `{trace}` ends mid-line, on line 4" in cut.stderr
