"""``train local --tensorboard``: the event files a run writes collect to the rate of its step log,
and a file cut inside its last record still gives every complete one (a real TensorFlow cluster)."""

from __future__ import annotations

import os
from pathlib import Path

import polars as pl
import pytest
from tensorboard.backend.event_processing.event_file_loader import RawEventFileLoader

from tests.trainer.conftest import MirroredRun
from tierscope.analysis import analyze
from tierscope.collector.collect import collect_runs, runs_from_paths
from tierscope.collector.manifest import RunSpec
from tierscope.dataset.store import Dataset
from tierscope.trainer.launch import train_local
from tierscope.trainer.task import config_from_args, task_args
from tierscope.trainer.train import TrainConfig


def test_every_task_is_told_where_and_event_files_stay_out_of_the_run_directory(tmp_path: Path) -> None:
    config = TrainConfig(run_id="a", tensorboard_dir=tmp_path / "tb")
    assert config_from_args(task_args(config)) == config
    with pytest.raises(ValueError, match="lies inside the run directory"):
        train_local(out=tmp_path / "runs" / "a", tensorboard=tmp_path / "runs" / "a" / "tb")
    assert not (tmp_path / "runs").exists()


@pytest.mark.cluster
def test_event_files_collect_to_the_step_logs_rate_and_survive_a_cut(
    mirrored_text_run: MirroredRun, tmp_path: Path
) -> None:
    # The session's mirrored run (tests/trainer/conftest.py; test_launch reads its text step log too): 200 steps,
    # a record every 20, no checkpoints or evaluations in the run: the step log records them as events (pauses
    # the steady rate leaves out) and the event files do not, so with them the two sources would rightly keep
    # different intervals.
    run, tb = mirrored_text_run.run, mirrored_text_run.tensorboard
    out = run.out
    assert run.status == "finished", run.reason
    files = sorted(tb.rglob("events.out.tfevents.*"))
    assert [f.parent.relative_to(tb).as_posix() for f in files] == ["chief_0/train", "worker_0/train"]

    from_log, from_events = Dataset(tmp_path / "log"), Dataset(tmp_path / "events")
    collect_runs(from_log, runs_from_paths([out], None, None, None))
    [spec] = runs_from_paths([tb], None, run.tier, None)
    collect_runs(from_events, [spec], settle_s=0)
    logged = from_log.read("steps").sort("role", "step").select("role", "task_index", "step")
    read = from_events.read("steps").sort("role", "step").select("role", "task_index", "step")
    assert read.equals(logged) and read.height == 20  # 10 records per task, the same steps
    # The same intervals' rates (float32 in the event files): the same verdict on steadiness (a loaded machine
    # can leave a 200-step run still speeding up, said by both) and the same rate within 1 %.
    by_log, by_events = (analyze(d).summary.row(0, named=True) for d in (from_log, from_events))
    assert by_events["steady_status"] == by_log["steady_status"]
    assert by_events["steady_assumption"] == by_log["steady_assumption"]
    if by_log["steady_global_steps_per_s"] is not None:
        assert by_events["steady_global_steps_per_s"] == pytest.approx(by_log["steady_global_steps_per_s"], rel=0.01)

    # A job killed while writing: the chief's file cut inside its last record (step 200's accuracy).
    cut = tmp_path / "cut" / "chief_0" / "train" / files[0].name
    cut.parent.mkdir(parents=True)
    cut.write_bytes(files[0].read_bytes()[:-9])
    whole = sum(1 for _ in RawEventFileLoader(str(files[0])).Load())  # tensorboard's own reader
    dataset = Dataset(tmp_path / "cut-ds")
    [counts] = collect_runs(dataset, [RunSpec(run_id="cut", tier=None, files=[cut])], settle_s=0).sources
    assert counts.lines == whole - 1 and counts.steps == 10
    assert any(n.startswith("the file ended early") for n in counts.notes)
    steps = dataset.read("steps").sort("step")
    assert steps["step"].to_list() == list(range(20, 201, 20))
    assert steps["accuracy"].null_count() == 1 and steps.filter(pl.col("step") == 200)["accuracy"][0] is None
    assert dataset.read("rejects")["reason"][0].startswith(f"event {whole}: the file ends inside it")
    assert os.path.getsize(cut) == files[0].stat().st_size - 9


#: A real Keras ``model.fit`` with its TensorBoard callback (2 epochs of 8 batches, every 2nd batch logged).
KERAS_FIT = """
import sys
import keras
import numpy as np
x = np.random.default_rng(0).normal(size=(64, 4)).astype("float32")
y = (x[:, 0] > 0).astype("int32")
model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2, activation="softmax")])
model.compile("sgd", "sparse_categorical_crossentropy", metrics=["accuracy"])
board = keras.callbacks.TensorBoard(sys.argv[1], update_freq=2, write_steps_per_second=True, write_graph=False)
model.fit(x, y, batch_size=8, epochs=2, validation_data=(x[:16], y[:16]), callbacks=[board], verbose=0)
"""


@pytest.mark.cluster
def test_a_real_keras_callbacks_files_are_read_as_tensorboard_reads_them(tmp_path: Path) -> None:
    import subprocess
    import sys

    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    from tensorboard.util.tensor_util import make_ndarray

    def values(directory: Path, tag: str) -> dict[int, float]:
        board = EventAccumulator(str(directory))
        board.Reload()  # TF2 scalars are tensors: tensorboard keeps them under Tensors
        return {e.step: float(make_ndarray(e.tensor_proto)) for e in board.Tensors(tag)}

    logs = tmp_path / "keras"
    subprocess.run([sys.executable, "-c", KERAS_FIT, str(logs)], check=True, capture_output=True, timeout=300)
    dataset = Dataset(tmp_path / "ds")
    collect_runs(dataset, runs_from_paths([logs], None, None, None), settle_s=0)
    steps = dataset.read("steps")
    # TensorBoard's own accumulator, tag by tag, is the reference.
    rates, losses = values(logs / "train", "batch_steps_per_second"), values(logs / "train", "batch_loss")
    train = steps.filter(pl.col("role").is_null(), pl.col("step").is_not_null()).sort("step")
    assert train["step"].to_list() == [2, 4, 6, 8, 10, 12, 14, 16] == sorted(rates)
    assert train["global_steps_per_s"].to_list() == pytest.approx([rates[s] for s in sorted(rates)])
    assert train["loss"].to_list() == pytest.approx([losses[s] for s in sorted(losses)])
    epochs = steps.filter(pl.col("role").is_null(), pl.col("step").is_null()).sort("position")
    assert epochs["loss"].to_list() == pytest.approx(list(values(logs / "train", "epoch_loss").values()))
    expected = values(logs / "validation", "evaluation_loss_vs_iterations")
    stored = steps.filter(pl.col("role") == "evaluator", pl.col("step").is_not_null()).sort("step")
    assert dict(stored.select("step", "eval_loss").iter_rows()) == pytest.approx(expected)
    assert sorted(expected) == [8, 16]  # the optimizer's iterations at each epoch's end


@pytest.mark.cluster
def test_one_basic_run_gives_one_steady_rate_from_its_step_log_and_its_event_files(tmp_path: Path) -> None:
    # Both sources time the same thing: the event file's batch_steps_per_second is the step log's own
    # global_steps_per_s (float32), and each scalar's wall_time is taken a few ms after the record's timestamp.
    # A 400-step BASIC run logged every 100 steps has 2 or 3 steady intervals; read from its event files right
    # after it ended, the last step's events were once held back (written within the collect's 300 s settle
    # window), one interval fewer: 464.4 against 389.4. A file's first read now takes them all. Logged every 40
    # steps here (10 records).
    out, tb = tmp_path / "runs" / "b400", tmp_path / "tb" / "b400"
    # No checkpoints or evaluations: the step log's events would make pauses the event files cannot show.
    run = train_local(
        tier="BASIC", steps=400, log_every_steps=40, out=out, timeout=300, tensorboard=tb,
        checkpoint_every=0, eval_every=0,
    )  # fmt: skip
    assert run.status == "finished", run.reason
    from_log = Dataset(tmp_path / "log")
    collect_runs(from_log, runs_from_paths([out], None, None, None))
    [spec] = runs_from_paths([tb], None, run.tier, None)
    at_once = Dataset(tmp_path / "at-once")
    [counts] = collect_runs(at_once, [spec]).sources  # the default settle window, the files written just now
    assert at_once.read("steps").height == from_log.read("steps").height == 10  # a first read takes every event
    assert not any("may still be being written" in n for n in counts.notes)
    from_events = Dataset(tmp_path / "events")
    collect_runs(from_events, [spec], settle_s=0)  # a job that has ended: every event now
    logged = from_log.read("steps").sort("step")
    read = from_events.read("steps").sort("step")
    assert read["step"].to_list() == logged["step"].to_list() == list(range(40, 401, 40))
    # the same rates (the event file keeps float32) and the same clock to a few ms
    assert read["global_steps_per_s"].to_list() == pytest.approx(logged["global_steps_per_s"].to_list(), rel=1e-6)
    lag = (read["timestamp"] - logged["timestamp"]).dt.total_microseconds().to_numpy() / 1e6
    assert ((lag >= 0) & (lag < 0.05)).all(), lag
    # one reading of the run: the same verdict (a run still speeding up is said to be by both) and
    # rates within 2 %
    by_log, by_events = (analyze(d).summary.row(0, named=True) for d in (from_log, from_events))
    assert by_events["steady_status"] == by_log["steady_status"]
    for figure in ("steady_global_steps_per_s", "mean_global_steps_per_s"):
        if by_log[figure] is not None:
            assert by_events[figure] == pytest.approx(by_log[figure], rel=0.02), figure
