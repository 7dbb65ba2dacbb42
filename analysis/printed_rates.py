"""A global rate the log printed against the rate its own clock gives over the same interval.

Many logs print a global steps/s (or a time per step) beside a clock (each line's timestamp, the time
since the task started). Most agree: TF Estimator's ``global_step/sec`` is its steps over its own
``interval_s``, Keras' per-epoch figures over the epoch. Some do not measure what the interval is:

- fairseq's ``ups=0.04`` is an average since the epoch started (or a long window), while its lines'
  timestamps give 400 updates in 113 s (3.54/s);
- TF Model Garden / Orbit prints ``steps/sec:    0.1``: one decimal, so anything from 0.05 to 0.15,
  while the clock gives 20 steps in 373.3 s (0.054);
- a tqdm bar's ``7.63s/it`` (0.131/s) is an exponential moving average, while the bar's own elapsed
  time gives 2 steps in 25 s (0.080).

The rule (per task: one process' records; several workers each print their own figures): compare
interval by interval, on each interval of a segment past its first record where the record states a
global rate p and a clock measures the interval (d_step global steps in d_seconds, at least
:data:`MIN_COMPARED_SECONDS`; never a time the record states itself, ``interval_s``, which its printed
rate is over, nor one taken from its own step time; never an interval whose record reports an
evaluation, which its clock holds and its printed rate does not; never one :data:`MAX_RATIO` times off,
a step counted in other units). The clock's rate lies in [s / (d + c), s / (d - c)] with c its
resolution (1 s where d_seconds is a whole number of seconds, a clock printed in whole seconds; else
1 ms). The printed figure stands for [(p - h), (p + h)], h half a unit of its last printed decimal
(:func:`printed_half_unit`: 0.05 for ``0.1``; none for a figure converted from a time, ``1 / 7.63``).

The printed figure is **set aside** on an interval where the clock's range lies wholly outside
[p (1 - t), p (1 + t)] (t = :data:`CLOCK_TOLERANCE`: the two figures time slightly different stretches,
a line's write against the timer's read) and either outside the printed rounding widened by the same t,
or the clock is the finer of the two (c / d < h / p: ``0.1`` printed to one decimal against 373.3 s).
A task whose printed figure is set aside on more than half of those intervals takes the clock's rate
on all its intervals. Interval by interval and by majority, because a pause (an evaluation, a checkpoint
save) legitimately makes the clock slower on the interval that holds it, and a whole-second clock on a
short interval vouches for nothing (its range is wide): neither outvotes the steady intervals.
"""

from __future__ import annotations

import polars as pl

#: Relative difference within which a printed rate and the clock's agree beyond both roundings: the
#: printed figure and the clock time slightly different stretches (a line written after the timer read).
CLOCK_TOLERANCE = 0.05
#: A clock whose interval is a whole number of seconds is taken to print whole seconds (tqdm's
#: ``[01:41<...]``, a ``%H:%M:%S`` timestamp): its interval is known to +-1 s. Else to the millisecond.
WHOLE_SECOND = 1.0
FINE_CLOCK = 1e-3
#: The shortest clock interval compared (seconds): a line's write time jitters by tenths of a second
#: (buffered output, a logging thread), so per-step lines 0.4-0.8 s apart by their timestamps scatter
#: around a printed 0.6 sec/step that is right; and a bar's elapsed time, restarted each epoch, gives
#: an interval of a second or two between two epochs' last lines.
MIN_COMPARED_SECONDS = 5.0
#: A clock this many times off the printed rate, or more, counts its steps in another unit than the
#: printed rate does (a step counter of samples, 512 to an iteration, beside iterations/s): not compared.
#: A running average misreads by less: fairseq's ups=0.04 beside 3.54 updates/s is 88x (0.038: 93x); a batch
#: of 512 samples counted as steps is 512x. Smaller batches counted so slip through: the collector's to fix.
MAX_RATIO = 200.0
#: The most decimals a printed rate is read with: a float with more is a converted figure (``1 / s/it``).
MAX_DECIMALS = 6


def printed_half_unit(rate: pl.Expr) -> pl.Expr:
    """Half a unit of the last decimal ``rate`` (printed global steps/s, Float64) was printed with: 0.05
    for 0.1, 0.005 for 0.04, 0.5 for 12 (the fewest decimals, up to :data:`MAX_DECIMALS`, that give the
    value); 0.0 for a figure with more (converted from a time per step: its rounding is the time's,
    within :data:`CLOCK_TOLERANCE` for any time printed to 3 significant digits). Null where ``rate``
    is null."""
    half = pl.lit(0.0)
    for decimals in range(MAX_DECIMALS, -1, -1):  # the fewest decimals are tested first: built inside out
        scaled = rate * 10.0**decimals
        exact = (scaled - scaled.round()).abs() <= 1e-6 * pl.max_horizontal(scaled.abs(), pl.lit(1.0))
        half = pl.when(exact).then(pl.lit(0.5 * 10.0**-decimals)).otherwise(half)
    return pl.when(rate.is_not_null()).then(half)


def clock_judgement(printed: pl.Expr, steps: pl.Expr, seconds: pl.Expr, clocked: pl.Expr) -> tuple[pl.Expr, pl.Expr]:
    """``(set_aside, off_rounding)`` of an interval (Boolean, null where not comparable): the printed
    global rate ``printed`` (> 0) set aside for the clock's ``steps`` (global steps, > 0) over ``seconds``
    (> 0), as the module doc's rule says, and whether the clock's rate lies outside the printed figure's
    rounding (else the printed figure was only the coarser). ``clocked``: the interval is timed by a clock
    (not by the record's own step time)."""
    whole = (seconds - seconds.round()).abs() < 1e-9
    resolution = pl.when(whole).then(pl.lit(WHOLE_SECOND)).otherwise(pl.lit(FINE_CLOCK))
    ratio = steps / seconds / printed
    comparable = (
        clocked
        & (printed > 0)
        & (steps > 0)
        & (seconds >= MIN_COMPARED_SECONDS)
        & (ratio < MAX_RATIO)
        & (ratio > 1 / MAX_RATIO)
    )
    low = steps / (seconds + resolution)
    high = pl.when(seconds > resolution).then(steps / (seconds - resolution)).otherwise(pl.lit(float("inf")))
    half = printed_half_unit(printed)
    outside_band = (high < printed * (1 - CLOCK_TOLERANCE)) | (low > printed * (1 + CLOCK_TOLERANCE))
    off_rounding = (high < (printed - half) * (1 - CLOCK_TOLERANCE)) | (low > (printed + half) * (1 + CLOCK_TOLERANCE))
    finer = resolution / seconds < half / printed
    set_aside = outside_band & (off_rounding | finer)
    return pl.when(comparable).then(set_aside), pl.when(comparable).then(off_rounding)


def clock_wins(set_aside: pl.Expr, task: pl.Expr) -> pl.Expr:
    """Whether a task's clock wins (on each of its rows, Boolean): its printed rate set aside
    (``set_aside``, :func:`clock_judgement`) on more than half of its comparable intervals. ``task``:
    a key of the row's task."""
    comparable = set_aside.is_not_null().cast(pl.UInt32).sum().over(task)
    aside = set_aside.fill_null(False).cast(pl.UInt32).sum().over(task)
    return (2 * aside > comparable) & (comparable > 0)
