"""The grammar on the statements of speech toolkits (k2/icefall, WeNet and its family): each kind read from short
real lines (quoted from public issues, the source in each test's comment), with its near-misses refused. Each
expected value is worked out by hand in a comment."""

from __future__ import annotations

from datetime import UTC, datetime

from tests.support.formats_support import frame, read
from tierscope.collector.formats.envelopes import split_envelopes

# icefall's train.py through Python logging with the source location after the level (k2-fsa/icefall issue 320,
# run of 2022-04-21): a position and its loss under the logger's time, its losses counted 'over N frames' and its
# 'batch size' the utterances in the batch
ICEFALL = [
    "2022-04-21 06:21:16,518 INFO [train.py:518] Epoch 0, batch 500, loss[ctc_loss=0.7647, att_loss=0.7367, "
    "loss=0.7423, over 2223 frames.], tot_loss[ctc_loss=1.098, att_loss=1.086, loss=1.088, over 438207.72270125535 "
    "frames.], batch size: 8",
    "2022-04-21 06:24:05,162 INFO [train.py:518] Epoch 0, batch 550, loss[ctc_loss=1.043, att_loss=0.9977, "
    "loss=1.007, over 2480 frames.], tot_loss[ctc_loss=1.099, att_loss=1.079, loss=1.083, over 447367.3462596891 "
    "frames.], batch size: 24",
]


def test_a_source_location_in_brackets_after_the_level_is_part_of_the_envelope() -> None:
    # '%(asctime)s %(levelname)s [%(filename)s:%(lineno)d] ' (icefall, above): the message starts at 'Epoch'
    body, _ = split_envelopes(frame(ICEFALL[:1]), 2024)
    assert body["line"][0].startswith("Epoch 0, batch 500, loss[")


def test_a_rank_and_world_after_the_source_location_is_part_of_the_envelope() -> None:
    # icefall under DDP (k2-fsa/icefall issue 1463, run of 2024-01-14): '(2/4)' after '[train.py:1057] ' is the
    # rank of four that logged
    line = "2024-01-14 01:03:00,826 WARNING [train.py:1057] (2/4) Grad scale is small: 1.29e-26"
    body, facts = split_envelopes(frame([line]), 2024)
    assert body["line"].to_list() == ["Grad scale is small: 1.29e-26"]
    # icefall's setup_logger puts the rank in every line's format: it names the worker that logged
    assert facts is not None and facts.select("role", "task_index").rows() == [("worker", 2)]


def test_each_rank_of_an_icefall_ddp_run_is_its_own_task() -> None:
    # k2-fsa/icefall issue 1382 (run of 2023-11-12, 2 GPUs): ranks 1 and 0 report batches 150 and 200, each a record
    # of its own task at its logger's time; read as one task, rank 0's batch 200 was a duplicate of rank 1's
    lines = [
        "2023-11-12 16:22:24,705 INFO [train_phone.py:1055] (1/2) Epoch 1, batch 150, loss[loss=0.04339, "
        "simple_loss=0.03836, pruned_loss=0.03855, over 1966080.00 frames. ], tot_loss[loss=0.04266, "
        "simple_loss=0.03814, pruned_loss=0.03858, over 205610293.31 frames. ], batch size: 104, lr: 6.39e-07, ",
        "2023-11-12 16:23:43,235 INFO [train_phone.py:1055] (0/2) Epoch 1, batch 200, loss[loss=0.04363, "
        "simple_loss=0.03831, pruned_loss=0.03803, over 1946336.00 frames. ], tot_loss[loss=0.04287, "
        "simple_loss=0.03812, pruned_loss=0.03841, over 244545287.56 frames. ], batch size: 148, lr: 6.85e-07, ",
        "2023-11-12 16:23:43,235 INFO [train_phone.py:1055] (1/2) Epoch 1, batch 200, loss[loss=0.04354, "
        "simple_loss=0.03821, pruned_loss=0.03808, over 1970727.00 frames. ], tot_loss[loss=0.04285, "
        "simple_loss=0.0381, pruned_loss=0.0384, over 245613835.12 frames. ], batch size: 114, lr: 6.85e-07, ",
    ]
    got = read(*lines)
    assert got.select("task_index", "step", "loss").rows() == [(1, 150, 0.04339), (0, 200, 0.04363), (1, 200, 0.04354)]


def test_a_fraction_in_parentheses_in_the_message_names_no_rank() -> None:
    # near miss: '(3/10)' after a message's first words (no source location before it) is the message's own
    body, facts = split_envelopes(frame(["2024-01-14 01:03:00,826 INFO Epoch (3/10) done"]), 2024)
    assert body["line"].to_list() == ["Epoch (3/10) done"]
    assert facts is None or facts.get_column("task_index").to_list() == [None]


def test_counts_of_frames_and_a_batch_size_leave_a_logger_timed_position_plain() -> None:
    # icefall (above): batches 500 and 550, each a record at its logger's time; 'over 2223 frames' and 'batch size: 8'
    # are named by their words, not a time the line states. Clock: 06:24:05.162 - 06:21:16.518 = 168.644 s
    got = read(*ICEFALL)
    assert got["step"].to_list() == [500, 550]
    assert got["timestamp"].to_list() == [
        datetime(2022, 4, 21, 6, 21, 16, 518000, tzinfo=UTC),
        datetime(2022, 4, 21, 6, 24, 5, 162000, tzinfo=UTC),
    ]


def test_a_bare_number_beside_a_logger_timed_position_still_keeps_it_from_being_a_record() -> None:
    # near-miss: '12.5' named by no word may be a time the learned layout reads: no logger-timed record
    got = read("2022-04-21 06:21:16,518 INFO [train.py:518] Epoch 0, batch 500, loss=0.74 12.5")
    assert got.height == 0


# WeNet's executor (wenet-e2e/wenet issue 941, run of 2023-01-30): 'Batch <epoch>/<batch>', one line per rank
WENET = [
    "2023-01-30 18:47:07,107 DEBUG TRAIN Batch 4/203700 loss 12.646465 loss_att 10.921429 loss_ctc 16.671551 "
    "lr 0.00032621 rank 0",
    "2023-01-30 18:47:16,614 DEBUG TRAIN Batch 4/203700 loss 16.885244 loss_att 13.554604 loss_ctc 24.656742 "
    "lr 0.00032621 rank 1",
    "2023-01-30 18:47:22,712 DEBUG TRAIN Batch 4/203700 loss 19.729301 loss_att 16.203592 loss_ctc 27.955961 "
    "lr 0.00032621 rank 2",
    "2023-01-30 18:49:20,301 DEBUG TRAIN Batch 4/203800 loss 23.600426 loss_att 18.615641 loss_ctc 35.231586 "
    "lr 0.00032619 rank 2",
    "2023-01-30 18:49:20,315 DEBUG TRAIN Batch 4/203800 loss 18.340179 loss_att 15.005867 loss_ctc 26.120243 "
    "lr 0.00032619 rank 1",
    "2023-01-30 18:49:20,438 DEBUG TRAIN Batch 4/203800 loss 25.618004 loss_att 20.509174 loss_ctc 37.538609 "
    "lr 0.00032619 rank 0",
    "2023-01-30 18:49:55,773 DEBUG CV Batch 4/0 loss 28.517015 loss_att 24.142754 loss_ctc 38.723625 "
    "history loss 27.957858 rank 2",
]


def test_a_batch_counter_whose_total_grows_is_epoch_and_batch() -> None:
    # WeNet (above): '4/203700' then '4/203800': a total that grows is no total: epoch 4, batches 203700 and 203800
    # (three ranks print each one); the losses 'loss_att', 'loss_ctc' and the 'rank 0' are named numbers; the
    # cross-validation's 'CV Batch 4/0' is no training step
    got = read(*WENET)
    assert sorted(set(got["step"].to_list())) == [203700, 203800]
    assert got.filter(got["step"] == 0).height == 0


def test_an_epoch_and_batch_counter_that_restarts_its_batch_each_epoch() -> None:
    # wekws (wenet-e2e/wekws issue 214, 2026-05-09): 'TRAIN Batch 78/0', '78/10', '78/20': epoch 78, batches 0, 10,
    # 20 (not step 78 of a total 0, 10, 20)
    got = read(
        "2026-05-09 04:06:09,511 DEBUG TRAIN Batch 78/0 loss 25.70108604 acc 0.00000000",
        "2026-05-09 04:06:13,818 DEBUG TRAIN Batch 78/10 loss 28.96673203 acc 0.00000000",
        "2026-05-09 04:06:17,466 DEBUG TRAIN Batch 78/20 loss 25.72937012 acc 0.00000000",
    )
    assert got["step"].to_list() == [0, 10, 20]


def test_a_batch_counter_with_a_steady_total_is_still_batch_n_of_m() -> None:
    # near-miss: 'Batch 5/100', '6/100', '7/100': the total never grows: batches 5, 6, 7
    got = read(
        "2026-05-09 04:06:09,511 DEBUG TRAIN Batch 5/100 loss 25.7",
        "2026-05-09 04:06:13,818 DEBUG TRAIN Batch 6/100 loss 28.9",
        "2026-05-09 04:06:17,466 DEBUG TRAIN Batch 7/100 loss 25.7",
    )
    assert got["step"].to_list() == [5, 6, 7]


def test_bars_of_another_total_before_the_training_bar_are_no_epoch_and_batch() -> None:
    # near-miss: axolotl's log (axolotl-ai-cloud/axolotl issue 592, 2023-09-17) shows a data pass's bar '2/3' then
    # the training bar '281/873', '282/873', '283/873': the totals differ, but a bar's counter is its own position:
    # steps 2, 281, 282, 283 (not 873 for each)
    bar = "|" + "\u2588" * 10 + "|"
    got = read(
        f" 67%{bar} 2/3 [00:01<00:00,  1.68it/s]",
        f" 32%{bar} 281/873 [25:36<52:46,  5.35s/it]",
        f" 32%{bar} 282/873 [25:40<49:29,  5.02s/it]",
        f" 32%{bar} 283/873 [25:44<47:06,  4.79s/it]",
    )
    assert sorted(set(got["step"].to_list()) - {2}) == [281, 282, 283]
