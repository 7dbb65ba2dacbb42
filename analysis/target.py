"""Time to a target loss or accuracy: per run, the first global step and wall time at which the model got there.

A target is a training loss at or below ``X`` (``--target-loss``) or an accuracy at or above ``Y``
(``--target-accuracy``: the run's ``eval_accuracy`` where it logs any, held-out data being what a
quality target means; else its training ``accuracy``).

- **Records**: the run's records of that metric: training ``loss``/``accuracy`` from its training
  tasks (master/chief, workers; copies of one record merged, :mod:`tierscope.analysis.records`),
  ``eval_accuracy`` from any task (evaluators included), in the order of their time, then global step.
- **Reached**: a training loss or accuracy is one batch's, and noisy: a single lucky batch is not the
  model at the target. The target is reached at the first record from which the metric stays at the
  target for :data:`HOLD_RECORDS` consecutive records (that record's step and time, not the last of
  them: no lag is added). An evaluation is over held-out data: one at the target is enough
  (:data:`HOLD_EVAL_RECORDS`; MLPerf ends a run at its first evaluation at the target). Records at the
  target that never make such a run (a lucky batch; the last two records of a log) are *not held*, not
  reached. A NaN loss never meets a target.
- **Time**: seconds since the run's start on the clock of its lead task, the rule goodput uses
  (:mod:`tierscope.analysis.clock`). A record with a timestamp on a ``timestamp`` clock is at its
  timestamp; the lead's own records on an ``elapsed`` clock at their ``elapsed_s``; any other record
  (another task's on the ``elapsed`` clock: its ``elapsed_s`` counts from its own start; an evaluation
  block with no clock) at the time the lead reached its global step: interpolated linearly between the
  lead's records (the first time it reached each step), beyond them at the run's steady-state rate
  from the nearest one. The start is 0 s where the clock's origin is known, else the lead's first
  record less its steps at the steady rate (goodput's lifetime starts there too). No clock: a step but
  no time.
- **Cost**: the time x the run's USD per hour (:mod:`tierscope.analysis.cost`), and x its ML units per
  hour (``ml_unit_hours_to_target``: the 2016 beta quoted ML units only).

Every run of a target analysis gets a ``target_status`` (:data:`STATUSES`) and, unless reached with a
time, a ``target_reason`` saying why its time is null.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Literal

import numpy as np
import polars as pl

from tierscope.analysis.bootstrap import SteadyRates, steady_rates
from tierscope.analysis.clock import LeadClock, lead_clock
from tierscope.analysis.engine import IN_MEMORY
from tierscope.analysis.errors import AnalysisError
from tierscope.analysis.records import merge_duplicates
from tierscope.analysis.series import MAX_RUNS_CHARTED, bucketed_runs, by_run, per_run_budget
from tierscope.analysis.throughput import STEADY_WEIGHT, lead_rows
from tierscope.contract import EVAL_END
from tierscope.dataset.schema import STEP_SCHEMA, conform

#: A training loss or accuracy must hold the target this many records in a row.
HOLD_RECORDS = 3
#: An evaluation's metric must hold it this many records in a row.
HOLD_EVAL_RECORDS = 1
#: ``target_status``: reached (with a time), reached without a time (no clock), held only by the last
#: records of the log, never at the target, or the metric not logged at all.
STATUSES = ("reached", "no_time", "not_held", "not_reached", "not_logged")
#: The metric columns of a step record a target reads (the intervals' ``extra`` columns).
METRICS = ("loss", "accuracy")
EVAL_METRICS = ("eval_loss", "eval_accuracy")

#: Columns of :func:`time_to_target` (and the summary's, :data:`tierscope.analysis.summary.SUMMARY_SCHEMA`).
TARGET_SCHEMA: dict[str, pl.DataType] = {
    "run_id": pl.String(),
    "target_metric": pl.String(),  # loss / accuracy / eval_accuracy: the records the target was read on
    "target_value": pl.Float64(),  # X of --target-loss, Y of --target-accuracy
    "target_status": pl.String(),  # one of STATUSES
    "step_at_target": pl.Int64(),  # the global step of the first record from which the target holds
    "value_at_target": pl.Float64(),  # the metric there
    "time_to_target_s": pl.Float64(),  # seconds since the run's start on the lead task's clock
    "cost_to_target": pl.Float64(),  # USD: time_to_target_s / 3600 x usd_per_hour
    "ml_unit_hours_to_target": pl.Float64(),  # time_to_target_s / 3600 x ml_units_per_hour
    "target_reason": pl.String(),  # why time_to_target_s is null (null: reached with a time)
}
#: Columns of a metric series (:class:`MetricSeries`): a run's records of the metric on its clock.
SERIES_SCHEMA: dict[str, pl.DataType] = {
    "run_id": pl.String(),
    "metric": pl.String(),
    "seconds": pl.Float64(),  # since the run's start; null: no clock
    "step": pl.Int64(),
    "value": pl.Float64(),
}


class TargetError(AnalysisError, ValueError):
    """A target that cannot be asked: both a loss and an accuracy, or a value that is not a finite number."""


@dataclass(frozen=True)
class Target:
    """``kind``: ``loss`` (reached at or below ``value``) or ``accuracy`` (at or above ``value``)."""

    kind: Literal["loss", "accuracy"]
    value: float

    def meets(self, values: np.ndarray) -> np.ndarray:
        """Which of ``values`` are at the target (NaN never is)."""
        with np.errstate(invalid="ignore"):
            return values <= self.value if self.kind == "loss" else values >= self.value


def target_of(loss: float | None, accuracy: float | None) -> Target | None:
    """The target of ``--target-loss`` / ``--target-accuracy`` (None: neither). Raises :class:`TargetError`
    for both at once or a value that is not finite."""
    if loss is not None and accuracy is not None:
        raise TargetError("give one of --target-loss and --target-accuracy, not both")
    kind, value = ("loss", loss) if loss is not None else ("accuracy", accuracy)
    if value is None:
        return None
    if not np.isfinite(value):
        raise TargetError(f"--target-{kind} {value} is not a finite number")
    return Target(kind, float(value))  # type: ignore[arg-type]


def _lead_steps(lead: pl.DataFrame, clock: LeadClock) -> tuple[np.ndarray, np.ndarray]:
    """The lead's (global step, seconds) at the first time it reached each step: steps strictly rising."""
    steps = lead["step"].cast(pl.Float64).to_numpy()  # a null is NaN
    seconds = clock.seconds if clock.seconds is not None else np.full(len(steps), np.nan)
    ok = np.isfinite(steps) & np.isfinite(seconds)
    if not ok.all():  # copies only where some step or time is missing: a lead may have 200,000 records
        steps, seconds = steps[ok], seconds[ok]
    rising = steps > np.maximum.accumulate(np.concatenate([[-np.inf], steps[:-1]])) if len(steps) else steps > 0
    return (steps, seconds) if rising.all() else (steps[rising], seconds[rising])


def at_steps(steps: np.ndarray, lead_steps: np.ndarray, lead_seconds: np.ndarray, rate: float | None) -> np.ndarray:
    """The lead's time at each global step of ``steps``: linear between its records, beyond them at
    ``rate`` (global steps/s) from the nearest one; NaN without lead records, or beyond them without a rate."""
    if len(lead_steps) == 0:
        return np.full(len(steps), np.nan)
    out = np.interp(steps, lead_steps, lead_seconds)
    per_step = 1.0 / rate if rate else np.nan
    below, above = steps < lead_steps[0], steps > lead_steps[-1]
    out[below] = lead_seconds[0] - (lead_steps[0] - steps[below]) * per_step
    out[above] = lead_seconds[-1] + (steps[above] - lead_steps[-1]) * per_step
    out[~np.isfinite(steps)] = np.nan
    return out


def place(records: pl.DataFrame, lead: pl.DataFrame, clock: LeadClock, rate: Callable[[], float | None]) -> np.ndarray:
    """Seconds since the run's start of each of one run's ``records`` (``role``, ``task_index``, ``step``,
    ``timestamp``, ``elapsed_s``; see the module doc); NaN where unknown. ``lead``: the run's lead records
    in log order (:func:`tierscope.analysis.clock.lead_clock`'s frame), ``rate``: its steady global steps/s
    (None: none), asked only where a record lies beyond the lead's steps or the clock's origin is unknown
    (a median of every steady interval of the run: most runs never need it)."""
    n = records.height
    if clock.name is None or n == 0:
        return np.full(n, np.nan)
    if clock.name == "timestamp":
        t = clock.since(records["timestamp"])
    else:
        role, index = lead["role"][0], lead["task_index"][0]
        is_lead = (records["role"].eq_missing(role) & records["task_index"].eq_missing(index)).to_numpy()
        t = np.where(is_lead, records["elapsed_s"].cast(pl.Float64).to_numpy(), np.nan)
    lead_steps, lead_seconds = _lead_steps(lead, clock)
    missing = np.isnan(t)
    if missing.any():
        steps = records["step"].cast(pl.Float64).to_numpy()[missing]
        beyond = len(lead_steps) > 0 and bool(((steps < lead_steps[0]) | (steps > lead_steps[-1])).any())
        t[missing] = at_steps(steps, lead_steps, lead_seconds, rate() if beyond else None)  # the rate: only beyond
    if clock.origin_known:
        return t
    first = lead_steps[0] if len(lead_steps) else 0.0
    steady = rate()
    begin = clock.seconds[0] - (first / steady if steady else 0.0)  # the seen span starts at the first step
    return t - begin


def reached_at(values: np.ndarray, target: Target, hold: int) -> tuple[int | None, str, int]:
    """(index of the first of ``hold`` consecutive values at the target, status, the longest such run).
    Status ``reached``, ``not_held`` (some values are at the target, never ``hold`` in a row) or ``not_reached``."""
    meets = target.meets(values)
    # the runs of consecutive values at the target: [starts, ends)
    edges = np.diff(np.concatenate([[0], meets.astype(np.int8), [0]]))
    starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    lengths = ends - starts
    longest = int(lengths.max()) if lengths.size else 0
    held = np.flatnonzero(lengths >= hold)
    if held.size:
        return int(starts[held[0]]), "reached", longest
    return None, ("not_held" if longest else "not_reached"), longest


def _reason(
    status: str, metric: str, target: Target, values: np.ndarray, step: int | None, hold: int, most: int
) -> str:
    op = "at or below" if target.kind == "loss" else "at or above"
    if status == "not_reached":
        finite = values[np.isfinite(values)]
        best = (finite.min() if target.kind == "loss" else finite.max()) if finite.size else None
        said = f" (best {best:.4g})" if best is not None else ""
        return f"{metric} never {op} {target.value:g}{said}"
    if status == "not_held":
        count = int(target.meets(values).sum())
        ends = " (the log ends)" if target.meets(values[-1:]).all() else ""
        return (
            f"{metric} {op} {target.value:g} in {count} of {len(values)} records, "
            f"never {hold} in a row (at most {most}){ends}"
        )
    return f"{metric} {op} {target.value:g} from global step {step}, but the log has no clock to time it"


def metric_records(
    intervals: pl.DataFrame,
    evals: pl.DataFrame,
    started: dict[str, object],
    metric_of: str,
    *,
    ordered: bool = True,
    only: set[str] | None = None,
) -> pl.DataFrame:
    """:data:`SERIES_SCHEMA` rows of every run in ``intervals`` (``only``: of these runs alone) for the metric
    ``metric_of`` (``loss``, ``accuracy``: the accuracy target's choice, ``eval_accuracy`` where the run logs it):
    placed on each run's clock (:func:`place`), sorted by run, time (nulls last), step (``ordered=False``: in no
    order, for a caller that only buckets them).

    ``intervals``: one batch's :func:`tierscope.analysis.throughput.collect_intervals` with ``metric_of`` (one of
    :data:`METRICS`) as an extra column; ``evals``: the batch's records with an eval metric (:data:`STEP_SCHEMA`
    rows, any role); ``started``: ``{run_id: first started event time}``."""
    parts = metric_parts(_by_run_id(intervals), intervals, evals, started, metric_of, only)
    return _records(parts, ordered)


def _records(parts: list[pl.DataFrame], ordered: bool) -> pl.DataFrame:
    if not parts:
        return pl.DataFrame(schema=SERIES_SCHEMA)
    records = pl.concat(parts)
    return records.sort("run_id", "seconds", "step", nulls_last=True) if ordered else records


def metric_parts(
    runs: dict[str | None, pl.DataFrame],
    intervals: pl.DataFrame,
    evals: pl.DataFrame,
    started: dict[str, object],
    metric_of: str,
    only: set[str] | None = None,
    samples: Mapping[str, SteadyRates] | None = None,
) -> list[pl.DataFrame]:
    """:func:`metric_records`' rows, one frame per run (in the intervals' order; a run without a record of its
    metric has none), each in no order. ``runs``: ``intervals`` split by run (``{run_id: its rows}``);
    ``samples``: the runs' steady samples where the caller has them (:attr:`IntervalFigures.samples
    <tierscope.analysis.batches.IntervalFigures.samples>`), whose steady rate is taken where it is the one
    :func:`_steady_rate` would find (:func:`_steady_rate`'s ``sample``)."""
    leads = lead_rows(intervals)  # each run's lead task's rows, sliced: no join of every row
    evaluated = merge_duplicates(evals.lazy()).collect(engine=IN_MEMORY) if evals.height else evals
    placed = ["run_id", "role", "task_index", "step", "timestamp", "elapsed_s"]
    # each run's rows are a slice of the intervals (they lie together), filtered there: a batch may hold
    # thousands of small runs, and a split by hashing run ids cost more than the rest
    evaluations = _by_run_id(evaluated.select(*placed, "eval_accuracy").filter(pl.col("eval_accuracy").is_not_null()))
    parts = []
    for run_id, offset, length in leads.select("run_id", "offset", "length").iter_rows():
        if only is not None and run_id not in only:
            continue
        run = runs[run_id]
        lead_part = intervals.slice(offset, length)
        clock = lead_clock(lead_part, started.get(run_id), None)
        column, source = "loss", run.select(*placed, metric_of).filter(pl.col(metric_of).is_not_null())
        if metric_of == "accuracy":
            evaluation = evaluations.get(run_id)
            column, source = ("eval_accuracy", evaluation) if evaluation is not None else ("accuracy", source)
        if source.height == 0:
            continue
        known = samples.get(run_id) if samples is not None and run_id is not None else None
        rate = functools.partial(_steady_rate, run, known)  # the run's steady rate, if place needs it
        seconds = place(source, lead_part, clock, rate)  # source: its metric's nulls filtered out above
        part = source.select(
            "run_id",
            metric=pl.lit(column),
            seconds=pl.Series(seconds, dtype=pl.Float64).fill_nan(None),
            step="step",
            value=pl.col(column).cast(pl.Float64),
        )
        parts.append(part.select([pl.col(c).cast(t) for c, t in SERIES_SCHEMA.items()]))
    return parts


def on_task_clock(part: pl.DataFrame, intervals: pl.DataFrame, leads: pl.DataFrame) -> pl.DataFrame:
    """``part`` (one run's :func:`metric_parts` rows, no clock) with ``seconds`` on its lead task's own clock: the
    lead's intervals' seconds added up in log order (:data:`tierscope.analysis.series.LOGGED_SECONDS`, 0 s at
    its first record), each record at the time the lead reached its global step (linear between the lead's
    records); null where the lead's intervals give no seconds. ``leads``: :func:`lead_rows` of ``intervals``."""
    from tierscope.analysis.series import LOGGED_SECONDS

    if not {"interval_s", "d_seconds", "step_timed"} <= set(intervals.columns):
        return part
    at = leads.filter(pl.col("run_id").eq_missing(part["run_id"][0]))
    if at.height == 0:
        return part
    lead = intervals.slice(at["offset"][0], at["length"][0]).select(
        pl.col("step").cast(pl.Float64), seconds=LOGGED_SECONDS.fill_null(0.0).cum_sum()
    )
    if lead.height < 2 or lead["seconds"][-1] <= 0:
        return part
    steps, seconds = lead["step"].to_numpy(), lead["seconds"].to_numpy()
    rising = np.concatenate([[True], np.diff(steps) > 0])
    placed = np.interp(part["step"].cast(pl.Float64).to_numpy(), steps[rising], seconds[rising])
    return part.with_columns(seconds=pl.Series(placed, dtype=pl.Float64))


def _by_run_id(frame: pl.DataFrame) -> dict[str | None, pl.DataFrame]:
    return {run["run_id"][0]: run for run in by_run(frame)}


#: The intervals :func:`_steady_rate` reads: out of warm-up, with a rate.
_STEADY = ~pl.col("warmup") & pl.col("rate").is_not_null()


def _steady_rate(run: pl.DataFrame, known: SteadyRates | None = None) -> float | None:
    """One run's steady rate (global steps/s; None: none) from its intervals, as the summary's
    (:func:`tierscope.analysis.bootstrap.steady_rate` of its steady intervals' rates and steps).

    ``known``: the run's steady sample as the summary took it from the same intervals
    (:func:`tierscope.analysis.throughput.steady_samples`), whose rate (already read for the summary) is
    the answer where it holds as many intervals as are read here: it holds these intervals less those
    that hold a pause (and, in a run wholly in warm-up, where none is read here, its first ones), in the
    same order, so the same count means the same rates and steps."""
    if known is not None:
        count = run.select(_STEADY.sum()).item()
        if count == 0:
            return None
        if known.size == count:
            return known.steady()
    sample = run.lazy().filter(_STEADY).select("rate", STEADY_WEIGHT).collect(engine=IN_MEMORY)
    if not sample.height:
        return None
    return steady_rates(sample["rate"].to_numpy(), sample["weight"].to_numpy()).steady()


def time_to_target(records: pl.DataFrame, target: Target) -> pl.DataFrame:
    """:data:`TARGET_SCHEMA` (costs null: :func:`with_time_to_target` prices them), one row per run of
    ``records`` (:func:`metric_records`' frame), sorted by run id."""
    rows = []
    for (run_id,), part in records.group_by("run_id", maintain_order=True):
        metric = part["metric"][0]
        hold = HOLD_EVAL_RECORDS if metric.startswith("eval_") else HOLD_RECORDS
        values = part["value"].to_numpy()
        index, status, most = reached_at(values, target, hold)
        row: dict[str, object] = {"run_id": run_id, "target_metric": metric, "target_value": target.value}
        if index is not None:
            row["step_at_target"] = part["step"][index]
            row["value_at_target"] = float(values[index])
            row["time_to_target_s"] = part["seconds"][index]
            if row["time_to_target_s"] is None:
                status = "no_time"
        row["target_status"] = status
        if status != "reached":
            row["target_reason"] = _reason(status, metric, target, values, row.get("step_at_target"), hold, most)
        rows.append(row)
    return pl.DataFrame(rows, schema=TARGET_SCHEMA).sort("run_id")


def with_time_to_target(summary: pl.DataFrame, reached: pl.DataFrame | None, target: Target | None) -> pl.DataFrame:
    """``summary`` (:data:`tierscope.analysis.summary.SUMMARY_SCHEMA`, ``usd_per_hour`` and ``ml_units_per_hour``
    filled) with its :data:`TARGET_SCHEMA` columns from ``reached`` (:func:`time_to_target`) and priced; a run
    with no row there (no step record of a training task) is ``not_logged``. No target: the columns stay null."""
    if target is None or reached is None:
        return summary
    names = [c for c in TARGET_SCHEMA if c != "run_id"]
    hours = pl.col("time_to_target_s") / 3600
    what = "eval_accuracy or accuracy" if target.kind == "accuracy" else "loss"
    joined = summary.drop(names).join(reached, on="run_id", how="left")
    return joined.with_columns(
        target_value=pl.lit(target.value, pl.Float64),
        target_status=pl.col("target_status").fill_null(pl.lit("not_logged")),
        target_reason=pl.when(pl.col("target_status").is_null())
        .then(pl.lit(f"no step record of a training task logs {what}"))
        .otherwise(pl.col("target_reason")),
        cost_to_target=hours * pl.col("usd_per_hour"),
        ml_unit_hours_to_target=hours * pl.col("ml_units_per_hour"),
    ).select(summary.columns)


@dataclass
class MetricSeries:
    """The metric the report charts over wall time: ``metric`` (``loss`` / ``accuracy``: the target's kind,
    else loss), ``target`` (None: none asked), ``points`` (``run_id``, ``seconds``, ``value``, ``records``, ``metric``:
    each run's records bucketed into at most :func:`tierscope.analysis.series.per_run_budget` spans of time, the
    median value of each, and ``clock``: ``run`` (the lead task's, see the module doc) or ``task`` (a log with
    neither timestamps nor elapsed times: the lead task's own clock, its intervals' seconds added up, as the
    throughput chart times them, :data:`tierscope.analysis.series.LOGGED_SECONDS`); runs with neither left out)."""

    metric: str
    target: Target | None
    points: pl.DataFrame


def event_evaluations(events: pl.DataFrame) -> pl.DataFrame:
    """Evaluations that a log wrote as ``eval_end`` events (tierscope's trainer puts the held-out
    ``eval_loss`` and ``eval_accuracy`` in the event's JSON ``detail``), as :data:`STEP_SCHEMA` rows
    (``run_id``, ``role``, ``task_index``, ``step``, ``timestamp``, the two metrics; the rest null).
    ``events``: the events table with ``detail``, ``role``, ``task_index``, ``step``, ``timestamp``.
    A detail that is not JSON, or holds no number there, gives a null metric (the row is dropped)."""
    if "detail" not in events.columns:
        return conform(pl.DataFrame(), STEP_SCHEMA)
    ends = events.filter((pl.col("event") == EVAL_END) & pl.col("step").is_not_null() & pl.col("detail").is_not_null())
    metrics = {
        name: pl.col("detail").str.json_path_match(f"$.{name}").cast(pl.Float64, strict=False).alias(name)
        for name in EVAL_METRICS
    }
    found = ends.with_columns(**metrics).filter(pl.any_horizontal(pl.col(n).is_not_null() for n in EVAL_METRICS))
    return conform(found, STEP_SCHEMA)


class TargetPass:
    """What a target and its chart need, gathered a batch of runs at a time (the ``visit`` of
    :func:`tierscope.analysis.batches.interval_figures`): each batch's metric records placed on their runs'
    clocks, reduced to the target rows and, for the charted runs, the bucketed series, then dropped.

    ``steps``: the analysis' step scan (each batch reads its eval records from it, its runs' partitions
    only); ``started``: ``{run_id: first started event}``; ``charted``: the run ids to chart (None: no chart);
    ``event_evals``: evaluations logged as events (:func:`event_evaluations`), taken with the records';
    ``samples``: the runs' steady samples, filled in as each batch's figures are done and before its
    :meth:`add` (``samples`` of :func:`tierscope.analysis.batches.interval_figures`; None: each steady rate
    a record's time needs is read from the intervals)."""

    def __init__(
        self,
        steps: pl.LazyFrame,
        target: Target | None,
        started: dict[str, object],
        charted: list[str] | None,
        event_evals: pl.DataFrame | None = None,
        samples: Mapping[str, SteadyRates] | None = None,
    ) -> None:
        self.steps, self.target, self.started = steps, target, started
        self.event_evals = conform(pl.DataFrame(), STEP_SCHEMA) if event_evals is None else event_evals
        self.charted = charted
        self.samples = samples
        self._charted = {r for r in charted if r is not None} if charted is not None else set()
        # Without a target only the charted runs are read (a null run id is never charted: a filter drops it).
        self._only = {r for r in charted if r is not None} if target is None and charted is not None else None
        self.metric = target.kind if target is not None else "loss"
        #: The intervals' columns it reads besides the figures': its metric (one of :data:`METRICS`).
        self.columns = (self.metric,)
        self._reached: list[pl.DataFrame] = []
        self._points: list[pl.DataFrame] = []

    def add(self, intervals: pl.DataFrame) -> None:
        """Take in one batch's intervals (with :attr:`columns` among theirs)."""
        split = _by_run_id(intervals)
        runs = list(split)
        if self._only is not None:  # only a chart: its runs alone (every figure is per run)
            runs = [run for run in runs if run in self._only]
            if not runs:
                return
        evals = pl.DataFrame(schema=STEP_SCHEMA)
        if self.metric == "accuracy":
            evals = self.steps.filter(
                pl.col("run_id").is_in(runs, nulls_equal=True) & pl.col("eval_accuracy").is_not_null()
            ).collect(engine=IN_MEMORY)
            evals = pl.concat([evals, self.event_evals.filter(pl.col("run_id").is_in(runs, nulls_equal=True))])
        parts = metric_parts(split, intervals, evals, self.started, self.metric, self._only, self.samples)
        if self.target is not None:  # time_to_target reads the records in order; the chart's buckets do not
            self._reached.append(time_to_target(_records(parts, ordered=True), self.target))
        if self.charted is not None:
            leads = None
            timed = []
            for part in parts:
                if part["run_id"][0] not in self._charted:  # a null run id is never charted
                    continue
                clock = "run"
                if part["seconds"].is_null().all():  # no clock of the run: the chart takes its lead task's own
                    leads = lead_rows(intervals) if leads is None else leads
                    part, clock = on_task_clock(part, intervals, leads), "task"
                timed.append(
                    part.select("run_id", "seconds", "value", "metric", clock=pl.lit(clock)).filter(
                        pl.col("seconds").is_not_null()
                    )
                )
            per_run = per_run_budget(min(len(self.charted), MAX_RUNS_CHARTED))
            empty = pl.DataFrame(schema=SERIES_SCHEMA).select("run_id", "seconds", "value", "metric", clock=pl.lit(""))
            firsts = ("metric", "clock")
            buckets = bucketed_runs([t for t in timed if t.height] or [empty], "seconds", per_run, "value", firsts)
            self._points.append(buckets)

    def reached(self) -> pl.DataFrame | None:
        """:func:`time_to_target` of every batch (None: no target)."""
        if self.target is None:
            return None
        return pl.concat(self._reached).sort("run_id") if self._reached else pl.DataFrame(schema=TARGET_SCHEMA)

    def series(self) -> MetricSeries:
        """The charted runs' :class:`MetricSeries`."""
        schema = {"run_id": pl.String, "seconds": pl.Float64, "value": pl.Float64, "records": pl.UInt32,
                  "metric": pl.String, "clock": pl.String}  # fmt: skip
        points = pl.concat(self._points).sort("run_id", "seconds") if self._points else pl.DataFrame(schema=schema)
        return MetricSeries(self.metric, self.target, points)
