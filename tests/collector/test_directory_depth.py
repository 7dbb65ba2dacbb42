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


def test_a_folder_of_unrelated_logs_is_a_run_of_each(tmp_path: Path) -> None:
    # A folder of logs named as no task (a T4 and an A100 run of two trainers) is what ``logs/*.log`` is: a run
    # per log, named after it; one run of them all made their 40x apart rates two "tasks" of one job.
    top = tmp_path / "logs"
    top.mkdir()
    for name in ("hf_t4.log", "loop_a100.log", "loop_a100.log.1.gz"):
        write_steps(top / name, range(1, 3))
    runs = runs_from_paths([top], None, "BASIC", None)
    # loop_a100.log.1.gz is the rotated older part of loop_a100.log (its name up to the first dot): one run
    assert [(r.run_id, r.tier, r.files) for r in runs] == [
        ("hf_t4", "BASIC", [top / "hf_t4.log"]),
        ("loop_a100", "BASIC", [top / "loop_a100.log", top / "loop_a100.log.1.gz"]),
    ]
    assert [r.split_from for r in runs] == [str(top), str(top)]  # for the collect to say how it split them
    # --run-id still makes one run of them all, as it does of loose files
    (one,) = runs_from_paths([top], "job42", None, None)
    assert one.run_id == "job42" and len(one.files) == 3


def test_a_folder_of_one_jobs_tasks_or_one_log_stays_one_run(tmp_path: Path) -> None:
    tasks = tmp_path / "wlogs"
    (tasks / "chief").mkdir(parents=True)
    write_steps(tasks / "worker-0.log", range(1, 3))
    write_steps(tasks / "worker-1.log", range(1, 3))
    write_steps(tasks / "chief" / "train.log", range(1, 3))  # named by its folder
    (run,) = runs_from_paths([tasks], None, None, None)
    assert (run.run_id, run.split_from) == ("wlogs", None)
    single = tmp_path / "job7"
    single.mkdir()
    write_steps(single / "train.log", range(1, 3))
    (run,) = runs_from_paths([single], None, None, None)
    assert (run.run_id, run.files) == ("job7", [single / "train.log"])


def test_a_folder_mixing_a_jobs_tasks_and_another_log(tmp_path: Path) -> None:
    # the tasks' logs are the folder's run (as with the glob, named after the folder), the other log its own
    top = tmp_path / "mixed"
    top.mkdir()
    write_steps(top / "worker-0.log", range(1, 3))
    write_steps(top / "worker-1.log", range(1, 3))
    write_steps(top / "baseline.log", range(1, 3))
    runs = runs_from_paths([top], None, None, None)
    assert [(r.run_id, r.files) for r in runs] == [
        ("baseline", [top / "baseline.log"]),
        ("mixed", [top / "worker-0.log", top / "worker-1.log"]),
    ]


def test_a_dataset_kept_in_the_folder_is_no_log_of_it(tmp_path: Path) -> None:
    # A dataset collected beside its logs (logs/ds): its state (files.json) and tables are no logs; the folder's one
    # log is its one run, as without the dataset (its JSON state was read as a log and warned of).
    from tests.support.ingest_helpers import collect
    from tierscope.dataset.store import Dataset

    (tmp_path / "logs").mkdir()
    write_steps(tmp_path / "logs" / "train.log", range(1, 4))
    collect(Dataset(tmp_path / "logs" / "ds"), tmp_path / "logs" / "train.log")
    assert (tmp_path / "logs" / "ds" / "state" / "files.json").is_file()
    [run] = runs_from_paths([tmp_path / "logs"], None, None, None)
    assert [Path(f).name for f in run.files] == ["train.log"]


def test_a_folder_mixing_a_prefixed_tasks_log_and_another_names_the_tasks_run_as_the_glob_does(
    tmp_path: Path,
) -> None:
    # torchtitan's rank-0 log beside an unrelated log: 'collect files more/*' names its run a06_torchtitan (the
    # task name's prefix); the folder gives it the same name, not the folder's
    top = tmp_path / "more"
    top.mkdir()
    write_steps(top / "a06_torchtitan_rank0.log", range(1, 3))
    write_steps(top / "a05_megatron.log", range(1, 3))
    runs = runs_from_paths([top], None, None, None)
    assert sorted(r.run_id for r in runs) == ["a05_megatron", "a06_torchtitan"]
    globbed = runs_from_paths(sorted(top.iterdir()), None, None, None)
    assert sorted(r.run_id for r in globbed) == ["a05_megatron", "a06_torchtitan"]
