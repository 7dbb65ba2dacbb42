"""A progress bar whose description names reading a dataset's files in (Ultralytics' label scan and image cache) is
data work, no training step: its rate counts files a second. Near-miss: the training bar of the same trainer, its
epoch's row as its description, stays a record."""

from __future__ import annotations

import pytest

from tests.support.formats_support import parse


@pytest.mark.parametrize(
    "line",
    [
        # ultralytics/ultralytics issue 8360 (2024-02-21): the label scan before training
        "train: Scanning D:\\Study\\YOLOv8\\ultralytics-mainV8-org\\ultralytics-main\\dataset\\train\\labels... 51 "
        "images, 0 backgrounds, 0 corrupt: 100%|██████████| 51/51 [00:00<00:00, 1214.28it/s]",
        # the same scan under Ultralytics' own bar (8.3 on), ultralytics/ultralytics issue 25832
        "train: Scanning /home/projects/datasets/gravels_dataset/yolo/labels/train.cache... 25550 images, 0 "
        "backgrounds, 0 corrupt: 100% ━━━━━━━━━━━━ 25550/25550 8.2Git/s 0.0s",
        # the image cache into memory: an Ultralytics HUB notebook's YOLOv8 start-up (read 2026-12-07) prints
        # ``val: Caching images (1.2GB ram): 100%|██████████| 1016/1016 [00:05<00:00, 169.86it/s]``; the training
        # split's is the same line under the ``train: `` prefix (ultralytics/yolov5 utils/dataloaders.py:
        # f"{prefix}Caching images ({b / gb:.1f}GB {cache})"), which names no evaluation
        "train: Caching images (1.2GB ram): 100%|██████████| 1016/1016 [00:05<00:00, 169.86it/s]",
    ],
)
def test_a_bar_of_reading_the_dataset_in_is_no_training_step(line: str) -> None:
    assert parse([line]).steps.height == 0


def test_the_training_bar_of_the_same_trainer_stays_a_record() -> None:
    # Ultralytics' training bar (its row: epoch 1/100, GPU memory, losses, instances, size): 16 batches in 5 s
    line = (
        "        1/100      2.61G      1.234      2.345      1.456         25        640: 100%|██████████| 16/16 "
        "[00:05<00:00,  3.05it/s]"
    )
    assert parse([line]).steps.select("step", "global_steps_per_s").rows() == [(16, 3.05)]


@pytest.mark.parametrize(
    ("line", "steps_per_s"),
    [
        # a training bar whose description names a cache or a scan of its own (the model's KV cache; a model
        # named so), not a dataset's files being read: records, as before the data-work words were added
        ("Training with KV caching:  10%|#         | 100/1000 [00:02<00:20, 5.00it/s, loss=0.80]", 5.0),
        ("Scanning-transformer epoch 1:  10%|#         | 100/1000 [00:02<00:20, 5.00it/s]", 5.0),
    ],
)
def test_a_training_bar_naming_a_cache_or_a_scan_stays_a_record(line: str, steps_per_s: float) -> None:
    assert parse([line]).steps.select("step", "global_steps_per_s").rows() == [(100, steps_per_s)]
