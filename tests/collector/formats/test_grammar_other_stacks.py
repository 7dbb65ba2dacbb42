"""The grammar on the step lines of stacks other than language-model trainers: speech (ESPnet2,
wav2letter), Lingvo, CLU/Flax, PaddlePaddle, NVIDIA DLLogger, DrQA's elapsed time, MXNet R's batch
counter that starts again each epoch.

Each line is written for the test in the shape its tool prints; the shapes were read from public issue
threads on 2026-12-06: espnet/espnet issue 2674 (ESPnet2's reporter), flashlight/wav2letter issue 728,
tensorflow/lingvo issue 42, google/flax issue 3364 (CLU's LoggingWriter), PaddlePaddle/models PR 4882,
NVIDIA/DeepLearningExamples issue 881 (DLLogger), facebookresearch/DrQA issue 137, apache/mxnet PR 3932
(the R speedometer). The figures are made up; each expected value is worked out in a comment."""

from __future__ import annotations

import pytest

from tests.support.formats_support import read


@pytest.mark.parametrize(
    ("line", "step", "rate"),
    [
        # ESPnet2: a range of batches ends at 750; train_time is the iteration's seconds, 1 / 0.020 = 50 (its
        # iter_time, the data loader's 0.001 s, would say 1000)
        ("9epoch:train:376-750batch: iter_time=0.001, forward_time=0.005, loss=1.543, train_time=0.020", 750, 50.0),
        # wav2letter: nupdates is the global update count; bch(ms) a batch's ms, 1000 / 500 = 2
        ("epoch:        2 | nupdates:         1000 | lr: 0.050000 | runtime: 00:10:00 | bch(ms): 500.00 |", 1000, 2.0),
        # Lingvo: a step-less Steps/second is the job's global step rate, as printed
        (
            "I0308 16:13:49.943696 140304032200448 trainer.py:371] Steps/second: 0.014225, Examples/second: 0.7313",
            None,
            0.014225,
        ),
        # CLU's LoggingWriter: the step in brackets before key=value statements; steps_per_second as printed
        (
            "I1002 21:38:13.425730 139917864867392 logging_writer.py:35] [400] steps_per_second=1.5, train_loss=3.2",
            400,
            1.5,
        ),
        # PaddlePaddle's image classification: batch_cost with a space before its number, 1 / 0.125 = 8
        (
            "[Pass 0, train batch 10]   loss 21.68535, lr 0.10000, batch_cost 0.12500 sec, ips 1024.0 images/sec",
            10,
            8.0,
        ),
    ],
)
def test_step_lines_of_other_stacks_are_read(line: str, step: int | None, rate: float) -> None:
    got = read(line)
    assert got.height == 1, got
    assert got["step"][0] == step
    assert got["global_steps_per_s"][0] == pytest.approx(rate)


def test_dllogger_inputs_per_second_are_examples_and_time_no_step() -> None:
    # NVIDIA DLLogger (ResNet-50, TensorFlow): step key (0, 120), total_ips is images/s as logged: no step rate
    # from it (the batch is not on the line); the envelope's times, 0.25 s apart, are the clock
    got = read(
        "DLL 2021-03-23 11:48:38.750000 - (0, 120) total_ips : 1024.0 ",
        "DLL 2021-03-23 11:48:39.000000 - (0, 121) total_ips : 1024.0 ",
    )
    assert got["step"].to_list() == [120, 121]
    assert got["examples_per_s"].to_list() == [1024.0, 1024.0]
    assert got["global_steps_per_s"].to_list() == [None, None]
    stamps = got["timestamp"].to_list()
    assert (stamps[1] - stamps[0]).total_seconds() == pytest.approx(0.25)


def test_elapsed_time_in_words_is_seconds_since_the_start() -> None:
    # DrQA: "elapsed time = X (s)" is the seconds since training began; 25 iterations in 91.77 - 89.79 = 1.98 s
    got = read(
        "[ train: Epoch = 0 | iter = 1175/2714 | loss = 5.02 | elapsed time = 89.79 (s) ]",
        "[ train: Epoch = 0 | iter = 1200/2714 | loss = 4.94 | elapsed time = 91.77 (s) ]",
    )
    assert got["step"].to_list() == [1175, 1200]
    assert got["elapsed_s"].to_list() == [89.79, 91.77]
    assert got["loss"].to_list() == [5.02, 4.94]


def test_a_batch_counter_that_starts_again_counts_within_its_epoch() -> None:
    # MXNet R: batches 50 and 100, the epoch's summary "[1] Train-accuracy=..", then batch 50 again: the second
    # epoch's batch 50 is step 1 epoch x 100 (the largest batch shown) + 50 = 150
    got = read(
        "Batch [50] Speed: 1000.0 samples/sec Train-accuracy=0.1",
        "Batch [100] Speed: 1000.0 samples/sec Train-accuracy=0.2",
        "[1] Train-accuracy=0.2",
        "Batch [50] Speed: 1000.0 samples/sec Train-accuracy=0.9",
    )
    assert got["step"].to_list() == [50, 100, 150]


def test_a_step_that_goes_back_stays_as_printed() -> None:
    # a resumed run prints step 50 again after step 100: a step (unlike a batch) counts over the run
    got = read("step 50 | 2.0 it/s", "step 100 | 2.0 it/s", "step 50 | 2.0 it/s")
    assert got["step"].to_list() == [50, 100, 50]


@pytest.mark.parametrize(
    "line",
    [
        # a range of batches with no measure (a resume note), and a tip that is no inputs/s
        "Resuming at 376-750batch of epoch 9",
        "tips: 3 of 10 | step 40",
        # an epoch summary's runtime with no update count: an epoch is no position
        "epoch:        2 | lr: 0.050000 | runtime: 00:10:00 | bch(ms): 500.00 |",
    ],
)
def test_near_misses_of_these_words_are_no_records(line: str) -> None:
    assert read(line).height == 0
