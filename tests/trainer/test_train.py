"""Single-process training in this process: the synthetic set is learnable, and the log reads back."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from tierscope.collector.formats import parse_lines
from tierscope.collector.formats.base import LINES_SCHEMA
from tierscope.trainer import data
from tierscope.trainer.roles import SINGLE
from tierscope.trainer.train import TrainConfig, run_task


def lines_frame(text: str) -> pl.DataFrame:
    lines = text.splitlines()
    return pl.DataFrame({"source_offset": range(1, len(lines) + 1), "line": lines}, schema=LINES_SCHEMA)


def test_synthetic_set_is_deterministic() -> None:
    a, b, c = data.synthetic(n=50, seed=7), data.synthetic(n=50, seed=7), data.synthetic(n=50, seed=8)
    assert a.images.shape == (50, 28, 28) and a.images.dtype == np.uint8 and a.labels.dtype == np.uint8
    assert np.array_equal(a.images, b.images) and np.array_equal(a.labels, b.labels)
    assert not np.array_equal(a.images, c.images)
    assert set(np.unique(data.synthetic(n=1000).labels)) == set(range(10))


def test_npz_file_is_checked(tmp_path: Path) -> None:
    good = tmp_path / "good.npz"
    np.savez(good, x_train=np.zeros((4, 784), np.uint8), y_train=np.array([0, 1, 2, 9], np.uint8))
    arrays = data.from_npz(good)
    assert arrays.images.shape == (4, 28, 28)  # flat 784-pixel rows are reshaped
    bad = tmp_path / "bad.npz"
    np.savez(bad, images=np.zeros((4, 28, 28)))
    with pytest.raises(data.DataError, match=r"bad.npz: no array x_train, y_train \(found: images\)"):
        data.from_npz(bad)
    with pytest.raises(data.DataError, match=r"not a readable \.npz file"):
        data.from_npz(tmp_path / "missing.npz")


def test_single_process_learns_the_synthetic_set() -> None:
    stream = io.StringIO()
    code, result = run_task(TrainConfig(run_id="learn", tier="BASIC", steps=500, log_every_steps=100), SINGLE, stream)
    assert code == 0 and result is not None
    assert (result.step, result.local_step, result.records) == (500, 500, 5)
    assert 0 < result.first_step_s < result.train_s  # the first step (tracing) is part of the loop's time
    parsed = parse_lines(lines_frame(stream.getvalue()))
    steps = parsed.steps.sort("step")
    assert steps["step"].to_list() == [100, 200, 300, 400, 500]
    assert steps["role"].unique().to_list() == ["master"]
    # Chance level on 10 classes is a loss of ln 10 = 2.30; the last batches are learnt.
    assert steps["loss"][-1] < 0.5 * steps["loss"][0]
    assert steps["accuracy"].tail(2).min() > 0.9
    # Examples per second = local steps per second x batch size (100).
    assert steps.select((pl.col("examples_per_s") - 100 * pl.col("local_steps_per_s")).abs().max()).item() < 0.01
    # no model_dir: no checkpoints; the end of set-up and the first step are events
    assert parsed.events["event"].sort().to_list() == ["finished", "first_step", "initialized", "started"]


def test_text_log_reads_back_through_the_cloudml_parser() -> None:
    stream = io.StringIO()
    config = TrainConfig(run_id="txt", steps=60, log_every_steps=25, log_format="text")
    code, _ = run_task(config, SINGLE, stream)
    assert code == 0
    parsed = parse_lines(lines_frame(stream.getvalue()))
    # Records every 25 steps and at the last one: 25, 50, 60.
    assert parsed.steps["step"].to_list() == [25, 50, 60]
    assert parsed.steps["format"].unique().to_list() == ["cloudml"]
    # the started, initialized, first_step and finished lines (the collector reads no text event line)
    assert parsed.rejects.height == 0 and parsed.skipped == 4


def test_a_failing_task_logs_failed_and_exits_1(tmp_path: Path) -> None:
    stream = io.StringIO()
    config = TrainConfig(run_id="bad", steps=10, data_file=tmp_path / "nope.npz")
    code, result = run_task(config, SINGLE, stream)
    assert (code, result) == (1, None)
    events = parse_lines(lines_frame(stream.getvalue())).events.sort("source_offset")
    assert events["event"].to_list() == ["started", "failed"]
    assert events["reason"][1].startswith("DataError: ") and "nope.npz" in events["reason"][1]
