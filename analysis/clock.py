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
