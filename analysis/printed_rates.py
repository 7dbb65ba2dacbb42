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
An interval shorter than :data:`MIN_COMPARED_SECONDS` is judged by its stretch, the measured intervals next to it
that begin within the same 5 s of their run of such intervals (:func:`_stretches`), whose steps over their seconds
are compared with their printed rate so: a tqdm bar's whole seconds of 0 s and 1 s vouch for nothing one by one,
five seconds of them do. A task whose printed figure is set aside on more than half of those intervals takes the
clock's rate on all its intervals, unless the two agree over the task as a whole: the clock's steps over its seconds
on every interval it measures (of any length; one the clock stood still or ran back over too, so that its seconds
sum to a segment's last reading less its first) within :data:`AGREEMENT` of the printed rate over the same
steps (their steps over the seconds the printed rates give them). Interval by interval and by majority,
because a pause (an evaluation, a checkpoint save) legitimately makes the clock slower on the interval
that holds it, and a whole-second clock on a short interval vouches for nothing (its range is wide):
neither outvotes the steady intervals. Over the whole task as the last word, because a line's time
jitters: around intervals of 5 s, a second of jitter puts most intervals over 5 % off a right printed
figure, both ways (and the intervals of 5 s or more are the ones it lengthened), while over the task
the jitter cancels from one interval to the next and the two figures agree.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

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
#: The largest relative difference between a task's clock and its printed rates, over all the intervals
#: the clock measures, that is agreement (the printed figure kept, nothing noted). A printed figure's own
#: rounding is within it where that rounding is 1 % or finer (``18.0``: 0.05 in 18, 0.3 %); a coarser one
#: (``0.1``, 0.05-0.15) beside a finer clock 46 % off it is the printed figure rounded too coarsely, and
#: the clock's rate is taken. A systematic difference under 1 % moves no speedup or cost a user reads
#: (the summary prints rates to three significant digits).
AGREEMENT = 0.01


def printed_half_unit(rate: np.ndarray) -> np.ndarray:
    """Half a unit of the last decimal each of ``rate`` (printed global steps/s, float64; NaN: none) was
    printed with: 0.05 for 0.1, 0.005 for 0.04, 0.5 for 12 (the fewest decimals, up to
    :data:`MAX_DECIMALS`, that give the value); 0.0 for a figure with more (converted from a time per step:
    its rounding is the time's, within :data:`CLOCK_TOLERANCE` for any time printed to 3 significant
    digits). NaN where ``rate`` is NaN."""
    half = np.zeros(rate.shape, dtype=np.float64)
    open_ = ~np.isnan(rate)
    for decimals in range(MAX_DECIMALS + 1):  # the fewest decimals first
        scaled = rate * 10.0**decimals
        exact = open_ & (np.abs(scaled - np.round(scaled)) <= 1e-6 * np.maximum(np.abs(scaled), 1.0))
        half[exact] = 0.5 * 10.0**-decimals
        open_ &= ~exact
    half[np.isnan(rate)] = np.nan
    return half


@dataclass(frozen=True)
class Judgement:
    """What :func:`judge` finds, one bool per row: ``wins`` (the row's task takes its clock's rate),
    ``compared`` (the interval is compared with its printed rate) and ``off`` (it is, and its clock lies
    outside the printed figure's rounding; else False)."""

    wins: np.ndarray
    compared: np.ndarray
    off: np.ndarray


def judge(printed: np.ndarray, steps: np.ndarray, seconds: np.ndarray, clocked: np.ndarray,
          first: np.ndarray) -> Judgement:  # fmt: skip
    """The module doc's rule over rows of whole tasks (each task's rows together, in log order), one
    value per row in each array: ``printed`` the global rate the record printed (steps/s; NaN: none),
    ``steps`` the interval's global steps and ``seconds`` its seconds (float64; NaN: unknown),
    ``clocked`` whether a clock times the interval (not the record's own step time, ``interval_s``, nor
    an interval holding an evaluation), ``first`` whether the row is its task's first.

    The tasks' agreement first (a sum per task over contiguous rows), then the intervals one by one on
    the rows of the tasks that disagree alone (where they agree, nothing compared matters): of those,
    the comparable ones, and the printed rounding on the ones outside the tolerance band."""
    rows = printed.size
    wins, compared, off_rows = (np.zeros(rows, dtype=bool) for _ in range(3))
    starts = np.flatnonzero(first)
    if not rows or not starts.size:
        return Judgement(wins, compared, off_rows)
    with np.errstate(divide="ignore", invalid="ignore"):
        # NaN (unknown) fails every comparison: such rows are never measured
        ratio = steps / seconds / printed
        # an interval over which the clock stood still or ran back (its jitter beyond the interval) is
        # measured too: left out, its neighbours would keep the time it gave back and the clock read slow
        measured = clocked & (printed > 0) & (steps > 0) & np.isfinite(seconds)
        measured &= (seconds <= 0) | ((ratio < MAX_RATIO) & (ratio > 1 / MAX_RATIO))
        total_steps = np.add.reduceat(np.where(measured, steps, 0.0), starts)
        clock = total_steps / np.add.reduceat(np.where(measured, seconds, 0.0), starts)
        stated = total_steps / np.add.reduceat(np.where(measured, steps / printed, 0.0), starts)
        disagree = np.abs(clock - stated) > AGREEMENT * stated  # False where nothing is measured (NaN)
        if not disagree.any():
            return Judgement(wins, compared, off_rows)
        lengths = np.diff(np.append(starts, rows))
        task = np.repeat(np.arange(starts.size), lengths)
        at = np.flatnonzero(measured & (seconds >= MIN_COMPARED_SECONDS) & disagree[task])
        # each interval long enough alone is one unit; the shorter ones are judged by their stretch
        short, unit_of, p, s, d = _stretches(printed, steps, seconds, measured & disagree[task], first)
        unit_of = np.concatenate((np.arange(at.size), at.size + unit_of))
        p, s, d = np.concatenate((printed[at], p)), np.concatenate((steps[at], s)), np.concatenate((seconds[at], d))
        judged_rows = np.concatenate((at, short))
        ratio = s / d / p
        comparable = (d >= MIN_COMPARED_SECONDS) & (ratio < MAX_RATIO) & (ratio > 1 / MAX_RATIO)
        resolution = np.where(np.abs(d - np.round(d)) < 1e-9, WHOLE_SECOND, FINE_CLOCK)
        low = s / (d + resolution)
        high = np.where(d > resolution, s / (d - resolution), np.inf)
        band = comparable & ((high < p * (1 - CLOCK_TOLERANCE)) | (low > p * (1 + CLOCK_TOLERANCE)))
        half = printed_half_unit(p)
        # outside the band only: the rounding widened by the tolerance holds the band, never off within it
        off = band & ((high < (p - half) * (1 - CLOCK_TOLERANCE)) | (low > (p + half) * (1 + CLOCK_TOLERANCE)))
        finer = band & (resolution / d < half / p)
    keep = comparable[unit_of]
    judged_rows, unit_of = judged_rows[keep], unit_of[keep]
    compared_per_task = np.bincount(task[judged_rows], minlength=starts.size)
    aside_per_task = np.bincount(task[judged_rows[(off | finer)[unit_of]]], minlength=starts.size)
    task_wins = (2 * aside_per_task > compared_per_task) & (compared_per_task > 0) & disagree
    wins = task_wins[task]
    compared[judged_rows] = True
    off_rows[judged_rows[off[unit_of]]] = True
    return Judgement(wins, compared, off_rows)


def _stretches(
    printed: np.ndarray, steps: np.ndarray, seconds: np.ndarray, measured: np.ndarray, first: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The measured intervals shorter than :data:`MIN_COMPARED_SECONDS` taken together: consecutive ones of a
    task (no other interval between them) in stretches of about that length (each stretch the intervals that
    begin within one :data:`MIN_COMPARED_SECONDS` of the run's clock). ``(rows, stretch of each row, printed rate,
    steps, seconds of each stretch)``; the stretch's printed rate is its steps over the time its printed rates give
    them. A whole-second clock's 0 s and 1 s intervals of a 5 it/s bar vouch for nothing one by one; five seconds
    of them do, and so they outvote, as the steady intervals they are, the one interval that holds a pause."""
    short = measured & (seconds < MIN_COMPARED_SECONDS)
    rows = np.flatnonzero(short)
    if not rows.size:
        empty = np.zeros(0)
        return rows, rows, empty, empty, empty
    # a run of short intervals opens after any other row, and at a task's first row
    opens = np.ones(rows.size, dtype=bool)
    opens[1:] = (np.diff(rows) > 1) | first[rows[1:]]
    d, s = seconds[rows], steps[rows]
    ends = np.cumsum(d)
    run_start = np.maximum.accumulate(np.where(opens, np.arange(rows.size), 0))
    began = ends - d - (ends[run_start] - d[run_start])  # each interval's start, from its run's
    bucket = np.floor(began / MIN_COMPARED_SECONDS)
    new = opens.copy()
    new[1:] |= bucket[1:] != bucket[:-1]
    at = np.flatnonzero(new)
    stretch = np.cumsum(new) - 1
    total = np.add.reduceat(s, at)
    return rows, stretch, total / np.add.reduceat(s / printed[rows], at), total, np.add.reduceat(d, at)
