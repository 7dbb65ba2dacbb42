"""A run's wall clock: seconds on the clock of its lead task, the rule goodput and time to target share.

The **lead task** (master/chief 0, else the first training task,
:func:`tierscope.analysis.throughput.lead_tasks`) starts with the job, so its clock is the job's:

- ``timestamp``: every lead record has a timestamp. The origin is the run's first ``started``
  event, else the first lead record's timestamp minus its ``elapsed_s``, else unknown (then the
  first lead record's timestamp, and :attr:`LeadClock.origin_known` is False).
- ``elapsed``: no timestamps, but every lead record has ``elapsed_s`` (seconds since its process
  started) and the lead ran as one segment (a restart would start its ``elapsed_s`` again).
- ``interval``: neither, but each lead record after the first states the seconds since the one before
  (``interval_s``: a Keras epoch's ``12s``, an Estimator hook's ``(0.543 sec)``) and the lead ran as one
  segment: the times are their running sum from the first record (0 s there; the origin is unknown, as
  nothing shows the time before it). Step times a rate implies (``step_timed``) are no clock.
- none: none of these. Where every lead record states its ``elapsed_s`` but the lead restarted, the clock is
  not missing but cut: each attempt's seconds start again from its own process start, and nothing shows the
  time between attempts (a job pays it: the new process' start, the wait for a machine). Summing the attempts
  would leave that out and make the run look faster than it ran, so no clock is formed and
  :attr:`LeadClock.missing` says which case it is (:data:`CLOCK_MISSING`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta

import numpy as np
import polars as pl

from tierscope.dataset.schema import off_the_clock

#: The longest a training process can have run (seconds; 1,000 years): a stated elapsed time beyond it
#: (``elapsed_time: 1e23``) is no reading of a clock. Read as one, the next record's time would "go back" and
#: make a restart that never was. Generous on purpose: a Unix time read as the seconds since the start
#: (1.7e9 s, 54 years) is still a clock whose differences time the steps.
LONGEST_ELAPSED_S = 1000 * 365.25 * 86400


def impossible_elapsed(column: str = "elapsed_s") -> pl.Expr:
    """Boolean: ``column`` (seconds since the process started) states more than :data:`LONGEST_ELAPSED_S`,
    or a figure that is not finite (false where it is null)."""
    elapsed = pl.col(column)
    return elapsed.is_not_null() & (~elapsed.is_finite() | (elapsed > LONGEST_ELAPSED_S))


#: A clock that jumps: an interval of one task, its global step going on, longer than this (seconds; one day)
#: and than :data:`CLOCK_JUMP_FACTOR` times its steps at the run's median time a step. A checkpoint save, an
#: evaluation or a wait on input within one process takes minutes to hours; a preemption's wait starts a new
#: process, whose steps start again from its checkpoint (a restart, not an interval). Days inside a run of
#: seconds a step are a clock set wrong (a garbled year, a Unix time read as elapsed seconds midway).
CLOCK_JUMP_S = 86400.0
#: How many times its steps' time at the run's median an interval must also exceed to be a jump: a run of
#: hours a step (a slow job logging every 100 steps, 10^4 s an interval) may pause a day without tripping.
CLOCK_JUMP_FACTOR = 100.0

#: Columns of :func:`clock_jumps`.
CLOCK_JUMP_SCHEMA = {"run_id": pl.String(), "clock_jumps": pl.UInt32(), "jump_s": pl.Float64(),
                     "jump_from_step": pl.Int64(), "jump_to_step": pl.Int64(), "step_s": pl.Float64()}  # fmt: skip


def clock_intervals(intervals: pl.DataFrame) -> pl.LazyFrame:
    """Each interval of ``intervals``' segments as the clock times it: ``run_id``, ``d_step`` (global steps since
    the segment's previous record with a step), ``d_s`` (seconds: the ``elapsed_s`` difference where both records
    state one, else their timestamps'; null: neither), ``from_step`` and ``step`` (Int64). ``intervals``: the
    pass' intervals (:func:`tierscope.analysis.throughput.collect_intervals`, or a piece of whole tasks): each
    task's rows together in log order, ``step, elapsed_s, timestamp`` and ``interval_index`` (0 where a task or
    a segment starts). A record without a step is left out before the differences: the interval spans it. None
    spans a restart (a new process, a resume, the step going back): a preemption's wait is no clock set wrong."""
    frame = intervals.lazy()
    if intervals.get_column("step").null_count():
        # each segment numbered before the records without a step go: a segment's first row may be one of them
        opens = (pl.col("interval_index") == 0).cum_sum()
        frame = frame.with_columns(_segment=opens).filter(pl.col("step").is_not_null())
        same = pl.col("_segment") == pl.col("_segment").shift(1)
    else:  # a segment's rows are consecutive: its previous row is the row before, but on its first row
        same = pl.col("interval_index") > 0

    def before(column: str) -> pl.Expr:
        return pl.when(same).then(pl.col(column).shift(1))

    stamps = (pl.col("timestamp") - before("timestamp")).dt.total_microseconds() / 1e6
    return frame.select(
        "run_id",
        d_step=pl.col("step") - before("step"),
        d_s=pl.coalesce(pl.col("elapsed_s") - before("elapsed_s"), stamps),
        from_step=before("step"),
        step="step",
    )


#: An interval of :func:`clock_intervals` whose step and time go on: the intervals a run's pace is the median of.
PACED = (pl.col("d_step") > 0) & (pl.col("d_s") > 0)
#: Such an interval over :data:`CLOCK_JUMP_S`: the few whose run's pace is needed to judge them.
_LONG = PACED & (pl.col("d_s") > CLOCK_JUMP_S)
#: Seconds a global step over an interval of :data:`PACED`.
PACE = pl.col("d_s") / pl.col("d_step")


def long_intervals(clocked: pl.LazyFrame) -> pl.DataFrame:
    """The intervals of :func:`clock_intervals` (``clocked``) over :data:`CLOCK_JUMP_S` whose step goes on: the
    only ones that can jump (a restart's step or clock going back never does)."""
    return clocked.filter(_LONG).collect()


def pace_of(seconds_a_step: pl.Series) -> float | None:
    """A run's pace, seconds a global step: the lower median of its intervals' (:data:`PACE`, of the
    intervals whose step and time go on). The lower median: a run of two intervals, one of them the jump, is
    paced by the other, not their mean."""
    return seconds_a_step.quantile(0.5, "lower") if seconds_a_step.len() else None


def judged_jumps(long: pl.DataFrame, paces: pl.DataFrame) -> pl.DataFrame:
    """Per run whose clock jumps (:data:`CLOCK_JUMP_S`, :data:`CLOCK_JUMP_FACTOR`), one row of
    :data:`CLOCK_JUMP_SCHEMA`: how many intervals jump, the largest (``jump_s`` seconds, from global step
    ``jump_from_step`` to ``jump_to_step``) and the run's pace (``step_s``); sorted by run id. ``long``:
    :func:`long_intervals`' rows; ``paces``: ``run_id, step_s`` (:func:`pace_of`) of their runs."""
    jumps = long.join(paces, on="run_id", how="left").filter(
        pl.col("d_s") > CLOCK_JUMP_FACTOR * pl.col("d_step") * pl.col("step_s")
    )
    return (
        jumps.sort("d_s", descending=True, maintain_order=True)
        .group_by("run_id", maintain_order=True)
        .agg(
            clock_jumps=pl.len().cast(pl.UInt32),
            jump_s=pl.col("d_s").first(),
            jump_from_step=pl.col("from_step").first(),
            jump_to_step=pl.col("step").first(),
            step_s=pl.col("step_s").first(),
        )
        .sort("run_id")
        .select(list(CLOCK_JUMP_SCHEMA))
        .cast(CLOCK_JUMP_SCHEMA)  # type: ignore[arg-type]
    )


def clock_jumps(intervals: pl.DataFrame) -> pl.DataFrame:
    """:func:`judged_jumps` of whole runs' ``intervals`` (:func:`clock_intervals`' input): one row per run whose
    clock jumps, sorted by run id. An interval's time is the clock's (its ``elapsed_s`` difference where both
    records state one, else its timestamps'); intervals whose step does not go on (a restart) or whose time does
    not (a clock going back is a restart's), and intervals across a restart, are never jumps. Only the runs with
    an interval over a day are paced (a median of their intervals): most runs cost one filter of the intervals
    the pass holds anyway."""
    clocked = clock_intervals(intervals)
    long = long_intervals(clocked)
    if not long.height:
        return pl.DataFrame(schema=CLOCK_JUMP_SCHEMA)
    runs = long.get_column("run_id").unique()
    paces = (
        clocked.filter(pl.col("run_id").is_in(runs.implode(), nulls_equal=True) & PACED)
        .group_by("run_id")
        .agg(step_s=PACE.quantile(0.5, "lower"))
        .collect()
    )
    return judged_jumps(long, paces)


def on_the_clock(column: str = "timestamp") -> pl.Expr:
    """``column`` with every time :func:`off_the_clock` read as null (a record without a time): no
    figure can be reckoned from it (a dataset written before the collector rejected such times)."""
    return pl.when(off_the_clock(column)).then(None).otherwise(pl.col(column)).alias(column)


#: Why a lead task has no clock (:attr:`LeadClock.missing`, summary's ``clock_missing``: the key), a phrase each.
#: ``restarted``: every record states its elapsed seconds (a tqdm bar's ``[31:21<59:25]``, an
#: ``elapsed_time``), but they start again at each restart and no timestamp joins the attempts.
#: ``partial``: some records state them and others nothing.
CLOCK_MISSING = {
    "none": "its log has no clock or elapsed time to time its life",
    "restarted": (
        "its elapsed times start again at its restarts and no timestamp joins its attempts: the time between "
        "them is unknown"
    ),
    "partial": "only some of its lead task's records state an elapsed time and no timestamp times the others",
}


@dataclass
class LeadClock:
    """``name``: ``timestamp`` / ``elapsed`` / ``interval`` / None (no clock). ``seconds``: each lead record's time
    (Float64 array, in the lead frame's order; None without a clock). ``origin``: the instant of 0 s on the
    ``timestamp`` clock (None otherwise). ``origin_known``: whether 0 s is the job's start (True on the
    ``elapsed`` clock). ``end``: the ``ended`` instant in seconds (None: not given, or no timestamp clock).
    ``missing``: why there is no clock, a key of :data:`CLOCK_MISSING` (None: there is one)."""

    name: str | None
    seconds: np.ndarray | None
    origin: datetime | None
    origin_known: bool
    end: float | None
    missing: str | None = None

    def since(self, stamps: pl.Series) -> np.ndarray:
        """Seconds from the origin of ``stamps`` (Datetime UTC; null: NaN). Only on the ``timestamp`` clock."""
        return seconds_between(stamps, self.origin)


def seconds_between(stamps: pl.Series, origin: object) -> np.ndarray:
    """Seconds from ``origin`` to each of ``stamps`` (Float64 array; a null stamp is NaN)."""
    return np.array((stamps - origin).dt.total_microseconds() / 1e6, dtype=np.float64)  # a copy: callers fill it


def lead_clock(
    lead: pl.DataFrame, started: datetime | None, ended: datetime | None, intervals: bool = False
) -> LeadClock:
    """The clock of one run's lead task (see the module doc). ``lead``: the lead's records in log order with
    ``timestamp``, ``elapsed_s``, ``segment``, ``interval_index``, ``d_seconds`` and ``step_timed``
    (:func:`tierscope.analysis.throughput.collect_intervals`); ``started``/``ended``: the run's first
    ``started`` and last ``finished``/``failed`` event times (None: no such event). ``intervals``: whether the
    ``interval`` clock counts (goodput's lifetime); time to target and its chart place such a run on its lead
    task's own clock instead (:func:`tierscope.analysis.target.on_task_clock`), the first interval's seconds in."""
    stamps = lead["timestamp"]
    if stamps.null_count() == 0:
        origin, known = started, started is not None
        elapsed0 = lead["elapsed_s"][0]
        if origin is None and elapsed0 is not None:
            origin, known = stamps[0] - timedelta(seconds=elapsed0), True
        elif origin is None:
            origin = stamps[0]
        seconds, shift = mended(seconds_between(stamps, origin), lead)
        end = (ended - origin).total_seconds() + shift if ended is not None else None
        return LeadClock("timestamp", seconds, origin, known, end)
    elapsed = lead["elapsed_s"].null_count() == 0
    if elapsed and lead["segment"].max() == 0:
        return LeadClock("elapsed", lead["elapsed_s"].to_numpy(), None, True, None)
    if intervals and lead.height and "d_seconds" in lead.columns and lead["segment"].max() == 0:
        later = lead.slice(1)
        if later["d_seconds"].null_count() == 0 and not later["step_timed"].fill_null(False).any():
            seconds = np.concatenate([[0.0], np.cumsum(later["d_seconds"].to_numpy().astype(np.float64))])
            return LeadClock("interval", seconds, None, False, None)
    return LeadClock(None, None, None, False, None, _missing(lead))


def mended(seconds: np.ndarray, lead: pl.DataFrame) -> tuple[np.ndarray, float]:
    """``seconds`` (each lead record's, on its timestamp clock, in ``lead``'s order) with the clock's jumps taken
    out, and the seconds added from the last jump on (0.0: none). A jump is an interval ``clock_back`` marks (the
    clock set back, or run ahead by what a setback took back: :func:`jumps_ahead`); its time is the one its
    record states (``d_seconds``), else its global steps at the lead's median seconds a step over its other
    intervals (none: no time). Each
    later record moves by what its jump's interval gained or lost, so the life the clock spans is the run's:
    a run of 400 s whose clock was set back 90 s midway spans 400 s, not 310."""
    if "clock_back" not in lead.columns or not lead["clock_back"].fill_null(False).any():
        return seconds, 0.0
    back = lead["clock_back"].fill_null(False).to_numpy()
    steps = lead["d_step"].cast(pl.Float64).to_numpy()
    timed = ~back & np.isfinite(steps) & (steps > 0) & np.isfinite(lead["d_seconds"].cast(pl.Float64).to_numpy())
    per_step = lead["d_seconds"].to_numpy()[timed] / steps[timed]
    pace = float(np.median(per_step)) if per_step.size else 0.0
    took = np.diff(seconds, prepend=seconds[:1])
    own = lead["d_seconds"].cast(pl.Float64).fill_null(np.nan).to_numpy()  # a time the record states
    gained = np.where(back, np.where(np.isfinite(own), own, np.nan_to_num(steps) * pace) - took, 0.0)
    shift = np.cumsum(gained)
    return seconds + shift, float(shift[-1])


def _missing(lead: pl.DataFrame) -> str:
    """Why ``lead`` (:func:`lead_clock`'s, no clock found) has no clock: a key of :data:`CLOCK_MISSING`."""
    timed = lead.height - lead["elapsed_s"].null_count()
    if timed == lead.height and lead.height and lead["segment"].max() > 0:
        return "restarted"
    return "partial" if 0 < timed < lead.height else "none"


def jumps_ahead(steps: np.ndarray, seconds: np.ndarray, fell: np.ndarray, opens: np.ndarray,
                rate: np.ndarray) -> np.ndarray:  # fmt: skip
    """Per row, whether its interval holds a jump of the clock ahead that a later setback took back. Rows of whole
    tasks in log order, one value per row in each array: ``steps`` the interval's global steps and ``seconds`` its
    seconds (NaN: unknown), ``fell`` the seconds the clock went back over the interval where it was set back (NaN
    elsewhere), ``opens`` whether the row opens a segment, ``rate`` the run's median global steps/s.

    A clock set back by F seconds over an interval that took t had run ahead by F + t: either slowly (an NTP step
    after a drift: no one interval holds it) or at once, earlier in the segment. The latest interval before the
    setback (since the segment began or the clock last fell) whose time beyond its steps at the run's rate is
    between half and 1.5 times F + t is that jump: its time is the clock's too. Where none is, the clock may have
    been put right after the setback (an NTP sync of a clock set back by hand): the first such interval after it
    (before the segment ends or the clock falls again) gave the time back. A stall (a checkpoint, an
    evaluation) is time the run spent; it is taken only where a setback of its size is beside it."""
    out = np.zeros(steps.size, dtype=bool)
    for k in np.flatnonzero(np.isfinite(fell)):
        pace = rate[k] if np.isfinite(rate[k]) and rate[k] > 0 else np.inf
        owed = fell[k] + (steps[k] / pace if np.isfinite(steps[k]) else 0.0)

        def gave_back(j: int, pace: float = pace, owed: float = owed) -> bool:
            beyond = seconds[j] - (steps[j] / pace if np.isfinite(steps[j]) else 0.0)
            return bool(0.5 * owed <= beyond <= 1.5 * owed)

        before = next((j for j in _untouched(range(k - 1, -1, -1), 1, opens, fell, out) if gave_back(j)), None)
        after = (
            None
            if before is not None
            else next((j for j in _untouched(range(k + 1, steps.size), 0, opens, fell, out) if gave_back(j)), None)
        )
        for j in (before, after):
            if j is not None:
                out[j] = True
    return out


def _untouched(rows: range, edge: int, opens: np.ndarray, fell: np.ndarray, out: np.ndarray) -> Iterator[int]:
    """``rows`` (walked from a setback, back or on) up to the first that crosses a segment's start (``opens`` of
    the row ``edge`` after it: a segment opens at its first row, which has no interval of it before), or where the
    clock fell (``fell`` finite) or a jump was already taken (``out``)."""
    for j in rows:
        if opens[j + edge] or np.isfinite(fell[j]) or out[j]:
            return
        yield j
