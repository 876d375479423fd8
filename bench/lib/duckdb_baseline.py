"""The bench contract by hand as one DuckDB query, from the raw events
(:data:`lib.contract.CONTRACT`)."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from lib.contract import (
    DELAY_CENTS,
    H100_CENTS,
    HOUR_US,
    INCREMENT_US,
    MINIMUM_US,
    MONTH_CAP_CENTS,
    NOTICE_US,
    OTHER_CENTS,
    RESTART_US,
    RUN_CAP_CENTS,
)
from lib.outcome import MONEY_COLUMNS, Outcome

DUCKDB_SQL = f"""
WITH ev AS (
  SELECT run_id, alloc_id, ts, epoch_us(ts) AS t, event, gpus, sku, capacity, price, valid
  FROM read_parquet($path)
),
starts AS (
  SELECT run_id, alloc_id, t AS s, gpus, sku, capacity,
         CAST(price * 100 AS BIGINT) AS price_cents              -- whole cents (checked)
  FROM ev WHERE event = 'started'
),
ends AS (
  SELECT alloc_id, t AS e, ts AS end_ts, event AS reason
  FROM ev WHERE event IN ('released', 'reclaimed', 'failed')
),
-- the lead of a notice counts from the allocation's first notice
notices AS (SELECT alloc_id, min(t) AS notice FROM ev WHERE event = 'notice' GROUP BY alloc_id),
-- the run's valid checkpoints, with or without an alloc_id (a null `valid` means valid)
checkpoints AS (
  SELECT run_id, t AS c FROM ev WHERE event = 'checkpoint' AND coalesce(valid, true)
),
-- each run's distinct start times, how many allocations start then, and the next one
start_times AS (
  SELECT run_id, s AS nxt, count(*) AS starting,
         lead(s) OVER (PARTITION BY run_id ORDER BY s) AS after
  FROM starts GROUP BY run_id, s
),
a0 AS (
  SELECT st.*, en.e, en.end_ts, en.reason, n.notice
  FROM starts st JOIN ends en USING (alloc_id) LEFT JOIN notices n USING (alloc_id)
),
a1 AS (
  SELECT a0.*, ck.c
  FROM a0 ASOF LEFT JOIN checkpoints ck ON a0.run_id = ck.run_id AND ck.c <= a0.e
),
a2 AS (
  SELECT a1.*, nx.nxt, nx.starting, nx.after
  FROM a1 ASOF LEFT JOIN start_times nx ON a1.run_id = nx.run_id AND nx.nxt >= a1.e
),
facts AS (
  SELECT run_id, gpus, end_ts, reason, e - s AS runtime,
    -- the first *other* allocation starting at or after the end (see the polars query)
    CASE WHEN reason IN ('reclaimed', 'failed') THEN
      (CASE WHEN nxt = s AND starting = 1 THEN after ELSE nxt END) - e END AS wait,
    CASE WHEN reason = 'reclaimed' THEN e - coalesce(notice, e) END AS notice_lead,
    CASE WHEN reason IN ('reclaimed', 'failed') THEN e - greatest(s, coalesce(c, s)) END
      AS replayed,
    CASE WHEN capacity = 'spot' AND price_cents IS NOT NULL THEN price_cents
         WHEN sku = 'H100-80G' THEN {H100_CENTS} ELSE {OTHER_CENTS} END AS rate
  FROM a2
),
billed AS (
  SELECT *,
    CASE WHEN reason = 'reclaimed' AND runtime < {HOUR_US} THEN 0
         WHEN reason = 'reclaimed' AND notice_lead < {NOTICE_US}
           THEN runtime - least(replayed, runtime)
         ELSE runtime END AS remaining
  FROM facts
),
money AS (
  SELECT *,
    CAST(rate AS HUGEINT) * gpus * CASE WHEN remaining > 0 THEN greatest(
      (remaining + {INCREMENT_US - 1}) // {INCREMENT_US} * {INCREMENT_US}, {MINIMUM_US}
    ) ELSE 0 END AS charge_n                                     -- cent-µs per hour
  FROM billed
),
lines AS (
  SELECT run_id, gpus, runtime, end_ts,
    (2 * charge_n + {HOUR_US}) // {2 * HOUR_US} AS charge,
    CASE WHEN wait > {RESTART_US} THEN
      (2 * charge_n + {10 * HOUR_US}) // {20 * HOUR_US}
      + (2 * CAST({DELAY_CENTS} AS HUGEINT) * gpus * (wait - {RESTART_US}) + {HOUR_US})
        // {2 * HOUR_US}
    ELSE 0 END AS credit
  FROM money
),
per_run AS (
  SELECT run_id, sum(charge) AS gross, sum(credit) AS pool,
         sum(CAST(gpus AS HUGEINT) * runtime) AS metered,
         strftime(max(end_ts), '%Y-%m') AS month                -- the settlement month
  FROM lines GROUP BY run_id
),
all_runs AS (
  SELECT r.run_id, coalesce(gross, 0) AS gross, coalesce(pool, 0) AS pool,
         coalesce(metered, 0) AS metered, month
  FROM (SELECT DISTINCT run_id FROM ev) r LEFT JOIN per_run USING (run_id)
),
-- run caps, in order: 150 USD, then the run's gross
run_cap AS (SELECT *, greatest(pool - {RUN_CAP_CENTS}, 0) AS cut_run FROM all_runs),
gross_cap AS (SELECT *, greatest(pool - cut_run - gross, 0) AS cut_gross FROM run_cap),
after_run AS (SELECT *, pool - cut_run - cut_gross AS kept FROM gross_cap),
-- the month cap, shared by largest remainder, ties to the smaller run_id
months AS (
  SELECT month, sum(kept) AS month_pool, greatest(sum(kept) - {MONTH_CAP_CENTS}, 0) AS month_cut
  FROM after_run GROUP BY month
),
shared AS (
  SELECT r.*, m.month_cut,
    CASE WHEN m.month_pool = 0 THEN 0 ELSE m.month_cut * r.kept // m.month_pool END AS base,
    CASE WHEN m.month_pool = 0 THEN 0 ELSE m.month_cut * r.kept % m.month_pool END AS rem
  FROM after_run r JOIN months m ON r.month IS NOT DISTINCT FROM m.month
),
ranked AS (
  SELECT *,
    month_cut - sum(base) OVER (PARTITION BY month) AS units,
    row_number() OVER (PARTITION BY month ORDER BY rem DESC, run_id) - 1 AS rank
  FROM shared
)
SELECT run_id,
  CAST(gross AS BIGINT) AS gross,
  CAST(-pool AS BIGINT) AS credits,
  CAST(cut_run + cut_gross + base + (rank < units)::INT AS BIGINT) AS cap_cuts,
  CAST(gross - pool + cut_run + cut_gross + base + (rank < units)::INT AS BIGINT) AS net,
  metered
FROM ranked
"""


def duckdb_baseline(path: Path) -> Outcome:
    """:data:`lib.contract.CONTRACT` by hand as one DuckDB query, from the raw events."""
    # imported here, in the child process that measures this step, so its
    # import time and memory count only where they are measured
    import duckdb  # noqa: PLC0415

    con = duckdb.connect()
    try:
        con.execute("SET TimeZone = 'UTC'")  # months of TIMESTAMPTZ values, in UTC
        table = con.sql(DUCKDB_SQL, params={"path": str(path)}).to_arrow_table()
    finally:
        con.close()
    out = pl.from_arrow(table)
    assert isinstance(out, pl.DataFrame)
    runs = out.select("run_id", *(pl.col(c).cast(pl.Int64) for c in MONEY_COLUMNS))
    return Outcome(runs, int(out["metered"].sum()))
