"""Topology-true tasks: training tasks, ps and evaluators from run.json, the manifest or
the tier table, not from which tasks happened to log; a disagreement gets a note."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.analysis.test_summary_2016 import BASIC, STANDARD_1
from tierscope.analysis import analyze
from tierscope.analysis.forecast import scaling
from tierscope.collector.collect import collect_runs, runs_from_paths
from tierscope.collector.manifest import load_manifest
from tierscope.contract import RUN_FILE
from tierscope.dataset.store import Dataset
from tierscope.trainer.steplog import Identity, StepLog


def _ps_run_dir(root: Path, run_id: str = "ps2", tier: str = "local-CUSTOM", workers: int = 2, ps: int = 1) -> Path:
    """What `tierscope train local --workers 2 --ps 1` leaves: run.json with its topology and strategy,
    and the records of the coordinator (chief 0), the only task that logs steps under the ps strategy."""
    out = root / run_id
    out.mkdir()
    doc = {"run_id": run_id, "tier": tier, "host": "box (local, 2 CPUs)",
           "topology": {"chief": 1, "worker": workers, "ps": ps}, "strategy": "ps", "status": "finished"}  # fmt: skip
    (out / RUN_FILE).write_text(json.dumps(doc))
    with open(out / "chief-0.jsonl", "w", encoding="utf-8") as stream:
        log = StepLog(Identity(run_id=run_id, tier=tier, role="chief", task_index=0), "json", stream)
        for i in range(1, 7):
            log.step(step=50 * i, local_step=50 * i, loss=1.0, accuracy=0.5, elapsed_s=10.0 * i,
                     global_steps_per_s=5.0, local_steps_per_s=5.0, batch_size=100)  # fmt: skip
        log.close()
    return out


def test_a_ps_run_counts_its_two_workers_and_one_ps_not_the_coordinator_that_logged(tmp_path: Path) -> None:
    dataset = Dataset(tmp_path / "ds")
    collect_runs(dataset, runs_from_paths([_ps_run_dir(tmp_path)], None, None, None))
    row = analyze(dataset).summary.row(0, named=True)
    # ps strategy: the chief only coordinates (TF2 ClusterCoordinator), so training tasks = the 2 workers
    assert (row["tasks"], row["ps_tasks"], row["evaluator_tasks"]) == (2, 1, 0)
    assert row["tasks_origin"] == "declared" and row["logging_tasks"] == 1
    # by design only the coordinator logs: said as a fact, not as a disagreement to worry about
    assert row["topology_note"] == (
        "a parameter-server run: its chief alone logs steps, the global steps of its 2 training tasks and 1 ps"
    )
    # one task logged, so the logs alone would read "single"; run.json's ps strategy is asynchronous updates
    assert (row["training_mode"], row["update_mode"]) == ("async", "async")


def test_a_local_standard_1_under_the_ps_strategy_says_why_it_is_not_the_cloud_tiers_topology(
    tmp_path: Path,
) -> None:
    # `tierscope train local --tier STANDARD_1`: a chief, 4 workers and 3 ps under the ps strategy; its chief
    # only coordinates, so 4 training tasks, where the cloud tier table's STANDARD_1 is 1 master + 4 workers = 5
    dataset = Dataset(tmp_path / "ds")
    run = _ps_run_dir(tmp_path, "std1", "local-STANDARD_1", workers=4, ps=3)
    collect_runs(dataset, runs_from_paths([run], None, None, None))
    row = analyze(dataset).summary.row(0, named=True)
    assert (row["tasks"], row["ps_tasks"]) == (4, 3)
    assert row["topology_note"] == (
        "a parameter-server run: its chief alone logs steps, the global steps of its 4 training tasks and 3 ps; "
        "run locally as 4 training tasks and 3 ps, where the cloud STANDARD_1 has 5 and 3 ps: under the ps "
        "strategy the chief coordinates and does not train, where the cloud tier's master trains"
    )


def test_standard_1_from_a_manifest_is_five_training_tasks_and_three_ps(dataset_2016: Dataset) -> None:
    rows = {r["run_id"]: r for r in analyze(dataset_2016).summary.iter_rows(named=True)}
    # tier table: STANDARD_1 = 1 master + 4 workers (complex_model_s) + 3 ps (standard)
    standard = rows["standard_1"]
    assert (standard["tasks"], standard["ps_tasks"], standard["tasks_origin"]) == (5, 3, "tier table")
    assert standard["logging_tasks"] == 5 and standard["topology_note"] is None  # master + workers 0-3 logged
    # PREMIUM_1 failed before any step: its 1 master + 19 workers, 11 ps come from the tier table
    assert (rows["premium_1"]["tasks"], rows["premium_1"]["ps_tasks"], rows["premium_1"]["logging_tasks"]) == (
        20,
        11,
        0,
    )
    assert (rows["local"]["tasks"], rows["local"]["ps_tasks"], rows["local"]["tasks_origin"]) == (1, None, "logs")


def test_manifest_workers_and_ps_declare_the_topology_and_the_fit_uses_it(
    tmp_path: Path, bundled_manifest: Path
) -> None:
    # The 2016 STANDARD_1 log (master + workers 0-3 log) declared as a CUSTOM run of 1 master + 7 workers
    # and 2 ps: its point on the scaling curve moves to 8 training tasks, with a note.
    log = bundled_manifest.parent / "standard_1.log"
    manifest = tmp_path / "runs.toml"
    manifest.write_text(
        f'[[run]]\nid = "big"\ntier = "CUSTOM"\nfiles = ["{log}"]\nworkers = 7\nps = 2\n'
        f'[[run]]\nid = "basic"\ntier = "BASIC"\nfiles = ["{bundled_manifest.parent / "basic.log"}"]\n'
    )
    dataset = Dataset(tmp_path / "ds")
    collect_runs(dataset, load_manifest(manifest))
    analysis = analyze(dataset)
    big = analysis.summary.filter(analysis.summary["run_id"] == "big").row(0, named=True)
    assert (big["tasks"], big["ps_tasks"], big["logging_tasks"], big["tasks_origin"]) == (8, 2, 5, "declared")
    assert "has 8 training tasks and 2 ps, but 5 training tasks logged steps" in big["topology_note"]
    # scaling efficiency on the declared tasks: 22.389 / 4.640 / 8 = 0.6032
    assert big["scaling_efficiency_tasks"] == pytest.approx(STANDARD_1 / BASIC / 8)
    assert scaling(analysis).points["tasks"].to_list() == [1, 8]
