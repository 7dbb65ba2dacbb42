"""Loose files are runs: ``collect files logs/*.log`` of four tiers' logs stores four runs (it stored one run,
``basic``, of 5 tasks with 2 restarts), files named after one run's tasks stay that run's, ``--run-id`` still
makes one run of them all, and the collect says how it grouped them."""

from __future__ import annotations

import shutil
from pathlib import Path

from typer.testing import CliRunner

from tierscope.analysis import analyze
from tierscope.cli import app
from tierscope.collector.runs import loose_runs, runs_from_paths
from tierscope.dataset.store import Dataset

BUNDLED = Path(__file__).resolve().parents[2] / "src/tierscope/data/cloudml-tiers-2016"
TIERS = ("basic", "local", "premium_1", "standard_1")
runner = CliRunner()


def _logs(root: Path) -> list[Path]:
    root.mkdir()
    return [Path(shutil.copy(BUNDLED / f"{name}.log", root / f"{name}.log")) for name in TIERS]


def test_four_tiers_logs_are_four_runs_and_their_figures_are_the_demos(tmp_path: Path) -> None:
    logs = _logs(tmp_path / "logs")
    result = runner.invoke(app, ["collect", "files", *map(str, logs), "-d", str(tmp_path / "ds")])
    assert result.exit_code == 0, result.output
    said = " ".join(result.stderr.split())
    assert (
        "note: 4 files read as 4 runs by their names: a run each for basic.log, local.log, premium_1.log, "
        "standard_1.log; --run-id ID reads them as one run"
    ) in said
    rows = {r["run_id"]: r for r in analyze(Dataset(tmp_path / "ds")).summary.iter_rows(named=True)}
    assert set(rows) == set(TIERS)
    # each as the demo's manifest reads it: STANDARD_1's master and 4 workers, 22.3894 global steps/s; the laptop
    # 18.838 (README, tests/analysis/test_summary_2016.py); none of them "failed" but premium_1, none with a
    # restart (it read 2 restarts, 7 segments)
    assert round(rows["standard_1"]["steady_global_steps_per_s"], 4) == 22.3894
    assert round(rows["local"]["steady_global_steps_per_s"], 3) == 18.838
    assert [r for r, row in rows.items() if row["status"] == "failed"] == ["premium_1"]
    assert all(not row["restarts"] for row in rows.values())


def test_one_runs_task_files_stay_together_and_run_id_makes_one_run(tmp_path: Path) -> None:
    tasks = tmp_path / "job42"
    tasks.mkdir()
    names = ["std-master0.log", "std-worker0.log", "std-worker1.log", "worker-0.log", "worker-1.log", "notes.txt"]
    files = [tasks / n for n in names]
    for f in files:
        f.write_text("x\n")
    runs = {r.run_id: [Path(f).name for f in r.files] for r in runs_from_paths(files, None, None, None)}
    assert runs == {
        "std": ["std-master0.log", "std-worker0.log", "std-worker1.log"],  # named after their common prefix
        "job42": ["worker-0.log", "worker-1.log"],  # no prefix: named after the folder holding them
        "notes": ["notes.txt"],
    }
    [one] = runs_from_paths(files, "job42", None, None)
    assert one.run_id == "job42" and len(one.files) == len(files)


def test_json_logs_are_runs_of_their_own_as_any_log_is() -> None:
    # two trainers' JSON logs (LLaMA-Factory's trainer_log.jsonl, mmseg's .json) name no run: one group made the
    # second's records the first's run; a Cloud Logging sink's hourly objects each get a run of their own name, and
    # their entries go to the job they name all the same (tests/collector/test_logentries_export*.py)
    names = ["trainer_log.jsonl", "20230101_120000.log.json", "08:00:00_08:59:59_S0.json"]
    runs = loose_runs(list(names), names, None, None, None)
    assert [(r.run_id, len(r.files)) for r in runs] == [
        ("trainer_log", 1),
        ("20230101_120000", 1),
        ("08:00:00_08:59:59_S0", 1),
    ]
    # one name in two folders that name no task (a/basic.log, b/basic.log) is a run of each, named after its
    # folder (tests/collector/test_config_folders.py); in two folders of one name, nothing tells them apart
    same = loose_runs(["a/basic.log", "b/basic.log"], ["basic.log", "basic.log"], None, None, None)
    assert [(r.run_id, r.files) for r in same] == [("a", ["a/basic.log"]), ("b", ["b/basic.log"])]
    alike = loose_runs(["x/run/basic.log", "y/run/basic.log"], ["basic.log", "basic.log"], None, None, None)
    assert [(r.run_id, r.files) for r in alike] == [("basic", ["x/run/basic.log", "y/run/basic.log"])]
