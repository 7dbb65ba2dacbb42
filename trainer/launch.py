"""``tierscope train local``: run a whole cluster as processes on this machine.

Every task is ``python -m tierscope.trainer.task`` with its own ``TF_CONFIG`` (``localhost`` ports),
in its own process group and session, so stopping a task stops everything it started.
The run directory holds::

    run.json               run id, tier, host, topology, commands, start/end (UTC), status, exit codes
    launcher.jsonl         the job-level events (started, finished/failed), structured JSON
    model/                 the checkpoints (``--resume`` starts the run again from the latest)
    chief-0.jsonl          each task's stdout: its step log (.log for --log-format text)
    worker-0.jsonl ...
    stderr/chief-0.txt     each task's stderr (TensorFlow's own logging), kept out of the step logs

Process hygiene: the run ends when the chief finishes (and, for synchronous training, every
worker), when any task fails, on ``timeout`` or on Ctrl-C / SIGTERM. Then every task still
running gets SIGTERM, ``grace_s`` seconds, and SIGKILL to its whole process group. On Linux a
task also dies if the launcher itself is killed (``PR_SET_PDEATHSIG``).
"""

from __future__ import annotations

import ctypes
import json
import os
import platform
import shlex
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType
from typing import Any, Literal

from tierscope.atomic import write_text_atomic
from tierscope.contract import JSON_LOG_SUFFIX, MODEL_DIR, RUN_FILE, RunDoc, local_tier
from tierscope.exits import EXIT_ERROR, EXIT_INTERRUPTED, EXIT_OK, EXIT_TIMEOUT, Terminated
from tierscope.trainer.errors import TrainerError
from tierscope.trainer.progress import ProgressCallback, Watcher
from tierscope.trainer.roles import Strategy, tf_config
from tierscope.trainer.steplog import SUFFIXES, Identity, StepLog
from tierscope.trainer.tiers import Topology
from tierscope.trainer.train import TrainConfig

LAUNCHER_LOG = f"launcher{JSON_LOG_SUFFIX}"
STDERR_DIR = "stderr"
Status = Literal["running", "finished", "failed", "timeout", "interrupted"]
#: The launcher's exit code for each way a run ends (timeout as coreutils' ``timeout``).
EXIT_CODES: dict[str, int] = {
    "finished": EXIT_OK,
    "failed": EXIT_ERROR,
    "timeout": EXIT_TIMEOUT,
    "interrupted": EXIT_INTERRUPTED,
}
#: Why a run stopped on Ctrl-C.
INTERRUPTED = "interrupted (Ctrl-C)"
#: A task's command line given its config: ``python -m tierscope.trainer.task ...`` unless a test swaps it.
CommandFactory = Callable[[TrainConfig], list[str]]


class RunDirError(TrainerError, ValueError):
    """The run directory exists and already holds files."""


def task_command(config: TrainConfig) -> list[str]:
    from tierscope.trainer.task import task_args

    return [sys.executable, "-m", "tierscope.trainer.task", *task_args(config)]


@dataclass
class Task:
    """One running task: its role and index, process and files; ``exit_code`` once it ended
    (negative: killed by that signal, as :mod:`subprocess` reports it)."""

    role: str
    index: int
    process: subprocess.Popen[bytes]
    log_path: Path
    stderr_path: Path
    exit_code: int | None = None
    stopped: bool = False  # the launcher stopped it, rather than it ending on its own

    @property
    def name(self) -> str:
        return f"{self.role}-{self.index}"

    def poll(self) -> int | None:
        if self.exit_code is None:
            self.exit_code = self.process.poll()
        return self.exit_code


@dataclass
class LocalRun:
    """How a local run ended: ``status`` (finished / failed / timeout / interrupted), the
    ``reason`` when it did not finish, every task's ``exit_codes`` by ``role-index``, wall
    seconds, and the run directory."""

    run_id: str
    tier: str
    out: Path
    status: Status
    reason: str | None
    exit_codes: dict[str, int | None] = field(default_factory=dict)
    wall_s: float = 0.0

    @property
    def exit_code(self) -> int:
        return EXIT_CODES.get(self.status, EXIT_ERROR)


def free_ports(count: int) -> list[int]:
    """``count`` distinct TCP ports free on localhost right now (another process could take one
    before the task binds it; the task then fails to start and the run fails saying so)."""
    sockets = []
    try:
        for _ in range(count):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("localhost", 0))
            sockets.append(s)
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def _die_with_parent() -> None:
    """In the child, before exec: get SIGKILL when the launcher dies (Linux only)."""
    pr_set_pdeathsig = 1
    with suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(pr_set_pdeathsig, signal.SIGKILL)


def start_task(
    role: str, index: int, command: Sequence[str], env: dict[str, str], out: Path, suffix: str, append: bool = False
) -> Task:
    """Start ``command`` as task ``role/index`` in a new session, stdout to ``out/role-index<suffix>``
    (``append``: after what an earlier attempt of the run wrote there)."""
    log_path = out / f"{role}-{index}{suffix}"
    stderr_path = out / STDERR_DIR / f"{role}-{index}.txt"
    stderr_path.parent.mkdir(parents=True, exist_ok=True)
    mode = "ab" if append else "wb"
    with open(log_path, mode) as stdout, open(stderr_path, mode) as stderr:
        process = subprocess.Popen(
            list(command),
            stdin=subprocess.DEVNULL,
            stdout=stdout,
            stderr=stderr,
            env=env,
            start_new_session=True,  # own process group: killpg reaches the task's children too
            preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None,
        )
    return Task(role=role, index=index, process=process, log_path=log_path, stderr_path=stderr_path)


def _signal_group(task: Task, sig: signal.Signals) -> None:
    with suppress(ProcessLookupError, PermissionError):
        os.killpg(task.process.pid, sig)


def stop_tasks(tasks: Sequence[Task], grace_s: float) -> None:
    """SIGTERM every running task's process group, wait up to ``grace_s`` seconds, SIGKILL the
    groups still there, and reap every task (no zombies). Returns when all have exited."""
    running = [t for t in tasks if t.poll() is None]
    for task in running:
        task.stopped = True
        _signal_group(task, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while any(t.poll() is None for t in running) and time.monotonic() < deadline:
        time.sleep(0.05)
    for task in tasks:
        # Also the groups of tasks that exited on their own: a child they left behind dies here.
        _signal_group(task, signal.SIGKILL)
    for task in running:
        task.process.wait()
        task.poll()


def _raise_stop(signum: int, frame: FrameType | None) -> None:
    if signum == signal.SIGINT:
        raise KeyboardInterrupt(INTERRUPTED)
    raise Terminated(f"launcher received {signal.Signals(signum).name}")


@contextmanager
def _signals(handler: Any) -> Iterator[None]:
    """Install ``handler`` for SIGINT, SIGTERM and SIGHUP (main thread only)."""
    sigs = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
    try:
        previous = {s: signal.signal(s, handler) for s in sigs}
    except ValueError:  # not the main thread
        yield
        return
    try:
        yield
    finally:
        for s, h in previous.items():
            signal.signal(s, h)


def _write_run_doc(out: Path, doc: RunDoc) -> None:
    write_text_atomic(out / RUN_FILE, json.dumps(doc, indent=2, sort_keys=False) + "\n")


def _iso(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def default_run_id(tier: str) -> str:
    return f"{tier.lower()}-{datetime.now(UTC).strftime('%Y%m%dT%H%M%SZ')}"


def _task_env(cluster: dict[str, list[str]], role: str, index: int) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("CLUSTER_SPEC", None)
    env["TF_CONFIG"] = tf_config(cluster, role, index)
    env["PYTHONUNBUFFERED"] = "1"  # records reach the file as they are written
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")
    return env


#: Seconds to let other tasks' exits show after the first failure: a killed worker's
#: chief exits with an error a moment later, and the kill is the cause to report.
SETTLE_S = 1.0


def _failure(task: Task, code: int) -> str:
    how = f"was killed by {signal.Signals(-code).name}" if code < 0 else f"exited with code {code}"
    return f"task {task.name} {how} (see {task.log_path.name} and {STDERR_DIR}/{task.name}.txt)"


def _wait(
    tasks: list[Task], strategy: Strategy, deadline: float | None, watch: Watcher | None = None
) -> tuple[Status, str | None]:
    """Block until the run is over; return its status and, unless finished, why. ``watch`` is polled
    every tenth of a second (and once more after a failure has settled).

    When tasks fail, a task killed by a signal is named first (it is the cause; the
    others' errors follow from it), then the rest in task order.
    """
    chief = tasks[0]
    training = [t for t in tasks if t.role in ("chief", "worker")] if strategy == "mirrored" else [chief]

    def tick() -> None:
        if watch is not None:
            watch.poll([(t.name, t.poll(), _failure(t, t.poll() or 0)) for t in tasks])

    while True:
        tick()
        if any(t.poll() not in (None, 0) for t in tasks):
            time.sleep(SETTLE_S)
            tick()
            failed = [(t, t.poll()) for t in tasks if t.poll() not in (None, 0)]
            failed.sort(key=lambda tc: 0 if (tc[1] or 0) < 0 else 1)  # stable: task order within each kind
            return "failed", "; then ".join(_failure(t, code) for t, code in failed if code is not None)
        if all(t.poll() == 0 for t in training):
            tick()  # the last records
            return "finished", None
        if deadline is not None and time.monotonic() > deadline:
            return "timeout", "timed out"
        time.sleep(0.1)


def launch_local(
    config: TrainConfig,
    topology: Topology,
    out: Path,
    timeout_s: float | None = None,
    grace_s: float = 5.0,
    command: CommandFactory = task_command,
    launcher_argv: Sequence[str] | None = None,
    on_start: Callable[[list[Task]], None] | None = None,
    on_progress: ProgressCallback | None = None,
    resume: bool = False,
) -> LocalRun:
    """Run ``config`` on a local cluster shaped like ``topology``; write the run directory ``out``.
    Checkpoints go to ``out/model`` unless ``config.model_dir`` says otherwise. ``resume``: ``out``
    holds an earlier attempt of the run (its ``run.json``); every task restores the latest checkpoint
    and trains on to ``config.steps``, the logs are appended to, and ``run.json`` keeps the first
    attempt's ``started_at`` and counts ``attempts``.

    Returns when every task has exited (stopped ones included). Raises :class:`RunDirError`
    if ``out`` exists and is not empty (with ``resume``: if it holds no ``run.json``);
    :class:`ValueError` if ``config.strategy`` does not fit the topology. A failed, timed-out or
    interrupted run is *returned* (``status``), not raised.
    ``on_start`` is called with the started tasks (tests use it to kill one); ``on_progress`` with
    :class:`tierscope.trainer.progress.Progress` events while the run goes on (about twice a second, and
    at once when a task fails), from this thread.
    """
    strategy = config.strategy or topology.strategy
    _check_strategy(strategy, topology)
    earlier = _earlier_attempt(out) if resume else None
    if not resume and out.exists() and any(out.iterdir()):
        raise RunDirError(
            f"run directory {out} already holds files; choose another --out, remove it, "
            "or --resume to continue its run from its latest checkpoint"
        )
    out.mkdir(parents=True, exist_ok=True)
    config = _with_strategy(config, strategy, config.model_dir or out / MODEL_DIR)
    cluster = topology.cluster([f"localhost:{p}" for p in free_ports(len(topology.tasks))])
    task_cmd = command(config)
    started_at = datetime.now(UTC)
    meta: RunDoc = {
        "run_id": config.run_id,
        "tier": config.tier,
        "host": f"{platform.node()} (local, {os.cpu_count()} CPUs)",
        "topology": topology.as_dict(),
        "strategy": strategy,
        "config": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(config).items()},
        "command": shlex.join(launcher_argv) if launcher_argv else None,
        "task_command": shlex.join(task_cmd),
        "cluster": cluster,
        "started_at": earlier.get("started_at", _iso(started_at)) if earlier else _iso(started_at),
        "attempts": int(earlier.get("attempts", 1)) + 1 if earlier else 1,
        "ended_at": None,
        "status": "running",
        "reason": None,
        "exit_codes": {},
        "pids": {},
    }
    _write_run_doc(out, meta)
    events = open(out / LAUNCHER_LOG, "a" if resume else "w", encoding="utf-8")  # noqa: SIM115 (closed in finally)
    job_log = StepLog(Identity(config.run_id, config.tier, None, None), "json", events, diagnostics=None)
    job_log.event("started", detail={"topology": topology.as_dict(), "strategy": strategy, "host": meta["host"]})
    tasks: list[Task] = []
    status: Status = "failed"
    reason: str | None = None
    t0 = time.monotonic()
    try:
        with _signals(_raise_stop):
            try:
                suffix = SUFFIXES[config.log_format]
                for role, index in topology.tasks:
                    env = _task_env(cluster, role, index)
                    tasks.append(start_task(role, index, task_cmd, env, out, suffix, append=resume))
                meta["pids"] = {t.name: t.process.pid for t in tasks}
                _write_run_doc(out, meta)
                if on_start:
                    on_start(tasks)
                watch = None if on_progress is None else Watcher({t.name: t.log_path for t in tasks}, t0, on_progress)
                status, reason = _wait(tasks, strategy, None if timeout_s is None else t0 + timeout_s, watch)
                if status == "timeout":
                    reason = f"timed out after {timeout_s:g} s"
            except KeyboardInterrupt as exc:  # Ctrl-C, or Terminated: SIGTERM, SIGHUP
                status, reason = "interrupted", str(exc) or INTERRUPTED
    finally:
        # A second Ctrl-C must not cut the clean-up short: it is bounded by grace_s anyway.
        with _signals(signal.SIG_IGN):
            stop_tasks(tasks, grace_s)
            ended_at = datetime.now(UTC)
            meta |= {
                "ended_at": _iso(ended_at),
                "wall_s": round(time.monotonic() - t0, 3),
                "status": status,
                "reason": reason,
                "exit_codes": {t.name: t.exit_code for t in tasks},
                "stopped_by_launcher": [t.name for t in tasks if t.stopped],
            }
            _write_run_doc(out, meta)
            detail = {"status": status, "exit_codes": meta["exit_codes"], "wall_s": meta["wall_s"]}
            job_log.event("finished" if status == "finished" else "failed", reason=reason, detail=detail)
            job_log.close()
            events.close()
    return LocalRun(
        run_id=config.run_id,
        tier=config.tier,
        out=out,
        status=status,
        reason=reason,
        exit_codes=meta["exit_codes"],
        wall_s=meta["wall_s"],
    )


def _with_strategy(config: TrainConfig, strategy: Strategy, model_dir: Path) -> TrainConfig:
    from dataclasses import replace

    return replace(config, strategy=strategy, model_dir=model_dir)


def _earlier_attempt(out: Path) -> dict[str, Any]:
    """The ``run.json`` of the run in ``out`` that ``--resume`` continues; :class:`RunDirError` if none."""
    try:
        doc = json.loads((out / RUN_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise RunDirError(
            f"--resume: {out / RUN_FILE} cannot be read ({exc}); give the run directory of an earlier run"
        ) from None
    if not isinstance(doc, dict):
        raise RunDirError(f"--resume: {out / RUN_FILE} is not a JSON object; give the run directory of an earlier run")
    return doc


def _check_strategy(strategy: Strategy, topology: Topology) -> None:
    if strategy == "ps" and not (topology.ps and topology.workers):
        raise ValueError("--strategy ps needs at least one parameter server (--ps) and one worker (--workers)")
    if strategy == "mirrored" and topology.ps:
        raise ValueError("--strategy mirrored takes no parameter servers; drop --ps or use --strategy ps")
    if strategy == "single" and (topology.workers or topology.ps):
        raise ValueError("--strategy single runs one process; drop --workers and --ps")


def train_local(
    tier: str | None = None,
    workers: int | None = None,
    ps: int | None = None,
    strategy: Strategy | None = None,
    steps: int = 1000,
    batch_size: int = 100,
    dataset: str = "synthetic",
    data_file: Path | None = None,
    seed: int = 0,
    log_every_steps: int = 100,
    log_interval_secs: float = 0.0,
    log_format: str = "json",
    checkpoint_every: int = 100,
    eval_every: int = 100,
    resume: bool = False,
    out: Path | None = None,
    run_id: str | None = None,
    timeout: float | None = 3600.0,
    grace: float = 5.0,
    launcher_argv: Sequence[str] | None = None,
    on_progress: ProgressCallback | None = None,
    tensorboard: Path | None = None,
) -> LocalRun:
    """``tierscope train local``: a tier's topology (``tier``) or a custom one (``workers``, ``ps``);
    the run's tier label is ``local-<TIER>`` (``local-BASIC``, ``local-CUSTOM``) run on this
    machine; the run directory defaults to ``runs/<run id>``, and the run id to the run
    directory's name (``--out runs/ps2``: ``ps2``), else ``local-<tier>-<UTC time>``.

    Raises :class:`ValueError` for contradictory options (a tier *and* a topology, a strategy
    that does not fit), :class:`tierscope.trainer.tiers.UnknownTierError`, :class:`RunDirError`.
    ``on_progress``, ``resume``: see :func:`launch_local` (``resume`` needs ``out``; the run id defaults to
    the earlier attempt's). ``checkpoint_every``, ``eval_every``: see :class:`TrainConfig`.
    ``tensorboard``: also write event files there
    (:mod:`tierscope.trainer.summaries`); it must lie outside the run directory, which ``collect
    files`` reads whole: the same steps from the step log and the event files would count twice.
    """
    from tierscope.trainer.tiers import CUSTOM, get_tier

    if tier is not None and (workers is not None or ps is not None):
        raise ValueError("give --tier or --workers/--ps, not both (a tier fixes the topology)")
    if tier is not None:
        known = get_tier(tier)
        label, topology = known.name, known.topology
    elif workers is None and ps is None:
        label, topology = "BASIC", get_tier("BASIC").topology
    else:
        label, topology = CUSTOM, Topology(workers=workers or 0, ps=ps or 0)
    # A tier emulated on this machine is not that tier: the label keeps it out of the
    # cloud's price table and out of the tiers' scaling fit (run.json keeps the topology).
    label = local_tier(label)
    # A run directory named by the user (--out runs/ps2) names the run too.
    if resume:
        if out is None:
            raise ValueError("--resume needs --out, the run directory of the run to continue")
        run_id = run_id or _earlier_attempt(out).get("run_id")
    run_id = run_id or (out.name if out is not None and out.name else default_run_id(label))
    out = out or Path("runs") / run_id
    if tensorboard is not None and tensorboard.resolve().is_relative_to(out.resolve()):
        raise ValueError(
            f"--tensorboard {tensorboard} lies inside the run directory {out}: collecting it would read every "
            "step twice (step log and event files); put the event files elsewhere, e.g. --tensorboard tb/" + run_id
        )
    config = TrainConfig(
        run_id=run_id,
        tier=label,
        steps=steps,
        batch_size=batch_size,
        dataset=dataset,  # type: ignore[arg-type]
        data_file=data_file,
        seed=seed,
        log_every_steps=log_every_steps,
        log_interval_secs=log_interval_secs,
        log_format=log_format,  # type: ignore[arg-type]
        strategy=strategy,
        checkpoint_every=checkpoint_every,
        eval_every=eval_every,
        tensorboard_dir=tensorboard,
    )
    return launch_local(
        config,
        topology,
        out,
        timeout_s=timeout,
        grace_s=grace,
        launcher_argv=launcher_argv,
        on_progress=on_progress,
        resume=resume,
    )
