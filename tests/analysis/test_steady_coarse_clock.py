"""The steady rate on a clock coarse against its logging interval (a whole-second clock, a jittering one):
steps over the time between two readings far apart, not a rate per interval. Values worked by hand in the
comments."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tests.analysis.test_throughput import steps_frame
from tierscope.analysis.coarse_clock import block_rates
from tierscope.analysis.throughput import interval_rates, run_throughput


def test_a_whole_second_clock_at_sub_second_intervals_gives_the_steps_over_its_span() -> None:
    # 10 global steps every 0.4 s (25 steps/s), the clock printed in whole seconds: record k (1..500) at step
    # 10 k, elapsed floor(3.3 + 0.4 k). Intervals of 0 s and 1 s. Past warm-up (record 1, step 10 at 3 s) to
    # the last (step 5000 at floor(203.3) = 203 s): 4990 steps in 200 s = 24.95 steps/s (the true 25 within
    # 1 s in 200 s). Read per interval, the 0 s intervals broke the task into 300 segments and only the
    # 1 s ones were kept, at 10 steps/s each: 10.0.
    rows = [{"step": 10 * k, "elapsed_s": float(math.floor(3.3 + 0.4 * k))} for k in range(1, 501)]
    row = run_throughput(steps_frame(rows)).row(0, named=True)
    assert (row["segments"], row["restarts"], row["steady_stalls"]) == (1, 0, 0)
    assert row["steady_global_steps_per_s"] == pytest.approx(4990 / 200)
    assert row["mean_global_steps_per_s"] == pytest.approx(4990 / 200)


def _jittered(stated: float | None) -> list[dict]:
    # 100 global steps every 0.625 s (160 steps/s), each reading late by 0.1, 0.5 or 0.9 s in turn (k = 1, 2,
    # 0 mod 3): intervals of 0.625 + 0.4 = 1.025 s, 1.025 s and 0.625 - 0.8 = -0.175 s (the clock runs back).
    late = {1: 0.1, 2: 0.5, 0: 0.9}
    return [
        {"step": 100 * k, "elapsed_s": 0.625 * k + late[k % 3], "global_steps_per_s": stated} for k in range(1, 601)
    ]


def test_a_clock_jittering_past_its_interval_gives_the_steps_over_its_span() -> None:
    # Past warm-up (record 1: step 100 at 0.725 s) to the last (step 60,000 at 375 + 0.9 = 375.9 s): 59,900
    # steps in 375.175 s = 159.659 steps/s (the true 160 within 0.3 %). Read per interval, every run back was a
    # restart (200 segments), the intervals of 1.025 s 97.6 steps/s, none other kept.
    row = run_throughput(steps_frame(_jittered(None))).row(0, named=True)
    assert (row["segments"], row["restarts"], row["steady_stalls"]) == (1, 0, 0)
    assert row["steady_global_steps_per_s"] == pytest.approx(59_900 / 375.175)
    assert row["mean_global_steps_per_s"] == pytest.approx(59_900 / 375.175)


def test_a_jittering_clock_leaves_a_stated_rate_that_agrees_over_the_span() -> None:
    # The same records stating 160 global steps/s: over the task the clock gives 59,900 / 375.175 = 159.66, within
    # 1 % of 160, so the stated rate stands on every interval: 160, in one segment (read per interval, the same
    # 160 over 200 segments: each run back a restart told to the user, and a mean of 97.6).
    row = run_throughput(steps_frame(_jittered(160.0))).row(0, named=True)
    assert (row["segments"], row["restarts"]) == (1, 0)
    assert row["steady_global_steps_per_s"] == pytest.approx(160.0)
    assert row["printed_set_aside"] is None
    assert row["mean_global_steps_per_s"] == pytest.approx(59_900 / 375.175)


def test_a_fine_clock_keeps_each_intervals_own_rate() -> None:
    # Milliseconds, never standing still: 100 steps in 5.001 s then 4.002 s; no block rates, the intervals'
    # own (100 / 5.001 = 19.996, 100 / 4.002 = 24.988).
    rows = [{"step": 100 * k, "elapsed_s": 8.0 + 4.5 * (k - 1) + (0.001 if k % 2 else -0.5)} for k in range(1, 6)]
    intervals = interval_rates(steps_frame(rows)).collect()
    assert intervals["rate"].to_list()[1:] == pytest.approx([100 / 3.999, 100 / 5.001, 100 / 3.999, 100 / 5.001])


def test_a_short_last_block_joins_the_one_before() -> None:
    # One task, one segment on a clock that stood still once: 15 intervals of 1 s, one of 0 s, 15 of 1 s, 10 steps
    # each. Intervals begin at 0..14 s, 15 s (the 0 s one), 15..29 s. Blocks of 20 s: those beginning at 0..19 s
    # (21 intervals), then 20..29 s (10 s, shorter than 20: joins the first). One block: 310 steps / 30 s.
    steps = np.array([np.nan] + [10.0] * 31)
    seconds = np.array([np.nan] + [1.0] * 15 + [0.0] + [1.0] * 15)
    read = np.array([False] + [True] * 31)
    opens = np.array([True] + [False] * 31)
    got = block_rates(steps, seconds, read, opens, opens.copy())
    assert np.isnan(got[0]) and np.all(got[1:] == 310 / 30)
    # a clock finer than a second that never stood still nor ran back keeps every interval's own rate
    seconds[1:] = 1.001
    assert np.isnan(block_rates(steps, seconds, read, opens, opens.copy())).all()


def test_a_whole_second_clock_at_intervals_of_a_few_seconds_gives_the_steps_over_its_span() -> None:
    # 50 global steps every 1.25 s (40 steps/s), the time printed in whole seconds (Python logging's
    # ``%H:%M:%S``): record k (1..200) at step 50 k, elapsed floor(2.3 + 1.25 k). Intervals of 1 s three times
    # in four and 2 s once: the clock never stands still. Per interval, the 2 s ones (25 steps/s, 2x the
    # median step time) were cut as stalls and the 1 s ones (50 steps/s) kept: 50, 25 % fast. Past warm-up
    # (record 1: step 50 at floor(3.55) = 3 s) to the last (step 10,000 at floor(252.3) = 252 s): 9950 steps
    # in 249 s = 39.96 steps/s (the true 40 within 1 s in 249 s).
    rows = [{"step": 50 * k, "elapsed_s": float(math.floor(2.3 + 1.25 * k))} for k in range(1, 201)]
    row = run_throughput(steps_frame(rows)).row(0, named=True)
    assert (row["segments"], row["restarts"]) == (1, 0)
    assert row["steady_global_steps_per_s"] == pytest.approx(9950 / 249)


def test_epoch_times_stated_in_whole_seconds_give_the_steps_over_their_sum() -> None:
    # tf.keras 2.x ``fit(verbose=2, batch_size=100)`` on MNIST, a notebook export quoted in a public repository
    # (the code index's file 10949816313, found by ' - 0s - loss: '): ``Epoch 1/15`` then
    # ``600/600 - 3s - loss: 0.6248 - accuracy: 0.8444 - val_loss: ...``, epochs 2-15 taking 2, 2, 1, 1, 1, 1,
    # 2, 2, 1, 1, 1, 1, 1, 1 s: the epoch's time known to a second. Per epoch the 2 s ones (300 steps/s, 2x the
    # median 1 s) were stalls and the steady rate 600 steps/s; over their sum, epochs 2-15: 14 x 600 = 8400
    # steps in 18 s = 466.7 steps/s.
    seconds = [3, 2, 2, 1, 1, 1, 1, 2, 2, 1, 1, 1, 1, 1, 1]
    rows = [{"step": 600 * e, "interval_s": float(s)} for e, s in enumerate(seconds, start=1)]
    row = run_throughput(steps_frame(rows)).row(0, named=True)
    assert row["steady_global_steps_per_s"] == pytest.approx(8400 / 18)
    # the same epochs timed to the millisecond are a fine clock: each keeps its own rate (the 2.013 s ones,
    # 1.83x the median 1.1 s, are left out as stalls): no block over them
    fine = [{"step": 600 * e, "interval_s": s + 0.013 if s == 2 else s + 0.1} for e, s in enumerate(seconds, 1)]
    assert run_throughput(steps_frame(fine)).row(0, named=True)["steady_global_steps_per_s"] == pytest.approx(600 / 1.1)
