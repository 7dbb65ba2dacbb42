"""The Vertex AI launcher through the real google-cloud-aiplatform client (REST transport) against the local
JobService of tests/support/fake_vertex_server.py, whose replicas log to the local Cloud Logging server.

Most jobs here run a stand-in replica (a few lines of Python) so the API's behaviour is tested in seconds;
the last test runs the reference trainer on Vertex AI's shape of cluster and collects its logs.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from google.api_core.retry import Retry
from typer.testing import CliRunner

from tests.support.fake_logging_server import FakeLoggingServer
from tests.support.fake_vertex_server import CANCELLED_MESSAGE, QUOTA_MESSAGE, RATE_LIMIT_MESSAGE, FakeVertexServer
from tests.support.network import only_localhost
from tierscope.sweep.errors import SweepError
from tierscope.sweep.launchers import JobState, SubmitRefused
from tierscope.sweep.vertex import VertexLauncher, is_transient
from tierscope.trainer.roles import parse_cluster_spec, parse_tf_config

pytest.importorskip("google.cloud.aiplatform_v1", reason="the Vertex AI client is the `vertex` extra")


PROJECT = "test-project"
REGION = "us-central1"
#: Retries in milliseconds, so a test of them takes no seconds.
FAST = Retry(predicate=is_transient, initial=0.01, maximum=0.05, timeout=10.0)
#: A replica that says what it was told, as a JSON record, a text line and a line on stderr, then waits.
STAND_IN = """
import json, os, sys, time
spec = json.loads(os.environ["CLUSTER_SPEC"])
print(json.dumps({"severity": "WARNING", "message": "hello", "task": spec["task"], "tf": os.environ["TF_CONFIG"],
                  "spec": os.environ["CLUSTER_SPEC"], "logging.googleapis.com/labels": {"run_id": "r1"}}), flush=True)
print("plain text", flush=True)
print("to stderr", file=sys.stderr, flush=True)
time.sleep(float(sys.argv[1]))
sys.exit(int(sys.argv[2]))
"""


@dataclass
class Servers:
    vertex: FakeVertexServer
    logs: FakeLoggingServer
    launcher: VertexLauncher


@pytest.fixture(autouse=True)
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    only_localhost(monkeypatch)


@pytest.fixture
def servers(tmp_path: Path) -> Iterator[Servers]:
    with (
        FakeLoggingServer(project=PROJECT) as logs,
        FakeVertexServer(logs, PROJECT, REGION, workdir=tmp_path / "vertex", queued_s=0.4, pending_s=0.4) as vertex,
    ):
        launcher = VertexLauncher(PROJECT, REGION, "gs://staging/sweeps", api_endpoint=vertex.url, retry=FAST)
        yield Servers(vertex, logs, launcher)


def stand_in_job(seconds: float = 0.0, exit_code: int = 0, pools: tuple[int, ...] = (1,), **machine: Any) -> dict:
    """A CustomJob body as trainer/spec.py's vertex_job shapes it, each replica running :data:`STAND_IN`."""
    spec = {"machineType": "n1-standard-4", **machine}
    command = [sys.executable, "-c", STAND_IN, str(seconds), str(exit_code)]
    return {
        "displayName": "stand-in",
        "jobSpec": {
            "workerPoolSpecs": [
                {"machineSpec": spec, "replicaCount": str(n), "containerSpec": {"imageUri": "img", "command": command}}
                for n in pools
            ]
        },
    }


def states_until_final(launcher: VertexLauncher, job_id: str, timeout: float = 60.0) -> list[str]:
    """Every distinct state the launcher reports, polled every 20 ms, until a final one."""
    seen: list[str] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        state = launcher.state(job_id)
        if not seen or seen[-1] != state.state:
            seen.append(state.state)
        if state.final:
            return seen
        time.sleep(0.02)
    raise AssertionError(f"job {job_id} never ended: {seen}")


def _times(launcher: VertexLauncher, job_id: str) -> tuple[object, object]:
    state = launcher.state(job_id)
    return state.start_time, state.end_time


def test_submit_labels_find_and_the_states_a_job_goes_through(servers: Servers) -> None:
    launcher, vertex = servers.launcher, servers.vertex
    assert launcher.find("sweep-1", "STANDARD_1") is None
    job_id = launcher.submit("sweep-1", "STANDARD_1", stand_in_job(seconds=1.0, pools=(1, 2)))
    assert job_id.startswith(f"projects/{PROJECT}/locations/{REGION}/customJobs/")
    # found again by its labels; another configuration or sweep is not it
    assert launcher.find("sweep-1", "STANDARD_1") == job_id
    assert launcher.find("sweep-1", "BASIC") is None and launcher.find("sweep-2", "STANDARD_1") is None
    sent = vertex.requests[-3]  # the first find after the submit: the filter as the client sent it
    assert sent.params["filter"] == 'labels.tierscope-sweep="sweep-1" AND labels.tierscope-config="standard_1"'
    served = vertex.jobs[job_id.rsplit("/", 1)[-1]].doc
    assert served["labels"] == {"tierscope-sweep": "sweep-1", "tierscope-config": "standard_1"}
    # the staging bucket became the job's output directory, per sweep and configuration
    assert served["jobSpec"]["baseOutputDirectory"] == {"outputUriPrefix": "gs://staging/sweeps/sweep-1/standard_1"}
    assert states_until_final(launcher, job_id) == ["queued", "provisioning", "running", "succeeded"]
    final = launcher.state(job_id)
    assert final.reason is None and final.start_time is not None and final.end_time is not None
    assert final.start_time <= final.end_time
    # the replica's 1 s of sleep ends between them; it began before the start time, which is when the last of the
    # three replicas runs (on a loaded machine starting the other two took 0.6 s): the lower bound is 0
    assert 0.0 < (final.end_time - final.start_time).total_seconds() < 10.0


def test_replicas_get_vertex_cluster_variables_and_log_as_vertex_does(servers: Servers) -> None:
    launcher, vertex, logs = servers.launcher, servers.vertex, servers.logs
    # the replicas wait 1.5 s after writing: when the primary exits, the job ends and the others are shut down
    job_id = launcher.submit("s", "two-pools", stand_in_job(seconds=1.5, pools=(1, 2)))
    doc = vertex.wait(job_id)
    assert doc["state"] == "JOB_STATE_SUCCEEDED"
    number = job_id.rsplit("/", 1)[-1]
    entries = [s.entry for s in logs._stored]
    by_task: dict[str, list[dict]] = {}
    for entry in entries:
        assert entry["resource"]["type"] == "ml_job"
        assert entry["resource"]["labels"]["job_id"] == number
        assert entry["logName"] == f"{'projects/' + PROJECT}/logs/{entry['resource']['labels']['task_name']}"
        by_task.setdefault(entry["resource"]["labels"]["task_name"], []).append(entry)
    assert sorted(by_task) == ["workerpool0-0", "workerpool1-0", "workerpool1-1"]
    for task, got in by_task.items():
        # 2 stdout lines, each once at its severity and once copied at ERROR; 1 stderr line at ERROR
        assert len(got) == 5, (task, got)
        records = [e for e in got if "task" in e["jsonPayload"]]
        assert sorted(e["severity"] for e in records) == ["ERROR", "WARNING"]
        pool, index = task.removeprefix("workerpool").split("-")
        record = records[0]
        assert record["jsonPayload"]["task"] == {"type": f"workerpool{pool}", "index": int(index)}
        assert record["labels"] == {"run_id": "r1"}  # the special field went to the entry's labels
        assert "severity" not in record["jsonPayload"]
        tf_config = json.loads(record["jsonPayload"]["tf"])
        assert tf_config["task"] == {"type": ("chief", "worker")[int(pool)], "index": int(index)}
        assert sorted(tf_config["cluster"]) == ["chief", "worker"] and len(tf_config["cluster"]["worker"]) == 2
        # the trainer reads either variable as the same task of the same cluster
        from_tf_config = parse_tf_config(record["jsonPayload"]["tf"])
        from_cluster_spec = parse_cluster_spec(record["jsonPayload"]["spec"])
        assert from_tf_config == from_cluster_spec
        assert (from_tf_config.role, from_tf_config.index) == (("chief", "worker")[int(pool)], int(index))
        text = [e for e in got if e["jsonPayload"].get("message") == "plain text"]
        assert sorted(e["severity"] for e in text) == ["ERROR", "INFO"]
        assert text[0]["jsonPayload"]["attrs"] == {"tag": task}
        stderr = [e for e in got if e["jsonPayload"].get("message") == "to stderr"]
        assert [e["severity"] for e in stderr] == ["ERROR"]
    # every entry has its own insertId (a copy is a second entry, not the same one twice)
    assert len({e["insertId"] for e in entries}) == len(entries) == 15


def test_cancel_stops_the_replicas(servers: Servers) -> None:
    launcher, vertex = servers.launcher, servers.vertex
    job_id = launcher.submit("s", "long", stand_in_job(seconds=120.0))
    while launcher.state(job_id).state != "running":
        time.sleep(0.05)
    launcher.cancel(job_id)
    doc = vertex.wait(job_id, timeout=30)
    assert doc["state"] == "JOB_STATE_CANCELLED" and doc["error"]["code"] == 1
    assert launcher.state(job_id) == JobState("cancelled", CANCELLED_MESSAGE, *_times(launcher, job_id))
    (task,) = vertex.jobs[job_id.rsplit("/", 1)[-1]].tasks
    assert task.process.poll() is not None  # the replica's process is gone
    launcher.cancel(job_id)  # cancelling an ended job leaves it as it is
    assert launcher.state(job_id).state == "cancelled"


def test_cancel_while_queued(servers: Servers) -> None:
    servers.vertex.queued_s = 30.0
    job_id = servers.launcher.submit("s", "queued", stand_in_job())
    servers.launcher.cancel(job_id)
    assert servers.vertex.wait(job_id, timeout=10)["state"] == "JOB_STATE_CANCELLED"
    assert servers.vertex.jobs[job_id.rsplit("/", 1)[-1]].tasks == []  # it never started a replica


def test_a_failing_replica_fails_the_job_with_vertex_message(servers: Servers) -> None:
    job_id = servers.launcher.submit("s", "bad", stand_in_job(exit_code=3, pools=(1, 1)))
    servers.vertex.wait(job_id)
    state = servers.launcher.state(job_id)
    assert state.state == "failed"
    assert state.reason in (
        f"The replica {task} exited with a non-zero status of 3. Termination reason: Error."
        for task in ("workerpool0-0", "workerpool1-0")
    )


def test_quota_refusal_is_submit_refused_with_the_api_message(servers: Servers) -> None:
    launcher, vertex = servers.launcher, servers.vertex
    vertex.refuse_quota("NVIDIA_TESLA_V100")
    job = stand_in_job(acceleratorType="NVIDIA_TESLA_V100", acceleratorCount=4)
    with pytest.raises(SubmitRefused) as refused:
        launcher.submit("s", "v100x4", job)
    metric = "aiplatform.googleapis.com/custom_model_training_nvidia_v100_gpus"
    assert str(refused.value) == f"The following quota metrics exceed quota limits: {metric}"
    assert vertex.statuses == [429]  # a quota refusal is not retried
    assert vertex.jobs == {} and launcher.find("s", "v100x4") is None
    # the same refusal when the job would start: accepted, then failed with the message (code 8)
    vertex.refuse_quota("a2-highgpu-1g", at="start")
    job_id = launcher.submit("s", "a2", stand_in_job(machineType="a2-highgpu-1g"))
    vertex.wait(job_id)
    failed = launcher.state(job_id)
    assert failed.state == "failed"
    assert failed.reason == QUOTA_MESSAGE.format(metric="custom_model_training_a2_cpus")


def test_an_invalid_spec_is_refused_with_the_api_message(servers: Servers) -> None:
    with pytest.raises(SubmitRefused, match=r"Both `accelerator_type` and `accelerator_count` should be specified"):
        servers.launcher.submit("s", "half", stand_in_job(acceleratorType="NVIDIA_TESLA_T4"))
    assert servers.vertex.statuses == [400]
    with pytest.raises(SweepError, match="not a valid CustomJob body"):
        servers.launcher.submit("s", "typo", {**stand_in_job(), "jobSpek": {}})


def test_429_and_503_are_retried_and_the_job_created_once(servers: Servers) -> None:
    vertex = servers.vertex
    vertex.burst(429)
    vertex.burst(503)
    job_id = servers.launcher.submit("s", "retried", stand_in_job())
    # create: 429 (a rate limit, retried); before creating again, a find: 503 (retried), then the find finds
    # nothing and the create goes through
    assert vertex.statuses == [429, 503, 200, 200]
    assert [r.method for r in vertex.requests] == ["POST", "GET", "GET", "POST"]
    assert len(vertex.jobs) == 1 and job_id.endswith(next(iter(vertex.jobs)))
    # the rate limit's message is Google's per-minute one, which the launcher did not take for a quota refusal
    assert "Quota exceeded for quota metric" in RATE_LIMIT_MESSAGE


def test_a_fault_that_outlasts_the_retries_is_one_line(servers: Servers) -> None:
    servers.vertex.burst(503, count=1000)
    impatient = Retry(predicate=is_transient, initial=0.01, maximum=0.02, timeout=0.3)
    launcher = VertexLauncher(PROJECT, REGION, "gs://b", api_endpoint=servers.vertex.url, retry=impatient)
    with pytest.raises(SweepError) as gave_up:
        launcher.find("s", "c")
    assert str(gave_up.value) == (
        "Vertex AI kept refusing to list jobs for 0.3 s (The service is currently unavailable.); run the sweep again "
        "later, it resumes where it stopped"
    )
    assert set(servers.vertex.statuses) == {503} and len(servers.vertex.statuses) > 2


def test_a_lost_answer_to_create_does_not_create_twice(servers: Servers) -> None:
    vertex = servers.vertex
    vertex.cut_bodies(1)  # the create's answer is cut mid-body: the client cannot tell whether it worked
    job_id = servers.launcher.submit("s", "lost", stand_in_job())
    assert len(vertex.jobs) == 1  # the retry found the job by its labels instead of creating another
    assert [r.method for r in vertex.requests] == ["POST", "GET"]
    assert job_id == next(iter(vertex.jobs.values())).doc["name"]


def test_permission_denied_and_unknown_location_are_one_line_errors(tmp_path: Path) -> None:
    with FakeVertexServer(None, PROJECT, REGION, workdir=tmp_path, denied_projects=["locked"]) as vertex:
        locked = VertexLauncher("locked", REGION, "gs://b", api_endpoint=vertex.url, retry=FAST)
        with pytest.raises(SweepError, match=r"refused to list jobs in project locked .* roles/aiplatform.user"):
            locked.find("s", "c")
        elsewhere = VertexLauncher(PROJECT, "europe-west4", "gs://b", api_endpoint=vertex.url, retry=FAST)
        with pytest.raises(SweepError, match="no location projects/test-project/locations/europe-west4"):
            elsewhere.submit("s", "c", stand_in_job())
    with pytest.raises(SweepError, match="is not a Cloud Storage path; give gs://BUCKET"):
        VertexLauncher(PROJECT, REGION, "staging", api_endpoint="http://127.0.0.1:9")


def test_without_the_client_the_error_names_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "google.cloud.aiplatform_v1", None)  # import fails as if not installed
    with pytest.raises(SweepError) as missing:
        VertexLauncher(PROJECT, REGION, "gs://b", api_endpoint="http://127.0.0.1:9")
    assert str(missing.value) == (
        "running a sweep on Vertex AI needs the google-cloud-aiplatform client: pip install 'tierscope[vertex]'"
    )


#: A replica that logs ten steps in the 2016 experiment's words: global step 100, 200, ..., 1,000, each interval
#: of 100 steps in 2 s, so 50.0 global steps/s throughout.
STEP_LINES = """
for i in range(1, 11):
    print(f"Train [master/0], step {i * 100}: loss: 0.5, accuracy: 0.9 ({i * 2.0:.3f} sec) 50.000 global steps/s, "
          "50.000 local steps/s", flush=True)
"""


def test_job_logs_collect_a_finished_job_as_the_sweeps_run_once(servers: Servers, tmp_path: Path) -> None:
    from tierscope.collector.manifest import RunSpec
    from tierscope.collector.sources.cloud_logging import RetryPolicy
    from tierscope.dataset.store import Dataset
    from tierscope.sweep.vertex import CloudLoggingJobLogs

    job = stand_in_job()
    job["jobSpec"]["workerPoolSpecs"][0]["containerSpec"]["command"] = [sys.executable, "-c", STEP_LINES]
    job_id = servers.launcher.submit("s", "cfg-a", job)
    servers.vertex.wait(job_id)
    started = servers.launcher.state(job_id).start_time
    assert started is not None
    logs = CloudLoggingJobLogs(
        project=PROJECT,
        endpoint=servers.logs.url,
        retry=RetryPolicy(initial_s=0.01, maximum_s=0.05, deadline_s=5.0),
        requests_per_minute=None,
    )
    run = RunSpec(run_id="cfg-a", tier="BASIC", files=[], date=started.date(), note="sweep s", run_id_given=True)
    dataset = Dataset(tmp_path / "ds")
    logs.collect(dataset, job_id, run)
    steps = dataset.read("steps")
    # ten lines, each logged twice (INFO and its ERROR copy): ten records, all of the sweep's run
    assert steps.height == 10 and set(steps["run_id"]) == {"cfg-a"}
    assert sorted(steps["step"].to_list()) == list(range(100, 1001, 100))
    runs = dataset.read("runs")
    assert set(runs["run_id"]) == {"cfg-a"}  # no second run named after the job's number
    assert runs["note"].to_list() == ["sweep s"] and runs["tier"].to_list() == ["BASIC"]
    # a sweep killed before noting the collect collects again, through the launcher (the sweep's JobLogs too)
    launcher = VertexLauncher(PROJECT, REGION, None, api_endpoint=servers.vertex.url, retry=FAST, logs=logs)
    launcher.collect(dataset, job_id, run)
    assert dataset.read("steps").height == 10


def test_made_from_a_plan_or_a_ledger(monkeypatch: pytest.MonkeyPatch) -> None:
    from types import SimpleNamespace

    from tierscope.sweep.vertex import ENDPOINT_ENV, from_ledger, from_plan

    monkeypatch.setenv(ENDPOINT_ENV, "http://127.0.0.1:9")
    plan = SimpleNamespace(path="plan.toml", project="p", region="europe-west4", staging_bucket="gs://b/s")
    launcher = from_plan(plan)
    assert (launcher.where, launcher.staging_bucket, launcher.name) == (
        "projects/p/locations/europe-west4",
        "gs://b/s",
        "vertex",
    )
    with pytest.raises(
        SweepError, match=r"^plan.toml: a sweep on Vertex AI needs `staging_bucket` \(or run it with --local\)$"
    ):
        from_plan(SimpleNamespace(path="plan.toml", project="p", region="us-central1", staging_bucket=None))
    again = from_ledger(SimpleNamespace(sweep_id="s", where=launcher.where))
    assert again.where == launcher.where and again.staging_bucket is None
    with pytest.raises(SweepError, match="does not say where its jobs live"):
        from_ledger(SimpleNamespace(sweep_id="s", where=None))


# --- the reference trainer on the local Vertex AI ---------------------------------------------------------


def _summary_row(runner: CliRunner, dataset: Path, run_id: str) -> dict[str, Any]:
    from tierscope.cli import app

    done = runner.invoke(app, ["summary", "-d", str(dataset), "--json"])
    assert done.exit_code == 0, done.output
    (row,) = [r for r in json.loads(done.output) if r["run_id"] == run_id]
    return row


@pytest.mark.cluster
def test_the_reference_trainer_on_the_local_vertex_and_its_logs_collected(servers: Servers, tmp_path: Path) -> None:
    pytest.importorskip("tensorflow")
    from tierscope.cli import app
    from tierscope.collector.cloud import CloudOptions, collect_cloud
    from tierscope.collector.sources.cloud_logging import RetryPolicy
    from tierscope.dataset.store import Dataset
    from tierscope.trainer.spec import vertex_job
    from tierscope.trainer.train import TrainConfig

    config = TrainConfig(run_id="vx-basic", steps=200, batch_size=32, log_every_steps=10, eval_every=0)
    job = vertex_job("BASIC", config)
    job_id = servers.launcher.submit("sweep-t", "BASIC", job)
    doc = servers.vertex.wait(job_id, timeout=300)
    assert doc["state"] == "JOB_STATE_SUCCEEDED", doc.get("error")
    number = job_id.rsplit("/", 1)[-1]

    # the collector reads the job's entries from the local Cloud Logging server
    cloud = Dataset(tmp_path / "cloud")
    state = servers.launcher.state(job_id)
    assert state.start_time is not None
    options = CloudOptions(
        project=PROJECT,
        endpoint=servers.logs.url,
        since=state.start_time - timedelta(minutes=5),
        requests_per_minute=None,
        retry=RetryPolicy(initial_s=0.01, maximum_s=0.05, deadline_s=5.0),
    )
    result = collect_cloud(cloud, [number], options)
    steps = cloud.read("steps")
    # 200 steps logged every 10: 20 step records, each entry's ERROR copy stored once
    assert steps.height == 20, steps
    assert sorted(steps["step"].to_list()) == list(range(10, 201, 10))
    assert set(steps["run_id"]) == {"vx-basic"} and set(steps["role"]) == {"chief"}
    assert result is not None

    # the same lines as files: the replica's stdout, kept by the server, collected and summarised
    runner = CliRunner()
    stdout = servers.vertex.workdir / number / "workerpool0-0.log"
    files = tmp_path / "files"
    done = runner.invoke(app, ["collect", "files", str(stdout), "-d", str(files)])
    assert done.exit_code == 0, done.output
    from_cloud = _summary_row(runner, tmp_path / "cloud", "vx-basic")
    from_files = _summary_row(runner, files, "vx-basic")
    # the same figure and the same verdict either way the lines came (on a loaded machine a 20-step run of the
    # trainer may still be speeding up: then both say so, steady_assumption still_rising)
    cloud_rate, files_rate = from_cloud["steady_global_steps_per_s"], from_files["steady_global_steps_per_s"]
    assert from_cloud["steady_status"] == from_files["steady_status"] is None, (from_cloud, from_files)
    assert from_cloud["steady_assumption"] == from_files["steady_assumption"]
    assert cloud_rate is not None and cloud_rate == pytest.approx(files_rate)
    assert from_cloud["records"] == from_files["records"] == 20
    assert from_cloud["last_step"] == from_files["last_step"] == 200


def test_one_command_starts_both_servers_for_a_user(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import signal
    import subprocess

    from tests.support import ROOT
    from tierscope.sweep.vertex import ENDPOINT_ENV

    command = [sys.executable, "-m", "tests.support.fake_vertex_server", "--vertex-port", "0", "--logging-port", "0"]
    server = subprocess.Popen(
        [*command, "--workdir", str(tmp_path), "--refuse-quota", "NVIDIA_TESLA_V100"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        lines = [server.stdout.readline() for _ in range(7)]
        exports = next(line for line in lines if ENDPOINT_ENV in line).split()[1:]
        settings = dict(e.split("=", 1) for e in exports)
        # the launcher takes the endpoint from the printed variable, and the refusal asked for is there
        monkeypatch.setenv(ENDPOINT_ENV, settings[ENDPOINT_ENV])
        launcher = VertexLauncher(PROJECT, REGION, "gs://b", retry=FAST)
        with pytest.raises(SubmitRefused, match="custom_model_training_nvidia_v100_gpus"):
            launcher.submit("s", "v100", stand_in_job(acceleratorType="NVIDIA_TESLA_V100", acceleratorCount=1))
        assert launcher.find("s", "v100") is None
        assert settings["TIERSCOPE_LOGGING_ENDPOINT"].startswith("http://127.0.0.1:")
    finally:
        server.send_signal(signal.SIGINT)
        assert server.wait(timeout=30) == 0


def test_without_credentials_the_error_says_how_to_get_them(monkeypatch: pytest.MonkeyPatch) -> None:
    import google.auth
    from google.auth.exceptions import DefaultCredentialsError

    def no_adc(*args: object, **kwargs: object) -> None:
        raise DefaultCredentialsError("nothing here")

    monkeypatch.setattr(google.auth, "default", no_adc)
    monkeypatch.delenv("TIERSCOPE_VERTEX_ENDPOINT", raising=False)
    with pytest.raises(SweepError) as missing:
        VertexLauncher(PROJECT, REGION, "gs://b")
    assert str(missing.value) == (
        "no Google Cloud credentials for Vertex AI: run `gcloud auth application-default login` or set "
        "GOOGLE_APPLICATION_CREDENTIALS"
    )
