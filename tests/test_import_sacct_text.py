"""`import sacct` of every form people export: `--noheader` with `--fields`, `--parsable` and
any `--delimiter`, `JobIDRaw`, `AllocGRES`/`ReqGRES` and `ElapsedRaw` of Slurm before 20.11,
bytes that are not UTF-8, a last line without a line break, numbers of any length; and the
same attempt in overlapping exports counted once."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import polars as pl
import pytest

from contractlang.errors import ContractlangError
from contractlang.importers import import_sacct
from contractlang.importers.result import ImportResult
from contractlang.trace import derive_facts

DATA = Path(__file__).parent / "data"
NY = "America/New_York"
STANDARD = (
    "JobID,JobIDRaw,JobName,Partition,QOS,State,Submit,Start,End,Elapsed,AllocTRES,Restarts,"
    "NodeList"
)
GPU8 = "billing=64,cpu=64,gres/gpu:h100=8,gres/gpu=8,mem=1000G,node=1"
OK = "COMPLETED|2025-01-01T00:00:00|2025-01-01T00:00:00|2025-01-01T01:00:00"


def codes(result: ImportResult) -> list[tuple[int, str]]:
    return [(r.row, r.code) for r in result.report.rejects]


def error_of(path: Path, **kw: object) -> tuple[str, str, str | None]:
    with pytest.raises(ContractlangError) as exc:
        import_sacct(path, "UTC", **kw)  # type: ignore[arg-type]
    [d] = exc.value.diagnostics
    return d.code, d.message, d.help


def gpu_seconds(result: ImportResult) -> int:
    _, runs = derive_facts(result.trace).collect()
    return int(runs["metered_gpu_time"].sum().total_seconds())


# --------------------------------------------------------------------------- --noheader


def test_a_noheader_export_is_read_with_fields() -> None:
    r = import_sacct(DATA / "sacct_noheader.txt", "UTC", fields=STANDARD.split(","))
    # without a header, row N is line N: 9101, its batch step, 9102
    assert codes(r) == []
    starts = r.events.filter(pl.col("event") == "started")
    assert starts.select("alloc_id", "gpus", "source_row").rows() == [
        ("9101#1", 8, 1),
        ("9102#1", 4, 3),
    ]
    # 9101: 8 GPUs × 2 h (08:02 → 10:02) = 57,600 s; 9102: 4 × 1 h 30 min (12:00:10 → 13:30:10)
    # = 21,600 s
    assert gpu_seconds(r) == 8 * 7200 + 4 * 5400


def test_a_noheader_export_without_fields_is_one_error_that_shows_them() -> None:
    code, message, help = error_of(DATA / "sacct_noheader.txt")
    assert code == "I003"
    assert message.endswith(
        "has no header: its first line is a record (`9101` is a job ID); read a `--noheader` "
        "export with `--fields`"
    )
    # 13 fields, as many as the standard export's: its list, ready to paste
    assert help is not None
    assert f"`--fields {STANDARD}`" in help


def test_a_first_line_of_no_field_names_is_not_a_header(tmp_path: Path) -> None:
    src = tmp_path / "jobs.txt"
    src.write_text(f"x|{OK}|{GPU8}\n")
    code, message, help = error_of(src)
    assert code == "I003"
    assert "none of its first line's values is a `sacct` field name" in message
    assert help is not None
    assert "(6 names)" in help


def test_fields_given_for_a_file_with_a_header_must_agree_with_it(tmp_path: Path) -> None:
    src = tmp_path / "jobs.txt"
    src.write_text(f"JobID|State|Submit|Start|End|AllocTRES\n1|{OK}|{GPU8}\n")
    # the same names (in any case): the header is the header, row 1 the record
    r = import_sacct(src, "UTC", fields=["jobid", "State", "Submit", "Start", "End", "AllocTRES"])
    assert (r.report.rows_read, r.report.allocations) == (1, 1)
    # other names: which is right is not ours to guess
    code, message, _ = error_of(
        src, fields=["JobID", "State", "Submit", "End", "Start", "AllocTRES"]
    )
    assert (code, message) == (
        "I003",
        f"`{src}` has a header that `--fields` contradicts: field 4 is `Start` there, `End` in "
        "`--fields`",
    )
    code, message, _ = error_of(src, fields=["JobID", "State"])
    assert (code, message) == ("I003", f"`{src}` has a header of 6 fields, and `--fields` names 2")


def test_fields_missing_a_required_one_is_i002(tmp_path: Path) -> None:
    src = tmp_path / "jobs.txt"
    src.write_text(f"1|{OK}|{GPU8}\n")
    code, message, help = error_of(
        src, fields=["JobID", "Stat", "Submit", "Start", "End", "AllocTRES"]
    )
    assert (code, message, help) == (
        "I002",
        "the export has no `State` field",
        "did you mean `Stat`?",
    )


def test_fields_naming_one_field_twice_is_e502(tmp_path: Path) -> None:
    """A flag mistake, said as one (it read "names the field … in its header", of a file
    that has none)."""
    src = tmp_path / "jobs.txt"
    src.write_text(f"1|{OK}|{GPU8}\n")
    code, message, help = error_of(
        src, fields=["JobID", "State", "Submit", "Start", "End", "jobid"]
    )
    assert (code, message) == ("E502", "`--fields` names `jobid` twice (fields 1 and 6)")
    assert help == "name each field once, in the order `sacct --format` listed them"


# --------------------------------------------------------------------------- delimiters


def test_parsable_with_another_delimiter() -> None:
    r = import_sacct(DATA / "sacct_parsable_delimiter.txt", "UTC", delimiter="^|^")
    assert codes(r) == []
    # a `|` inside a job name is not the delimiter `^|^`
    names = r.events.filter(pl.col("event") == "started")["job_name"].to_list()
    assert names == ["sweep|lr=3e-4", "sweep|lr=1e-4"]
    # 2 GPUs × 1 h + 2 GPUs × 4 h
    assert gpu_seconds(r) == 2 * 3600 + 2 * 4 * 3600


def test_a_header_split_at_another_delimiter_names_it() -> None:
    code, message, help = error_of(DATA / "sacct_parsable_delimiter.txt")
    assert code == "I003"
    assert message.endswith("is not split at `|`: its first line is field names separated by `^|^`")
    assert help == "pass `--delimiter '^|^'`, the delimiter it was exported with"


@pytest.mark.parametrize("delimiter", [",", "|#", "\t", ";;"])
def test_any_delimiter_with_or_without_a_trailing_one(tmp_path: Path, delimiter: str) -> None:
    src = tmp_path / "jobs.txt"
    rows = [
        ["JobID", "State", "Submit", "Start", "End", "AllocTRES"],
        ["1", *OK.split("|"), "gres/gpu=4"],
    ]
    for trailing in ("", delimiter):
        src.write_text("".join(delimiter.join(r) + trailing + "\n" for r in rows))
        r = import_sacct(src, "UTC", delimiter=delimiter)
        assert codes(r) == []
        assert gpu_seconds(r) == 4 * 3600


@pytest.mark.parametrize("delimiter", ["", "\n", "a\r"])
def test_a_delimiter_that_cannot_split_a_line_is_e502(tmp_path: Path, delimiter: str) -> None:
    src = tmp_path / "jobs.txt"
    src.write_text("JobID|State\n")
    code, message, _ = error_of(src, delimiter=delimiter)
    assert code == "E502"
    assert message.startswith("`--delimiter")


# --------------------------------------------------------------------------- older fields


def test_allocgres_elapsedraw_and_jobidraw_of_slurm_before_20_11() -> None:
    r = import_sacct(DATA / "sacct_allocgres.txt", "Europe/Berlin")
    starts = r.events.filter(pl.col("event") == "started")
    # JobIDRaw stands for JobID; `gpu:tesla:2(IDX:0-1)` is 2 GPUs of type tesla; `gpu:4,mps:100`
    # is 4 GPUs (MPS shares are not GPUs)
    assert starts.select("run_id", "gpus", "sku", "job_id_raw").rows() == [
        ("9301", 2, "tesla", "9301"),
        ("9302", 4, None, "9302"),
    ]
    assert "job_id" not in r.events.columns
    # a CPU job has no GPUs; `gpu:0` (a no_consume GRES) is 0 GPUs, said as such
    assert codes(r) == [(4, "I016"), (5, "I016")]
    reasons = [j.reason for j in r.report.rejects]
    assert reasons == [
        "no GPUs: `AllocGRES` is empty",
        "no GPUs: `AllocGRES` `gpu:0` allocates 0 GPUs",
    ]
    # ElapsedRaw agrees with the times: no I033
    assert r.report.notes == ()


def test_elapsedraw_is_checked_as_elapsed_is(tmp_path: Path) -> None:
    src = tmp_path / "jobs.txt"
    src.write_text(
        "JobID|State|Submit|Start|End|ElapsedRaw|AllocTRES\n"
        f"1|{OK}|3600|{GPU8}\n"
        f"2|{OK}|7200|{GPU8}\n"
        f"3|{OK}|{'9' * 5000}|{GPU8}\n"
    )
    r = import_sacct(src, "UTC")
    assert codes(r) == []
    i033, i039 = r.report.notes
    # row 2: ElapsedRaw 7,200 s, but End − Start is 01:00:00 = 3,600 s
    assert i033.examples == ((2, "ElapsedRaw 7,200 s, End − Start 3,600 s"),)
    # row 3: 5,000 digits are no count: left unread, not an internal error
    assert (i039.code, [row for row, _ in i039.examples]) == ("I039", [3])


def test_reqgres_when_there_is_no_allocgres(tmp_path: Path) -> None:
    src = tmp_path / "jobs.txt"
    src.write_text(f"JobID|State|Submit|Start|End|ReqGRES\n1|{OK}|gpu:v100:4\n")
    r = import_sacct(src, "UTC")
    assert r.events.filter(pl.col("event") == "started").select("gpus", "sku").rows() == [
        (4, "v100")
    ]


def test_without_any_gpu_field_the_error_names_alloctres(tmp_path: Path) -> None:
    src = tmp_path / "jobs.txt"
    src.write_text(f"JobID|State|Submit|Start|End|ReqTRES\n1|{OK}|gres/gpu=4\n")
    code, message, _ = error_of(src)
    assert (code, message) == ("I002", "the export has no `AllocTRES` field")


# --------------------------------------------------------------------------- GPU counts


def test_gpu_counts_that_disagree_are_rejected_not_guessed(tmp_path: Path) -> None:
    src = tmp_path / "jobs.txt"
    rows = [
        "gres/gpu=8,gres/gpu=16",  # two totals
        "gres/gpu:a100=4,gres/gpu:h100=8,gres/gpu=8",  # typed counts above the total
        "gres/gpu:a100=2,gres/gpu:a100=4",  # one type, two counts
        "gres/gpu=8,gres/gpu=8",  # the same total twice: 8
        "gres/gpu=0,cpu=4",  # 0 GPUs
        "gres/gpu=" + "9" * 5000,  # more digits than Python converts
        "gres/gpu=" + "0" * 5000 + "8",  # leading zeros are not a large number
    ]
    src.write_text(
        "JobID|State|Submit|Start|End|AllocTRES\n"
        + "".join(f"{n}|{OK}|{t}\n" for n, t in enumerate(rows, start=1))
    )
    r = import_sacct(src, "UTC")
    assert codes(r) == [(1, "I026"), (2, "I026"), (3, "I026"), (5, "I016"), (6, "I016")]
    reasons = [j.reason for j in r.report.rejects]
    assert reasons[:3] == [
        "`AllocTRES` `gres/gpu=8,gres/gpu=16` names two different GPU totals (8 and 16)",
        "`AllocTRES` `gres/gpu:a100=4,gres/gpu:h100=8,gres/gpu=8`: its typed GPU counts add up "
        "to 12, more than its total of 8",
        "`AllocTRES` `gres/gpu:a100=2,gres/gpu:a100=4` names two different counts of GPU type "
        "`a100` (2 and 4)",
    ]
    assert reasons[3] == "no GPUs: `AllocTRES` `gres/gpu=0,cpu=4` allocates 0 GPUs"
    assert reasons[4].endswith("has a GPU count that is not a whole number the trace can hold")
    starts = r.events.filter(pl.col("event") == "started")
    assert starts.select("run_id", "gpus").rows() == [("4", 8), ("7", 8)]


def test_restarts_of_any_length_are_read_or_left_empty(tmp_path: Path) -> None:
    src = tmp_path / "jobs.txt"
    src.write_text(
        f"JobID|State|Submit|Start|End|AllocTRES|Restarts\n1|{OK}|{GPU8}|{'7' * 5000}\n"
        f"2|{OK}|{GPU8}|3\n"
    )
    r = import_sacct(src, "UTC")
    assert r.events.select("run_id", "restarts").unique().sort("run_id").rows() == [
        ("1", None),
        ("2", 3),
    ]
    [note] = r.report.notes
    assert (note.code, note.examples[0][0]) == ("I039", 1)


# --------------------------------------------------------------------------- bytes


def test_bytes_that_are_not_utf8_are_judged_field_by_field() -> None:
    r = import_sacct(DATA / "sacct_latin1.txt", "UTC")
    # row 1: the job name and node list are Latin-1: replaced, the row imported
    # row 2: its State is Latin-1 (`COMPLÉTÉ`): the mapping reads it, so the row is rejected
    assert codes(r) == [(2, "I027")]
    assert r.report.rejects[0].reason == "`State` holds bytes that are not UTF-8"
    # the record is written as text (U+FFFD where a byte was), so `--rejects` can hold it
    assert r.report.rejects[0].record.startswith("9402|r\ufffdsum\ufffd|COMPL\ufffdT\ufffd|")
    [note] = r.report.notes
    assert (note.code, note.examples) == ("I043", ((1, "`JobName`, `NodeList`"),))
    started = r.events.filter(pl.col("event") == "started")
    assert started.select("job_name", "node_list").row(0) == (
        "mod\ufffdle-fran\ufffdais",
        "n\ufffdud-3",
    )
    # 8 GPUs × 1 h (row 1) + 8 GPUs × 2 h (row 3)
    assert gpu_seconds(r) == 8 * 3600 + 8 * 7200


def test_bytes_in_a_partition_reject_the_row_only_when_the_capacity_map_reads_it(
    tmp_path: Path,
) -> None:
    from contractlang.importers.sacct import Allocations  # noqa: PLC0415

    src = tmp_path / "jobs.txt"
    line = f"1|{OK}|{GPU8}|".encode() + b"sp\xe9t\n"
    src.write_bytes(b"JobID|State|Submit|Start|End|AllocTRES|Partition\n" + line)
    free = import_sacct(src, "UTC")
    assert [n.code for n in free.report.notes] == ["I043"]
    mapped = import_sacct(src, "UTC", allocations=Allocations(capacity_map={"spot": "spot"}))
    assert codes(mapped) == [(1, "I027")]


# --------------------------------------------------------------------------- line ends


def test_a_whole_last_line_without_a_line_break_is_imported_with_a_note() -> None:
    r = import_sacct(DATA / "sacct_no_final_newline.txt", "UTC")
    assert codes(r) == []
    assert r.report.allocations == 2
    [note] = r.report.notes
    assert (note.code, note.examples) == ("I044", ((2, "line 3 ends `gpu-d01`"),))


def test_a_last_line_cut_inside_a_field_is_i003() -> None:
    path = DATA / "sacct_cut.txt"
    code, message, _ = error_of(path)
    assert (code, message) == (
        "I003",
        f"`{path}` ends mid-line, on line 3 (cut short?): its last record has 6 fields, the "
        "header 7",
    )


# --------------------------------------------------------------------------- one attempt twice


def _gpu_hours_by_hand(path: Path) -> tuple[float, set[str]]:
    """The GPU-hours of the sample counted independently: each (JobID, Start) once, from its
    record that ended; an attempt whose records disagree on the GPUs or the end not at all."""
    ny = ZoneInfo(NY)
    gpus_of: dict[tuple[str, str], set[int]] = {}
    ends_of: dict[tuple[str, str], set[str]] = {}
    header = None
    for line in path.read_text().splitlines():
        values = line.split("|")
        if header is None or values[0] == "JobID":
            header = values
            continue
        row = dict(zip(header, values, strict=True))
        if "." in row["JobID"]:
            continue
        key = (row["JobID"], row["Start"])
        gpus_of.setdefault(key, set()).add(
            int(row["AllocTRES"].split("gres/gpu=")[1].split(",")[0])
        )
        ends_of.setdefault(key, set())
        if row["State"] != "RUNNING":
            ends_of[key].add(row["End"])
    hours = 0.0
    conflicting = set()
    for (job, start), gpus in gpus_of.items():
        if len(gpus) > 1 or len(ends_of[job, start]) > 1:
            conflicting.add(job)
            continue
        [n], [end] = gpus, ends_of[job, start]
        # on the UTC line: a difference of two times of one zone is wall-clock time in Python
        t0 = datetime.fromisoformat(start).replace(tzinfo=ny).astimezone(UTC)
        t1 = datetime.fromisoformat(end).replace(tzinfo=ny).astimezone(UTC)
        hours += n * (t1 - t0) / timedelta(hours=1)
    return hours, conflicting


def test_overlapping_exports_count_each_attempt_once() -> None:
    path = DATA / "sacct_overlap.txt"
    r = import_sacct(path, NY)
    hours, conflicting = _gpu_hours_by_hand(path)
    # 8001: 8 × 12 h = 96; 8002: 16 × 27 h = 432; 8003: 4 × 8 h = 32; 8005: 8 × 4 h = 32;
    # 8006: 2 × 3.5 h = 7; 8004 (8 GPUs in one export, 16 in the other) not at all: 599
    assert hours == 599
    assert conflicting == {"8004"}
    assert gpu_seconds(r) == hours * 3600
    report = r.report
    assert {m.label: m.rows for m in report.mapped} == {
        "job records (one allocation each)": 5,
        "job records of an attempt already read (merged into it)": 2,
        "job steps (inside their job's allocation)": 5,
    }
    assert codes(r) == [
        (8, "I025"),
        (9, "I013"),
        (10, "I012"),  # the second export's header
        (11, "I012"),  # 8005, exactly as in the first export
        (12, "I012"),
        (16, "I025"),
        (17, "I013"),
    ]
    assert report.accounted
    assert report.rows_read == 19
    reasons = {j.row: j.reason for j in report.rejects}
    assert reasons[8] == (
        "job `8004` started 2025-03-08T10:00:05 with 8 GPUs in row 8 and 16 in row 16: "
        "neither is imported"
    )
    assert (
        reasons[9] == "step `8004.batch` of job `8004`, whose records (rows 8 and 16) were rejected"
    )
    [note] = report.notes
    assert note.code == "I042"
    assert note.examples == (
        (13, "job 8002 started 2025-03-07T20:10:00: rows 5 and 13, row 13 kept"),
        (15, "job 8003 started 2025-03-08T06:00:30: rows 7 and 15, row 15 kept"),
    )
    # the record kept is the one that ended: its node list as that export spelled it
    ends = r.events.filter(pl.col("event") == "released")
    assert ends.filter(pl.col("run_id") == "8002")["node_list"].to_list() == ["gpu-b01,gpu-b02"]
    # one attempt each: nothing was requeued
    assert dict(report.facts)["jobs with more than one attempt (requeued)"] == "0"


def test_records_of_one_attempt_that_differ_in_what_the_bill_reads(tmp_path: Path) -> None:
    src = tmp_path / "jobs.txt"
    start = "2025-01-01T00:00:00|2025-01-01T00:00:00"
    src.write_text(
        "JobID|State|Submit|Start|End|AllocTRES|NodeList\n"
        # one running, one ended, the node list two ways: merged
        f"1|RUNNING|{start}|Unknown|{GPU8}|g[1-2]\n"
        f"1|COMPLETED|{start}|2025-01-01T01:00:00|{GPU8}|g1,g2\n"
        # two ends
        f"2|COMPLETED|{start}|2025-01-01T01:00:00|{GPU8}|g1\n"
        f"2|COMPLETED|{start}|2025-01-01T02:00:00|{GPU8}|g1\n"
        # two end states
        f"3|COMPLETED|{start}|2025-01-01T01:00:00|{GPU8}|g1\n"
        f"3|PREEMPTED|{start}|2025-01-01T01:00:00|{GPU8}|g1\n"
        # two GPU types
        f"4|COMPLETED|{start}|2025-01-01T01:00:00|gres/gpu:a100=8,gres/gpu=8|g1\n"
        f"4|COMPLETED|{start}|2025-01-01T01:00:00|gres/gpu:h100=8,gres/gpu=8|g1\n"
        # two submit times
        f"5|COMPLETED|2025-01-01T00:00:00|2025-01-01T00:00:00|2025-01-01T01:00:00|{GPU8}|g1\n"
        f"5|COMPLETED|2024-12-31T23:00:00|2025-01-01T00:00:00|2025-01-01T01:00:00|{GPU8}|g2\n"
    )
    r = import_sacct(src, "UTC")
    assert codes(r) == [(n, "I025") for n in range(3, 11)]
    reasons = {j.row: j.reason for j in r.report.rejects}
    at = "started 2025-01-01T00:00:00"
    assert reasons[3] == (
        f"job `2` {at} ended 2025-01-01T01:00:00 in row 3 and 2025-01-01T02:00:00 in row 4: "
        "neither is imported"
    )
    assert (
        reasons[5]
        == f"job `3` {at} ended `COMPLETED` in row 5 and `PREEMPTED` in row 6: neither is imported"
    )
    assert (
        reasons[7]
        == f"job `4` {at} with GPU type `a100` in row 7 and `h100` in row 8: neither is imported"
    )
    assert reasons[9].startswith(f"job `5` {at} submitted 2025-01-01T00:00:00 in row 9 and 2024")
    # job 1: one allocation of 1 h, from the record that ended, not an open one beside it
    assert r.report.allocations == 1
    assert gpu_seconds(r) == 8 * 3600


def test_steps_of_a_job_whose_record_was_rejected_are_not_counted_inside_it(
    tmp_path: Path,
) -> None:
    src = tmp_path / "jobs.txt"
    src.write_text(
        "JobID|State|Submit|Start|End|AllocTRES\n"
        f"7|{OK}|cpu=4\n"
        f"7.batch|{OK}|cpu=4\n"
        "8|PENDING|2025-01-01T00:00:00|Unknown|Unknown|\n"
        f"8.extern|{OK}|cpu=4\n"
    )
    r = import_sacct(src, "UTC")
    assert codes(r) == [(1, "I016"), (2, "I013"), (4, "I013")]
    reasons = [j.reason for j in r.report.rejects]
    assert reasons[1] == "step `7.batch` of job `7`, whose record (row 1) was rejected"
    assert reasons[2] == "step `8.extern` of job `8`, which never started (row 3)"
    assert r.report.accounted


def test_blank_lines_before_the_first_line(tmp_path: Path) -> None:
    # a --noheader export that starts with a blank line: that line is row 1, blank
    src = tmp_path / "jobs.txt"
    src.write_text(f"\n1|{OK}|{GPU8}\n")
    r = import_sacct(src, "UTC", fields=["JobID", "State", "Submit", "Start", "End", "AllocTRES"])
    assert (r.report.blank, r.report.blank_rows, r.report.allocations) == (1, (1,), 1)
    assert r.events["source_row"].unique().to_list() == [2]
    # with a header after a blank line, rows are counted from the line after the header
    src.write_text(f"\nJobID|State|Submit|Start|End|AllocTRES\n1|{OK}|{GPU8}\n")
    r = import_sacct(src, "UTC")
    assert (r.report.rows_read, r.report.allocations) == (1, 1)


def test_field_names_in_any_case(tmp_path: Path) -> None:
    src = tmp_path / "jobs.txt"
    src.write_text(
        f"jobid|state|submit|start|end|alloctres|nodelist|elapsedraw\n1|{OK}|{GPU8}|gpu-a01|3600\n"
    )
    r = import_sacct(src, "UTC")
    started = r.events.filter(pl.col("event") == "started")
    assert started.select("job_id", "gpus", "node_list").rows() == [("1", 8, "gpu-a01")]
    assert r.report.notes == ()  # ElapsedRaw 3,600 s is End − Start


def test_a_noheader_parsable_export_without_a_final_line_break(tmp_path: Path) -> None:
    src = tmp_path / "jobs.txt"
    fields = ["JobID", "State", "Submit", "Start", "End", "AllocTRES"]
    # --parsable --noheader: every line ends with the delimiter, but the last has no line break
    src.write_text(f"1|{OK}|{GPU8}|\n2|{OK}|gres/gpu=2|")
    r = import_sacct(src, "UTC", fields=fields)
    assert codes(r) == []
    # without a header, row 2 is line 2
    [note] = r.report.notes
    assert (note.code, note.examples) == ("I044", ((2, "line 2 ends `gres/gpu=2`"),))
    assert gpu_seconds(r) == 8 * 3600 + 2 * 3600
    # cut inside its last record: fewer fields than --fields names
    src.write_text(f"1|{OK}|{GPU8}|\n2|COMPLETED|2025-01-01T00:")
    code, message, _ = error_of(src, fields=fields)
    assert (code, message) == (
        "I003",
        f"`{src}` ends mid-line, on line 2 (cut short?): its last record has 3 fields, the "
        "header 6",
    )


def test_two_ended_records_that_disagree_are_rejected_beside_a_running_one(
    tmp_path: Path,
) -> None:
    """Three exports of one attempt: RUNNING in the first, COMPLETED at 21:05 in the second,
    PREEMPTED at 11:05 the next day in the third. The running record says nothing of the end,
    but the two that ended disagree (14 hours and a preemption): all three rejected, never
    merged into the first end."""
    src = tmp_path / "jobs.txt"
    start = "2025-03-03T08:00:00|2025-03-03T09:05:00"
    src.write_text(
        "JobID|State|Submit|Start|End|AllocTRES\n"
        f"9001|RUNNING|{start}|Unknown|{GPU8}\n"
        f"9001|COMPLETED|{start}|2025-03-03T21:05:00|{GPU8}\n"
        f"9001|PREEMPTED|{start}|2025-03-04T11:05:00|{GPU8}\n"
        f"9002|COMPLETED|{start}|2025-03-03T10:05:00|{GPU8}\n"
    )
    r = import_sacct(src, "UTC")
    assert codes(r) == [(1, "I025"), (2, "I025"), (3, "I025")]
    assert "ended 2025-03-03T21:05:00 in row 2 and 2025-03-04T11:05:00 in row 3" in (
        r.report.rejects[0].reason
    )
    # only 9002 is billed: 8 GPUs × 1 h
    assert gpu_seconds(r) == 8 * 3600


@pytest.mark.parametrize("order", ["submit first", "submit second"])
def test_a_merged_attempt_keeps_the_submit_one_record_gives(tmp_path: Path, order: str) -> None:
    """One record of the attempt has `Submit` Unknown, the other 08:00: merged, the attempt
    waited 09:05 − 08:00 = 65 minutes in the queue, whichever row comes first."""
    src = tmp_path / "jobs.txt"
    rows = [
        f"9001|COMPLETED|Unknown|2025-03-03T09:05:00|2025-03-03T10:05:00|{GPU8}|g1",
        f"9001|COMPLETED|2025-03-03T08:00:00|2025-03-03T09:05:00|2025-03-03T10:05:00|{GPU8}|g01",
    ]
    if order == "submit first":
        rows.reverse()
    src.write_text("JobID|State|Submit|Start|End|AllocTRES|NodeList\n" + "\n".join(rows) + "\n")
    r = import_sacct(src, "UTC")
    assert [n.code for n in r.report.notes] == ["I042"]
    allocs, _ = derive_facts(r.trace).collect()
    assert allocs["queue_wait"].to_list() == [timedelta(minutes=65)]
