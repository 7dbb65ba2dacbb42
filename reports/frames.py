"""The frames the report draws, each small and bounded whatever the dataset's size.

Every function here returns a polars DataFrame whose columns are listed in its docstring;
:mod:`tierscope.reports.charts` draws them. Nothing here grows with the number of step records:
the throughput series arrive bucketed from the analysis (:mod:`tierscope.analysis.series`: at
most :data:`~tierscope.analysis.series.MAX_POINTS_PER_CHART` points, at most
:data:`~tierscope.analysis.series.MAX_RUNS_CHARTED` runs), and the per-task rows are thinned
here (:func:`bounded_task_rates`).

The figures themselves come from :mod:`tierscope.analysis` (bootstrap intervals, per-task local
rates and stragglers, time and price to N steps, the USL/Amdahl fit); the adapters here
only select, rename and bound them into the columns each chart documents.
"""

from __future__ import annotations

import polars as pl

from tierscope.analysis.scaling import ScalingFit, best_fit, prediction_band
from tierscope.analysis.sustained import ONCE_S
from tierscope.reports.errors import ReportError
from tierscope.text import printable

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


def configuration(frame: pl.DataFrame) -> pl.Expr:
    """A run's configuration as the tables and charts name it, as ``tier``: its scale tier, else the machines
    it is described by (the summary's ``hardware``: ``1 x n1-standard-8 (1 x NVIDIA_TESLA_T4)``), else "–"."""
    named = pl.coalesce("tier", "hardware") if "hardware" in frame.columns else pl.col("tier")
    return named.fill_null("–").alias("tier")


def speedup_frame(summary: pl.DataFrame) -> pl.DataFrame:
    """Speedups with their bootstrap interval, from the summary (:data:`tierscope.analysis.summary.SUMMARY_SCHEMA`).

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
        .select("run_id", configuration(frame), pl.col("speedup_vs_baseline").alias("speedup"), *bound)
        .sort("speedup", descending=True)
    )


def time_and_cost_to_steps(summary: pl.DataFrame) -> pl.DataFrame:
    """Time and price to the summary's target steps (``AnalysisOptions.steps``), per run.

    ``summary``: :attr:`tierscope.analysis.Analysis.summary` computed with a target. One row per
    run with a time: ``run_id``, ``tier`` (String), ``seconds_to_n`` (Float64: start-up +
    N / sustained rate, as :mod:`tierscope.analysis.sustained` defines it), ``steady_seconds_to_n`` (the same
    at the steady-state rate; null where the summary has no ``steady_hours_to_target``), ``once_s`` (Float64:
    the start-up both times include, paid once; 0 where none is known), ``ml_unit_hours_to_n``
    and ``usd_to_n`` (Float64, null without a price), ``frontier_usd``, ``frontier_units`` (Boolean, see
    :func:`cheapest_frontier`), fastest first.
    """
    frame = require(summary, ("run_id", "tier", "hours_to_target", "usd_to_target", "ml_units_per_hour"), "time to N")
    steady = pl.col("steady_hours_to_target") if "steady_hours_to_target" in frame.columns else pl.lit(None, pl.Float64)
    out = (
        frame.filter(pl.col("hours_to_target").is_not_null())
        .select(
            "run_id",
            configuration(frame),
            seconds_to_n=pl.col("hours_to_target") * 3600,
            steady_seconds_to_n=steady * 3600,
            once_s=ONCE_S if {"startup_s", "badput_startup_s"} <= set(frame.columns) else pl.lit(0.0),
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
        "run_id", configuration(points), "tasks", pl.col("steady_global_steps_per_s").alias("rate"), *bound
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


#: The parts of a run's lifetime in the goodput bar, bottom to top (productive first), in ML Goodput
#: Measurement's accounting (:mod:`tierscope.analysis.goodput`): warm-up and stalls no event explains
#: are productive (its step-time deviation); ``checkpoint`` and ``eval`` are absent where the log cannot say.
GOODPUT_PARTS = ("productive", "startup", "checkpoint", "eval", "restarts", "wasted", "tail")
#: The summary column of each part (``badput_<part>_s`` unless named here).
_PART_COLUMNS = {"productive": "productive_s"}


def goodput_frame(summary: pl.DataFrame) -> pl.DataFrame:
    """The goodput bar's rows, from the summary (:data:`tierscope.analysis.summary.SUMMARY_SCHEMA`): one row per run
    with a lifetime and part of it (:data:`GOODPUT_PARTS`) that the log shows: ``run_id`` (String), ``part``
    (String, a :data:`GOODPUT_PARTS` name), ``order`` (Int32, its place in the bar), ``seconds``, ``share``
    (Float64, of the lifetime), ``goodput`` (Float64). A null bucket (not observable) has no row."""
    columns = {b: _PART_COLUMNS.get(b, f"badput_{b}_s") for b in GOODPUT_PARTS}
    frame = require(summary, ("run_id", "lifetime_s", "goodput", *columns.values()), "goodput")
    measured = frame.filter(pl.col("lifetime_s") > 0)
    parts = [
        measured.select(
            "run_id",
            "goodput",
            part=pl.lit(name),
            order=pl.lit(i, pl.Int32),
            seconds=pl.col(column),
            share=pl.col(column) / pl.col("lifetime_s"),
        )
        for i, (name, column) in enumerate(columns.items())
    ]
    schema = {"run_id": pl.String, "goodput": pl.Float64, "part": pl.String, "order": pl.Int32,
              "seconds": pl.Float64, "share": pl.Float64}  # fmt: skip
    if not parts:
        return pl.DataFrame(schema=schema)
    return (
        pl.concat(parts)
        .filter(pl.col("seconds").is_not_null())
        .select("run_id", "part", "order", "seconds", "share", "goodput")
        .sort("run_id", "order")
    )


def unobserved_buckets(summary: pl.DataFrame) -> list[tuple[str, list[str]]]:
    """``(run_id, [bucket, ...])`` of each run with a lifetime whose log cannot show some badput buckets."""
    if "goodput_unobserved" not in summary.columns:
        return []
    rows = summary.filter(pl.col("goodput_unobserved").is_not_null() & pl.col("lifetime_s").is_not_null())
    return [(run, text.split(",")) for run, text in rows.select("run_id", "goodput_unobserved").iter_rows()]


def time_to_target_frame(summary: pl.DataFrame) -> pl.DataFrame:
    """The time-to-target bar's rows, from the summary's target columns (:mod:`tierscope.analysis.target`): one
    row per run that reached the target with a time, fastest first: ``run_id``, ``tier`` (String), ``seconds``
    (Float64, since the run's start), ``step`` (Int64, global step), ``value`` (Float64, the metric there),
    ``metric`` (String), ``usd``, ``ml_unit_hours`` (Float64, null without a price)."""
    cols = ("run_id", "tier", "time_to_target_s", "step_at_target", "value_at_target", "target_metric",
            "cost_to_target", "ml_unit_hours_to_target")  # fmt: skip
    frame = require(summary, cols, "time to target")
    return (
        frame.filter(pl.col("time_to_target_s").is_not_null())
        .select(
            "run_id",
            configuration(frame),
            seconds="time_to_target_s",
            step="step_at_target",
            value="value_at_target",
            metric="target_metric",
            usd="cost_to_target",
            ml_unit_hours="ml_unit_hours_to_target",
        )
        .sort("seconds", "run_id")
    )


def not_reached(summary: pl.DataFrame) -> list[tuple[str, str]]:
    """``(run_id, target_status)`` of each run with step records that has no time to the target
    (:data:`tierscope.analysis.target.STATUSES` but ``reached``)."""
    if "target_status" not in summary.columns:
        return []
    rows = summary.filter(
        pl.col("target_status").is_not_null() & (pl.col("target_status") != "reached") & (pl.col("records") > 0)
    )
    return list(rows.select("run_id", "target_status").iter_rows())


def shown_labels(frame: pl.DataFrame) -> pl.DataFrame:
    """``frame`` with every text value as a person may see it (:func:`tierscope.text.printable`: control and
    bidirectional characters escaped), so a run id holding U+202E cannot reorder a chart's labels and legends.
    Every frame a chart draws goes through it once (:func:`tierscope.reports.render.sections`)."""
    texts = [c for c, dtype in frame.schema.items() if dtype == pl.String]
    if not texts:
        return frame
    return frame.with_columns(pl.col(c).map_elements(printable, return_dtype=pl.String) for c in texts)
