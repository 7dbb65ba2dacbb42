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


#: fastai's table in a notebook copied with tabs: timeseriesAI/tsai issue 639 (a comment of 2022-12-08)
_FASTAI = [
    "epoch\ttrain_loss\tvalid_loss\taccuracy\ttime",
    "0\tnan\tnan\t0.958595\t00:03",
    "1\tnan\tnan\t0.958595\t00:03",
]
#: Chainer's PrintReport table: train_mnist.py --gpu 0 quoted in a blog post (public code index id 30342231894)
_CHAINER = [
    "epoch       main/loss   validation/main/loss  main/accuracy  validation/main/accuracy  elapsed_time",
    "1           0.189677    0.105867              0.9419         0.9665                    13.5156",
    "2           0.0729073   0.0773182             0.976699       0.976                     23.7467",
]


def test_a_tables_rows_are_read_under_their_header() -> None:
    # fastai: each row an epoch with its duration 00:03 = 3 s (lines 2 and 3); Chainer: each row an epoch with its
    # seconds since the start, 13.5156 and 23.7467 (so the second epoch took 23.7467 - 13.5156 = 10.2311 s)
    fastai = parse(_FASTAI).steps
    assert fastai.get_column("source_offset").to_list() == [2, 3]
    assert fastai.get_column("interval_s").to_list() == [3.0, 3.0]
    chainer = parse(_CHAINER).steps
    assert chainer.get_column("source_offset").to_list() == [2, 3]
    assert chainer.get_column("elapsed_s").to_list() == [13.5156, 23.7467]


@pytest.mark.parametrize(
    "lines",
    [
        # rows without their header: numbers nobody named (YOLOv5's results rows, ultralytics/yolov5 issue 2552)
        ["0           0.189677    0.105867              0.9419         0.9665                    13.5156"],
        # a row with a field fewer than its header is no row of it
        [_CHAINER[0], "1           0.189677    0.105867              0.9419         0.9665"],
        # a header that names no position (Ray Tune's status table, ray-project/ray issue 9788) makes no rows
        ["alpha  beta  iter  total_time", "1.2    2     1     0.000279427"],
    ],
)
def test_near_misses_of_a_table_are_no_record(lines: list[str]) -> None:
    assert parse(lines).steps.height == 0


#: The end of the same notebook's run: the user stopped fit_one_cycle, IPython's traceback cut by the paste
_INTERRUPTED = [
    "---------------------------------------------------------------------------",
    "KeyboardInterrupt                         Traceback (most recent call last)",
    "~\\AppData\\Local\\Temp\\ipykernel_13020\\4198329076.py in <module>",
    "----> 1 learn.fit_one_cycle(25, lr_max=1e-3)",
    "      2 learn.save('stage1')",
]


def test_a_traceback_after_a_tables_rows_fails_the_run() -> None:
    # the rows are records without a step (epochs): the traceback after them (line 3 + 5 = 8, its last) still ends
    # the run: failed
    events = parse(_FASTAI + _INTERRUPTED).events.filter(event="failed")
    assert events.get_column("source_offset").to_list() == [8]
    # IPython named the exception on the traceback's first line: the user's Ctrl-C is the cause
    assert events.get_column("reason").to_list() == [
        "interrupted by the user (Ctrl-C) before the run finished (KeyboardInterrupt)"
        " (its traceback ends the log, its last line missing)"
    ]


def test_a_traceback_before_any_record_is_no_failure_of_the_rows_after_it() -> None:
    # near-miss: the same traceback printed before the table (a warning of an earlier cell): no failed event
    assert parse(_INTERRUPTED + _FASTAI).events.filter(event="failed").height == 0
