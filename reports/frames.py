"""The frames the report draws, each small and bounded whatever the dataset's size.

Every function here returns a polars DataFrame whose columns are listed in its docstring;
:mod:`tierscope.reports.charts` draws them. Nothing here grows with the number of step records:
series are bucketed to at most :data:`MAX_POINTS_PER_CHART` points, and at most
:data:`MAX_RUNS_CHARTED` runs are drawn per chart (the runs with the most records).

The figures themselves come from :mod:`analysis` (bootstrap intervals, per-task local
rates and stragglers, time and price to N steps, the USL/Amdahl fit); the adapters here
only select, rename and bound them into the columns each chart documents.
"""

from __future__ import annotations

import polars as pl

from tierscope.analysis.records import TASK
from tierscope.analysis.scaling import ScalingFit, best_fit, prediction_band
from tierscope.reports.errors import ReportError

#: At most this many points in one line chart, shared out between its runs.
MAX_POINTS_PER_CHART = 3000
#: Never fewer than this many points per run (when few runs share the budget, each gets more).
MIN_POINTS_PER_RUN = 40
#: At most this many points per run even when a chart shows a single run.
MAX_POINTS_PER_RUN = 600
#: At most this many runs per chart; beyond it the runs with the most records are drawn.
MAX_RUNS_CHARTED = 40
#: The summary's bootstrap interval columns (:data:`tierscope.analysis.summary.SUMMARY_SCHEMA`; absent: shown as "–").
STEADY_LOW, STEADY_HIGH = "steady_ci_low", "steady_ci_high"
SPEEDUP_LOW, SPEEDUP_HIGH = "speedup_ci_low", "speedup_ci_high"
#: The scaling model's band is drawn up to at least this many training tasks (PREMIUM_1 has 20).
MIN_BAND_TASKS = 20


class MissingColumnsError(ReportError, ValueError):
    """A frame handed to the report lacks columns its section needs; the section says "not available"."""

    def __init__(self, what: str, missing: list[str]) -> None:
        super().__init__(f"{what}: missing column(s) {', '.join(missing)}")
        self.missing = missing


def require(frame: pl.DataFrame | None, columns: tuple[str, ...], what: str) -> pl.DataFrame:
    """``frame`` itself; raises :class:`MissingColumnsError` if it is None or lacks one of ``columns``."""
    if frame is None:
        raise MissingColumnsError(what, list(columns))
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise MissingColumnsError(what, missing)
    return frame


def charted_runs(steps: pl.LazyFrame, max_runs: int = MAX_RUNS_CHARTED) -> pl.DataFrame:
    """``run_id`` (String), ``records`` (UInt32): the runs charts draw, most records first, at most ``max_runs``."""
    return (
        steps.group_by("run_id")
        .agg(records=pl.len().cast(pl.UInt32))
        .sort(["records", "run_id"], descending=[True, False])
        .head(max_runs)
        .collect()
    )


def _per_run_budget(runs: int) -> int:
    return max(MIN_POINTS_PER_RUN, min(MAX_POINTS_PER_RUN, MAX_POINTS_PER_CHART // max(runs, 1)))


def _bucketed(rates: pl.LazyFrame, x: str, per_run: int) -> pl.LazyFrame:
    """Rates bucketed into ``per_run`` equal spans of ``x`` per run: first ``x`` and median ``rate`` of each."""
    span = rates.group_by("run_id").agg(lo=pl.col(x).min(), hi=pl.col(x).max())
    width = (pl.col("hi") - pl.col("lo")).cast(pl.Float64)
    bucket = pl.when(width > 0).then(((pl.col(x) - pl.col("lo")) / width * (per_run - 1)).floor()).otherwise(0)
    return (
        rates.join(span, on="run_id")
        .with_columns(bucket=bucket.cast(pl.Int64))
        .group_by("run_id", "bucket")
        .agg(pl.col(x).min(), rate=pl.col("rate").median(), records=pl.len().cast(pl.UInt32))
        .sort("run_id", x)
        .select("run_id", x, "rate", "records")
    )


#: The columns of :func:`charted_intervals`: what the per-run and per-task charts read.
INTERVAL_VIEW = (*TASK, "step", "local_step", "elapsed_s", "interval_s", "timestamp", "local_steps_per_s")


def charted_intervals(intervals: pl.DataFrame, runs: pl.DataFrame) -> pl.DataFrame:
    """The rows of ``runs`` in ``intervals`` (:func:`tierscope.analysis.throughput.collect_intervals` with
    ``extra=INTERVAL_VIEW``, computed once for the summary and every chart).

    Columns: :data:`INTERVAL_VIEW` plus ``d_seconds``, ``rate`` (Float64) and ``warmup``
    (Boolean), ordered by run, task and step.
    """
    return intervals.join(runs.select("run_id"), on="run_id", how="semi").select(
        *INTERVAL_VIEW, "d_seconds", "rate", "warmup"
    )


def steady_rates(intervals: pl.LazyFrame) -> pl.LazyFrame:
    """:func:`charted_intervals`' rows that have a rate, warm-up excluded, with ``seconds`` since the run began.

    ``seconds`` (Float64): from ``timestamp`` where the record has one (seconds since the
    run's first timestamped record), else the task's own clock (``elapsed_s``, or the
    running sum of ``interval_s`` for formats that log only the interval).
    """
    rates = intervals
    since_first = (pl.col("timestamp") - pl.col("timestamp").min().over("run_id")).dt.total_microseconds() / 1e6
    task_clock = pl.coalesce("elapsed_s", pl.col("interval_s").cum_sum().over(TASK))
    return rates.with_columns(seconds=pl.coalesce(since_first, task_clock)).filter(
        ~pl.col("warmup") & pl.col("rate").is_not_null()
    )


def throughput_series(rates: pl.LazyFrame, runs: int) -> tuple[pl.LazyFrame, pl.LazyFrame]:
    """Two bucketed series of interval global steps/s per run (warm-up excluded).

    ``rates``: :func:`steady_rates`' frame; ``runs``: how many runs it holds (sets the
    per-run point budget). Returns (over steps, over time) LazyFrames with columns
    ``run_id`` (String), ``step`` (Int64, the bucket's first global step) or ``seconds``
    (Float64, the bucket's first time), ``rate`` (Float64, median global steps/s in the
    bucket) and ``records`` (UInt32).
    """
    per_run = _per_run_budget(runs)
    timed = rates.filter(pl.col("seconds").is_not_null())
    return _bucketed(rates, "step", per_run), _bucketed(timed, "seconds", per_run)


class ChartSeries:
    """The two :func:`throughput_series` of the charted ``runs`` (:func:`charted_runs`' frame),
    gathered from the intervals a batch of runs at a time (the ``visit`` of
    :func:`tierscope.analysis.batches.interval_figures`): every series is per run, so the batches'
    rows together are the series of all the intervals at once."""

    def __init__(self, runs: pl.DataFrame) -> None:
        self.runs = runs
        self._parts: list[list[pl.DataFrame]] = []

    def add(self, intervals: pl.DataFrame) -> None:
        """Take in one batch's intervals (:func:`tierscope.analysis.throughput.collect_intervals` with
        ``extra=INTERVAL_VIEW``); only the charted runs' bucketed rows are kept."""
        rates = steady_rates(charted_intervals(intervals, self.runs).lazy())
        self._parts.append(pl.collect_all(throughput_series(rates, self.runs.height)))

    def frames(self) -> tuple[pl.DataFrame, pl.DataFrame]:
        """(over steps, over time), with :func:`throughput_series`' columns, sorted by run and x.
        Raises ValueError before the first :meth:`add`."""
        if not self._parts:
            raise ValueError("ChartSeries.frames() before any batch was added")
        over_steps, over_time = zip(*self._parts, strict=True)
        return pl.concat(over_steps).sort("run_id", "step"), pl.concat(over_time).sort("run_id", "seconds")


def task_local_rates(tasks: pl.DataFrame) -> pl.DataFrame:
    """Per-task local rates for the chart, from :func:`tierscope.analysis.tasks.task_throughput`'s frame.

    One row per training task that has a local rate: ``run_id`` (String), ``task`` (String,
    ``role/index``), ``local_steps_per_s`` (Float64), ``intervals`` (UInt32, steady
    intervals behind it), ``straggler`` (Boolean; the analysis' null, "no peers to compare
    with", becomes False).
    """
    tasks = require(tasks, ("run_id", "role", "task_index", "local_steps_per_s", "straggler"), "tasks")
    return (
        tasks.filter(pl.col("local_steps_per_s").is_not_null())
        .sort("run_id", "role", "task_index")
        .select(
            "run_id",
            task=pl.format("{}/{}", "role", "task_index"),
            local_steps_per_s="local_steps_per_s",
            intervals=pl.col("steady_intervals") if "steady_intervals" in tasks.columns else pl.lit(None, pl.UInt32),
            straggler=pl.col("straggler").fill_null(False),
        )
    )


def speedup_frame(summary: pl.DataFrame) -> pl.DataFrame:
    """Speedups with their bootstrap interval, from :func:`tierscope.analysis.summary.summary`'s frame.

    One row per run with a speedup: ``run_id``, ``tier`` (String), ``speedup``, ``low``,
    ``high`` (Float64; ``low``/``high`` null where the summary has no interval).
    """
    frame = require(summary, ("run_id", "tier", "speedup_vs_baseline"), "speedup")
    bound = [
        (pl.col(c) if c in frame.columns else pl.lit(None, pl.Float64)).alias(a)
        for c, a in ((SPEEDUP_LOW, "low"), (SPEEDUP_HIGH, "high"))
    ]
    return (
        frame.filter(pl.col("speedup_vs_baseline").is_not_null())
        .select("run_id", pl.col("tier").fill_null("–"), pl.col("speedup_vs_baseline").alias("speedup"), *bound)
        .sort("speedup", descending=True)
    )


def time_and_cost_to_steps(summary: pl.DataFrame) -> pl.DataFrame:
    """Time and price to the summary's target steps (``SummaryOptions.steps``), per run.

    ``summary``: :func:`tierscope.analysis.summary.summary`'s frame computed with a target. One row per
    run with a time: ``run_id``, ``tier`` (String), ``seconds_to_n`` (Float64: start-up +
    N / steady rate, as :mod:`analysis` defines it), ``ml_unit_hours_to_n`` and ``usd_to_n``
    (Float64, null without a price), ``frontier_usd``, ``frontier_units`` (Boolean, see
    :func:`cheapest_frontier`), fastest first.
    """
    frame = require(summary, ("run_id", "tier", "hours_to_target", "usd_to_target", "ml_units_per_hour"), "time to N")
    out = (
        frame.filter(pl.col("hours_to_target").is_not_null())
        .select(
            "run_id",
            pl.col("tier").fill_null("–"),
            seconds_to_n=pl.col("hours_to_target") * 3600,
            ml_unit_hours_to_n=pl.col("hours_to_target") * pl.col("ml_units_per_hour"),
            usd_to_n=pl.col("usd_to_target"),
        )
        .sort("seconds_to_n", "run_id")
    )
    return out.with_columns(
        frontier_usd=cheapest_frontier(out, "usd_to_n"), frontier_units=cheapest_frontier(out, "ml_unit_hours_to_n")
    )


def cheapest_frontier(frame: pl.DataFrame, cost: str) -> pl.Series:
    """For each row of ``frame`` (sorted by ``seconds_to_n`` ascending): is it the cheapest way to meet its time?

    A row is on the frontier when no run at least as fast costs as little: its ``cost`` is
    strictly below the cost of every faster row. Rows without a cost are never on it. For any
    deadline D the cheapest run finishing within D is the slowest frontier row with time ≤ D.
    """
    faster_min = pl.col(cost).cum_min().forward_fill().shift(1)
    on = pl.col(cost).is_not_null() & (faster_min.is_null() | (pl.col(cost) < faster_min))
    return frame.select(on.alias(f"frontier_{cost}")).to_series()


def scaling_points(points: pl.DataFrame) -> pl.DataFrame:
    """Measured points of the scaling curve, from :func:`tierscope.analysis.scaling.scaling_points`' frame:
    ``run_id``, ``tier`` (String), ``tasks`` (UInt32, training tasks), ``rate`` (Float64, steady
    global steps/s), ``low``, ``high`` (Float64, its bootstrap interval, may be null)."""
    points = require(points, ("run_id", "tier", "tasks", "steady_global_steps_per_s"), "scaling")
    bound = [
        (pl.col(c) if c in points.columns else pl.lit(None, pl.Float64)).alias(a)
        for c, a in ((STEADY_LOW, "low"), (STEADY_HIGH, "high"))
    ]
    return points.select(
        "run_id", pl.col("tier").fill_null("–"), "tasks", pl.col("steady_global_steps_per_s").alias("rate"), *bound
    ).sort("tasks", "run_id")


def scaling_model(fits: list[ScalingFit], max_tasks: int) -> pl.DataFrame | None:
    """The prediction band of the model :func:`tierscope.analysis.scaling.best_fit` picks, for 1 to
    ``max(max_tasks, MIN_BAND_TASKS)`` training tasks: ``tasks`` (UInt32), ``predicted``,
    ``low``, ``high`` (Float64, global steps/s and its 95 % interval), ``model`` (String:
    ``USL`` or ``Amdahl``). None when no model could be fitted."""
    model = best_fit(fits)
    if model is None:
        return None
    band = prediction_band([model], max(max_tasks, MIN_BAND_TASKS))
    return band.filter(pl.col("global_steps_per_s").is_not_null()).select(
        "tasks",
        predicted="global_steps_per_s",
        low="ci_low",
        high="ci_high",
        model=pl.col("model").replace({"usl": "USL", "amdahl": "Amdahl"}),
    )


#: At most this many tasks in the per-task chart (all stragglers are kept).
MAX_TASK_ROWS = 2000


def bounded_task_rates(frame: pl.DataFrame, max_rows: int = MAX_TASK_ROWS) -> pl.DataFrame:
    """:func:`task_local_rates`' frame cut to about ``max_rows`` rows: within a run with more tasks than its
    share, every straggler is kept and the others are thinned evenly along their rate order."""
    if frame.height <= max_rows:
        return frame
    share = max(10, max_rows // max(frame["run_id"].n_unique(), 1))
    stride = (pl.len().over("run_id") / share).ceil().cast(pl.Int64)
    rank = pl.int_range(pl.len()).over("run_id", order_by="local_steps_per_s")
    return frame.filter(pl.col("straggler") | (rank % stride == 0)).sort("run_id", "task")
