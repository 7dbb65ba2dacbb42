"""Whether a run's training tasks look like tasks of one job: the check a collect makes on each run it stored
step records of, so that logs of two runs read as tasks of one (``worker-0.log`` and ``worker-1.log`` from two
different jobs, named after tasks by the documented convention) are said, not averaged silently.

Tasks of one job run at the same time and, synchronous or asynchronous, print about one job-wide rate: a run
whose tasks' typical rates (the median of each task's stated steps/s) are more than :data:`RATE_SPREAD` apart,
or two of whose tasks' clocks (first to last timestamp) do not overlap at all, gets a one-line warning saying how
to collect its files as runs of their own. The run is stored as read either way: the user decides.
"""

from __future__ import annotations

import polars as pl

#: How far apart (largest / smallest) the tasks' typical steps/s may be in one job. Synchronous replicas step
#: together, and asynchronous workers print the job's global rate, so tasks of one job agree within a few tens of
#: percent (a straggler is 0.8x its peers'); 2x apart is two jobs on different machines.
RATE_SPREAD = 2.0

#: Stated rates a task needs before its typical rate is judged (one odd line is no typical rate).
MIN_RATES = 3

#: Roles whose records are no training task's pace.
_NOT_TRAINING = ("evaluator", "eval", "ps")


#: The columns of a run's step records :func:`disagreement` reads.
COLUMNS = ["role", "task_index", "global_steps_per_s", "timestamp", "source"]


def training_records() -> pl.Expr:
    """The records :func:`disagreement` judges: a training task's."""
    return ~pl.col("role").fill_null("").is_in(_NOT_TRAINING)


def disagreement(run_id: str, steps: pl.DataFrame) -> str | None:
    """A one-line warning (no trailing period) when run ``run_id``'s training tasks disagree as this module
    says, else None (also for a run of one task). ``steps``: the run's step records (:data:`COLUMNS`,
    :func:`training_records`)."""
    tasks = steps.group_by("role", "task_index").agg(
        rate=pl.col("global_steps_per_s").drop_nulls().median(),
        rates=pl.col("global_steps_per_s").drop_nulls().len(),
        start=pl.col("timestamp").min(),
        end=pl.col("timestamp").max(),
        source=pl.col("source").drop_nulls().first(),
    )
    if tasks.height < 2:
        return None
    named = tasks.with_columns(
        task=pl.format("{} {}", pl.col("role").fill_null("task"), pl.col("task_index").cast(pl.String).fill_null("0"))
    ).sort("task")
    files = ", ".join(sorted({s for s in named["source"].to_list() if s}))
    advice = f"if they are runs of their own, collect each file apart with --run-id NAME ({files})"
    rated = named.filter((pl.col("rates") >= MIN_RATES) & (pl.col("rate") > 0))
    if rated.height >= 2:
        fast, slow = rated.sort("rate", descending=True).row(0, named=True), rated.sort("rate").row(0, named=True)
        if fast["rate"] > RATE_SPREAD * slow["rate"]:
            return (
                f"run {run_id!r}: its tasks step at rates {fast['rate'] / slow['rate']:.1f}x apart ({fast['task']} "
                f"{fast['rate']:.3g} steps/s, {slow['task']} {slow['rate']:.3g}): tasks of one job step together; "
                + advice
            )
    clocked = named.filter(pl.col("start").is_not_null()).sort("start")
    if clocked.height >= 2:
        ends = clocked["end"].cum_max()
        apart = clocked.with_columns(before=ends.shift(1)).filter(pl.col("start") > pl.col("before"))
        if apart.height:
            later = apart.row(0, named=True)
            return (
                f"run {run_id!r}: its tasks' clocks do not overlap ({later['task']} starts at "
                f"{later['start']:%Y-%m-%d %H:%M:%S}, after every earlier task's last record): tasks of one job run "
                "at the same time; " + advice
            )
    return None
