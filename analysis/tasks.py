"""Per-task view: each training task's own pace, stragglers, and the asynchronous-training check.

- **Local steps/s** of a task: the steady-state estimator of the run's steady rate
  (:func:`tierscope.analysis.bootstrap.read`: steps kept over their time, stalls out, pauses out) over
  the task's steady interval local rates (:func:`tierscope.analysis.throughput.interval_rates`, warm-up
  excluded), each interval's local steps its local rate times its seconds. A task that logged only
  its warm-up record (four of the five tasks in the 2016 STANDARD_1 log) falls back to
  the same over all its records, and says so in ``local_includes_warmup``: a local
  rate counts only the task's own steps, so a late start does not inflate it the way it
  inflates the first *global* rate. Its steady global steps/s is the same estimator over its
  global rates.
- **Straggler**: a task whose local steps/s is below :data:`STRAGGLER_FRACTION` of the
  median of its peers' (the run's other training tasks).
- **Asynchronous check**: with asynchronous parameter-server training every task's step
  advances the global step once, so the tasks' local rates add up to about the global
  rate (``local_to_global`` near 1). Synchronous replicas each make one local step per
  global step, so the sum is about ``tasks`` times the global rate. Global rates are
  never added.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping

import numpy as np
import polars as pl

from tierscope.analysis.bootstrap import SteadyRates, steady_rate, steady_rates
from tierscope.analysis.engine import IN_MEMORY
from tierscope.analysis.records import TASK
from tierscope.analysis.throughput import STEADY_WEIGHT, interval_rates

#: A task below this fraction of its peers' median local steps/s is a straggler.
STRAGGLER_FRACTION = 0.8
#: ``local_to_global`` within this relative distance of 1 (async) or of ``tasks`` (sync) matches that mode.
MODE_TOLERANCE = 0.2

#: Columns of :func:`task_throughput`.
TASK_SCHEMA: dict[str, pl.DataType] = {
    "run_id": pl.String(),
    "role": pl.String(),
    "task_index": pl.Int32(),
    "records": pl.UInt32(),  # distinct records of the task (copies merged)
    "segments": pl.UInt32(),  # 1 + restarts/resumes of the task
    "steady_intervals": pl.UInt32(),
    "steady_global_steps_per_s": pl.Float64(),  # the steady-state estimator over the task's own intervals
    "local_steps_per_s": pl.Float64(),  # see the module doc; null when the log has no local rate
    "local_includes_warmup": pl.Boolean(),  # true: only warm-up records had a local rate
    "peer_local_steps_per_s": pl.Float64(),  # median local steps/s of the run's other tasks
    "straggler": pl.Boolean(),  # null when the task or its peers have no local rate
}

#: Columns of :func:`async_check`.
ASYNC_SCHEMA: dict[str, pl.DataType] = {
    "run_id": pl.String(),
    "tasks": pl.UInt32(),  # training tasks with a local rate
    "sum_local_steps_per_s": pl.Float64(),  # sum over tasks of local steps/s
    "steady_global_steps_per_s": pl.Float64(),  # the run's steady global rate (all tasks)
    "local_to_global": pl.Float64(),  # sum_local / steady global
    "mode": pl.String(),  # single / async / sync / inconsistent
}


def task_throughput(
    steps: pl.LazyFrame, intervals: pl.DataFrame | None = None, samples: Mapping[str, SteadyRates] | None = None
) -> pl.DataFrame:
    """One row per training task, :data:`TASK_SCHEMA`'s columns, sorted by run, role, task index.

    ``intervals``: :func:`~tierscope.analysis.throughput.interval_rates` of ``steps``, if already computed;
    ``samples``: their runs' steady samples, if computed (:func:`own_figures`)."""
    intervals = interval_rates(steps) if intervals is None else intervals.lazy()
    return with_peers(own_figures(intervals, samples))


def own_figures(intervals: pl.LazyFrame, samples: Mapping[str, SteadyRates] | None = None) -> pl.DataFrame:
    """Each task's own figures of :func:`task_throughput` (``run_id, role, task_index, records,
    segments, steady_intervals, steady_global_steps_per_s, local_steps_per_s, local_includes_warmup``),
    unsorted: a task's intervals are all it needs. Each task's rows together (as the intervals are),
    starting at its first interval (segment 0, index 0): a task is the rows from one start to the next,
    sliced where they lie. Its rates are the run's steady-state estimator itself
    (:func:`tierscope.analysis.bootstrap.steady_rate`, weighted as
    :func:`tierscope.analysis.bootstrap.steady_rates` weighs the run's intervals) over the task's own steady
    intervals, those holding a pause left out unless every one of the task's does (as
    :data:`tierscope.analysis.throughput.NOT_PAUSED` for a run).

    ``samples``: the runs' steady samples (:func:`tierscope.analysis.throughput.steady_samples`), if the
    caller has them: a task whose steady sample is its run's, value for value (a run of one task), takes
    the run's reading of it (the same figure, read once) instead of reading it again."""
    names = intervals.collect_schema().names()
    paused = pl.col("paused").fill_null(False) if "paused" in names else pl.lit(False)
    starts = (pl.col("segment") == 0) & (pl.col("interval_index") == 0)
    steady = ~pl.col("warmup").fill_null(True)  # a null warm-up flag: not steady
    # an interval's local steps: its local rate times its seconds (NaN: unknown, counted as the task's median)
    local_steps = pl.when(pl.col("d_seconds") > 0).then(pl.col("local_rate") * pl.col("d_seconds"))
    frame = intervals.select(
        *TASK, "segment", STEADY_WEIGHT,
        _rate=pl.col("rate").fill_null(float("nan")), _local=pl.col("local_rate").fill_null(float("nan")),
        _local_steps=local_steps.fill_null(float("nan")), _paused=paused, _start=starts,
        _rated=steady & pl.col("rate").is_not_null(), _timed=steady & pl.col("local_rate").is_not_null(),
        _has_local=pl.col("local_rate").is_not_null(),
    ).collect(engine=IN_MEMORY)  # fmt: skip
    column = {name: frame.get_column(name).to_numpy() for name in frame.columns if name not in TASK}
    firsts = np.flatnonzero(column["_start"])
    runs = frame.get_column("run_id").gather(firsts).to_list() if samples else [None] * firsts.size
    rows = []
    for (lo, hi), run in zip(itertools.pairwise([*firsts.tolist(), frame.height]), runs, strict=True):
        task = {name: values[lo:hi] for name, values in column.items()}
        steady_local = _steady_of(task["_local"], task["_local_steps"], task["_timed"], task["_paused"])
        shared = samples.get(run) if samples and run is not None else None
        rows.append(
            (
                hi - lo,
                int(task["segment"].max()) + 1,  # a task's segments are 0, 1, ...
                int(task["_rated"].sum()),
                _steady_of(task["_rate"], task["weight"], task["_rated"], task["_paused"], shared),
                steady_local,
                # only where no steady interval has a local rate: then over the warm-up's too
                _steady_of(task["_local"], task["_local_steps"], task["_has_local"], None)
                if steady_local is None
                else None,
            )
        )
    figures = pl.DataFrame(
        rows,
        schema={
            "records": pl.UInt32(), "segments": pl.UInt32(), "steady_intervals": pl.UInt32(),
            "steady_global_steps_per_s": pl.Float64(), "_steady_local": pl.Float64(), "_any_local": pl.Float64(),
        },
        orient="row",
    )  # fmt: skip
    keys = frame.select(TASK)[pl.Series(firsts, dtype=pl.UInt64)] if firsts.size else frame.select(TASK).clear()
    return pl.concat([keys, figures], how="horizontal").with_columns(_local_figures())


def _steady_of(
    rates: np.ndarray,
    steps: np.ndarray,
    candidate: np.ndarray,
    paused: np.ndarray | None,
    run: SteadyRates | None = None,
) -> float | None:
    """The steady rate of one task's ``candidate`` intervals (their ``rates``, steps/s, and ``steps``), those
    holding a pause (``paused``; None: none does) left out unless every candidate does; None without one.
    ``run``: the task's run's steady sample, whose reading is taken where it holds the same rates and weights."""
    if not candidate.any():
        return None
    if paused is not None and not paused[candidate].all():
        candidate = candidate & ~paused
    sample = steady_rates(rates[candidate], steps[candidate])
    if run is not None and _same_sample(sample, run):
        return run.steady()
    return steady_rate(sample.rates, None if sample.alike() else sample.weights)


def _same_sample(one: SteadyRates, other: SteadyRates) -> bool:
    """Whether two steady samples hold the same rates and weights, bit for bit (their readings are then one)."""
    if one.size != other.size or (one.weights is None) != (other.weights is None):
        return False
    pairs = [(one.rates, other.rates)]
    if one.weights is not None and other.weights is not None:
        pairs.append((one.weights, other.weights))
    return all(np.array_equal(_bits(a), _bits(b)) for a, b in pairs)


def _bits(values: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(values, dtype=np.float64).view(np.int64)


def _local_figures() -> list[pl.Expr]:
    return [
        pl.coalesce("_steady_local", "_any_local").alias("local_steps_per_s"),
        pl.when(pl.col("_steady_local").is_not_null() | pl.col("_any_local").is_not_null())
        .then(pl.col("_steady_local").is_null())
        .alias("local_includes_warmup"),
    ]


def with_peers(per_task: pl.DataFrame) -> pl.DataFrame:
    """:func:`own_figures` rows of whole runs with the peers' median and the straggler flag:
    :data:`TASK_SCHEMA`, sorted by run, role, task index."""
    peers = (
        per_task.join(per_task.select("run_id", "role", "task_index", "local_steps_per_s"), on="run_id", suffix="_p")
        .filter((pl.col("role") != pl.col("role_p")) | (pl.col("task_index") != pl.col("task_index_p")))
        .group_by("run_id", "role", "task_index")
        .agg(peer_local_steps_per_s=pl.col("local_steps_per_s_p").median())
    )
    return (
        per_task.join(peers, on=["run_id", "role", "task_index"], how="left")
        .with_columns(
            straggler=pl.col("local_steps_per_s") < STRAGGLER_FRACTION * pl.col("peer_local_steps_per_s"),
        )
        .select([pl.col(n).cast(t) for n, t in TASK_SCHEMA.items()])
        .sort("run_id", "role", "task_index")
    )


def async_check(tasks: pl.DataFrame, runs: pl.DataFrame) -> pl.DataFrame:
    """Per run, whether the tasks' local rates add up to the global rate: :data:`ASYNC_SCHEMA`.

    ``tasks``: :func:`task_throughput`'s frame; ``runs``: a frame with ``run_id`` and
    ``steady_global_steps_per_s`` (:func:`tierscope.analysis.throughput.run_throughput`). Runs whose
    log has no local rates are left out.
    """
    with_local = tasks.filter(pl.col("local_steps_per_s").is_not_null())
    sums = with_local.group_by("run_id").agg(
        tasks=pl.len().cast(pl.UInt32), sum_local_steps_per_s=pl.col("local_steps_per_s").sum()
    )
    ratio = pl.col("local_to_global")

    def near(target: float | pl.Expr) -> pl.Expr:
        return (ratio - target).abs() <= MODE_TOLERANCE * target

    return (
        sums.join(runs.select("run_id", "steady_global_steps_per_s"), on="run_id", how="left")
        .with_columns(local_to_global=pl.col("sum_local_steps_per_s") / pl.col("steady_global_steps_per_s"))
        .with_columns(
            mode=pl.when(pl.col("tasks") == 1)
            .then(pl.lit("single"))
            .when(near(1.0))
            .then(pl.lit("async"))
            .when(near(pl.col("tasks")))
            .then(pl.lit("sync"))
            .when(ratio.is_not_null())
            .then(pl.lit("inconsistent"))
        )
        .select([pl.col(n).cast(t) for n, t in ASYNC_SCHEMA.items()])
        .sort("run_id")
    )
