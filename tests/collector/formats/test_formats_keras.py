"""Keras progress bars: Keras 2 and 3, carriage-return updates, glued and split bars."""

from __future__ import annotations

import pytest

from tests.support.formats_support import parse
from tierscope.collector.formats import sniff_format

ESC = "\x1b"
BS = "\x08" * 10


def keras3(k: int, n: int, tail: str) -> str:
    """One Keras 3 update as Keras 3.x writes it to a file: bold counts, coloured bar, backspaces."""
    return f"\r{ESC}[1m{k:>2}/{n}{ESC}[0m {ESC}[32m{'━' * 20}{ESC}[0m {tail}{BS}"


KERAS2 = [
    "Epoch 1/2",  # 1 skipped
    "\r   1/1875 [..............................] - ETA: 1:23 - loss: 2.3010 - accuracy: 0.1250"
    "\r 937/1875 [==============>...............] - ETA: 2s - loss: 0.3001 - accuracy: 0.9100"
    "\r1875/1875 [==============================] - 5s 3ms/step - loss: 0.2000 - accuracy: 0.9400"
    " - val_loss: 0.1000 - val_accuracy: 0.9700",  # 2 record
    "Epoch 2/2",  # 3 the last epoch announced: finished with its bar (an event)
    "1875/1875 [==============================] - 4s 2ms/step - loss: 0.0712 - accuracy: 0.9781",  # 4 record
]


def test_keras2_epochs() -> None:
    got = parse(KERAS2)
    # Epoch 1 ends at global step (1-1)*1875 + 1875 = 1875, epoch 2 at 3750.
    # Epoch 1, "5s 3ms/step" with val_loss: its 5 s hold the validation too, so the step time gives the
    # rate, 1000 / 3 = 333.33 steps/s. Epoch 2, "4s 2ms/step" without validation: both rounded to whole
    # units, the seconds are the finer (4 > 2), so 1875 / 4 = 468.75 (not 500, up to 25 % off by its
    # rounding). interval_s: 5 s, 4 s.
    rows = got.steps.select(
        "source_offset", "step", "loss", "accuracy", "eval_loss", "eval_accuracy", "interval_s", "global_steps_per_s"
    ).rows()
    assert rows[0][:7] == (2, 1875, 0.2, 0.94, 0.1, 0.97, 5.0)
    assert abs(rows[0][7] - 1000 / 3) < 1e-9
    assert rows[1] == (4, 3750, 0.0712, 0.9781, None, None, 4.0, 1875 / 4)
    assert got.skipped == 1 and got.rejects.height == 0
    assert got.events.select("source_offset", "event", "reason").rows() == [(3, "finished", "Epoch 2/2 finished")]
    assert sniff_format(KERAS2) == "keras"


KERAS3 = [
    "Epoch 1/2",
    keras3(1, 24, f"{ESC}[1m9s{ESC}[0m 401ms/step - accuracy: 0.5000 - loss: 1.0673")
    + keras3(
        24,
        24,
        f"{ESC}[1m2s{ESC}[0m 5ms/step - accuracy: 0.4688 - loss: 1.0159 - val_accuracy: 0.5469 - val_loss: 0.8322",
    ),
    "Epoch 2/2",
    keras3(24, 24, f"{ESC}[1m0s{ESC}[0m 4ms/step - accuracy: 0.4427 - loss: 0.9775"),
    "24/24 - 1s - 2ms/step - accuracy: 0.4609 - loss: 0.9069",  # verbose=2, still epoch 2
]


def test_keras3_with_colours_and_backspaces() -> None:
    got = parse(KERAS3)
    # Epoch 1: step 24, 2 s, 5ms/step -> 200 steps/s. Epoch 2: step 48, "0s" is under half a
    # second: no interval; 4ms/step -> 250/s. The verbose=2 line: also (2-1)*24+24 = 48, 1 s, 500/s.
    assert got.steps.select(
        "source_offset", "step", "loss", "accuracy", "eval_loss", "eval_accuracy", "interval_s", "global_steps_per_s"
    ).rows() == [
        (2, 24, 1.0159, 0.4688, 0.8322, 0.5469, 2.0, 200.0),
        (4, 48, 0.9775, 0.4427, None, None, None, 250.0),
        (5, 48, 0.9069, 0.4609, None, None, 1.0, 500.0),
    ]
    assert sniff_format(KERAS3) == "keras"


def test_glued_and_split_bars_under_several_workers() -> None:
    lines = [
        "[worker-0] Epoch 3/10",
        "[worker-1] Epoch 3/10",
        # Worker 0's final update with worker 1's update glued on: both are read.
        "[worker-0] 100/100 [==============================] - 4s 40ms/step - loss: 0.30 - accuracy: 0.90"
        "  60/100 [=================>............] - ETA: 1s - loss: 0.35 - accuracy: 0.88",
        # Worker 1's bar split across two lines: joined again.
        "[worker-1] 100/100 [=====================",
        "[worker-1] =========] - 5s 50ms/step - loss: 0.31 - accuracy: 0.89",
        # A piece with numbers but no step count: reject.
        "[worker-0] ......] - ETA: 3s - loss: 0.2",
        # Cut off mid-number: reject.
        "[worker-0] 100/100 [==============================] - 4s 40ms/step - loss: ",
    ]
    got = parse(lines)
    # Epoch 3 of 100 steps ends at (3-1)*100 + 100 = 300; 40ms/step -> 25/s, 50ms/step -> 20/s.
    assert got.steps.select("source_offset", "role", "task_index", "step", "loss", "global_steps_per_s").rows() == [
        (3, "worker", 0, 300, 0.30, 25.0),
        (4, "worker", 1, 300, 0.31, 20.0),
    ]
    assert got.rejects.select("source_offset", "reason").rows() == [
        (6, "a piece of a Keras progress bar without its step count (glued to or split from another bar)"),
        (7, "a Keras progress bar cut off mid-update"),
    ]
    # 7 lines: 2 with records, 2 rejects; the 2 Epoch lines and the joined tail are skipped.
    assert got.skipped == 3


def test_interrupted_bar_gives_no_record_and_a_counterless_summary_one() -> None:
    got = parse(
        [
            "Epoch 2/5",
            # In-progress updates carry only an ETA: no rate or time figure, so no step record.
            "\r  10/50 [====>.........] - ETA: 9s - loss: 0.5\r  20/50 [=======>......] - ETA: 6s - loss: 0.4",
            # An epoch summary whose "k/N" was lost (case10): step unknown, 1000/52 = 19.2307... steps/s.
            " [==============================] - 4s 52ms/step - loss: 0.2569 - accuracy: 0.9237",
        ]
    )
    assert got.steps.select("source_offset", "step", "interval_s", "global_steps_per_s", "position").rows() == [
        (3, None, 4.0, 1000 / 52, 3)
    ]


def test_an_accuracy_in_percent_is_read_as_a_fraction_and_keeps_its_record() -> None:
    # a metric printed as a percentage (a custom metric, a callback): 93.4% is 93.4 / 100 = 0.934 and 91.25% of the
    # validation 0.9125, as every accuracy is stored (0..1); the epoch's record stands: step 1875, and (the epoch
    # validated, so its 4 s hold the validation too) its step time's rate, 1000 / 2 ms = 500 steps/s
    line = "1875/1875 [==============================] - 4s 2ms/step - loss: 0.0712 - accuracy: 93.4% - val_acc: 91.25%"
    got = parse([line])
    assert got.rejects.height == 0
    assert got.steps.select("step", "accuracy", "eval_accuracy", "global_steps_per_s").rows() == [
        (1875, 0.934, 0.9125, 500.0)
    ]
    # a percentage no accuracy can be (150 % is 1.5) is refused as 1.5 is
    assert parse([line.replace("93.4%", "150%")]).rejects.get_column("reason").to_list() == [
        "accuracy '150%' is not a number between 0 and 1"
    ]


def test_fits_of_one_epoch_each_print_no_epoch_line_and_each_bar_is_a_record() -> None:
    # TrackNetV4/TrackNetV4 issue 3 (2024): Keras 3 model.fit(epochs=1) called once per training clip. Keras prints
    # 'Epoch E/T' only for more than one epoch (keras/src/callbacks/progbar_logger.py, on_epoch_begin), so each
    # finished bar of its own total is one fit's epoch, not an evaluation after the first: 1000/54 = 18.52,
    # 1000/53 = 18.87, 1000/59 = 16.95 steps/s.
    got = parse(
        [
            "64/64 ━━━━━━━━━━━━━━━━━━━━ 3s 54ms/step - accuracy: 0.1632 - loss: 4.0454e-04",
            "68/68 ━━━━━━━━━━━━━━━━━━━━ 4s 53ms/step - accuracy: 0.0883 - loss: 3.5723e-04",
            "11/11 ━━━━━━━━━━━━━━━━━━━━ 1s 59ms/step - accuracy: 0.1665 - loss: 3.9664e-04",
        ]
    ).steps
    assert got.get_column("step").to_list() == [64, 68, 11]
    assert got.get_column("global_steps_per_s").to_list() == pytest.approx([1000 / 54, 1000 / 53, 1000 / 59])


def test_after_an_epoch_line_a_bar_of_another_total_is_still_an_evaluation() -> None:
    # near miss: the same bars after 'Epoch 2/2' (fit of two epochs announces its epochs): the 68/68 bar after the
    # epoch's 64/64 is evaluate's, no record; step (2 - 1) x 64 + 64 = 128
    got = parse(
        [
            "Epoch 2/2",
            "64/64 ━━━━━━━━━━━━━━━━━━━━ 3s 54ms/step - accuracy: 0.1632 - loss: 4.0454e-04",
            "68/68 ━━━━━━━━━━━━━━━━━━━━ 4s 53ms/step - accuracy: 0.0883 - loss: 3.5723e-04",
        ]
    ).steps
    assert got.get_column("step").to_list() == [128]
