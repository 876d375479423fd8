"""`contractlang import availability`: a spot availability trace as allocations — hand-made
files with every allocation worked out by hand, the real SkyPilot and Bamboo traces checked
against closed forms computed from the raw files, and bad input as exit 2."""

from __future__ import annotations

import csv
import json
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import polars as pl
import pytest
from support.cli import no_traceback, run

from contractlang.importers.availability import import_availability
from contractlang.trace import load_trace

START = datetime(2025, 1, 1, tzinfo=UTC)
REALDATA = Path(__file__).resolve().parents[2] / "shared" / "realdata" / "traces"
SKYPILOT = REALDATA / "skypilot-spot-traces"
BAMBOO = REALDATA / "bamboo" / "traces" / "p3-trace.csv"


def allocations(frame: pl.DataFrame) -> list[tuple[str, float, float, str]]:
    """(alloc_id, start minute, end minute, how it ended), in alloc_id order."""
    starts = frame.filter(pl.col("event") == "started").select("alloc_id", start="ts")
    ends = frame.filter(pl.col("event") != "started").select("alloc_id", end="ts", how="event")
    both = starts.join(ends, on="alloc_id").sort("alloc_id")
    return [
        (a, (s - START) / timedelta(minutes=1), (e - START) / timedelta(minutes=1), how)
        for a, s, e, how in both.rows()
    ]


def test_a_skypilot_file_gives_one_allocation_per_stretch_of_each_instance_slot(
    tmp_path: Path,
) -> None:
    # ticks of 60 s: counts 1, 2, 2, 0, 1, 3 over minutes 0–6
    #   slot 1 (≥ 1 instance): minutes 0–3 (falls to 0 at 3: reclaimed), 4–6 (to the end)
    #   slot 2 (≥ 2): minutes 1–3 (reclaimed at 3), 5–6 (to the end: released)
    #   slot 3 (≥ 3): minute 5–6 (released)
    src = tmp_path / "zone_v100_4.json"
    src.write_text(json.dumps({"metadata": {"gap_seconds": 60}, "data": [1, 2, 2, 0, 1, 3]}))
    result = import_availability(src, START, gpus=8, sku="V100", price=Decimal("1.10"))
    assert allocations(result.events) == [
        ("zone_v100_4:1#1", 0, 3, "reclaimed"),
        ("zone_v100_4:1#2", 4, 6, "released"),
        ("zone_v100_4:2#1", 1, 3, "reclaimed"),
        ("zone_v100_4:2#2", 5, 6, "released"),
        ("zone_v100_4:3#1", 5, 6, "released"),
    ]
    started = result.events.filter(pl.col("event") == "started")
    assert set(started["gpus"]) == {8}
    assert set(started["sku"]) == {"V100"}
    assert set(started["capacity"]) == {"spot"}
    assert set(started["price"]) == {Decimal("1.10")}
    # each event names the tick it happened at: slot 2's first allocation starts at tick 2
    # (data[1]) and is reclaimed at tick 4 (data[3])
    second = result.events.filter(pl.col("alloc_id") == "zone_v100_4:2#1")
    assert second["source_row"].to_list() == [2, 4]
    report = result.report
    assert (report.rows_read, report.rows_mapped, report.accounted) == (6, 6, True)
    assert (report.runs, report.allocations, report.events) == (1, 5, 10)
    figures = dict(report.facts)
    # instance-minutes: 1 + 2 + 2 + 0 + 1 + 3 = 9 of 6 minutes' ticks with at least one: 5/6
    assert figures["allocations ended by a reclaim"] == "2"
    assert figures["allocations held to the end (released)"] == "3"
    assert figures["share of the time with an instance"] == "83.33%"
    assert figures["most instances at once"] == "3"
    # the GPU-time the trace meters is every tick's instances × 8 GPUs: 9 instance-minutes
    facts = result.trace
    assert facts.summary.allocations == 5


def test_a_node_removed_at_the_last_row_is_reclaimed(tmp_path: Path) -> None:
    # the trace ends at 5 s, with the remove of n1: n1's allocation was taken back (reclaimed),
    # n2's lasts to the end (released)
    src = tmp_path / "end.csv"
    src.write_text("0,add,n1\n0,add,n2\n5000,remove,n1\n")
    result = import_availability(src, START, run_id="end")
    assert [(a, how) for a, _, _, how in allocations(result.events)] == [
        ("end:1#1", "released"),
        ("end:2#1", "reclaimed"),
    ]


def test_a_bamboo_file_counts_nodes_and_ends_at_its_last_row(tmp_path: Path) -> None:
    # 0 s: a, b join (2); 60 s: a leaves (1); 120 s: c joins (2); 180 s: b and c leave (0);
    # 240 s: d joins (1); 300 s: d leaves — the last row ends the trace at 5 minutes
    #   slot 1: 0–3 min (reclaimed), 4–5 min (d is removed by the last row: reclaimed too)
    #   slot 2: 0–1 min (reclaimed), 2–3 min (reclaimed)
    src = tmp_path / "p3.csv"
    src.write_text(
        "0,add,a\n0,add,b\n60000,remove,a\n\n120000,add,c\n"
        "180000,remove,b\n180000,remove,c\n240000,add,d\n300000,remove,d\n"
    )
    result = import_availability(src, START, run_id="bamboo")
    assert allocations(result.events) == [
        ("bamboo:1#1", 0, 3, "reclaimed"),
        ("bamboo:1#2", 4, 5, "reclaimed"),
        ("bamboo:2#1", 0, 1, "reclaimed"),
        ("bamboo:2#2", 2, 3, "reclaimed"),
    ]
    report = result.report
    # 9 lines: 8 rows mapped, the blank 4th line counted as blank
    assert (report.rows_read, report.rows_mapped, report.blank, report.accounted) == (
        9, 8, 1, True,
    )  # fmt: skip


def _closed_forms(counts: list[int]) -> tuple[int, int, int, int]:
    """From a file's counts per tick: allocations (every rise of the count starts as many),
    reclaims (every fall ends as many), those held to the end (the last count) and the
    instance-ticks (the sum), computed from the counts alone."""
    before = [0, *counts[:-1]]
    started = sum(max(0, c - b) for c, b in zip(counts, before, strict=True))
    reclaimed = sum(max(0, b - c) for c, b in zip(counts[1:], counts[:-1], strict=True))
    return started, reclaimed, counts[-1], sum(counts)


@pytest.mark.skipif(not SKYPILOT.is_dir(), reason="../shared/realdata is not here")
@pytest.mark.parametrize(
    "nodes", ["preemption/1-node", "preemption/4-node", "availability/16-node"]
)
def test_the_real_skypilot_traces_match_closed_forms_of_their_counts(nodes: str) -> None:
    files = sorted((SKYPILOT / nodes).rglob("*.json"))
    assert files, nodes
    for path in files[:3]:
        raw = json.loads(path.read_text())
        gap_us = int(raw["metadata"]["gap_seconds"] * 1_000_000)
        started, reclaimed, held, instance_ticks = _closed_forms(raw["data"])
        result = import_availability(path, START, gpus=8)
        ends = result.events.filter(pl.col("event") != "started")["event"]
        assert result.report.allocations == started, path
        assert (ends == "reclaimed").sum() == reclaimed, path
        assert (ends == "released").sum() == held, path
        assert result.report.rows_read == len(raw["data"])
        # the GPU-time of all allocations is every tick's instances × the tick × 8 GPUs
        spans = result.events.group_by("alloc_id").agg(
            (pl.col("ts").max() - pl.col("ts").min()).dt.total_microseconds().alias("us")
        )
        assert spans["us"].sum() == instance_ticks * gap_us, path


@pytest.mark.skipif(not BAMBOO.is_file(), reason="../shared/realdata is not here")
def test_the_real_bamboo_trace_matches_its_nodes_presence() -> None:
    # independently: each node is present from its add to its remove (or to the last row's
    # time); the allocations' total time is the nodes' total presence
    with BAMBOO.open(newline="") as f:
        rows = [(int(t), e.strip(), n.strip()) for t, e, n in csv.reader(f) if t.strip()]
    end = max(t for t, _, _ in rows)
    joined: dict[str, int] = {}
    presence = 0
    for t, event, node in rows:
        if event == "add":
            joined[node] = t
        else:
            presence += t - joined.pop(node)
    presence += sum(end - t for t in joined.values())
    result = import_availability(BAMBOO, START)
    spans = result.events.group_by("alloc_id").agg(
        (pl.col("ts").max() - pl.col("ts").min()).dt.total_microseconds().alias("us")
    )
    assert spans["us"].sum() == presence * 1000  # ms → µs
    assert result.report.rows_read == len(rows)
    assert result.report.accounted


def test_the_command_writes_the_trace_and_reports(tmp_path: Path) -> None:
    src = tmp_path / "us-east-1a_v100_1.json"
    src.write_text(json.dumps({"metadata": {"gap_seconds": 600}, "data": [1, 1, 0, 1]}))
    result = run("import", "availability", src, "--start", "2025-03-01T00:00Z", "--gpus", "8")
    no_traceback(result)
    assert result.exit_code == 0, result.output
    assert "4 rows read: every one mapped or rejected" in result.output
    assert "wrote 4 events (1 run, 2 allocations) to" in result.output
    assert all(len(line) <= 80 for line in result.output.splitlines())
    trace = load_trace(tmp_path / "us-east-1a_v100_1.parquet")  # the input's name
    assert trace.events["run_id"].unique().to_list() == ["us-east-1a_v100_1"]
    # again: the default output exists now, and is never overwritten
    again = run("import", "availability", src, "--start", "2025-03-01T00:00Z")
    assert again.exit_code == 2
    assert "already exists" in again.output


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (["--start", "2025-03-01T00:00"], "has no UTC offset"),
        (["--start", "yesterday"], "is not an ISO 8601 timestamp"),
        (["--start", "2025-03-01T00:00Z", "--price", "-1"], "is not a price per GPU-hour"),
        (["--start", "2025-03-01T00:00Z", "--price", "٣"], "is not a price per GPU-hour"),
        (["--start", "2025-03-01T00:00Z", "--gpus", "0"], "--gpus"),
        (["--start", "2025-03-01T00:00Z", "--gpus", "20000000"], "--gpus"),  # over 10,000,000
        (["--start", "2025-03-01T00:00Z", "--capacity", "spott"], "did you mean `spot`?"),
        (["--start", "2025-03-01T00:00Z", "--run-id", " "], "`--run-id` is empty"),
        (["--start", "2025-03-01T00:00Z", "--sku", ""], "`--sku` is empty"),
        (["--start", "2025-03-01T00:00Z", "--zone", " "], "`--zone` is empty"),
        (["--start", "2025-03-01T00:00Z", "--run-id", "a\tb"], "holds a control character"),
        (["--start", "2025-03-01T00:00Z", "--sku", "\x1b[31mH100"], "holds a control character"),
        (["--start", "2025-03-01T00:00:00.0000001Z"], "more than 6 digits after the second"),
        # the trace, a minute long, placed where a trace cannot lie (1900-01-01 to 2199-12-31)
        (["--start", "2199-12-31T23:59:30Z"], "E609"),
        (["--start", "1899-12-31T23:59:00Z"], "E609"),
        (["--start", "9999-12-31T23:59:00Z"], "E609"),  # not a date overflow (exit 3)
    ],
)
def test_bad_flags_are_exit_2(tmp_path: Path, flags: list[str], said: str) -> None:
    src = tmp_path / "t.json"
    src.write_text(json.dumps({"metadata": {"gap_seconds": 60}, "data": [1]}))
    result = run("import", "availability", src, "--out", tmp_path / "o.parquet", *flags)
    no_traceback(result)
    assert result.exit_code == 2, result.output
    assert said in result.output
    assert not (tmp_path / "o.parquet").exists()


@pytest.mark.parametrize(
    ("name", "text", "said"),
    [
        ("t.json", '{"metadata": {"gap_seconds": 60}, "data": [1, -1]}', "E609"),
        # more instances than a trace may count, a tick beyond any span: never a memory or
        # decimal error (exit 3)
        ("t.json", '{"metadata": {"gap_seconds": 60}, "data": [1000000000000000000000]}', "E609"),
        ("t.json", '{"metadata": {"gap_seconds": 1e999999999}, "data": [1]}', "E609"),
        # 101 rises of 100,000 instances each: 10,100,000 allocations, more than one import makes
        (
            "t.json",
            '{"metadata": {"gap_seconds": 60}, "data": [' + ", ".join(["0", "100000"] * 101) + "]}",
            "10,100,000 allocations",
        ),
        ("t.csv", "0,add,a\n1000,add,b\n2000,rem", "I003"),  # cut short inside a field
        ("t.json", '{"metadata": {"gap_seconds": 60}, "data": [1], "data": [0]}', "twice"),
        (
            "t.json",
            '{"metadata": {"gap_seconds": 60}, "data": [0, 0]}',
            "no instance is ever available",
        ),
        ("t.json", '{"metadata": {"gap_seconds": 60}}', "E608"),
        ("t.csv", "0,add,a\n5,join,b\n", "t.csv:2"),
        ("t.txt", "0,add,a\n", "E607"),
    ],
)
def test_bad_files_are_exit_2_with_their_place(
    tmp_path: Path, name: str, text: str, said: str
) -> None:
    src = tmp_path / name
    src.write_text(text)
    result = run(
        "import", "availability", src, "--start", "2025-03-01T00:00Z", "--out",
        tmp_path / "o.parquet",
    )  # fmt: skip
    no_traceback(result)
    assert result.exit_code == 2, result.output
    assert said in result.output
    assert not (tmp_path / "o.parquet").exists()


def test_a_file_without_a_name_needs_a_run_id(tmp_path: Path) -> None:
    src = tmp_path / " .json"
    src.write_text(json.dumps({"metadata": {"gap_seconds": 60}, "data": [1]}))
    out = tmp_path / "o.parquet"
    result = run("import", "availability", src, "--start", "2025-03-01T00:00Z", "--out", out)
    no_traceback(result)
    assert result.exit_code == 2, result.output
    assert "--run-id" in result.output
    named = run(
        "import", "availability", src, "--start", "2025-03-01T00:00Z", "--out", out,
        "--run-id", "r",
    )  # fmt: skip
    assert named.exit_code == 0, named.output


def test_the_sweep_gives_every_slot_of_many_instances() -> None:
    # independently: slot k is held in tick i when data[i] >= k; its allocations are the
    # maximal runs of such ticks
    from contractlang.importers.availability.mapping import slot_stretches  # noqa: PLC0415
    from contractlang.importers.availability.read import parse_availability  # noqa: PLC0415

    data = [3, 5, 0, 2, 2, 7, 1, 4, 4, 0, 6]
    a = parse_availability(json.dumps({"metadata": {"gap_seconds": 1}, "data": data}), "t")
    expected = []
    for k in range(1, max(data) + 1):
        i = 0
        while i < len(data):
            if data[i] >= k:
                j = i
                while j < len(data) and data[j] >= k:
                    j += 1
                expected.append((k, i * 10**6, j * 10**6))
                i = j
            else:
                i += 1
    assert slot_stretches(a) == expected


# --------------------------------------------------------------------------- lines of a Bamboo file


#: Line 3's node name holds a character `str.splitlines` breaks at; line 5 removes a node that
#: is not there: the error is on line 5, whichever character it is.
@pytest.mark.parametrize("odd", ["\u2028", "\u2029", "\x85", "\x0c"])
def test_a_node_name_holding_a_line_separator_leaves_the_lines_their_numbers(
    tmp_path: Path, odd: str
) -> None:
    src = tmp_path / "t.csv"
    src.write_text(
        f"0,add,a\n0,add,b\n60000,add,n{odd}1\n120000,remove,a\n180000,remove,x\n",
        encoding="utf-8",
    )
    result = run("import", "availability", src, "--start", "2025-03-01T00:00Z", "--out",
                 tmp_path / "o.parquet")  # fmt: skip
    no_traceback(result)
    assert result.exit_code == 2, result.output
    # `180000,remove,x`: the node's field starts at column 15
    assert f"{src}:5:15: error[E609]: node `x` is removed but is not present" in result.output
    assert "   5 | 180000,remove,x" in result.output  # the line the message names
    # without the bad row the file imports, every line a row
    src.write_text(f"0,add,a\n0,add,b\n60000,add,n{odd}1\n120000,remove,a\n", encoding="utf-8")
    report = import_availability(src, START).report
    assert (report.rows_read, report.rows_mapped) == (4, 4)


LAST = "0,add,a\n0,add,b\n60000,remove,a\n120000,add,c\n180000,remove,b"


def test_a_whole_last_line_without_a_line_break_is_imported_with_a_note(tmp_path: Path) -> None:
    # by hand: 0 s a and b join (2); 60 s a leaves (1); 120 s c joins (2); 180 s b leaves (1),
    # and the trace ends at 3 minutes:
    #   slot 1: 0–3 min, still held at the end (released: c is there)
    #   slot 2: 0–1 min (reclaimed), 2–3 min (reclaimed: the last row takes b away)
    by_hand = [
        ("t:1#1", 0, 3, "released"),
        ("t:2#1", 0, 1, "reclaimed"),
        ("t:2#2", 2, 3, "reclaimed"),
    ]
    src = tmp_path / "t.csv"
    src.write_text(LAST, encoding="utf-8")
    open_end = import_availability(src, START)
    assert allocations(open_end.events) == by_hand
    (note,) = open_end.report.notes
    assert (note.code, note.count, note.examples) == ("I044", 1, ((5, "`180000,remove,b`"),))
    assert note.message == "the last line has no line break: it may have been cut"
    src.write_text(LAST + "\n", encoding="utf-8")
    closed = import_availability(src, START)
    assert allocations(closed.events) == by_hand
    assert closed.report.notes == ()
    # on the command line: the note, and exit 0
    src.write_text(LAST, encoding="utf-8")
    result = run("import", "availability", src, "--start", "2025-03-01T00:00Z", "--out",
                 tmp_path / "o.parquet")  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "I044  1 row: the last line has no line break: it may have been cut" in result.output
    assert "row 5: `180000,remove,b`" in result.output


@pytest.mark.parametrize(
    ("tail", "reason"),
    [
        ("1200,rem", "2 fields, not 3"),
        ("1200,remo,", "the event `remo` is neither `add` nor `remove`"),
        ("1200,remove,", "no node"),
        ("12", "1 field, not 3"),
    ],
)
def test_a_last_line_cut_inside_a_field_is_still_refused(
    tmp_path: Path, tail: str, reason: str
) -> None:
    src = tmp_path / "t.csv"
    src.write_text("0,add,a\n1000,add,b\n" + tail, encoding="utf-8")
    result = run("import", "availability", src, "--start", "2025-03-01T00:00Z", "--out",
                 tmp_path / "o.parquet")  # fmt: skip
    no_traceback(result)
    assert result.exit_code == 2, result.output
    assert (
        f"error[I003]: `{src}` ends mid-line, on line 3, in a row that does not read whole "
        f"({reason}): cut short?"
    ) in result.output
    assert not (tmp_path / "o.parquet").exists()


def test_a_problem_on_a_last_line_without_a_line_break_says_it_may_have_been_cut(
    tmp_path: Path,
) -> None:
    src = tmp_path / "t.csv"
    src.write_text("0,add,a\n1000,add,b\n2000,remove,c", encoding="utf-8")  # `c` is not there
    result = run("import", "availability", src, "--start", "2025-03-01T00:00Z", "--out",
                 tmp_path / "o.parquet")  # fmt: skip
    assert result.exit_code == 2, result.output
    assert f"{src}:3:13: error[E609]: node `c` is removed but is not present" in result.output
    assert "help: the last line has no line break: it may have been cut" in result.output
