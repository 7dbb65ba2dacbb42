"""The grammar on positions and times several trainers print in their own way: a whole step printed with a fraction of
zeros, a column of steps done, an elapsed time written as a clock, timm's epoch before its bracketed counter and
Composer's console training time in hours.

Lines quoted from public sources (read 2026-12-07): saforem2/vault ``.../mlprof/train-deepspeed-thetaGPU.md`` (mlprof,
2023-01-11), coqui-ai/STT issue 2238 (2022-06-10), phamdinhkhanh/general_backbone README (timm's train loop, 2021),
mosaicml/llm-foundry issue 244 (Composer, 2023-06). Each expected value is worked out in a comment."""

from __future__ import annotations

import pytest

from tests.support.formats_support import read

MLPROF = [
    "[2023-01-11 13:28:19,976][mlprof.trainers.pytorch.trainer][INFO] - [0] [5/10: 0/1875 (0%)] epoch=5.0000 "
    "step=33.0000 dt=0.0026 batch_acc=0.8867 batch_loss=0.0015 acc=0.1211 running_loss=0.0002",
    "[2023-01-11 13:28:20,154][mlprof.trainers.pytorch.trainer][INFO] - [0] [5/10: 1280/1875 (62%)] epoch=5.0000 "
    "step=38.0000 dt=0.0022 batch_acc=0.8984 batch_loss=0.0016 acc=0.7152 running_loss=0.0013",
]


def test_a_whole_step_printed_with_zeros_after_its_point_is_the_step() -> None:
    got = read(*MLPROF).sort("source_offset")
    # step=33.0000 and step=38.0000 are steps 33 and 38, timed by their logger (no measure: dt is unit-less); the
    # epoch's share in parentheses, (0%) and (62%), is no measure the line leaves unread
    assert got["step"].to_list() == [33, 38]
    assert got["loss"].to_list() == pytest.approx([0.0015, 0.0016])


def test_a_step_with_a_fraction_is_no_position() -> None:
    # near-miss: step=33.5 is no whole step (a fraction of an epoch, a mean)
    line = MLPROF[0].replace("step=33.0000", "step=33.5000")
    got = read(line)
    assert 33 not in got["step"].to_list()


COQUI = [
    "Epoch 0 |   Training | Elapsed Time: 0:00:14 | Steps: 89 | Loss: 25.274169",
    "Epoch 0 |   Training | Elapsed Time: 0:00:15 | Steps: 91 | Loss: 24.980746",
]


def test_a_column_of_steps_done_and_an_elapsed_clock() -> None:
    got = read(*COQUI).sort("source_offset")
    # Steps: 89 at 0:00:14 = 14 s since the start, Steps: 91 at 15 s
    assert got["step"].to_list() == [89, 91]
    assert got["elapsed_s"].to_list() == pytest.approx([14.0, 15.0])


@pytest.mark.parametrize(
    "line",
    [
        # near-misses: a total of steps (its word before), and a clock that is a time of day under no elapsed key
        "Total batch size = 16 | Total steps = 312 | Elapsed Time: 0:00:14",
        "Epoch 0 | Training | Time: 14:00:14 | Loss: 25.27",
    ],
)
def test_totals_and_times_of_day_are_no_positions_nor_elapsed_times(line: str) -> None:
    assert read(line).height == 0


TIMM = [
    "Train: 0 [   0/33 (  0%)]  Loss: 8.863 (8.86)  Time: 1.663s,    9.62/s  (1.663s,    9.62/s)  LR: 5.000e-04  "
    "Data: 0.460 (0.460)",
    "Train: 0 [  32/33 (100%)]  Loss: 1.336 (4.00)  Time: 0.934s,    8.57/s  (0.218s,   36.68/s)  LR: 5.000e-04  "
    "Data: 0.000 (0.014)",
    "Train: 1 [   0/33 (  0%)]  Loss: 0.5741 (0.574)  Time: 0.645s,   24.82/s  (0.645s,   24.82/s)  LR: 5.000e-04  "
    "Data: 0.477 (0.477)",
    "Train: 1 [  32/33 (100%)]  Loss: 0.5411 (0.313)  Time: 0.089s,   90.32/s  (0.166s,   48.17/s)  LR: 5.000e-04  "
    "Data: 0.000 (0.016)",
]


def test_timms_epoch_before_its_counter_makes_the_step_whole() -> None:
    got = read(*TIMM).sort("source_offset")
    # epochs counted from 0, 33 batches each: 0*33+0, 0*33+32, 1*33+0, 1*33+32
    assert got["step"].to_list() == [0, 32, 33, 65]
    # each record's time is its batch's (Time: 0.934s -> 1 / 0.934 = 1.0707 steps/s)
    assert got["global_steps_per_s"][1] == pytest.approx(1 / 0.934)


def test_a_test_phase_or_a_bracket_without_a_counter_is_no_epoch() -> None:
    # near-misses: timm's evaluation (``Test: [ 0/29]``) is none, and ``Train: 1 [lr 0.1]`` states no counter
    assert read("Test: [   0/29]  Time: 0.560 (0.560)  Loss:  0.6912 (0.6912)").height == 0
    got = read("Train: 1 [lr 0.1] step 7 time: 0.5s")
    assert got["step"].to_list() == [7]


COMPOSER = [
    "[batch=1/10]:",
    "         Train time/batch: 0",
    "         Train time/sample: 0",
    "         Train loss/train/total: 11.6153",
    "         Train time/train: 0.0073",
    "         Train time/val: 0.0000",
]


def test_composers_training_time_is_hours_since_the_start() -> None:
    got = read(*COMPOSER)
    # the block's record: batch 1, 0.0073 h = 26.28 s since the start; time/batch is a counter, no time
    assert got["step"].to_list() == [1]
    assert got["elapsed_s"][0] == pytest.approx(0.0073 * 3600)


def test_a_loops_own_time_per_train_is_no_composer_hours() -> None:
    # near-miss: a hand-written loop's ``Time/train`` (the mean seconds of its iterations), without Composer's layout
    assert read("it 10 Loss/train: 0.5 Time/train: 0.25").height == 0
