"""A local directory is read at any depth, as a gs:// prefix is: one run per folder holding a run.json,
and the directory's own for the logs outside such folders."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.ingest_helpers import write_steps
from tierscope.collector.runs import runs_from_paths


def test_logs_in_subfolders_are_read(tmp_path: Path) -> None:
    top = tmp_path / "job"
    (top / "worker-0" / "logs").mkdir(parents=True)
    write_steps(top / "master.log", range(1, 3))
    write_steps(top / "worker-0" / "logs" / "train.log", range(1, 3))
    (top / "worker-0" / "notes.md").write_text("not a log")
    (run,) = runs_from_paths([top], None, None, None)
    assert run.run_id == "job"
    assert run.files == [top / "master.log", top / "worker-0" / "logs" / "train.log"]


def test_a_subfolder_with_a_run_json_is_a_run_of_its_own(tmp_path: Path) -> None:
    top = tmp_path / "sweep"
    (top / "a").mkdir(parents=True)
    (top / "b" / "deep").mkdir(parents=True)
    (top / "a" / "run.json").write_text(json.dumps({"run_id": "run-a", "tier": "BASIC"}))
    write_steps(top / "a" / "chief-0.log", range(1, 3))
    write_steps(top / "b" / "deep" / "x.log", range(1, 3))
    runs = runs_from_paths([top], None, None, None)
    assert [(r.run_id, r.tier, r.files) for r in runs] == [
        ("sweep", None, [top / "b" / "deep" / "x.log"]),
        ("run-a", "BASIC", [top / "a" / "chief-0.log"]),
    ]


def test_a_run_directorys_logs_are_its_own_files(tmp_path: Path) -> None:
    # tierscope.contract: a task's stderr goes to stderr/ of the run directory, kept out of the step logs
    run_dir = tmp_path / "r1"
    (run_dir / "stderr").mkdir(parents=True)
    (run_dir / "run.json").write_text(json.dumps({"run_id": "r1"}))
    write_steps(run_dir / "chief-0.log", range(1, 3))
    (run_dir / "stderr" / "chief-0.txt").write_text("TensorFlow chatter\n")
    (run,) = runs_from_paths([run_dir], None, None, None)
    assert run.files == [run_dir / "chief-0.log"]
