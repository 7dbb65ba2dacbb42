"""Interval rates on a clock too coarse for its logging interval: steps over the time of a stretch of them.

A log's clock reads each line's time to a second at worst (:data:`COARSE_CLOCK_S`): Python's logging
without milliseconds, ``HH:MM:SS`` stamps, tqdm's ``[04:13<...]``, or a time read a little before or after
the line's step (a buffered write, a logging thread). Where the logging interval is that short, one
interval's clock time is mostly that error: at 0.4 s intervals a whole-second clock gives 0 s and 1 s;
a clock that jitters by a second around 0.625 s intervals gives -0.4 s to 1.6 s. A rate per interval is
then no rate at all, and every way of skipping the bad ones biases the steady rate: intervals of no time
left out (their steps lost, their time given to the neighbours) read slow, the long ones cut as stalls
read fast (the benchmark's generated BASIC_TPU runs, 160 global steps/s, read 189).

The clock's readings are right on average, and a stretch's time is its last reading less its first: the error
of the two ends over a long stretch is small. So on a task whose clock is **coarse** -- a clock reading
(``elapsed_s`` or ``timestamp``, not a step time) stood still or ran back over an interval in which the steps
went on (a whole-second clock at intervals under a second shows 0 s intervals), or every interval it times is
a whole number of seconds and their median is at most :data:`WHOLE_SECONDS_MAX` (a whole-second clock at
intervals of a few seconds never stands still, yet its error of a second is more than the stall bound's margin
of an interval: at a true 1.25 s it reads 1 s three times in four and 2 s once, and the bound cut the 2 s
ones, reading 25 % fast; a stated ``interval_s`` in whole seconds, Keras' ``600/600 - 2s - loss: ...``, is
such a clock too) -- each clock-timed interval takes the rate of its **block**: the consecutive intervals of
its segment that begin within the same :data:`BLOCK_S` of the segment's clock (a segment's last block, if
shorter, joins the one before), their global steps over their seconds. The steady rate's sum(k s) / sum(k s /
r) then sums each block's own time, and over the blocks the segment's: the ends' error over the whole span. A
stall still shows, as a block slower than the rest. On a fine clock (milliseconds, never standing still)
nothing changes; nor on a whole-second clock at longer intervals, where a second is within the stall bound's
margin and a stall (a 12 s interval among 5 s ones) keeps its own interval.
"""

from __future__ import annotations

import numpy as np

#: How finely a log's clock is known at worst (seconds): a whole-second clock, or a line's time read a
#: little before or after its step.
COARSE_CLOCK_S = 1.0
#: A block's span on a coarse clock (seconds): 20 clock errors, so that the two ends' error is within 5 %
#: of a block's time (the noise of a steady run stays within 1.11x its median step time, the stall bound
#: is 1.25x: :data:`tierscope.analysis.bootstrap.STALL_FROM`).
BLOCK_S = 20 * COARSE_CLOCK_S
#: The longest median interval (seconds) at which a clock of whole seconds is coarse: a second's error is then
#: 25 % of an interval or more, the margin of the stall bound (:data:`tierscope.analysis.bootstrap.STALL_FROM`,
#: 1.25x the median step time; not imported: the bootstrap reads no clock).
WHOLE_SECONDS_MAX = COARSE_CLOCK_S / 0.25


def block_rates(steps: np.ndarray, seconds: np.ndarray, read: np.ndarray, opens: np.ndarray,
                first: np.ndarray) -> np.ndarray:  # fmt: skip
    """Each row's block rate (global steps/s; NaN where the row keeps its own interval's rate), over rows of
    whole tasks (each task's rows together, in log order), one value per row in each array: ``steps`` the
    interval's global steps and ``seconds`` its seconds (float64; NaN: none, as on a segment's first row),
    ``read`` whether a clock reading times the interval (in a segment past its first row, not a step time;
    a stated ``interval_s`` only in whole seconds), ``opens`` whether the row opens a segment, ``first``
    whether it opens a task. See the module doc: NaN on every row of a task whose clock is not coarse."""
    rows = steps.size
    out = np.full(rows, np.nan)
    starts = np.flatnonzero(first)
    if not rows or not starts.size:
        return out
    timed = read & np.isfinite(seconds) & np.isfinite(steps) & (steps > 0)
    stood_at = timed & (seconds <= 0)
    whole_at = timed & (seconds == np.floor(seconds)) & (seconds <= WHOLE_SECONDS_MAX)
    # no clock stood still or ran back, and no short interval in whole seconds: none is coarse (the usual case)
    if not stood_at.any() and not whole_at.any():
        return out
    task = np.cumsum(first) - 1
    stood = np.bincount(task[stood_at], minlength=starts.size) > 0
    counted = np.bincount(task[timed], minlength=starts.size)
    whole = np.bincount(task[timed & (seconds == np.floor(seconds))], minlength=starts.size) == counted
    for t in np.flatnonzero(whole & ~stood & (counted > 0)):  # a few tasks: each one's median interval
        whole[t] = np.median(seconds[timed & (task == t)]) <= WHOLE_SECONDS_MAX
    coarse = (stood | whole) & (counted > 0)
    at = np.flatnonzero(timed & coarse[task])
    if not at.size:
        return out
    segment = (np.cumsum(opens) - 1)[at]
    d = seconds[at]
    # where each interval begins on its segment's clock, never earlier than one before it (a reading that
    # ran back does not reopen a block)
    ends = np.cumsum(d)
    began = ends - d
    new_segment = np.ones(at.size, dtype=bool)
    new_segment[1:] = segment[1:] != segment[:-1]
    origin = np.maximum.accumulate(np.where(new_segment, np.arange(at.size), 0))
    began = began - began[origin]
    offset = np.cumsum(new_segment) * (4 * np.abs(ends).max() + 2 * BLOCK_S)  # segments kept apart
    began = np.maximum.accumulate(began + offset) - offset
    key = np.floor(began / BLOCK_S)
    opened = new_segment.copy()
    opened[1:] |= key[1:] != key[:-1]
    block = np.cumsum(opened) - 1
    # a segment's last block shorter than BLOCK_S joins the one before it in the segment
    span = np.bincount(block, weights=d)
    last = np.zeros(block[-1] + 1, dtype=bool)
    last[block[np.flatnonzero(np.append(new_segment[1:], True))]] = True
    alone = np.zeros_like(last)
    alone[block[new_segment]] = True  # a segment's first block has none before it
    joins = last & ~alone & (span < BLOCK_S)
    block = block - joins[block]
    total_steps = np.bincount(block, weights=steps[at])
    total_seconds = np.bincount(block, weights=d)
    with np.errstate(divide="ignore", invalid="ignore"):
        rate = np.where(total_seconds > 0, total_steps / total_seconds, np.nan)
    out[at] = rate[block]
    return out
