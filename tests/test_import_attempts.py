"""`import attempts`: job attempt lists (the Philly trace's shape) as a trace — every attempt an
allocation, every attempt but the last failed — on the real subset and on hand-made jobs."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from contractlang.errors import ContractlangError
from contractlang.importers import import_attempts
from contractlang.importers.result import ImportResult
from contractlang.trace import derive_facts

PHILLY = (
    Path(__file__).resolve().parents[1].parent
    / "shared"
    / "realdata"
    / "slurm_like"
    / "philly_jobs_subset.json"
)


def attempts(tmp_path: Path, jobs: Any, tz: str = "UTC") -> ImportResult:
    path = tmp_path / "jobs.json"
    path.write_text(json.dumps(jobs))
    return import_attempts(path, tz)


def job(ident: object, *spans: tuple[str, str], gpus: object = 8, **kw: Any) -> dict[str, Any]:
    return {
        "id": ident,
        "num_gpus": gpus,
        "attempts": [{"start_time": s, "end_time": e} for s, e in spans],
        **kw,
    }


@pytest.mark.realdata
@pytest.mark.skipif(not PHILLY.exists(), reason="../shared/realdata is absent")
def test_the_philly_subset_attempt_by_attempt() -> None:
    jobs = json.loads(PHILLY.read_text())
    r = import_attempts(PHILLY, "UTC")
    allocs, runs = derive_facts(r.trace).collect()

    def t(s: str) -> datetime:
        return datetime.strptime(s, "%Y-%m-%d %H:%M:%S").replace(tzinfo=UTC)

    n_attempts = sum(len(j["attempts"]) for j in jobs)
    assert (r.report.rows_read, runs.height, allocs.height) == (len(jobs), len(jobs), n_attempts)
    ends = dict(allocs.group_by("end_reason").len().rows())
    assert ends == {"failed": n_attempts - len(jobs), "released": len(jobs)}
    gpu_seconds = sum(
        j["num_gpus"] * int((t(a["end_time"]) - t(a["start_time"])).total_seconds())
        for j in jobs
        for a in j["attempts"]
    )
    assert runs["metered_gpu_time"].sum() == timedelta(seconds=gpu_seconds)
    # time to the first start: submitted_time is the run's request
    first = jobs[0]
    wait = t(first["attempts"][0]["start_time"]) - t(first["submitted_time"])
    row = allocs.filter((pl.col("run_id") == first["id"]) & (pl.col("attempt") == 1))
    assert row["queue_wait"].item() == wait
    assert r.report.accounted
    assert r.report.rejects == ()


def test_every_attempt_but_the_last_failed(tmp_path: Path) -> None:
    r = attempts(
        tmp_path,
        [
            job(
                "j1",
                ("2025-01-01 02:00:00", "2025-01-01 03:00:00"),
                ("2025-01-01 00:00:00", "2025-01-01 01:00:00"),  # listed out of order
                ("2025-01-01 04:00:00", "2025-01-01 06:30:00"),
                submitted_time="2024-12-31 23:50:00",
            )
        ],
    )
    allocs, runs = derive_facts(r.trace).collect()
    assert allocs.select("alloc_id", "end_reason", "gpus").rows() == [
        ("j1#1", "failed", 8),
        ("j1#2", "failed", 8),
        ("j1#3", "released", 8),
    ]
    # 8 GPUs × (1 h + 1 h + 2.5 h) = 36 GPU-hours
    assert runs["metered_gpu_time"].item() == timedelta(hours=36)
    # the first attempt waited 00:00 − 23:50 = 10 min
    assert allocs["queue_wait"][0] == timedelta(minutes=10)


def test_local_times_need_their_zone(tmp_path: Path) -> None:
    spans = ("2025-03-09 01:00:00", "2025-03-09 03:30:00")  # 2.5 h on the wall, 1.5 h real
    r = attempts(tmp_path, [job(7, spans)], tz="America/New_York")
    allocs, _ = derive_facts(r.trace).collect()
    assert allocs["runtime"].item() == timedelta(hours=1, minutes=30)
    assert allocs["run_id"].item() == "7"
    with pytest.raises(ContractlangError) as exc:
        attempts(
            tmp_path,
            [job(1, spans), job(2, ("2025-03-09 02:15:00", "2025-03-09 04:00:00"))],
            tz="America/New_York",
        )
    [d] = exc.value.diagnostics
    assert (d.code, d.span.line) == ("I004", 2)
    assert d.message.startswith("`start_time` of attempt 1 2025-03-09 02:15:00 does not exist")


def test_jobs_that_cannot_be_read_are_rejected(tmp_path: Path) -> None:
    ok = ("2025-01-01 00:00:00", "2025-01-01 01:00:00")
    r = attempts(
        tmp_path,
        [
            job("a", ok),
            job("a", ok),
            job(None, ok),
            job("b", ok, gpus="8"),
            job("c", ok, gpus=0),
            job("d"),
            job("e", ("2025-01-01 00:00:00", "soon")),
            job("f", ("2025-01-01 02:00:00", "2025-01-01 01:00:00")),
            "not a job",
            job("g", ok, submitted_time="2025-01-01 00:30:00"),
            job("h", ok, gpus=10**30),  # more GPUs than a 64-bit count holds
        ],
    )
    assert [(j.row, j.code) for j in r.report.rejects] == [
        (2, "I012"),
        (3, "I023"),
        (4, "I023"),
        (5, "I016"),
        (6, "I023"),
        (7, "I015"),
        (8, "I018"),
        (9, "I023"),
        (11, "I016"),
    ]
    # JSON's words, not Python's
    assert r.report.rejects[7].reason == "not a job object but a string"
    assert r.report.rejects[0].reason == "job `a` appears again; it first appears at row 1"
    assert json.loads(r.report.rejects[1].record)["id"] is None
    # g's submitted_time is after its start: the request is not imported, and it is noted
    assert [n.code for n in r.report.notes] == ["I034"]
    assert r.events.filter(pl.col("run_id") == "g")["event"].to_list() == ["started", "released"]
    assert r.report.accounted


def test_files_that_are_not_attempt_lists(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text('{"id": 1}')
    with pytest.raises(ContractlangError) as exc:
        import_attempts(path, "UTC")
    assert exc.value.diagnostics[0].code == "I003"
    path.write_text("[{")
    with pytest.raises(ContractlangError) as exc:
        import_attempts(path, "UTC")
    assert exc.value.diagnostics[0].message.startswith("`")
    assert "is not JSON" in exc.value.diagnostics[0].message


def test_an_integer_of_more_digits_than_python_reads_is_i003_not_a_crash(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text('[{"gpus": ' + "9" * 5000 + "}]")
    with pytest.raises(ContractlangError) as exc:
        import_attempts(path, "UTC")  # not a ValueError (Python's 4,300-digit limit)
    [d] = exc.value.diagnostics
    assert (d.code, d.message) == (
        "I003",
        f"`{path}` is not JSON that can be read: a number in it has more digits than can be read",
    )


def test_a_file_nested_too_deeply_is_i003_not_a_crash(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(ContractlangError) as exc:
        import_attempts(path, "UTC")  # not a RecursionError
    [d] = exc.value.diagnostics
    assert (d.code, d.message) == (
        "I003",
        f"`{path}` is not JSON that can be read: lists or objects nested too deeply",
    )


def test_a_lone_surrogate_is_rejected_and_its_record_kept_escaped(tmp_path: Path) -> None:
    # JSON's "\ud800" reads as a lone surrogate, which no file can hold: as the run id it was
    # exit 3 (polars could not build the column), and as any value the rejects' record was
    r = attempts(
        tmp_path,
        [
            job("a\ud800", ("2025-01-01 00:00:00", "2025-01-01 01:00:00")),
            job("b", ("\udc00", "2025-01-01 01:00:00")),
            job("c", ("2025-01-01 00:00:00", "2025-01-01 01:00:00")),
        ],
    )
    assert [(j.row, j.code) for j in r.report.rejects] == [(1, "I023"), (2, "I015")]
    assert r.report.rejects[0].reason == "`id` is not Unicode text (a lone surrogate)"
    for reject in r.report.rejects:
        reject.record.encode("utf-8")  # a record a file can hold
    assert json.loads(r.report.rejects[0].record)["id"] == "a\ud800"  # escaped, as written
    assert r.events["run_id"].unique().to_list() == ["c"]
