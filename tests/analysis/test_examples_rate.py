"""Steps are not work: examples/s from the batch size and the update mode, and speedups
on examples/s where the compared runs' batch or mode differ."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.analysis.test_summary_2016 import BASIC, STANDARD_1
from tierscope.analysis import analyze
from tierscope.cli import app
from tierscope.collector.collect import collect_runs, runs_from_paths
from tierscope.contract import RUN_FILE
from tierscope.dataset.store import Dataset
from tierscope.trainer.steplog import Identity, StepLog


def _run_dir(root: Path, run_id: str, strategy: str, tasks: list[tuple[str, int]], rate: float) -> Path:
    """A run directory as `tierscope train local` writes it: run.json (topology, strategy, batch 100)
    and one log per training task, each logging the shared global step at ``rate`` global steps/s."""
    out = root / run_id
    out.mkdir()
    topology = {"chief": 1, "worker": len(tasks) - 1}
    doc = {"run_id": run_id, "tier": "local-CUSTOM", "topology": topology, "strategy": strategy,
           "config": {"batch_size": 100}}  # fmt: skip
    (out / RUN_FILE).write_text(json.dumps(doc))
    for role, index in tasks:
        with open(out / f"{role}-{index}.jsonl", "w", encoding="utf-8") as stream:
            log = StepLog(Identity(run_id=run_id, tier="local-CUSTOM", role=role, task_index=index), "json", stream)
            for i in range(1, 8):
                step = int(rate * 10 * i)
                log.step(step=step, local_step=step, loss=1.0, accuracy=0.5, elapsed_s=10.0 * i,
                         global_steps_per_s=rate, local_steps_per_s=rate, batch_size=100)  # fmt: skip
            log.close()
    return out


def test_a_mirrored_run_and_a_single_one_of_the_same_batch_compare_on_examples(tmp_path: Path) -> None:
    one = _run_dir(tmp_path, "one", "single", [("chief", 0)], 10.0)
    mirror = _run_dir(tmp_path, "mirror", "mirrored", [("chief", 0), ("worker", 0)], 4.0)
    dataset = Dataset(tmp_path / "ds")
    collect_runs(dataset, runs_from_paths([one, mirror], None, None, None))
    rows = {r["run_id"]: r for r in analyze(dataset).summary.iter_rows(named=True)}
    # single: 10 steps/s x 100 examples = 1,000 examples/s; mirrored (sync): every global step is one
    # batch on each of its 2 replicas: 4 steps/s x 100 x 2 = 800 examples/s
    assert (rows["one"]["update_mode"], rows["mirror"]["update_mode"]) == ("single", "sync")
    assert rows["one"]["batch_size"] == 100 and rows["mirror"]["tasks"] == 2
    assert rows["one"]["examples_per_s"] == pytest.approx(1000)
    assert rows["mirror"]["examples_per_s"] == pytest.approx(800)
    # the modes differ: speedup on examples/s, 800 / 1000 = 0.8 (on global steps it would read 4 / 10 = 0.4)
    assert rows["mirror"]["speedup_basis"] == "examples/s"
    assert rows["mirror"]["speedup_vs_baseline"] == pytest.approx(0.8)
    assert rows["mirror"]["scaling_efficiency_tasks"] == pytest.approx(0.8 / 2)
    assert rows["one"]["speedup_basis"] == "steps/s" and rows["one"]["speedup_vs_baseline"] == pytest.approx(1.0)
    table = CliRunner().invoke(app, ["summary", "-d", str(dataset.root)])
    assert "speedup against one, on examples/s where batch size or mode differ" in " ".join(table.output.split())


def test_the_2016_runs_keep_their_steps_basis(dataset_2016: Dataset) -> None:
    rows = {r["run_id"]: r for r in analyze(dataset_2016).summary.iter_rows(named=True)}
    # the cloudml lines log no examples/s and the manifest no batch size: no examples/s, speedups unchanged
    assert rows["standard_1"]["examples_per_s"] is None and rows["standard_1"]["speedup_basis"] == "steps/s"
    # 22.389 / 4.640 (tests/analysis/test_summary_2016.py)
    assert rows["standard_1"]["speedup_vs_baseline"] == pytest.approx(STANDARD_1 / BASIC)
    assert rows["standard_1"]["update_mode"] == "async"  # local steps/s sum ~ the global rate
