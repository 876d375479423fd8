"""`evaluate --shards N` gives, to the byte, what evaluating the whole trace gives: the JSON
document, the ledger and the per-run table; and the same diagnostics, quarantine and
warnings for broken traces — over several traces and shard counts, including one shard and
more shards than runs."""

from __future__ import annotations

import sys
import zlib
from datetime import timedelta
from pathlib import Path

import polars as pl
import pytest

from contractlang.pipeline.shards import auto_shards
from contractlang.trace import generate_trace
from contractlang.trace.shards import plan_shards, shard_of
from tests.support.cli import no_traceback, run
from tests.support.events import (
    accepted,
    checkpoint,
    event,
    frame,
    notice,
    reclaimed,
    released,
    requested,
    started,
)

#: Two contracts whose month and contract caps bite on a few dozen generated runs, so the
#: global step's largest-remainder shares are exercised, and the design's budget.
TERMS = """\
contract "monthly" {
  currency USD
  rate trace.price per gpu_hour when capacity == spot
  rate 3.90 USD per gpu_hour when sku == "H100-80G"
  rate 1.60 USD per gpu_hour
  billing increment 1 minute
  billing minimum 10 minutes
  promise reclaim notice 30 seconds
  promise restart within 15 minutes
  exclude "reclaimed in the first hour" allocation
    when end_reason == reclaimed and runtime < 1 hour
  exclude "replay after short notice" replayed_time
    when end_reason == reclaimed and notice_lead < promised_notice
  credit "slow replacement" 10% of charge when replacement_wait > promised_restart
  credit "restart delay" 2.10 USD per gpu_hour * gpus * (replacement_wait - 15 minutes)
    when replacement_wait > 15 minutes
  cap credits at 150 USD per run
  cap credits at 50 USD per month
}

contract "whole" {
  currency USD
  rate 2.45 USD per gpu_hour
  billing increment 1 hour
  credit "replayed work" 50% of replayed_cost when end_reason == failed
  cap credits at 30% of gross per run
  cap credits at 20 USD per contract
}

budget "fy27" {
  require p95(cost_per_accepted_run) <= 12000 USD
  require mean(lost_gpu_time / metered_gpu_time) <= 5%
  require share(accepted) >= 90%
}
"""


@pytest.fixture(scope="module")
def spot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("terms") / "terms.spot"
    path.write_text(TERMS, encoding="utf-8")
    return path


def outputs(spot: Path, trace: list[Path], folder: Path, *flags: str) -> dict[str, bytes]:
    """``evaluate`` with ``flags``: its exit code and output, and the bytes of its JSON
    document, ledger and per-run table (Parquet and CSV)."""
    folder.mkdir()
    files = {
        "ledger.parquet": "--ledger",
        "runs.parquet": "--runs",
    }
    args: list[object] = ["evaluate", spot, *trace, "--format", "json", *flags]
    for name, flag in files.items():
        args += [flag, folder / name]
    result = run(*args)
    no_traceback(result)
    got = {"exit": str(result.exit_code).encode(), "stdout": result.stdout.encode()}
    got |= {n: (folder / n).read_bytes() for n in files if (folder / n).exists()}
    csv = run("evaluate", spot, *trace, *flags, "--runs", folder / "runs.csv")
    got["runs.csv"] = (folder / "runs.csv").read_bytes() if csv.exit_code < 2 else b""
    return got


@pytest.mark.parametrize(("runs", "seed"), [(40, 3), (25, 11)])
def test_every_shard_count_gives_the_same_bytes(
    spot: Path, tmp_path: Path, runs: int, seed: int
) -> None:
    trace = tmp_path / "t.parquet"
    generate_trace(runs, seed=seed).write_parquet(trace)
    whole = outputs(spot, [trace], tmp_path / "whole", "--shards", "1")
    assert whole["exit"] in (b"0", b"1")
    assert set(whole) == {"exit", "stdout", "ledger.parquet", "runs.parquet", "runs.csv"}
    # 1000 shards: more shards than runs; 10^20: far more (only the shards holding a run
    # are made: that many once took forever)
    for shards in (2, 3, 7, 1000, 10**20):
        assert outputs(spot, [trace], tmp_path / f"s{shards}", "--shards", str(shards)) == whole


def test_one_shard_through_the_shard_machinery(spot: Path, tmp_path: Path) -> None:
    """`--shards 1` evaluates the trace whole; the sharded engine with one shard gives the
    same evaluation."""
    from contractlang.pipeline.evaluation import EvaluateOptions, evaluate  # noqa: PLC0415
    from contractlang.pipeline.language import load_terms  # noqa: PLC0415
    from contractlang.pipeline.shards import evaluate_sharded  # noqa: PLC0415
    from contractlang.render.evaluate.json import render_json  # noqa: PLC0415

    trace = tmp_path / "t.parquet"
    generate_trace(15, seed=2).write_parquet(trace)
    terms = load_terms([spot])
    whole = evaluate(terms, trace, EvaluateOptions(keep_events=False))  # the digest taken
    sharded = evaluate_sharded(terms, trace, shards=1)
    assert render_json(sharded) == render_json(whole)
    assert sharded.ledger().equals(whole.ledger())
    assert sharded.runs_table().equals(whole.runs_table())
    assert sharded.trace.events.is_empty()  # the trace stays on disk


def test_several_files_and_csv_extras_read_as_one(spot: Path, tmp_path: Path) -> None:
    """A trace in two files (the scheduler's Parquet, the job's CSV with an extra column
    typed from all of its values): row numbers, extras and results as one load gives."""
    events = generate_trace(20, seed=5).with_columns((pl.int_range(pl.len()) % 7).alias("tier"))
    scheduler = events.filter(pl.col("source") == "scheduler")
    job = events.filter(pl.col("source") != "scheduler")
    scheduler.write_parquet(tmp_path / "scheduler.parquet")
    job.write_csv(tmp_path / "job.csv")
    files = [tmp_path / "scheduler.parquet", tmp_path / "job.csv"]
    whole = outputs(spot, files, tmp_path / "whole", "--shards", "1")
    assert outputs(spot, files, tmp_path / "s4", "--shards", "4") == whole


def broken_trace() -> pl.DataFrame:
    """A trace breaking rules in several runs, including an allocation under two runs that
    fall into different shards (so the shards holding them are read again as one) and a row
    with no `run_id` naming an allocation of a run in another shard."""
    first, second = (
        "r-a",
        next(f"r-{k}" for k in range(100) if shard_of(f"r-{k}", 4) != shard_of("r-a", 4)),
    )
    rows = [
        requested(first, 0),
        started(first, "a1", 5, gpus=8),
        checkpoint(first, 35, step=100),
        reclaimed(first, "a1", 90, step=130),
        started(second, "a1", 100, gpus=8),  # T013 (and T007): a1 again, under another run
        released(second, "a1", 150),
        started("r-dup", "d1", 0, gpus=4),
        released("r-dup", "d1", 30),
        released("r-dup", "d1", 30),  # T012 (and T008)
        event(None, "n1", 40, "checkpoint", step=3),  # T015: no run_id
        started("r-n", "n1", 0, gpus=2),
        released("r-n", "n1", 60),
        started("r-late", "l1", 0, gpus=2),
        released("r-late", "l1", 60),
        event("r-late", "l1", 120, "checkpoint", step=5),  # T010
        *[started(f"ok-{k}", f"ok-{k}-a", k, gpus=1) for k in range(12)],
        *[released(f"ok-{k}", f"ok-{k}-a", 60 + k) for k in range(12)],
        *[accepted(f"ok-{k}", 80 + k) for k in range(12)],
    ]
    return frame(rows)


@pytest.mark.parametrize("limit", ["50", "2"])
def test_a_broken_trace_gets_the_same_diagnostics(spot: Path, tmp_path: Path, limit: str) -> None:
    trace = tmp_path / "t.parquet"
    broken_trace().write_parquet(trace)
    whole = run("evaluate", spot, trace, "--shards", "1", "--max-problems", limit)
    if "No such option" in whole.output:  # evaluate takes no --max-problems: the default
        whole = run("evaluate", spot, trace, "--shards", "1")
        sharded = [run("evaluate", spot, trace, "--shards", n) for n in ("2", "4", "50")]
    else:
        sharded = [
            run("evaluate", spot, trace, "--shards", n, "--max-problems", limit)
            for n in ("2", "4", "50")
        ]
    assert whole.exit_code == 2
    for codes in ("T013", "T012", "T015", "T010"):
        assert f"error[{codes}]" in whole.stderr
    for result in sharded:
        assert (result.exit_code, result.stdout, result.stderr) == (
            whole.exit_code,
            whole.stdout,
            whole.stderr,
        )


def test_quarantine_sets_aside_the_same_runs(spot: Path, tmp_path: Path) -> None:
    trace = tmp_path / "t.parquet"
    broken_trace().write_parquet(trace)
    got = {}
    for shards in ("1", "3", "40"):
        aside = tmp_path / f"aside-{shards}.csv"
        folder = tmp_path / f"q{shards}"
        got[shards] = outputs(
            spot, [trace], folder, "--shards", shards, "--on-invalid", f"quarantine={aside}"
        )
        got[shards]["aside"] = aside.read_bytes()
    assert got["1"]["exit"] in (b"0", b"1")
    assert b'"quarantine"' in got["1"]["stdout"]
    assert got["3"] == got["1"]
    assert got["40"] == got["1"]


def test_clock_skew_is_counted_over_every_shard(spot: Path, tmp_path: Path) -> None:
    """Checkpoints a few microseconds after their allocation's end in several runs: one W106
    counting all of them, whichever shard holds each."""
    rows = []
    for k in range(6):
        run_id, alloc = f"s-{k}", f"s-{k}-a"
        late = event(run_id, alloc, 60, "checkpoint", step=150, valid=True)
        late["ts"] = late["ts"] + timedelta(microseconds=3)
        rows += [started(run_id, alloc, 0, gpus=8), notice(run_id, alloc, 59)]
        rows += [reclaimed(run_id, alloc, 60, step=150), late]
    trace = tmp_path / "t.parquet"
    frame(rows).write_parquet(trace)
    whole = outputs(spot, [trace], tmp_path / "whole", "--shards", "1")
    assert b"6 job or invoice events fell up to 1 s outside" in whole["stdout"]
    assert outputs(spot, [trace], tmp_path / "s3", "--shards", "3") == whole
    strict = [run("evaluate", spot, trace, "--clock-skew", "0", "--shards", n) for n in ("1", "3")]
    assert strict[0].exit_code == 2
    assert strict[1].stderr == strict[0].stderr


def crc32(data: bytes) -> int:
    """CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320) bit by bit: an implementation
    independent of zlib's table-driven one."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0xEDB88320 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


@pytest.mark.parametrize("run_id", ["run-000001", "r1", "", "ünïcode-run", "x" * 300])
def test_the_shard_of_a_run_is_the_crc32_of_its_utf8_bytes(run_id: str) -> None:
    assert crc32(b"123456789") == 0xCBF43926  # the standard check value of CRC-32
    assert zlib.crc32(b"123456789") == 0xCBF43926
    for shards in (1, 2, 7, 64):
        assert shard_of(run_id, shards) == crc32(run_id.encode("utf-8")) % shards


def test_runs_are_dealt_by_their_shard(tmp_path: Path) -> None:
    events = generate_trace(30, seed=4)
    plan = plan_shards(events, 4)
    dealt = {r: s.index for s in plan.shards for r in s.run_ids.to_list()}
    runs = events["run_id"].unique().to_list()
    assert sorted(dealt) == sorted(runs)  # every run in one shard
    assert all(dealt[r] == crc32(r.encode()) % 4 for r in runs)
    assert plan.shards[0].with_null
    assert not any(s.with_null for s in plan.shards[1:])
    # shards in order, each run once, in the order of the trace's sorted run ids
    assert [s.index for s in plan.shards] == sorted({0, *dealt.values()})
    for s in plan.shards:
        assert s.run_ids.to_list() == sorted(r for r in runs if dealt[r] == s.index)


def test_the_automatic_choice() -> None:
    gib = 2**30
    # one shard may take a quarter of the available memory at 300 bytes an event:
    # 10M events × 300 B = 3.0e9 B ≤ 22 GiB / 4 = 5.9e9 B → 1 shard;
    # 100M × 300 B = 3.0e10 B → ⌈3.0e10 / 5.9e9⌉ = ⌈5.08⌉ = 6 shards;
    # 1M events on 1 GiB: 3.0e8 / 2.68e8 → 2 shards
    assert auto_shards(10_000_000, 22 * gib) == 1
    assert auto_shards(100_000_000, 22 * gib) == 6
    assert auto_shards(1_000_000, gib) == 2
    assert auto_shards(0, gib) == 1


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--shards", "0"], "`--shards` must be a whole number of at least 1, or `auto`"),
        (["--shards", "many"], "`--shards` must be a whole number of at least 1, or `auto`"),
        (["--engine", "spark"], "`--engine` must be `local` or `ray`, not `spark`"),
        (["--ray-address", "127.0.0.1:6379"], "`--ray-address` needs `--engine ray`"),
    ],
)
def test_bad_flags(spot: Path, tmp_path: Path, flags: list[str], message: str) -> None:
    trace = tmp_path / "t.parquet"
    generate_trace(3, seed=1).write_parquet(trace)
    result = run("evaluate", spot, trace, *flags)
    no_traceback(result)
    assert result.exit_code == 2
    assert "error[E502]" in result.stderr
    assert message in result.stderr


def test_the_ray_engine_without_ray_is_an_error(
    spot: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` now fails
    trace = tmp_path / "t.parquet"
    generate_trace(3, seed=1).write_parquet(trace)
    result = run("evaluate", spot, trace, "--engine", "ray")
    no_traceback(result)
    assert result.exit_code == 2
    assert "error[E503]: `--engine ray` needs Ray, which is not installed" in result.stderr
    assert "pip install 'contractlang[ray]'" in result.stderr


def test_open_allocations_closed_at_open_at(spot: Path, tmp_path: Path) -> None:
    rows = []
    for k in range(8):
        run_id, alloc = f"o-{k}", f"o-{k}-a"
        rows += [requested(run_id, 0), started(run_id, alloc, 5 + k, gpus=2)]
        if k % 2:
            rows.append(released(run_id, alloc, 90))  # the others are still open
    trace = tmp_path / "t.parquet"
    frame(rows).write_parquet(trace)
    flags = ["--open-at", "2025-01-01T04:00:00Z"]
    whole = outputs(spot, [trace], tmp_path / "whole", "--shards", "1", *flags)
    assert whole["exit"] in (b"0", b"1")
    assert outputs(spot, [trace], tmp_path / "s3", "--shards", "3", *flags) == whole


def test_unpriced_allocations_are_named_as_one_evaluation_names_them(tmp_path: Path) -> None:
    """E401 names the first ten unpriced allocations by run: the same ten, and the same
    count, however the runs are dealt."""
    spot = tmp_path / "spot-only.spot"
    spot.write_text(
        'contract "spot-only" {\n  currency USD\n'
        "  rate 2 USD per gpu_hour when capacity == spot\n}\n",
        encoding="utf-8",
    )
    trace = tmp_path / "t.parquet"
    generate_trace(30, seed=8).write_parquet(trace)
    whole = run("evaluate", spot, trace, "--shards", "1")
    assert whole.exit_code == 2
    assert "error[E401]" in whole.stderr
    for shards in ("2", "5"):
        sharded = run("evaluate", spot, trace, "--shards", shards)
        assert (sharded.exit_code, sharded.stderr) == (whole.exit_code, whole.stderr)


def test_a_report_is_the_same_in_shards(tmp_path: Path) -> None:
    # the report explains its most expensive runs from every column of their allocations:
    # a sharded evaluation keeps them all when a report is asked for (it once kept only the
    # ledger's, and the report failed with an internal error)
    root = Path(__file__).resolve().parents[1]
    terms = sorted((root / "rulesets").glob("*.spot"))
    trace = root / "examples" / "trace.parquet"
    reports = {}
    for shards in ("1", "3"):
        path = tmp_path / f"report-{shards}.md"
        result = run("evaluate", *terms, trace, "--shards", shards, "--report", path)
        no_traceback(result)
        assert result.exit_code == 1, result.output  # the bundled drafts miss the FY27 budget
        reports[shards] = path.read_bytes()
    assert reports["3"] == reports["1"]
    assert b"most expensive" in reports["1"].lower()
