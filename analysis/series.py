"""The throughput series the report charts, bucketed a batch of runs at a time.

A chart of 10 million interval rates would be tens of MB of JSON and draw nothing a reader
can see; so each run's steady interval rates are bucketed into equal spans of global step
and of time (the median rate of each span), at most :data:`MAX_POINTS_PER_CHART` points per
chart over at most :data:`MAX_RUNS_CHARTED` runs (the runs with the most records). Every
bucket lies within one run, so :class:`ChartSeries` gathers the buckets from the intervals
of each batch of runs (:mod:`tierscope.analysis.batches`) while the summary's figures are
computed from the same intervals: no second pass, no interval frame of all runs at once.
:func:`tierscope.analysis.analyze` computes them when asked (``charts=True``).
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from tierscope.analysis.records import TASK

#: At most this many points in one line chart, shared out between its runs.
MAX_POINTS_PER_CHART = 3000
#: Never fewer than this many points per run (when few runs share the budget, each gets more).
MIN_POINTS_PER_RUN = 40
#: At most this many points per run even when a chart shows a single run.
MAX_POINTS_PER_RUN = 600
#: At most this many runs per chart; beyond it the runs with the most records are drawn.
MAX_RUNS_CHARTED = 40


def charted_runs(counts: pl.DataFrame, max_runs: int = MAX_RUNS_CHARTED) -> pl.DataFrame:
    """``run_id`` (String), ``records`` (UInt32): the runs charts draw, most records first, at most ``max_runs``.

    ``counts``: step records per run (:func:`tierscope.analysis.batches.record_counts`' columns)."""
    return (
        counts.select("run_id", pl.col("records").cast(pl.UInt32))
        .sort(["records", "run_id"], descending=[True, False])
        .head(max_runs)
    )


def per_run_budget(runs: int) -> int:
    """Points per run in a chart of ``runs`` runs (:data:`MIN_POINTS_PER_RUN` .. :data:`MAX_POINTS_PER_RUN`)."""
    return max(MIN_POINTS_PER_RUN, min(MAX_POINTS_PER_RUN, MAX_POINTS_PER_CHART // max(runs, 1)))


def bucketed(rates: pl.LazyFrame, x: str, per_run: int, value: str = "rate") -> pl.LazyFrame:
    """``value`` (default the rate) bucketed into ``per_run`` equal spans of ``x`` per run: ``run_id``, the first
    ``x`` and the median ``value`` of each span, and its ``records`` (UInt32)."""
    lo, hi = pl.col(x).min().over("run_id"), pl.col(x).max().over("run_id")  # a window: cheaper than a join
    width = (hi - lo).cast(pl.Float64)
    bucket = pl.when(width > 0).then(((pl.col(x) - lo) / width * (per_run - 1)).floor()).otherwise(0)
    return (
        rates.with_columns(bucket=bucket.cast(pl.Int64))
        .group_by("run_id", "bucket")
        .agg(pl.col(x).min(), pl.col(value).median(), records=pl.len().cast(pl.UInt32))
        .sort("run_id", x)
        .select("run_id", x, value, "records")
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


def steady_rates(intervals: pl.LazyFrame, interval_clock: bool = True) -> pl.LazyFrame:
    """:func:`charted_intervals`' rows that have a rate, warm-up excluded, with ``seconds`` since the run began.

    ``seconds`` (Float64): from ``timestamp`` where the record has one (seconds since the
    run's first timestamped record), else the task's own clock (``elapsed_s``, or the
    running sum of ``interval_s`` for formats that log only the interval). ``interval_clock=False``
    leaves the running sum out (a window over every task): for intervals where no record lacks
    both a timestamp and ``elapsed_s`` it changes nothing (:func:`needs_interval_clock`).
    """
    rates = intervals
    since_first = (pl.col("timestamp") - pl.col("timestamp").min().over("run_id")).dt.total_microseconds() / 1e6
    task_clock = pl.coalesce("elapsed_s", pl.col("interval_s").cum_sum().over(TASK)) if interval_clock else "elapsed_s"
    return rates.with_columns(seconds=pl.coalesce(since_first, task_clock)).filter(
        ~pl.col("warmup") & pl.col("rate").is_not_null()
    )


def needs_interval_clock(intervals: pl.DataFrame) -> bool:
    """Whether a record of ``intervals`` has neither ``timestamp`` nor ``elapsed_s``: only then does
    :func:`steady_rates` need the running sum of ``interval_s``."""
    return bool(intervals.select((pl.col("timestamp").is_null() & pl.col("elapsed_s").is_null()).any()).item())


def throughput_series(rates: pl.LazyFrame, runs: int) -> tuple[pl.LazyFrame, pl.LazyFrame]:
    """Two bucketed series of interval global steps/s per run (warm-up excluded).

    ``rates``: :func:`steady_rates`' frame; ``runs``: how many runs it holds (sets the
    per-run point budget). Returns (over steps, over time) LazyFrames with columns
    ``run_id`` (String), ``step`` (Int64, the bucket's first global step) or ``seconds``
    (Float64, the bucket's first time), ``rate`` (Float64, median global steps/s in the
    bucket) and ``records`` (UInt32).
    """
    per_run = per_run_budget(runs)
    timed = rates.filter(pl.col("seconds").is_not_null())
    return bucketed(rates, "step", per_run), bucketed(timed, "seconds", per_run)


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
        charted = intervals.lazy().filter(pl.col("run_id").is_in(self.runs["run_id"].implode()))
        clock = needs_interval_clock(intervals)
        # the rates once, then both series from them (a plan of the two recomputed them)
        rates = steady_rates(charted, clock).select("run_id", "step", "seconds", "rate").collect()
        self._parts.append(pl.collect_all(throughput_series(rates.lazy(), self.runs.height)))

    def frames(self) -> tuple[pl.DataFrame, pl.DataFrame]:
        """(over steps, over time), with :func:`throughput_series`' columns, sorted by run and x.
        Raises ValueError before the first :meth:`add`."""
        if not self._parts:
            raise ValueError("ChartSeries.frames() before any batch was added")
        over_steps, over_time = zip(*self._parts, strict=True)
        return pl.concat(over_steps).sort("run_id", "step"), pl.concat(over_time).sort("run_id", "seconds")


@dataclass
class ThroughputSeries:
    """The charted runs and their bucketed series: ``runs`` (:func:`charted_runs`' frame),
    ``over_steps`` and ``over_time`` (:func:`throughput_series`' columns, sorted by run and x)."""

    runs: pl.DataFrame
    over_steps: pl.DataFrame
    over_time: pl.DataFrame
