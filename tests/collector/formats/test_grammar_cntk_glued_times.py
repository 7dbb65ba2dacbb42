"""CNTK's progress lines: a minibatch range whose time is glued in CamelCase (``TotalTime = 2.7641s``, the range's
time despite its name), an epoch's ``EpochTime=94.3146``, CNTK's own stop on a NaN loss, and the Python
ProgressPrinter's epoch lines. Lines quoted from
public issue threads (cited beside each); the expected values are worked out by hand in the comments."""

from __future__ import annotations

import pytest

from tests.support.formats_support import endings, read

# microsoft/CNTK issue 194 (CIFAR-10 BrainScript example, 2016): one range of 500 minibatches, then the epoch's end
_RANGE = (
    " Epoch[17 of 30]-Minibatch[   1- 500, 64.02%]: SamplesSeen = 32000; TrainLossPerSample =  0.61816498; "
    "EvalErr[0]PerSample = 0.20075000; TotalTime = 60.3761s; SamplesPerSecond = 530.0"
)
_EPOCH_END = (
    "Finished Epoch[17 of 30]: [Training Set] TrainLossPerSample = 0.61884153; EvalErrPerSample = 0.20176457; "
    "AvgLearningRatePerSample = 4.6875e-005; EpochTime=94.3146"
)


def test_a_glued_total_time_is_its_ranges_time() -> None:
    got = read(_RANGE, _EPOCH_END)
    # one record, at the range's end (minibatch 500); 500 minibatches in 60.3761 s = 8.28141 steps/s, which the
    # line's own figures confirm: 32000 samples / 60.3761 s = 530.0 samples/s, 64 samples a minibatch
    assert got.get_column("step").to_list() == [500]
    assert got.get_column("global_steps_per_s")[0] == pytest.approx(500 / 60.3761)
    # near-miss: the epoch's end states an EpochTime (its 781 minibatches' time) and no step: beside the file's step
    # records it is no record of its own
    assert got.height == 1


def test_two_ranges_then_cntks_nan_stop() -> None:
    # microsoft/CNTK issue 406 (2016-04-27): minibatches of one sample (SamplesSeen = 500 over 500 minibatches)
    got = read(
        " Epoch[ 1 of 1]-Minibatch[   1- 500]: SamplesSeen = 500; TrainLossPerSample =  5.87155566; "
        "EvalErr[0]PerSample = 0.27600000; TotalTime = 2.7641s; SamplesPerSecond = 180.9",
        " Epoch[ 1 of 1]-Minibatch[ 501-1000]: SamplesSeen = 500; TrainLossPerSample =  1.#QNAN000; "
        "EvalErr[0]PerSample = 0.48000000; TotalTime = 2.3504s; SamplesPerSecond = 212.7",
    )
    # 500 / 2.7641 = 180.891 and 500 / 2.3504 = 212.730 steps/s (the lines' SamplesPerSecond, one sample a step)
    assert got.get_column("step").to_list() == [500, 1000]
    assert got.get_column("global_steps_per_s").to_list() == pytest.approx([500 / 2.7641, 500 / 2.3504])
    assert endings("EXCEPTION occurred: The training criterion is not a number (NAN). Stop") == [
        ("failed", "EXCEPTION occurred: The training criterion is not a number (NAN). Stop")
    ]


# microsoft/CNTK issue 2354 (2017-09-23, FastRCNN on the Grocery set): the Python ProgressPrinter's epoch lines, their
# seconds glued after the metric's count (``* 40 3.008s``) and read by no key, their rate in samples/s
_PRINTER = (
    "Finished Epoch[17 of 20]: [Training] loss = 25.550015 * 40, metric = 0.48% * 40 3.008s ( 13.3 samples/s);",
    "Finished Epoch[18 of 20]: [Training] loss = 21.753720 * 40, metric = 0.43% * 40 3.006s ( 13.3 samples/s);",
)


def test_an_epoch_level_log_of_examples_per_s_is_a_record_an_epoch() -> None:
    got = read(*_PRINTER)
    # the file states no finer position: each epoch is a record, its examples/s as logged (40 samples an epoch, no
    # minibatch size, so no steps/s) and its loss
    assert got.height == 2
    assert got.get_column("examples_per_s").to_list() == pytest.approx([13.3, 13.3])
    assert got.get_column("loss").to_list() == pytest.approx([25.550015, 21.753720])
    assert got.get_column("global_steps_per_s").to_list() == [None, None]


def test_an_epochs_examples_per_s_beside_minibatch_records_is_no_record() -> None:
    # near-miss: the same epoch line in a file whose minibatch ranges are step records is the epoch's summary (the
    # range line is CNTK issue 194's, above): only the range's record, minibatch 500
    got = read(_RANGE, _PRINTER[0])
    assert got.get_column("step").to_list() == [500]
