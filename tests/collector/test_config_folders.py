"""A configuration a folder: experiments kept as ``runs/v100x1/train.log`` and ``runs/v100x8/train.log`` are two
runs, each named after its folder, whether the logs are given (a glob) or their folder is; folders that name a
task (``worker-1/train.log``) still hold one run's tasks.

The lines are quoted from mmaction2 logs pasted in GitHub issues (read 2026-12-07), each in the issue's code
fence: one V100, https://github.com/open-mmlab/mmaction2/issues/1087, and eight V100s,
https://github.com/MCG-NJU/TDN/issues/26."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from tierscope.cli import app
from tierscope.collector.runs import runs_from_paths
from tierscope.dataset.store import Dataset

ONE_V100 = """```
2021-08-04 21:31:12,672 - mmaction - INFO - Epoch [1][10000/62577]\tlr: 1.000e-02, eta: 46 days, 19:39:55, time: 0.444, data_time: 0.099, memory: 5068, top1_acc: 0.0187, top5_acc: 0.0688, loss_cls: 5.7112, loss: 5.7112, grad_norm: 4.5613
2021-08-04 21:31:23,937 - mmaction - INFO - Epoch [1][10020/62577]\tlr: 1.000e-02, eta: 46 days, 19:22:12, time: 0.563, data_time: 0.218, memory: 5068, top1_acc: 0.0187, top5_acc: 0.0875, loss_cls: 5.6884, loss: 5.6884, grad_norm: 4.8015
2021-08-04 21:31:33,720 - mmaction - INFO - Epoch [1][10040/62577]\tlr: 1.000e-02, eta: 46 days, 18:49:11, time: 0.489, data_time: 0.145, memory: 5068, top1_acc: 0.0312, top5_acc: 0.0813, loss_cls: 5.7741, loss: 5.7741, grad_norm: 5.2769
```
"""  # noqa: E501

EIGHT_V100 = """```bash
2021-07-14 17:16:28,473 - mmaction - INFO - Epoch [1][800/1817]\tlr: 2.000e-02, eta: 5 days, 3:17:46, time: 2.549, data_time: 0.002, memory: 13595, top1_acc: 0.2750, top5_acc: 0.5324, loss_cls: 3.2876, loss: 3.2876, grad_norm: 4.1227
2021-07-14 17:17:11,789 - mmaction - INFO - Epoch [1][820/1817]\tlr: 2.000e-02, eta: 5 days, 2:57:43, time: 2.192, data_time: 0.032, memory: 13595, top1_acc: 0.2785, top5_acc: 0.5379, loss_cls: 3.3221, loss: 3.3221, grad_norm: 4.1436
```
"""  # noqa: E501

runner = CliRunner()


def _runs(root: Path) -> list[Path]:
    logs = []
    for folder, text in (("v100x1", ONE_V100), ("v100x8", EIGHT_V100)):
        (root / "runs" / folder).mkdir(parents=True)
        log = root / "runs" / folder / "train.log"
        log.write_text(text, encoding="utf-8")
        logs.append(log)
    return logs


def _stored(dataset: Path) -> dict[str, int]:
    steps = Dataset(dataset).read("steps")
    return dict(steps.group_by("run_id").len().sort("run_id").iter_rows())


def test_one_log_name_in_configuration_folders_is_a_run_of_each(tmp_path: Path) -> None:
    logs = _runs(tmp_path)
    said = runner.invoke(app, ["collect", "files", *map(str, logs), "-d", str(tmp_path / "ds")])
    assert said.exit_code == 0, said.output
    # 3 step lines and 2 (the fences aside): each its own run, not two tasks of a run "train" stepping
    # 5.3x apart (the collect's warning, before)
    assert _stored(tmp_path / "ds") == {"v100x1": 3, "v100x8": 2}
    assert "run 'v100x1' is named after the folder holding its log" in " ".join(said.output.split())
    assert "step at rates" not in said.output


def test_their_folder_collected_is_a_run_of_each_too(tmp_path: Path) -> None:
    _runs(tmp_path)
    said = runner.invoke(app, ["collect", "files", str(tmp_path / "runs"), "-d", str(tmp_path / "ds")])
    assert said.exit_code == 0, said.output
    assert _stored(tmp_path / "ds") == {"v100x1": 3, "v100x8": 2}
    assert "a run each for v100x1/train.log, v100x8/train.log" in " ".join(said.output.split())


def test_folders_naming_tasks_hold_one_runs_tasks(tmp_path: Path) -> None:
    # the near miss: node-0/train.log and node-1/train.log are two tasks (workers 0 and 1) of one run
    for node in (0, 1):
        (tmp_path / f"node-{node}").mkdir()
        (tmp_path / f"node-{node}" / "train.log").write_text(ONE_V100, encoding="utf-8")
    [run] = runs_from_paths([tmp_path / "node-0" / "train.log", tmp_path / "node-1" / "train.log"], None, None, None)
    assert run.run_id == "train" and len(run.files) == 2
