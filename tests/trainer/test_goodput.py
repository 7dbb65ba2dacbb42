"""A run of tierscope's own trainer has every goodput bucket, and a restarted one resumes
from its checkpoint (real TensorFlow runs through ``train local``: ``@pytest.mark.cluster``).

Both tests start from one finished 300-step run, trained once for the module: the first only reads it, the
second resumes a copy of it. Starting a task is most of a run's cost (about 8 CPU-s for a 200-step BASIC run
here); a step of this model takes about 3 ms."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tierscope.analysis.goodput import BUCKETS, PARTS
from tierscope.cli import app
from tierscope.dataset.store import Dataset

pytest.importorskip("tensorflow")

runner = CliRunner()


def _train(out: Path, steps: int, *extra: str) -> None:
    args = ["train", "local", "--tier", "BASIC", "--steps", str(steps), "--log-every-steps", "10"]
    done = runner.invoke(
        app, [*args, "--checkpoint-every", "100", "--eval-every", "100", "--quiet", "--out", str(out), *extra]
    )
    assert done.exit_code == 0, done.output


def _collect_and_summarise(run: Path, ds: Path) -> dict[str, object]:
    done = runner.invoke(app, ["collect", "files", str(run), "-d", str(ds)])
    assert done.exit_code == 0, done.output
    summary = runner.invoke(app, ["summary", "-d", str(ds), "--json"])
    assert summary.exit_code == 0, summary.output
    (row,) = json.loads(summary.output)
    return row


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A BASIC run of 300 steps, checkpointed and evaluated after steps 100, 200 and 300. Tests read it and
    never write to it: one that continues it continues a copy."""
    run = tmp_path_factory.mktemp("goodput") / "basic"
    _train(run, 300)
    return run


@pytest.mark.cluster
def test_a_trainer_run_has_every_goodput_bucket(finished_run: Path, tmp_path: Path) -> None:
    run = finished_run
    row = _collect_and_summarise(run, tmp_path / "ds")
    for name in (*BUCKETS, *PARTS):
        assert row[f"badput_{name}_s"] is not None, name
    assert row["goodput_unobserved"] is None and row["goodput_clock"] == "timestamp"
    assert 0 < row["goodput"] < 1
    # The buckets and the productive time add up to the lifetime (only a warm-up interval faster
    # than the steady rate, clipped at 0, could make them differ), and so do the parts.
    parts = row["productive_s"] + sum(row[f"badput_{b}_s"] for b in BUCKETS)
    assert parts == pytest.approx(row["lifetime_s"], rel=0.02)
    assert row["badput_init_s"] + row["badput_program_startup_s"] == pytest.approx(row["badput_startup_s"])
    # the stricter reading leaves the unexplained slow steps out of the productive time
    unexplained = row["deviation_warmup_s"] + row["deviation_stalls_s"]
    assert row["productive_at_steady_s"] == pytest.approx(row["productive_s"] - unexplained)
    # The lifetime is the launcher's started -> finished events: run.json's wall time, give or take
    # the moments between its clock readings and the events' writes.
    wall = json.loads((run / "run.json").read_text())["wall_s"]
    assert row["lifetime_s"] == pytest.approx(wall, abs=1.0)
    events = Dataset(tmp_path / "ds").read("events").filter(role="chief")
    by = {e: sorted(events.filter(event=e)["step"].to_list()) for e in set(events["event"])}
    # saves after global steps 100, 200 and 300 (the last one also the final save), evaluations alike
    assert by["checkpoint_begin"] == by["checkpoint_end"] == [100, 200, 300]
    assert by["eval_begin"] == by["eval_end"] == [100, 200, 300]
    assert by["initialized"] == [0] and by["first_step"] == [1]
    assert "restored" not in by  # nothing to restore from in a new run directory


@pytest.mark.cluster
def test_a_restarted_run_resumes_from_its_checkpoint(finished_run: Path, tmp_path: Path) -> None:
    run = tmp_path / "resumed"
    shutil.copytree(finished_run, run)  # the first attempt: checkpoints after steps 100, 200 and 300
    _train(run, 400, "--resume")
    doc = json.loads((run / "run.json").read_text())
    assert doc["attempts"] == 2 and doc["status"] == "finished"
    row = _collect_and_summarise(run, tmp_path / "ds")
    steps = Dataset(tmp_path / "ds").read("steps").filter(role="chief").sort("source_offset")
    # the first attempt logs 10..300, the second 310..400 (its own local steps 10..100)
    assert steps["step"].to_list() == [*range(10, 301, 10), *range(310, 401, 10)]
    assert steps["local_step"].to_list()[30:] == list(range(10, 101, 10))
    events = Dataset(tmp_path / "ds").read("events").filter(role="chief", event="restored")
    assert events["step"].to_list() == [300]
    # resumed at 300, the highest step reached before: (300 - 300) / R = 0 s recomputed; the gap
    # between the attempts (a second process start-up) is a restart
    assert row["restarts"] == 1
    assert row["badput_wasted_s"] == 0.0, {k: row.get(k) for k in ("steady_status", "goodput_reason", "segments")}
    assert row["badput_restarts_s"] > 0
