"""An epoch-level log timed only by its logger: each epoch's training loss under the logger's time is the epoch's
record, its epoch stated on the line or announced on a line of its own before it.

Quoted lines: CoDS-GCS/kglids ``kg_governor/data_profiling/column_embeddings/pretrained_models/int/README.txt`` (at
2d1554fc, a training log of 2023-01-27); R3c0ger/CialloDroid ``read.md`` (at e0f0ae8c, a run of 2024-11-25); both read
2026-12-07. Each expected value is worked out in a comment."""

from __future__ import annotations

import pytest

from tests.support.formats_support import read, read_lines

KGLIDS = (
    "2023-01-27 10:06:13.267823: Epoch: 90 done: Avg Train Loss: 0.3375"
    " Avg Valid Loss: 0.3452 --- Valid Accuracy: 0.8230",
    "2023-01-27 11:14:12.762874: Epoch: 91 done: Avg Train Loss: 0.3374"
    " Avg Valid Loss: 0.3473 --- Valid Accuracy: 0.8199",
    "2023-01-27 12:23:43.519745: Epoch: 92 done: Avg Train Loss: 0.3375"
    " Avg Valid Loss: 0.3463 --- Valid Accuracy: 0.8205",
    "====================================================================================================",
    "2023-01-27 20:29:18.852752 Test Loss: 0.3466 --- Test Accuracy: 0.8178",
)

CIALLODROID = (
    "2024-11-25 00:33:40,233 - Epoch 14/20",
    "2024-11-25 00:33:51,108 - Train Loss: 22.0072, Accuracy: 0.9128",
    "2024-11-25 00:33:54,430 - Validation Loss: 5.2795, Accuracy: 0.9121",
    "2024-11-25 00:33:54,458 - Epoch 15/20",
    "2024-11-25 00:34:04,387 - Train Loss: 21.5348, Accuracy: 0.9128",
    "2024-11-25 00:34:07,810 - Validation Loss: 5.2300, Accuracy: 0.9121",
)


def test_an_epochs_training_loss_under_the_loggers_time_is_the_epochs_record() -> None:
    got = read(*KGLIDS)
    # the three epoch lines (1-3), no step (the log does not say how many steps an epoch has); the test line after
    # the rule is an evaluation's
    assert got["source_offset"].to_list() == [1, 2, 3]
    assert got["step"].is_null().all()
    # the training loss, said before the validation's: 0.3375, 0.3374, 0.3375
    assert got["loss"].to_list() == pytest.approx([0.3375, 0.3374, 0.3375])
    # timed by the logger: 10:06:13.267823, 11:14:12.762874 (67 min 59.5 s later), 12:23:43.519745
    assert [t.strftime("%H:%M:%S.%f") for t in got["timestamp"]] == [
        "10:06:13.267823",
        "11:14:12.762874",
        "12:23:43.519745",
    ]


def test_an_epoch_announced_on_its_own_line_owns_the_training_loss_line_after_it() -> None:
    got = read(*CIALLODROID)
    # ``Train Loss`` after ``Epoch 14/20`` and after ``Epoch 15/20``: lines 2 and 5; the validation lines are none
    assert got["source_offset"].to_list() == [2, 5]
    assert got["loss"].to_list() == pytest.approx([22.0072, 21.5348])
    # the epoch's clock: 00:33:51.108, then 00:34:04.387 (13.279 s later)
    assert [t.strftime("%H:%M:%S.%f") for t in got["timestamp"]] == ["00:33:51.108000", "00:34:04.387000"]


def test_the_keras_format_hands_on_epoch_lines_that_head_no_bar_of_its_own() -> None:
    # ``Epoch 14/20`` is also Keras' line: with no Keras bar in the batch, it is the loop's banner (lines 1 and 4 read
    # by no one, the grammar reading the loss lines under them)
    parsed = read_lines(*CIALLODROID)
    assert parsed.steps["format"].to_list() == ["grammar", "grammar"]


def test_an_epoch_line_whose_first_loss_is_the_validations_is_none() -> None:
    # near-miss: the first loss said is the validation's: an evaluation's summary, no training epoch
    got = read(
        "2023-01-27 10:06:13.267823: Epoch: 90 done: Avg Valid Loss: 0.3452 Avg Train Loss: 0.3375",
        "2023-01-27 11:14:12.762874: Epoch: 91 done: Avg Valid Loss: 0.3473 Avg Train Loss: 0.3374",
    )
    assert got.height == 0


def test_several_loss_lines_under_one_banner_are_no_epochs() -> None:
    # near-miss: two loss lines under each ``Epoch E/T`` are a loop's batches, which the log does not number
    got = read(
        "2024-11-25 00:33:40,233 - Epoch 14/20",
        "2024-11-25 00:33:45,108 - loss: 22.0072",
        "2024-11-25 00:33:51,108 - loss: 21.0072",
        "2024-11-25 00:33:54,458 - Epoch 15/20",
        "2024-11-25 00:34:04,387 - loss: 21.5348",
        "2024-11-25 00:34:06,387 - loss: 21.5348",
    )
    assert got.height == 0
