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
from typing import TypeVar

import numpy as np
import polars as pl

from tierscope.analysis.engine import IN_MEMORY
from tierscope.analysis.records import TASK, run_spans

FrameT = TypeVar("FrameT", pl.DataFrame, pl.LazyFrame)

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


def by_run(frame: pl.DataFrame) -> list[pl.DataFrame]:
    """``frame``'s rows of each run (``run_id``), one frame per run, in the order the runs come. Where each
    run's rows lie together, as in the intervals (ordered by run, task and step), they are slices: no copy
    and no hashing of the run ids; else the runs are taken apart (:meth:`polars.DataFrame.partition_by`)."""
    spans = run_spans(frame)
    # a run id in two stretches comes twice among the stretches' first ids (a few, not every row, hashed)
    if frame["run_id"].gather([offset for offset, _ in spans]).n_unique() < len(spans):
        return frame.partition_by("run_id", maintain_order=True)
    return [frame.slice(offset, length) for offset, length in spans]


def bucketed(
    rates: pl.DataFrame, x: str, per_run: int, value: str = "rate", first: tuple[str, ...] = ()
) -> pl.DataFrame:
    """``value`` (default the rate) bucketed into ``per_run`` equal spans of ``x`` per run: ``run_id``, the first
    ``x`` and the median ``value`` of each span, its ``records`` (UInt32), and the ``first`` columns (one value a
    run: the run's first), sorted by run and ``x``."""
    return bucketed_runs(by_run(rates) or [rates], x, per_run, value, first)


def bucketed_runs(
    runs: list[pl.DataFrame], x: str, per_run: int, value: str = "rate", first: tuple[str, ...] = ()
) -> pl.DataFrame:
    """:func:`bucketed` of rates already split by run: ``runs``, one frame per run (at least one frame: an
    empty one gives the columns and their types)."""
    return pl.concat([_run_buckets(run, x, per_run, value, first) for run in runs]).sort("run_id", x)


def _run_buckets(rates: pl.DataFrame, x: str, per_run: int, value: str, first: tuple[str, ...]) -> pl.DataFrame:
    """The buckets of one run's rows, in no order (the callers sort them)."""
    bucket = span_index(rates[x], per_run)
    keys = bucket.to_numpy()
    # A run of one task comes in step order, so its buckets rise from row to row: grouped as the stretches
    # they are (polars' group-by of a column flagged sorted), not hashed. The same groups, so the same rows.
    if bucket.null_count() == 0 and bool((keys[1:] >= keys[:-1]).all()):
        bucket = bucket.set_sorted()
    # The run id and the ``first`` columns hold one value in a run's rows: taken from its first row, not
    # gathered per bucket (a string column's first of each bucket was a quarter of the group-by's time).
    held = ("run_id", *first)
    same = [pl.lit(rates.get_column(c)[0] if rates.height else None, rates.schema[c]).alias(c) for c in held]
    return (
        rates.select(x, value)
        .with_columns(bucket=bucket)
        .group_by("bucket")
        .agg(pl.col(x).min(), pl.col(value).median(), pl.len().cast(pl.UInt32).alias("records"))
        .select(same[0], x, value, "records", *same[1:])
    )


def span_index(x: pl.Series, spans: int) -> pl.Series:
    """Which of ``spans`` equal spans from the lowest to the highest of one run's ``x`` each value lies in
    (Int64, 0 .. ``spans - 1``, the highest alone in the last; null where ``x`` is; all 0 when ``x`` spans nothing).

    The span is two scalars of the run (a window over the run ids hashed every row), and the division is
    numpy's, value by value: polars divides a column by a scalar as a product with its reciprocal, which can
    put the highest value a hair below the last span's edge, into the span before."""
    lo, hi = x.min(), x.max()
    width = float(hi - lo) if lo is not None and hi is not None else 0.0  # type: ignore[operator]
    if not width > 0:
        return pl.Series("bucket", [0] * x.len(), dtype=pl.Int64)
    above = (x - lo).cast(pl.Float64).to_numpy()  # a null is NaN
    index = np.floor(above / width * (spans - 1))
    if x.null_count() == 0 and not np.isnan(index).any():
        return pl.Series("bucket", index.astype(np.int64))
    return pl.Series("bucket", index, nan_to_null=True).cast(pl.Int64)


#: The columns of :func:`charted_intervals`: what the per-run and per-task charts read.
INTERVAL_VIEW = (*TASK, "step", "local_step", "elapsed_s", "interval_s", "timestamp", "local_steps_per_s")


def charted_intervals(intervals: pl.DataFrame, runs: pl.DataFrame) -> pl.DataFrame:
    """The rows of ``runs`` in ``intervals`` (:func:`tierscope.analysis.throughput.collect_intervals` with
    ``extra=INTERVAL_VIEW``, computed once for the summary and every chart).

    Columns: :data:`INTERVAL_VIEW` plus ``d_seconds``, ``rate`` (Float64), ``step_timed`` and ``warmup``
    (Boolean), ordered by run, task and step.
    """
    return intervals.join(runs.select("run_id"), on="run_id", how="semi").select(
        *INTERVAL_VIEW, "d_seconds", "rate", "step_timed", "warmup"
    )


#: The seconds a record gives since its task's previous one on its own, the task clock's steps where a
#: record has neither a timestamp nor ``elapsed_s``: its ``interval_s``, else the interval's step time
#: (``d_seconds`` where ``step_timed``: :func:`tierscope.analysis.throughput.step_time_seconds`, the
#: intervals' own last resort, so the chart's clock and the rates agree).
LOGGED_SECONDS = pl.coalesce("interval_s", pl.when(pl.col("step_timed")).then(pl.col("d_seconds")))


def steady_rates(intervals: pl.DataFrame, interval_clock: bool = True) -> pl.DataFrame:
    """:func:`charted_intervals`' rows that have a rate, warm-up excluded, with ``seconds`` since the run began.

    ``seconds`` (Float64): from ``timestamp`` where the record has one (seconds since the
    run's first timestamped record), else the task's own clock (``elapsed_s``, or the
    running sum of :data:`LOGGED_SECONDS` for formats that log only the interval or a step time:
    ``interval_s``, ``sec/step``). ``interval_clock=False``
    leaves the running sum out (a window over every task): for intervals where no record lacks
    both a timestamp and ``elapsed_s`` it changes nothing (:func:`needs_interval_clock`).
    """
    parts = [_run_rates(run, interval_clock) for run in by_run(intervals)]
    return pl.concat(parts) if parts else _run_rates(intervals, interval_clock)


def _run_rates(rates: FrameT, interval_clock: bool) -> FrameT:
    # One run's rows: its first timestamp is a scalar, where a window over the run ids hashed every row.
    since_first = (pl.col("timestamp") - pl.col("timestamp").min()).dt.total_microseconds() / 1e6
    task_clock = pl.coalesce("elapsed_s", LOGGED_SECONDS.cum_sum().over(TASK)) if interval_clock else "elapsed_s"
    return rates.with_columns(seconds=pl.coalesce(since_first, task_clock)).filter(
        ~pl.col("warmup") & pl.col("rate").is_not_null()
    )


def needs_interval_clock(intervals: pl.DataFrame) -> bool:
    """Whether a record of ``intervals`` has neither ``timestamp`` nor ``elapsed_s``: only then does
    :func:`steady_rates` need the running sum of :data:`LOGGED_SECONDS`."""
    return bool(intervals.select((pl.col("timestamp").is_null() & pl.col("elapsed_s").is_null()).any()).item())


def throughput_series(rates: pl.DataFrame, runs: int) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Two bucketed series of interval global steps/s per run (warm-up excluded).

    ``rates``: :func:`steady_rates`' frame; ``runs``: how many runs it holds (sets the
    per-run point budget). Returns (over steps, over time) with columns
    ``run_id`` (String), ``step`` (Int64, the bucket's first global step) or ``seconds``
    (Float64, the bucket's first time), ``rate`` (Float64, median global steps/s in the
    bucket) and ``records`` (UInt32), sorted by run and x.
    """
    per_run = per_run_budget(runs)
    over_steps, over_time = zip(*[_run_series(run, per_run) for run in by_run(rates) or [rates]], strict=True)
    return pl.concat(over_steps).sort("run_id", "step"), pl.concat(over_time).sort("run_id", "seconds")


def _run_series(rates: pl.DataFrame, per_run: int) -> tuple[pl.DataFrame, pl.DataFrame]:
    """:func:`throughput_series` of one run's rates (or of none: the columns and their types)."""
    timed = rates.filter(pl.col("seconds").is_not_null())
    return _run_buckets(rates, "step", per_run, "rate", ()), _run_buckets(timed, "seconds", per_run, "rate", ())


#: What :func:`steady_rates` reads of the intervals, and what more where the interval clock is needed.
_RATE_COLUMNS = ("run_id", "step", "timestamp", "elapsed_s", "rate", "warmup")
_CLOCK_COLUMNS = ("role", "task_index", "interval_s", "d_seconds", "step_timed")


class ChartSeries:
    """The two :func:`throughput_series` of the charted ``runs`` (:func:`charted_runs`' frame),
    gathered from the intervals a batch of runs at a time (the ``visit`` of
    :func:`tierscope.analysis.batches.interval_figures`): every series is per run, so the batches'
    rows together are the series of all the intervals at once."""

    def __init__(self, runs: pl.DataFrame) -> None:
        self.runs = runs
        self._charted = set(runs["run_id"].drop_nulls())  # a null run id is never charted (a filter drops it)
        self._parts: list[tuple[pl.DataFrame, pl.DataFrame]] = []

    def add(self, intervals: pl.DataFrame) -> None:
        """Take in one batch's intervals (:func:`tierscope.analysis.throughput.collect_intervals` with
        ``extra=INTERVAL_VIEW``); only the charted runs' bucketed rows are kept."""
        clock = needs_interval_clock(intervals)
        view = intervals.select(*_RATE_COLUMNS, *(_CLOCK_COLUMNS if clock else ()))
        charted = [run for run in by_run(view) if run["run_id"][0] in self._charted] or [view.head(0)]
        per_run = per_run_budget(self.runs.height)
        # steady_rates and throughput_series run by run: the rows are split by run once, not at each step
        series = [
            _run_series(
                _run_rates(run.lazy(), clock).select("run_id", "step", "seconds", "rate").collect(engine=IN_MEMORY),
                per_run,
            )
            for run in charted  # lazily: only the four columns are filtered
        ]
        over_steps, over_time = zip(*series, strict=True)
        self._parts.append((pl.concat(over_steps), pl.concat(over_time)))

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
