"""Step records as the analysis sees them: one row per logged event, in the order it happened.

The dataset already drops rows whose :data:`tierscope.dataset.schema.STEP_KEY` values repeat.
The same record can still arrive twice with different key values: the same line read
by two parsers (a text line with ``elapsed_s`` and a structured entry with a
``timestamp``), a platform copy at severity ``ERROR`` that lost a field, two log
handlers. :func:`merge_duplicates` folds those copies into one record.

What makes two records of one task and global step the same record: nothing they both
carry disagrees. ``elapsed_s`` within :data:`SAME_ELAPSED_S` seconds, ``timestamp``
within :data:`SAME_TIMESTAMP_S` seconds (when both have one). A task that logs a step a
second time after a restart from an older checkpoint does so from a new process, with a
new ``elapsed_s`` and a later clock, so it stays a separate record.
"""

from __future__ import annotations

import polars as pl

from tierscope.dataset.schema import STEP_SCHEMA, TRAINING_ROLES

TASK = ("run_id", "role", "task_index")
#: What identifies a record of a task: its global step, or for a step-less record (a
#: `global_step/sec` line with no step) the line it was read from (``position``, null otherwise).
RECORD = (*TASK, "step", "position")

#: ``elapsed_s`` values closer than this are one record logged twice (text logs print ms).
SAME_ELAPSED_S = 1e-3
#: ``timestamp`` values closer than this are one record (a platform copy is re-stamped on ingestion).
SAME_TIMESTAMP_S = 5.0


def training_steps(steps: pl.LazyFrame) -> pl.LazyFrame:
    """Records of training tasks only (master, chief, worker).

    A record that names no task (Estimator, Keras and MLPerf lines without a launcher
    prefix) comes from a single-process log: it counts as the run's one training task.
    """
    return steps.filter(pl.col("role").is_in(list(TRAINING_ROLES)) | pl.col("role").is_null())


def merge_duplicates(steps: pl.LazyFrame) -> pl.LazyFrame:
    """One row per record: copies of a record (see the module doc) merged.

    Input: :data:`tierscope.dataset.schema.STEP_SCHEMA` rows. Output: the same columns, each the
    first non-null value among the copies (so a copy with ``interval_s`` completes one
    with ``elapsed_s``; ``source``/``source_offset`` are the earliest copy's), plus
    ``copies`` (UInt32, how many rows were merged; 1 for a record logged once).
    """
    # Most records are logged once: only keys seen twice go through the (costly) merge.
    counted = steps.with_columns(_n=pl.len().over(RECORD))
    single = counted.filter(pl.col("_n") == 1).select(*STEP_SCHEMA, copies=pl.lit(1, dtype=pl.UInt32))
    repeated = counted.filter(pl.col("_n") > 1).drop("_n")
    ordered = repeated.sort([*RECORD, "elapsed_s", "timestamp", "source", "source_offset"], nulls_last=True)
    prev_elapsed = pl.col("elapsed_s").shift(1).over(RECORD)
    prev_ts = pl.col("timestamp").shift(1).over(RECORD)
    differs = ((pl.col("elapsed_s") - prev_elapsed).abs() > SAME_ELAPSED_S).fill_null(False) | (
        (pl.col("timestamp") - prev_ts).dt.total_microseconds().abs() > SAME_TIMESTAMP_S * 1e6
    ).fill_null(False)
    others = [c for c in STEP_SCHEMA if c not in RECORD]
    merged = (
        ordered.with_columns(_occurrence=differs.cum_sum().over(RECORD))
        .group_by([*RECORD, "_occurrence"])
        .agg(*[pl.col(c).drop_nulls().first() for c in others], copies=pl.len().cast(pl.UInt32))
        .select(*STEP_SCHEMA, "copies")
    )
    return pl.concat([single, merged])


def in_log_order(steps: pl.LazyFrame) -> pl.LazyFrame:
    """``steps`` sorted per task in the order the records were written.

    By ``timestamp`` when every record of the task has one, else by ``source`` and
    ``source_offset`` (a file is written in order; the 2016 logs have no clock). Not by
    step: a restart from an older checkpoint logs lower steps *after* higher ones.
    """
    all_stamped = pl.col("timestamp").is_not_null().all().over(TASK)
    return (
        steps.with_columns(_order_ts=pl.when(all_stamped).then(pl.col("timestamp")))
        .sort([*TASK, "_order_ts", "source", "source_offset", "step"], nulls_last=True)
        .drop("_order_ts")
    )
