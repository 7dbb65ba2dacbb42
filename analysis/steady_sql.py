"""The steady-state global steps/s of each run as one SQL query, for BigQuery (or DuckDB) over
the steps table of a dataset (:mod:`tierscope.dataset.bigquery`).

The query follows :mod:`tierscope.analysis.throughput` step by step: training tasks only (and
records naming no role: one process's log, as ``summary`` reads them);
records in log order per task (by timestamp when every record of the task has one, else by
source and line); intervals (timed by the log's clock, else by the record's step time,
:func:`~tierscope.analysis.throughput.step_time_seconds`); segments broken at a restart, a resume (a
step jump more than :data:`~tierscope.analysis.throughput.JUMP_FACTOR` times the run's median rate), a new process
(``elapsed_s`` going back by more than a second, the ``pid`` changing) or an unknown time; warm-up as the first
interval of each segment and the slow intervals right after it (below
:data:`~tierscope.analysis.throughput.WARMUP_FRACTION` of the run's median); the steady rate
the other intervals' global steps over their time, each kept by its share under the stall bound
(:func:`~tierscope.analysis.bootstrap.kept_shares`: whole up to
:data:`~tierscope.analysis.bootstrap.STALL_FROM` times the run's median step time, none from
:data:`~tierscope.analysis.bootstrap.STALL_TO` times; across lines missing from the log,
:data:`~tierscope.analysis.throughput.GAP_FACTOR`, an interval covers the steps its own rate and
seconds give); an interval holding an evaluation of its task (a record with held-out metrics at a step e,
previous step <= e < step: :func:`~tierscope.analysis.throughput.with_pauses`) is left out unless every
one of the run holds one. Not in the query: the pauses the events table records (checkpoint saves and
evaluations logged as events, :data:`~tierscope.analysis.throughput.PAUSE_EVENTS`): it reads the steps table
alone, so where a run logged such events mid-run ``summary``'s rate leaves out intervals the query keeps (the
test of their agreement runs on logs without them). Nor a task alone in its run (its topology, or its lines a round
stride apart: :mod:`tierscope.analysis.lone_task`), whose step times ``summary`` stretches over the global steps
between its lines: the query reads no topology and times one step a line. One simplification: copies of a
record are merged when they agree on ``elapsed_s`` and ``interval_s`` (the platform's re-logged lines do;
``summary`` also merges copies that complete each other).

The two dialects differ only in two function names (:data:`DUCKDB_NAMES`): BigQuery's
``PERCENTILE_CONT(x, 0.5) OVER (...)`` is DuckDB's ``QUANTILE_CONT``, its ``UNIX_MICROS``
DuckDB's ``EPOCH_US``. Every median is exact (interpolated), as polars' is.
"""

from __future__ import annotations

from tierscope.analysis.bootstrap import STALL_FROM, STALL_TO
from tierscope.analysis.coarse_clock import COARSE_CLOCK_S
from tierscope.analysis.stated_rates import MAX_STEPS_PER_S
from tierscope.analysis.throughput import (
    GAP_FACTOR,
    JUMP_FACTOR,
    MAX_TIMING_STEPS_PER_S,
    WARMUP_FRACTION,
)
from tierscope.dataset.schema import TRAINING_ROLES

_ROLES = ", ".join(f"'{role}'" for role in TRAINING_ROLES)
#: The query in BigQuery SQL; ``{steps}`` is the steps table (``FROM {steps}``).
STEADY_STATE_SQL = f"""\
-- Steady-state global steps/s per run, as `tierscope summary` computes it.
WITH records AS (  -- training tasks; copies of a record merged
  SELECT * FROM (
    SELECT run_id, role, task_index, step, position, elapsed_s, interval_s,
      -- a stated 0 or beyond any machine is no rate (analysis.stated_rates)
      CASE WHEN global_steps_per_s > 0 AND global_steps_per_s <= {MAX_STEPS_PER_S:.0f}
        THEN global_steps_per_s END AS global_steps_per_s,
      local_step, local_steps_per_s, timestamp, source, source_offset, pid,
      ROW_NUMBER() OVER (
        -- BigQuery partitions by no FLOAT64: the times as text (equal values, equal text)
        PARTITION BY run_id, role, task_index, step, position,
          CAST(elapsed_s AS STRING), CAST(interval_s AS STRING)
        ORDER BY source ASC NULLS LAST, source_offset ASC NULLS LAST) AS copy_number
    FROM {{steps}}
    WHERE role IN ({_ROLES}) OR role IS NULL  -- a single process's log names no role
  ) WHERE copy_number = 1
),
evaluations AS (  -- the evaluations that stopped a training task: its own record with held-out metrics, or
  -- an evaluator's naming no task (in the training process' own log: every training task of the run)
  SELECT DISTINCT run_id, CASE WHEN role = 'evaluator' THEN NULL ELSE role END AS role, task_index,
    COALESCE(role = 'evaluator', FALSE) AS run_wide, step
  FROM {{steps}}
  WHERE (eval_loss IS NOT NULL OR eval_accuracy IS NOT NULL) AND step IS NOT NULL
    AND (role IN ({_ROLES}) OR role IS NULL OR (role = 'evaluator' AND task_index IS NULL))
),
ordered AS (  -- log order per task: by time when every record has one, else by file and line
  SELECT *, ROW_NUMBER() OVER (
      PARTITION BY run_id, role, task_index
      ORDER BY CASE WHEN unstamped = 0 THEN timestamp END ASC NULLS LAST,
        source ASC NULLS LAST, source_offset ASC NULLS LAST, step ASC NULLS LAST) AS n
  FROM (
    SELECT *, SUM(CASE WHEN timestamp IS NULL THEN 1 ELSE 0 END)
      OVER (PARTITION BY run_id, role, task_index) AS unstamped
    FROM records)
),
deltas AS (  -- each record's interval since the task's previous record
  SELECT *,
    step - LAG(step) OVER task AS d_step, LAG(step) OVER task AS previous_step,
    COALESCE(
      -- a stated time and no rate after lines the file lacks (the gain over {GAP_FACTOR}x the one before, the
      -- file's clock over {GAP_FACTOR}x the stated time): the file's clock times the gain
      CASE WHEN NOT COALESCE(interval_s IS NOT NULL AND global_steps_per_s IS NULL
          AND LAG(step) OVER task - LAG(step, 2) OVER task > 0
          AND step - LAG(step) OVER task > {GAP_FACTOR} * (LAG(step) OVER task - LAG(step, 2) OVER task)
          AND COALESCE(elapsed_s - LAG(elapsed_s) OVER task,
            (UNIX_MICROS(timestamp) - UNIX_MICROS(LAG(timestamp) OVER task)) / 1e6)
            > {GAP_FACTOR} * interval_s + {COARSE_CLOCK_S}, FALSE) THEN interval_s END,
      elapsed_s - LAG(elapsed_s) OVER task,
      (UNIX_MICROS(timestamp) - UNIX_MICROS(LAG(timestamp) OVER task)) / 1e6,
      -- no clock and no global rate: the local steps since the previous record at the record's own
      -- local steps/s (> 0 and finite), one a line where the two name none (TF-slim logs every step)
      CASE WHEN n > 1 AND global_steps_per_s IS NULL
          AND local_steps_per_s > 0 AND local_steps_per_s <= {MAX_TIMING_STEPS_PER_S:.0f} THEN CASE
        WHEN local_step IS NULL OR LAG(local_step) OVER task IS NULL THEN 1 / local_steps_per_s
        WHEN local_step > LAG(local_step) OVER task
          THEN (local_step - LAG(local_step) OVER task) / local_steps_per_s END END) AS d_seconds,
    COALESCE(elapsed_s < LAG(elapsed_s) OVER task - {COARSE_CLOCK_S} OR elapsed_s < 0.5 * LAG(elapsed_s) OVER task,
             FALSE) AS elapsed_back,
    -- against the last pid the task named: a record naming none does not hide a change
    COALESCE(pid <> LAST_VALUE(pid IGNORE NULLS) OVER (PARTITION BY run_id, role, task_index ORDER BY n
      ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), FALSE) AS new_pid
  FROM ordered
  WINDOW task AS (PARTITION BY run_id, role, task_index ORDER BY n)
),
rated AS (
  SELECT *, CASE WHEN d_step > 0 AND d_seconds > 0 THEN d_step / d_seconds END AS raw_rate,
    CASE WHEN d_step > 0 AND d_seconds > 0 THEN d_step / (d_seconds + {COARSE_CLOCK_S}) END AS jump_rate
  FROM deltas
),
breaks AS (  -- a new segment: first record, restart, new process, unknown time, resume
  SELECT *, CASE WHEN n = 1
      OR COALESCE(d_step <= 0, FALSE)
      OR elapsed_back OR new_pid
      OR ((d_seconds IS NULL OR d_seconds <= 0) AND global_steps_per_s IS NULL)
      OR COALESCE(jump_rate > {JUMP_FACTOR} * run_raw_median, FALSE)
    THEN 1 ELSE 0 END AS starts_segment
  FROM (
    SELECT *, PERCENTILE_CONT(raw_rate, 0.5) OVER (PARTITION BY run_id) AS run_raw_median
    FROM rated)
),
segmented AS (
  SELECT *, SUM(starts_segment) OVER (
      PARTITION BY run_id, role, task_index ORDER BY n ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
    ) - 1 AS segment
  FROM breaks
),
intervals AS (  -- the interval rate: as logged, else steps over seconds within the segment
  SELECT *, COALESCE(global_steps_per_s,
      CASE WHEN interval_index > 0 AND d_seconds > 0 THEN d_step / d_seconds END) AS rate,
    -- the steps it covers: a record's own rate x seconds since the program's previous line, where
    -- the file's step gain is more than {GAP_FACTOR}x that (lines missing between them)
    CASE WHEN interval_index > 0 THEN CASE
      WHEN d_step > {GAP_FACTOR} * global_steps_per_s * interval_s THEN FLOOR(global_steps_per_s * interval_s + 0.5)
      ELSE d_step END END AS steps
  FROM (
    SELECT *, ROW_NUMBER() OVER (PARTITION BY run_id, role, task_index, segment ORDER BY n) - 1
      AS interval_index
    FROM segmented)
),
warmup AS (  -- a segment's first interval, and the slow ones right after it
  SELECT *, MIN(CASE WHEN interval_index = 0 OR COALESCE(rate < {WARMUP_FRACTION} * run_median, FALSE)
      THEN 1 ELSE 0 END) OVER (
      PARTITION BY run_id, role, task_index, segment ORDER BY n
      ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) = 1 AS in_warmup
  FROM (
    SELECT *, PERCENTILE_CONT(CASE WHEN interval_index > 0 THEN rate END, 0.5)
      OVER (PARTITION BY run_id) AS run_median
    FROM intervals)
),
candidates AS (  -- the intervals past warm-up with a rate; each holds an evaluation if one ran after
  -- training reached a step e with previous step <= e < step (its time is badput, goodput's)
  SELECT run_id, rate, steps, d_seconds, EXISTS (
      SELECT 1 FROM evaluations e
      WHERE e.run_id = w.run_id AND e.step >= w.previous_step AND e.step < w.step
        AND (e.run_wide OR (e.role = w.role AND e.task_index = w.task_index)
          OR (e.role IS NULL AND w.role IS NULL AND e.task_index IS NULL AND w.task_index IS NULL))
    ) AS evaluated
  FROM warmup w
  WHERE NOT in_warmup AND rate IS NOT NULL
),
judged AS (  -- those holding an evaluation left out, unless every one of the run holds one
  SELECT *, COUNT(*) OVER (PARTITION BY run_id) AS intervals,
    MIN(CASE WHEN evaluated THEN 1 ELSE 0 END) OVER (PARTITION BY run_id) = 1 AS all_evaluated
  FROM candidates
),
steady AS (  -- each steady interval's steps (else its seconds at its own rate; unknown: the run's median)
  SELECT run_id, rate, intervals,
    COALESCE(interval_steps, PERCENTILE_CONT(interval_steps, 0.5) OVER (PARTITION BY run_id)) AS interval_steps
  FROM (
    SELECT run_id, rate, intervals, COALESCE(CASE WHEN steps > 0 THEN steps END,
        CASE WHEN d_seconds > 0 AND rate > 0 THEN d_seconds * rate END) AS interval_steps
    FROM judged
    WHERE NOT evaluated OR all_evaluated)
),
timed AS (  -- each steady interval's step time over the run's median one (each interval one observation)
  SELECT run_id, rate, interval_steps, intervals,
    CASE WHEN rate > 0 THEN (1 / rate)
      / PERCENTILE_CONT(CASE WHEN rate > 0 THEN 1 / rate END, 0.5) OVER (PARTITION BY run_id) END AS ratio
  FROM steady
),
kept AS (  -- its share: whole up to {STALL_FROM}x the median step time, none from {STALL_TO}x (a stall), linear between
  SELECT run_id, rate, intervals, interval_steps * LEAST(GREATEST(
      ({STALL_TO} - ratio) / ({STALL_TO} - {STALL_FROM}), 0), 1) AS kept_steps
  FROM timed
)
SELECT run_id,  -- the steps of the intervals kept over their time (0 where every rate says no progress)
  COALESCE(SUM(kept_steps) / NULLIF(SUM(CASE WHEN kept_steps > 0 THEN kept_steps / rate END), 0),
    CASE WHEN MAX(rate) = 0 THEN 0 END) AS steady_global_steps_per_s,
  MAX(intervals) AS steady_intervals
FROM kept
GROUP BY run_id
ORDER BY run_id
"""

#: BigQuery's names of the functions DuckDB spells otherwise.
DUCKDB_NAMES = {"PERCENTILE_CONT(": "QUANTILE_CONT(", "UNIX_MICROS(": "EPOCH_US("}


def steady_state_query(steps: str, dialect: str = "bigquery") -> str:
    """The query over the steps table ``steps`` (a FROM item: ```project.ds.steps``` in BigQuery,
    ``read_parquet('ds/steps/*/*.parquet', hive_partitioning = true)`` in DuckDB). Columns:
    ``run_id``, ``steady_global_steps_per_s`` (FLOAT64), ``steady_intervals`` (INT64); one row per
    run with a steady interval, by run id. Raises ``ValueError`` for another ``dialect``."""
    sql = STEADY_STATE_SQL.replace("{steps}", steps)
    if dialect == "bigquery":
        return sql
    if dialect != "duckdb":
        raise ValueError(f"unknown SQL dialect {dialect!r}; use bigquery or duckdb")
    for bigquery, duckdb in DUCKDB_NAMES.items():
        sql = sql.replace(bigquery, duckdb)
    return sql
