"""Cluster configs, tiers and job specs: pure functions, no TensorFlow."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tierscope.cli import app
from tierscope.trainer.roles import (
    SINGLE,
    ClusterConfigError,
    parse_cluster_spec,
    parse_tf_config,
    strategy_for,
    task_from_env,
    tf_config,
)
from tierscope.trainer.spec import ai_platform_job, vertex_job
from tierscope.trainer.tiers import UnknownTierError, get_tier
from tierscope.trainer.train import TrainConfig

LEGACY = {
    "cluster": {"master": ["m:2222"], "worker": ["w0:2222", "w1:2222"], "ps": ["p0:2222"]},
    "task": {"type": "master", "index": 0, "trial": ""},
    "environment": "cloud",
}


def test_legacy_master_keeps_its_name_but_the_cluster_says_chief() -> None:
    task = parse_tf_config(json.dumps(LEGACY))
    assert (task.role, task.tf_role, task.index, task.is_chief) == ("master", "chief", 0, True)
    assert task.cluster == {"chief": ["m:2222"], "worker": ["w0:2222", "w1:2222"], "ps": ["p0:2222"]}
    assert strategy_for(task.cluster) == "ps"


def test_worker_index_and_sparse_cluster_form() -> None:
    doc = {"cluster": {"chief": ["c:1"], "worker": {"1": "w1:1", "0": "w0:1"}}, "task": {"type": "worker", "index": 1}}
    task = parse_tf_config(json.dumps(doc))
    # The {"index": "host"} form is put in index order: w0 then w1.
    assert task.cluster["worker"] == ["w0:1", "w1:1"]
    assert (task.role, task.index, task.is_chief) == ("worker", 1, False)
    assert strategy_for(task.cluster) == "mirrored"


def test_vertex_cluster_spec_pools_become_roles() -> None:
    spec = {
        "cluster": {
            "workerpool0": ["c:2222"],
            "workerpool1": ["w0:2222", "w1:2222", "w2:2222"],
            "workerpool2": ["p:2222"],
        },
        "environment": "cloud",
        "task": {"type": "workerpool1", "index": 2, "trial": ""},
    }
    task = parse_cluster_spec(json.dumps(spec))
    assert (task.role, task.index) == ("worker", 2)
    assert {role: len(hosts) for role, hosts in task.cluster.items()} == {"chief": 1, "worker": 3, "ps": 1}


def test_tf_config_wins_over_cluster_spec_and_empty_means_single() -> None:
    spec = json.dumps({"cluster": {"workerpool0": ["c:1"]}, "task": {"type": "workerpool0", "index": 0}})
    both = {"TF_CONFIG": json.dumps(LEGACY | {"task": {"type": "ps", "index": 0}}), "CLUSTER_SPEC": spec}
    assert task_from_env(both).role == "ps"
    assert task_from_env({"CLUSTER_SPEC": spec}).role == "chief"
    assert task_from_env({}) == SINGLE
    assert task_from_env({"TF_CONFIG": " "}) == SINGLE
    assert strategy_for(SINGLE.cluster) == "single"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{not json", "TF_CONFIG is not valid JSON"),
        ("[1, 2]", "must be a JSON object"),
        ('{"cluster": {"chief": ["c:1"]}}', "missing 'task'"),
        ('{"cluster": {"boss": ["c:1"]}, "task": {"type": "boss"}}', "unknown role 'boss'"),
        (
            '{"cluster": {"worker": ["w:1"]}, "task": {"type": "worker", "index": 3}}',
            "task worker/3 is not in the cluster",
        ),
        ('{"cluster": {"worker": ["w:1"]}, "task": {"type": "worker", "index": -1}}', "not a whole number"),
    ],
)
def test_bad_tf_config_says_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(ClusterConfigError, match=message):
        parse_tf_config(text)


def test_tf_config_round_trip() -> None:
    cluster = {"chief": ["localhost:1"], "worker": ["localhost:2"]}
    task = parse_tf_config(tf_config(cluster, "worker", 0))
    assert (task.role, task.index, task.cluster) == ("worker", 0, cluster)


def test_tiers_from_the_data_file() -> None:
    # 1 + 4 + 3 = 8 tasks for STANDARD_1, 1 + 19 + 11 = 31 for PREMIUM_1.
    assert [len(get_tier(t).topology.tasks) for t in ("basic", "STANDARD_1", "premium_1")] == [1, 8, 31]
    standard = get_tier("STANDARD_1").topology
    assert standard.tasks[:2] == [("chief", 0), ("worker", 0)] and standard.tasks[-1] == ("ps", 2)
    assert (get_tier("BASIC").topology.strategy, standard.strategy) == ("single", "ps")
    with pytest.raises(UnknownTierError, match="known tiers: BASIC, STANDARD_1, PREMIUM_1"):
        get_tier("GOLD")


def test_vertex_spec_has_one_pool_per_role() -> None:
    job = vertex_job("STANDARD_1", TrainConfig(run_id="s1", steps=300))
    pools = job["jobSpec"]["workerPoolSpecs"]
    assert [p["replicaCount"] for p in pools] == ["1", "4", "3"]
    args = pools[0]["containerSpec"]["args"]
    assert args[args.index("--tier") + 1] == "STANDARD_1" and args[args.index("--steps") + 1] == "300"
    assert len(vertex_job("BASIC", TrainConfig())["jobSpec"]["workerPoolSpecs"]) == 1


def test_ai_platform_spec_names_the_tier() -> None:
    job = ai_platform_job("premium_1", TrainConfig(run_id="p-1"))
    assert job["jobId"] == "p_1"
    assert job["trainingInput"]["scaleTier"] == "PREMIUM_1"
    assert job["trainingInput"]["masterConfig"]["imageUri"] == job["trainingInput"]["workerConfig"]["imageUri"]


def test_spec_command_prints_json() -> None:
    result = CliRunner().invoke(app, ["spec", "PREMIUM_1", "--service", "vertex", "--machine-type", "n1-highcpu-8"])
    assert result.exit_code == 0, result.output
    pools = json.loads(result.output)["jobSpec"]["workerPoolSpecs"]
    assert [p["replicaCount"] for p in pools] == ["1", "19", "11"]
    assert {p["machineSpec"]["machineType"] for p in pools} == {"n1-highcpu-8"}
    bad = CliRunner().invoke(app, ["spec", "GOLD"])
    assert bad.exit_code == 2 and "unknown scale tier 'GOLD'" in bad.output


def test_importing_the_cli_does_not_import_tensorflow(tmp_path: Path) -> None:
    code = "import sys, tierscope.cli; print(sorted(m for m in ('tensorflow', 'keras') if m in sys.modules))"
    # From outside the repository: "-c" puts the working directory first on sys.path, and the
    # tierscope/ folder of the working tree would hide the installed package's rooms.
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=tmp_path)
    assert out.stdout.strip() == "[]"
