"""A logger's source location between its header and the message (``(name:line) - ``, loguru's ``name:function:line
- ``) is an envelope layer, with the process and thread in brackets before the level; a loss is a signed number
(a GAN's, an ELBO's, a reinforcement learner's may be negative), and a NaN or infinite one leaves the record with no
loss rather than no record. Short real lines; the expected values worked out in the comments."""

from __future__ import annotations

from datetime import UTC, datetime

import polars as pl
import pytest

from tests.collector.formats.test_envelopes import read
from tests.support.formats_support import parse

# MONAI Label's Python logging format, ``[%(asctime)s] [%(process)s] [%(threadName)s] [%(levelname)s]
# (%(name)s:%(lineno)d) - %(message)s``: Project-MONAI/MONAILabel PR 1333 (japarada, a run of 2023-04-08) ...
MONAI_PR = [
    "[2023-04-08 05:40:26,586] [42292] [MainThread] [INFO] (ignite.engine.engine.SupervisedTrainer:972) - Epoch[1] "
    "Complete. Time taken: 00:00:02.693",
    "[2023-04-08 05:40:27,016] [42292] [MainThread] [INFO] (ignite.engine.engine.SupervisedTrainer:272) - Epoch: "
    "2/50, Iter: 1/4 -- train_loss: 2.3614",
    "[2023-04-08 05:40:27,275] [42292] [MainThread] [INFO] (ignite.engine.engine.SupervisedTrainer:272) - Epoch: "
    "2/50, Iter: 2/4 -- train_loss: 1.3128",
    "[2023-04-08 05:40:27,494] [42292] [MainThread] [INFO] (ignite.engine.engine.SupervisedTrainer:272) - Epoch: "
    "2/50, Iter: 3/4 -- train_loss: 1.2360",
    "[2023-04-08 05:40:27,706] [42292] [MainThread] [INFO] (ignite.engine.engine.SupervisedTrainer:272) - Epoch: "
    "2/50, Iter: 4/4 -- train_loss: 1.4361",
]
# ... and a 3D Slicer forum thread (discourse.slicer.org/t/training-and-validation-dice-values-are-0/30689, post 2,
# 2023-09-13), also with a worker thread's name
MONAI_FORUM = [
    "[2023-09-13 08:31:58,232] [19180] [MainThread] [INFO] (ignite.engine.engine.SupervisedTrainer:294) - Epoch: "
    "46/50, Iter: 1/3 -- train_loss: 0.6210",
    "[2023-09-13 08:31:58,363] [19180] [MainThread] [INFO] (ignite.engine.engine.SupervisedTrainer:294) - Epoch: "
    "46/50, Iter: 2/3 -- train_loss: 0.6227",
    "[2023-09-13 08:31:58,490] [19180] [MainThread] [INFO] (ignite.engine.engine.SupervisedTrainer:294) - Epoch: "
    "46/50, Iter: 3/3 -- train_loss: 0.6205",
    "[2023-09-13 08:31:58,914] [19180] [MainThread] [INFO] (ignite.engine.engine.SupervisedTrainer:294) - Epoch: "
    "47/50, Iter: 1/3 -- train_loss: 0.6229",
]
# loguru's default ``{time} | {level: <8} | {name}:{function}:{line} - {message}``: YOLOX, quoted in
# open-mmlab/mmdetection issue 5993 (2021-08-31)
LOGURU = (
    "2021-08-31 07:08:06.767 | INFO     | yolox.core.trainer:after_iter:246 - epoch: 1/300, iter: 10/1849, mem: "
    "6357Mb, iter_time: 0.588s, data_time: 0.001s, total_loss: 16.9, iou_loss: 4.7"
)


def test_a_loggers_process_thread_and_source_location_are_stripped() -> None:
    got = read(MONAI_PR[1])
    assert got["line"] == "Epoch: 2/50, Iter: 1/4 -- train_loss: 2.3614"
    assert got["timestamp"] == datetime(2023, 4, 8, 5, 40, 27, 16000, tzinfo=UTC)
    assert got["severity"] == "INFO"
    thread = (
        "[2023-09-13 08:32:02,472] [10904] [ThreadPoolExecutor-2_0] [INFO] (monailabel.utils.async_tasks.utils:83) "
    )
    assert read(thread + "- Return code: 0")["line"] == "Return code: 0"
    assert read(LOGURU)["line"].startswith("epoch: 1/300, iter: 10/1849, mem: 6357Mb")


def test_positions_and_losses_behind_a_source_location_are_records_timed_by_the_logger() -> None:
    # PR 1333: epoch 2's iterations 1-4 of 4 ('Epoch[1] Complete' is no step); one epoch shows no position going
    # back, so the iterations stay as printed. 3 steps in 27.706 - 27.016 = 0.690 s (4.35 steps/s by the clock).
    steps = parse(MONAI_PR).steps
    assert steps["step"].to_list() == [1, 2, 3, 4]
    assert steps["loss"].to_list() == [2.3614, 1.3128, 1.2360, 1.4361]
    stamps = steps["timestamp"].to_list()
    assert (stamps[-1] - stamps[0]).total_seconds() == pytest.approx(0.690)
    # the forum's epoch 46 then 47, 3 iterations each: the iteration goes back as the epoch advances, so it counts
    # within the epoch; the file's first epoch is 46 (not 1), epochs counted from 0: 46 x 3 + i = 139, 140, 141, 142
    assert parse(MONAI_FORUM).steps["step"].to_list() == [139, 140, 141, 142]


@pytest.mark.parametrize(
    "line",
    [
        "(see train.py:12) - step 3 loss 0.5",  # no logger header before it: the message's own words
        "epoch:1:5 - step 3 loss 0.5",  # a bare name:function:line only after a logger's level
        "[2023-04-08 05:40:27,016] [Eval] step 3 loss 0.5",  # a bracketed word is no thread's name
    ],
)
def test_near_misses_of_a_source_location_keep_their_text(line: str) -> None:
    got = read(line)
    assert "step 3 loss 0.5" in got["line"]
    assert got["line"].split(" step 3")[0] != ""


def test_a_negative_loss_is_a_loss_and_a_nan_loss_leaves_the_record_without_one() -> None:
    # nnU-Net v1's Dice-based loss is negative ('train loss : -0.6584', MIC-DKFZ/nnUNet, a 2022-02-11 log); a
    # GAN's discriminator loss under a logger's time (hand-written in the shape of the lines above): steps 100, 200,
    # 300, 10 s apart, losses -0.52, nan, inf -> three records, the losses -0.52, null, null
    lines = [
        "2024-01-01 12:00:00,000 - INFO - step 100 loss -0.52",
        "2024-01-01 12:00:10,000 - INFO - step 200 loss nan",
        "2024-01-01 12:00:20,000 - INFO - step 300 loss inf",
    ]
    steps = parse(lines).steps
    assert steps["step"].to_list() == [100, 200, 300]
    assert steps["loss"].to_list() == [-0.52, None, None]
    # a measured line keeps its negative loss too (1 / 0.5 s = 2 steps/s)
    got = parse(["step 10 loss -1.25 time 0.5s"]).steps.row(0, named=True)
    assert (got["loss"], got["global_steps_per_s"]) == (-1.25, 2.0)


_CTRL_C = [
    "Traceback (most recent call last):",
    '  File "train.py", line 120, in <module>',
    "    time.sleep(60)",
    "KeyboardInterrupt",
]


@pytest.mark.parametrize(
    "finished",
    [
        # Hugging Face Trainer's line after its last step (src/transformers/trainer.py, logger.info)
        "Training completed. Do not forget to share your model on huggingface.co/models =)",
        # Lightning's end of fit (lightning/pytorch/loops/fit_loop.py, rank_zero_info)
        "`Trainer.fit` stopped: `max_epochs=3` reached.",
    ],
)
def test_a_ctrl_c_after_the_run_finished_fails_nothing(finished: str) -> None:
    # three steps of three, the run's own end, then the user's Ctrl-C on what the script did after it: ok
    steps = ["step 1/3 loss 0.5 time 0.5s", "step 2/3 loss 0.4 time 0.5s", "step 3/3 loss 0.3 time 0.5s"]
    events = parse([*steps, finished, *_CTRL_C]).events
    assert events["event"].to_list() == ["finished"]
    # before the run's end, the same Ctrl-C stops its work: failed
    events = parse([*steps[:2], *_CTRL_C]).events
    assert events["event"].to_list() == ["failed"]


def test_events_whose_every_reason_is_missing_keep_their_ending() -> None:
    # the trainer's JSON events state no reason: a column of nulls of no type, on which a string test fails;
    # the run's started and finished events are kept as they are
    from tierscope.collector.formats.status import drop_interrupts_after_finishing

    events = pl.DataFrame({"event": ["started", "finished"], "source_offset": [0, 120], "reason": [None, None]})
    assert events.schema["reason"] == pl.Null
    assert drop_interrupts_after_finishing(events).equals(events)
