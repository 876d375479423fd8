"""Benchmark: load + validate a large generated trace, then derive its facts.

    python bench/bench_facts.py                    # 100,000 runs: ~1M allocations, ~10M events
    python bench/bench_facts.py --runs 10000       # smaller
    python bench/bench_facts.py --no-duckdb        # skip the DuckDB cross-check

Each phase runs in its own subprocess, and its peak RSS (``VmHWM``, reset after the floor and
after any setup) is its own. In every
subprocess a *floor* runs first: a polars scan that only pairs starts with ends and sums the
metered GPU-time; each phase is reported as a ratio to that floor, measured in the same process.

Phases:

- ``load``: :func:`load_trace` (read, normalise, every validation rule).
- ``derive``: :func:`derive_facts` collected (both frames), after an untimed
  :func:`load_trace` (whose memory is then the phase's base); writes the facts for the
  comparison.
- ``duckdb``: the same facts written by hand in DuckDB SQL from the Parquet file, checked
  equal to polars' facts column by column (an independent implementation of design §4).

Figures are printed as a table and as one JSON line per phase: wall-clock seconds, and CPU
seconds (user + system, over every thread; on a shared machine they vary less than wall-clock
time).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import polars as pl

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

ENDS = "('released', 'reclaimed', 'failed')"


def peak_rss_gb() -> float:
    """This process's peak resident memory. ``VmHWM`` (Linux) belongs to the address space and
    starts afresh at exec; ``ru_maxrss`` is the fallback, but on Linux it carries a parent's
    peak over fork and exec, so the driver keeps itself small (it generates in a subprocess)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1e6  # kB
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6  # kB on Linux


def reset_peak() -> None:
    """Start the peak-RSS count afresh (Linux: writing 5 to clear_refs resets VmHWM), so a
    phase's peak is its own, not the floor's or its setup's."""
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as fh:
            fh.write("5")
    except OSError:
        pass


def current_rss_gb() -> float:
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1e6
    except OSError:
        pass
    return 0.0


def floor(path: Path) -> tuple[float, int]:
    """A polars scan that pairs each start with its end and sums gpus × (end − start)."""
    t = time.perf_counter()
    lf = pl.scan_parquet(path)
    starts = lf.filter(pl.col("event") == "started").select(
        "alloc_id", "gpus", pl.col("ts").alias("start")
    )
    ends = lf.filter(pl.col("event").is_in(["released", "reclaimed", "failed"])).select(
        "alloc_id", pl.col("ts").alias("end")
    )
    total = (
        starts.join(ends, on="alloc_id")
        .select(((pl.col("end") - pl.col("start")).dt.total_microseconds() * pl.col("gpus")).sum())
        .collect(engine="streaming")
        .item()
    )
    return time.perf_counter() - t, int(total)


# --------------------------------------------------------------------------- phases


def phase_load(trace: Path, work: Path) -> dict[str, Any]:
    # imported here, in the child process that measures this step, so its
    # import time and memory count only where they are measured
    from contractlang.trace import load_trace  # noqa: PLC0415

    t, cpu = time.perf_counter(), time.process_time()
    loaded = load_trace(trace)
    seconds, cpu = time.perf_counter() - t, time.process_time() - cpu
    return {
        "seconds": seconds,
        "cpu_seconds": cpu,
        "rows": loaded.summary.rows_read,
        "runs": loaded.summary.runs,
    }


def phase_derive(trace: Path, work: Path) -> dict[str, Any]:
    # imported here, in the child process that measures this step, so its
    # import time and memory count only where they are measured
    from contractlang.trace import derive_facts, load_trace  # noqa: PLC0415

    # loaded here, untimed, as `evaluate` has it before deriving (the trace with its index)
    loaded = load_trace(trace)
    before = current_rss_gb()
    reset_peak()
    t, cpu = time.perf_counter(), time.process_time()
    allocations, runs = derive_facts(loaded).collect()
    seconds, cpu = time.perf_counter() - t, time.process_time() - cpu
    allocations.write_parquet(work / "allocations.parquet")
    runs.write_parquet(work / "runs.parquet")
    metered = runs["metered_gpu_time"].dt.total_microseconds().sum()
    return {
        "seconds": seconds,
        "cpu_seconds": cpu,
        "allocations": allocations.height,
        "metered_gpu_us": int(metered),
        "rss_gb_before": round(before, 3),  # the events, held before deriving
    }


DUCKDB_FACTS = """
WITH ev AS (SELECT * FROM read_parquet('{path}', file_row_number = true)),
starts AS (SELECT run_id, alloc_id, ts AS start, gpus FROM ev WHERE event = 'started'),
per AS (
  SELECT alloc_id,
    max(ts) FILTER (WHERE event IN {ends}) AS "end",
    max(event) FILTER (WHERE event IN {ends}) AS end_reason,
    max(step) FILTER (WHERE event IN {ends}) AS end_step,
    min(ts) FILTER (WHERE event = 'notice') AS notice_at,
    min(ts) FILTER (WHERE event = 'requested') AS own_req
  FROM ev WHERE alloc_id IS NOT NULL GROUP BY alloc_id),
a0 AS (
  SELECT s.*, p."end", p.end_reason, p.end_step, p.notice_at, p.own_req,
    row_number() OVER w AS attempt, lag(p."end") OVER w AS prev_end
  FROM starts s LEFT JOIN per p USING (alloc_id)
  WINDOW w AS (PARTITION BY s.run_id ORDER BY s.start, s.alloc_id)),
runreq AS (SELECT run_id, ts FROM ev WHERE event = 'requested' AND alloc_id IS NULL),
ck AS (
  SELECT run_id, ts, arg_max(step, file_row_number) AS step
  FROM ev WHERE event = 'checkpoint' AND coalesce(valid, true) GROUP BY run_id, ts),
sg AS (SELECT run_id, start, count(*) AS n FROM starts GROUP BY run_id, start),
a1 AS (SELECT a0.*, r.ts AS run_req FROM a0
       ASOF LEFT JOIN runreq r ON a0.run_id = r.run_id AND a0.start >= r.ts),
a2 AS (SELECT a1.*, c.ts AS ck_at, c.step AS ck_step FROM a1
       ASOF LEFT JOIN ck c ON a1.run_id = c.run_id AND a1."end" >= c.ts),
a3 AS (SELECT a2.*, g.start AS next_ge, g.n AS n_ge FROM a2
       ASOF LEFT JOIN sg g ON a2.run_id = g.run_id AND a2."end" <= g.start),
a4 AS (SELECT a3.*, g.start AS next_gt FROM a3
       ASOF LEFT JOIN sg g ON a3.run_id = g.run_id AND a3."end" < g.start)
SELECT run_id, alloc_id, attempt::BIGINT AS attempt, gpus, end_reason, start,
  epoch_us("end") - epoch_us(start) AS runtime,
  gpus * (epoch_us("end") - epoch_us(start)) AS gpu_time,
  epoch_us(start) - epoch_us(coalesce(own_req,
    CASE WHEN attempt = 1 OR run_req >= prev_end THEN run_req END)) AS queue_wait,
  CASE WHEN end_reason = 'reclaimed'
    THEN coalesce(epoch_us("end") - epoch_us(notice_at), 0) END AS notice_lead,
  CASE WHEN end_reason IN ('reclaimed', 'failed') THEN
    epoch_us(CASE WHEN next_ge <> start OR n_ge >= 2 THEN next_ge ELSE next_gt END)
    - epoch_us("end") END AS replacement_wait,
  epoch_us(ck_at) AS last_checkpoint_at, ck_step AS last_checkpoint_step,
  CASE WHEN end_reason IN ('reclaimed', 'failed')
    THEN epoch_us("end") - epoch_us(greatest(start, coalesce(ck_at, start))) ELSE 0 END
    AS replayed_time,
  CASE WHEN end_reason NOT IN ('reclaimed', 'failed') THEN 0
       WHEN end_step IS NULL THEN NULL
       WHEN ck_at IS NULL THEN end_step
       ELSE greatest(0, end_step - ck_step) END AS replayed_steps
FROM a4
"""

DUCKDB_RUNS = """
WITH ev AS (SELECT * FROM read_parquet('{path}')),
a AS ({facts}),
v AS (
  SELECT run_id,
    min(ts) FILTER (WHERE event = 'accepted') AS accepted_at,
    min(ts) FILTER (WHERE event = 'requested') AS requested_at
  FROM ev GROUP BY run_id),
s AS (
  SELECT run_id, count(*) FILTER (WHERE end_reason = 'reclaimed') AS reclaims,
    count(*) FILTER (WHERE end_reason = 'failed') AS failures, count(*) AS allocations,
    sum(gpu_time) AS metered, sum(gpus * replayed_time) AS lost,
    coalesce(sum(replayed_steps), 0) AS lost_steps, min(start) AS first_start
  FROM a GROUP BY run_id)
SELECT v.run_id, v.accepted_at IS NOT NULL AS accepted,
  epoch_us(v.accepted_at) - epoch_us(coalesce(v.requested_at, s.first_start)) AS time_to_accept,
  coalesce(s.reclaims, 0) AS reclaims, coalesce(s.failures, 0) AS failures,
  coalesce(s.allocations, 0) AS allocations, coalesce(s.metered, 0) AS metered_gpu_time,
  coalesce(s.lost, 0) AS lost_gpu_time, coalesce(s.lost_steps, 0) AS lost_steps
FROM v LEFT JOIN s USING (run_id)
"""

RUN_COMPARED = [
    "accepted",
    "time_to_accept",
    "reclaims",
    "failures",
    "allocations",
    "metered_gpu_time",
    "lost_gpu_time",
    "lost_steps",
]

COMPARED = [
    "attempt",
    "runtime",
    "gpu_time",
    "queue_wait",
    "notice_lead",
    "replacement_wait",
    "last_checkpoint_at",
    "last_checkpoint_step",
    "replayed_time",
    "replayed_steps",
]


def phase_duckdb(trace: Path, work: Path) -> dict[str, Any]:
    # imported here, in the child process that measures this step, so its
    # import time and memory count only where they are measured
    import duckdb  # noqa: PLC0415

    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    t, cpu = time.perf_counter(), time.process_time()
    result = con.execute(DUCKDB_FACTS.format(path=trace, ends=ENDS)).to_arrow_table()
    facts = pl.from_arrow(result)
    assert isinstance(facts, pl.DataFrame)
    seconds, cpu = time.perf_counter() - t, time.process_time() - cpu
    # compare with polars, column by column (times as integer microseconds)
    ours = pl.read_parquet(work / "allocations.parquet").select(
        "alloc_id",
        *[
            pl.col(c).dt.total_microseconds()
            if c in ("runtime", "gpu_time", "queue_wait", "notice_lead", "replacement_wait",
                     "replayed_time")
            else pl.col(c).dt.epoch("us")
            if c == "last_checkpoint_at"
            else pl.col(c)
            for c in COMPARED
        ],
    )  # fmt: skip
    joined = ours.join(facts, on="alloc_id", how="full", suffix="_duckdb")
    differing = {
        c: joined.filter(
            pl.col(c).cast(pl.Int64).ne_missing(pl.col(f"{c}_duckdb").cast(pl.Int64))
        ).height
        for c in COMPARED
    }
    facts_sql = DUCKDB_FACTS.format(path=trace, ends=ENDS)  # a subquery with its own WITH
    t, run_cpu = time.perf_counter(), time.process_time()
    runs_result = con.execute(DUCKDB_RUNS.format(path=trace, facts=facts_sql)).to_arrow_table()
    run_seconds, run_cpu = time.perf_counter() - t, time.process_time() - run_cpu
    their_runs = pl.from_arrow(runs_result)
    assert isinstance(their_runs, pl.DataFrame)
    durations = ("time_to_accept", "metered_gpu_time", "lost_gpu_time")
    our_runs = pl.read_parquet(work / "runs.parquet").select(
        "run_id",
        *[pl.col(c).dt.total_microseconds() if c in durations else pl.col(c) for c in RUN_COMPARED],
    )
    joined_runs = our_runs.join(their_runs, on="run_id", how="full", suffix="_duckdb")
    for c in RUN_COMPARED:
        ours_c, theirs_c = pl.col(c).cast(pl.Int64), pl.col(f"{c}_duckdb").cast(pl.Int64)
        differing[c] = joined_runs.filter(ours_c.ne_missing(theirs_c)).height
    same_rows = joined.height == ours.height == facts.height
    same_runs = joined_runs.height == our_runs.height == their_runs.height
    return {
        "seconds": seconds + run_seconds,
        "cpu_seconds": cpu + run_cpu,
        "allocations": facts.height,
        "runs": their_runs.height,
        "agree": same_rows and same_runs and not any(differing.values()),
        "differing": differing,
    }


PHASES = {"load": phase_load, "derive": phase_derive, "duckdb": phase_duckdb}


def run_phase(name: str, trace: Path, work: Path) -> None:
    """In a subprocess: the floor, then the phase; one JSON line on stdout."""
    floor_s, floor_total = floor(trace)
    reset_peak()
    result = PHASES[name](trace, work)
    result.update(
        phase=name,
        floor_seconds=round(floor_s, 3),
        floor_metered_gpu_us=floor_total,
        ratio_to_floor=round(result["seconds"] / floor_s, 1),
        seconds=round(result["seconds"], 3),
        cpu_seconds=round(result["cpu_seconds"], 3),
        peak_rss_gb=round(peak_rss_gb(), 3),
    )
    print(json.dumps(result), flush=True)


# --------------------------------------------------------------------------- driver


def generate(runs: int, seed: int, path: Path) -> None:
    """In a subprocess: generate and write the trace."""
    # imported here, in the child process that measures this step, so its
    # import time and memory count only where they are measured
    from contractlang.trace import generate_trace, write_trace  # noqa: PLC0415

    t = time.perf_counter()
    df = generate_trace(runs, seed)
    gen_s = time.perf_counter() - t
    write_trace(df, path)
    print(
        f"generated {df.height:,} events ({runs:,} runs) in {gen_s:.1f} s "
        f"(+ {time.perf_counter() - t - gen_s:.1f} s to write), peak RSS {peak_rss_gb():.2f} GB"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100_000, help="runs to generate (~10 each)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--trace", type=Path, help="use this Parquet trace instead")
    parser.add_argument("--no-duckdb", action="store_true", help="skip the DuckDB cross-check")
    parser.add_argument("--phase", choices=sorted(PHASES), help=argparse.SUPPRESS)
    parser.add_argument("--work", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--generate", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.phase:
        run_phase(args.phase, args.trace, args.work)
        return
    if args.generate is not None:
        generate(args.generate, args.seed, args.trace)
        return

    with tempfile.TemporaryDirectory(prefix="bench-facts-") as tmp:
        work = Path(tmp)
        trace = args.trace
        if trace is None:
            trace = work / "trace.parquet"
            cmd = [sys.executable, __file__, "--generate", str(args.runs), "--seed"]
            proc = subprocess.run(
                [*cmd, str(args.seed), "--trace", str(trace)],
                check=False,
                capture_output=True,
                text=True,
            )
            if proc.returncode != 0:
                sys.exit(f"generating failed:\n{proc.stderr}")
            print(proc.stdout.strip(), flush=True)
        phases = ["load", "derive"] + ([] if args.no_duckdb else ["duckdb"])
        results = []
        for name in phases:
            cmd = [sys.executable, __file__, "--phase", name, "--trace", str(trace)]
            proc = subprocess.run(
                [*cmd, "--work", str(work)], check=False, capture_output=True, text=True
            )
            if proc.returncode != 0:
                sys.exit(f"phase {name} failed:\n{proc.stderr}")
            results.append(json.loads(proc.stdout.strip().splitlines()[-1]))
        print(
            f"\n{'phase':<8} {'seconds':>8} {'CPU s':>8} {'floor s':>8} {'× floor':>8} "
            f"{'peak RSS GB':>12}"
        )
        for r in results:
            print(
                f"{r['phase']:<8} {r['seconds']:>8.2f} {r['cpu_seconds']:>8.2f} "
                f"{r['floor_seconds']:>8.2f} "
                f"{r['ratio_to_floor']:>8.1f} {r['peak_rss_gb']:>12.2f}"
            )
        derive = next(r for r in results if r["phase"] == "derive")
        if derive["metered_gpu_us"] != derive["floor_metered_gpu_us"]:
            sys.exit("metered GPU-time differs from the floor's: the benchmark is not comparable")
        for r in results:
            if r["phase"] == "duckdb":
                verdict = "agree" if r["agree"] else f"DIFFER: {r['differing']}"
                print(
                    f"\nDuckDB and polars facts for {r['allocations']:,} allocations and "
                    f"{r['runs']:,} runs: {verdict}"
                )
        print()
        for r in results:
            print(json.dumps(r))
        if any(r["phase"] == "duckdb" and not r["agree"] for r in results):
            sys.exit(1)  # the facts differ: the figures above mean nothing


if __name__ == "__main__":
    main()
