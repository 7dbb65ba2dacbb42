"""Progress bars of shapes the grammar missed: rich's bar with no percentage (Lightning's RichProgressBar), a tqdm bar
whose rate the terminal's width cut off, a detector's evaluation bars named by what they do after an evaluation's
banner, and SpeechBrain's bar drawn anew under its logger's ``Going into epoch N``.

Quoted lines (read 2026-12-07): ZettaAI/zetta_utils issue 94 (2022); techyogeshchauhan/Atpug
``terminal_seal_project/runs/train/result.md`` (at dbcd2fc9, 2025); eriklindernoren/PyTorch-YOLOv3 issue 650
(2021-03-20); YueZhou-oh/GWDA_lib ``docs/source/train.rst`` (at 0606956d, 2024-02-02). Each expected value is worked
out in a comment."""

from __future__ import annotations

import pytest

from tests.support.formats_support import endings, read

RICH = (
    "`Epoch 31/99 ━━━━━━━━━━━━━━━━━━━━━━━━╸━━━━━━━━━━━━━━━ 2515/4070 0:16:12 • 0:06:32 3.98it/s loss: 0.0626 "
    "v_num: 1.25 "
)

CUT_RATE = (
    "      Epoch    GPU_mem   box_loss   cls_loss   dfl_loss  Instances       Size",
    "     96/100         0G       1.11     0.7357      1.259          2        640: 100%|██████████| 25/25"
    " [00:47<00:00,  1.91s/i",
    "                 Class     Images  Instances      Box(P          R      mAP50  mAP50-95): 100%|██████████| 4/4"
    " [00:04<00:00, ",
    "                   all         50         89          1      0.944      0.984      0.751",
    "",
    "      Epoch    GPU_mem   box_loss   cls_loss   dfl_loss  Instances       Size",
    "     97/100         0G      1.081     0.7979      1.196          0        640: 100%|██████████| 25/25"
    " [00:48<00:00,  1.93s/i",
)

YOLOV3 = (
    "Training Epoch 13: 100% 101/101 [01:54<00:00,  1.14s/it]",
    "",
    "---- Evaluating Model ----",
    "Detecting objects: 100% 13/13 [00:04<00:00,  2.66it/s]",
    "Computing AP: 100% 1/1 [00:00<00:00, 1576.81it/s]",
    "---- mAP 0.9235236715367303",
    "Training Epoch 14:   0% 0/101 [00:00<?, ?it/s]src/tcmalloc.cc:283] Attempt to free invalid pointer 0x1 ",
    "Traceback (most recent call last):",
    '  File "/usr/local/lib/python3.7/dist-packages/torch/utils/data/_utils/signal_handling.py", line 66, in handler',
    "    _error_if_any_worker_fails()",
    "RuntimeError: DataLoader worker (pid 2256) is killed by signal: Aborted. ",
)

SPEECHBRAIN = (
    "      speechbrain.utils.epoch_loop - Going into epoch 1",
    "      100%|██████████| 13/13 [00:02<00:00,  5.45it/s, loss1=6.18, loss2=0.693, train_loss=6.18]",
    "      100%|██████████| 3/3 [00:00<00:00,  3.50it/s]",
    "      speechbrain.utils.epoch_loop - Going into epoch 2",
    "      100%|██████████| 13/13 [00:02<00:00,  5.72it/s, loss1=-2.26, loss2=0.693, train_loss=-2.26]",
    "      100%|██████████| 3/3 [00:00<00:00,  3.47it/s]",
)


def test_riches_bar_counts_after_its_glyphs() -> None:
    got = read(RICH)
    # the bar's counter 2515 (of 4070), not the epoch's 31/99 before it; its rate 3.98 it/s; its loss 0.0626
    assert got["step"].to_list() == [2515]
    assert got["global_steps_per_s"].to_list() == pytest.approx([3.98])
    assert got["loss"].to_list() == pytest.approx([0.0626])


def test_keras_3s_bar_opening_its_line_stays_keras() -> None:
    # near-miss for the rich bar: Keras 3 prints its counter before the same glyphs: 1563 / 7 s = 223.3 steps/s
    got = read(" 1563/1563 ━━━━━━━━━━━━━━━━━━━━ 7s 4ms/step - loss: 0.5")
    assert got["format"].to_list() == ["keras"]
    assert got["step"].to_list() == [1563]


def test_a_bar_whose_rate_the_terminal_cut_is_timed_by_its_clock() -> None:
    got = read(*CUT_RATE)
    # the epoch rows' bars (lines 2 and 7), counted within epochs 96 and 97 from 0: 96 x 25 + 25 = 2425, 2450; the
    # validation bar (its description names its metrics) is none
    assert got["source_offset"].to_list() == [2, 7]
    assert got["step"].to_list() == [2425, 2450]
    # 25 iterations in the bar's 47 s and 48 s: 0.5319, 0.5208 steps/s
    assert got["global_steps_per_s"].to_list() == pytest.approx([25 / 47, 25 / 48])


def test_a_download_bar_whose_rate_was_cut_is_none() -> None:
    # near-miss: a download's bar, its rate cut the same way, is other work
    assert read("Downloading: 100%|██████████| 3/3 [00:01<00:00, ").height == 0


def test_bars_after_an_evaluations_banner_are_the_evaluations_and_the_killed_worker_ends_the_run() -> None:
    got = read(*YOLOV3)
    # only the training bar of epoch 13: 101 its, 1 / 1.14 s = 0.877 steps/s; ``Detecting objects`` (13/13) and
    # ``Computing AP`` (1/1) come after ``---- Evaluating Model ----`` with totals not the training bar's 101
    assert got["source_offset"].to_list() == [1]
    assert got["global_steps_per_s"].to_list() == pytest.approx([1 / 1.14])
    # the traceback ending the log fails the run, the exception line its cause
    assert endings(*YOLOV3) == [("failed", "RuntimeError: DataLoader worker (pid 2256) is killed by signal: Aborted.")]


def test_a_described_bar_with_no_banner_before_it_stays_a_record() -> None:
    # near-miss: without the evaluation's banner, a second bar of another total is read as written
    got = read(YOLOV3[0], YOLOV3[3])
    assert got["source_offset"].to_list() == [1, 2]


def test_a_training_bar_after_an_evaluations_banner_stays_a_record() -> None:
    # near-miss: a bar whose description names training is never the evaluation's: epochs 13 and 14 counted from 0,
    # 13 x 101 + 101 = 1414, 1515
    got = read(YOLOV3[0], YOLOV3[2], "Training Epoch 14: 100% 101/101 [01:54<00:00,  1.12s/it]")
    assert got["step"].to_list() == [1414, 1515]


def test_speechbrains_epoch_announced_by_its_logger_counts_its_bars() -> None:
    got = read(*SPEECHBRAIN)
    # the training bars 13/13 under epochs 1 and 2: 13 and 2 x 13 = 26 (the 3/3 bars, which never state a loss, are
    # the validation's); each its own rate
    assert got["step"].to_list() == [13, 26]
    assert got["global_steps_per_s"].to_list() == pytest.approx([5.45, 5.72])
    # the loss is ``train_loss``; ``loss1`` and ``loss2`` are its parts' names, no loss of 1 or 2
    assert got["loss"].to_list() == pytest.approx([6.18, -2.26])


def test_a_loss_part_named_with_a_digit_is_no_loss() -> None:
    # near-miss: a postfix of parts alone (``loss1``, ``loss2``) states no loss
    got = read("100%|██████████| 13/13 [00:02<00:00,  5.45it/s, loss1=6.18, loss2=0.693]")
    assert got["loss"].is_null().all()
