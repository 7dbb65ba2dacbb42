"""``tierscope sweep`` on the local Vertex AI: four configurations, one refused by quota, end in three measured
runs and one failed run whose reason is Vertex AI's quota message; each run's steady rate is what collect +
summary give for its replicas' output.

Needs the sweep (plan, ledger, loop, command) beside the Vertex AI launcher; without it the test is skipped.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.support.fake_logging_server import FakeLoggingServer
from tests.support.fake_vertex_server import QUOTA_MESSAGE, FakeVertexServer
from tests.support.network import only_localhost

pytest.importorskip("google.cloud.aiplatform_v1", reason="the Vertex AI client is the `vertex` extra")
pytest.importorskip("tierscope.sweep.run", reason="the sweep's loop is not in this build")
pytest.importorskip("tensorflow")

PROJECT = "test-project"
PLAN = """\
id = "vertex-e2e"
project = "test-project"
region = "us-central1"
staging_bucket = "gs://staging/sweeps"
dataset = "ds"
work_dir = "work"
budget = 50.0

[run]
steps = 100
minutes = 5

[[configuration]]
tier = "BASIC"

[[configuration]]
name = "basic-n1-8"
tier = "BASIC"
machine_type = "n1-standard-8"

[[configuration]]
name = "one-worker"
workers = 1
machine_type = "n1-standard-4"

[[configuration]]
name = "v100"
machine_type = "n1-standard-8"
accelerator = "NVIDIA_TESLA_V100:1"
"""
MEASURED = ["BASIC", "basic-n1-8", "one-worker"]


def summary(runner: CliRunner, dataset: Path) -> dict[str, dict]:
    from tierscope.cli import app

    result = runner.invoke(app, ["summary", "-d", str(dataset), "--json"])
    assert result.exit_code == 0, result.output
    # a sweep's run is <sweep id>-<configuration's label>, keyed here by its configuration; a run collected
    # alone, by its id (summary's rows of a configuration's runs pooled have the configuration's name as run id)
    rows = json.loads(result.stdout)
    swept = {r["config"]: r for r in rows if r["run_id"].startswith("vertex-e2e-")}
    return swept or {r["run_id"]: r for r in rows}


@pytest.mark.cluster
def test_four_configurations_one_refused_by_quota(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tierscope.cli import app
    from tierscope.sweep.ledger import LedgerStore

    only_localhost(monkeypatch)
    plan = tmp_path / "plan.toml"
    plan.write_text(PLAN, encoding="utf-8")
    runner = CliRunner()
    with (
        FakeLoggingServer(project=PROJECT) as logs,
        FakeVertexServer(logs, PROJECT, workdir=tmp_path / "vertex", queued_s=1.0, pending_s=1.0) as vertex,
    ):
        vertex.refuse_quota("NVIDIA_TESLA_V100")
        env = {
            "TIERSCOPE_VERTEX_ENDPOINT": vertex.url,
            "TIERSCOPE_LOGGING_ENDPOINT": logs.url,
            "GOOGLE_CLOUD_PROJECT": PROJECT,
            "COLUMNS": "200",
        }
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        result = runner.invoke(app, ["sweep", str(plan), "--allow-unpriced"])
        assert result.exit_code == 0, result.output
        quota = QUOTA_MESSAGE.format(metric="custom_model_training_nvidia_v100_gpus")
        # one create per configuration: three accepted, the fourth refused (a 429 not retried)
        creates = [r for r in vertex.requests if r.method == "POST" and not r.path.endswith(":cancel")]
        assert sorted(r.status for r in creates) == [200, 200, 200, 429]
        assert sorted(j.doc["labels"]["tierscope-config"] for j in vertex.jobs.values()) == [
            "basic", "basic-n1-8", "one-worker"
        ]  # fmt: skip
        assert {j.doc["state"] for j in vertex.jobs.values()} == {"JOB_STATE_SUCCEEDED"}
    ledger = LedgerStore(tmp_path / "ds").load("vertex-e2e")
    assert ledger is not None and ledger.launcher == "vertex"
    assert ledger.where == f"projects/{PROJECT}/locations/us-central1"
    states = {n: (e.state, e.reason) for n, e in ledger.entries.items()}
    assert states == {**dict.fromkeys(MEASURED, ("succeeded", None)), "v100": ("failed", quota)}
    swept = summary(runner, tmp_path / "ds")
    assert sorted(swept) == [*MEASURED, "v100"]
    assert swept["v100"]["status"] == "failed" and swept["v100"]["failure_reason"] == quota
    assert swept["one-worker"]["hardware"] == "chief 1 x n1-standard-4; worker 1 x n1-standard-4"
    # each run's steady rate is what collect + summary give for its replicas' stdout, read as files
    for name in MEASURED:
        job_id = ledger.entries[name].job_id
        assert job_id is not None and swept[name]["status"] == "ok"
        outputs = sorted((tmp_path / "vertex" / job_id.rsplit("/", 1)[-1]).glob("workerpool*.log"))
        alone = tmp_path / f"alone-{name}"
        args = ["collect", "files", *map(str, outputs), "-d", str(alone), "--run-id", name]
        collected = runner.invoke(app, args)
        assert collected.exit_code == 0, collected.output
        # the same figure and the same verdict: a 10-step run on a loaded machine may still be speeding up at its
        # end (steady_assumption still_rising), and then both say so
        mine, theirs = swept[name], summary(runner, alone)[name]
        assert mine["records"] == theirs["records"] > 0
        assert (mine["steady_global_steps_per_s"], mine["steady_status"]) == (
            theirs["steady_global_steps_per_s"],
            theirs["steady_status"],
        )
        # the run carries its configuration and the sweep's estimate, shown beside its measured cost
        assert swept[name]["config"] == name
        assert swept[name]["estimate_usd"] == pytest.approx(ledger.entries[name].estimate_usd)
        if swept[name]["steady_global_steps_per_s"] is not None:
            assert swept[name]["lifetime_s"] is not None and swept[name]["measured_usd"] == pytest.approx(
                swept[name]["usd_per_hour"] * swept[name]["lifetime_s"] / 3600
            )
        else:  # judged not steady yet: goodput has no rate to place its lifetime by, so no measured cost either
            assert swept[name]["measured_usd"] is None
