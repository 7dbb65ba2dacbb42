"""Three kinds of progress statement the grammar reads: examples per second of one device keyed with the device
after the time (``tokens_per_second_per_gpu``), a progress bar that prints its elapsed clock and no rate, and the
rows of a table named by a header line above them. Each test quotes short real lines of the kind (the source
beside them), works the expected values out by hand in its comments, and refuses a near-miss."""

from __future__ import annotations

import pytest

from tests.support.formats_support import parse

#: torchtune's StdoutLogger, meta-pytorch/torchtune PR 1358 (its description, 2024-08-16)
_TORCHTUNE = [
    "Step 1 | loss:2.085338592529297 lr:2e-05 tokens_per_second_per_gpu:57.828881833956174",
    "Step 2 | loss:1.8718312978744507 lr:2e-05 tokens_per_second_per_gpu:405.044978758513",
]


def test_examples_per_second_keyed_with_its_device_after_the_time_are_read() -> None:
    # each line: its step, its loss and one GPU's tokens/s as logged (57.83 and 405.04)
    steps = parse(_TORCHTUNE).steps
    assert steps.get_column("step").to_list() == [1, 2]
    assert steps.get_column("examples_per_s").to_list() == [
        pytest.approx(57.828881833956174),
        pytest.approx(405.044978758513),
    ]
    assert steps.get_column("loss").to_list() == [pytest.approx(2.0853386), pytest.approx(1.8718313)]


def test_one_devices_examples_are_no_step_rate_under_a_global_batch() -> None:
    # 80 samples/s of one GPU under a global batch of 64: the devices are not stated, so no steps/s (80 / 64 = 1.25
    # would take one device's samples for the job's); under one device's batch of 8 it is 80 / 8 = 10 steps/s
    per_gpu = "Step 3 | loss:1.17 lr:2e-05 samples_per_second_per_gpu:80.0"
    assert parse(["global_batch_size: 64", per_gpu]).steps.get_column("global_steps_per_s").to_list() == [None]
    assert parse(["per_device_train_batch_size: 8", per_gpu]).steps.get_column("global_steps_per_s").to_list() == [
        pytest.approx(10.0)
    ]


def test_a_job_wide_key_before_the_devices_one_keeps_the_line_job_wide() -> None:
    # nanotron's line (huggingface/nanotron PR 23, 2024-01-17) states both: the job's 17.9K tokens/s is read
    line = (
        "01/17/2024 13:48:41 [INFO|DP=0|PP=0|TP=0|ip-26-0-160-225]: iteration: 991 / 1000 | consumed_tokens: 634K | "
        "elapsed_time_per_iteration_ms: 35.7 | tokens_per_sec: 17.9K | tokens_per_sec_per_gpu: 4.48K | "
        "global_batch_size: 20 | lm_loss: 10.6 | lr: 1e-05 | grad_norm: 0.516"
    )
    assert parse([line]).steps.get_column("examples_per_s").to_list() == [17900.0]


@pytest.mark.parametrize(
    "line",
    [
        # a key that only begins like one (a word runs on after the device) is no measure
        "Step 3 | loss:1.17 lr:2e-05 tokens_per_second_per_gpu_peak:655.9",
        # a figure of a plan, with no position, is no record
        "tokens_per_second_per_gpu: 3679.1",
    ],
)
def test_near_misses_of_a_devices_key_are_no_record(line: str) -> None:
    assert parse([line]).steps.height == 0


def test_a_bar_with_its_elapsed_clock_and_no_rate_is_timed_by_the_clock() -> None:
    # YOLOv5's bar from late 2022 prints '{n_fmt}/{total_fmt} {elapsed}' (ultralytics/yolov5 PR 10314, a COCO run):
    # 1849 steps in 13:15 = 795 s: 1849 / 795 = 2.32579 steps/s, the bar's mean rate since it began
    line = (
        "        0/1      22.4G    0.07281    0.08384    0.06359        199        640: "
        "100%|██████████| 1849/1849 13:15"
    )
    steps = parse([line]).steps
    assert steps.get_column("step").to_list() == [1849]
    assert steps.get_column("elapsed_s").to_list() == [795.0]
    assert steps.get_column("global_steps_per_s").to_list() == [pytest.approx(1849 / 795)]


@pytest.mark.parametrize(
    "line",
    [
        # the same run's dataset scan: a bar of data work done in 00:00 times nothing
        "train: Scanning /home/xinli/projects/datasets/coco/train2017.cache... 117266 images, 1021 backgrounds, "
        "0 corrupt: 100%|██████████| 118287/118287 00:00",
        # a month and day before a time of day, no bar drawn
        "11/01 11:27:04 starting",
        # a bar with no clock after its counter
        "        0/1      22.4G    0.07281    0.08384    0.06359        199        640:  40%|████      | 740/1849",
    ],
)
def test_near_misses_of_a_rateless_bar_are_no_record(line: str) -> None:
    assert parse([line]).steps.height == 0
