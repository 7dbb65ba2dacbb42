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
- none: none of these.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

import numpy as np
import polars as pl

from tierscope.dataset.schema import off_the_clock


def on_the_clock(column: str = "timestamp") -> pl.Expr:
    """``column`` with every time :func:`off_the_clock` read as null (a record without a time): no
    figure can be reckoned from it (a dataset written before the collector rejected such times)."""
    return pl.when(off_the_clock(column)).then(None).otherwise(pl.col(column)).alias(column)


@dataclass
class LeadClock:
    """``name``: ``timestamp`` / ``elapsed`` / ``interval`` / None (no clock). ``seconds``: each lead record's time
    (Float64 array, in the lead frame's order; None without a clock). ``origin``: the instant of 0 s on the
    ``timestamp`` clock (None otherwise). ``origin_known``: whether 0 s is the job's start (True on the
    ``elapsed`` clock). ``end``: the ``ended`` instant in seconds (None: not given, or no timestamp clock)."""

    name: str | None
    seconds: np.ndarray | None
    origin: datetime | None
    origin_known: bool
    end: float | None

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
    if lead["elapsed_s"].null_count() == 0 and lead["segment"].max() == 0:
        return LeadClock("elapsed", lead["elapsed_s"].to_numpy(), None, True, None)
    if intervals and lead.height and "d_seconds" in lead.columns and lead["segment"].max() == 0:
        later = lead.slice(1)
        if later["d_seconds"].null_count() == 0 and not later["step_timed"].fill_null(False).any():
            seconds = np.concatenate([[0.0], np.cumsum(later["d_seconds"].to_numpy().astype(np.float64))])
            return LeadClock("interval", seconds, None, False, None)
    return LeadClock(None, None, None, False, None)
