"""An iteration's seconds under words of a hand-written loop's own: UCTransNet's running mean in CamelCase, alone in its
parentheses (``(AvgTime 1.4)``), and YOLACT's ``timer: 1.364`` (with DBPN's ``Timer: 0.1234 sec.``). YOLACT names its
losses by letters (``B: | C: | M: | S: | T:``) and its position by no word at all: its rows are read by the learned
layout, the vocabulary's ``timer`` saying the file is a training loop's."""

from __future__ import annotations

import pytest

from tests.support.formats_support import parse

# Quoted from McGregorWwww/UCTransNet issue 2 (SeyedAliRezMousavi, 2021): ``print_summary`` of Train_one_epoch.py, one
# line per iteration, the leading spaces as printed.
UCTRANSNET = [
    "   [Train] Epoch: [1][367/4899]  Loss:0.564 (Avg 0.5566) Dice:0.3038 (Avg 0.3144) LR 1.00e-03   (AvgTime 1.4)",
    "   [Train] Epoch: [1][368/4899]  Loss:0.417 (Avg 0.5562) Dice:0.3665 (Avg 0.3146) LR 1.00e-03   (AvgTime 1.4)",
]
# Quoted from dbolya/yolact issue 318 (IQ17, 2020): train.py's line every 10 iterations, ``[epoch] iteration``.
YOLACT = [
    "[  0]     520 || B: 3.451 | C: 2.964 | M: 4.671 | S: 0.945 | T: 12.031 || ETA: 2 days, 4:31:22 || timer: 1.364",
    "[  0]     530 || B: 3.443 | C: 2.929 | M: 4.674 | S: 0.926 | T: 11.972 || ETA: 2 days, 4:33:06 || timer: 1.256",
    "[  0]     540 || B: 3.446 | C: 2.875 | M: 4.671 | S: 0.914 | T: 11.905 || ETA: 2 days, 4:39:56 || timer: 1.655",
    "[  0]     550 || B: 3.455 | C: 2.862 | M: 4.662 | S: 0.905 | T: 11.884 || ETA: 2 days, 4:40:43 || timer: 1.515",
    "[  0]     560 || B: 3.455 | C: 2.826 | M: 4.665 | S: 0.892 | T: 11.838 || ETA: 2 days, 4:36:31 || timer: 1.381",
]


def test_a_running_mean_of_the_iteration_time_is_its_step_time() -> None:
    steps = parse(UCTRANSNET).steps
    assert steps.height == 2
    # 1 / 1.4 s = 0.714286 iterations/s on both lines
    assert steps.get_column("global_steps_per_s").to_list() == pytest.approx([1 / 1.4, 1 / 1.4])
    assert steps.get_column("loss").to_list() == pytest.approx([0.564, 0.417])


def test_yolact_rows_are_iterations_timed_by_their_timer() -> None:
    steps = parse(YOLACT).steps
    # the bare iteration after the bracketed epoch is the position (it grows by 10 a row); the epoch does not grow
    assert steps.get_column("step").to_list() == [520, 530, 540, 550, 560]
    # each row's timer: 1 / 1.364 = 0.733138, 1 / 1.256 = 0.796178, ...
    assert steps.get_column("global_steps_per_s").to_list() == pytest.approx(
        [1 / 1.364, 1 / 1.256, 1 / 1.655, 1 / 1.515, 1 / 1.381]
    )


def test_a_timer_in_seconds_said() -> None:
    # DBPN-style loops (e.g. the super-resolution trainers that print ``|| Timer: {:.4f} sec.`` after each iteration)
    steps = parse(["===> Epoch[1](10/100): Loss: 0.0412 || Timer: 0.1234 sec."]).steps
    assert steps.get_column("step").to_list() == [10]
    assert steps.get_column("global_steps_per_s").to_list() == pytest.approx([1 / 0.1234])


@pytest.mark.parametrize(
    "lines",
    [
        # the validation's summary of the same loop: an evaluation
        ["   [Val] Epoch: [1][10/100]  Loss:0.564 (Avg 0.5566) Dice:0.3038 (Avg 0.3144) (AvgTime 0.3)"],
        # the loader's wait is no step's time
        ["   [Train] Epoch: [1][367/4899]  Loss:0.564 (Avg 0.5566) LR 1.00e-03   (AvgDataTime 0.02)"],
        # an inference loop's timer over its images: no position, no training
        [f"===> Processing: img_00{i}.png || Timer: 0.04{i} sec." for i in range(1, 7)],
        # a timer's setting in a config dump
        ["timer: 30", "timer: 30", "timer: 30", "timer: 30", "timer: 30"],
    ],
)
def test_timers_that_time_no_training_step(lines: list[str]) -> None:
    assert parse(lines).steps.height == 0
