"""A log named after a task (``worker-1.log``, ``worker-1/train.log``) gives the records whose lines name no task
that task: two workers' plain logs (``step 100 loss 0.5 10.0 it/s``) of one run are two tasks, neither file's
records taken for duplicates of the other's, and the run of ``wlogs/worker-*.log`` is named after ``wlogs``."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

from tierscope.analysis import analyze
from tierscope.cli import app
from tierscope.collector.runs import loose_runs, task_of_file
from tierscope.dataset.store import Dataset

runner = CliRunner()
#: 20 records each: steps 100, 200, ..., 2000.
STEPS = range(100, 2001, 100)


def _plain_log(path: Path, rate: float = 10.0, task: str = "") -> Path:
    """A PyTorch-style log naming no task (``task``: a ``[worker-3]`` prefix instead)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{task}step {s} loss 0.5 {rate} it/s\n" for s in STEPS))
    return path


def _collect(*args: str) -> str:
    result = runner.invoke(app, ["collect", "files", *args])
    assert result.exit_code == 0, result.output
    return " ".join(result.output.split())


@pytest.mark.parametrize(
    ("name", "task"),
    [
        ("worker-0.log", ("worker", 0)),
        ("worker_1.log", ("worker", 1)),
        ("worker1.log", ("worker", 1)),
        ("chief.log", ("chief", 0)),
        ("master-0.log", ("master", 0)),
        ("ps-0.log", ("ps", 0)),
        ("evaluator.log", ("evaluator", 0)),
        ("replica-2.log", ("worker", 2)),
        ("workerpool1-2.log", ("worker", 2)),  # Vertex AI pool 1: the workers
        ("workerpool0-0.log", ("chief", 0)),
        ("rank3.log", ("worker", 3)),
        ("rank-3.log", ("worker", 3)),
        ("task-2.log", ("worker", 2)),
        ("node-1.log", ("worker", 1)),
        ("std-master0.log", ("master", 0)),
        ("mnist-chief-0.log", ("chief", 0)),
        ("worker-0/train.log", ("worker", 0)),  # the folder holding the log
        ("gs://bucket/job/worker-4/train.log", ("worker", 4)),
        ("train.log", None),
        ("worker.log", None),  # which worker is not said
        ("steps1.log", None),  # "ps" inside a word is no role
        ("home/node-1/run/train.log", None),  # only the nearest folder counts
    ],
)
def test_the_task_a_name_states(name: str, task: tuple[str, int] | None) -> None:
    assert task_of_file(name if name.startswith("gs://") else Path(name)) == task


def test_two_workers_plain_logs_are_two_tasks_and_a_recollect_adds_nothing(tmp_path: Path) -> None:
    logs = [_plain_log(tmp_path / "wlogs" / f"worker-{i}.log") for i in range(2)]
    ds = str(tmp_path / "ds")
    said = _collect(*map(str, logs), "-d", ds, "--run-id", "job42")
    # 2 files x 20 records, none a duplicate on a new dataset
    assert "stored 40 step records and 0 events, 0 duplicates already stored" in said
    steps = Dataset(tmp_path / "ds").read("steps")
    tasks = steps.group_by("role", "task_index").len().sort("task_index").rows()
    assert tasks == [("worker", 0, 20), ("worker", 1, 20)]
    [row] = analyze(Dataset(tmp_path / "ds")).summary.iter_rows(named=True)
    assert row["logging_tasks"] == 2 and row["restarts"] == 0
    # synchronous replicas: each logs the global step at 10.0 steps/s; the run's rate is 10.0, not 10.0 + 10.0
    assert row["steady_global_steps_per_s"] == pytest.approx(10.0)
    again = _collect(*map(str, logs), "-d", ds, "--run-id", "job42", "--reread")
    assert "stored 0 step records and 0 events, 40 duplicates already stored" in again


def test_workers_in_folders_of_their_own_are_two_tasks(tmp_path: Path) -> None:
    # one name in two folders is one run (train); the folders name the tasks
    logs = [_plain_log(tmp_path / f"worker-{i}" / "train.log") for i in range(2)]
    said = _collect(*map(str, logs), "-d", str(tmp_path / "ds"))
    assert "stored 40 step records" in said and "0 duplicates" in said
    steps = Dataset(tmp_path / "ds").read("steps")
    assert steps.get_column("run_id").unique().to_list() == ["train"]
    assert sorted(steps.get_column("task_index").unique().to_list()) == [0, 1]


def test_a_task_the_lines_state_wins_over_the_name(tmp_path: Path) -> None:
    log = _plain_log(tmp_path / "worker-1.log", task="[worker-3] ")
    said = _collect(str(log), "-d", str(tmp_path / "ds"))
    steps = Dataset(tmp_path / "ds").read("steps")
    assert steps.group_by("role", "task_index").len().rows() == [("worker", 3, 20)]
    assert "20 step records state another task than the file name (worker 1): the lines' task is kept" in said


def test_task_files_without_a_prefix_are_named_after_their_folder_and_the_collect_says_so(tmp_path: Path) -> None:
    logs = [_plain_log(tmp_path / "wlogs" / f"worker-{i}.log") for i in range(2)]
    said = _collect(*map(str, logs), "-d", str(tmp_path / "ds"))
    assert "run 'wlogs' is named after the folder holding them (2 files named after one run's tasks)" in said
    assert Dataset(tmp_path / "ds").read("steps").get_column("run_id").unique().to_list() == ["wlogs"]
    # objects in one bucket's root have no folder: their names' common start
    names = ["worker-0.log", "worker-1.log"]
    [run] = loose_runs([f"gs://b/{n}" for n in names], names, None, None, None)
    assert run.run_id == "worker"
    # one such file alone keeps its own name, as before
    [alone] = loose_runs([tmp_path / "wlogs" / "worker-0.log"], ["worker-0.log"], None, None, None)
    assert alone.run_id == "worker-0"


def test_logs_named_after_no_task_are_tasks_of_their_own_and_a_rotated_copy_is_not(tmp_path: Path) -> None:
    a, b = _plain_log(tmp_path / "ab" / "a.log"), _plain_log(tmp_path / "ab" / "b.log")
    ds = str(tmp_path / "ds")
    said = _collect(str(a), str(b), "-d", ds, "--run-id", "job42")
    assert "stored 40 step records and 0 events, 0 duplicates already stored" in said
    assert "run 'job42' holds such records of another log: they are task 1 of their own" in said
    # b.log alone, read again: its task is found again, each record a duplicate
    assert "stored 0 step records and 0 events, 20 duplicates" in _collect(
        str(b), "-d", ds, "--run-id", "job42", "--reread"
    )
    # a.log's rotated copy (logrotate's a.log.1) holds a.log's records: one log's, no third task
    (tmp_path / "ab" / "a.log.1").write_bytes(a.read_bytes())
    rotated = _collect(str(tmp_path / "ab" / "a.log.1"), "-d", ds, "--run-id", "job42")
    assert "stored 0 step records and 0 events, 20 duplicates" in rotated
    steps = Dataset(tmp_path / "ds").read("steps")
    by_source = steps.group_by("source", "role", "task_index").len().sort("source").rows()
    assert by_source == [(str(a), None, None, 20), (str(b), None, 1, 20)]
    [row] = analyze(Dataset(tmp_path / "ds")).summary.iter_rows(named=True)
    assert row["logging_tasks"] == 2 and row["steady_global_steps_per_s"] == pytest.approx(10.0)


def test_a_log_stored_before_its_name_gave_a_task_keeps_none(tmp_path: Path) -> None:
    # a dataset written when worker-0.log's name gave no task: its 20 records stored with none
    plain, log = _plain_log(tmp_path / "plain" / "w.log"), _plain_log(tmp_path / "wlogs" / "worker-0.log")
    _collect(str(plain), "-d", str(tmp_path / "first"), "--run-id", "job42")
    before = Dataset(tmp_path / "first").read("steps").with_columns(source=pl.lit(str(log)))
    Dataset(tmp_path / "ds").append("steps", before)
    said = _collect(str(log), "-d", str(tmp_path / "ds"), "--run-id", "job42")
    assert "stored 0 step records and 0 events, 20 duplicates already stored" in said
    assert "stored before without the task its name states (worker 0): they are kept so" in said
    assert Dataset(tmp_path / "ds").read("steps").get_column("role").null_count() == 20
