"""Kinds of statement read by their shape: a time since the start in minutes, an epoch's seconds under a key of its
own, step-time keys joined by hyphens, and the numbers a line's keys name (which leave a logger's time its clock).

Lines are short real lines quoted from public logs (sources in each comment); expected values are worked out by
hand in the comments."""

from __future__ import annotations

import pytest

from tests.support.formats_support import parse, read


def test_an_elapsed_time_in_minutes_is_the_time_since_the_start_in_seconds() -> None:
    # a JAX loop's README block (jlin816/jax-sandbox README.md at 3f026d8): 'elapsed' is the wall time since the
    # start in minutes: 1.11 m = 66.6 s, 1.72 m = 103.2 s, 2.34 m = 140.4 s
    got = read(
        "step 100 | elapsed 1.11m | loss: 3.07 | val: 2.96",
        "step 200 | elapsed 1.72m | loss: 3.08 | val: 2.92",
        "step 300 | elapsed 2.34m | loss: 3.16 | val: 2.89",
    )
    assert got["step"].to_list() == [100, 200, 300]
    assert got["elapsed_s"].to_list() == pytest.approx([66.6, 103.2, 140.4])
    assert got["loss"].to_list() == pytest.approx([3.07, 3.08, 3.16])


@pytest.mark.parametrize(
    "line",
    [
        "step 100 | elapsed 1.11 | loss: 3.07",  # no unit: minutes or seconds, nobody can say
        "step 100 | elapsed 1.11ms | loss: 3.07",  # no minutes
        "step 100 | elapsed 1.11mb | loss: 3.07",  # a size
    ],
)
def test_an_elapsed_time_without_minutes_is_not_read_as_minutes(line: str) -> None:
    got = parse([line]).steps
    assert got.height == 0 or got["elapsed_s"].to_list() != [pytest.approx(66.6)]


def test_an_epoch_time_under_its_own_key_is_the_epochs_record() -> None:
    # Flax's MNIST example on a TPU VM (a ray-jax-tpu-pod-demos README, run of 2022-06-02): one line per epoch, no
    # steps per epoch in the log: each line is its epoch's record, the interval its epoch_time; no steps/s
    got = read(
        "epoch:  1, train_loss: 0.2396, train_accuracy: 92.81, test_loss: 0.0628, test_accuracy: 97.99, "
        "epoch_time: 16.28",
        "epoch:  2, train_loss: 0.0592, train_accuracy: 98.18, test_loss: 0.0449, test_accuracy: 98.51, "
        "epoch_time: 14.30",
    )
    assert got.height == 2
    assert got["interval_s"].to_list() == pytest.approx([16.28, 14.30])
    assert got["global_steps_per_s"].null_count() == 2


def test_a_step_time_key_joined_by_hyphens_is_the_steps_seconds() -> None:
    # a research trainer's pipe-separated keys (mlc-ai/pith-train PR 7, a run of 2026-04-01): step-time 24.192 sec
    # -> 1 / 24.192 = 0.041336 steps/s; the position is the zero-padded counter 2 of 15
    got = read(
        "2026-04-01 14:27:55 | INFO | step 00000002/00000015 | step-time 24.192 sec | cross-entropy-loss 2.4543 | "
        "load-balance-loss 0.003247 | learning-rate 1.000000e-06 | gradient-norm 3.3118 | tokens-per-second 86,689 "
        "| peak-gpu-memory 57.21 GB"
    )
    assert got["step"].to_list() == [2]
    assert got["global_steps_per_s"].to_list() == [pytest.approx(1 / 24.192)]
