"""The grammar's positions counted within an epoch, its measures named by their keys, and a position said on a
line of its own beside the line that measures it; with the near-misses of each refused.

Every line is written for the test in the shape of the kind it stands for; the figures are made up and each
expected value is worked out by hand in a comment."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.formats_support import read


@pytest.mark.parametrize(
    ("line", "step", "rate"),
    [
        # a step time whose unit is in its key: 1 / 0.25 s = 4
        ("Training epoch 0, iteration 12/100 | global_step: 12 | train_step_timing in s: 0.25", 12, 4.0),
        # ... in milliseconds: 1000 / 250 ms = 4
        ("step 5 | loss 2.0 | step_time_ms: 250", 5, 4.0),
        # a JSON object of metrics with its numbers quoted: 1 / 0.25 s = 4
        ('json_stats: {"eta": "1:00:00", "iter": 100, "loss": "0.500000", "time": "0.250000"}', 100, 4.0),
        # Epoch(train) [E][N/M]: iteration (2 - 1) x 50 + 10 = 60; 1 / 0.5 s = 2
        ("Epoch(train) [2][10/50]  lr: 1.000e-02  eta: 0:01:00  time: 0.500  data_time: 0.010  loss: 1.0", 60, 2.0),
        # the same after a date of the logger's: the date is no counter; (1 - 1) x 90 + 10 = 10, 1 / 0.25 = 4
        ("04/21 21:03:53 - trainer - INFO - Epoch(train) [1][10/90]  time: 0.250  loss: 1.0", 10, 4.0),
        # iter_time with its unit after the number: 1 / 0.5 s = 2
        ("epoch: 3/40, iter: 10/100, mem: 100Mb, iter_time: 0.500s, data_time: 0.010s, total_loss: 9.0", 10, 2.0),
        # an it/s bar of an epoch row: its own counter; 2.5 it/s as printed
        (
            "     1/10      2.0G      1.500         16        640: 100%|##########| 16/16 [00:06<00:00,  2.50it/s]",
            16,
            2.5,
        ),
    ],
)
def test_steps_and_measures_named_by_their_keys(line: str, step: int, rate: float) -> None:
    got = read(line)
    assert got.height == 1, got
    assert got["step"][0] == step
    assert got["global_steps_per_s"][0] == pytest.approx(rate)


def test_seconds_since_the_start_and_a_rate_tracker_are_measures() -> None:
    # a JSON line with its step and the seconds since the start: a record at 20 s
    got = read('{"train/loss": 0.5, "step": 40, "epoch": 0, "relative_time": 20.0, "training": true}')
    assert got["step"].to_list() == [40] and got["elapsed_s"].to_list() == [20.0]
    # a unit-less Rate= in a run of key=value statements: a rate tracker's examples/s, as logged
    got = read("| Training Device=xla:0/0 Epoch=1 Step=20 Loss=0.10000 Rate=256.00 GlobalRate=100.00 Time=07:29:39")
    assert got["step"].to_list() == [20] and got["examples_per_s"].to_list() == [256.0]


def test_positions_counted_within_their_epoch_are_made_whole() -> None:
    # the batch goes back when the epoch advances: within the epoch; step = epoch x 20 + batch: 10, 20, 30, 40
    got = read(
        "Epoch: [0]  [10/20]  eta: 0:00:05  time: 0.5000  data: 0.0100",
        "Epoch: [0]  [20/20]  eta: 0:00:00  time: 0.5000  data: 0.0100",
        "Epoch: [0] Total time: 0:00:10 (0.5000 s / it)",
        "Epoch: [1]  [10/20]  eta: 0:00:05  time: 0.5000  data: 0.0100",
        "Epoch: [1]  [20/20]  eta: 0:00:00  time: 0.5000  data: 0.0100",
    )
    assert got["step"].to_list() == [10, 20, 30, 40]
    # no total printed: an epoch's length is the largest batch the file shows, 100: 3 x 100 + 50 = 350, 400, 450
    got = read(
        "Epoch[3] Batch [50]\tSpeed: 100.00 samples/sec\taccuracy=0.5",
        "Epoch[3] Batch [100]\tSpeed: 100.00 samples/sec\taccuracy=0.5",
        "Epoch[4] Batch [50]\tSpeed: 100.00 samples/sec\taccuracy=0.5",
    )
    assert got["step"].to_list() == [350, 400, 450]
    # a finished bar each epoch (the same counter every epoch), the file's first epoch 0: 0 x 16 + 16 = 16,
    # 1 x 16 + 16 = 32; its first epoch 1, epochs count from 1: (1 - 1) x 16 + 16 = 16, (2 - 1) x 16 + 16 = 32
    row = "     {e}/10      2.0G      1.500         16        640: 100%|##########| 16/16 [00:06<00:00,  2.50it/s]"
    assert read(row.format(e=0), row.format(e=1))["step"].to_list() == [16, 32]
    assert read(row.format(e=1), row.format(e=2))["step"].to_list() == [16, 32]


def test_epochs_counted_from_one_start_the_run_at_step_zero() -> None:
    # a plain PyTorch loop: epoch 1 is the first; iter goes back when the epoch advances, so it counts within the
    # epoch of 1000: (1 - 1) x 1000 + 50 = 50, + 1000 = 1000, (2 - 1) x 1000 + 50 = 1050
    got = read(
        "epoch 1 iter 50/1000 loss 2.44 time 0.21s",
        "epoch 1 iter 1000/1000 loss 0.85 time 0.21s",
        "epoch 2 iter 50/1000 loss 0.80 time 0.21s",
    )
    assert got["step"].to_list() == [50, 1000, 1050]
    # the same loop counting from 0: 0 x 1000 + 50 = 50, 1000, 1 x 1000 + 50 = 1050
    got = read(
        "epoch 0 iter 50/1000 loss 2.44 time 0.21s",
        "epoch 0 iter 1000/1000 loss 0.85 time 0.21s",
        "epoch 1 iter 50/1000 loss 0.80 time 0.21s",
    )
    assert got["step"].to_list() == [50, 1000, 1050]


def test_a_position_that_counts_over_the_run_beside_its_epoch_stays_as_printed() -> None:
    # iter goes on when the epoch advances (PaddleSeg-like): it is the run's, 90 then 100
    got = read(
        "[TRAIN] epoch: 1, iter: 90/1000, loss: 1.5, batch_cost: 0.2000, reader_cost: 0.001",
        "[TRAIN] epoch: 2, iter: 100/1000, loss: 1.4, batch_cost: 0.2000, reader_cost: 0.001",
    )
    assert got["step"].to_list() == [90, 100]


_KS = [": ", ":", "=", " "]
_FS = [" | ", ", ", "  ", "\t", " "]


@settings(max_examples=40, deadline=None)
@given(
    ks=st.sampled_from(_KS),
    fs=st.sampled_from(_FS),
    word=st.sampled_from(["iter", "Step", "batch", "iteration"]),
    e=st.integers(0, 500),
    m=st.integers(2, 10**5),
    data=st.data(),
)
def test_epoch_and_position_read_alike_under_any_separators(ks: str, fs: str, word: str, e: int, m: int, data) -> None:
    n1 = data.draw(st.integers(1, m))
    n2 = data.draw(st.integers(1, n1))
    line = "Epoch{ks}{e}{fs}{word}{ks}{n}/{m}{fs}time{ks2}0.5000"
    got = read(
        line.format(ks=ks, e=e, fs=fs, word=word, n=n1, m=m, ks2=": "),
        line.format(ks=ks, e=e + 1, fs=fs, word=word, n=n2, m=m, ks2=": "),
    )
    # the second goes back (or stays) as the epoch advances: within the epoch, (epoch - first) x m + n, the first
    # epoch 1 where the file's first is 1, else 0
    first = 1 if e == 1 else 0
    assert got["step"].to_list() == [(e - first) * m + n1, (e + 1 - first) * m + n2]
    assert got["global_steps_per_s"].to_list() == [2.0, 2.0]


def test_a_position_on_the_line_before_of_the_same_time_is_the_measures_position() -> None:
    lines = [
        "[2022-03-11 02:06:58,985] [INFO] [logging.py:69:log_dist] [Rank 0] step=40, skipped=2, lr=[5e-05]",
        "[2022-03-11 02:06:58,985] [INFO] [timer.py:189:stop] 0/40, SamplesPerSec=83.5, MemAllocated=0.26GB",
        "[2022-03-11 02:07:14,130] [INFO] [logging.py:69:log_dist] [Rank 0] step=50, skipped=2, lr=[5e-05]",
        "[2022-03-11 02:07:14,130] [INFO] [timer.py:189:stop] 0/50, SamplesPerSec=83.7, MemAllocated=0.26GB",
    ]
    got = read(*lines)
    # 0/40 is epoch/step: the step is 40, then 50, named by the line before at the same millisecond
    assert got["step"].to_list() == [40, 50]
    assert got["examples_per_s"].to_list() == [83.5, 83.7]
    # at another time the line before is another statement, but the timer's counter says its step all the same
    # (DeepSpeed's timer prints epoch/step, see the test below): 40
    later = lines[1].replace("58,985", "59,100")
    assert read(lines[0], later)["step"].to_list() == [40]


def test_a_deepspeed_timers_counter_is_its_epoch_and_its_step() -> None:
    # DeepSpeed under the Hugging Face Trainer, quoted in huggingface/transformers issue 14531 (2021-11-26): the
    # timer's ``0/2000`` is epoch 0, step 2000 (the engine's ``step=2000`` at the same millisecond), never step 0 of
    # 2000, which made a restart of a run that never restarted. Alone: step 2000 at 9.5267 samples/s as printed.
    timer = "[2021-11-26 03:07:16,494] [INFO] [timer.py:181:stop] 0/2000, SamplesPerSec=9.526738918021234"
    got = read(timer)
    assert got["step"].to_list() == [2000]
    assert got["examples_per_s"].to_list() == [9.526738918021234]
    # after the bar the engine's line is glued to (no line end between them): the bar's line names step 2000 at
    # 1 / 3.33 s/it = 0.3003 steps/s; the timer states step 2000 again without a step rate, a copy of that step
    bar = (
        "  8%|#####                                   | 1999/24128 [1:52:09<20:27:23,  3.33s/it][2021-11-26 "
        "03:07:16,494] [INFO] [logging.py:69:log_dist] [Rank 0] step=2000, skipped=1995, lr=[0.001, 0.001], "
        "mom=[0.0, 0.0]"
    )
    both = read(bar, timer)
    assert both["step"].to_list() == [2000]
    assert both["global_steps_per_s"].to_list() == pytest.approx([1 / 3.33], abs=1e-4)
    # ... and the later timer's wording, ``E/N, RunningAvgSamplesPerSec=X``: step 130 (DeepSpeed issue 697's figures)
    assert read("0/130, RunningAvgSamplesPerSec=36.8, CurrSamplesPerSec=37.1")["step"].to_list() == [130]


@pytest.mark.parametrize(
    ("line", "step"),
    [
        # a counter and its total before a rate in other words: position 12 of 2000, not DeepSpeed's epoch/step
        ("12/2000, samples/s=9.5", 12),
        # the timer's numbers without its comma are no timer's: a position 0 of 2000
        ("0/2000 SamplesPerSec=9.5", 0),
    ],
)
def test_near_misses_of_deepspeeds_timer_keep_their_counter(line: str, step: int) -> None:
    assert read(line)["step"].to_list() == [step]


def test_a_bar_redrawn_at_its_step_with_its_loss_is_one_record() -> None:
    # drawn when the step ends, then again when its loss is logged: the same time, the same rate, the last loss
    got = read(
        "Epoch 0:   6%|6         | 1/18 [00:08<02:29,  8.77s/it]",
        "Epoch 0:   6%|6         | 1/18 [00:08<02:29,  8.77s/it, loss=10.473, v_num=1]",
    )
    assert got["loss"].to_list() == [10.473, 10.473]
    assert got["elapsed_s"].to_list() == [8.0, 8.0]
    # 1 / 8.77 s/it
    assert got["global_steps_per_s"].to_list() == pytest.approx([1 / 8.77, 1 / 8.77])


@pytest.mark.parametrize(
    "line",
    [
        "Epoch(val) [1][50/100]  eta: 0:00:10  time: 0.100  data_time: 0.010",  # an evaluation's epoch
        "Step=10 Learning Rate=0.001",  # a learning rate is no rate tracker
        "Epoch:[0/19](100/24681) loss:5.251 lr:0.00020000 epoch_Time:98.0min:",  # an epoch's remaining minutes
        "[1]\tvalidation_0-auc:0.5\tvalidation_0-logloss:0.960257",  # a boosting round: no time
        "[>>>>>>>>>>>>>>>>>>>>>>>>] 18188/18187, 56.6 task/s, elapsed: 322s, ETA:     0s",  # an evaluation's bar
        "{'loss': 0.6347, 'learning_rate': 4.89e-05, 'epoch': 0.08, 'step': 10}",  # a step and no time
        "Epoch: [34] Total time: 0:00:07 (0.2424 s / it)",  # an epoch's summary: no position
        "  Class  Images  Instances  Box(P  R  mAP50  mAP50-95): 100%|#####| 8/8 [00:03<00:00,  2.17it/s]",  # mAP
        "04/21 21:03:52 - trainer - INFO - Exp name: run_20220421_210345",  # a date
    ],
)
def test_near_misses_of_these_kinds_are_never_records(line: str) -> None:
    assert read(line).height == 0


def test_a_bar_drawn_anew_each_epoch_is_laps_of_one_run_not_restarts() -> None:
    # Lightning's bar: the epoch in its description, its counter and clock restart each epoch. Steps are
    # (epoch - 0) x 4 + position: 2, 4, then 1 x 4 + 2 = 6, 8. The clock (elapsed) is the run's on the first lap
    # only (00:01 = 1 s, 00:02 = 2 s); from the second lap it is the lap's (00:01 again), which would go back
    # and pass for a restart: no elapsed there. The rates stay as printed: 2.00it/s.
    bar = "Epoch {e}:  {p}%|#####     | {n}/4 [00:0{t}<00:01,  2.00it/s, v_num=3, train_loss=0.5]"
    got = read(
        bar.format(e=0, p=50, n=2, t=1),
        bar.format(e=0, p=100, n=4, t=2),
        bar.format(e=1, p=50, n=2, t=1),
        bar.format(e=1, p=100, n=4, t=2),
    )
    assert got["step"].to_list() == [2, 4, 6, 8]
    assert got["elapsed_s"].to_list() == [1.0, 2.0, None, None]
    assert got["global_steps_per_s"].to_list() == [2.0, 2.0, 2.0, 2.0]
    # the second lap's clock times its steps: 1 s since the bar's start at step 6, 2 - 1 = 1 s more at step 8
    assert got["interval_s"].to_list() == [None, None, 1.0, 1.0]


# A Lightning run of several epochs under Ray Train (the output of ray-project/ray's
# doc/source/train/examples/lightning/lightning_mnist_example.ipynb, run 2023-08-07): each epoch's bar starts again
# at 0/108 and 00:00, a validation bar between them.
_LIGHTNING_EPOCHS = [
    "Epoch 0:  97%|█████████▋| 105/108 [00:01<00:00, 104.71it/s, v_num=0]",
    "Epoch 0: 100%|██████████| 108/108 [00:01<00:00, 105.79it/s, v_num=0]",
    "Validation DataLoader 0: 100%|██████████| 10/10 [00:00<00:00, 205.79it/s]",
    "Epoch 0: 100%|██████████| 108/108 [00:01<00:00, 79.84it/s, v_num=0] ",
    "Epoch 1:   0%|          | 0/108 [00:00<?, ?it/s, v_num=0]          ",
    "Epoch 1:  11%|█         | 12/108 [00:00<00:02, 32.36it/s, v_num=0]",
    "Epoch 1:  92%|█████████▏| 99/108 [00:01<00:00, 93.94it/s, v_num=0]",
    "Epoch 1:  93%|█████████▎| 100/108 [00:01<00:00, 94.57it/s, v_num=0]",
    "Epoch 1: 100%|██████████| 108/108 [00:01<00:00, 98.06it/s, v_num=0]",
]


def test_a_later_epochs_bar_times_its_steps_by_its_own_clock() -> None:
    got = read(*_LIGHTNING_EPOCHS)
    # epoch 0's positions as drawn (105, 108, its redraw after validation a copy); epoch 1's 1 x 108 + n: 120, 207,
    # 208, 216 (its 0/108 states no rate: no record)
    assert got["step"].to_list() == [105, 108, 108, 120, 207, 208, 216]
    # the first bar's clock is the run's (00:01 = 1 s; the redraw keeps its first drawing's); the second's is its own
    assert got["elapsed_s"].to_list() == [1.0, 1.0, 1.0, None, None, None, None]
    # ... read as intervals: 00:00 at 120 (0 s since the bar began), 00:01 at 207 (1 - 0 = 1 s), 00:01 again at 208
    # and 216 (0 s: a clock printed to the second)
    assert got["interval_s"].to_list() == [None, None, None, 0.0, 1.0, 0.0, 0.0]
    assert got["global_steps_per_s"].to_list() == [104.71, 105.79, 105.79, 32.36, 93.94, 94.57, 98.06]


def test_a_later_epochs_bar_whose_clock_goes_back_times_nothing_there() -> None:
    # near-miss: within one lap the bar's clock never goes back; where it does (00:05, then 00:03) that reading is
    # no interval (null), the one before stays 5 s since the bar began
    bar = "Epoch {e}:  {p}%|#####     | {n}/100 [00:0{t}<00:01,  2.00it/s, v_num=0]"
    got = read(
        bar.format(e=0, p=50, n=50, t=4),
        bar.format(e=1, p=10, n=10, t=5),
        bar.format(e=1, p=20, n=20, t=3),
    )
    assert got["step"].to_list() == [50, 110, 120]
    assert got["interval_s"].to_list() == [None, 5.0, None]
