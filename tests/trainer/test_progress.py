"""The trainer you can watch: progress events while a local run goes on (stand-in tasks that write real
step records, fast), how the CLI draws them and its final steady-rate line, and task logs that are
pure JSON lines (a real TensorFlow run with stray output, ``@pytest.mark.cluster``)."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from tierscope.cli import app
from tierscope.cli.train import steady_line
from tierscope.cli.train_progress import ProgressView
from tierscope.trainer.launch import CommandFactory, LocalRun, launch_local
from tierscope.trainer.progress import Progress, TaskProgress
from tierscope.trainer.steplog import Identity, StepLog
from tierscope.trainer.tiers import Topology
from tierscope.trainer.train import TrainConfig

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the launcher's process groups")

# A stand-in chief: 10 step records through the real StepLog, global step 100, 200, ... 1000 at exactly
# 50 global steps/s, 0.1 s apart, then exits with CODE (the first argument); a worker sleeps.
WRITER = r"""
import json, os, sys, time
from tierscope.trainer.steplog import Identity, StepLog
role = json.loads(os.environ["TF_CONFIG"])["task"]["type"]
if role != "chief":
    time.sleep(300)
log = StepLog(Identity("w", "local-BASIC", "chief", 0), "json", sys.stdout)
log.event("started")
for i in range(1, 11):
    log.step(step=100 * i, local_step=100 * i, loss=1.0, accuracy=0.5, elapsed_s=2.0 * i,
             global_steps_per_s=50.0, local_steps_per_s=50.0, batch_size=100)
    sys.stdout.flush()
    time.sleep(0.1)
code = int(sys.argv[1])
if code:
    log.event("failed", reason="ValueError: the stand-in failed\nsecond line of the traceback")
    time.sleep(0.3)
log.close()
sys.exit(code)
"""


def writer(code: int) -> CommandFactory:
    return lambda config: [sys.executable, "-c", WRITER, str(code)]


def test_progress_events_follow_the_step_log_and_report_a_failure_at_once(tmp_path: Path) -> None:
    events: list[Progress] = []
    run = launch_local(
        TrainConfig(run_id="watch"), Topology(workers=1), tmp_path / "run", timeout_s=60, grace_s=0.3,
        command=writer(1), on_progress=events.append,
    )  # fmt: skip
    assert run.status == "failed"
    last = [e for e in events if e.tasks][-1]
    # every record of the chief was read: its last global step 1,000 at 50 steps/s, 10 records
    assert last.tasks == (TaskProgress("chief-0", 1000, 50.0, 10),)
    failures = [e.failure for e in events if e.failure is not None]
    # the task's own failed record comes first, by its first line, and once; the exit code adds nothing for it
    assert failures[0] == ("chief-0", "ValueError: the stand-in failed")
    assert [f[0] for f in failures].count("chief-0") == 1
    # reported while the run was still going: the launcher stopped the worker after it
    assert run.exit_codes["worker-0"] == -15  # SIGTERM
    elapsed = [e.elapsed_s for e in events]
    assert elapsed == sorted(elapsed) and len(events) >= 3


def test_the_final_line_gives_the_steady_rate_summary_computes(tmp_path: Path) -> None:
    run = launch_local(TrainConfig(run_id="steady"), Topology(), tmp_path / "run", timeout_s=60, command=writer(0))
    assert run.status == "finished"
    # every interval logged 50.0 global steps/s; the first one is warm-up: the median of the other 9 is 50.0
    assert steady_line(run.out) == "steady state 50.0 global steps/s"


def test_the_view_draws_steps_rates_elapsed_and_failures() -> None:
    out = io.StringIO()
    console = Console(file=out, width=80, force_terminal=False)
    with ProgressView(console, steps=1000) as view:
        view.update(Progress(3.0, (TaskProgress("chief-0", 400, 52.5, 4), TaskProgress("worker-0", 380, 51.0, 4))))
        view.update(Progress(4.2, (TaskProgress("chief-0", 450, 52.5, 5),), ("worker-0", "OOM [killed]: no memory")))
    text = out.getvalue()
    assert "4 s  worker-0 failed: OOM [killed]: no memory" in text  # markup in a failure is text
    # into a file: plain lines, the last one where the run ended (no frame of a live table)
    assert text.splitlines()[-1] == "4 s  chief-0 450 / 1,000 at 52.5 steps/s (5 records)"
    terminal = io.StringIO()
    with ProgressView(Console(file=terminal, width=80, force_terminal=True), steps=1000) as view:
        view.update(Progress(4.2, (TaskProgress("chief-0", 450, 52.5, 5),)))
    assert "450 / 1,000" in terminal.getvalue() and "4 s elapsed" in terminal.getvalue()
    quiet = io.StringIO()
    with ProgressView(Console(file=quiet), steps=10, enabled=False) as view:
        view.update(Progress(1.0, (TaskProgress("chief-0", 5, 1.0, 1),), ("chief-0", "boom")))
    assert quiet.getvalue() == ""


def test_without_a_terminal_progress_is_plain_lines_with_each_processs_state() -> None:
    # a cluster starting: for 30 s the view said only "(starting)"; now each process, as its state changes
    out = io.StringIO()
    procs = ("chief-0", "worker-0", "ps-0")
    with ProgressView(Console(file=out, width=80, force_terminal=False), steps=1000) as view:
        view.update(Progress(0.5, (), None, tuple((p, "starting") for p in procs)))
        view.update(Progress(1.0, (), None, tuple((p, "starting") for p in procs)))  # nothing changed: no line
        view.update(Progress(6.0, (), None, (("chief-0", "running"), ("worker-0", "starting"), ("ps-0", "running"))))
        logging = (("chief-0", "logging"), ("worker-0", "running"), ("ps-0", "running"))
        view.update(Progress(9.0, (TaskProgress("worker-0", 100, 20.0, 1),), None, logging))
        view.update(Progress(12.0, (TaskProgress("worker-0", 160, 20.0, 2),), None, logging))  # < 10 s: no line
        view.update(Progress(19.5, (TaskProgress("worker-0", 300, 20.0, 4),), None, logging))  # 10 s on: a line
    lines = out.getvalue().splitlines()
    assert lines == [
        "0 s  no step logged yet; processes: chief-0 starting, worker-0 starting, ps-0 starting",
        "6 s  no step logged yet; processes: chief-0 running, worker-0 starting, ps-0 running",
        "9 s  worker-0 100 / 1,000 at 20.0 steps/s (1 record); processes: chief-0 logging, worker-0 running, "
        "ps-0 running",
        "20 s  worker-0 300 / 1,000 at 20.0 steps/s (4 records); processes: chief-0 logging, worker-0 running, "
        "ps-0 running",
    ]
    assert "\x1b" not in out.getvalue() and "\r" not in out.getvalue()  # no cursor moves, no colour into a file


def test_the_live_table_shows_processes_no_step_row_stands_for() -> None:
    out = io.StringIO()
    with ProgressView(Console(file=out, width=100, force_terminal=True), steps=1000) as view:
        view.update(Progress(2.0, (), None, (("chief-0", "starting"), ("ps-0", "running"))))
    text = out.getvalue()
    assert "(starting)" in text and "ps-0" in text and "(running)" in text


def test_train_local_shows_progress_on_stderr_and_quiet_shows_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tierscope.cli.train as cli_train
    import tierscope.trainer.launch as launch

    def fake(**kwargs: object) -> LocalRun:
        on_progress = kwargs["on_progress"]
        on_progress(Progress(1.0, (TaskProgress("chief-0", 500, 40.0, 5),)))  # type: ignore[operator]
        return LocalRun("r", "local-BASIC", tmp_path, "finished", None, {"chief-0": 0}, 12.5)

    monkeypatch.setattr(launch, "train_local", fake)
    monkeypatch.setattr(cli_train, "steady_line", lambda out: "steady state 40.0 global steps/s")
    loud = CliRunner().invoke(app, ["train", "local", "--steps", "1000", "--out", str(tmp_path / "x")])
    assert loud.exit_code == 0, loud.output
    assert "500 / 1,000" in loud.stderr and "40.0" in loud.stderr
    assert "run r (local-BASIC) finished in 12.5 s: steady state 40.0 global steps/s" in loud.stdout
    quiet = CliRunner().invoke(app, ["train", "local", "--quiet", "--out", str(tmp_path / "y")])
    assert quiet.exit_code == 0 and quiet.stdout == "" and quiet.stderr == ""


def test_the_step_log_holds_records_only(monkeypatch: pytest.MonkeyPatch) -> None:
    import google.cloud.logging_v2 as cloud_logging

    # google-cloud-logging writes a diagnostic entry before the first record of a process; it goes to stderr
    monkeypatch.setattr(cloud_logging, "_instrumentation_emitted", False)
    stream, diagnostics = io.StringIO(), io.StringIO()
    log = StepLog(Identity("r", "BASIC", "chief", 0), "json", stream, diagnostics=diagnostics)
    log.event("started")
    log.close()
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert [line["event"] for line in lines] == ["started"]
    assert all(line.get("tierscope") == "event" for line in lines)
    assert "logging.googleapis.com/diagnostic" in json.loads(diagnostics.getvalue())


# A real task with stray output on stdout: Keras' download line from Python, and a line written straight
# to file descriptor 1 as a C++ library would, both while training.
NOISY = r"""
import os, sys
import tierscope.trainer.train as train
real = train._train
def noisy(*args, **kwargs):
    print("Downloading data from https://storage.googleapis.com/tensorflow/tf-keras-datasets/mnist.npz")
    os.write(1, b"stray line from a C++ library\n")
    return real(*args, **kwargs)
train._train = noisy
from tierscope.trainer.task import main
main(sys.argv[1:])
"""


@pytest.mark.cluster
def test_task_logs_are_pure_json_lines(tmp_path: Path) -> None:
    from tierscope.trainer.task import task_args

    config = TrainConfig(run_id="pure", tier="local-BASIC", steps=40, log_every_steps=10)
    run = launch_local(
        config, Topology(), tmp_path / "run", timeout_s=300,
        command=lambda c: [sys.executable, "-c", NOISY, *task_args(c)],
    )  # fmt: skip
    assert run.status == "finished", run.reason
    logs = sorted(run.out.glob("*.jsonl"))
    assert [p.name for p in logs] == ["chief-0.jsonl", "launcher.jsonl"]
    for path in logs:
        for number, line in enumerate(path.read_text().splitlines(), 1):
            assert isinstance(json.loads(line), dict), f"{path.name}:{number}: {line!r}"
    records = [json.loads(line) for line in (run.out / "chief-0.jsonl").read_text().splitlines()]
    assert [r["step"] for r in records if r.get("tierscope") == "step"] == [10, 20, 30, 40]
    stderr = (run.out / "stderr" / "chief-0.txt").read_text()
    assert "Downloading data from" in stderr and "stray line from a C++ library" in stderr
    assert "logging.googleapis.com/diagnostic" in stderr
