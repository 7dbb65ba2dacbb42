"""The grammar on the statements of vision, speech and generative-image trainers: each kind read from short real
lines (quoted from public issues, the source in each test's comment), with its near-misses refused. Each expected
value is worked out by hand in a comment."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from tests.support.formats_support import frame, parse, read
from tierscope.collector.formats.envelopes import split_envelopes


def test_a_counter_after_an_epoch_with_its_total_is_the_step_within_the_epoch() -> None:
    # DINO's MetricLogger (facebookresearch/dino issue 69, 2021-06-08): 'Epoch: [0/100]' is the epoch, [2240/2502]
    # the iteration; the first epoch shown is 0, so the steps are 0 x 2502 + 2240 = 2240 and 2250; 'time:' is the
    # seconds per iteration: 1 / 0.618063 = 1.61796
    got = read(
        "Epoch: [0/100]  [2240/2502]  eta: 0:02:44  loss: 5.385776 (7.546279)  lr: 0.000089 (0.000045)  "
        "wd: 0.040071 (0.040024)  time: 0.618063  data: 0.000170  max mem: 13871",
        "Epoch: [0/100]  [2250/2502]  eta: 0:02:38  loss: 5.450140 (7.536839)  lr: 0.000090 (0.000045)  "
        "wd: 0.040071 (0.040024)  time: 0.612473  data: 0.000167  max mem: 13871",
    )
    assert got["step"].to_list() == [2240, 2250]
    assert got["global_steps_per_s"][0] == pytest.approx(1 / 0.618063)


def test_a_bare_counter_after_an_epoch_counter_counts_within_the_epoch() -> None:
    # MONAI's SwinUNETR trainer (Project-MONAI/research-contributions issue 306, 2023-09-19): 'Epoch 31/300' then
    # the batch '200/1000'; the batch goes back when the epoch advances, so it counts within the epoch; the first
    # epoch shown is 31 (not 1), so epochs count from 0: 31 x 1000 + 200 = 31200, 31400, then 32 x 1000 + 0 = 32000
    got = read(
        "Epoch 31/300 200/1000 loss: 0.2830 time 1.49s",
        "Epoch 31/300 400/1000 loss: 0.2741 time 1.32s",
        "Epoch 32/300 0/1000 loss: 0.2807 time 3.87s",
    )
    assert got["step"].to_list() == [31200, 31400, 32000]


def test_an_epoch_counter_alone_is_still_the_lines_counter() -> None:
    # near-miss: with no second counter, the epoch's own N/M reads as before (a counter): step 3
    got = read("Epoch 3/10 loss: 0.5 time 12.0s")
    assert got["step"].to_list() == [3]


def test_a_word_before_python_loggings_time_glued_by_a_dash_is_an_envelope() -> None:
    # arcface_torch (deepinsight/insightface issue 1996, 2022-05-05): 'Training: <asctime>-<message>'; the clock
    # gives the rate: steps 320 -> 330 in 03:05:56.684 - 03:05:53.162 = 3.522 s
    got = parse(
        [
            "Training: 2022-05-05 03:05:53,162-Speed 727.03 samples/sec   Loss 43.9404   LearningRate 0.1000   "
            "Epoch: 0   Global Step: 320   Fp16 Grad Scale: 131072   Required: 453 hours",
            "Training: 2022-05-05 03:05:56,684-Speed 727.08 samples/sec   Loss 43.9225   LearningRate 0.1000   "
            "Epoch: 0   Global Step: 330   Fp16 Grad Scale: 131072   Required: 449 hours",
        ]
    ).steps
    assert got["step"].to_list() == [320, 330]
    assert got["timestamp"].to_list() == [
        datetime(2022, 5, 5, 3, 5, 53, 162000, tzinfo=UTC),
        datetime(2022, 5, 5, 3, 5, 56, 684000, tzinfo=UTC),
    ]


def test_a_two_digit_year_before_a_level_is_of_this_century() -> None:
    # BasicSR's '%y-%m-%d %H:%M:%S.%03d - INFO: ' (open-mmlab/mmagic issue 82, 2020-05-22): 20-05-22 is 2020-05-22
    body, facts = split_envelopes(
        frame(["20-05-22 17:42:09.481 - INFO: [epoch:  0, iter:     600, lr:(1.000e-04,)] l_g_pix: 4.1864e-04"]), 2024
    )
    assert body["line"].to_list() == ["[epoch:  0, iter:     600, lr:(1.000e-04,)] l_g_pix: 4.1864e-04"]
    assert facts is not None
    assert facts["timestamp"].to_list() == [datetime(2020, 5, 22, 17, 42, 9, 481000, tzinfo=UTC)]


def test_a_bar_that_never_states_a_loss_beside_one_that_does_is_the_evaluations() -> None:
    # SpeechBrain in Colab (speechbrain/speechbrain issue 938, 2021-08-15): each epoch's finished training bar carries
    # train_loss, the validation bar (736/736) none. Training only: epoch 6's bar is step 2774, epoch 7's (drawn again
    # lines later) the next lap's, 2 x 2774 = 5548; its rate 3.24 it/s as printed
    got = read(
        "100% 2774/2774 [14:15<00:00,  3.24it/s, train_loss=5.86]",
        "100% 736/736 [00:27<00:00, 26.83it/s]",
        "speechbrain.utils.epoch_loop - Going into epoch 7",
        "100% 2774/2774 [14:16<00:00,  3.24it/s, train_loss=5.49]",
        "100% 736/736 [00:27<00:00, 26.93it/s]",
    )
    assert got["step"].to_list() == [2774, 5548]
    assert got["global_steps_per_s"].to_list() == pytest.approx([3.24, 3.24])


def test_bars_without_a_loss_anywhere_stay_training_and_a_closing_redraw_is_the_same_step() -> None:
    # near-misses: with no bar stating a loss, a bar of another total is not judged by it (100/100 and 20/20 both
    # read); a finished bar drawn again on the very next line is its closing redraw: step 100 again (the same step,
    # kept once later), not the next lap's 200
    got = read(
        "100%|##########| 100/100 [00:50<00:00,  2.00it/s]",
        "100%|##########| 100/100 [00:50<00:00,  2.00it/s]",
        "100%|##########| 20/20 [00:02<00:00, 10.00it/s]",
    )
    assert got["step"].to_list() == [100, 100, 20]


def test_a_finished_bar_redrawn_after_an_evaluation_with_no_new_loss_is_the_same_step() -> None:
    # near-miss (accelerate under SageMaker, the h1 dev set's case 05): the training bar's closing refresh after the
    # evaluation, 79/79 again lines later with no loss, is step 79 again, not a second lap's 158
    got = read(
        "100%|##########| 79/79 [00:19<00:00,  4.79it/s]",
        "***** Running Evaluation *****",
        "epoch 0: {'accuracy': 0.85}",
        "100%|##########| 79/79 [00:47<00:00,  1.65it/s]",
    )
    assert got["step"].to_list() == [79, 79]
