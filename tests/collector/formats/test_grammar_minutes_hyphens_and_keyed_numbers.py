"""Kinds of statement read by their shape: a time since the start in minutes, an epoch's seconds under a key of its
own, step-time keys joined by hyphens, and the numbers a line's keys name (which leave a logger's time its clock).

Lines are short real lines quoted from public logs (sources in each comment); expected values are worked out by
hand in the comments."""

from __future__ import annotations

import pytest

from tests.support.formats_support import endings, parse, read


def test_an_elapsed_time_in_minutes_is_the_time_since_the_start_in_seconds() -> None:
    # a JAX loop's README block (jlin816/jax-sandbox README.md at 3f026d8): 'elapsed' is the wall time since the
    # start in minutes: 1.11 m = 66.6 s, 1.72 m = 103.2 s, 2.34 m = 140.4 s
    got = read(
        "step 100 | elapsed 1.11m | loss: 3.07 | val: 2.96",
        "step 200 | elapsed 1.72m | loss: 3.08 | val: 2.92",
        "step 300 | elapsed 2.34m | loss: 3.16 | val: 2.89",
    )
    assert got["step"].to_list() == [100, 200, 300]
    assert got["elapsed_s"].to_list() == pytest.approx([66.6, 103.2, 140.4])
    assert got["loss"].to_list() == pytest.approx([3.07, 3.08, 3.16])


@pytest.mark.parametrize(
    "line",
    [
        "step 100 | elapsed 1.11 | loss: 3.07",  # no unit: minutes or seconds, nobody can say
        "step 100 | elapsed 1.11ms | loss: 3.07",  # no minutes
        "step 100 | elapsed 1.11mb | loss: 3.07",  # a size
    ],
)
def test_an_elapsed_time_without_minutes_is_not_read_as_minutes(line: str) -> None:
    got = parse([line]).steps
    assert got.height == 0 or got["elapsed_s"].to_list() != [pytest.approx(66.6)]


def test_an_epoch_time_under_its_own_key_is_the_epochs_record() -> None:
    # Flax's MNIST example on a TPU VM (a ray-jax-tpu-pod-demos README, run of 2022-06-02): one line per epoch, no
    # steps per epoch in the log: each line is its epoch's record, the interval its epoch_time; no steps/s
    got = read(
        "epoch:  1, train_loss: 0.2396, train_accuracy: 92.81, test_loss: 0.0628, test_accuracy: 97.99, "
        "epoch_time: 16.28",
        "epoch:  2, train_loss: 0.0592, train_accuracy: 98.18, test_loss: 0.0449, test_accuracy: 98.51, "
        "epoch_time: 14.30",
    )
    assert got.height == 2
    assert got["interval_s"].to_list() == pytest.approx([16.28, 14.30])
    assert got["global_steps_per_s"].null_count() == 2


def test_a_step_time_key_joined_by_hyphens_is_the_steps_seconds() -> None:
    # a research trainer's pipe-separated keys (mlc-ai/pith-train PR 7, a run of 2026-04-01): step-time 24.192 sec
    # -> 1 / 24.192 = 0.041336 steps/s; the position is the zero-padded counter 2 of 15
    got = read(
        "2026-04-01 14:27:55 | INFO | step 00000002/00000015 | step-time 24.192 sec | cross-entropy-loss 2.4543 | "
        "load-balance-loss 0.003247 | learning-rate 1.000000e-06 | gradient-norm 3.3118 | tokens-per-second 86,689 "
        "| peak-gpu-memory 57.21 GB"
    )
    assert got["step"].to_list() == [2]
    assert got["global_steps_per_s"].to_list() == [pytest.approx(1 / 24.192)]


def test_a_position_and_its_l_keyed_losses_under_a_loggers_time_are_records_timed_by_it() -> None:
    # BasicSR / MMSR's ESRGAN log (open-mmlab/mmagic issue 82, 2020-05-22): a two-digit year, the position in
    # brackets, losses keyed 'l_' and the discriminator's outputs 'D_real', 'D_fake' (a metric's value after its
    # key, not a measure): iter 600 at 17:42:09.481, 650 at 17:43:04.323: records at those times
    steps = parse(
        [
            "20-05-22 17:42:09.481 - INFO: [epoch:  0, iter:     600, lr:(1.000e-04,)] l_g_pix: 4.1864e-04 "
            "l_g_fea: 8.7215e-01 l_g_gan: 4.5786e-02 l_d_real: 1.1156e-04 l_d_fake: 8.2644e-05 D_real: 2.0082e+01 "
            "D_fake: 1.0925e+01",
            "20-05-22 17:43:04.323 - INFO: [epoch:  0, iter:     650, lr:(1.000e-04,)] l_g_pix: 3.5674e-04 "
            "l_g_fea: 8.0606e-01 l_g_gan: 1.7247e-02 l_d_real: 2.0103e-02 l_d_fake: 1.9560e-02 D_real: 3.6051e+01 "
            "D_fake: 3.2641e+01",
        ]
    ).steps
    assert steps["step"].to_list() == [600, 650]
    # the first loss said, l_g_pix, is the line's loss
    assert steps["loss"].to_list() == pytest.approx([4.1864e-04, 3.5674e-04])
    # 54.842 s between the two lines' times (17:43:04.323 - 17:42:09.481)
    t = steps["timestamp"].to_list()
    assert (t[1] - t[0]).total_seconds() == pytest.approx(54.842)


def test_a_metric_dict_after_a_position_leaves_the_loggers_time_its_clock() -> None:
    # VATT's TF2 loop through absl (google-research/google-research issue 1497, 2023-03-08): every number of the
    # dict is named by its key, the '1' of 'top_1_accuracy' is part of a name: steps 900 and 950, 54.888580 s apart
    steps = parse(
        [
            "I0308 03:08:43.208900 139913490419840 base.py:350] Train Step: 900/100000  / training metric = "
            "{'model_loss': 5.4955220222473145, 'regularization_loss': 0.0, 'total_loss': 5.4955220222473145, "
            "'categorical_cross_entropy': 5.472332000732422, 'top_1_accuracy': 0.05281250178813934, "
            "'top_5_accuracy': 0.1693750023841858, 'learning_rate': 0.0018000001}",
            "I0308 03:09:38.097480 139913490419840 base.py:350] Train Step: 950/100000  / training metric = "
            "{'model_loss': 5.608379364013672, 'regularization_loss': 0.0, 'total_loss': 5.608379364013672, "
            "'categorical_cross_entropy': 5.488901138305664, 'top_1_accuracy': 0.04531250149011612, "
            "'top_5_accuracy': 0.16906249523162842, 'learning_rate': 0.0018999999}",
        ]
    ).steps
    assert steps["step"].to_list() == [900, 950]
    t = steps["timestamp"].to_list()
    assert (t[1] - t[0]).total_seconds() == pytest.approx(54.88858)


def test_a_tokens_per_second_column_makes_a_pipe_separated_step_line_a_record() -> None:
    # NVIDIA-NeMo/Automodel PR 3473 (a run of 2026-08-10): 'tps' keys a column of tokens/s with its per-GPU share
    # glued in parentheses; the job's 31346.32 tokens/s is kept as logged (no batch: the clock times the steps)
    steps = parse(
        [
            "2026-08-10 16:00:44 | INFO | root | step 8 | epoch 0 | loss 0.7839 | grad_norm 1.7024 | lr 1.00e-05 | "
            "mem 24.06 GiB | tps 31346.32(3918.29/gpu) | num_label_tokens 45579"
        ]
    ).steps
    assert steps["step"].to_list() == [8]
    assert steps["examples_per_s"].to_list() == [pytest.approx(31346.32)]


@pytest.mark.parametrize(
    "message",
    [
        "step {n} | loss 2.31 | data_time: 0.52",  # a time the vocabulary lacks: the learned layout's, not the clock
        "step {n} | loss 2.31 | 0.52",  # a number no key names
        "step {n} | loss 2.31 | dur 0.50",  # a column whose key may be a time
    ],
)
def test_numbers_a_timing_key_or_no_key_names_keep_the_loggers_time_from_timing_a_line(message: str) -> None:
    lines = [f"2024-01-01 12:00:{10 * i:02d},000 - INFO - " + message.format(n=100 * (i + 1)) for i in range(3)]
    assert parse(lines).steps.height == 0


def test_a_bare_batch_index_after_an_epoch_with_its_total_is_the_position() -> None:
    # SRGAN_Wasserstein's loop (JustinhoCHN/SRGAN_Wasserstein issue 16, 2019-04-27): batches 27 and 28 of epoch
    # 854, each with its own seconds: 1 / 1.3290 = 0.75245 and 1 / 1.3205 = 0.75729 steps/s
    got = read(
        "Epoch [854/1500]   27 time: 1.3290s, W_loss: -6.52173805 g_loss: 0.03743032 (mse: 0.021245 vgg: 0.012784 "
        "adv: 0.003402)",
        "Epoch [854/1500]   28 time: 1.3205s, W_loss: -6.52044964 g_loss: 0.03023629 (mse: 0.013892 vgg: 0.012944 "
        "adv: 0.003401)",
    )
    assert got["step"].to_list() == [27, 28]
    assert got["global_steps_per_s"].to_list() == pytest.approx([1 / 1.3290, 1 / 1.3205])


def test_done_training_alone_on_its_line_is_the_runs_end() -> None:
    # the 'burst' tool's README (cifar10 example, a run of 2021-02-18): the loop's own last print
    got = endings(
        "Iteration   1, avg train_loss = 0.961, avg test_loss = 0.802,1 epoch duration: 0:08:56.699187",
        "Done training.",
    )
    assert [event for event, _ in got] == ["finished"]
    # ... and not where it is a sentence about something else
    assert (
        endings("Iteration   1, avg train_loss = 0.961, 1 epoch duration: 0:08:56", "Done training the tokenizer") == []
    )


def test_a_duration_named_its_epochs_is_the_epoch_announced_last_on_a_line_of_its_own() -> None:
    # nnU-Net v2 (MIC-DKFZ/nnUNet issue 2140, 2024-04-26): 'Epoch N' alone, metrics, then 'Epoch time: S s':
    # epochs 0 and 1 are records of 148.59 s and 134.63 s; epoch 2 has no time yet: no record
    lines = [
        "2024-04-26 09:39:10.910043: Epoch 0",
        "2024-04-26 09:39:10.914042: Current learning rate: 0.01",
        "2024-04-26 09:41:39.493872: train_loss 0.7088",
        "2024-04-26 09:41:39.505914: Epoch time: 148.59 s",
        "2024-04-26 09:41:40.307418: Epoch 1",
        "2024-04-26 09:43:54.932336: train_loss 0.4043",
        "2024-04-26 09:43:54.947495: Epoch time: 134.63 s",
        "2024-04-26 09:43:55.816868: Epoch 2",
        "2024-04-26 09:46:11.813500: train_loss 0.357",
    ]
    got = parse(lines).steps
    assert got["interval_s"].to_list() == pytest.approx([148.59, 134.63])
    assert got["global_steps_per_s"].null_count() == 2
    # nnU-Net v1 (MIC-DKFZ/nnUNet issue 938, 2022-02-11): 'epoch:  6' alone, 'This epoch took S s'; the
    # checkpoint's 'saving took 0.43 seconds' is other work, no epoch's
    got = read(
        "epoch:  6",
        "train loss : -0.6584",
        "done, saving took 0.43 seconds",
        "This epoch took 137.136132 s",
        "epoch:  7",
        "This epoch took 138.554727 s",
    )
    assert got["interval_s"].to_list() == pytest.approx([137.136132, 138.554727])
    # without an epoch announced, a duration that names no epoch's number is no record
    assert parse(["train loss : -0.6584", "This epoch took 137.136132 s"]).steps.height == 0
