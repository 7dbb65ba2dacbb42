"""A unit-less ``time: X`` that is the seconds since the previous report, not a step's: the file's clock says which.

BasicSR-derived loggers print the seconds of the last 100 iterations in a bracketed header closed by ``>``
(HDRUNet's ``<epoch:193, iter: 505,200, lr:5.000e-05, , time:84.443> l_pix: ..``, quoted in chxy95/HDRUNet issue 12,
comment of 2021-08-10, read 2026-12-07); mmcv prints an iteration's mean seconds under the same word. Each expected
value is worked out in a comment."""

from __future__ import annotations

import pytest

from tests.support.formats_support import read

HDRUNET = (
    "21-08-10 11:30:17.523 - INFO: Saving models and training states.",
    "21-08-10 11:31:42.571 - INFO: <epoch:193, iter: 505,100, lr:5.000e-05, , time:1145.108> l_pix: 7.7541e-03",
    "21-08-10 11:33:07.015 - INFO: <epoch:193, iter: 505,200, lr:5.000e-05, , time:84.443> l_pix: 8.7734e-03",
    "21-08-10 11:34:32.932 - INFO: <epoch:193, iter: 505,300, lr:5.000e-05, , time:85.917> l_pix: 7.4574e-03",
    "21-08-10 11:36:03.741 - INFO: <epoch:193, iter: 505,400, lr:5.000e-05, , time:90.808> l_pix: 7.7654e-03",
)


def test_a_time_that_is_what_the_clock_advanced_since_the_last_report_is_the_reports_interval() -> None:
    got = read(*HDRUNET)
    # the ``>`` closing the header ends the time's value; 505,100 is 505100 (thousands in groups of three)
    assert got["step"].to_list() == [505100, 505200, 505300, 505400]
    # 11:31:42.571 -> 11:33:07.015 is 84.444 s, the 84.443 stated (so too 85.917 and 90.808): 100 iterations in each,
    # not one; the intervals kept as stated, no step rate of 1 / 84.443 s
    assert got["interval_s"].to_list() == pytest.approx([1145.108, 84.443, 85.917, 90.808])
    assert got["global_steps_per_s"].is_null().all()
    # the l_-keyed loss: 7.7541e-03, ...
    assert got["loss"].to_list() == pytest.approx([7.7541e-03, 8.7734e-03, 7.4574e-03, 7.7654e-03])


def test_an_iterations_mean_time_stays_a_step_time() -> None:
    # near-miss: mmcv's ``time: 0.400`` every 50 iterations 20 s apart is an iteration's seconds (50 x 0.4 = 20 s):
    # 1 / 0.4 = 2.5 steps/s, no interval
    got = read(
        "2020-01-01 10:00:00,000 - mmdet - INFO - Epoch [1][50/500]\tlr: 0.02, eta: 1:00:00, time: 0.400, loss: 1.5",
        "2020-01-01 10:00:20,000 - mmdet - INFO - Epoch [1][100/500]\tlr: 0.02, eta: 1:00:00, time: 0.400, loss: 1.4",
        "2020-01-01 10:00:40,000 - mmdet - INFO - Epoch [1][150/500]\tlr: 0.02, eta: 1:00:00, time: 0.400, loss: 1.3",
    )
    assert got["global_steps_per_s"].to_list() == pytest.approx([2.5, 2.5, 2.5])
    assert got["interval_s"].is_null().all()


def test_a_steps_time_within_a_second_of_the_clock_stays_a_step_time() -> None:
    # near-miss: reports 10 iterations and 0.5 s apart, ``time: 0.05`` each: within the one-second tolerance of the
    # 0.5 s gap, but nearer the 0.5 / 10 = 0.05 s a step: 1 / 0.05 = 20 steps/s
    got = read(
        "2020-01-01 10:00:00,000 - INFO - iter 10, time: 0.05, loss 1.5",
        "2020-01-01 10:00:00,500 - INFO - iter 20, time: 0.05, loss 1.4",
        "2020-01-01 10:00:01,000 - INFO - iter 30, time: 0.05, loss 1.3",
    )
    assert got["global_steps_per_s"].to_list() == pytest.approx([20.0, 20.0, 20.0])
