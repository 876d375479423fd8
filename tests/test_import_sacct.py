"""`import sacct`: Slurm accounting records as a trace — every mapping, every trap of the man
page (requeues, typed GPU counts, local times, `Unknown`, job steps), every reject."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import polars as pl
import pytest

from contractlang.errors import ContractlangError
from contractlang.importers import import_sacct
from contractlang.importers.result import ImportResult
from contractlang.importers.sacct import Allocations
from contractlang.importers.sacct import fields as sf
from contractlang.trace import derive_facts

DATA = Path(__file__).parent / "data"
HEADER = "JobID|JobName|State|Submit|Start|End|Elapsed|AllocTRES|Restarts"
GPU8 = "billing=64,cpu=64,gres/gpu:h100=8,gres/gpu=8,mem=1000G,node=1"
NY = "America/New_York"


def sacct(tmp_path: Path, *rows: str, header: str = HEADER, **kw: object) -> ImportResult:
    path = tmp_path / "jobs.txt"
    path.write_text("\n".join([header, *rows]) + "\n")
    return import_sacct(path, kw.pop("tz", "UTC"), **kw)  # type: ignore[arg-type]


def codes(result: ImportResult) -> list[tuple[int, str]]:
    return [(r.row, r.code) for r in result.report.rejects]


def utc(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


# --------------------------------------------------------------------------- the sample file


@pytest.fixture(scope="module")
def requeue() -> ImportResult:
    return import_sacct(DATA / "sacct_requeue.txt", NY)


def test_every_row_of_the_sample_is_accounted_for(requeue: ImportResult) -> None:
    r = requeue.report
    # 18 data rows: 7 job records that ran, 10 steps, 1 job cancelled while pending
    assert r.rows_read == 18
    assert {m.label: m.rows for m in r.mapped} == {
        "job records (one allocation each)": 7,
        "job steps (inside their job's allocation)": 10,
        "job records that never started (a request only)": 1,
    }
    assert r.rejects == ()
    assert r.accounted
    assert (r.runs, r.allocations) == (5, 7)


def test_a_job_preempted_twice_is_three_attempts_of_one_run(requeue: ImportResult) -> None:
    allocs, _ = derive_facts(requeue.trace).collect()
    job = allocs.filter(pl.col("run_id") == "7001").sort("attempt")
    assert job["alloc_id"].to_list() == ["7001#1", "7001#2", "7001#3"]
    assert job["end_reason"].to_list() == ["reclaimed", "reclaimed", "released"]
    # 08:04:40 EST (UTC−5) is 13:04:40 UTC; the runtimes are End − Start
    assert job["start"][0] == utc("2025-03-03 13:04:40")
    assert job["runtime"].to_list() == [
        timedelta(hours=2, minutes=30),
        timedelta(minutes=39, seconds=12),
        timedelta(hours=16),
    ]
    # Slurm resets Submit on requeue: each attempt waits from its own submit, not the first
    # 08:04:40 − 08:00:12 = 4 min 28 s; 10:52:03 − 10:34:41 = 17 min 22 s; 11:40:00 − 11:31:16
    assert job["queue_wait"].to_list() == [
        timedelta(minutes=4, seconds=28),
        timedelta(minutes=17, seconds=22),
        timedelta(minutes=8, seconds=44),
    ]
    # replaced 10:52:03 − 10:34:40 = 17 min 23 s after the first preemption
    assert job["replacement_wait"][0] == timedelta(minutes=17, seconds=23)


def test_a_node_failure_is_a_failed_allocation(requeue: ImportResult) -> None:
    allocs, runs = derive_facts(requeue.trace).collect()
    job = allocs.filter(pl.col("run_id") == "7002").sort("attempt")
    assert job["end_reason"].to_list() == ["failed", "released"]
    assert job["runtime"][0] == timedelta(hours=4, minutes=11, seconds=37)
    assert runs.filter(pl.col("run_id") == "7002")["failures"].item() == 1


def test_gpus_the_dst_change_and_the_states_kept(requeue: ImportResult) -> None:
    allocs, _ = derive_facts(requeue.trace).collect()
    by = {a["alloc_id"]: a for a in allocs.iter_rows(named=True)}
    # `gres/gpu:h100=16,gres/gpu=16` is 16 GPUs, not 32; the type is the sku
    assert (by["7005#1"]["gpus"], by["7005#1"]["sku"]) == (16, "h100")
    # 23:00 EST on 8 March to 07:00 EDT on 9 March: the clocks went forward, so 7 h, not 8
    assert by["7005#1"]["runtime"] == timedelta(hours=7)
    # a site that accounts only typed GPUs: `gres/gpu:a100=4` alone is 4 GPUs
    assert (by["7003#1"]["gpus"], by["7003#1"]["sku"]) == (4, "a100")
    ev = requeue.events
    states = ev.filter(pl.col("event") == "released").select("alloc_id", "slurm_state").rows()
    assert ("7003#1", "CANCELLED by 1001") in states
    assert ("7005#1", "TIMEOUT") in states


def test_metered_gpu_time_by_hand(requeue: ImportResult) -> None:
    _, runs = derive_facts(requeue.trace).collect()
    # 7001: 8 × (9000 + 2352 + 57600) s = 551,616; 7002: 8 × (15097 + 28800) = 351,176;
    # 7003: 4 × 15600 = 62,400; 7005: 16 × 25200 = 403,200; together 1,368,392 GPU-seconds
    total = runs["metered_gpu_time"].sum()
    assert total == timedelta(seconds=1_368_392)


def test_a_job_cancelled_while_pending_is_a_request_only(requeue: ImportResult) -> None:
    rows = requeue.events.filter(pl.col("run_id") == "7004")
    assert rows.select("alloc_id", "event").rows() == [(None, "requested")]
    # 09:00 on 11 March is EDT (UTC−4): the clocks went forward on the 9th
    assert rows["ts"][0] == utc("2025-03-11 13:00:00")


def test_every_event_names_its_source_row(requeue: ImportResult) -> None:
    ev = requeue.events
    assert ev["source_row"].null_count() == 0
    # row 8 is the third attempt of 7001: requested, started, released
    assert ev.filter(pl.col("source_row") == 8)["event"].to_list() == [
        "requested",
        "started",
        "released",
    ]


# --------------------------------------------------------------------------- the traps


def test_parsable_with_a_trailing_bar(tmp_path: Path) -> None:
    r = sacct(
        tmp_path,
        f"1|a|COMPLETED|2025-01-01T00:00:00|2025-01-01T00:00:00|2025-01-01T01:00:00|01:00:00|{GPU8}|0|",
        header=HEADER + "|",
    )
    assert r.report.rejects == ()
    assert r.report.allocations == 1


def test_local_time_in_a_dst_gap_is_an_error_naming_the_row(tmp_path: Path) -> None:
    with pytest.raises(ContractlangError) as exc:
        sacct(
            tmp_path,
            f"1|a|COMPLETED|2025-03-09T01:00:00|2025-03-09T01:10:00|2025-03-09T04:00:00|01:50:00|{GPU8}|0",
            f"2|b|COMPLETED|2025-03-09T01:00:00|2025-03-09T02:30:00|2025-03-09T04:00:00|00:30:00|{GPU8}|0",
            tz=NY,
        )
    [d] = exc.value.diagnostics
    assert (d.code, d.span.line) == ("I004", 2)
    assert "`Start` 2025-03-09T02:30:00 does not exist in `America/New_York`" in d.message
    assert d.help is not None
    assert "%FT%T%z" in d.help


def test_local_time_in_a_repeated_hour_is_an_error_naming_the_row(tmp_path: Path) -> None:
    with pytest.raises(ContractlangError) as exc:
        sacct(
            tmp_path,
            f"1|a|COMPLETED|2025-11-02T00:00:00|2025-11-02T00:10:00|2025-11-02T01:30:00|01:20:00|{GPU8}|0",
            tz=NY,
        )
    [d] = exc.value.diagnostics
    assert (d.code, d.span.line) == ("I005", 1)
    assert "happens twice" in d.message


def test_times_with_an_offset_need_no_guess(tmp_path: Path) -> None:
    # exported with SLURM_TIME_FORMAT=%FT%T%z: 01:30 EDT (−0400) is 05:30 UTC, unambiguous
    r = sacct(
        tmp_path,
        f"1|a|COMPLETED|2025-11-02T00:00:00-0400|2025-11-02T00:10:00-0400|2025-11-02T01:30:00-0400|01:20:00|{GPU8}|0",
        tz=NY,
    )
    ends = r.events.filter(pl.col("event") == "released")["ts"]
    assert ends[0] == utc("2025-11-02 05:30:00")


def test_elapsed_that_disagrees_with_the_times_is_noted(tmp_path: Path) -> None:
    # the cluster is in New York but `--tz UTC` was given: across the DST change End − Start
    # is 8 h while Slurm's own Elapsed says 7 h
    r = sacct(
        tmp_path,
        f"1|a|TIMEOUT|2025-03-08T22:50:00|2025-03-08T23:00:00|2025-03-09T07:00:00|07:00:00|{GPU8}|0",
    )
    [note] = r.report.notes
    assert (note.code, note.count) == ("I033", 1)
    assert note.examples == ((1, "Elapsed 25,200 s, End − Start 28,800 s"),)


def test_gpu_counts_typed_untyped_and_not_gpus(tmp_path: Path) -> None:
    r = sacct(
        tmp_path,
        # typed counts that do not add up to the total: the total wins, and it is noted
        "1|a|COMPLETED|2025-01-01T00:00:00|2025-01-01T00:00:00|2025-01-01T01:00:00|01:00:00|"
        "gres/gpu:a100=2,gres/gpu:h100=2,gres/gpu=8,node=1|0",
        # gres/gpumem and gres/gpuutil are not GPUs
        "2|b|COMPLETED|2025-01-01T00:00:00|2025-01-01T00:00:00|2025-01-01T01:00:00|01:00:00|"
        "cpu=8,gres/gpu=1,gres/gpumem=80G,gres/gpuutil=100,node=1|0",
        # a CPU-only job is rejected: the trace holds GPU allocations
        "3|c|COMPLETED|2025-01-01T00:00:00|2025-01-01T00:00:00|2025-01-01T01:00:00|01:00:00|"
        "cpu=4,mem=16G,node=1|0",
    )
    starts = r.events.filter(pl.col("event") == "started")
    assert starts.select("run_id", "gpus").rows() == [("1", 8), ("2", 1)]
    assert "sku" not in starts.columns  # no single GPU type named: no `sku` at all
    assert [n.code for n in r.report.notes] == ["I037", "I038"]
    assert codes(r) == [(3, "I016")]


def test_a_gpu_type_that_is_empty_is_no_type(tmp_path: Path) -> None:
    # `gres/gpu:=8` names no type: its GPUs are untyped, not of a type `""` written as the
    # sku (which --sku-map then counted as a type it does not map, shown as `()`)
    ok = "COMPLETED|2025-01-01T00:00:00|2025-01-01T00:00:00|2025-01-01T01:00:00|01:00:00"
    rows = (f"1|a|{ok}|gres/gpu:=8,gres/gpu=8|0", f"2|b|{ok}|gres/gpu: =4|0")
    r = sacct(tmp_path, *rows)
    starts = r.events.filter(pl.col("event") == "started")
    assert starts.select("run_id", "gpus").rows() == [("1", 8), ("2", 4)]
    assert "sku" not in starts.columns
    mapped = sacct(tmp_path, *rows, allocations=Allocations(sku="H100-80G", sku_map={"h100": "X"}))
    assert mapped.events.filter(pl.col("event") == "started")["sku"].to_list() == ["H100-80G"] * 2
    facts = dict(mapped.report.facts)
    assert facts["allocations of a GPU type `--sku-map` does not map"] == "0"
    assert sf.parse_gres("gpu: :2") == sf.parse_gres("gpu:2")


def test_unknown_and_none_and_running_jobs(tmp_path: Path) -> None:
    rows = (
        # pending: no Start, no End: a request only
        "1|a|PENDING|2025-01-01T00:00:00|Unknown|Unknown|00:00:00||0",
        # running: End Unknown
        f"2|b|RUNNING|2025-01-01T00:00:00|2025-01-01T00:05:00|Unknown|00:55:00|{GPU8}|0",
        # never started, no submit time either: nothing to import
        "3|c|PENDING|None|None|None|00:00:00||0",
    )
    r = sacct(tmp_path, *rows)
    assert codes(r) == [(2, "I017"), (3, "I019")]
    assert "still running" in r.report.rejects[0].reason
    kept = sacct(tmp_path, *rows, open_at=utc("2025-01-01 02:00:00"))
    assert codes(kept) == [(3, "I019")]
    assert kept.report.open_allocations == 1
    assert [n.code for n in kept.report.notes] == ["I035"]
    allocs, _ = derive_facts(kept.trace).collect()
    # closed by --open-at at 02:00 when read: 00:05 → 02:00 is 1 h 55 min
    assert allocs["runtime"].to_list() == [timedelta(hours=1, minutes=55)]


def test_an_attempt_running_in_two_exports_is_rejected_in_both(tmp_path: Path) -> None:
    # the same attempt (job 2, the same Start) still running in two overlapping exports, its
    # name changed between them: the records merge, and without --open-at neither is imported
    run = "RUNNING|2025-01-01T00:00:00|2025-01-01T00:05:00|Unknown"
    rows = (f"2|b|{run}|00:55:00|{GPU8}|0", f"2|b2|{run}|01:55:00|{GPU8}|0")
    r = sacct(tmp_path, *rows)
    assert codes(r) == [(1, "I017"), (2, "I017")]
    assert not r.report.mapped  # the second record is not "merged" into a rejected attempt
    assert not r.report.notes  # nor noted as imported with a caveat (I042)
    assert r.report.accounted
    kept = sacct(tmp_path, *rows, open_at=utc("2025-01-01 02:00:00"))
    assert codes(kept) == []
    assert {m.label: m.rows for m in kept.report.mapped} == {
        "job records of an attempt already read (merged into it)": 1,
        "job records (one allocation each)": 1,
    }
    assert sorted(n.code for n in kept.report.notes) == ["I035", "I042"]


def test_steps_are_folded_into_their_job_or_rejected_without_it(tmp_path: Path) -> None:
    r = sacct(
        tmp_path,
        f"10|a|COMPLETED|2025-01-01T00:00:00|2025-01-01T00:00:00|2025-01-01T01:00:00|01:00:00|{GPU8}|0",
        f"10.batch|batch|COMPLETED|2025-01-01T00:00:00|2025-01-01T00:00:00|2025-01-01T01:00:00|01:00:00|{GPU8}|",
        f"10.extern|extern|COMPLETED|2025-01-01T00:00:00|2025-01-01T00:00:00|2025-01-01T01:00:00|01:00:00|{GPU8}|",
        f"11.0|x|COMPLETED|2025-01-01T00:00:00|2025-01-01T00:00:00|2025-01-01T01:00:00|01:00:00|{GPU8}|",
    )
    # the steps carry no GPUs of their own: one allocation of 8 GPUs, not 24
    starts = r.events.filter(pl.col("event") == "started")
    assert starts["gpus"].to_list() == [8]
    assert codes(r) == [(4, "I013")]
    assert r.report.accounted


def test_arrays_and_heterogeneous_jobs(tmp_path: Path) -> None:
    r = sacct(
        tmp_path,
        f"55_1|a|COMPLETED|2025-01-01T00:00:00|2025-01-01T00:00:00|2025-01-01T01:00:00|01:00:00|{GPU8}|0",
        f"55_2|a|FAILED|2025-01-01T00:00:00|2025-01-01T00:00:00|2025-01-01T01:00:00|01:00:00|{GPU8}|0",
        f"60+0|h|COMPLETED|2025-01-01T00:00:00|2025-01-01T00:00:00|2025-01-01T01:00:00|01:00:00|{GPU8}|0",
        f"60+1|h|COMPLETED|2025-01-01T00:00:00|2025-01-01T00:00:00|2025-01-01T01:00:00|01:00:00|{GPU8}|0",
        "61_[1-4]|p|PENDING|2025-01-01T00:00:00|Unknown|Unknown|00:00:00||0",
    )
    starts = r.events.filter(pl.col("event") == "started")
    assert starts.select("run_id", "alloc_id").rows() == [
        ("55_1", "55_1#1"),
        ("55_2", "55_2#1"),
        ("60", "60+0#1"),
        ("60", "60+1#1"),
    ]
    # FAILED is the job's own exit code: the customer's, so released
    assert r.events.filter(pl.col("alloc_id") == "55_2#1")["event"].to_list() == [
        "requested",
        "started",
        "released",
    ]
    assert codes(r) == [(5, "I019")]


def test_every_reject_has_its_code(tmp_path: Path) -> None:
    ok = f"|COMPLETED|2025-01-01T00:00:00|2025-01-01T00:00:00|2025-01-01T01:00:00|01:00:00|{GPU8}|0"
    r = sacct(
        tmp_path,
        "1|a" + ok,
        "1|a" + ok,  # an exact repeat
        "2|a|b" + ok,  # a `|` inside the job name: one field too many
        "x7|a" + ok,  # not a job ID
        "3|a" + ok.replace("COMPLETED", "COMPLETD"),
        "4|a" + ok.replace("COMPLETED", "REVOKED"),
        "5|a" + ok.replace("2025-01-01T01:00:00", "Ystday 20:13"),  # SLURM_TIME_FORMAT=relative
        "6|a" + ok.replace("2025-01-01T01:00:00", "2024-12-31T23:00:00"),
        "7|a" + ok.replace("gres/gpu=8", "gres/gpu=eight"),
        "8|a" + ok.replace("|2025-01-01T01:00:00|", "|Unknown|"),
    )
    assert codes(r) == [
        (2, "I012"),
        (3, "I010"),
        (4, "I011"),
        (5, "I014"),
        (6, "I024"),
        (7, "I015"),
        (8, "I018"),
        (9, "I016"),
        (10, "I015"),
    ]
    reasons = {j.row: j.reason for j in r.report.rejects}
    assert reasons[2] == "repeats row 1 exactly"
    assert reasons[3] == "has 10 fields, the header 9 (a `|` inside a value?)"
    assert reasons[5] == "unknown job state `COMPLETD` (did you mean `COMPLETED`?)"
    assert reasons[7] == "`End` value `Ystday 20:13` is not a time (YYYY-MM-DDTHH:MM:SS)"
    assert reasons[10] == "no `End` time for a job in state `COMPLETED`"
    assert r.report.rejects[0].record == "1|a" + ok
    assert r.report.accounted


def test_a_submit_after_the_start_drops_only_the_request(tmp_path: Path) -> None:
    r = sacct(
        tmp_path,
        f"1|a|COMPLETED|2025-01-01T00:10:00|2025-01-01T00:00:00|2025-01-01T01:00:00|01:00:00|{GPU8}|0",
    )
    assert r.events["event"].to_list() == ["started", "released"]
    assert [n.code for n in r.report.notes] == ["I034"]


def test_files_that_are_not_sacct_output(tmp_path: Path) -> None:
    for header, code in (
        ("JobID,State,Start,End", "I003"),  # no `|`
        ("JobID|State|Start|End|Elapsed", "I002"),  # no AllocTRES
        ("", "I003"),
    ):
        with pytest.raises(ContractlangError) as exc:
            sacct(tmp_path, header=header)
        assert exc.value.diagnostics[0].code == code
    with pytest.raises(ContractlangError) as exc:
        sacct(tmp_path, header="JobId|Stat|Start|End|AllocTRES")
    [d] = exc.value.diagnostics
    assert (d.code, d.message, d.help) == (
        "I002",
        "the export has no `State` field",
        "did you mean `Stat`?",
    )
    # UTF-16 and binary content are still unreadable as a whole (bytes that are not UTF-8
    # inside a UTF-8 file are judged field by field: see the tests of I027 and I043)
    bad = tmp_path / "b.txt"
    for data, why in (
        ("JobID|State\n".encode("utf-16"), "it is UTF-16 text, not UTF-8"),
        (b"JobID|State\n\x00\x01|x\n", "binary content, not text"),
    ):
        bad.write_bytes(data)
        with pytest.raises(ContractlangError) as exc:
            import_sacct(bad, "UTC")
        assert exc.value.diagnostics[0].code == "I001"
        assert exc.value.diagnostics[0].message == f"cannot read `{bad}`: {why}"


def test_a_field_named_twice_in_the_header_is_i003_naming_it(tmp_path: Path) -> None:
    row = "1|a|COMPLETED|2025-01-01T00:00:00|2025-01-01T00:00:00|2025-01-01T01:00:00|01:00:00|"
    with pytest.raises(ContractlangError) as exc:
        sacct(tmp_path, row + GPU8 + "|0|FAILED", header=HEADER + "|state")
    [d] = exc.value.diagnostics
    assert (d.code, d.message) == (
        "I003",
        f"`{tmp_path / 'jobs.txt'}` names the field `State` more than once in its header "
        "(fields 3 and 10)",
    )


def test_capacity_is_written_on_every_start(tmp_path: Path) -> None:
    r = sacct(
        tmp_path,
        f"1|a|PREEMPTED|2025-01-01T00:00:00|2025-01-01T00:00:00|2025-01-01T01:00:00|01:00:00|{GPU8}|0",
        capacity="spot",
    )
    assert r.events.filter(pl.col("event") == "started")["capacity"].to_list() == ["spot"]
    assert r.events["event"].to_list() == ["requested", "started", "reclaimed"]


def test_counts_and_times_out_of_the_trace_s_range_are_rejected_not_crashes(tmp_path: Path) -> None:
    r = sacct(
        tmp_path,
        # more GPUs than a 64-bit count holds
        "1|a|COMPLETED|2025-01-01T00:00:00|2025-01-01T00:00:00|2025-01-01T01:00:00|01:00:00|"
        "gres/gpu=99999999999999999999999|0",
        # 23:59 on the last day of year 9999 in New York is in year 10000 in UTC
        f"2|a|COMPLETED|9999-12-31T23:00:00|9999-12-31T23:00:00|9999-12-31T23:59:59|00:59:59|{GPU8}|0",
        tz=NY,
    )
    assert codes(r) == [(1, "I016"), (2, "I015")]
    assert r.report.rejects[1].reason == "`Submit` value `9999-12-31T23:00:00` is out of range"


def test_a_count_the_trace_s_column_holds_is_judged_by_the_trace_s_rules(tmp_path: Path) -> None:
    # 10,000,001 GPUs fit the 64-bit count column, so the row maps; one allocation of a trace
    # may have at most 10,000,000 (trace.limits.MAX_GPUS): T020 at its row, under I006
    row = "1|a|COMPLETED|2025-01-01T00:00:00|2025-01-01T00:00:00|2025-01-01T01:00:00|01:00:00|"
    assert codes(sacct(tmp_path, row + "gres/gpu=10000000|0")) == []
    with pytest.raises(ContractlangError) as info:
        sacct(tmp_path, row + "gres/gpu=10000001|0")
    found = [(d.code, d.message) for d in info.value.diagnostics if d.is_error]
    assert found[0][0] == "I006"
    assert found[1] == (
        "T020",
        "`gpus` value `10000001` is more than contractlang supports in one allocation (10,000,000)",
    )


def test_digits_are_ascii_digits(tmp_path: Path) -> None:
    # `str.isdigit` takes `²` (which `int` refuses: an internal error) and `٣` (which `int`
    # reads as 3); sacct writes ASCII digits, so anything else is not a number
    ok = "|COMPLETED|2025-01-01T00:00:00|2025-01-01T00:00:00|2025-01-01T01:00:00|"
    r = sacct(
        tmp_path,
        "1|a" + ok + "01:00:00|gres/gpu=²|0",
        "2|a" + ok + "01:00:00|gres/gpu=٣|0",
        "٣|a" + ok + f"01:00:00|{GPU8}|0",
        # Restarts `²` and Elapsed `٠١:٠٠:٠٠` are unreadable, so left empty and not compared
        "4|a" + ok + f"٠١:٠٠:٠٠|{GPU8}|²",
        "5|a" + ok.replace("2025-01-01T01", "٢٠٢٥-01-01T01") + f"01:00:00|{GPU8}|0",
    )
    assert codes(r) == [(1, "I016"), (2, "I016"), (3, "I011"), (5, "I015")]
    assert r.report.rejects[0].reason == (
        "`AllocTRES` `gres/gpu=²` has a GPU count that is not a whole number the trace can hold"
    )
    assert r.events.select("run_id", "restarts").unique().rows() == [("4", None)]
    # each unreadable optional value is noted where it was left empty
    [note] = r.report.notes
    assert (note.code, note.count) == ("I039", 2)
    assert note.examples == (
        (4, "`Elapsed` `٠١:٠٠:٠٠`: not compared with the times"),
        (4, "`Restarts` `²`"),
    )


def test_lines_end_at_line_breaks_only(tmp_path: Path) -> None:
    # `str.splitlines` would also break at a form feed or U+2028 inside a job name
    ok = f"|COMPLETED|2025-01-01T00:00:00|2025-01-01T00:00:00|2025-01-01T01:00:00|01:00:00|{GPU8}|0"
    r = sacct(tmp_path, "1|a\x0cb" + ok, "2|c\u2028d" + ok)
    assert r.report.rows_read == 2
    assert r.report.rejects == ()
    assert r.events.filter(pl.col("event") == "started")["run_id"].to_list() == ["1", "2"]
