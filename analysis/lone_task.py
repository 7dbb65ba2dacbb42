"""A task alone in its run: its own step is the global step, so the steps between two of its lines are theirs.

Where a log has no clock, an interval is timed by its record's step time (TF-slim's ``sec/step``:
:func:`tierscope.analysis.throughput.step_time_seconds`): its local steps since the task's line before at that
time, one a line unless the lines name their local step. One a line is right for a task that logs every step,
whatever the other replicas add to the global step between its lines (case24: +3 a line, the master and a
worker). It is wrong for a task alone that logs every N steps: TF-slim's ``train_image_classifier.py`` logs
every 10 (``--log_every_n_steps``), so ``global step 10, 20, 30 ... (0.889 sec/step)`` read one step a line gave
10 / 0.889 = 11.25 global steps/s where the task made 1 / 0.889 = 1.125. A task alone moves the global step by
itself: its local step *is* the global step, and the time between two of its lines is the global steps between
them at its step time.

A run's task is alone (:func:`lone_tasks`):

- by its **topology**: the run declares one training task (``--machine``, ``--tier BASIC``, run.json, a
  manifest: :func:`tierscope.analysis.topology.declared_tasks`);
- with no topology, by its **steps**: one training task logged, with no clock, and its lines stand a stride k
  apart at multiples of k, where k is a multiple of :data:`ROUND_INTERVAL` (a logging interval a person sets: 5,
  10, 20, 50, 100 ...): k the most common stride, and at least :data:`ON_STRIDE` of the strides multiples of it
  and of the lines at its multiples (a line missing, the last line of a run that stops off its interval, do not
  turn the reading by k times). A decision, said beside the figure (``summary``'s ``steady_assumption``):
  the log alone cannot tell k replicas logging every step from one task logging every k steps; a stride that
  is no round number (case24's 3) is read as replicas, a round one as a logging interval. A topology settles it.

Only the records a step time times are read so (a local rate, no global rate, no local step named).
"""

from __future__ import annotations

import polars as pl

from tierscope.analysis.records import TRAINING
from tierscope.analysis.topology import declared_tasks

#: The strides read as a logging interval where a run has no topology: multiples of this many global steps.
ROUND_INTERVAL = 5

#: The least share of a run's strides that must be multiples of its most common one, and of its lines at those
#: multiples, for the stride to be its logging interval: a run's odd line (its last, off the interval) or a missing
#: one is a share of a line among many; a stride that is no interval leaves most of them off.
ON_STRIDE = 0.9

#: :func:`lone_tasks`' columns: ``alone_by`` is ``topology`` or ``stride``; ``logged_every`` the stride k the
#: lines stand apart (null where the topology says the task is alone).
LONE_SCHEMA = {"run_id": pl.String(), "alone_by": pl.String(), "logged_every": pl.Int64()}

#: A record a step time times: a local rate and no global rate, no local step named.
STEP_TIMED = (
    pl.col("local_steps_per_s").is_not_null() & pl.col("global_steps_per_s").is_null() & pl.col("local_step").is_null()
)
_CLOCKLESS = pl.col("timestamp").is_null() & pl.col("elapsed_s").is_null() & pl.col("interval_s").is_null()


#: The columns whose footer statistics (:meth:`tierscope.dataset.store.Dataset.footers`) can show that a file holds
#: no step-timed record (:func:`may_be_step_timed`).
FOOTER_COLUMNS = ["global_steps_per_s", "local_steps_per_s", "local_step"]


def may_be_step_timed(footers: pl.DataFrame, unrated: pl.Series) -> pl.Series:
    """The run ids of ``footers`` (one row per data file, :data:`FOOTER_COLUMNS` among its columns) whose files may
    hold a step-timed record (:data:`STEP_TIMED`): every run but those whose every file's footer shows that none of
    its rows is (a file of no local rate, or a local step on every row, or a global rate on every row where the run
    is none of ``unrated``: the runs with a stated global rate read as none, a zero or beyond any machine, whose
    rows the footers cannot tell). A column the footer does not state leaves the file's run in."""

    def known(column: str) -> pl.Expr:
        return pl.col(f"{column}_known").fill_null(False)

    none_timed = (
        (known("local_steps_per_s") & (pl.col("local_steps_per_s_nulls") == pl.col("rows")))
        | (known("local_step") & (pl.col("local_step_nulls") == 0))
        | (
            known("global_steps_per_s")
            & (pl.col("global_steps_per_s_nulls") == 0)
            & ~pl.col("run_id").is_in(unrated.implode())
        )
    ).fill_null(False)
    return footers.filter((~none_timed).any().over("run_id")).get_column("run_id").unique()


def lone_tasks(runs: pl.DataFrame, steps: pl.LazyFrame, footers: pl.DataFrame | None = None,
               unrated: pl.Series | None = None) -> pl.DataFrame:  # fmt: skip
    """:data:`LONE_SCHEMA`, one row per run of ``runs`` (the run index: ``run_id, tier`` and the declared
    topology's columns) whose step-timed records (:data:`STEP_TIMED`, of ``steps``) come from one training task
    that is alone by its topology or its stride (module doc), sorted by run id. Reads the step records' run,
    task, step, order and clock columns, of the step-timed records alone.

    ``footers``: the footers of ``steps``' files (every run's, with :data:`FOOTER_COLUMNS`), and ``unrated``: the
    runs whose stated global rates ``steps`` reads as none (:func:`may_be_step_timed`): the runs whose footers show
    no step-timed record are not read (a run of a log that states global rates, every run of most datasets, costs
    no read of its records). None: every run is read."""
    declared = declared_tasks(runs).select("run_id", "training_tasks")
    one = declared.filter(pl.col("training_tasks") == 1)["run_id"]
    several = declared.filter(pl.col("training_tasks") != 1)["run_id"]
    if footers is not None:
        listed = footers.get_column("run_id").unique()
        maybe = may_be_step_timed(footers, unrated if unrated is not None else pl.Series([], dtype=pl.String))
        # a run the footers do not list (none of its files was scanned with them) is read, as without footers
        steps = steps.filter(pl.col("run_id").is_in(maybe.implode()) | ~pl.col("run_id").is_in(listed.implode()))
    timed = (
        steps.filter(STEP_TIMED & TRAINING & pl.col("step").is_not_null() & ~pl.col("run_id").is_in(several.implode()))
        .select("run_id", "role", "task_index", "step", "source", "source_offset", clockless=_CLOCKLESS)
        .sort("run_id", "source", "source_offset", nulls_last=True)
        .collect(engine="streaming")
    )
    if timed.height == 0:
        return pl.DataFrame(schema=LONE_SCHEMA)
    stride = pl.col("step").diff().drop_nulls()
    common = timed.group_by("run_id", maintain_order=True).agg(k=stride.mode().min())
    k = pl.col("k").first().clip(lower_bound=1)
    per_run = (
        timed.join(common, on="run_id", how="left", maintain_order="left")
        .group_by("run_id", maintain_order=True)
        .agg(
            tasks=pl.struct("role", "task_index").n_unique(),
            clockless=pl.col("clockless").all(),
            records=pl.len(),
            k=pl.col("k").first(),
            on_stride=((stride > 0) & (stride % k == 0)).mean(),
            aligned=(pl.col("step") % k == 0).mean(),
        )
    )
    by_topology = per_run.filter(pl.col("run_id").is_in(one.implode()) & (pl.col("tasks") == 1)).select(
        "run_id", alone_by=pl.lit("topology"), logged_every=pl.lit(None, pl.Int64)
    )
    by_stride = per_run.filter(
        ~pl.col("run_id").is_in(one.implode())
        & (pl.col("tasks") == 1)
        & pl.col("clockless")
        & (pl.col("records") >= 3)  # two strides at least: one alone shows no common stride
        & (pl.col("on_stride") >= ON_STRIDE)
        & (pl.col("aligned") >= ON_STRIDE)
        & (pl.col("k") > 1)
        & (pl.col("k") % ROUND_INTERVAL == 0)
    ).select("run_id", alone_by=pl.lit("stride"), logged_every=pl.col("k").cast(pl.Int64))
    return pl.concat([by_topology, by_stride]).cast(LONE_SCHEMA).sort("run_id")  # type: ignore[arg-type]


def read_alone(lone: pl.DataFrame | None = None) -> pl.Expr:
    """``local_step`` of the step records, the global step on the step-timed records of ``lone``'s runs
    (:func:`lone_tasks`; None: every record's, a run's own chunk): the task alone made every global step between
    its lines."""
    alone = STEP_TIMED & TRAINING
    if lone is not None:
        alone = alone & pl.col("run_id").is_in(lone["run_id"].implode())
    return pl.when(alone).then(pl.col("step")).otherwise(pl.col("local_step")).alias("local_step")


#: The columns :func:`read_alone` reads.
READ_ALONE_COLUMNS = ("role", "step", "local_step", "local_steps_per_s", "global_steps_per_s")
