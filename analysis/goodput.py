"""Goodput per run: how much of the time a job was billed for went into training progress that lasted.

In ML Goodput Measurement's accounting and with its names (AI-Hypercomputer/ml-goodput-measurement:
goodput = productive time / job lifetime, with a badput breakdown; a slow step no event explains is
productive and reported as step-time deviation), derived from the records and events a job already
wrote rather than from an instrumented recorder. All times in seconds, on the clock of the run's
**lead task** (master/chief 0, else its first training task,
:func:`tierscope.analysis.throughput.lead_tasks`): it starts with the job and logs the shared global
step. Steps a bucket needs a time for (start-up, wasted progress, restarts) are valued at the run's
steady-state rate ``R`` (global steps/s, :mod:`tierscope.analysis.throughput`).

- **Clock** (:mod:`tierscope.analysis.clock`, shared with time to target): the records' timestamps
  when the lead's records all have one (the origin: the run's first ``started`` event, else the
  first record's timestamp minus its ``elapsed_s``, else unknown); else ``elapsed_s`` (the task's
  own clock from its process start) when the lead ran as one segment; else the running sum of the
  seconds each record states since the one before (``interval_s``: a Keras epoch's time; origin unknown)
  when the lead ran as one segment; else none (restarts on an unknown clock).
- **Lifetime**: origin to the run's last ``finished``/``failed`` event, else to the lead's last record.
- **Start-up**: origin to the first record, minus the time its steps take at ``R``
  (``t_first - (step_first - base) / R``, clipped at 0; ``base`` the step a ``restored`` event
  before it gives, else 0). With the lead's ``first_step`` event (:mod:`tierscope.contract`) it
  ends there instead (``t_first_step - (its step - base) / R``) and the first record's rest is
  warm-up; with its ``initialized`` event too it splits into **initialisation**
  (``badput_init_s``: origin to ``initialized``: launching the processes, importing the framework,
  joining the cluster, loading the data, building the model, restoring a checkpoint) and
  **program start-up** (``badput_program_startup_s``: the rest: tracing the step function, the
  input pipeline's first batch). Both are parts of start-up, null without those events.
- **Step-time deviation** (``step_time_deviation_s``, the library's name): the time the run's
  intervals (not a segment's first record) took beyond their steps at the **ideal step time**
  (``ideal_step_time_s``), less the checkpoint and evaluation badput in them. The ideal step time is
  the library's rule (``compute_ideal_step_time`` in ml_goodput_measurement/src/goodput_utils.py,
  AI-Hypercomputer/ml-goodput-measurement at 53469c101b304fda3619f45253b00fcbe66b3dfe): the mean of
  the step times at or below their median + 3 x MAD (median absolute deviation, unscaled), here each
  interval's seconds per step (``d_seconds / d_step``) as one step time. The library drops step
  times under 1 s first; an interval's mean over 100 steps of a fast model is under 1 s, so that
  filter is left out. The deviation is productive time, as in the library: a slow step with no
  recorded event counts as productive there. tierscope's finer reading of it, measured against the
  steady rate ``R``, is its breakdown:
  - **warm-up** (``deviation_warmup_s``): in the warm-up intervals after a segment's first record
    (:mod:`tierscope.analysis.throughput`), the time beyond what their steps take at ``R``;
  - **stalls** (``deviation_stalls_s``): the stalls no checkpoint or evaluation event explains (input,
    unknown), see below. The rest of the deviation is ordinary variation about the ideal step time.
- **Stalls**: a steady interval taking more than :data:`STALL_FACTOR` times what its steps take
  at ``R`` (beyond the clock's resolution, 1 s on a clock of whole seconds: :func:`clock_resolution`;
  a tqdm bar's elapsed time puts most steps of a fast run at no time and the one crossing a tick at
  1 s, which is no stall) has its excess classified by the events of the run's training tasks (and the job's)
  in it (:func:`stall_classes`): a
  **checkpoint** save (``checkpoint_begin``/``_end``, from the trainer or a log's ``Saving
  checkpoints for N`` line; badput ``badput_checkpoint_s``, the library's unproductive checkpoint
  time), an **evaluation** (``eval_begin``/``_end``, ``Starting evaluation``; ``badput_eval_s``, the
  library's custom badput event), or **other** (input, unknown: no such event; productive, in the
  deviation). An event belongs to the interval whose steps
  follow it (its ``step`` in ``[previous record's step, the record's step)``; on a timestamp
  clock also its time in the interval). A begin and an end event give a duration, which is
  what the class gets of the excess (the rest is other); a lone line (a log that prints no end)
  gets the class all of it, shared with another lone class alike. ``badput_checkpoint_s`` and
  ``badput_eval_s`` are null when the log cannot say: it has stalls, no event of that class and
  no ``initialized`` event (the mark of a trainer, like tierscope's, that logs every save and
  evaluation it makes); as in the library, what a log does not record counts as productive.
- **Restarts** (the library's infrastructure recovery from disruption): between a segment's last
  record and the next one's first, the time beyond
  what that first record's steps take from the resumed step at ``R``. The resumed step is the
  ``restored`` event's (a training task's, not an evaluator's: the highest restored step below the
  segment's first, in the gap on a timestamp clock); without one, one logging interval (the
  lead's median step interval) before its first record.
- **Wasted progress** (the library's wasted progress from disruption): steps done again after
  resuming from a checkpoint behind the highest
  step reached (that step minus the resumed one), at ``R``.
- **Beyond the lead**: steps other training tasks logged past the lead's last record (up to the run's
  ``last_step``) are taken to run at ``R`` after it, on the lead's clock (as
  :mod:`tierscope.analysis.target` places other tasks' records): productive time, and the end of the
  seen span when no end event closes it (capped at that event when one does).
- **Tail**: the lead's last record (plus the steps beyond it) to the run's last ``finished``/``failed`` event.
- **Productive time** (the library's): every interval's time but the checkpoint and evaluation
  badput in it, plus the first records' steps at ``R``, minus the wasted progress.
  **Goodput** = productive time / lifetime. ``productive_at_steady_s`` is the stricter reading that
  values the warm-up and stalled intervals at ``R`` alone (productive time minus
  ``deviation_warmup_s`` and ``deviation_stalls_s``): the steps done over the lifetime at the
  steady rate, behind a sustained rate (``productive_at_steady_s / lifetime_s x R``).

A bucket the log cannot show is null, never 0: no end event (tail), no clock origin
(start-up), restarts without timestamps. Goodput is then over the lifetime that is seen, and
``goodput_unobserved`` names those null buckets (:data:`SEEN_BUCKETS`; the parts of start-up are a
breakdown of a bucket, not buckets; a null checkpoint or evaluation bucket is time counted as
productive, as the library counts what a job does not record). Columns: :data:`GOODPUT_SCHEMA`
(``badput_<bucket>_s`` and ``_share`` for :data:`BUCKETS` and :data:`PARTS`), also in ``summary --json``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import polars as pl

from tierscope.analysis.bootstrap import numpy_median
from tierscope.analysis.clock import lead_clock, seconds_between
from tierscope.analysis.printed_rates import WHOLE_SECOND
from tierscope.analysis.throughput import lead_rows
from tierscope.contract import (
    CHECKPOINT_BEGIN,
    CHECKPOINT_END,
    EVAL_BEGIN,
    EVAL_END,
    FAILED,
    FINISHED,
    FIRST_STEP,
    INITIALIZED,
    RESTORED,
    STARTED,
)

#: An interval taking more than this many times its steps' time at the steady rate is a stall.
#: Why 1.25 and not more: a logging interval is often 100 steps (20 s at 5 steps/s), and a 10 s
#: checkpoint save makes it only 1.5 times as long; noise of a few % never comes near 25 %.
STALL_FACTOR = 1.25
#: The badput buckets, in the order of a stacked bar (ML Goodput Measurement's: start-up is its
#: initialization and program start-up, restarts its recovery from disruption; eval its custom event).
BUCKETS = ("startup", "checkpoint", "eval", "restarts", "wasted", "tail")
#: The buckets whose null means the lifetime is not seen whole (``goodput_unobserved``).
SEEN_BUCKETS = ("startup", "restarts", "tail")
#: What a stall can be, by the events that begin and end it.
STALL_CLASSES: dict[str, tuple[str, str]] = {
    "checkpoint": (CHECKPOINT_BEGIN, CHECKPOINT_END),
    "eval": (EVAL_BEGIN, EVAL_END),
}
#: The breakdown of the start-up bucket.
PARTS = ("init", "program_startup")
#: The breakdown of the step-time deviation (``deviation_<part>_s``), measured against the steady rate.
DEVIATION_PARTS = ("warmup", "stalls")
#: How many MADs above the median a step time may lie and still count toward the ideal step time
#: (ML Goodput Measurement's ``compute_ideal_step_time``, see the module docstring).
IDEAL_MADS = 3.0
#: Events that end a run (their time ends its lifetime).
END_EVENTS = (FINISHED, FAILED)
#: Seconds an event's timestamp may lie outside its interval (logs that print whole seconds).
CLOCK_SLACK_S = 1.0

#: Columns of :func:`run_goodput` (shares are of ``lifetime_s``).
GOODPUT_SCHEMA: dict[str, pl.DataType] = {
    "run_id": pl.String(),
    "lifetime_s": pl.Float64(),
    "productive_s": pl.Float64(),
    "goodput": pl.Float64(),  # productive_s / lifetime_s
    **{f"badput_{b}_s": pl.Float64() for b in BUCKETS},
    **{f"badput_{b}_share": pl.Float64() for b in BUCKETS},
    # badput_init_s + badput_program_startup_s = badput_startup_s
    **{f"badput_{b}_s": pl.Float64() for b in PARTS},
    **{f"badput_{b}_share": pl.Float64() for b in PARTS},
    "ideal_step_time_s": pl.Float64(),  # seconds per global step, the library's rule
    "step_time_deviation_s": pl.Float64(),  # productive seconds beyond the steps at the ideal step time
    **{f"deviation_{b}_s": pl.Float64() for b in DEVIATION_PARTS},  # its breakdown against the steady rate
    "productive_at_steady_s": pl.Float64(),  # productive_s less deviation_warmup_s and deviation_stalls_s
    "stalls": pl.UInt32(),  # stalled intervals
    "goodput_clock": pl.String(),  # timestamp / elapsed / interval (null: no clock)
    "clock_missing": pl.String(),  # why the lead has no clock: a key of analysis.clock.CLOCK_MISSING (null: it has)
    "goodput_unobserved": pl.String(),  # the null buckets, comma-separated (null: none)
    "goodput_reason": pl.String(),  # why goodput is withheld though a lifetime was seen (null: it is not)
    # run_throughput's startup_s on this clock (origin known only): summary's where the lead logs no elapsed_s
    "clock_startup_s": pl.Float64(),
}

#: The events table's columns :func:`run_goodput` reads, with their dtypes.
EVENT_SCHEMA: dict[str, pl.DataType] = {
    "run_id": pl.String(),
    "event": pl.String(),
    "role": pl.String(),
    "task_index": pl.Int32(),
    "step": pl.Int64(),
    "timestamp": pl.Datetime("us", "UTC"),
}
EVENT_COLUMNS = tuple(EVENT_SCHEMA)
#: Roles whose events can hold up training (an evaluator's or a parameter server's cannot).
_STALLING_ROLES = ("master", "chief", "worker")


def _first_of(events: pl.DataFrame, name: str) -> tuple[object, int | None] | None:
    """``(timestamp, step)`` of the earliest ``name`` event with a time, or None."""
    if events.height == 0:
        return None
    hits = events.filter((pl.col("event") == name) & pl.col("timestamp").is_not_null()).sort("timestamp")
    return None if hits.height == 0 else (hits["timestamp"][0], hits["step"][0])


def _pairs(events: pl.DataFrame, begin: str, end: str) -> list[tuple[int, str, object, float | None]]:
    """``(step, task, timestamp, seconds)`` per occurrence of one stall class: a begin event with the
    task's next end event after it (``seconds`` their distance), or a lone begin or end (None)."""
    found: list[tuple[int, str, object, float | None]] = []
    if events.height == 0:
        return found
    ours = events.filter(pl.col("event").is_in([begin, end]) & pl.col("step").is_not_null())
    for (role, index), part in ours.group_by("role", "task_index", maintain_order=True):
        task = f"{role}/{index}"
        open_begin: tuple[int, object] | None = None
        for name, step, stamp in (
            part.sort("timestamp", "step", nulls_last=True).select("event", "step", "timestamp").iter_rows()
        ):
            if name == begin:
                if open_begin is not None:
                    found.append((open_begin[0], task, open_begin[1], None))
                open_begin = (step, stamp)
            elif open_begin is not None and stamp is not None and open_begin[1] is not None:
                found.append((open_begin[0], task, open_begin[1], (stamp - open_begin[1]).total_seconds()))
                open_begin = None
            else:
                if open_begin is not None:
                    found.append((open_begin[0], task, open_begin[1], None))
                    open_begin = None
                found.append((step, task, stamp, None))
        if open_begin is not None:
            found.append((open_begin[0], task, open_begin[1], None))
    return found


def _interval_of(
    step: int, stamp: object, steps: np.ndarray, starts: np.ndarray, t: np.ndarray | None, origin: object
) -> list[int]:
    """The intervals (row indices, not a segment's first) an event at ``step`` (and ``stamp``) belongs to."""
    rows = []
    for k, lo in enumerate(starts):
        hi = starts[k + 1] if k + 1 < len(starts) else len(steps)
        j = lo + int(np.searchsorted(steps[lo:hi], step, side="right"))
        if j == lo or j >= hi or steps[j - 1] > step:
            continue
        if t is not None and stamp is not None:
            at = (stamp - origin).total_seconds()
            if not t[j - 1] - CLOCK_SLACK_S <= at <= t[j] + CLOCK_SLACK_S:
                continue
        rows.append(j)
    return rows


def stall_classes(
    excess: np.ndarray,
    stalled: np.ndarray,
    occurrences: dict[str, list[tuple[int, str, object, float | None]]],
    place: Callable[[int, object], list[int]],
) -> tuple[dict[str, float], float]:
    """Seconds of stalls per class (:data:`STALL_CLASSES`) and the rest (other), from each stalled
    interval's ``excess`` and the class ``occurrences`` (:func:`_pairs`) ``place`` puts in intervals."""
    measured: dict[int, dict[str, dict[str, float]]] = {}  # row -> class -> task -> seconds
    lone: dict[int, set[str]] = {}
    for name, found in occurrences.items():
        for step, task, stamp, seconds in found:
            for j in place(step, stamp):
                if not stalled[j]:
                    continue
                if seconds is None:
                    lone.setdefault(j, set()).add(name)
                else:
                    by_task = measured.setdefault(j, {}).setdefault(name, {})
                    by_task[task] = by_task.get(task, 0.0) + max(seconds, 0.0)
    totals = dict.fromkeys(occurrences, 0.0)
    rows = np.flatnonzero(stalled)
    # What each stalled interval leaves to other: its whole excess unless an event lies in it.
    rests = excess[rows].astype(np.float64)
    for n in np.flatnonzero(np.isin(rows, [*measured, *lone])):
        j, e = int(rows[n]), float(rests[n])
        # tasks save in parallel: a class holds training up for its slowest task's time
        durations = {c: max(d.values()) for c, d in measured.get(j, {}).items()}
        unmeasured = lone.get(j, set()) - set(durations)
        total = sum(durations.values())
        scale = min(1.0, e / total) if total > 0 else 0.0
        for c, d in durations.items():
            totals[c] += d * scale
        rest = e - total * scale
        if unmeasured:
            for c in unmeasured:
                totals[c] += rest / len(unmeasured)
        rests[n] = 0.0 if unmeasured else rest
    return totals, _running_total(rests)


def _one_run(
    lead: pl.DataFrame, rate: float, events: pl.DataFrame, lead_task: tuple[str, int], last_step: float | None = None
) -> dict[str, object]:
    """The buckets of one run from its lead task's intervals (log order), its steady rate and its events."""
    # A run without events (its log alone) skips their queries, which would each find none (six, ~2 ms a run).
    has_events = events.height > 0
    started = ended = None
    own = events
    if has_events:
        starts_evt = events.filter(pl.col("event") == STARTED)["timestamp"].drop_nulls()
        ends_evt = events.filter(pl.col("event").is_in(END_EVENTS))["timestamp"].drop_nulls()
        started = starts_evt.min() if starts_evt.len() else None
        ended = ends_evt.max() if ends_evt.len() else None
        # eq_missing: a single-process log's task and its events name no role or index (both null).
        own = events.filter(pl.col("role").eq_missing(lead_task[0]) & pl.col("task_index").eq_missing(lead_task[1]))

    steps = lead["step"].to_numpy().astype(float)
    first = lead["interval_index"].to_numpy() == 0
    warm = lead["warmup"].to_numpy() & ~first
    d_step = lead["d_step"].cast(pl.Float64).fill_null(0.0).to_numpy()
    expected = d_step / rate
    d_seconds = lead["d_seconds"].fill_null(0.0).to_numpy()
    if "clock_back" in lead.columns:  # a clock jump's interval of unknown time made its steps: at the steady rate
        unknown = lead["clock_back"].fill_null(False).to_numpy() & lead["d_seconds"].is_null().to_numpy()
        d_seconds = np.where(unknown, expected, d_seconds)
    excess = d_seconds - expected  # each interval's time beyond what its steps take at the steady rate
    steady = ~first & ~warm
    # A clock of whole seconds (tqdm's [01:41<...], a %H:%M:%S stamp) puts a step that crosses a tick at a whole
    # second and the steps beside it at none: an interval is a stall only beyond what that rounding explains.
    stalled = steady & (d_seconds - clock_resolution(d_seconds[~first]) > STALL_FACTOR * expected)
    out: dict[str, object] = {"stalls": int(stalled.sum())}
    warmup = float(np.clip(excess[warm], 0, None).sum())
    steady_time = float(d_seconds[steady & ~stalled].sum()) + float(expected[warm | stalled].sum())

    clock = lead_clock(lead, started, ended, intervals=True)
    t, origin_known, end, origin = clock.seconds, clock.origin_known, clock.end, clock.origin
    timed = clock.name == "timestamp"

    starts = np.flatnonzero(first)
    stalling = restores = events
    if has_events:
        stalling = events.filter(pl.col("role").is_in(_STALLING_ROLES) | pl.col("role").is_null())
        # an evaluator restores every checkpoint it evaluates: only a training task's restore resumes training
        restores = stalling.filter((pl.col("event") == RESTORED) & pl.col("step").is_not_null())

    restored = _restored_steps(restores, steps, starts, t if timed else None, origin)
    interval = float(numpy_median(d_step[~first])) if (~first).any() else 0.0
    # Each segment's base: the step it resumed from (its restored event's, else one logging interval
    # before its first record; the first segment's else 0). Sums are running totals in segment order.
    firsts = steps[starts]
    known = ~np.isnan(restored)
    bases = np.where(known, restored, np.maximum(firsts - interval, 0.0))
    if len(starts):
        bases[0] = restored[0] if known[0] else 0.0
    # the highest step reached before each later segment: the running maximum of the segments' maxima
    # (a segment holding a step-less record, NaN here, adds none, as a loop of max() skips a NaN)
    tops = np.maximum.reduceat(steps, starts) if len(starts) else steps[:0]
    highest = np.maximum.accumulate(np.where(np.isnan(tops), -np.inf, tops))[:-1]
    wasted_steps = _running_total(np.maximum(highest - bases[1:], 0.0))
    restarts = 0.0
    if t is not None and len(starts) > 1:
        later = starts[1:]
        restarts = _running_total(np.maximum(t[later] - t[later - 1] - (steps[later] - bases[1:]) / rate, 0.0))
    first_progress = _running_total((firsts - bases) / rate)
    out["badput_wasted_s"] = wasted_steps / rate
    out["badput_restarts_s"] = restarts if t is not None else None
    out["badput_init_s"] = out["badput_program_startup_s"] = None
    # Other tasks may log steps past the lead's last record (the 2016 STANDARD_1 master logged step 700,
    # its workers went on to 1000): they ran at R after it, as time to target places them too.
    beyond = max(float(last_step) - steps[-1], 0.0) / rate if last_step is not None else 0.0
    if t is None:
        out.update(badput_startup_s=None, badput_tail_s=None, lifetime_s=None)
    else:
        i0, base0 = starts[0], bases[0]
        startup = max(t[i0] - (steps[i0] - base0) / rate, 0.0) if origin_known else None
        first_step = _first_of(own, FIRST_STEP) if timed and origin_known else None
        if first_step is not None and first_step[1] is not None and first_step[1] <= steps[i0]:
            at = (first_step[0] - origin).total_seconds()
            startup = max(at - (first_step[1] - base0) / rate, 0.0)
            # the first record's interval after the first step: warm-up
            warmup += max(t[i0] - at - (steps[i0] - first_step[1]) / rate, 0.0)
            init = _first_of(own, INITIALIZED)
            if init is not None:
                out["badput_init_s"] = min(max((init[0] - origin).total_seconds(), 0.0), startup)
                out["badput_program_startup_s"] = startup - out["badput_init_s"]
        out["badput_startup_s"] = startup
        if end is not None:
            beyond = min(beyond, max(end - t[-1], 0.0))
        last = t[-1] + beyond
        out["badput_tail_s"] = max(end - last, 0.0) if end is not None else None
        begin = 0.0 if origin_known else t[i0] - (steps[i0] - base0) / rate  # the seen span starts at the first step
        out["lifetime_s"] = (end if end is not None else last) - begin
    out["deviation_warmup_s"] = warmup
    out["clock_startup_s"] = _clock_startup(lead, steps, t if origin_known else None, rate)

    occurrences = {c: _pairs(stalling, b, e) for c, (b, e) in STALL_CLASSES.items()}

    def place(step: int, stamp: object) -> list[int]:
        return _interval_of(step, stamp, steps, starts, t if timed else None, origin)

    classes, other = stall_classes(excess, stalled, occurrences, place)
    instrumented = has_events and own.filter(pl.col("event") == INITIALIZED).height > 0
    for c in STALL_CLASSES:
        seen = bool(occurrences[c]) or instrumented or not stalled.any()
        out[f"badput_{c}_s"] = classes[c] if seen else None
    out["deviation_stalls_s"] = other
    out["goodput_clock"] = clock.name
    out["clock_missing"] = clock.missing
    out["productive_at_steady_s"] = steady_time + first_progress + beyond - out["badput_wasted_s"]
    # the library's productive time: a slow step no event explains is productive, its step-time deviation
    out["productive_s"] = out["productive_at_steady_s"] + warmup + other
    timed_steps = ~first & (d_step > 0) & (d_seconds > 0)
    ideal = ideal_step_time(d_seconds[timed_steps] / d_step[timed_steps])
    out["ideal_step_time_s"] = ideal
    out["step_time_deviation_s"] = (
        None
        if ideal is None
        else float(d_seconds[timed_steps].sum() - d_step[timed_steps].sum() * ideal) - sum(classes.values())
    )
    return out


def clock_resolution(seconds: np.ndarray) -> float:
    """How finely a task's clock reads its intervals (``seconds``, its intervals' lengths; NaN: unknown):
    :data:`~tierscope.analysis.printed_rates.WHOLE_SECOND` where every known one is a whole number of seconds
    (a clock printing whole seconds), else 0 (a finer clock's rounding is below any stall)."""
    known = seconds[np.isfinite(seconds)]
    # the first few read first: a finer clock shows at once, without a pass over every interval
    whole = known.size > 0 and all(bool(np.all(np.abs(k - np.round(k)) < 1e-9)) for k in (known[:16], known))
    return WHOLE_SECOND if whole else 0.0


def ideal_step_time(step_times: np.ndarray) -> float | None:
    """ML Goodput Measurement's ideal step time (seconds): the mean of ``step_times`` (seconds) at or below
    their median + :data:`IDEAL_MADS` x their median absolute deviation; None when there are none.
    The library's rule (``compute_ideal_step_time``, see the module docstring) without its drop of
    step times under 1 s, which here are means over a logging interval."""
    if not len(step_times):
        return None
    median = float(numpy_median(step_times))
    mad = float(numpy_median(np.abs(step_times - median)))
    return float(step_times[step_times <= median + IDEAL_MADS * mad].mean())


def _clock_startup(lead: pl.DataFrame, steps: np.ndarray, t: np.ndarray | None, rate: float) -> float | None:
    """:func:`tierscope.analysis.throughput.run_throughput`'s ``startup_s`` on the lead's clock: ``t`` (seconds
    from the job's start, None: unknown) at the lead's first steady record of its first segment, less its
    step at ``rate``; clipped at 0; None without such a record with a step."""
    if t is None:
        return None
    steady = np.flatnonzero(~lead["warmup"].to_numpy() & (lead["segment"].to_numpy() == 0))
    if not steady.size or np.isnan(steps[steady[0]]) or np.isnan(t[steady[0]]):
        return None
    return max(float(t[steady[0]] - steps[steady[0]] / rate), 0.0)


def _running_total(values: np.ndarray) -> float:
    """The sum of ``values`` added one after another (as a loop would: a figure stays the same to the
    last bit), 0.0 when empty."""
    return float(np.cumsum(values)[-1]) if len(values) else 0.0


def _restored_steps(
    restores: pl.DataFrame, steps: np.ndarray, starts: np.ndarray, t: np.ndarray | None, origin: object
) -> np.ndarray:
    """Per segment (first row ``starts[k]``), the step a ``restored`` event says it resumed from (NaN: none):
    the highest restored step below the segment's first, on a timestamp clock (``t``, seconds from
    ``origin``) only an event in the gap before it (after the previous record, up to the first)."""
    found = np.full(len(starts), np.nan)
    if restores.height == 0:
        return found
    restored = restores["step"].to_numpy().astype(float)
    at = seconds_between(restores["timestamp"], origin) if t is not None else None
    for k, i in enumerate(starts):
        # below a step-less record's (NaN) is every step, as polars orders NaN above all numbers
        hit = restored < steps[i] if not np.isnan(steps[i]) else np.ones(len(restored), dtype=bool)
        if at is not None:
            after = t[i - 1] if k > 0 else -np.inf
            hit &= (at > after - CLOCK_SLACK_S) & (at <= t[i] + CLOCK_SLACK_S)
        if hit.any():
            found[k] = restored[hit].max()
    return found


def run_goodput(
    intervals: pl.DataFrame, throughput: pl.DataFrame, events: pl.DataFrame, leads: pl.DataFrame | None = None
) -> pl.DataFrame:
    """Goodput and badput of each run of ``intervals`` (:func:`tierscope.analysis.throughput.collect_intervals`,
    in log order per task) with a steady rate in ``throughput``
    (:data:`tierscope.analysis.throughput.THROUGHPUT_SCHEMA`): :data:`GOODPUT_SCHEMA`, one row per such
    run, sorted by run id. ``events``: the events table's :data:`EVENT_COLUMNS` (any runs); ``leads``:
    :func:`tierscope.analysis.throughput.lead_rows` of ``intervals`` if the caller has them."""
    rates = throughput.filter(pl.col("steady_global_steps_per_s") > 0).select("run_id", "steady_global_steps_per_s")
    # The highest global step any task logged: the throughput's (over every stored record, so never
    # below the intervals', which are some of them), else the intervals' (a run whose throughput
    # row has none). A run taken in pieces passes only its lead's intervals.
    highest = dict(throughput.filter(pl.col("last_step").is_not_null()).select("run_id", "last_step").iter_rows())
    leads = lead_rows(intervals) if leads is None else leads  # each lead's rows, sliced where they lie
    # every run of the intervals has a lead: only runs the throughput gives no step are read (a null
    # run id is never in ``is_in``'s list), not a pass hashing every row's run id
    unknown = [r for r in leads.get_column("run_id").unique().to_list() if r is not None and r not in highest]
    if unknown:
        highest |= {
            r: a if a is not None and np.isfinite(a) else None
            for r, a in intervals.filter(pl.col("run_id").is_in(unknown))
            .group_by("run_id")
            .agg(pl.col("step").max())
            .iter_rows()
        }
    rows = []
    by_run = dict(rates.iter_rows())
    ours = events.filter(pl.col("run_id").is_in(list(by_run)))
    per_run = {r: part for (r,), part in ours.group_by("run_id")}
    empty = events.clear()
    for run_id, role, index, offset, length in leads.iter_rows():
        if run_id not in by_run:
            continue
        part = intervals.slice(offset, length)
        row = _one_run(part, by_run[run_id], per_run.get(run_id, empty), (role, index), highest.get(run_id))
        # A lead whose segment starts with a step-less record (rates logged apart from steps, or no
        # step at all) places no progress: its goodput is unobserved (no row), not NaN.
        if not np.isfinite(row["productive_s"]):
            continue
        rows.append({"run_id": run_id, **row})
    frame = pl.DataFrame(
        rows, schema={k: v for k, v in GOODPUT_SCHEMA.items() if not k.endswith("_share") and k != "goodput_reason"}
    )
    frame = frame.with_columns(goodput_reason=goodput_reason()).with_columns(
        # productive time is part of the lifetime: within the slack, what is over is the clock's rounding
        productive_s=pl.when(pl.col("goodput_reason").is_null()).then(pl.min_horizontal("productive_s", "lifetime_s")),
    )
    frame = frame.with_columns(
        goodput=pl.when(pl.col("goodput_reason").is_null()).then(pl.col("productive_s") / pl.col("lifetime_s")),
        goodput_unobserved=pl.concat_str(
            [pl.when(pl.col(f"badput_{b}_s").is_null()).then(pl.lit(b)) for b in SEEN_BUCKETS],
            separator=",",
            ignore_nulls=True,
        ).replace("", None),
        # a lifetime of 0 s has no shares (0 / 0), as it has no goodput: its reason says why
        **{
            f"badput_{b}_share": pl.when(pl.col("lifetime_s") > 0).then(pl.col(f"badput_{b}_s") / pl.col("lifetime_s"))
            for b in (*BUCKETS, *PARTS)
        },
    )
    return frame.select([pl.col(n).cast(t) for n, t in GOODPUT_SCHEMA.items()]).sort("run_id")


#: How far productive time may pass the lifetime and still be the clock's rounding (a log printing whole
#: seconds, a rate taken from a median): 1 %. Past it the steps and the clock contradict each other.
PRODUCTIVE_SLACK = 0.01


def goodput_reason() -> pl.Expr:
    """Why a run's goodput (productive time / lifetime) is withheld: a lifetime of 0 s or none that is
    finite, or productive time past the lifetime by more than :data:`PRODUCTIVE_SLACK` (shuffled or
    mutated logs: the steps, valued at the steady rate, take longer than the clock says the run lasted);
    null where goodput stands (or no lifetime was seen: ``goodput_unobserved`` says that)."""
    life, productive = pl.col("lifetime_s"), pl.col("productive_s")
    return (
        pl.when(life.is_null())
        .then(None)
        .when(~life.is_finite() | ~productive.is_finite())
        .then(pl.lit("the lifetime or the productive time is not a finite number of seconds"))
        .when(life <= 0)
        .then(pl.lit("the log's clock shows a lifetime of 0 s"))
        .when(productive > life * (1 + PRODUCTIVE_SLACK))
        .then(
            pl.format(
                "the log's clock contradicts its steps: they take {} s at the steady rate, more than the {} s "
                "its clock spans",
                productive.round_sig_figs(4),
                life.round_sig_figs(4),
            )
        )
    )


def event_frame(events: pl.DataFrame | None) -> pl.DataFrame:
    """``events`` with exactly :data:`EVENT_SCHEMA`'s columns (absent ones null); None: no events."""
    if events is None:
        return pl.DataFrame(schema=EVENT_SCHEMA)
    return events.select(
        [(pl.col(c) if c in events.columns else pl.lit(None)).cast(d).alias(c) for c, d in EVENT_SCHEMA.items()]
    )
