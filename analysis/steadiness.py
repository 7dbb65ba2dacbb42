"""Whether a run's rate has settled: a run whose steady intervals still speed up has no steady rate yet.

The steady rate (:mod:`tierscope.analysis.throughput`) assumes the intervals past warm-up vary about
one level. A short run can end while its rate still climbs (the reference trainer's 300-step
STANDARD_1 run: 23.2, 42.2, 60.5 global steps/s); any median of such intervals is a figure of how
long the run was, not of the machines. The test here is over the lead task's steady interval rates
(global steps/s, in log order): the run is **still rising** when

- it has 2 to 5, each faster than the one before by more than :data:`STEP_NOISE`, and the last is
  above the first by more than :data:`TREND_RISE` (a flat pair among them is noise about a level that
  a last fast interval may have left: shared case05's 29.6, 31.6, 59.8 stays steady); or
- it has 6 or more, and the median of the last third is above the median of the first third by more
  than :data:`TREND_RISE`, and the thirds do not overlap (the last third's slowest is faster than the
  first third's fastest), so one stall or one fast interval cannot make a trend.

Its mean rate stays (what the run did); its steady rate is the **latest level**, the steady rate of the last third
of those intervals (:func:`latest_level`): the pace the run had reached when it ended, which its steady rate is at
least, said as the summary's ``steady_assumption`` (``still_rising``, with "run longer"). A reader of such a log
takes the latest figures for the run's speed; withholding every figure left a user with a short run no answer.
"""

from __future__ import annotations

import numpy as np

from tierscope.analysis.bootstrap import numpy_median, read

#: How much faster (as a fraction) the end of a run must be than its start to count as a trend, not noise.
#: Why 0.25: the same bound as a stall (:data:`tierscope.analysis.goodput.STALL_FACTOR`): the
#: interval-to-interval noise of a steady run is a few % (the 2016 laptop log's steady intervals span
#: 18.41-19.14 steps/s, 4 %), never near 25 %.
TREND_RISE = 0.25
#: How much faster (as a fraction) each of a few intervals must be than the one before to count as
#: rising: above the few % a steady run varies from one interval to the next.
STEP_NOISE = 0.10
#: Intervals from which the thirds test applies; fewer must rise at every interval.
THIRDS_FROM = 6

#: ``steady_assumption`` of a run still rising (its steady rate is its :func:`latest_level`), and what it assumes.
STILL_RISING = "still_rising"
STILL_RISING_NOTE = (
    "still speeding up when the run ended (steady_rise: its last third over its first): the rate of its last "
    "third stands for the steady rate, which is at least this; run longer to measure it"
)


def rise(rates: np.ndarray) -> float | None:
    """The relative rise from the start of ``rates`` (steady interval rates, log order) to their end:
    the last third's median over the first third's, less 1 (thirds of at least one interval); None
    with fewer than 2 rates or a non-positive start."""
    rates = rates[np.isfinite(rates)]
    if len(rates) < 2:
        return None
    third = max(len(rates) // 3, 1)
    first, last = float(numpy_median(rates[:third])), float(numpy_median(rates[-third:]))
    return last / first - 1 if first > 0 else None


def still_rising(rates: np.ndarray) -> bool:
    """Whether ``rates`` (a run's lead task's steady interval rates, global steps/s, in log order) still
    trend upwards (see the module docstring)."""
    rates = rates[np.isfinite(rates)]
    up = rise(rates)
    if up is None or up <= TREND_RISE:
        return False
    if len(rates) < THIRDS_FROM:
        return bool(np.all(rates[1:] > rates[:-1] * (1 + STEP_NOISE)))
    third = len(rates) // 3
    return bool(rates[-third:].min() > rates[:third].max())


def latest_level(rates: np.ndarray) -> float | None:
    """The steady rate (:func:`~tierscope.analysis.bootstrap.read`, global steps/s) of the last third of ``rates``
    (a run's lead task's steady interval rates, log order; at least one interval), None without a finite rate."""
    rates = rates[np.isfinite(rates)]
    if len(rates) == 0:
        return None
    return read(rates[-max(len(rates) // 3, 1) :]).rate
