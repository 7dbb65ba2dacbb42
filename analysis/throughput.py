"""Throughput of each run: interval rates, segments, warm-up, the steady state and the overall rate.

Definitions (steps are *global* steps unless named local, times in seconds):

- **Record order**: per task, the order the records were written (:func:`tierscope.analysis.records.in_log_order`),
  after copies of one record are merged (:func:`tierscope.analysis.records.merge_duplicates`).
- **Interval** of a record: from the task's previous record to this one. ``d_step`` is
  the global-step delta; ``d_seconds`` is ``interval_s`` when the format logs it
  (Estimator: time since the previous line), else the ``elapsed_s`` delta (cloudml-samples:
  time since the task started), else the ``timestamp`` delta, else, for a record with no clock and no
  global rate of its own but a local rate (> 0, finite), the time of its local steps since the task's
  previous record at that rate (:func:`step_time_seconds`: ``d_local_step / local_steps_per_s``, one
  local step where the two records name no local step: TF-slim's ``sec/step`` lines, logged every
  step by default; an interval so timed is ``step_timed``, and ``summary`` notes the assumption). case24's
  master logs global steps 819, 822, ... at 19.898, 18.507, ... sec/step: 822's interval is 3 global steps
  in 18.507 s, 0.162 global steps/s (1 / 18.507 is its local rate). ``interval_s`` is the time since the
  program's previous line, which need not be the file's: where the step gained since the file's
  previous record is more than :data:`GAP_FACTOR` times the steps the record's own rate and
  ``interval_s`` cover, lines are missing between them (an excerpt, a lost page) and ``d_step`` is
  those covered steps (case08: 201 -> 801 with ``12.399 global_step/sec`` over ``8.065 sec`` is
  100 steps, not 600). A record stating a time and no rate is timed by the file's clock instead of its stated
  time where its gain is more than :data:`GAP_FACTOR` times the one before and that clock spans more than
  :data:`GAP_FACTOR` times the stated time (:func:`_stated_time_across_missing_lines`).
- **Segment**: a stretch of one task's records with no restart inside. A new segment starts
  at a task's first record and wherever the global step goes backwards or stays put (a
  restart from an older checkpoint), ``elapsed_s`` goes backwards by more than the clock's slack
  (:data:`~tierscope.analysis.coarse_clock.COARSE_CLOCK_S`; less is jitter) or the ``pid`` changes (a
  new process: a restart, or another run logged to the same file), the time is unknown and
  the record states no rate of its own, or the step jumps ahead more than
  :data:`JUMP_FACTOR` times faster than the run's median interval rate (a resume from a
  checkpoint written by a later attempt). Nothing is computed across a segment boundary: a
  naive rate across a resume from step 475,000 to 955,000 is two orders of magnitude too
  high. A record stating an elapsed time no process can have run
  (:func:`~tierscope.analysis.clock.impossible_elapsed`: over 1,000 years, or not finite) is left out
  before any of this: its successor's ``elapsed_s`` would otherwise go back and cut a false restart.
- **Interval rate**: the global steps/s over the interval, as logged
  (``global_steps_per_s``) or else ``d_step / d_seconds``; on a clock that stood still or ran back
  while the steps went on (coarse against the interval), its block's steps over its block's span
  (:mod:`tierscope.analysis.coarse_clock`).
- **Warm-up**: the first interval of each segment (it runs from the process start, so it
  holds graph building, input start-up and, for a late-starting worker, steps other tasks
  made before it began: in the 2016 STANDARD_1 log worker 3's first rate is 64.662
  global steps/s against a steady ~23), plus the intervals right after it whose rate is
  below :data:`WARMUP_FRACTION` of the run's median interval rate (a slow start that
  lasts more than one logging interval).

  Why a fixed fraction of the median and not a spread-based outlier test: warm-up is a
  start-up effect of a large factor; ordinary variation (a laptop's background job, a
  slow batch) recurs all through a long run and is the stall bound's to judge (below). A
  spread-based test flags it on a quiet run: the 2016 laptop log's second interval, 11.069
  global steps/s, is 0.59 of the median 18.853 (past warm-up; the stall bound then leaves it
  out of the steady rate, its 9.034 s being 1.70x the median 5.304 s per 100 steps).
- **Steady-state global steps/s**: over the intervals of a run's training tasks (master/chief and
  workers; never ps or evaluator) past warm-up, the global steps of those kept over their time:
  sum(k s) / sum(k s / r), each interval with its global steps s (``d_step``, else ``d_seconds`` at its
  own rate; one of unknown length counts as the run's median known one) and rate r, kept by its share
  k (:func:`tierscope.analysis.bootstrap.kept_shares`): whole while its step time is at most
  :data:`~tierscope.analysis.bootstrap.STALL_FROM` times the median steady step time, not at all from
  :data:`~tierscope.analysis.bootstrap.STALL_TO` times it (a stall: a checkpoint, an evaluation, a
  slow input), by a share tapering between. Before the bound, an interval that holds a pause the log
  recorded (an evaluation or a checkpoint save of its task at a step e, previous step <= e < step:
  :func:`with_pauses`) is left out, unless every candidate interval of the run holds one (then all are
  kept): its time is badput, goodput's. No
  threshold on the intervals' lengths: an interval counts by its steps, so a log mixing 6 steps and
  193 (case22) is read as the steps it made, and one interval growing past any ratio moves the rate
  smoothly. A run with no interval past warm-up takes the rates
  its segments' first records state (:data:`STEADY_ROWS`): one report of an epoch's ms/step or a
  finished bar's it/s measures many steps. (The SQL of :mod:`tierscope.analysis.steady_sql` does not
  yet: it gives such a run no row.) ``steady_stalls`` counts the intervals the bound weighed down or
  left out. Global rates of different tasks are never added: every task sees the same global step.
- **Mean (overall) global steps/s**: the global steps gained between consecutive records
  of each task segment over the time between them, pooled over tasks and segments (sum
  of steps / sum of seconds), warm-up excluded.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

from tierscope.analysis.bootstrap import (
    BOOTSTRAP_DRAWS,
    BOOTSTRAP_SEED,
    SteadyRates,
    exact_median,
    percentile_interval,
    steady_draws,
    steady_rates,
)
from tierscope.analysis.clock import impossible_elapsed, jumps_ahead
from tierscope.analysis.coarse_clock import COARSE_CLOCK_S, block_rates
from tierscope.analysis.engine import IN_MEMORY
from tierscope.analysis.printed_rates import judge
from tierscope.analysis.records import (
    TASK,
    TRAINING,
    distinct_in_log_order,
    in_log_order,
    merge_duplicates,
    run_spans,
    task_starts,
    training_steps,
)
from tierscope.analysis.stated_rates import MAX_STEPS_PER_S
from tierscope.analysis.steadiness import latest_level, rise, still_rising
from tierscope.contract import CHECKPOINT_BEGIN, CHECKPOINT_END, EVAL_BEGIN, EVAL_END
from tierscope.dataset.schema import STEP_SCHEMA

SEGMENT = (*TASK, "segment")

#: A step jump more than this many times faster than the run's median rate is a resume, not progress.
JUMP_FACTOR = 10.0
#: Intervals right after a segment's first that run below this fraction of the run's median are warm-up.
WARMUP_FRACTION = 0.5
#: A record whose step gain since the file's previous record is more than this many times the steps
#: its own stated time and rate cover was logged after lines the file lacks (one missing line at least
#: doubles the gain of a log written every N steps; the two figures are rounded, so not 1x).
GAP_FACTOR = 1.5


#: Columns of :func:`interval_rates`' frame, beyond the step record's own.
INTERVAL_COLUMNS = {
    "copies": pl.UInt32(),  # rows merged into this record (1: logged once)
    "segment": pl.UInt32(),  # 0, 1, ... per task: a new one after each restart or resume
    "interval_index": pl.UInt32(),  # 0 for a segment's first record (warm-up)
    "d_step": pl.Int64(),  # global steps since the segment's previous record (null at index 0)
    "d_seconds": pl.Float64(),  # seconds since the segment's previous record (null at index 0)
    "step_timed": pl.Boolean(),  # d_seconds is the record's step time: no clock (step_time_seconds)
    "rate": pl.Float64(),  # interval global steps/s
    "local_rate": pl.Float64(),  # interval local steps/s: as logged, else from local_step deltas
    "warmup": pl.Boolean(),
    "restart": pl.Boolean(),  # the segment starts at a restart or resume (not at a task's first record)
    # the interval's clock was set back, or ran ahead by what a setback took back: its time unknown (_judged)
    "clock_back": pl.Boolean(),
    # the global rate the record printed, set aside for its clock's (analysis.printed_rates; null: kept)
    "printed_rate": pl.Float64(),
    "printed_off": pl.Boolean(),  # that clock's rate lies outside the printed figure's rounding
}


def _previous(column: str | pl.Expr, starts: pl.Expr) -> pl.Expr:
    """``column``'s value in the previous row of its group (null on the group's first row, where
    ``starts``): ``shift(1).over(group)`` on rows grouped by it, without the window's cost."""
    return pl.when(starts).then(None).otherwise((pl.col(column) if isinstance(column, str) else column).shift(1))


def _since_start(values: pl.Expr, starts: pl.Expr) -> pl.Expr:
    """``values`` (cumulative, non-decreasing) less their value on the group's first row (where ``starts``)."""
    return values - pl.when(starts).then(values).forward_fill()


def _clock_seconds(first: pl.Expr) -> pl.Expr:
    """Seconds since the task's previous record by the log's clocks (``first``: the task's first row):
    ``interval_s``, else the ``elapsed_s`` delta, else the ``timestamp`` delta (null: none of them); the file's
    clock over ``interval_s`` where :func:`_stated_time_across_missing_lines`."""
    clock = pl.coalesce(pl.col("elapsed_s") - _previous("elapsed_s", first), _stamp_seconds(first))
    stated = pl.when(~_stated_time_across_missing_lines(first, clock).fill_null(False)).then(pl.col("interval_s"))
    return pl.coalesce(stated, clock)


def _stated_time_across_missing_lines(first: pl.Expr, clock: pl.Expr) -> pl.Expr:
    """Whether a record stating its seconds since the program's previous line (``interval_s``) and no rate of its
    own was logged after lines the file lacks (``first``: the task's first row; ``clock``: the file's seconds since
    its previous record, by ``elapsed_s`` or the stamps): its step gain is more than :data:`GAP_FACTOR` times the
    gain before it (a log written every N steps) and the clock spans more than :data:`GAP_FACTOR` times the stated
    seconds (beyond the clock's slack). The stated seconds time the program's last N steps only; the clock times
    the gain (an Estimator excerpt missing step 600's line: 500 -> 700 in 120 s, 700 stating 60 s). A record
    stating its rate too has its gain cut to what the two cover instead (:func:`across_missing_lines`); an even
    gain keeps the stated seconds, however long the clock (Keras' epoch seconds leave out its validation)."""
    step = pl.col("step") - _previous("step", first)
    gained_before = _previous(step, first)
    return (
        pl.col("interval_s").is_not_null()
        & pl.col("global_steps_per_s").is_null()
        & (step > GAP_FACTOR * gained_before)
        & (gained_before > 0)
        & (clock > GAP_FACTOR * pl.col("interval_s") + COARSE_CLOCK_S)
    )


#: The fastest local rate that times a step (steps/s): TF-slim prints ``sec/step`` with 3 decimals, so
#: 0.001 s (1,000 steps/s) is its shortest step time; a rate far above any step a framework makes (a
#: ``1e-308 sec/step``) would give intervals of no time and infinite global rates. The bound of any stated
#: rate (:data:`tierscope.analysis.stated_rates.MAX_STEPS_PER_S`).
MAX_TIMING_STEPS_PER_S = MAX_STEPS_PER_S


def step_time_seconds(first: pl.Expr) -> pl.Expr:
    """Seconds of the local steps a record made since the task's previous record (``first``: the task's
    first row, which has none: null), at the record's own local steps/s: ``d_local_step /
    local_steps_per_s`` where both records name a local step, else ``1 / local_steps_per_s`` (one local
    step a line: TF-slim's ``learning.train`` logs every step unless told otherwise, and its
    ``sec/step`` is that step's time). Null where the record states a global rate (its interval's
    rate needs no time, and a rate averaged over a print interval, DLRM's ``ms/it`` every 16
    iterations in case11, would time 16 steps as one), where the local rate is not > 0 and finite, and
    where the local step went back or stood still (a new process: the time is unknown). Only
    :func:`_seconds_since_previous`'s last resort: any clock of the log comes first."""
    rate = pl.col("local_steps_per_s")
    d_local = pl.col("local_step") - _previous("local_step", first)
    local_steps = pl.when(d_local.is_null()).then(pl.lit(1, pl.Int64)).when(d_local > 0).then(d_local)
    timed = ~first & pl.col("global_steps_per_s").is_null() & (rate > 0) & (rate <= MAX_TIMING_STEPS_PER_S)
    return pl.when(timed).then(local_steps / rate)


def _seconds_since_previous(first: pl.Expr) -> pl.Expr:
    """``d_seconds`` before segments (the module doc's interval): the log's clock, else the step time."""
    return pl.coalesce(_clock_seconds(first), step_time_seconds(first))


def interval_rates(steps: pl.LazyFrame, events: pl.DataFrame | None = None) -> pl.LazyFrame:
    """Each training-task record with its interval, segment and warm-up flag (see the module doc).

    Input: step records (:data:`tierscope.dataset.schema.STEP_SCHEMA`), copies and all, and the run
    events (:data:`tierscope.dataset.schema.EVENT_SCHEMA`; None: none). Output: one row per distinct
    record of a training task, in log order per task, with the step record's columns,
    :data:`INTERVAL_COLUMNS` and ``paused`` (:func:`with_pauses`). The reference definition;
    :func:`collect_intervals` computes the same rows at a fraction of the cost.
    """
    intervals = with_intervals(in_log_order(merge_duplicates(training_steps(steps)))).collect()
    return with_pauses(intervals, pause_steps(steps, events)).lazy()


#: A step record that reports an evaluation: held-out metrics (a cloudml ``Eval`` block, Keras'
#: ``val_loss``, MLPerf's ``eval_accuracy``).
EVALUATION = pl.col("eval_loss").is_not_null() | pl.col("eval_accuracy").is_not_null()
#: :data:`EVALUATION` as the column ``_evaluates`` (true, else null) :func:`ordered_records` carries.
EVALUATES = pl.when(EVALUATION).then(True).alias("_evaluates")
#: The run events that pause training at their step: a checkpoint save and an evaluation
#: (:mod:`tierscope.contract`; Estimator's ``Saving checkpoints for N``, ``Starting evaluation``).
PAUSE_EVENTS = (CHECKPOINT_BEGIN, CHECKPOINT_END, EVAL_BEGIN, EVAL_END)
#: Columns of :func:`pause_steps`.
PAUSE_COLUMNS = {
    "run_id": pl.String(),
    "role": pl.String(),  # null with run_wide
    "task_index": pl.Int32(),
    "run_wide": pl.Boolean(),  # it paused every training task of the run
    "step": pl.Int64(),
}


def _pauses(frame: pl.LazyFrame, paused: pl.Expr) -> pl.LazyFrame:
    """:data:`PAUSE_COLUMNS` of ``frame``'s rows where ``paused`` and with a step: a training task's
    own row is its own pause; an ``evaluator``'s naming no task index (an ``Eval`` block or an
    ``eval_accuracy`` line in the training process' own log) paused every training task of the run;
    an evaluator task with an index runs beside training (a replica of its own): left out."""
    own = TRAINING
    in_line = (pl.col("role") == "evaluator") & pl.col("task_index").is_null()
    return frame.filter(paused & pl.col("step").is_not_null() & (own | in_line)).select(
        pl.col("run_id").cast(pl.String),
        role=pl.when(own).then(pl.col("role")).cast(pl.String),
        task_index=pl.when(own).then(pl.col("task_index")).cast(pl.Int32),
        run_wide=~own,
        step=pl.col("step").cast(pl.Int64),
    )


def pause_steps(steps: pl.LazyFrame, events: pl.DataFrame | None = None) -> pl.DataFrame:
    """Where training paused to evaluate or save a checkpoint, by the log: one row per distinct
    ``run_id, role, task_index, step`` (:data:`PAUSE_COLUMNS`) of a step record with held-out metrics
    (:data:`EVALUATION`) and of an event of :data:`PAUSE_EVENTS` (``events``: the events table, None:
    none), whose task it paused as :func:`_pauses` says."""
    evaluations = None
    if {"eval_loss", "eval_accuracy"} <= set(steps.collect_schema().names()):  # not the interval columns alone
        evaluations = _pauses(steps, EVALUATION)
    return _pause_table(evaluations, events)


def _pause_table(evaluations: pl.LazyFrame | pl.DataFrame | None, events: pl.DataFrame | None) -> pl.DataFrame:
    """:func:`pause_steps` from the step records' own pauses (``evaluations``: :func:`_pauses` of the records
    that report an evaluation; None: the records have no metrics' columns) and ``events``' pauses."""
    parts = [] if evaluations is None else [evaluations.lazy()]
    if events is not None and {"event", "step", "role", "task_index"} <= set(events.columns):
        parts.append(_pauses(events.lazy(), pl.col("event").is_in(PAUSE_EVENTS)))
    if not parts:
        return pl.DataFrame(schema=PAUSE_COLUMNS)
    return pl.concat(parts).unique().collect(engine=IN_MEMORY)


def with_pauses(intervals: pl.DataFrame, pauses: pl.DataFrame) -> pl.DataFrame:
    """``intervals`` (:func:`interval_rates` rows of whole tasks, each task's rows together in log order)
    with ``paused`` (Boolean): the interval holds a pause of its task (:func:`pause_steps`), one at a
    step e with previous step <= e < step (an evaluation or a save at e runs once training reached e,
    so its time is in the interval that ends at the next record). False on a segment's first record."""
    flags = np.zeros(intervals.height, dtype=bool)
    if pauses.height and intervals.height:
        wide: dict[str, list[int]] = {}
        own: dict[tuple, list[int]] = {}
        for run, role, index, run_wide, step in pauses.select(*PAUSE_COLUMNS).iter_rows():
            (wide.setdefault(run, []) if run_wide else own.setdefault((run, role, index), [])).append(step)
        for run, role, index, offset, length in task_rows(intervals).iter_rows():
            found = np.unique(np.array(wide.get(run, []) + own.get((run, role, index), []), dtype=np.int64))
            if not found.size:
                continue
            part = intervals.slice(offset, length)
            step = part.get_column("step").fill_null(-1).to_numpy()
            previous = np.concatenate(([-1], step[:-1]))
            usable = (part.get_column("interval_index") > 0).to_numpy() & (previous >= 0) & (step >= 0)
            at = np.searchsorted(found, previous, side="left")
            inside = (at < found.size) & (found[np.minimum(at, found.size - 1)] < step)
            flags[offset : offset + length] = usable & inside
    return intervals.with_columns(paused=pl.Series(flags))


#: A record's rate as a step jump is judged (on :func:`with_raw_rates`' rows): its steps over its time and the
#: clock's slack (:data:`tierscope.analysis.coarse_clock.COARSE_CLOCK_S`), the fastest the interval can have run
#: by a clock known to a second. 100 steps 0.03 s apart by a clock that jitters by a second (the benchmark's
#: generated BASIC_TPU runs: 0.625 s intervals) are no resume at 3,333 steps/s but at most 97; a resume gains far
#: more steps than the run makes in a second (case08's 475,000 -> 955,000 in 65 s).
JUMP_RATE = pl.when((pl.col("_d_step") > 0) & (pl.col("_d_seconds") > 0)).then(
    pl.col("_d_step") / (pl.col("_d_seconds") + COARSE_CLOCK_S)
)
#: The two medians of a run the intervals are judged against, as aggregations over the run's rows:
#: the raw interval rates (beyond each task's first record; a step jump whose :data:`JUMP_RATE` is far
#: above it is a resume)
#: and the interval rates within segments (warm-up runs below a fraction of it).
JUMP_RATES = pl.col("_raw_rate").filter(~pl.col("_first"))
WARM_RATES = pl.col("rate").filter(pl.col("interval_index") > 0)
JUMP_MEDIAN = JUMP_RATES.median()
WARM_MEDIAN = WARM_RATES.median()


#: The last pid the task named up to this row (on rows grouped by task): a record naming none (a
#: layout whose pid is optional) between two processes must not hide the change. A task's first row
#: sets it (null there stays null), so it never carries one task's pid into the next.
_NAMED_PID = pl.when(pl.col("_first")).then(pl.col("pid").fill_null(-1)).otherwise(pl.col("pid")).forward_fill()
_NAMED_PID = pl.when(_NAMED_PID >= 0).then(_NAMED_PID)


def with_raw_rates(ordered: pl.LazyFrame) -> pl.LazyFrame:
    """Stage 1 of :func:`with_intervals`: ``ordered`` (one row per record, each task's rows together in
    log order; with ``_first``, each task's first row, if marked already) with each record's raw step
    and time deltas to the task's previous record and ``_raw_rate``."""
    first = pl.col("_first")
    if "_first" not in ordered.collect_schema().names():  # not marked by ordered_records
        ordered = ordered.with_columns(_first=task_starts())
    return ordered.with_columns(
        _d_step=pl.col("step") - _previous("step", first),
        _d_seconds=_seconds_since_previous(first),
        # timed by the step time alone (no clock): what summary's note on the assumption counts
        _step_timed=_clock_seconds(first).is_null() & step_time_seconds(first).is_not_null(),
        # a fall within the clock's slack is its jitter (analysis.coarse_clock), not a process started anew; a fall
        # to under half the time before is a new process's clock, however short the first attempt was
        _elapsed_back=(
            (pl.col("elapsed_s") < _previous("elapsed_s", first) - COARSE_CLOCK_S)
            | (pl.col("elapsed_s") < 0.5 * _previous("elapsed_s", first))
        ).fill_null(False),
        _new_process=(pl.col("pid") != _previous(_NAMED_PID, first)).fill_null(False),
        _clock_back=_clock_back(first),
        _stamp_s=_stamp_seconds(first),
    ).with_columns(
        _raw_rate=pl.when((pl.col("_d_step") > 0) & (pl.col("_d_seconds") > 0)).then(
            pl.col("_d_step") / pl.col("_d_seconds")
        ),
        _jump_rate=JUMP_RATE,
    )


def _clock_back(first: pl.Expr) -> pl.Expr:
    """Boolean: the task's timestamps went back over the record's interval by more than the clock's slack
    (:data:`~tierscope.analysis.coarse_clock.COARSE_CLOCK_S`) while its global step went on, where no
    ``elapsed_s`` of both records times it. The step rising says the process went on: the clock was set back (an
    NTP step, a clock set by hand), which is no restart. The interval's time is unknown unless the record states
    it (``interval_s``); its own rate, where it states one, still counts. A fall within the slack is a coarse
    clock's (:mod:`tierscope.analysis.coarse_clock`); ``elapsed_s`` going back is a new process's."""
    elapsed = (pl.col("elapsed_s") - _previous("elapsed_s", first)).is_null()
    rises = pl.col("step") > _previous("step", first)
    return (elapsed & rises & (_stamp_seconds(first) < -COARSE_CLOCK_S)).fill_null(False)


def _stamp_seconds(first: pl.Expr) -> pl.Expr:
    """Seconds between the record's timestamp and the task's previous record's (null: either has none)."""
    return (pl.col("timestamp") - _previous("timestamp", first)).dt.total_microseconds() / 1e6


def with_segments(raw: pl.LazyFrame, jump_median: pl.Expr) -> pl.LazyFrame:
    """Stage 2: :func:`with_raw_rates`' rows with segments and interval rates, a step jump judged
    against ``jump_median`` (the run's :data:`JUMP_MEDIAN`, one value per row)."""
    jump = pl.col("_jump_rate") > JUMP_FACTOR * jump_median
    # A record that states its own rate needs no time to continue its segment: logs that print
    # only `global_step/sec: X` or `(S sec/step)` carry no clock, and a break at each of their
    # records would leave every interval in warm-up. A step-less record (null step) cannot show
    # a restart by its step.
    # A clock reading that stood still or ran back while the steps went on is a coarse clock, not an
    # unknown time (analysis.coarse_clock): its segment goes on.
    read = pl.col("interval_s").is_null() & ~pl.col("_step_timed")
    time_unknown = pl.col("_d_seconds").is_null() | ((pl.col("_d_seconds") <= 0) & ~read)
    # What the process did (it went back, a new one started, it resumed elsewhere), as against a
    # break only because nothing measures the interval: the restarts a user is told of.
    restart = (
        (pl.col("_d_step") <= 0).fill_null(False)
        | pl.col("_elapsed_back")
        | pl.col("_new_process")
        | jump.fill_null(False)
    )
    breaks = pl.col("_first") | restart | (time_unknown & pl.col("global_steps_per_s").is_null())
    # Segments and tasks are runs of consecutive rows (a task's first row always breaks): counts
    # within them are running counts over the frame less their value at the start.
    opens = pl.col("_break")
    segmented = raw.with_columns(_break=breaks, restart=restart & ~pl.col("_first")).with_columns(
        segment=_since_start(opens.cast(pl.UInt32).cum_sum(), pl.col("_first")).cast(pl.UInt32),
        interval_index=_since_start(pl.int_range(pl.len(), dtype=pl.UInt32), opens),
    )
    in_segment = pl.col("interval_index") > 0
    d_local = pl.col("local_step") - _previous("local_step", opens)
    gap = in_segment & across_missing_lines()
    segmented = segmented.with_columns(
        d_step=pl.when(gap).then((STATED_STEPS + 0.5).floor().cast(pl.Int64)).when(in_segment).then(pl.col("_d_step")),
        # a clock set back leaves its interval's time unknown (_clock_back); _judged finds the jump ahead it undid
        d_seconds=pl.when(in_segment & ~(pl.col("_clock_back") & pl.col("interval_s").is_null())).then(
            pl.col("_d_seconds")
        ),
        step_timed=in_segment & pl.col("_step_timed"),
    )
    printed, clock_rate = (
        pl.col("global_steps_per_s"),
        pl.when(pl.col("d_seconds") > 0).then(pl.col("d_step") / pl.col("d_seconds")),
    )
    # An interval whose record reports an evaluation holds it on the clock and not in the printed rate
    # (Keras' epoch seconds take in validation, its ms/step does not): it does not vote.
    names = set(raw.collect_schema().names())
    evaluates = (
        pl.col("_evaluates").fill_null(False)
        if "_evaluates" in names
        else EVALUATION.fill_null(False)
        if {"eval_loss", "eval_accuracy"} <= names
        else pl.lit(False)
    )
    # a record's own interval_s is the time its printed rate is over: a disagreement there is in what the
    # step counts (cosface's step is samples, its rate iterations), not in the time
    clocked = in_segment & ~pl.col("step_timed") & ~evaluates & pl.col("interval_s").is_null()
    # a time stated in whole seconds (Keras' ``- 2s -``) is known to a second, as a whole-second clock's reading
    whole_stated = pl.col("interval_s") == pl.col("interval_s").floor()
    segmented = segmented.with_columns(
        _clocked=clocked.fill_null(False),
        _read=(in_segment & ~pl.col("step_timed") & (read | whole_stated)).fill_null(False),
        _pace=jump_median,
    )
    schema = {
        **segmented.collect_schema(),
        **{c: pl.Boolean() for c in JUDGED_COLUMNS},
        "_block_rate": pl.Float64(),
        "clock_back": pl.Boolean(),
    }
    judged = segmented.map_batches(_judged, schema=schema).with_columns(
        d_seconds=pl.when(~pl.col("clock_back") | pl.col("interval_s").is_not_null()).then(pl.col("d_seconds"))
    )
    # where the task's clock wins, a printed rate on an interval the clock cannot measure is no better
    wins, aside = pl.col("_clock_wins"), pl.col("_clock_wins") & pl.col("_compared")
    # on a coarse clock, an interval's clock rate is its block's (analysis.coarse_clock)
    clock_rate = pl.coalesce(pl.col("_block_rate").fill_nan(None), clock_rate)
    return judged.with_columns(
        rate=pl.when(wins).then(clock_rate).otherwise(pl.coalesce(printed, clock_rate)),
        printed_rate=pl.when(aside).then(printed),
        printed_off=pl.when(aside).then(pl.col("_off")),
        local_rate=pl.coalesce(
            pl.col("local_steps_per_s"),
            pl.when(in_segment & ~gap & (pl.col("d_seconds") > 0)).then(d_local / pl.col("d_seconds")),
        ),
    )


#: The columns :func:`_judged` adds (Boolean): :class:`tierscope.analysis.printed_rates.Judgement`'s.
JUDGED_COLUMNS = ("_clock_wins", "_compared", "_off")


def _judged(frame: pl.DataFrame) -> pl.DataFrame:
    """``frame`` (:func:`with_segments`' rows of whole tasks, with ``_clocked``, ``_read``, ``_clock_back``,
    ``_stamp_s``, ``interval_s`` and ``_pace``) with :data:`JUDGED_COLUMNS`
    (:func:`tierscope.analysis.printed_rates.judge` on its arrays), ``_block_rate``
    (:func:`tierscope.analysis.coarse_clock.block_rates`; NaN: the interval's own) and ``clock_back``: the
    interval's clock was set back, or ran ahead by what a later setback took back
    (:func:`tierscope.analysis.clock.jumps_ahead`); its time is no reading of the interval."""
    steps, seconds = frame.get_column("d_step").cast(pl.Float64).to_numpy(), frame.get_column("d_seconds").to_numpy()
    back = frame.get_column("_clock_back").to_numpy()
    opens = frame.get_column("_break").to_numpy()
    clocked, read = frame.get_column("_clocked").to_numpy(), frame.get_column("_read").to_numpy()
    if back.any():
        stamps = frame.get_column("_stamp_s").to_numpy()
        fell = np.where(back, -stamps, np.nan)
        back = back | jumps_ahead(steps, stamps, fell, opens, frame.get_column("_pace").to_numpy())
        # the stamps' time is the clock's jump; a time the record states (interval_s) is the interval's own
        unknown = back & frame.get_column("interval_s").is_null().to_numpy()
        seconds, clocked, read = np.where(unknown, np.nan, seconds), clocked & ~unknown, read & ~unknown
    blocks = block_rates(steps, seconds, read, opens, frame.get_column("_first").to_numpy())
    found = judge(
        frame.get_column("global_steps_per_s").to_numpy(),
        steps,
        seconds,
        clocked,
        frame.get_column("_first").to_numpy(),
    )
    return frame.hstack(
        [
            pl.Series(name, values)
            for name, values in zip(JUDGED_COLUMNS, (found.wins, found.compared, found.off), strict=True)
        ]
        + [pl.Series("_block_rate", blocks, dtype=pl.Float64), pl.Series("clock_back", back, dtype=pl.Boolean)]
    )


#: The global steps a record's own interval covers by its own figures: its stated rate times its
#: stated seconds since the program's previous line (null unless the record states both).
STATED_STEPS = pl.col("global_steps_per_s") * pl.col("interval_s")


def across_missing_lines() -> pl.Expr:
    """Whether a record's interval (on :func:`with_raw_rates`' rows) spans lines missing from the log:
    it states its time since the program's previous line (``interval_s``) and its rate, and the step
    gained since the file's previous record is more than :data:`GAP_FACTOR` times the steps those two
    cover (:data:`STATED_STEPS`). The stated time covers the program's last interval only: its
    ``d_step`` is :data:`STATED_STEPS` (rounded half up), never the gap (null: not such a record)."""
    return pl.col("_d_step") > GAP_FACTOR * STATED_STEPS


def with_warmup(rated: pl.LazyFrame, warm_median: pl.Expr) -> pl.LazyFrame:
    """Stage 3: :func:`with_segments`' rows with ``warmup``, slow starts judged against
    ``warm_median`` (the run's :data:`WARM_MEDIAN`); the input's record columns and
    :data:`INTERVAL_COLUMNS` only."""
    in_segment = pl.col("interval_index") > 0
    slow_start = ~in_segment | (pl.col("rate") < WARMUP_FRACTION * warm_median).fill_null(False)
    kept = [c for c in rated.collect_schema().names() if not c.startswith("_") and c not in INTERVAL_COLUMNS]
    # warm-up lasts while every interval of the segment so far was slow: no fast one since its start
    fast = (~slow_start).cast(pl.UInt32).cum_sum()
    return rated.with_columns(warmup=_since_start(fast, ~in_segment) == 0).select(*kept, *INTERVAL_COLUMNS)


def with_intervals(ordered: pl.LazyFrame) -> pl.LazyFrame:
    """:data:`INTERVAL_COLUMNS` of ``ordered``: distinct records (with ``copies``) of training tasks, in
    log order per task, whole runs (the run medians are taken over its rows)."""
    rated = with_segments(with_raw_rates(ordered), JUMP_MEDIAN.over("run_id"))
    return with_warmup(rated, WARM_MEDIAN.over("run_id"))


#: The columns of :func:`interval_rates` that the per-run and per-task figures read.
FIGURE_COLUMNS = (
    "run_id", "role", "task_index", "step", "elapsed_s", "timestamp",
    "copies", "segment", "interval_index", "d_step", "d_seconds", "step_timed", "rate", "local_rate", "warmup",
    "restart", "printed_rate", "printed_off", "clock_back",
)  # fmt: skip
#: The step record's columns the intervals are computed from (besides :data:`FIGURE_COLUMNS`).
INPUT_COLUMNS = (
    "run_id", "role", "task_index", "step", "local_step", "elapsed_s", "interval_s", "timestamp",
    "global_steps_per_s", "local_steps_per_s", "position", "source", "source_offset", "pid",
)  # fmt: skip


def ordered_records(steps: pl.LazyFrame, extra: Sequence[str] = ()) -> pl.DataFrame:
    """The training tasks' distinct records of ``steps`` in log order per task, collected with
    :data:`INPUT_COLUMNS` (and ``extra``) only, plus ``copies`` and ``_first`` (each task's first row)
    (:func:`tierscope.analysis.records.distinct_in_log_order`)."""
    return _records_and_evaluations(steps, extra)[0]


def _records_and_evaluations(
    steps: pl.LazyFrame, extra: Sequence[str] = ()
) -> tuple[pl.DataFrame, pl.DataFrame | None]:
    """:func:`ordered_records` of ``steps``, and the pauses of its records that report an evaluation
    (:func:`_pauses` of :data:`EVALUATION`; None: ``steps`` has no metrics' columns), taken from the rows
    read for the order (every task's, before any is left out): no second read of the steps."""
    columns = list(dict.fromkeys([*INPUT_COLUMNS, *(c for c in extra if c in STEP_SCHEMA)]))
    # Whether a record reports an evaluation, one bit a record rather than the metrics' columns: true or
    # null, so a merged record evaluates where any copy does (merge_duplicates keeps the first non-null).
    evaluates = [EVALUATES] if {"eval_loss", "eval_accuracy"} <= set(steps.collect_schema().names()) else []
    # One chunk per column here, the read's chunks (one a file or row group) dropped at once: a copy
    # made later (distinct_in_log_order needs one chunk) would hold both copies through the pass.
    rows = steps.select(*columns, *evaluates).collect(engine=IN_MEMORY).rechunk()
    evaluations = (
        _pauses(rows.lazy(), pl.col("_evaluates").fill_null(False)).collect(engine=IN_MEMORY) if evaluates else None
    )
    # Most logs hold training tasks' records only: the filter (a copy of every column) only where not.
    training = rows.select(TRAINING).to_series()
    if not training.all():
        rows = rows.filter(training)
    # A record stating an elapsed time no process can have run is left out (analyze's note says so): read as
    # a time, the next record's would go back and make a restart that never was.
    if rows.select(impossible_elapsed().any()).item():
        rows = rows.filter(~impossible_elapsed())
    return distinct_in_log_order(rows, starts=True), evaluations


def collect_intervals(
    steps: pl.LazyFrame,
    extra: Sequence[str] = (),
    ordered: pl.DataFrame | None = None,
    events: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """:func:`interval_rates` of ``steps``, materialised with :data:`FIGURE_COLUMNS` (and ``extra``) only.

    For callers that derive several figures from the same intervals: the columns not
    listed (source, format, metrics) are never read, which keeps 10 million records
    within a few hundred MB. The stored log order is relied on where a check confirms it
    (:func:`ordered_records`). ``ordered``: :func:`ordered_records` of ``steps`` if the caller has them;
    ``events``: the runs' events (their pauses, :func:`pause_steps`; None: none).
    """
    columns = list(dict.fromkeys([*FIGURE_COLUMNS, *extra]))
    if ordered is None:  # the evaluations' pauses from the rows read for the order
        ordered, evaluations = _records_and_evaluations(steps, extra)
        pauses = _pause_table(evaluations, events)
    else:
        pauses = pause_steps(steps, events)
    # with_intervals, its two run medians taken run by run where the rows lie (each run's rows are
    # together): a window over the run id hashes it on every row and sorts each run's rates.
    raw = with_raw_rates(ordered.lazy()).collect(engine=IN_MEMORY)
    raw = raw.with_columns(_jump_median=run_medians(raw, JUMP_RATES))
    rated = with_segments(raw.lazy(), pl.col("_jump_median")).collect(engine=IN_MEMORY)
    rated = rated.with_columns(_warm_median=run_medians(rated, WARM_RATES))
    # one chunk a column: every figure below takes slices and eager steps of them, each of which would
    # otherwise copy the columns (collected in parallel pieces) into one chunk again
    intervals = with_warmup(rated.lazy(), pl.col("_warm_median")).select(columns).collect(engine=IN_MEMORY).rechunk()
    return with_pauses(intervals, pauses)


def run_medians(frame: pl.DataFrame, rates: pl.Expr) -> pl.Series:
    """On each row of ``frame`` (each run's rows together), the median of its run's ``rates`` (an
    expression of ``frame``'s columns, nulls left out; null where none): ``rates.median().over("run_id")``,
    equal to the bit (:func:`tierscope.analysis.bootstrap.exact_median`)."""
    spans = run_spans(frame)
    medians = [
        exact_median(frame.slice(offset, length).select(rates.drop_nulls()).to_series().to_numpy())
        for offset, length in spans
    ]
    # each run's median put on its rows at once: one gather, not a column a run joined together
    lengths = np.fromiter((length for _, length in spans), dtype=np.int64, count=len(spans))
    return pl.Series(medians, dtype=pl.Float64).gather(np.repeat(np.arange(len(spans)), lengths))


def steady_intervals(steps: pl.LazyFrame) -> pl.LazyFrame:
    """The steady-state intervals: :func:`interval_rates` rows not in warm-up and with a rate."""
    return interval_rates(steps).filter(~pl.col("warmup") & pl.col("rate").is_not_null())


#: Columns of :func:`run_throughput`.
THROUGHPUT_SCHEMA: dict[str, pl.DataType] = {
    "run_id": pl.String(),
    "records": pl.UInt32(),  # all stored records, including ps/evaluator and copies
    "duplicates": pl.UInt32(),  # training-task rows merged away as copies of another
    "tasks": pl.UInt32(),  # distinct training tasks
    "segments": pl.UInt32(),  # task segments over all training tasks (tasks + restarts/resumes)
    "restarts": pl.UInt32(),  # segments begun by a restart or resume (not by a record without a time)
    # intervals whose clock was set back, or ran ahead by what a setback took back (no restart: the steps went
    # on); a time of theirs only where the record states one (INTERVAL_COLUMNS' clock_back)
    "clock_setbacks": pl.UInt32(),
    "steady_intervals": pl.UInt32(),  # intervals past warm-up with a rate (the steady rate's sample)
    "steady_stalls": pl.UInt32(),  # of those, the intervals the stall bound weighed down or left out
    # of those, the intervals holding an evaluation or a checkpoint save (with_pauses): left out, unless all do
    "steady_pauses": pl.UInt32(),
    "steady_records": pl.UInt32(),  # records past warm-up, with a rate or without (summary's steady_reason)
    "untimed_records": pl.UInt32(),  # records naming no time, step time or global rate (each starts a segment)
    "step_timed_intervals": pl.UInt32(),  # steady intervals timed by a step time alone (step_time_seconds)
    "steady_global_steps_per_s": pl.Float64(),  # null when every segment logged once, or still rising
    "steady_rise": pl.Float64(),  # the lead's steady rates, last third over first, less 1 (null: < 2)
    "still_rising": pl.Boolean(),  # those rates still trend upwards: no steady rate (analysis.steadiness)
    "steady_ci_low": pl.Float64(),  # bootstrap 95 % interval of the steady rate (null: < 2 intervals)
    "steady_ci_high": pl.Float64(),
    "mean_global_steps_per_s": pl.Float64(),  # the overall rate; null when no segment logged twice
    "startup_s": pl.Float64(),  # seconds the lead task lost to warm-up (see run_throughput)
    "last_step": pl.Int64(),  # the highest global step
    # where a task's printed global rate was set aside for its clock's (analysis.printed_rates), over the
    # steady intervals so judged: the printed rate and the clock's (steps over the time each gives)
    "printed_set_aside": pl.Float64(),
    "clock_beside": pl.Float64(),
    "printed_off_rounding": pl.Boolean(),  # on most of them the clock lies outside the printed rounding
}


def run_throughput(
    steps: pl.LazyFrame,
    seed: int = BOOTSTRAP_SEED,
    draws: int = BOOTSTRAP_DRAWS,
    intervals: pl.DataFrame | None = None,
    events: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """Per run: records and throughput, one row per run that has step records, sorted by run id.

    Columns: :data:`THROUGHPUT_SCHEMA`. ``steady_ci_low``/``high`` are the 2.5 and 97.5
    percentiles of the steady rate over ``draws`` bootstrap resamples of the steady intervals
    (seeded by ``seed`` and the run id, so a run's interval does not depend on the other
    runs). ``startup_s`` is the lead task's (master/chief 0, else the first training
    task) ``elapsed_s`` at its first steady record minus that record's step at the steady
    rate: the time to N steps is about ``startup_s + N / steady rate`` (null without
    ``elapsed_s``, where ``summary`` takes the same on the lead's timestamp clock from the run's
    ``started`` event: :mod:`tierscope.analysis.goodput`'s ``clock_startup_s``; clipped at 0).
    ``intervals``: :func:`interval_rates` of ``steps`` if the caller has computed them already (they
    are the costly part); ``events``: the runs' events, whose checkpoint saves and evaluations pause
    training (:func:`pause_steps`; None: none)."""
    records = steps.group_by("run_id").agg(records=pl.len().cast(pl.UInt32), last_step=pl.col("step").max())
    frame = (interval_rates(steps, events) if intervals is None else intervals.lazy()).collect(engine=IN_MEMORY)
    samples = interval_samples(frame)
    parts = run_parts(frame.lazy()).collect(engine=IN_MEMORY)
    return throughput_frame(records.collect(), parts, samples, frame, seed, draws)


def run_parts(intervals: pl.LazyFrame) -> pl.LazyFrame:
    """Per run, the figures of :func:`run_throughput` that add up over disjoint sets of a run's
    tasks: ``duplicates``, ``tasks``, ``segments``, ``restarts``, ``steady_intervals``, ``steady_records``,
    ``untimed_records``, ``step_timed_intervals``, ``steady_pauses`` (UInt32; 0 where ``intervals``
    have no ``paused``), ``aside_intervals`` and ``aside_off`` (steady intervals whose printed rate was
    set aside, :data:`INTERVAL_COLUMNS`' ``printed_rate``; those with ``printed_off``), their steps
    ``aside_steps`` and the seconds they took at the printed and the clock's rates (``aside_printed_s``,
    ``aside_clock_s``) and the steady intervals' ``steady_steps`` (Int64) and ``steady_seconds``
    (Float64) behind the mean rate."""
    steady = ~pl.col("warmup")
    paused = pl.col("paused") if "paused" in intervals.collect_schema().names() else pl.lit(False)
    # Intervals with both a known step gain and a known time (step-less records have neither). A time of
    # 0 counts: a clock printed in whole seconds (tqdm's [01:41<...]) shows most steps at no time at all,
    # their seconds in the interval that crosses the next tick; leaving their steps out made a 4.9 it/s
    # bar's mean rate 1 step a second. A negative time counts too: a clock that ran back over an interval
    # (analysis.coarse_clock) gives the time back that its neighbours took, and the sum is the clock's span.
    positive = steady & pl.col("d_seconds").is_not_null() & pl.col("d_step").is_not_null()
    names = intervals.collect_schema().names()
    printed = pl.col("printed_rate") if "printed_rate" in names else pl.lit(None, pl.Float64)
    off = pl.col("printed_off") if "printed_off" in names else pl.lit(False)
    aside = steady & printed.is_not_null()
    return intervals.group_by("run_id").agg(
        duplicates=(pl.col("copies") - 1).sum().cast(pl.UInt32),
        # each segment has one first interval (index 0), each task one first segment (0)
        tasks=(pl.col("interval_index").eq(0) & pl.col("segment").eq(0)).sum().cast(pl.UInt32),
        segments=pl.col("interval_index").eq(0).sum().cast(pl.UInt32),
        restarts=pl.col("restart").sum().cast(pl.UInt32),
        clock_setbacks=(pl.col("clock_back").sum() if "clock_back" in names else pl.lit(0)).cast(pl.UInt32),
        steady_intervals=pl.col("rate").filter(steady).drop_nulls().len().cast(pl.UInt32),
        step_timed_intervals=(steady & pl.col("step_timed") & pl.col("rate").is_not_null()).sum().cast(pl.UInt32),
        steady_pauses=(steady & paused & pl.col("rate").is_not_null()).sum().cast(pl.UInt32),
        steady_steps=pl.col("d_step").filter(positive).sum(),
        steady_seconds=pl.col("d_seconds").filter(positive).sum(),
        steady_records=steady.sum().cast(pl.UInt32),
        aside_intervals=aside.sum().cast(pl.UInt32),
        aside_off=(aside & off).sum().cast(pl.UInt32),
        aside_steps=pl.col("d_step").filter(aside).sum(),
        aside_printed_s=(pl.col("d_step") / printed).filter(aside).sum(),
        aside_clock_s=pl.col("d_seconds").filter(aside).sum(),
        # a record stating a step time (its local rate) is not untimed, even where it has no interval
        untimed_records=(
            pl.col("elapsed_s").is_null()
            & pl.col("timestamp").is_null()
            & pl.col("rate").is_null()
            & ~(pl.col("local_rate").is_finite() & (pl.col("local_rate") > 0)).fill_null(False)
        )
        .sum()
        .cast(pl.UInt32),
    )


def throughput_frame(
    records: pl.DataFrame,
    parts: pl.DataFrame,
    samples: dict[str, SteadyRates],
    lead: pl.LazyFrame | pl.DataFrame,
    seed: int = BOOTSTRAP_SEED,
    draws: int = BOOTSTRAP_DRAWS,
    leads: pl.DataFrame | None = None,
    kept: dict[str, np.ndarray] | None = None,
) -> pl.DataFrame:
    """:func:`run_throughput`'s frame from its parts: ``records`` (``run_id, records, last_step``),
    ``parts`` (:func:`run_parts`, summed per run where a run was taken in pieces), ``samples``
    (:func:`steady_samples`) and ``lead``: intervals holding at least each run's lead task's (each
    task's rows together); ``leads``: :func:`lead_rows` of ``lead`` if the caller has them. ``kept``,
    if given, receives each run's bootstrap draws of its steady rate (:func:`steady_draws`, ``seed``)."""
    lead_frame = lead if isinstance(lead, pl.DataFrame) else lead.collect(engine=IN_MEMORY)
    leads = lead_rows(lead_frame) if leads is None else leads
    trends = _trends(lead_frame, leads)
    rising = {run for run, (_, up, _) in trends.items() if up}
    samples = {run: values for run, values in samples.items() if run not in rising}
    rates = {run: values.steady() for run, values in samples.items()}
    # a run still speeding up at its end has not reached its steady rate: its latest level stands for it (a lower
    # bound, steady_assumption still_rising), as the run's own last third measured it
    rates.update({run: trends[run][2] for run in rising})
    stalls = {run: values.stalls() for run, values in samples.items()}
    frame = records.join(parts, on="run_id", how="left").with_columns(
        pl.col(
            "tasks",
            "steady_intervals",
            "steady_records",
            "untimed_records",
            "step_timed_intervals",
            "steady_pauses",
            "duplicates",
            "segments",
            "restarts",
            "clock_setbacks",
        ).fill_null(0),
        # a run whose steady rows all lack a rate has a steady rate of null, never "no row"
        steady_global_steps_per_s=pl.col("run_id").replace_strict(rates, default=None, return_dtype=pl.Float64),
        steady_stalls=pl.col("run_id").replace_strict(stalls, default=0, return_dtype=pl.UInt32),
        mean_global_steps_per_s=pl.when((pl.col("steady_records") > 0) & (pl.col("steady_seconds") > 0)).then(
            (pl.col("steady_steps") / pl.col("steady_seconds")).fill_nan(None)
        ),
        printed_set_aside=pl.when(pl.col("aside_intervals") > 0).then(
            pl.col("aside_steps") / pl.col("aside_printed_s")
        ),
        clock_beside=pl.when(pl.col("aside_intervals") > 0).then(pl.col("aside_steps") / pl.col("aside_clock_s")),
        printed_off_rounding=pl.when(pl.col("aside_intervals") > 0).then(
            2 * pl.col("aside_off") > pl.col("aside_intervals")
        ),
    )
    drawn = {run: steady_draws(values, run, seed, draws) for run, values in samples.items() if len(values) > 1}
    if kept is not None:
        kept.update(drawn)
    bounds = {run: percentile_interval(drawn[run]) if run in drawn else (None, None) for run in samples}
    frame = frame.with_columns(
        steady_ci_low=pl.col("run_id").replace_strict({k: v[0] for k, v in bounds.items()}, default=None),
        steady_ci_high=pl.col("run_id").replace_strict({k: v[1] for k, v in bounds.items()}, default=None),
        steady_rise=pl.col("run_id").replace_strict({k: v[0] for k, v in trends.items()}, default=None,
                                                    return_dtype=pl.Float64),
        still_rising=pl.col("run_id").is_in(list(rising)),
    )  # fmt: skip
    frame = frame.join(_startup(lead_frame, frame, leads), on="run_id", how="left")
    return frame.select([pl.col(name).cast(dtype) for name, dtype in THROUGHPUT_SCHEMA.items()]).sort("run_id")


#: The rows whose rates make a run's steady state: past warm-up; and in a run with none past warm-up, the
#: segments' first records that state their own rate. Such a record is a measurement over many steps (an
#: epoch's ms/step, a finished bar's it/s, a per-step time logged at step 20,900), not the start-up of
#: the interval before it: a log excerpt of one report still says how fast the run went.
STEADY_ROWS = ~pl.col("warmup") | (
    pl.col("warmup").all().over("run_id") & (pl.col("interval_index") == 0) & pl.col("rate").is_not_null()
)


def steady_rows(intervals: pl.DataFrame) -> pl.LazyFrame:
    """``intervals.lazy().filter(STEADY_ROWS)`` (:func:`interval_rates` rows), the run-wide part of
    :data:`STEADY_ROWS` taken run by run where each run's rows lie together: its window over the run id
    hashed every row, the largest cost of the steady sample."""
    every = _run_all(intervals, "warmup")
    if every is None:
        return intervals.lazy().filter(STEADY_ROWS)
    firsts = (pl.col("interval_index") == 0) & pl.col("rate").is_not_null()
    return intervals.with_columns(every).lazy().filter(~pl.col("warmup") | (pl.col(every.name) & firsts))


def _run_all(frame: pl.DataFrame, column: str) -> pl.Series | None:
    """On each row of ``frame``, ``pl.col(column).all().over("run_id")`` (Boolean ``column``, nulls
    ignored as ``all`` ignores them), named ``_all_<column>``; from each run's stretch of rows, without
    hashing the run ids. None where a run's rows are not one stretch."""
    spans = run_spans(frame)
    name = f"_all_{column}"
    if not spans:
        return pl.Series(name, [], dtype=pl.Boolean)
    offsets = np.fromiter((offset for offset, _ in spans), dtype=np.int64, count=len(spans))
    if frame.get_column("run_id").gather(offsets).n_unique() < len(spans):
        return None
    lengths = np.fromiter((length for _, length in spans), dtype=np.int64, count=len(spans))
    values = frame.get_column(column).fill_null(True).to_numpy()
    return pl.Series(name, np.repeat(np.logical_and.reduceat(values, offsets), lengths))


def steady_samples(steady: pl.LazyFrame | pl.DataFrame) -> dict[str, SteadyRates]:
    """``{run_id: steady interval rates}`` (global steps/s and each one's weight,
    :func:`tierscope.analysis.bootstrap.steady_rates`; in the rows' order; runs in the order they
    first appear) from :func:`steady_intervals`-like rows; those holding a pause left out where the rows
    have ``paused`` (:data:`NOT_PAUSED`)."""
    lazy = steady.lazy().filter(pl.col("rate").is_not_null())
    paused = "paused" in lazy.collect_schema().names()
    frame = lazy.select("run_id", "rate", STEADY_WEIGHT, *(["paused"] if paused else [])).collect(engine=IN_MEMORY)
    # straight to numpy per run: a list of Python floats would cost ~30 bytes per interval
    spans = run_spans(frame)
    if len({frame["run_id"][offset] for offset, _ in spans}) < len(spans):  # a run's rows apart: hashed
        frame = frame.filter(NOT_PAUSED).drop("paused") if paused else frame
        return {
            run: steady_rates(part["rate"].to_numpy(), part["weight"].to_numpy())
            for (run,), part in frame.group_by("run_id", maintain_order=True)
        }
    rates, weights = frame.get_column("rate").to_numpy(), frame.get_column("weight").to_numpy()
    # NOT_PAUSED run by run: a row not paused, or every (known) one of its run paused
    not_paused = None if not paused else (~frame.get_column("paused")).fill_null(False).to_numpy()
    all_paused = None if not paused else frame.get_column("paused").fill_null(True).to_numpy()
    samples = {}
    for offset, length in spans:
        held = slice(offset, offset + length)
        if not_paused is not None and all_paused is not None and not all_paused[held].all():
            samples[frame["run_id"][offset]] = steady_rates(
                rates[held][not_paused[held]], weights[held][not_paused[held]]
            )
        else:
            samples[frame["run_id"][offset]] = steady_rates(rates[held], weights[held])
    return samples


def interval_samples(intervals: pl.DataFrame) -> dict[str, SteadyRates]:
    """``steady_samples(steady_rows(intervals))`` (:func:`interval_rates` rows with ``paused``, each run's rows
    together), the same samples in the same order, taken from the columns as arrays run by run where each
    run's rows lie: no filter copies the run ids (a string a row) to find the runs again."""
    spans = run_spans(intervals)
    offsets = [offset for offset, _ in spans]
    runs = intervals.get_column("run_id").gather(offsets).to_list() if spans else []
    if len(set(runs)) < len(runs) or "paused" not in intervals.columns:
        return steady_samples(steady_rows(intervals))
    columns = intervals.select(
        past=(~pl.col("warmup")).fill_null(False),
        warm=pl.col("warmup").fill_null(True),
        first=((pl.col("interval_index") == 0) & pl.col("rate").is_not_null()).fill_null(False),
        rated=pl.col("rate").is_not_null(),
        rate=pl.col("rate"),
        weight=STEADY_WEIGHT,
        not_paused=(~pl.col("paused")).fill_null(False),
        all_paused=pl.col("paused").fill_null(True),
    )
    past, warm, first, rated, rate, weight, not_paused, all_paused = (
        columns.get_column(name).to_numpy() for name in columns.columns
    )
    samples = {}
    for run, (offset, length) in zip(runs, spans, strict=True):
        held = slice(offset, offset + length)
        # STEADY_ROWS: past warm-up; where the whole run is warm-up, the segments' first records with a rate
        kept = past[held] | (first[held] if warm[held].all() else False)
        kept &= rated[held]
        if not kept.any():
            continue
        if not all_paused[held][kept].all():  # NOT_PAUSED: a row not paused, or every one of its run paused
            kept &= not_paused[held]
        samples[run] = steady_rates(rate[held][kept], weight[held][kept])
    return samples


#: The candidate steady intervals (rows with a rate) the steady rate keeps: those that hold no pause
#: (:func:`with_pauses`; its time is badput, goodput's), unless every one of the run holds one (a trainer
#: that evaluates at each logged step: then the rate includes them, as ``summary`` says).
NOT_PAUSED = ~pl.col("paused") | pl.col("paused").all().over("run_id")


#: A steady interval's length in the steady rate: its global steps, else the steps its seconds take at
#: its own rate (NaN: unknown, a step-less record's without a time; counted as the run's median known one).
STEADY_WEIGHT = (
    pl.coalesce(
        pl.when(pl.col("d_step") > 0).then(pl.col("d_step").cast(pl.Float64)),
        pl.when((pl.col("d_seconds") > 0) & (pl.col("rate") > 0)).then(pl.col("d_seconds") * pl.col("rate")),
    )
    .fill_null(float("nan"))
    .alias("weight")
)


def task_firsts(intervals: pl.LazyFrame) -> pl.LazyFrame:
    """The first interval of each task of ``intervals`` (:func:`interval_rates` rows): one row per task,
    for what needs only the tasks (:func:`lead_tasks`) at a fraction of the rows."""
    return intervals.filter((pl.col("segment") == 0) & (pl.col("interval_index") == 0))


def task_rows(intervals: pl.DataFrame) -> pl.DataFrame:
    """Where each task's rows lie in ``intervals`` (:func:`interval_rates` rows, each task's together):
    ``run_id``, ``role``, ``task_index``, ``offset`` and ``length`` (Int64), one row per task in the
    rows' order, so that ``intervals.slice(offset, length)`` is the task's intervals without a join."""
    starts = intervals.select(
        offset=pl.arg_where((pl.col("segment") == 0) & (pl.col("interval_index") == 0)).cast(pl.Int64)
    ).to_series()
    return (
        intervals.select(TASK)[starts]
        .with_columns(offset=starts)
        .with_columns(length=pl.col("offset").shift(-1).fill_null(intervals.height) - pl.col("offset"))
    )


def lead_rows(intervals: pl.DataFrame) -> pl.DataFrame:
    """Where each run's lead task's rows lie in ``intervals`` (as :func:`task_rows`): ``run_id``,
    ``role``, ``task_index``, ``offset``, ``length``, one row per run, in the rows' order. A
    single-process log's task names no role or index: its null key is its key (``nulls_equal``)."""
    tasks = task_rows(intervals)
    return (
        lead_tasks(tasks.lazy()).collect(engine=IN_MEMORY).join(tasks, on=list(TASK), nulls_equal=True).sort("offset")
    )


def lead_tasks(intervals: pl.LazyFrame) -> pl.LazyFrame:
    """``run_id, role, task_index`` of each run's lead task: master/chief (lowest index), else the
    training task of lowest index. Only its clock starts with the job: a late worker's would understate."""
    lead_order = (
        pl.when(pl.col("role").is_in(["master", "chief"])).then(pl.lit(0, pl.UInt8)).otherwise(pl.lit(1, pl.UInt8))
    )
    return (
        intervals.select("run_id", "role", "task_index")
        .unique()
        .sort(["run_id", lead_order, "task_index", "role"])
        .group_by("run_id", maintain_order=True)
        .first()
    )


def _trends(intervals: pl.DataFrame, leads: pl.DataFrame) -> dict[str, tuple[float | None, bool, float | None]]:
    """``{run_id: (rise, still rising, latest level)}`` (:mod:`tierscope.analysis.steadiness`) of each run's lead
    task's steady interval rates in log order, from ``intervals`` and their :func:`lead_rows` ``leads``; those
    that hold a pause left out as the steady rate leaves them out (:data:`NOT_PAUSED`). The latest level is the
    steady rate (:func:`~tierscope.analysis.bootstrap.read`) of the rates' last third, global steps/s."""
    # the columns as arrays once, each lead's rows sliced from them: no query a run
    rate = intervals.get_column("rate")
    steady = (~intervals.get_column("warmup") & rate.is_not_null()).fill_null(False).to_numpy()
    rates = rate.cast(pl.Float64).to_numpy()
    paused = intervals.get_column("paused") if "paused" in intervals.columns else None
    # NOT_PAUSED over the lead's steady rows: a row not paused, or every (known) one paused
    not_paused = None if paused is None else (~paused).fill_null(False).to_numpy()
    all_paused = None if paused is None else paused.fill_null(True).to_numpy()
    found = {}
    for run_id, *_, offset, length in leads.iter_rows():
        kept = steady[offset : offset + length]
        if not_paused is not None and all_paused is not None and not all_paused[offset : offset + length][kept].all():
            kept = kept & not_paused[offset : offset + length]
        lead = rates[offset : offset + length][kept]
        found[run_id] = (rise(lead), still_rising(lead), latest_level(lead))
    return found


def _startup(intervals: pl.LazyFrame | pl.DataFrame, runs: pl.DataFrame, leads: pl.DataFrame | None) -> pl.DataFrame:
    """``run_id, startup_s`` of :func:`run_throughput` from ``intervals`` (each task's rows together) and
    ``runs``' steady rates; ``leads``: :func:`lead_rows` of ``intervals`` (None: found here)."""
    frame = intervals if isinstance(intervals, pl.DataFrame) else intervals.collect(engine=IN_MEMORY)
    leads = lead_rows(frame) if leads is None else leads
    # The lead's first steady interval of its first segment: the first in the rows' (log) order, where
    # the segment's interval index rises; within the lead's own rows, sliced where they lie.
    steady = ~pl.col("warmup") & (pl.col("segment") == 0)
    firsts = [frame.slice(offset, length).filter(steady).head(1) for *_, offset, length in leads.iter_rows()]
    first_steady = pl.concat(firsts) if firsts else frame.clear()
    return first_steady.join(runs.select("run_id", "steady_global_steps_per_s"), on="run_id").select(
        "run_id",
        startup_s=(pl.col("elapsed_s") - pl.col("step") / pl.col("steady_global_steps_per_s")).clip(lower_bound=0),
    )
