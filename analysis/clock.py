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


def clock_jumps(steps: pl.LazyFrame) -> pl.DataFrame:
    """Per run whose clock jumps (:data:`CLOCK_JUMP_S`, :data:`CLOCK_JUMP_FACTOR`), one row of
    :data:`CLOCK_JUMP_SCHEMA`: how many intervals jump, the largest (``jump_s`` seconds, from global step
    ``jump_from_step`` to ``jump_to_step``) and the run's median seconds a global step (``step_s``); sorted by
    run id. ``steps``: the stored step records (``run_id, role, task_index, step, elapsed_s, timestamp, source,
    source_offset``). Each task's records in the order its files hold them; an interval's time is its
    ``elapsed_s`` difference where both records state one, else its timestamps'. Intervals whose step does not
    go on (a restart) or whose time does not (a clock going back is a restart's) are never jumps."""
    task = ["run_id", "role", "task_index"]
    diff = {c: pl.col(c).diff().over(task) for c in ("step", "elapsed_s")}
    stamps = pl.col("timestamp").diff().over(task).dt.total_microseconds() / 1e6
    intervals = (
        steps.select(
            *task, "step", "elapsed_s", on_the_clock(), "source", "source_offset", _absurd=impossible_elapsed()
        )
        .filter(~pl.col("_absurd") & pl.col("step").is_not_null())
        .sort([*task, "source", "source_offset"], nulls_last=True)
        .with_columns(
            d_step=diff["step"], d_s=pl.coalesce(diff["elapsed_s"], stamps), from_step=pl.col("step").shift().over(task)
        )
        .filter((pl.col("d_step") > 0) & (pl.col("d_s") > 0))
        # the lower median: a run of two intervals, one of them the jump, is paced by the other, not their mean
        .with_columns(step_s=(pl.col("d_s") / pl.col("d_step")).quantile(0.5, "lower").over("run_id"))
    )
    jumps = intervals.filter(
        (pl.col("d_s") > CLOCK_JUMP_S) & (pl.col("d_s") > CLOCK_JUMP_FACTOR * pl.col("d_step") * pl.col("step_s"))
    )
    return (
        jumps.sort("d_s", descending=True)
        .group_by("run_id")
        .agg(
            clock_jumps=pl.len().cast(pl.UInt32),
            jump_s=pl.col("d_s").first(),
            jump_from_step=pl.col("from_step").first(),
            jump_to_step=pl.col("step").first(),
            step_s=pl.col("step_s").first(),
        )
        .sort("run_id")
        .collect()
        .select(list(CLOCK_JUMP_SCHEMA))
    )


#: The columns whose footers tell a run's clock span (:func:`may_jump`).
CLOCK_COLUMNS = ["elapsed_s", "timestamp"]


def may_jump(footers: pl.DataFrame | None) -> pl.Series | None:
    """The run ids (String) whose clock may jump by :data:`CLOCK_JUMP_S`: a file's footer states an
    ``elapsed_s`` or ``timestamp`` span (greatest less least) above it, the runs' files together, or does not
    state one. ``footers``: :meth:`tierscope.dataset.store.Dataset.footers` of :data:`CLOCK_COLUMNS` (None:
    unread; every run may). No interval of a run whose records all lie within a day can jump, so
    :func:`clock_jumps` reads the others only: most datasets' runs are read by no extra scan."""
    if footers is None:
        return None
    told = pl.col("elapsed_s_known") & pl.col("timestamp_known")
    elapsed = pl.col("elapsed_s_max").max() - pl.col("elapsed_s_min").min()
    stamped = (pl.col("timestamp_max").max() - pl.col("timestamp_min").min()).dt.total_microseconds() / 1e6
    per_run = footers.group_by("run_id").agg(told=told.all(), elapsed=elapsed, stamped=stamped)
    long = (
        ~pl.col("told")
        | (pl.col("elapsed").fill_null(0) > CLOCK_JUMP_S)
        | (pl.col("stamped").fill_null(0) > CLOCK_JUMP_S)
    )
    return per_run.filter(long).get_column("run_id")


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
        end = (ended - origin).total_seconds() if ended is not None else None
        return LeadClock("timestamp", seconds_between(stamps, origin), origin, known, end)
    elapsed = lead["elapsed_s"].null_count() == 0
    if elapsed and lead["segment"].max() == 0:
        return LeadClock("elapsed", lead["elapsed_s"].to_numpy(), None, True, None)
    if intervals and lead.height and "d_seconds" in lead.columns and lead["segment"].max() == 0:
        later = lead.slice(1)
        if later["d_seconds"].null_count() == 0 and not later["step_timed"].fill_null(False).any():
            seconds = np.concatenate([[0.0], np.cumsum(later["d_seconds"].to_numpy().astype(np.float64))])
            return LeadClock("interval", seconds, None, False, None)
    return LeadClock(None, None, None, False, None, _missing(lead))


def _missing(lead: pl.DataFrame) -> str:
    """Why ``lead`` (:func:`lead_clock`'s, no clock found) has no clock: a key of :data:`CLOCK_MISSING`."""
    timed = lead.height - lead["elapsed_s"].null_count()
    if timed == lead.height and lead.height and lead["segment"].max() > 0:
        return "restarted"
    return "partial" if 0 < timed < lead.height else "none"
