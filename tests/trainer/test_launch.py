"""The local launcher: process hygiene with stand-in tasks (fast), then real TensorFlow clusters
(``@pytest.mark.cluster``), collected into a dataset and read back."""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path

import polars as pl
import pytest

from tests.trainer.conftest import MirroredRun
from tierscope import Dataset, collect_runs, runs_from_paths
from tierscope.trainer import TrainConfig, launch_local
from tierscope.trainer.launch import LAUNCHER_LOG, RunDirError, Task
from tierscope.trainer.tiers import Topology

# A stand-in task: starts a grandchild (same process group), ignores SIGTERM, and then
# behaves as its TF_CONFIG role says: the chief exits with CHIEF_EXIT after CHIEF_SECS, others sleep.
STANDIN = r"""
import json, os, signal, subprocess, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
role = json.loads(os.environ["TF_CONFIG"])["task"]["type"]
print(json.dumps({"role": role}), flush=True)
if role == "chief":
    time.sleep(float(os.environ.get("CHIEF_SECS", "300")))
    sys.exit(int(os.environ.get("CHIEF_EXIT", "0")))
time.sleep(300)
"""


def standin(config: TrainConfig) -> list[str]:
    return [sys.executable, "-c", STANDIN, "--run-id", config.run_id]


def until_ready(tasks: list[Task]) -> None:
    """Wait until every stand-in has printed its line: it ignores SIGTERM and has its grandchild
    by then, so what the launcher does next does not depend on how loaded the machine is."""
    deadline = time.monotonic() + 60
    while not all(t.log_path.read_text() for t in tasks):
        assert time.monotonic() < deadline, "the stand-in tasks did not start in 60 s"
        time.sleep(0.05)


def processes_in(groups: set[int]) -> list[int]:
    """Pids of live (non-zombie) processes whose process group is one of ``groups``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()  # after "(comm)": state, ppid, pgrp, ...
        if fields[0] != "Z" and int(fields[2]) in groups:
            found.append(int(entry.name))
    return found


def groups_of(out: Path) -> set[int]:
    # Each task leads its own session, so its pid is its process group id.
    return set(json.loads((out / "run.json").read_text())["pids"].values())


pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


def test_timeout_stops_every_task_and_their_children(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "run"
    start = time.monotonic()
    run = launch_local(
        TrainConfig(run_id="hyg-timeout"),
        Topology(workers=1, ps=1),
        out,
        timeout_s=1.5,
        grace_s=0.5,
        command=standin,
        on_start=until_ready,
    )
    assert (run.status, run.exit_code, run.reason) == ("timeout", 124, "timed out after 1.5 s")
    # Tasks ignore SIGTERM, so each was SIGKILLed after the 0.5 s grace: -9.
    assert run.exit_codes == {"chief-0": -9, "worker-0": -9, "ps-0": -9}
    assert processes_in(groups_of(out)) == []  # grandchildren included
    assert time.monotonic() - start < 60
    meta = json.loads((out / "run.json").read_text())
    assert meta["status"] == "timeout" and sorted(meta["stopped_by_launcher"]) == ["chief-0", "ps-0", "worker-0"]
    assert meta["topology"] == {"chief": 1, "worker": 1, "ps": 1}


def test_a_failed_chief_stops_the_rest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CHIEF_SECS", "0.2")
    monkeypatch.setenv("CHIEF_EXIT", "3")
    out = tmp_path / "run"
    run = launch_local(
        TrainConfig(run_id="hyg-fail"),
        Topology(workers=2),
        out,
        timeout_s=60,
        grace_s=0.3,
        command=standin,
        on_start=until_ready,
    )
    assert run.status == "failed" and run.exit_code == 1
    assert run.reason is not None and run.reason.startswith("task chief-0 exited with code 3")
    assert run.exit_codes == {"chief-0": 3, "worker-0": -9, "worker-1": -9}
    assert processes_in(groups_of(out)) == []
    assert json.loads((out / "chief-0.jsonl").read_text()) == {"role": "chief"}  # stdout is the task's log


@pytest.mark.parametrize(
    ("signum", "reason"),
    [(signal.SIGINT, "interrupted (Ctrl-C)"), (signal.SIGTERM, "launcher received SIGTERM")],
)
def test_ctrl_c_or_sigterm_stops_everything(tmp_path: Path, signum: signal.Signals, reason: str) -> None:
    # SIGTERM raises the one stop exception (tierscope.exits.Terminated): the run ends as on Ctrl-C
    # (interrupted, 130), its reason naming the signal.
    out = tmp_path / "run"
    run = launch_local(
        TrainConfig(run_id="hyg-int"),
        Topology(workers=1),
        out,
        timeout_s=60,
        grace_s=0.3,
        command=standin,
        on_start=lambda tasks: signal.raise_signal(signum),
    )
    assert (run.status, run.exit_code, run.reason) == ("interrupted", 130, reason)
    assert processes_in(groups_of(out)) == []
    events = [json.loads(line) for line in (out / LAUNCHER_LOG).read_text().splitlines() if '"tierscope"' in line]
    assert [(e["event"], e["reason"]) for e in events] == [("started", None), ("failed", reason)]


def test_run_dir_must_be_empty_and_strategy_must_fit(tmp_path: Path) -> None:
    (tmp_path / "old.log").write_text("x\n")
    with pytest.raises(RunDirError, match="already holds files"):
        launch_local(TrainConfig(), Topology(), tmp_path, command=standin)
    with pytest.raises(ValueError, match="mirrored takes no parameter servers"):
        launch_local(TrainConfig(strategy="mirrored"), Topology(1, 1), tmp_path / "new", command=standin)


def collected(out: Path, tmp_path: Path) -> Dataset:
    dataset = Dataset(tmp_path / "dataset")
    collect_runs(dataset, runs_from_paths([out], None, None, None))
    return dataset


@pytest.mark.cluster
def test_parameter_server_run_collects(tmp_path: Path) -> None:
    out = tmp_path / "ps-run"
    # 20 steps, a record and a checkpoint every 10: the same two of each that 200 steps every 100 gave (starting
    # the three tasks is most of the run's cost, but a step of the coordinator's costs some ms too)
    config = TrainConfig(run_id="ps-run", tier="CUSTOM", steps=20, log_every_steps=10, checkpoint_every=10)
    run = launch_local(config, Topology(workers=1, ps=1), out, timeout_s=240, grace_s=5)
    assert run.status == "finished", run.reason
    # The servers end on the launcher's SIGTERM and say so; that is exit code 0.
    assert run.exit_codes == {"chief-0": 0, "worker-0": 0, "ps-0": 0}
    assert processes_in(groups_of(out)) == []
    dataset = collected(out, tmp_path)
    steps = dataset.read("steps", "ps-run").sort("step")
    # The coordinator joins before each record, so the global step is exactly 10 and 20.
    assert steps.select("run_id", "tier", "role", "task_index", "step", "local_step").rows() == [
        ("ps-run", "CUSTOM", "chief", 0, 10, 10),
        ("ps-run", "CUSTOM", "chief", 0, 20, 20),
    ]
    events = dataset.read("events", "ps-run")
    got = events.group_by("role", "task_index").agg(pl.col("event").sort()).sort("role", "task_index", nulls_last=True)
    assert got.rows() == [
        # the coordinator's goodput events: checkpoints after steps 10 and 20 (--checkpoint-every 10)
        (
            "chief",
            0,
            [*["checkpoint_begin"] * 2, *["checkpoint_end"] * 2, "finished", "first_step", "initialized", "started"],
        ),
        ("ps", 0, ["finished", "started"]),
        ("worker", 0, ["finished", "started"]),
        (None, None, ["finished", "started"]),  # the launcher's job-level events
    ]
    started = json.loads(events.filter(pl.col("role") == "chief", pl.col("event") == "started")["detail"][0])
    assert started["strategy"] == "ps" and started["cluster"] == {"chief": 1, "worker": 1, "ps": 1}
    assert dataset.read("rejects").height == 0


@pytest.mark.cluster
def test_mirrored_text_run_collects(mirrored_text_run: MirroredRun, tmp_path: Path) -> None:
    # the session's mirrored run (tests/trainer/conftest.py), which test_tensorboard reads too
    run = mirrored_text_run.run
    out = run.out
    assert run.status == "finished", run.reason
    assert sorted(p.name for p in out.iterdir()) == [
        "chief-0.log",
        "launcher.jsonl",
        "model",  # the final checkpoint
        "run.json",
        "stderr",
        "worker-0.log",
    ]
    steps = collected(out, tmp_path).read("steps", "mw-run").sort("role", "step")
    # Synchronous training: both tasks log the same global steps (200 steps, a record every 20: 20, 40, ...,
    # 200, 10 each), read by the cloudml parser.
    assert steps.select("role", "task_index", "step", "format").rows() == [
        (role, index, step, "cloudml") for role, index in (("chief", 0), ("worker", 0)) for step in range(20, 201, 20)
    ]
    assert processes_in(groups_of(out)) == []


@pytest.mark.cluster
def test_killing_a_worker_mid_run_fails_the_run_and_leaves_nothing(tmp_path: Path) -> None:
    out = tmp_path / "kill-run"
    killed: list[int] = []

    def kill_worker_after_first_record(tasks: list[Task]) -> None:
        worker = next(t for t in tasks if t.role == "worker")
        deadline = time.monotonic() + 120
        while '"tierscope": "step"' not in worker.log_path.read_text():
            assert time.monotonic() < deadline, "the worker wrote no step record in 120 s"
            assert worker.process.poll() is None, "the worker ended before it was killed"
            time.sleep(0.2)
        os.kill(worker.process.pid, signal.SIGKILL)
        killed.append(worker.process.pid)

    config = TrainConfig(run_id="kill-run", steps=1_000_000, log_every_steps=20)
    run = launch_local(
        config, Topology(workers=1), out, timeout_s=240, grace_s=2, on_start=kill_worker_after_first_record
    )
    assert killed
    assert run.status == "failed"
    assert run.reason is not None and run.reason.startswith("task worker-0 was killed by SIGKILL")
    assert run.exit_codes["worker-0"] == -9
    assert run.exit_codes["chief-0"] != 0
    assert processes_in(groups_of(out)) == []
    meta = json.loads((out / "run.json").read_text())
    assert meta["status"] == "failed" and meta["ended_at"] is not None
