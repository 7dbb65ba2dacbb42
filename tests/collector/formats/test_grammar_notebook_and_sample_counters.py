"""The grammar on progress statements of notebooks and contrastive trainers: the Hugging Face notebook progress bar
as text and counters of samples; each kind read from short real lines (quoted from public issues and files, the
source in each test's comment), with its near-misses refused. Each expected value is worked out by hand in a
comment."""

from __future__ import annotations

import pytest

from tests.support.formats_support import read


def test_the_notebook_progress_bar_as_text_is_a_counter_with_its_rate() -> None:
    # the Hugging Face Trainer's notebook bar pasted as text: Unsloth's run (unslothai/unsloth issue 1140,
    # 2024-10-16) '[ 22/290 02:50 < 38:04, 0.12 it/s, Epoch 0.36/5]': step 22 at 0.12 steps/s; a notebook export
    # (public code index id 34256824355) '[ 389/9513 13:44 < 5:24:01, 0.47 it/s, Epoch 0.12/3]': step 389 at 0.47
    got = read("[ 22/290 02:50 < 38:04, 0.12 it/s, Epoch 0.36/5]")
    assert got["step"].to_list() == [22]
    assert got["global_steps_per_s"][0] == pytest.approx(0.12)
    got = read("  [ 389/9513 13:44 < 5:24:01, 0.47 it/s, Epoch 0.12/3]")
    assert got["step"].to_list() == [389]
    assert got["global_steps_per_s"][0] == pytest.approx(0.47)


def test_the_notebook_bar_with_hours_elapsed_is_a_counter_too() -> None:
    # a note quoting the bar (public code index id 30259039963): '[1139/2908 1:46:44 < 2:46:05, 0.18 it/s, Epoch
    # 0.78/2]': step 1139 at 0.18 steps/s
    got = read("[1139/2908 1:46:44 < 2:46:05, 0.18 it/s, Epoch 0.78/2]")
    assert got["step"].to_list() == [1139]
    assert got["global_steps_per_s"][0] == pytest.approx(0.18)


def test_a_month_and_day_before_a_time_of_day_is_still_a_date() -> None:
    # near-miss: detectron2-style '11/01 11:27:04' then a rate with no position: a date, not step 11 of 1
    got = read("11/01 11:27:04 eta: 0:10:00  iter: 19  total_loss: 2.1  time: 0.5  data_time: 0.01")
    assert 11 not in got["step"].to_list()


def test_a_batch_time_marked_t_is_the_step_time() -> None:
    # open_clip's logger (its statement 'Data (t): {data_time_m.avg:.3f} Batch (t): {batch_time_m.avg:.3f},
    # {samples_per_second:#g}/s, ...', public code index id 42588420444), in a negCLIP run
    # (mertyg/vision-language-models-are-bows issue 27, run of 2023-06-29): 'Batch (t): 0.559' -> 1 / 0.559 = 1.78891
    # steps/s; 'Data (t): 0.158' is the data loader's wait within it, no step time
    got = read(
        "Train Epoch: 0 [  6464/109468 (3%)] Loss: 0.97884 (1.023) Data (t): 0.158 Batch (t): 0.559, 36.0876/s "
        "LR: 0.000001 Logit Scale: 99.995 - V4"
    )
    assert got.height == 1
    assert got["global_steps_per_s"][0] == pytest.approx(1 / 0.559)


def test_a_data_time_marked_t_alone_is_no_step_time() -> None:
    # near-miss: the data loader's 'Data (t): 0.158' without the batch's time states no step time: no record
    got = read("Train Epoch: 0 [  6464/109468 (3%)] Loss: 0.97884 (1.023) Data (t): 0.158 LR: 0.000001")
    assert got.height == 0
