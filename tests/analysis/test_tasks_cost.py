"""Per-task rates, stragglers, the async check and the cost model, against hand calculations."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import polars as pl
import pytest

from tests.analysis.test_summary_2016 import STANDARD_1
from tierscope.analysis.cost import tier_costs
from tierscope.analysis.tasks import async_check, task_throughput
from tierscope.analysis.throughput import run_throughput
from tierscope.analysis.topology import load_tiers, run_topology, training_tasks
from tierscope.collector.errors import ManifestError
from tierscope.collector.manifest import load_manifest
from tierscope.dataset.schema import STEP_SCHEMA, conform
from tierscope.dataset.store import Dataset

CUSTOM_TOPOLOGY = json.dumps(
    {
        "master": {"machine_type": "complex_model_s", "count": 1},
        "worker": {"machine_type": "complex_model_s", "count": 4},
        "ps": {"machine_type": "standard", "count": 3},
    }
)


def test_standard_1_tasks_and_the_async_check(dataset_2016: Dataset) -> None:
    steps = dataset_2016.scan("steps")
    tasks = task_throughput(steps).filter(pl.col("run_id") == "standard_1")
    local = dict(zip(tasks["role"] + "/" + tasks["task_index"].cast(str), tasks["local_steps_per_s"], strict=True))
    # worker/3's steady intervals by its elapsed time: 200 -> 400 in 11.707 - 3.093 = 8.614 s at 4.992 local
    # steps/s (43.001 local steps), 400 -> 500 in 4.431 s at 4.740 (21.003), 500 -> 900 in 17.357 s at 4.955
    # (86.004); step times within 1.05x the median one, so none is a stall: 150.008 / 30.402 s = 4.9341 (the
    # median of the three rates said 4.955). worker/0's steady 4.335; master, worker/1, worker/2 logged only
    # their warm-up line: 4.498, 4.010, 4.800
    assert local == pytest.approx(
        {"master/0": 4.498, "worker/0": 4.335, "worker/1": 4.010, "worker/2": 4.800, "worker/3": 150.008 / 30.402},
        rel=1e-4,
    )
    assert tasks.filter(pl.col("role") == "master")["local_includes_warmup"][0] is True
    # worker/1 against its peers' median (4.498 + 4.800) / 2 = 4.649: 4.010 / 4.649 = 0.86 >= 0.8
    w1 = tasks.filter((pl.col("role") == "worker") & (pl.col("task_index") == 1)).row(0, named=True)
    assert w1["peer_local_steps_per_s"] == pytest.approx(4.649)
    assert not tasks["straggler"].any()
    check = async_check(task_throughput(steps), run_throughput(steps))
    row = check.filter(pl.col("run_id") == "standard_1").row(0, named=True)
    # 4.498 + 4.335 + 4.010 + 4.800 + 4.9341 = 22.577 against the steady 22.389: 1.008 -> asynchronous
    assert row["sum_local_steps_per_s"] == pytest.approx(22.577, abs=1e-3)
    assert row["local_to_global"] == pytest.approx(22.577 / STANDARD_1, abs=1e-4)
    assert row["mode"] == "async"
    assert check.filter(pl.col("run_id") == "basic")["mode"][0] == "single"


def _one_task(evaluated_at: int | None = None) -> pl.LazyFrame:
    """One task logging its global and local rate (equal: one replica) at elapsed 10, 15, 45, 75, 95 s, steps
    100, 200, 500, 800, 900; with an evaluation (eval_loss) reported at step ``evaluated_at``."""
    rows = [{"run_id": "one", "role": "master", "task_index": 0, "step": step, "elapsed_s": at,
             "global_steps_per_s": rate, "local_steps_per_s": rate, "source": "m", "source_offset": k,
             "eval_loss": 1.5 if step == evaluated_at else None}
            for k, (step, at, rate) in enumerate(((100, 10.0, 10.0), (200, 15.0, 20.0), (500, 45.0, 10.0),
                                                  (800, 75.0, 10.0), (900, 95.0, 5.0)))]  # fmt: skip
    return conform(pl.DataFrame(rows), STEP_SCHEMA).lazy()


def test_a_tasks_rate_is_the_steady_state_estimator_of_the_runs_rate() -> None:
    # Past the warm-up record: 100 steps in 5 s (20/s), 300 in 30 s (10/s) twice, 100 in 20 s (5/s). Step times
    # 0.05, 0.1, 0.1, 0.2 s: the median 0.1 s (10/s); the last is 2x it, a stall (wholly out from 1.5x).
    # Steady = (100 + 300 + 300) / (5 + 30 + 30) = 700 / 65 = 10.769 global steps/s, the run's and the task's
    # alike, global and local; the median of the four rates said 10.0.
    steps = _one_task()
    (task,) = task_throughput(steps).iter_rows(named=True)
    (run,) = run_throughput(steps).iter_rows(named=True)
    assert run["steady_global_steps_per_s"] == pytest.approx(700 / 65, rel=1e-12)
    assert task["steady_global_steps_per_s"] == pytest.approx(700 / 65, rel=1e-12)
    assert task["local_steps_per_s"] == pytest.approx(700 / 65, rel=1e-12)
    assert task["local_includes_warmup"] is False
    # one task: its local rate is the global rate, so the async check reads exactly 1 (was 10.0 / 10.769 = 0.93)
    check = async_check(task_throughput(steps), run_throughput(steps)).row(0, named=True)
    assert check["local_to_global"] == pytest.approx(1.0, rel=1e-12)


def test_a_task_leaves_out_an_interval_holding_an_evaluation_as_the_run_does() -> None:
    # An evaluation reported at step 500: the interval 200 -> 500 holds it and is left out, as the run's steady
    # rate leaves it out; of 20/s, 10/s and 5/s the median step time is 0.1 s and the 5/s one a stall:
    # (100 + 300) / (5 + 30) = 11.429 global steps/s.
    steps = _one_task(evaluated_at=500)
    (run,) = run_throughput(steps).iter_rows(named=True)
    (task,) = task_throughput(steps).iter_rows(named=True)
    assert run["steady_global_steps_per_s"] == pytest.approx(400 / 35, rel=1e-12)
    assert task["local_steps_per_s"] == pytest.approx(400 / 35, rel=1e-12)
    assert task["steady_global_steps_per_s"] == pytest.approx(400 / 35, rel=1e-12)


def test_a_slow_task_is_a_straggler_and_sync_replicas_are_recognised() -> None:
    # three workers of a synchronous job: each logs the global rate 10 and its own local rate
    rows = []
    for index, local in ((0, 10.0), (1, 10.0), (2, 7.0)):
        for k in range(1, 5):
            rows.append({"run_id": "s", "role": "worker", "task_index": index, "step": 100 * k,
                         "elapsed_s": 10.0 * k, "global_steps_per_s": 10.0, "local_steps_per_s": local,
                         "source": f"w{index}", "source_offset": k})  # fmt: skip
    steps = conform(pl.DataFrame(rows), STEP_SCHEMA).lazy()
    tasks = task_throughput(steps)
    # worker/2: 7 < 0.8 x median(10, 10) = 8 -> straggler; the others: 10 vs median(10, 7) = 8.5 -> not
    assert tasks["straggler"].to_list() == [False, False, True]
    row = async_check(tasks, run_throughput(steps)).row(0, named=True)
    # 10 + 10 + 7 = 27 = 2.7 x the global 10: within 20 % of 3 tasks -> synchronous
    assert row["local_to_global"] == pytest.approx(2.7)
    assert row["mode"] == "sync"


def test_tier_composition_matches_the_tier_price() -> None:
    tiers = load_tiers()
    tasks = dict(training_tasks(tiers, key="tier").iter_rows())
    assert tasks["STANDARD_1"] == 5 and tasks["PREMIUM_1"] == 20 and tasks["BASIC"] == 1
    assert tiers["source"].str.contains("cloud.google.com").all()
    smaller = json.dumps({"master": {"machine_type": "complex_model_s", "count": 1},
                          "worker": {"machine_type": "complex_model_s", "count": 2},
                          "ps": {"machine_type": "standard", "count": 3}})  # fmt: skip
    runs = pl.DataFrame(
        {"run_id": ["custom", "standard", "premium", "laptop", "smaller"],
         "tier": ["CUSTOM", "STANDARD_1", "PREMIUM_1", "local", "CUSTOM"],
         "date": [date(2018, 6, 1)] * 5, "topology": [CUSTOM_TOPOLOGY, None, None, None, smaller]}
    )  # fmt: skip
    costs = {r["run_id"]: r for r in tier_costs(runs, date(2018, 6, 1)).to_dicts()}
    # CUSTOM on exactly STANDARD_1's machines is priced as STANDARD_1 (the page's price of those machines):
    # 5.9234, where the machine-type sum 5 x 0.845 + 3 x 0.5661 = 5.9233 differs by the page's rounding
    assert costs["custom"]["ml_units_per_hour"] == pytest.approx(5.9234)
    assert costs["custom"]["units_basis"] == "tier STANDARD_1 (the same machines)"
    assert costs["custom"]["usd_per_hour"] == pytest.approx(5.9234 * 0.49)
    # any other CUSTOM topology: the sum over its replicas, 3 x 0.845 + 3 x 0.5661 = 2.535 + 1.6983 = 4.2333
    assert costs["smaller"]["ml_units_per_hour"] == pytest.approx(4.2333)
    assert costs["smaller"]["units_basis"] == "machine types"
    assert costs["standard"]["ml_units_per_hour"] == pytest.approx(5.9234)  # the tier's own row
    assert costs["premium"]["ml_units_per_hour"] == pytest.approx(49.323)  # ~ 20 x 1.69 + 11 x 1.4111 = 49.3221
    assert costs["laptop"]["ml_units_per_hour"] is None
    europe = {r["run_id"]: r for r in tier_costs(runs, date(2018, 6, 1), region="europe").to_dicts()}
    assert europe["standard"]["usd_per_hour"] == pytest.approx(5.9234 * 0.54)
    # Nov 2019: the newest row on or before the date wins, complex_model_s's too (0.5788, the archived page)
    later = {
        r["run_id"]: r for r in tier_costs(runs.with_columns(date=pl.lit(date(2020, 1, 1))), date.today()).to_dicts()
    }
    assert later["premium"]["ml_units_per_hour"] == pytest.approx(33.7829)
    assert later["custom"]["ml_units_per_hour"] == pytest.approx(4.0571)
    assert later["smaller"]["ml_units_per_hour"] == pytest.approx(3 * 0.5788 + 3 * 0.3878)
    topo = run_topology(runs)
    assert topo.filter(pl.col("run_id") == "custom")["origin"].unique().to_list() == ["manifest"]
    assert topo.filter(pl.col("run_id") == "premium").sort("role")["count"].to_list() == [1, 11, 19]


def test_manifest_topology_is_stored_and_checked(tmp_path: Path) -> None:
    log = tmp_path / "c.log"
    log.write_text(
        "Train [master/0], step 100:loss:2.3, accuracy:0.1 (5.0 sec) 20.0 global_steps/s, 20.0 local_steps/s\n"
    )
    manifest = tmp_path / "runs.toml"
    manifest.write_text(
        '[[run]]\nid = "c"\ntier = "CUSTOM"\nfiles = ["c.log"]\ndate = 2018-06-01\nworkers = 4\nps = 3\n'
        'machine_types = {master = "complex_model_s", worker = "complex_model_s", ps = "standard"}\n'
    )
    (spec,) = load_manifest(manifest)
    assert json.loads(spec.topology) == json.loads(CUSTOM_TOPOLOGY)
    manifest.write_text('[[run]]\nid = "c"\nfiles = ["c.log"]\nworkers = 2\nmachine_types = {master = "standard"}\n')
    with pytest.raises(ManifestError, match="'workers' = 2 but 'machine_types' gives no worker machine type"):
        load_manifest(manifest)
    manifest.write_text('[[run]]\nid = "c"\nfiles = ["c.log"]\nmachine_types = {boss = "standard"}\n')
    with pytest.raises(ManifestError, match="unknown roles"):
        load_manifest(manifest)
