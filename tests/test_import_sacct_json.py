"""`sacct --json` exports as rows of sacct fields: the two committed samples (21.08's
`openapi/dbv0.0.37` shape, 24.11's `data_parser/v0.0.42` shape, written from Slurm's parsers),
every field checked against values computed here from the sample with plain `json` and
`datetime`; every bad path an I003 or a reject naming its row, never an exception."""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from support.cli import no_traceback, run

from contractlang.errors import ContractlangError
from contractlang.importers.localtime import parse_timestamp
from contractlang.importers.sacct import fields as sf
from contractlang.importers.sacct import import_sacct
from contractlang.importers.sacct.json_export import JsonTable, json_rows, looks_like_json
from contractlang.trace import derive_facts

DATA = Path(__file__).parent / "data"
OLD = DATA / "sacct_json_21.08.json"
NEW = DATA / "sacct_json_24.11.json"
A = 1_717_977_600  # 2024-06-10T00:00:00Z, the base of the 21.08 sample
B = 1_740_988_800  # 2025-03-03T08:00:00Z, the base of the 24.11 sample


def iso(epoch: int) -> str:
    """Epoch seconds as `SLURM_TIME_FORMAT=%FT%T%z` prints them in UTC, computed apart."""
    return datetime.fromtimestamp(epoch, UTC).isoformat().replace("+00:00", "+0000")


def rows(path: Path) -> JsonTable:
    return json_rows(str(path), path.read_text())


def doc(*jobs: Any, release: str | None = "24.11.1") -> str:
    meta = {"slurm": {"release": release}} if release else {}
    return json.dumps({"meta": meta, "errors": [], "jobs": list(jobs)})


def job(**over: Any) -> dict[str, Any]:
    """A 24.11 job record, COMPLETED, 8 GPUs, 2025-03-03 08:05 to 10:35 UTC."""
    base: dict[str, Any] = {
        "job_id": 9001,
        "array": {"job_id": 0, "task_id": {"set": False, "infinite": False, "number": 0}},
        "het": {"job_id": 0, "job_offset": {"set": False, "infinite": False, "number": 0}},
        "name": "train",
        "state": {"current": ["COMPLETED"], "reason": "None"},
        "kill_request_user": "",
        "time": {
            "submission": B,
            "eligible": B,
            "start": B + 300,
            "end": B + 9300,
            "elapsed": 9000,
            "suspended": 0,
        },
        "tres": {"allocated": [{"type": "gres", "name": "gpu", "id": 1001, "count": 8}]},
        "steps": [],
    }
    base.update(over)
    return base


def reject_of(text: str) -> tuple[str, str] | None:
    table = json_rows("x.json", text)
    assert len(table.rows) == 1
    return table.rows[0].reject


def i003(text: str) -> str:
    with pytest.raises(ContractlangError) as info:
        json_rows("x.json", text)
    d = info.value.diagnostics[0]
    assert d.code == "I003"
    return d.message


# ------------------------------------------------------------------ the 24.11 sample


def test_the_24_11_sample_field_by_field() -> None:
    table = rows(NEW)
    raw = json.loads(NEW.read_text())["jobs"]
    assert (table.release, table.start_is_eligible) == ("24.11.1", False)
    assert [r.row for r in table.rows] == list(range(1, len(raw) + 1))
    assert all(r.reject is None for r in table.rows)
    assert table.fields == (
        "JobID",
        "JobIDRaw",
        "JobName",
        "Partition",
        "QOS",
        "State",
        "Submit",
        "Start",
        "End",
        "Elapsed",
        "ElapsedRaw",
        "AllocTRES",
        "Restarts",
        "NodeList",
    )
    for r, j in zip(table.rows, raw, strict=True):
        f = r.fields
        assert f is not None
        assert f["JobIDRaw"] == str(j["job_id"])
        assert f["JobName"] == j["name"]
        assert f["NodeList"] == j["nodes"]
        assert (f["Partition"], f["QOS"]) == ("gpu", "spot")
        assert f["Restarts"] == str(j["restart_cnt"])
        t = j["time"]
        for field, key in (("Submit", "submission"), ("Start", "start"), ("End", "end")):
            assert f[field] == (iso(t[key]) if t[key] else "Unknown"), (r.row, field)
        assert f["ElapsedRaw"] == str(t["elapsed"])
        assert sf.parse_elapsed(f["Elapsed"]) == t["elapsed"]
        assert r.steps == len(j["steps"])
        assert not r.start_moved
        assert r.record == json.dumps(j, ensure_ascii=False, separators=(",", ":"))
        assert "\n" not in r.record
    f = {r.row: r.fields for r in table.rows}
    # row 1: 2025-03-03T08:00:00Z submitted, started 300 s later, ended 9,300 s after submit
    assert (f[1]["Submit"], f[1]["Start"], f[1]["End"]) == (
        "2025-03-03T08:00:00+0000",
        "2025-03-03T08:05:00+0000",
        "2025-03-03T10:35:00+0000",
    )
    assert f[1]["Elapsed"] == "02:30:00"  # 9,000 s
    # energy's count is -2 (NO_VAL64): sacct leaves it out; names in order, as sacct prints them
    assert f[1]["AllocTRES"] == ("billing=64,cpu=64,gres/gpu:h100=8,gres/gpu=8,mem=512000,node=1")
    assert f[3]["Elapsed"] == "04:00:00"  # 14,400 s
    # an array task, a heterogeneous job's components
    assert (f[4]["JobID"], f[5]["JobID"], f[6]["JobID"]) == ("7200_3", "7300+0", "7300+1")
    assert f[4]["JobName"] == "sweep|lr=3e-4"  # a `|` is fine: there is no delimiter
    assert f[8]["JobName"] == "wait\nlong"  # and so is a line break
    # cancelled while pending by alice: nothing allocated, Start = End (slurmdbd's own rule)
    assert (f[8]["State"], f[8]["AllocTRES"]) == ("CANCELLED by alice", "")
    assert f[8]["Start"] == f[8]["End"] == iso(B + 5400) == "2025-03-03T09:30:00+0000"
    assert (f[9]["State"], f[9]["Start"], f[9]["End"]) == ("PENDING", "Unknown", "Unknown")
    # ["PENDING", "REQUEUED"]: the flag is printed, as job_state_string prints it
    assert (f[10]["State"], f[11]["State"]) == ("REQUEUED", "COMPLETED")
    assert f[7]["AllocTRES"] == "billing=32,cpu=32,mem=512000,node=1"  # CPU only


def test_a_job_preempted_and_requeued_twice_is_three_rows() -> None:
    table = rows(NEW)
    attempts = [r for r in table.rows if r.fields is not None and r.fields["JobIDRaw"] == "7101"]
    assert [r.row for r in attempts] == [1, 2, 3]
    got = [(r.fields["State"], r.fields["Submit"], r.fields["Start"], r.fields["End"])
           for r in attempts if r.fields is not None]  # fmt: skip
    # each attempt its own Submit (reset on requeue), Start, End:
    #   B + 9,310 = 10:35:10, B + 10,800 = 11:00, B + 14,400 = 12:00
    #   B + 14,410 = 12:00:10, B + 16,200 = 12:30, B + 30,600 = 16:30
    assert got == [
        ("PREEMPTED", iso(B), iso(B + 300), iso(B + 9300)),
        ("PREEMPTED", "2025-03-03T10:35:10+0000", "2025-03-03T11:00:00+0000", iso(B + 14400)),
        ("COMPLETED", "2025-03-03T12:00:10+0000", "2025-03-03T12:30:00+0000",
         "2025-03-03T16:30:00+0000"),
    ]  # fmt: skip
    assert [r.fields["Restarts"] for r in attempts if r.fields is not None] == ["0", "1", "2"]
    assert [r.steps for r in attempts] == [2, 2, 3]
    # steps are not rows: 2 + 2 + 3 (job 7101) + 1 (the array task) = 8
    assert table.steps == 8


def test_every_converted_row_reads_with_the_text_paths_rules() -> None:
    for path in (OLD, NEW):
        for r in rows(path).rows:
            if r.fields is None:
                continue
            f = r.fields
            job = sf.parse_job_id(f["JobID"])
            assert job is not None
            assert job.step is None
            assert sf.parse_state(f["State"]) is not None
            tres = sf.parse_tres(f["AllocTRES"])
            assert tres is not None
            gres = [i for i in f["AllocTRES"].split(",") if i.startswith("gres/gpu=")]
            assert tres.gpus == (int(gres[0].split("=")[1]) if gres else 0)
            for field in ("Submit", "Start", "End"):
                v = f[field]
                assert sf.is_no_time(v) or parse_timestamp(v) is not None, (path, r.row, field)
                if not sf.is_no_time(v):
                    assert parse_timestamp(v).utcoffset().total_seconds() == 0  # type: ignore[union-attr]


# ------------------------------------------------------------------ the 21.08 sample


def test_the_21_08_sample_start_is_end_minus_elapsed_minus_suspended() -> None:
    """openapi/dbv0.0.37 writes the eligible time as `time.start`; the start slurmdbd's own
    elapsed implies is End − Elapsed − Suspended."""
    table = rows(OLD)
    raw = json.loads(OLD.read_text())["jobs"]
    assert (table.release, table.start_is_eligible) == ("21.08.8", True)
    assert "Restarts" not in table.fields  # restart_cnt is 24.11's
    f = {r.row: r.fields for r in table.rows}
    # row 1: end A + 4,200, elapsed 3,600 → A + 600 = 2024-06-10T00:10:00Z (eligible at + 60)
    assert f[1] is not None
    assert f[1]["Start"] == "2024-06-10T00:10:00+0000" == iso(A + 600)
    assert raw[0]["time"]["start"] == A + 60  # what the file says: the eligible time
    assert f[1]["JobID"] == "6000_1"
    assert f[1]["JobIDRaw"] == "6001"
    assert f[1]["AllocTRES"] == "billing=16,cpu=16,gres/gpu=2,mem=128000,node=1"
    # row 2: cancelled by bob; A + 2,500 − 1,800 = A + 700 = 00:11:40
    assert f[2] is not None
    assert f[2]["State"] == "CANCELLED by bob"
    assert f[2]["Start"] == "2024-06-10T00:11:40+0000"
    # row 3: pending: `time.start` is only its eligible time, so no start at all
    assert f[3] is not None
    assert (f[3]["State"], f[3]["Start"]) == ("PENDING", "Unknown")
    # row 4: still running: its start is nowhere in the file
    r4 = table.rows[3]
    assert r4.fields is None
    assert r4.reject is not None
    assert r4.reject[0] == "I023"
    assert r4.reject[1] == (
        "job 6004 is still running, and Slurm 21.08.8 writes the time a job became eligible "
        "as `time.start`: its start is not in the file"
    )
    # row 5: suspended 600 s: A + 8,800 − 7,200 − 600 = A + 1,000 = 00:16:40
    assert f[5] is not None
    assert f[5]["Start"] == "2024-06-10T00:16:40+0000"
    assert sf.parse_elapsed(f[5]["Elapsed"]) == 7200 == 8800 - 1000 - 600
    # row 6: a heterogeneous job's first component, ended by a node failure
    assert f[6] is not None
    assert (f[6]["JobID"], f[6]["State"]) == ("6006+0", "NODE_FAIL")
    # rows 7, 8: a requeued attempt, then the attempt that completed (same job ID)
    assert [f[7]["State"], f[8]["State"]] == ["REQUEUED", "COMPLETED"]  # type: ignore[index]
    assert f[8] is not None
    assert f[8]["Start"] == iso(A + 3600)
    moved = [r.row for r in table.rows if r.start_moved]
    assert moved == [1, 2, 3, 5, 6, 7, 8]  # every record whose time.start was not its start
    assert [r.steps for r in table.rows] == [2, 1, 0, 0, 0, 0, 0, 0]
    assert table.steps == 3


def test_a_release_that_writes_the_start_right_keeps_it() -> None:
    j = job(state={"current": "COMPLETED"})
    j["time"]["elapsed"] = 100  # disagrees with end − start: the text path notes it (I033)
    table = json_rows("x.json", doc(j, release="22.05.8"))
    assert table.start_is_eligible is False
    assert table.rows[0].fields is not None
    assert table.rows[0].fields["Start"] == iso(B + 300)
    assert not table.rows[0].start_moved


def test_without_a_release_only_a_record_that_shows_the_fault_moves() -> None:
    faulty = job(job_id=1, state={"current": "COMPLETED"})
    faulty["time"]["start"] = faulty["time"]["eligible"] = B  # eligible, 300 s before it ran
    right = job(job_id=2, state={"current": "COMPLETED"})
    running = job(job_id=3, state={"current": "RUNNING"})
    running["time"]["end"] = 0
    table = json_rows("x.json", doc(faulty, right, running, release=None))
    assert (table.release, table.start_is_eligible) == (None, None)
    starts = [r.fields["Start"] for r in table.rows if r.fields is not None]
    # B + 9,300 − 9,000 − 0 = B + 300 for the first; the others as written
    assert starts == [iso(B + 300), iso(B + 300), iso(B + 300)]
    assert [r.start_moved for r in table.rows] == [True, False, False]


# ------------------------------------------------------------------ the fields, one by one


def test_times_as_set_infinite_number_are_read_too() -> None:
    j = job()
    j["time"]["start"] = {"set": True, "infinite": False, "number": B + 300}
    j["time"]["end"] = {"set": False, "infinite": False, "number": 0}
    j["time"]["submission"] = {"set": True, "infinite": True, "number": 0}
    j["state"]["current"] = ["RUNNING"]
    f = json_rows("x.json", doc(j)).rows[0].fields
    assert f is not None
    assert (f["Submit"], f["Start"], f["End"]) == ("Unknown", iso(B + 300), "Unknown")


def test_states_as_sacct_prints_them() -> None:
    cases = [
        ("COMPLETED", "", "COMPLETED"),
        (["CANCELLED"], "", "CANCELLED"),
        (["CANCELLED"], "bob", "CANCELLED by bob"),
        ("CANCELLED", None, "CANCELLED"),
        (["PENDING", "REQUEUED"], "", "REQUEUED"),
        (["RUNNING", "COMPLETING"], "", "COMPLETING"),
        (["PREEMPTED", "LAUNCH_FAILED"], "", "PREEMPTED"),  # not a flag job_state_string prints
        (["PENDING", "REQUEUE_HOLD"], "", "REQUEUE_HOLD"),
        (["COMPLETD"], "", "COMPLETD"),  # left for the text path's I014 and its guess
    ]
    for current, user, expected in cases:
        j = job(state={"current": current}, kill_request_user=user)
        f = json_rows("x.json", doc(j)).rows[0].fields
        assert f is not None
        assert f["State"] == expected, current


def test_job_ids_as_sacct_prints_them() -> None:
    cases = [
        ({}, "9001"),
        ({"array": {"job_id": 9000, "task_id": 7, "task": None}}, "9000_7"),  # 21.08
        ({"array": {"job_id": 9000, "task_id": None, "task": None}}, "9001"),
        ({"array": {"job_id": 9000, "task": "1-5%2"}}, "9000_[1-5%2]"),  # not yet started
        ({"het": {"job_id": 9000, "job_offset": 2}}, "9000+2"),
        ({"het": {"job_id": 0, "job_offset": 4294967294}}, "9001"),  # NO_VAL
    ]
    for over, expected in cases:
        f = json_rows("x.json", doc(job(**over))).rows[0].fields
        assert f is not None
        assert (f["JobID"], f["JobIDRaw"]) == (expected, "9001"), over


def test_tres_counts_as_sacct_prints_them() -> None:
    allocated = [
        {"type": "mem", "name": None, "count": None},  # 21.08: NO_VAL64 is null, left out
        {"type": "energy", "name": "", "count": -2},  # 23.02 on: NO_VAL64, left out
        {"type": "fs", "name": "disk", "count": -1},  # INFINITE64: NONE
        {"type": "gres", "name": "gpu:a100", "count": 4},
        {"type": "cpu", "name": "", "count": 32},
    ]
    j = job(tres={"allocated": allocated})
    f = json_rows("x.json", doc(j)).rows[0].fields
    assert f is not None
    assert f["AllocTRES"] == "cpu=32,fs/disk=NONE,gres/gpu:a100=4"
    assert sf.parse_tres(f["AllocTRES"]).gpus == 4  # type: ignore[union-attr]


def test_an_optional_key_absent_from_one_record_is_empty_there() -> None:
    a = job(job_id=1)
    b = job(job_id=2)
    del b["name"], b["time"]["submission"]
    table = json_rows("x.json", doc(a, b))
    assert "JobName" in table.fields
    assert "Submit" in table.fields
    f = table.rows[1].fields
    assert f is not None
    assert (f["JobName"], f["Submit"]) == ("", "")
    assert sf.is_no_time(f["Submit"])


def test_looks_like_json_by_content() -> None:
    assert looks_like_json(NEW.read_text())
    assert looks_like_json(' \n\t{"jobs": []}')
    assert not looks_like_json((DATA / "sacct_requeue.txt").read_text())
    assert not looks_like_json("")
    assert not looks_like_json('[{"jobs": []}]')


# ------------------------------------------------------------------ files that are not exports


def test_files_that_are_not_sacct_json_are_i003() -> None:
    text = (DATA / "sacct_requeue.txt").read_text()
    assert i003(text) == "`x.json` is not `sacct --json` output: it does not start with `{`"
    whole = NEW.read_text()
    cut = whole[: len(whole) // 2]  # a copy that stopped half way
    assert i003(cut).startswith("`x.json` is not JSON: ")
    assert " at line " in i003(cut)
    deep = '{"jobs": ' + "[" * 100_000 + "]" * 100_000 + "}"
    assert i003(deep) == (
        "`x.json` is not JSON that can be read: lists or objects nested too deeply"
    )
    huge = '{"jobs": [{"job_id": ' + "9" * 5000 + "}]}"
    assert i003(huge) == (
        "`x.json` is not JSON that can be read: a number in it has more digits than can be read"
    )
    assert i003('{"meta": {}}') == ("`x.json` has no `jobs` array: it is not `sacct --json` output")
    assert i003('{"jobs": {"job_id": 1}}') == "`jobs` in `x.json` is an object, not an array"
    assert i003('{"jobs": "none"}') == "`jobs` in `x.json` is a string, not an array"
    assert i003('{"jobs": [], "jobs": []}') == (
        "`x.json` gives the key `jobs` twice in one object: which one counts?"
    )
    assert i003(
        '{"meta": {"slurm": {"release": "21.08.8", "release": "24.11.1"}}, "jobs": []}'
    ) == ("`x.json` gives the key `release` twice in one object: which one counts?")
    failed = {"errors": [{"error_number": 1, "description": "Unable to connect to database"}]}
    assert i003(json.dumps({**failed, "jobs": []})) == (
        "`x.json` reports errors from Slurm (`Unable to connect to database`): its jobs may be "
        "incomplete"
    )


def test_an_empty_jobs_array_is_an_empty_table() -> None:
    table = json_rows("x.json", '{"jobs": []}')
    assert (table.fields, table.rows, table.steps) == ((), (), 0)


# ------------------------------------------------------------------ records that are rejects


def without(path: str) -> dict[str, Any]:
    j = job()
    *parents, last = path.split(".")
    obj = j
    for p in parents:
        obj = obj[p]
    del obj[last]
    return j


def with_value(path: str, value: Any) -> dict[str, Any]:
    j = job()
    *parents, last = path.split(".")
    obj = j
    for p in parents:
        obj = obj[p]
    obj[last] = value
    return j


@pytest.mark.parametrize(
    ("record", "reason"),
    [
        (without("time"), "job 9001 has no `time`"),
        (without("time.start"), "job 9001 has no `time.start`"),
        (without("time.end"), "job 9001 has no `time.end`"),
        (without("job_id"), "has no `job_id`"),
        (without("state"), "job 9001 has no `state`"),
        (without("state.current"), "job 9001 has no `state.current`"),
        (without("tres"), "job 9001 has no `tres`"),
        (without("tres.allocated"), "job 9001 has no `tres.allocated`"),
        ("7", "not a job object but a string"),
        (with_value("job_id", "9001"), '`job_id` `"9001"` is not a whole number'),
        (with_value("time", 0), "`time` of job 9001 is a number, not an object"),
        (
            with_value("time.start", "2025-03-03T08:05:00"),
            '`time.start` of job 9001 is not a whole number: `"2025-03-03T08:05:00"`',
        ),
        (
            with_value("time.end", 1740998100.5),
            "`time.end` of job 9001 is not a whole number: `1740998100.5`",
        ),
        (with_value("time.start", True), "`time.start` of job 9001 is not a whole number: `true`"),
        (with_value("time.start", -1), "`time.start` of job 9001 is negative: `-1`"),
        # 7,258,118,400 is 2200-01-01T00:00:00Z
        (
            with_value("time.end", 7_258_118_400),
            "`time.end` of job 9001 is past 2199-12-31: `7258118400`",
        ),
        (
            with_value("time.submission", {"set": "yes", "infinite": False, "number": 1}),
            "`time.submission` of job 9001 is not a number: "
            '`{"set":"yes","infinite":false,"number":1}`',
        ),
        (with_value("time.elapsed", -5), "`time.elapsed` of job 9001 is negative: `-5`"),
        (
            with_value("tres.allocated", [{"type": "gres", "name": "gpu", "count": "8"}]),
            '`tres.allocated` count of `gres/gpu` of job 9001 is not a whole number: `"8"`',
        ),
        (
            with_value("tres.allocated", [{"type": "gres", "name": "gpu", "count": None}]),
            "`tres.allocated` of job 9001 gives no count for `gres/gpu`",
        ),
        (
            with_value("tres.allocated", [{"type": "cpu", "count": 2.0}]),
            "`tres.allocated` count of `cpu` of job 9001 is not a whole number: `2.0`",
        ),
        (
            with_value("tres.allocated", [{"name": "gpu", "count": 8}]),
            "item 1 of `tres.allocated` of job 9001 has no `type`",
        ),
        (
            with_value("tres.allocated", "gres/gpu=8"),
            "`tres.allocated` of job 9001 is a string, not an array",
        ),
        (
            with_value("state.current", []),
            "`state.current` of job 9001 is not a job state: `[]`",
        ),
        (
            with_value("state.current", ["COMPLETED", 3]),
            '`state.current` of job 9001 is not a job state: `["COMPLETED",3]`',
        ),
        (with_value("name", 17), "`name` of job 9001 is a number, not a string"),
        (with_value("name", "\ud800"), "`name` of job 9001 is not Unicode text (a lone surrogate)"),
        (with_value("steps", {}), "`steps` of job 9001 is an object, not an array"),
        (with_value("restart_cnt", "2"), '`restart_cnt` of job 9001 is not a whole number: `"2"`'),
        (
            with_value("het", {"job_id": 9000, "job_offset": None}),
            "job 9001 has no `het.job_offset`",
        ),
        (with_value("array", {"task_id": 3}), "job 9001 has no `array.job_id`"),
    ],
)
def test_a_record_that_cannot_be_converted_is_an_i023_reject(record: Any, reason: str) -> None:
    text = doc(job(job_id=1), record)
    table = json_rows("x.json", text)
    assert table.rows[0].reject is None
    r = table.rows[1]
    assert (r.row, r.fields, r.reject) == (2, None, ("I023", reason))
    assert r.record == json.dumps(record, separators=(",", ":"), ensure_ascii=False) or (
        "\\ud800" in r.record
    )
    assert "\n" not in r.record


def test_a_key_given_twice_inside_a_record_is_a_reject() -> None:
    text = doc(job()).replace('"name": "train"', '"name": "train", "name": "eval"')
    assert reject_of(text) == (
        "I023",
        "job 9001 gives the key `name` twice in one object: which one counts?",
    )


def test_no_mutation_of_a_sample_record_escapes_as_an_exception() -> None:
    """Every value of every record replaced in turn by values of every JSON kind: each record
    is converted or rejected with a reason, never an exception."""
    original = json.loads(NEW.read_text())
    kinds: list[Any] = [None, "x", -3, 1.5, True, [], {}, [1], {"set": True}, 10**30]
    count = 0

    def paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        out = [prefix] if prefix else []
        if isinstance(value, dict):
            for k, v in value.items():
                out += paths(v, (*prefix, k))
        elif isinstance(value, list):
            for i, v in enumerate(value[:2]):
                out += paths(v, (*prefix, i))
        return out

    meta = original["meta"]
    for n in (0, 3, 4, 7, 8):
        for path in paths(original["jobs"][n]):
            for kind in kinds:
                record = copy.deepcopy(original["jobs"][n])
                target = record
                for p in path[:-1]:
                    target = target[p]
                target[path[-1]] = kind
                table = json_rows("x.json", json.dumps({"meta": meta, "jobs": [record]}))
                r = table.rows[0]
                assert (r.fields is None) != (r.reject is None)
                if r.reject is not None:
                    assert r.reject[0] == "I023"
                    assert r.reject[1]
                count += 1
    assert count > 1000


# --------------------------------------------------------------------------- import sacct


def test_import_sacct_reads_a_json_export_by_its_content(tmp_path: Path) -> None:
    """The 24.11 sample imported as a trace, named `.txt` to show the content decides: the
    job preempted twice and requeued is three attempts of one run, each its own allocation,
    and the GPU-time is the JSON's own, summed apart here."""
    path = tmp_path / "export.txt"
    path.write_bytes(NEW.read_bytes())
    result = import_sacct(path, "America/New_York")
    allocs, runs = derive_facts(result.trace).collect()
    job = allocs.filter(pl.col("run_id") == "7101").sort("attempt")
    assert job["alloc_id"].to_list() == ["7101#1", "7101#2", "7101#3"]
    assert job["end_reason"].to_list() == ["reclaimed", "reclaimed", "released"]
    # times carry their offset (+0000): `--tz` New York does not move them
    assert job["start"].to_list() == [
        datetime.fromtimestamp(B + 300, UTC),
        datetime.fromtimestamp(B + 10_800, UTC),
        datetime.fromtimestamp(B + 16_200, UTC),
    ]
    # replaced 11:00:00 − 10:35:00 = 25 min after the first preemption (B + 9,300 s)
    assert job["replacement_wait"][0] == timedelta(minutes=25)
    # every job record with GPUs that started, summed from the JSON: 8 × 9,000 + 8 × 3,600
    # + 8 × 14,400 (7101) + 1 × 3,600 (7203) + 4 × 7,200 (7300) + 2 × 7,200 (7301)
    # + 2 × 600 (7700, requeued) + 2 × 3,600 (7700) = 216,000 + 3,600 + 28,800 + 14,400
    # + 1,200 + 7,200 = 271,200 GPU-seconds
    doc_jobs = json.loads(NEW.read_text())["jobs"]
    independent = 0
    for j in doc_jobs:
        gpus = next((t["count"] for t in j["tres"]["allocated"] if t["name"] == "gpu"), 0)
        if gpus and j["time"]["start"]:
            independent += gpus * (j["time"]["end"] - j["time"]["start"])
    assert independent == 271_200
    assert runs["metered_gpu_time"].sum() == timedelta(seconds=independent)
    # every element of `jobs` is a row, mapped or rejected (the CPU-only job: I016)
    assert result.report.rows_read == len(doc_jobs) == 11
    assert [(r.row, r.code) for r in result.report.rejects] == [(7, "I016")]


def test_the_zone_does_not_move_a_json_export(tmp_path: Path) -> None:
    a = import_sacct(NEW, "UTC").events.drop("source_row")
    b = import_sacct(NEW, "Asia/Tokyo").events.drop("source_row")
    assert a.equals(b)


def test_a_json_export_needs_no_zone(tmp_path: Path) -> None:
    """Every time of a JSON export carries its offset: without `--tz` it is imported, to the
    same events as with one."""
    zoned = import_sacct(NEW, "Asia/Tokyo").events
    assert import_sacct(NEW).events.equals(zoned)
    out = tmp_path / "o.parquet"
    result = run("import", "sacct", NEW, "--out", out)
    no_traceback(result)
    assert result.exit_code == 0, result.output
    assert pl.read_parquet(out).equals(zoned)


def test_a_text_export_without_a_zone_is_e502_naming_tz(tmp_path: Path) -> None:
    """A text export's times have no offset: without `--tz` nothing is imported, and the
    message names the flag; a file that is no export at all says that first."""
    text = DATA / "sacct_requeue.txt"
    out = tmp_path / "o.parquet"
    result = run("import", "sacct", text, "--out", out)
    no_traceback(result)
    assert result.exit_code == 2, result.output
    assert (
        f"contractlang: error[E502]: `--tz` is missing: `{text}` is a text export, whose times "
        "are the cluster's local time without an offset"
    ) in result.output
    assert "help: name the cluster's time zone, e.g. `--tz America/New_York`" in result.output
    assert not out.exists()
    with pytest.raises(ContractlangError) as exc:
        import_sacct(text)
    [d] = exc.value.diagnostics
    assert (d.code, d.message.startswith("`--tz` is missing")) == ("E502", True)
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    with pytest.raises(ContractlangError) as exc:
        import_sacct(empty)
    assert [d.code for d in exc.value.diagnostics] == ["I003"]


def test_the_help_names_both_forms_and_when_tz_is_needed() -> None:
    result = run("import", "sacct", "--help")
    assert result.exit_code == 0
    said = " ".join(result.output.split())  # the help is wrapped to the terminal
    assert "or `sacct --json`, found by its content" in said
    assert "required for a text export, whose times have no offset" in said
    assert "a `sacct --json` export needs none" in said


def test_text_flags_on_a_json_export_are_refused(tmp_path: Path) -> None:
    for flags in (["--fields", "JobID,State"], ["--delimiter", "^"]):
        result = run("import", "sacct", NEW, "--tz", "UTC", "--out", tmp_path / "o.parquet", *flags)
        no_traceback(result)
        assert result.exit_code == 2
        assert "error[I003]" in result.output
        assert "is a `sacct --json` export" in result.output
        assert not (tmp_path / "o.parquet").exists()
