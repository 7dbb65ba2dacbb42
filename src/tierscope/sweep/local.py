"""The local launcher: each job a local cluster of the reference trainer (``tierscope train local``'s
machinery), queued and run one at a time on this machine, so a sweep's whole loop can be seen before
any money is spent.

A job lives in a folder of its own under the launcher's root, as a job lives on a platform::

    <root>/<job id>/job.json     the CustomJob body, its labels, when it was submitted
    <root>/<job id>/claimed      the scheduler took it (its time)
    <root>/<job id>/cancel       cancelling was asked for
    <root>/<job id>/error.txt    why it could not start
    <root>/<job id>/run/         the run directory (run.json, each task's step log)

A job is submitted by renaming a complete folder into place (never half a job). A detached scheduler
process (``python -m tierscope.sweep.local ROOT``) runs the queued jobs in the order they were submitted,
each as a process of its own (``python -m tierscope.sweep.local --job DIR``) that holds ``DIR/.running.lock``
while it lives; neither dies with the sweep, so a killed sweep finds its jobs where it left them, as it would
on Vertex AI. The pools of the body give the cluster's shape (pool 0 the chief, 1 the workers, 2 the parameter
servers); its machine types and accelerators are named, not emulated: every task runs on this machine's CPUs,
and the run's tier is ``local-<tier>`` (a run on this machine is not the cloud's tier).
"""

from __future__ import annotations

import json
import os
import re
import secrets
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from contextlib import suppress
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tierscope.atomic import write_text_atomic
from tierscope.contract import RUN_FILE
from tierscope.sweep.errors import SweepError
from tierscope.sweep.launchers import JobState, SubmitRefused, label_value, labels

if TYPE_CHECKING:
    from tierscope.collector.manifest import RunSpec
    from tierscope.dataset.store import Dataset

JOB_FILE = "job.json"
CLAIMED = "claimed"
CANCEL = "cancel"
ERROR_FILE = "error.txt"
RUN_DIR = "run"
RUNNING_LOCK = ".running.lock"
SCHEDULER_LOCK = ".scheduler.lock"
#: Seconds a claimed job may take to start its process (Python's start-up) before it is taken for dead.
START_GRACE_S = 60.0
_TIMEOUT = re.compile(r"^(\d+(?:\.\d+)?)s$")


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _time(text: object) -> datetime | None:
    if not isinstance(text, str):
        return None
    with suppress(ValueError):
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    return None


def _held(path: Path) -> bool:
    """Whether a live process holds the ``flock`` at ``path`` (the kernel drops it when its holder dies)."""
    from filelock import FileLock, Timeout

    if not path.exists():
        return False
    lock = FileLock(path, timeout=0)
    try:
        lock.acquire()
    except Timeout:
        return True
    lock.release()
    return False


class LocalLauncher:
    """Jobs as local clusters under ``root`` (see the module). ``python``: the interpreter that runs the
    scheduler and the jobs (this one by default); ``grace_s``: seconds a cancelled job's tasks get before
    SIGKILL."""

    name = "local"

    def __init__(self, root: Path, python: str = sys.executable, grace_s: float = 5.0) -> None:
        self.root = root
        self.python = python
        self.grace_s = grace_s

    @property
    def where(self) -> str:
        """The folder of the jobs (kept in the ledger: ``--status`` and ``--cancel`` find them there)."""
        return str(self.root.resolve())

    # --- the Launcher interface ---------------------------------------------------------------

    def find(self, sweep_id: str, configuration: str) -> str | None:
        wanted = labels(sweep_id, configuration)
        found = []
        for job in self._jobs():
            doc = self._doc(job)
            if doc is not None and all(doc.get("labels", {}).get(k) == v for k, v in wanted.items()):
                found.append((str(doc.get("create_time", "")), job.name))
        return min(found)[1] if found else None

    def submit(self, sweep_id: str, configuration: str, job: dict[str, Any]) -> str:
        """Queue ``job``; raises :class:`SubmitRefused` for a body this launcher cannot run (not the reference
        trainer's arguments, pools it cannot shape into a cluster)."""
        cluster_shape(job)  # refuses what it cannot run before anything is written
        self.root.mkdir(parents=True, exist_ok=True)
        job_id = f"{label_value(configuration)[:40]}-{secrets.token_hex(4)}"
        staging = self.root / f".tmp-{job_id}"
        staging.mkdir()
        doc = {"name": job_id, "labels": labels(sweep_id, configuration), "create_time": _now(), "body": job}
        write_text_atomic(staging / JOB_FILE, json.dumps(doc, indent=2) + "\n")
        os.rename(staging, self.root / job_id)  # the whole job appears at once
        self._schedule()
        return job_id

    def labels_of(self, job_id: str) -> dict[str, str]:
        doc = self._doc(self._dir(job_id)) or {}
        found = doc.get("labels")
        return {str(k): str(v) for k, v in found.items()} if isinstance(found, dict) else {}

    def state(self, job_id: str) -> JobState:
        job = self._dir(job_id)
        cancelled = (job / CANCEL).exists()
        claimed = _read(job / CLAIMED)
        if claimed is None:
            if cancelled:
                return JobState("cancelled", "cancelled before it started")
            self._schedule()
            return JobState("queued")
        error = _read(job / ERROR_FILE)
        if error is not None:
            return JobState(
                "cancelled" if cancelled else "failed", error.strip(), end_time=_time(_mtime(job / ERROR_FILE))
            )
        meta = _run_doc(job / RUN_DIR)
        alive = _held(job / RUNNING_LOCK)
        if meta is None:
            if alive or _age_s(_time(claimed.strip())) < START_GRACE_S:
                return JobState("provisioning")
            return JobState("failed", "the local job's process died before its run started")
        start, end = _time(meta.get("started_at")), _time(meta.get("ended_at"))
        status = meta.get("status")
        if status == "running":
            if alive:
                return JobState("running", start_time=start)
            return JobState("failed", "the local job's process was killed while its run went on", start, end)
        if status == "finished":
            return JobState("succeeded", None, start, end)
        reason = str(meta.get("reason") or status)
        if status == "interrupted" and cancelled:
            return JobState("cancelled", "cancelled while it ran", start, end)
        return JobState("failed", reason, start, end)

    def cancel(self, job_id: str) -> None:
        job = self._dir(job_id)
        if not (job / CANCEL).exists():
            write_text_atomic(job / CANCEL, _now() + "\n")
        pid = _read(job / "pid")
        if pid is not None and _held(job / RUNNING_LOCK):
            with suppress(ProcessLookupError, PermissionError, ValueError):
                os.kill(int(pid), signal.SIGTERM)  # launch_local stops its tasks and records "interrupted"

    # --- beyond the interface -----------------------------------------------------------------

    def steps_per_s(self, job_id: str) -> float | None:
        """The chief's latest global steps/s as its step log says, None before its first record."""
        run = self._dir(job_id) / RUN_DIR
        logs = sorted(run.glob("chief-0.*")) + sorted(run.glob("master-0.*"))
        for log in logs:
            try:
                with open(log, "rb") as handle:
                    handle.seek(max(0, log.stat().st_size - 4096))
                    lines = handle.read().decode("utf-8", "replace").splitlines()
            except OSError:
                continue
            for line in reversed(lines):
                with suppress(ValueError):
                    rate = json.loads(line).get("global_steps_per_s")
                    if isinstance(rate, int | float):
                        return float(rate)
        return None

    def run_dir(self, job_id: str) -> Path:
        return self._dir(job_id) / RUN_DIR

    def collect(self, dataset: Dataset, job_id: str, run: RunSpec) -> None:
        """Collect the job's run directory into ``dataset`` as ``run`` (JobLogs). Idempotent: the collector
        reads each file from where it stopped."""
        from tierscope.collector.collect import collect_runs
        from tierscope.collector.runs import runs_from_paths

        directory = self.run_dir(job_id)
        if not directory.is_dir():
            return
        found = runs_from_paths([directory], run.run_id, None, None)
        # the run directory's own facts (run.json: replicas, strategy, batch size) under the sweep's
        swept = {key: getattr(run, key) for key in ("topology", "date", "note", "config", "estimate_usd")}
        specs = [replace(r, run_id=run.run_id, run_id_given=True, **swept) for r in found]
        result = collect_runs(dataset, specs, settle_s=0.0)
        if result.errors:
            raise result.errors[0]

    def wait_idle(self, timeout_s: float) -> bool:
        """Wait until no job of this root runs or waits (tests); True if it became idle in time."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if not any(self.state(j.name).state not in ("succeeded", "failed", "cancelled") for j in self._jobs()):
                return True
            time.sleep(0.5)
        return False

    # --- the folders --------------------------------------------------------------------------

    def _jobs(self) -> list[Path]:
        if not self.root.is_dir():
            return []
        return sorted(p for p in self.root.iterdir() if p.is_dir() and not p.name.startswith("."))

    @staticmethod
    def _doc(job: Path) -> dict[str, Any] | None:
        return _json_object(job / JOB_FILE)

    def _dir(self, job_id: str) -> Path:
        job = self.root / job_id
        if "/" in job_id or job_id.startswith(".") or not (job / JOB_FILE).exists():
            raise SweepError(f"no local job {job_id!r} under {self.root}")
        return job

    def _schedule(self) -> None:
        """Start the scheduler unless one runs (a second one started at once finds the lock held and exits)."""
        if _held(self.root / SCHEDULER_LOCK):
            return
        subprocess.Popen(
            [self.python, "-m", "tierscope.sweep.local", str(self.root), "--grace", str(self.grace_s)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=open(self.root / ".scheduler.log", "ab"),  # noqa: SIM115 (the child keeps it)
            start_new_session=True,  # not killed with the sweep, nor by its Ctrl-C
        )


def cluster_shape(job: dict[str, Any]) -> tuple[int, int, list[str]]:
    """``(workers, parameter servers, the trainer's arguments)`` of a CustomJob body: pool 0 one chief, pool 1
    the workers, pool 2 the parameter servers, every pool running the reference trainer with the same arguments.
    Raises :class:`SubmitRefused` for anything else."""
    from tierscope.trainer.task import parser

    try:
        pools = job["jobSpec"]["workerPoolSpecs"]
        counts = [int(p.get("replicaCount", 1)) for p in pools]
        args = [list(p["containerSpec"].get("args", [])) for p in pools]
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise SubmitRefused(f"not a CustomJob body the local launcher can run ({type(exc).__name__}: {exc})") from None
    if not 1 <= len(pools) <= 3 or counts[0] != 1:
        raise SubmitRefused(
            f"the local launcher runs 1 chief, then workers, then parameter servers; got pools of {counts}"
        )
    if any(a != args[0] for a in args):
        raise SubmitRefused("the local launcher runs the same trainer arguments in every pool")
    try:
        parsed, unknown = parser().parse_known_args(args[0])
    except SystemExit:
        parsed, unknown = None, args[0]
    if parsed is None or unknown:
        raise SubmitRefused(
            "the local launcher runs only tierscope's reference trainer; this job's arguments are not its own "
            f"({' '.join(unknown or args[0])[:80]})"
        )
    workers = counts[1] if len(counts) > 1 else 0
    ps = counts[2] if len(counts) > 2 else 0
    if ps and not workers:
        raise SubmitRefused("parameter servers need a worker pool")
    return workers, ps, args[0]


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (FileNotFoundError, NotADirectoryError):
        return None


def _mtime(path: Path) -> str | None:
    with suppress(OSError):
        return datetime.fromtimestamp(path.stat().st_mtime, UTC).isoformat()
    return None


def _age_s(when: datetime | None) -> float:
    return float("inf") if when is None else (datetime.now(UTC) - when).total_seconds()


def _json_object(path: Path) -> dict[str, Any] | None:
    """The JSON object in ``path``; None if it is not there (yet) or not an object (being replaced atomically,
    a file is whole or absent; anything else is not a job's)."""
    text = _read(path)
    if text is None:
        return None
    with suppress(ValueError):
        doc = json.loads(text)
        return doc if isinstance(doc, dict) else None
    return None


def _run_doc(run: Path) -> dict[str, Any] | None:
    return _json_object(run / RUN_FILE)


# --- the scheduler and the job processes ---------------------------------------------------------


def _queued(root: Path) -> list[Path]:
    found = []
    for job in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")):
        doc = LocalLauncher._doc(job)
        if doc is not None and not (job / CLAIMED).exists() and not (job / CANCEL).exists():
            found.append((str(doc.get("create_time", "")), job))
    return [job for _, job in sorted(found)]


def _busy(root: Path) -> bool:
    """A job process of this root is alive, or a claimed job has not started its process yet."""
    for job in (p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")):
        claimed = _read(job / CLAIMED)
        if claimed is None or (job / ERROR_FILE).exists():
            continue
        if _held(job / RUNNING_LOCK):
            return True
        meta = _run_doc(job / RUN_DIR)
        if meta is None and _age_s(_time(claimed.strip())) < START_GRACE_S and not (job / "pid").exists():
            return True
    return False


def schedule(root: Path, python: str, grace_s: float) -> int:
    """Run ``root``'s queued jobs one at a time, oldest first, until none is left. Returns 0 (also when another
    scheduler holds the lock: it does the work)."""
    from filelock import FileLock, Timeout

    lock = FileLock(root / SCHEDULER_LOCK, timeout=2)
    try:
        lock.acquire()
    except Timeout:
        return 0
    try:
        while True:
            if _busy(root):
                time.sleep(0.2)
                continue
            queued = _queued(root)
            if not queued:
                return 0
            job = queued[0]
            write_text_atomic(job / CLAIMED, _now() + "\n")
            process = subprocess.Popen(
                [python, "-m", "tierscope.sweep.local", "--job", str(job), "--grace", str(grace_s)],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=open(job / "job.stderr.txt", "ab"),  # noqa: SIM115 (the child keeps it)
                start_new_session=True,
            )
            write_text_atomic(job / "pid", f"{process.pid}\n")
            process.wait()
    finally:
        lock.release()


def run_job(job: Path, grace_s: float) -> int:
    """Run the job in folder ``job`` as a local cluster (``launch_local``), holding its running lock."""
    from filelock import FileLock

    from tierscope.contract import local_tier
    from tierscope.trainer.launch import launch_local
    from tierscope.trainer.task import config_from_args
    from tierscope.trainer.tiers import Topology

    lock = FileLock(job / RUNNING_LOCK, timeout=0)
    lock.acquire()
    try:
        doc = LocalLauncher._doc(job) or {}
        if (job / CANCEL).exists():
            write_text_atomic(job / ERROR_FILE, "cancelled before it started\n")
            return 0
        try:
            body = doc["body"]
            workers, ps, args = cluster_shape(body)
            config = config_from_args(args)
            config = replace(config, tier=local_tier(config.tier))
            timeout = _TIMEOUT.match(str(body["jobSpec"].get("scheduling", {}).get("timeout", "")))

            def started(tasks: object) -> None:
                # A cancel that came before launch_local took SIGTERM over is in the marker: honoured here,
                # inside launch_local's handling, so the run ends "interrupted" with its tasks stopped.
                if (job / CANCEL).exists():
                    raise KeyboardInterrupt("cancelled")

            # Until launch_local takes SIGTERM over, a cancel's signal must not kill this process half way
            # (run.json written, no task started): the cancel marker says it instead.
            signal.signal(signal.SIGTERM, lambda signum, frame: None)
            launch_local(
                config,
                Topology(workers=workers, ps=ps),
                job / RUN_DIR,
                timeout_s=float(timeout[1]) if timeout else None,
                grace_s=grace_s,
                on_start=started,
            )
        except (SubmitRefused, ValueError, KeyError, OSError) as exc:
            write_text_atomic(job / ERROR_FILE, f"{exc}\n")
            return 1
        return 0
    finally:
        lock.release()


def main(argv: Sequence[str] | None = None) -> int:
    import argparse

    p = argparse.ArgumentParser(prog="python -m tierscope.sweep.local", description="The local launcher's scheduler.")
    p.add_argument("root", nargs="?", type=Path)
    p.add_argument("--job", type=Path)
    p.add_argument("--grace", type=float, default=5.0)
    args = p.parse_args(argv)
    if args.job is not None:
        return run_job(args.job, args.grace)
    if args.root is None:
        p.error("give ROOT or --job DIR")
    # The scheduler outlives a sweep killed or interrupted: its terminal's Ctrl-C and hang-up are not for it.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    return schedule(args.root, sys.executable, args.grace)


if __name__ == "__main__":
    sys.exit(main())
