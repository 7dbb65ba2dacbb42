"""A log whose only clock is each record's own time since the one before (a Keras epoch's ``848s``) has a lifetime:
the running sum of those times (analysis/clock.py's ``interval`` clock), so goodput and the sustained rate a plan
is made on are there where they were null."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from tierscope.analysis import AnalysisOptions, analyze
from tierscope.cli import app
from tierscope.dataset.store import Dataset

# Keras 2's model.fit under `docker logs -t`: the epoch headers carry docker's time, the bars none (ttrefoni/pm25_docker
# README.md, "Part 4: Check Progress Using Docker Logs", read 2026-12-07). Three epochs of 3185 steps.
KERAS = """\
2024-07-02T13:49:41.054948450Z 40 128 200 None None 1e-05 1
2024-07-02T13:49:41.054987347Z Fold 1/3
2024-07-02T13:49:41.054991827Z Epoch 1/40
3185/3185 [==============================] - 848s 265ms/step - loss: 122.9707 - root_mean_squared_error: 11.0892 \
- val_loss: 85.8038 - val_root_mean_squared_error: 9.2630 - lr: 1.0000e-05
2024-07-02T14:03:49.348781263Z Epoch 2/40
3185/3185 [==============================] - 831s 261ms/step - loss: 77.3939 - root_mean_squared_error: 8.7974 \
- val_loss: 73.1080 - val_root_mean_squared_error: 8.5503 - lr: 1.0000e-05
2024-07-02T14:17:40.333591727Z Epoch 3/40
3185/3185 [==============================] - 844s 265ms/step - loss: 66.7594 - root_mean_squared_error: 8.1706 \
- val_loss: 64.8411 - val_root_mean_squared_error: 8.0524 - lr: 1.0000e-05
"""


def _row(root: Path, text: str) -> dict:
    (root / "keras.log").write_text(text)
    result = CliRunner().invoke(app, ["collect", "files", str(root / "keras.log"), "-d", str(root / "ds"), "-q"])
    assert result.exit_code == 0, result.output
    return analyze(Dataset(root / "ds"), AnalysisOptions()).summary.row(0, named=True)


def test_keras_epoch_times_add_up_to_the_runs_lifetime(tmp_path: Path) -> None:
    row = _row(tmp_path, KERAS)
    assert row["goodput_clock"] == "interval"
    # steady rate: 2 epochs past the first, 3185 steps each at 261 and 265 ms: 2 / 0.526 = 3.80228 steps/s
    rate = 2 / 0.526
    assert row["steady_global_steps_per_s"] == pytest.approx(rate)
    # the clock starts at the first record (its own 848 s are before the origin nothing shows): epochs 2 and 3,
    # 831 + 844 = 1675 s, and the first record's 3185 steps at the steady rate, 3185 x 0.263 = 837.655 s
    assert row["lifetime_s"] == pytest.approx(831 + 844 + 3185 / rate)
    assert row["lifetime_s"] == pytest.approx(2512.655)
    # no start-up or tail is seen (no clock before the first record, no end logged)
    assert row["goodput_unobserved"] == "startup,tail"
    # every epoch validated, so none is a stall left out: productive at steady = 1675 + 837.655 = the lifetime,
    # and the sustained rate, 3.80228 x 2512.655 / 2512.655, is the steady one (it was null: no lifetime)
    assert row["goodput"] == pytest.approx(1.0)
    assert row["sustained_global_steps_per_s"] == pytest.approx(rate)


def test_an_interval_without_a_time_of_its_own_is_no_clock(tmp_path: Path) -> None:
    # near-miss: epoch 2's bar says "0s" (Keras' whole seconds of an epoch under one): no time of its own, its interval
    # then timed by its printed step time, which is no clock; the sum would leave it out, so there is none
    row = _row(tmp_path, KERAS.replace("- 831s 261ms/step", "- 0s 261ms/step"))
    assert row["goodput_clock"] is None
    assert row["lifetime_s"] is None and row["sustained_global_steps_per_s"] is None
    assert row["steady_global_steps_per_s"] is not None
