"""Statements of work other than a training step (a checkpoint saved, a download, a compilation, a Docker
build's step, an ETA's date) are no step records, though they name a step and a duration; step lines that
mention such work after their position stay records.

The lines are written for the test in the shapes the tools print; each expected rate is worked by hand."""

from __future__ import annotations

import pytest

from tests.support.formats_support import read


@pytest.mark.parametrize(
    "line",
    [
        "Saved checkpoint for step 1000 in 12.3 s",
        "XLA compilation of step 1 took 45.2 seconds",
        "Downloading shard 3/100 took 2.0 s",
        "downloaded 10/100 MB in 2.0 s",
        "backup 2023/2024 finished in 12 s",
        "ETA 12/25 at 3.2 s per step",
        "Step 3/12 : RUN make -j8   took 12 s",
        "Processing batch 10/100 in 0.5 s",
        "Writing step 100 to checkpoint took 2.3 s",
        "Saving checkpoint at step 200 took 4.1 s",
        "Loading checkpoint of step 500 took 3.0 s",
        "Restored step 500 in 3.0 s",
        "Exporting model at step 900 took 8.0 s",
        "Tracing step 1 took 20.5 s",
        "Uploading step 300 artifacts took 1.5 s",
    ],
)
def test_a_statement_of_other_work_is_no_record(line: str) -> None:
    assert read(line).height == 0


@pytest.mark.parametrize(
    ("line", "step", "rate"),
    [
        # a checkpoint metric after the position: 1000 / 250 ms = 4.0 steps/s
        ("step 100 | loss 2.10 | ckpt 12 MB | time per step (ms): 250.0", 100, 4.0),
        # ``loaded`` after the position: 1 / 0.5 s = 2.0
        ("iter 40: loss 1.9, time 500.00ms, data loaded", 40, 2.0),
        # a word joined to a key is no subject: 1 / 0.25 s = 4.0
        ("ckpt_loss: 0.1 step: 7 time: 0.2500", 7, 4.0),
        # an ``eta:`` clock is no ETA date: detectron2's meters, 1 / 0.25 s = 4.0
        ("eta: 1:02:03  iter: 459  total_loss: 0.812  time: 0.2500  data_time: 0.0100  lr: 0.02", 459, 4.0),
        # a position counted N/M that is no build step: 1 / 0.5 s = 2.0
        ("Step 3/12 : loss 0.25 took 0.5 s", 3, 2.0),
    ],
)
def test_a_step_line_mentioning_other_work_after_its_position_is_read(line: str, step: int, rate: float) -> None:
    got = read(line)
    assert got.select("step", "global_steps_per_s").rows() == [(step, pytest.approx(rate))]


def test_a_checkpoint_line_never_replaces_the_step_record_of_its_step() -> None:
    # Megatron-LM's iteration line, after a checkpoint's line naming the same step: the record is the iteration
    # line's, 1000 / 250.0 ms = 4.0 steps/s (the checkpoint's 1 / 4.1 s = 0.2439 would be no step's rate)
    got = read(
        "Saving checkpoint at step 200 took 4.1 s",
        " iteration      200/  100000 | consumed samples: 3200 | elapsed time per iteration (ms): 250.0 |"
        " learning rate: 1.0E-04 | lm loss: 2.0E+00 |",
    )
    assert got.select("source_offset", "step", "global_steps_per_s").rows() == [(2, 200, pytest.approx(4.0))]
