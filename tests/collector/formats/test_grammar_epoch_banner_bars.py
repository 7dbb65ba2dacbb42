"""A hand-written loop's bars: the epoch announced on a line of its own (``Epoch 2 of 20``), then a word for each
phase and its bar without a total (``Training`` / ``69it [01:19,  1.16s/it]``, ``Validating`` / ``8it [...]``).

The lines are quoted from sovit-123/German-Traffic-Sign-Recognition-with-Deep-Learning ``outputs/Outputs.md`` (at
34a68a76, a Colab run of ~2020, read 2026-12-07). Each expected value is worked out in a comment."""

from __future__ import annotations

import pytest

from tests.support.formats_support import read

EPOCH_1 = (
    "Epoch 1 of 20",
    "Training",
    "69it [01:19,  1.16s/it]",
    "Validating",
    "8it [00:09,  1.13s/it]",
    "Train Loss: 0.0068, Train Acc: 35.43",
    "Val Loss: 0.0030, Val Acc: 64.70",
)
EPOCH_2 = (
    "Epoch 2 of 20",
    "Training",
    "69it [01:19,  1.16s/it]",
    "Validating",
    "8it [00:08,  1.11s/it]",
    "Train Loss: 0.0021, Train Acc: 72.92",
    "Val Loss: 0.0016, Val Acc: 81.69",
)
EPOCH_3 = (
    "Epoch 3 of 20",
    "Training",
    "69it [01:19,  1.15s/it]",
    "Validating",
    "8it [00:08,  1.10s/it]",
)


def test_each_epochs_bar_is_a_step_of_the_run_and_the_validation_bars_are_none() -> None:
    got = read(*EPOCH_1, *EPOCH_2, *EPOCH_3)
    # the training bar ends at 69 each epoch, counted from epoch 1: 69, 2 x 69 = 138, 3 x 69 = 207; the 8it bars
    # after ``Validating`` are the evaluation's
    assert got["step"].to_list() == [69, 138, 207]
    # each bar's own rate: 1 / 1.16 s, 1 / 1.16 s, 1 / 1.15 s
    assert got["global_steps_per_s"].to_list() == pytest.approx([1 / 1.16, 1 / 1.16, 1 / 1.15])


def test_a_bar_that_counts_on_across_epochs_stays_as_printed() -> None:
    # near-miss: a bar whose count goes on over the announced epochs (69, then 138) counts the run's steps itself
    got = read("Epoch 1 of 20", "69it [01:19,  1.16s/it]", "Epoch 2 of 20", "138it [02:38,  1.16s/it]")
    assert got["step"].to_list() == [69, 138]


def test_a_bar_after_a_line_naming_validation_in_a_sentence_stays_a_record() -> None:
    # near-miss: only the word alone on its line announces the phase; a sentence that mentions validation does not
    got = read("Epoch 1 of 20", "validation set has 8 batches", "69it [01:19,  1.16s/it]")
    assert got["step"].to_list() == [69]
