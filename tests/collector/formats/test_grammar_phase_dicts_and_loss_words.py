"""The grammar on a step's time split in phases as a dict of quoted values, and on a loss named by its function.

Lines quoted from public threads (read 2026-12-07): modelscope/FunASR issue 2006 (a run of 2024-08-12) and
cloud-annotations/cloud-annotations issue 56 (TensorFlow's image retraining script, a run of 2019-04-23). Each
expected value is worked out in a comment."""

from __future__ import annotations

import pytest

from tests.support.formats_support import read

#: FunASR's trainer: the phases of the step, then their whole, each value a quoted string.
FUNASR = (
    "[2024-08-12 23:04:07,255][root][INFO] - train, rank: 9, epoch: 0/500, data_slice: 0/5, step_in_slice: "
    "32900/81081, step_in_epoch: 32900, total step: 32900, (loss_avg_rank: 0.886), (loss_avg_slice: 0.669), "
    "(ppl_avg_slice: 1.953e+00), (acc_avg_slice: 0.746), (lr: 5.729e-04), [('loss_att', 0.768), ('acc', 0.678), "
    "('loss_pre', 0.119), ('loss', 0.886)], {'data_load': '0.000', 'forward_time': '0.294', 'backward_time': "
    "'0.279', 'optim_time': '0.099', 'total_time': '0.673'}, GPU, memory: usage: 1.165 GB, peak: 64.227 GB"
)


def test_a_quoted_total_time_after_its_phases_is_the_step_time() -> None:
    got = read(FUNASR)
    # the step is 'total step: 32900'; its time the whole of the phases, 0.673 s: 1 / 0.673 = 1.48588 steps/s
    assert got["step"].to_list() == [32900]
    assert got["global_steps_per_s"][0] == pytest.approx(1 / 0.673)
    # the envelope is Hydra's job logging: its time is the record's
    assert str(got["timestamp"][0]) == "2024-08-12 23:04:07.255000+00:00"


def test_a_quoted_total_time_glued_to_a_unit_is_no_step_time() -> None:
    # near-miss: a closing quote then a unit ('0.673'ms) is no value that ends where the phases' values do
    line = "step 5, {'forward_time': '0.294', 'total_time': '0.673'ms}"
    assert read(line).height == 0


#: retrain.py through tf.logging, re-logged by absl in glog's layout, its own datetime.now() at the head of the message.
RETRAIN = [
    "I0423 05:08:16.899667 47836397217664 tf_logging.py:115] 2019-04-23 05:08:16.899646: Step 270: Cross entropy "
    "= 0.012275",
    "INFO:tensorflow:2019-04-23 05:08:17.334784: Step 280: Train accuracy = 100.0%",
    "INFO:tensorflow:2019-04-23 05:08:17.335014: Step 280: Cross entropy = 0.011189",
    "I0423 05:08:17.335031 47836397217664 tf_logging.py:115] 2019-04-23 05:08:17.335014: Step 280: Cross entropy "
    "= 0.011189",
    "INFO:tensorflow:2019-04-23 05:08:17.372284: Step 280: Validation accuracy = 100.0% (N=100)",
]


def test_cross_entropy_is_the_loss_of_a_step_timed_by_its_logger() -> None:
    got = read(*RETRAIN).sort("source_offset")
    # the cross entropy lines are records (lines 1, 3, 4); the accuracies are none (no loss, or an evaluation's)
    assert got["source_offset"].to_list() == [1, 3, 4]
    assert got["step"].to_list() == [270, 280, 280]
    assert got["loss"].to_list() == pytest.approx([0.012275, 0.011189, 0.011189])
    # both copies of step 280 carry the program's own time (the glog copy's year is the message's, 2019): one record
    # for the analysis, which merges copies of a step within 5 s
    assert [str(t) for t in got["timestamp"]] == [
        "2019-04-23 05:08:16.899646+00:00",
        "2019-04-23 05:08:17.335014+00:00",
        "2019-04-23 05:08:17.335014+00:00",
    ]


def test_a_validation_cross_entropy_is_no_training_loss() -> None:
    # near-miss: retrain.py's validation figures are an evaluation's, whatever the loss is called
    line = "INFO:tensorflow:2019-04-23 05:08:17.372284: Step 280: Validation cross entropy = 0.02 (N=100)"
    assert read(line).height == 0
