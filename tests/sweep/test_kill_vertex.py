"""A sweep on the local Vertex AI killed (SIGKILL) 20 times at random moments, then let finish: every
configuration submitted once (the creates the server answered), every finished job's logs stored once (the
records one collect of its Cloud Logging entries gives, none twice).

The jobs print ten step lines in the 2016 experiment's words and end: the test is about submitting and
collecting, not training, so it needs no TensorFlow.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.fake_logging_server import FakeLoggingServer
from tests.support.fake_vertex_server import FakeVertexServer

pytest.importorskip("google.cloud.aiplatform_v1", reason="the Vertex AI client is the `vertex` extra")

PROJECT = "test-project"
KILLS = 12
#: The image the plan names; the local server runs it as this script: ten step lines, 0.3 s apart, so each
#: job runs about three seconds and the kills land while jobs are queued, running and being collected.
IMAGE = "local/step-lines:1"
STEP_LINES = """
import time
for i in range(1, 11):
    print(f"Train [master/0], step {i * 100}: loss: 0.5, accuracy: 0.9 ({i * 2.0:.3f} sec) 50.000 global steps/s, "
          "50.000 local steps/s", flush=True)
    time.sleep(0.3)
"""
NAMES = ["n1-4", "n1-8", "n1-16", "n1-32"]
PLAN = f"""\
id = "killed-vertex"
project = "{PROJECT}"
region = "us-central1"
staging_bucket = "gs://staging/sweeps"
dataset = "ds"
work_dir = "work"

[job]
image = "{IMAGE}"
args = []

[run]
minutes = 2
""" + "".join(f'\n[[configuration]]\nname = "{n}"\nmachine_type = "n1-standard-{n[3:]}"\n' for n in NAMES)
KEY = ["source", "source_offset", "role", "task_index", "step"]


def sweep(plan: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "tierscope", "sweep", str(plan)]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)


def test_a_killed_sweep_submits_each_configuration_once_and_stores_each_record_once(tmp_path: Path) -> None:
    from tierscope.collector.sources.cloud_logging import RetryPolicy
    from tierscope.dataset.store import Dataset
    from tierscope.sweep.ledger import LedgerStore
    from tierscope.sweep.plan import load_plan
    from tierscope.sweep.run import run_facts
    from tierscope.sweep.vertex import CloudLoggingJobLogs

    plan_path = tmp_path / "plan.toml"
    plan_path.write_text(PLAN, encoding="utf-8")
    plan = load_plan(plan_path)
    images = {IMAGE: [sys.executable, "-c", STEP_LINES]}
    with (
        FakeLoggingServer(project=PROJECT) as logs,
        FakeVertexServer(logs, PROJECT, workdir=tmp_path / "vertex", images=images) as vertex,
    ):
        env = {
            **os.environ,
            "TIERSCOPE_VERTEX_ENDPOINT": vertex.url,
            "TIERSCOPE_LOGGING_ENDPOINT": logs.url,
            "GOOGLE_CLOUD_PROJECT": PROJECT,
        }
        moments = random.Random(20261206)
        store = LedgerStore(tmp_path / "ds")
        finished_early = 0
        left: list[tuple[int, int]] = []  # after each kill: jobs created, configurations collected
        for _ in range(KILLS):
            # A moment in the sweep's work, whatever the machine's speed (starting Python takes seconds on a busy
            # one): after its n-th request to the servers, n from 1 to 3, and a random fraction of a second more;
            # once every configuration is collected (the sweep asks nothing more: its summary and report), at a
            # random time.
            made = len(vertex.requests) + len(logs.requests)
            after, jitter, at = moments.randint(1, 3), moments.uniform(0.0, 0.2), moments.uniform(0.5, 8.0)
            ledger = store.load("killed-vertex")
            asking = ledger is None or not all(e.collected for e in ledger.entries.values())
            process = sweep(plan_path, env)
            deadline = time.monotonic() + (60.0 if asking else at)
            while process.poll() is None and time.monotonic() < deadline:
                if asking and len(vertex.requests) + len(logs.requests) - made >= after:
                    time.sleep(jitter)
                    break
                time.sleep(0.01)
            finished_early += process.poll() is not None
            process.send_signal(signal.SIGKILL)
            process.communicate()
            ledger = store.load("killed-vertex")
            left.append((len(vertex.jobs), sum(e.collected for e in ledger.entries.values()) if ledger else 0))
        last = sweep(plan_path, env)
        _, err = last.communicate(timeout=120)
        assert last.returncode == 0, err.decode()
        # the kills hit sweeps at work: some with jobs submitted and not all collected
        assert finished_early < KILLS and any(jobs and collected < len(NAMES) for jobs, collected in left), left
        print("jobs created, configurations collected after each kill:", left)

        # 0 double submissions: one create answered per configuration, one job labelled with each
        creates = [r for r in vertex.requests if r.method == "POST" and not r.path.endswith(":cancel")]
        assert [r.status for r in creates] == [200] * len(NAMES)
        labelled = sorted(j.doc["labels"]["tierscope-config"] for j in vertex.jobs.values())
        assert labelled == sorted(NAMES)
        assert {j.doc["state"] for j in vertex.jobs.values()} == {"JOB_STATE_SUCCEEDED"}

        ledger = store.load("killed-vertex")
        assert ledger is not None
        assert {n: (e.state, e.collected) for n, e in ledger.entries.items()} == dict.fromkeys(
            NAMES, ("succeeded", True)
        )
        swept = Dataset(tmp_path / "ds")
        one_collect = CloudLoggingJobLogs(
            project=PROJECT,
            endpoint=logs.url,
            retry=RetryPolicy(initial_s=0.01, maximum_s=0.05, deadline_s=5.0),
            requests_per_minute=None,
        )
        for name in NAMES:
            entry = ledger.entries[name]
            assert entry.job_id is not None
            alone = Dataset(tmp_path / f"alone-{name}")
            one_collect.collect(alone, entry.job_id, run_facts(plan, plan.configuration(name), entry))
            run = f"killed-vertex-{name}"  # the sweep's id and the configuration: one run per sweep and configuration
            ours, theirs = swept.read("steps", run), alone.read("steps", run)
            # ten step lines, each in Cloud Logging twice (INFO and its ERROR copy): ten records, once each
            assert theirs.height == 10, theirs
            assert ours.select(KEY).is_duplicated().sum() == 0, name
            assert ours.select(KEY).sort(KEY).equals(theirs.select(KEY).sort(KEY)), name
            assert sorted(ours["step"].to_list()) == list(range(100, 1001, 100))
        # every record belongs to a configuration's run
        assert set(swept.read("steps")["run_id"].unique()) == {f"killed-vertex-{n}" for n in NAMES}
        # each run's facts: its configuration, and the sweep's estimate (analysis/data/prices.csv, us-central1
        # on-demand from 2026-07-30, times the 2-minute cap = 1/30 h): n1-standard-4 0.189999/30 = 0.0063333,
        # -8 0.379998/30 = 0.0126666, -16 0.759996/30 = 0.0253332, -32 1.519992/30 = 0.0506664
        facts = swept.read("runs").sort("collected_at").group_by("run_id").last()
        assert dict(zip(facts["run_id"], facts["config"], strict=True)) == {f"killed-vertex-{n}": n for n in NAMES}
        estimates = dict(zip(facts["config"], facts["estimate_usd"], strict=True))
        hand = {"n1-4": 0.0063333, "n1-8": 0.0126666, "n1-16": 0.0253332, "n1-32": 0.0506664}
        assert estimates == pytest.approx(hand, abs=1e-7)
