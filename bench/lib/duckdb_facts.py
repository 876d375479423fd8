"""The facts of every allocation and run by hand in DuckDB SQL, from the raw events: an
independent implementation of the facts ``docs/trace.md`` defines, checked equal to
contractlang's column by column (``bench_facts.py``)."""

from __future__ import annotations

from pathlib import Path

import polars as pl

ENDS = "('released', 'reclaimed', 'failed')"


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


def facts_sql(trace: Path) -> str:
    """The query of every allocation's facts (:data:`DUCKDB_FACTS`) over ``trace``."""
    return DUCKDB_FACTS.format(path=trace, ends=ENDS)


def runs_sql(trace: Path) -> str:
    """The query of every run's facts (:data:`DUCKDB_RUNS`) over ``trace``."""
    return DUCKDB_RUNS.format(path=trace, facts=facts_sql(trace))  # a subquery with its own WITH


def allocations_differing(ours: Path, facts: pl.DataFrame) -> tuple[dict[str, int], bool]:
    """How many allocations differ in each of :data:`COMPARED` between contractlang's facts
    (the Parquet file ``ours``) and DuckDB's, and whether both have the same allocations."""
    # compare with polars, column by column (times as integer microseconds)
    mine = pl.read_parquet(ours).select(
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
    joined = mine.join(facts, on="alloc_id", how="full", suffix="_duckdb")
    differing = {
        c: joined.filter(
            pl.col(c).cast(pl.Int64).ne_missing(pl.col(f"{c}_duckdb").cast(pl.Int64))
        ).height
        for c in COMPARED
    }
    return differing, joined.height == mine.height == facts.height


def runs_differing(ours: Path, runs: pl.DataFrame) -> tuple[dict[str, int], bool]:
    """The same for each run's :data:`RUN_COMPARED`."""
    durations = ("time_to_accept", "metered_gpu_time", "lost_gpu_time")
    mine = pl.read_parquet(ours).select(
        "run_id",
        *[pl.col(c).dt.total_microseconds() if c in durations else pl.col(c) for c in RUN_COMPARED],
    )
    joined = mine.join(runs, on="run_id", how="full", suffix="_duckdb")
    differing = {}
    for c in RUN_COMPARED:
        ours_c, theirs_c = pl.col(c).cast(pl.Int64), pl.col(f"{c}_duckdb").cast(pl.Int64)
        differing[c] = joined.filter(ours_c.ne_missing(theirs_c)).height
    return differing, joined.height == mine.height == runs.height
