"""Throughput of each run: interval rates, the steady state and the overall mean.

Definitions (steps are *global* steps, times in seconds):

- **Interval rate** of a record: the global steps/s over the task's last logging
  interval. Taken as logged (``global_steps_per_s``); where a format logs no rate it is
  derived from the step and time deltas to the task's previous record.
- **Warm-up**: the first record of each task. Its interval runs from the task's start,
  so it includes graph building, input start-up and (for a late-starting worker) steps
  other tasks made before it began: in the 2016 STANDARD_1 log worker 3's first rate is
  64.662 global steps/s against a steady ~23.
- **Steady-state global steps/s**: the median of the interval rates of a run's training
  tasks (master/chief and workers; never ps or evaluator), warm-up excluded. Global
  rates of different tasks are never added: every task sees the same global step.
- **Mean global steps/s**: the global steps gained between each task's consecutive
  records over the time between them, pooled over tasks (sum of steps / sum of seconds),
  warm-up intervals excluded.
"""

from __future__ import annotations

import polars as pl

from collector.schema import TRAINING_ROLES

TASK = ("run_id", "role", "task_index")

#: Columns of :func:`interval_rates`' frame, beyond the step record's own.
INTERVAL_COLUMNS = {
    "interval_index": pl.UInt32(),  # 0 for a task's first record (warm-up)
    "d_step": pl.Int64(),  # global steps since the task's previous record
    "d_seconds": pl.Float64(),  # seconds since the task's previous record
    "rate": pl.Float64(),  # interval global steps/s
    "warmup": pl.Boolean(),
}


def training_steps(steps: pl.LazyFrame) -> pl.LazyFrame:
    """Records of training tasks only (master, chief, worker).

    A record that names no task (Estimator, Keras and MLPerf lines without a launcher
    prefix) comes from a single-process log: it counts as the run's one training task.
    """
    return steps.filter(pl.col("role").is_in(list(TRAINING_ROLES)) | pl.col("role").is_null())


def interval_rates(steps: pl.LazyFrame) -> pl.LazyFrame:
    """Each training-task record with its interval (see the module doc) and warm-up flag.

    Input: step records (:data:`collector.schema.STEP_SCHEMA`). Output: the same rows of
    training tasks, ordered by run, task and step, with :data:`INTERVAL_COLUMNS` added.
    """
    ordered = training_steps(steps).sort([*TASK, "step", "source_offset"])
    d_seconds = pl.coalesce(
        pl.col("interval_s"),
        pl.col("elapsed_s") - pl.col("elapsed_s").shift(1).over(TASK),
    )
    return ordered.with_columns(
        interval_index=pl.int_range(pl.len(), dtype=pl.UInt32).over(TASK),
        d_step=pl.col("step") - pl.col("step").shift(1).over(TASK),
        d_seconds=d_seconds,
    ).with_columns(
        rate=pl.coalesce(
            pl.col("global_steps_per_s"),
            pl.when(pl.col("d_seconds") > 0).then(pl.col("d_step") / pl.col("d_seconds")),
        ),
        warmup=pl.col("interval_index") == 0,
    )


def run_throughput(steps: pl.LazyFrame) -> pl.DataFrame:
    """Per run: records and throughput.

    Returns one row per run that has step records, with columns ``run_id`` (String),
    ``records`` (UInt32, all records including ps/evaluator), ``tasks`` (UInt32, distinct
    training tasks), ``steady_intervals`` (UInt32, intervals behind the median),
    ``steady_global_steps_per_s`` (Float64, null when every task logged once),
    ``mean_global_steps_per_s`` (Float64, null when no task logged twice),
    ``last_step`` (Int64, the highest global step).
    """
    records = steps.group_by("run_id").agg(records=pl.len().cast(pl.UInt32), last_step=pl.col("step").max())
    intervals = interval_rates(steps)
    steady = intervals.filter(~pl.col("warmup"))
    per_run = intervals.group_by("run_id").agg(
        tasks=pl.struct("role", "task_index").n_unique().cast(pl.UInt32),
    )
    rates = steady.group_by("run_id").agg(
        steady_intervals=pl.col("rate").drop_nulls().len().cast(pl.UInt32),
        steady_global_steps_per_s=pl.col("rate").median(),
        mean_global_steps_per_s=(
            pl.col("d_step").filter(pl.col("d_seconds") > 0).sum()
            / pl.col("d_seconds").filter(pl.col("d_seconds") > 0).sum()
        ).fill_nan(None),
    )
    return (
        records.join(per_run, on="run_id", how="left")
        .join(rates, on="run_id", how="left")
        .with_columns(pl.col("tasks", "steady_intervals").fill_null(0))
        .select(
            "run_id",
            "records",
            "tasks",
            "steady_intervals",
            "steady_global_steps_per_s",
            "mean_global_steps_per_s",
            "last_step",
        )
        .sort("run_id")
        .collect()
    )
