"""Kill safety, stale locks and concurrent collects, with real processes and SIGKILL."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from filelock import FileLock

from tests.support.ingest_helpers import step_line, stored_steps
from tierscope.collector.collect import STATE_CHECKS
from tierscope.dataset import doctor
from tierscope.dataset.store import Dataset

# Runs one collect. With KILL_AT=<n>:<before|after> it stops at the n-th durable rename
# (data file or state file) and waits on stdin, so the test can SIGKILL it exactly there.
DRIVER = """
import os, sys
from pathlib import Path
import tierscope.atomic, tierscope.dataset.store
from tierscope.collector.collect import collect_runs
from tierscope.dataset.store import Dataset
from tierscope.collector.manifest import RunSpec

real_commit = tierscope.atomic.commit
calls = 0
target, where = (os.environ.get("KILL_AT") or "0:none").split(":")

def commit(tmp, final):
    global calls
    calls += 1
    if calls == int(target) and where == "before":
        print("BLOCK", flush=True); sys.stdin.readline()
    real_commit(tmp, final)
    if calls == int(target) and where == "after":
        print("BLOCK", flush=True); sys.stdin.readline()

tierscope.atomic.commit = commit  # state documents: write_bytes_atomic looks it up there
tierscope.dataset.store.commit = commit
print("START", flush=True)
log, ds, batch = sys.argv[1], sys.argv[2], int(sys.argv[3])
collect_runs(Dataset(ds), [RunSpec("big", "BASIC", [Path(log)])], lock_timeout=10, batch_bytes=batch)
print("DONE", flush=True)
"""

# Scaled to the batch, not to a real log's size: the first run finds some 15 batches (30,500 lines of
# about 100 bytes, 3.1 MB, in 200 kB batches), each later run at least its 500 lines of growth (50 kB,
# under a batch) on top of what the kills left, and the final run all that is left, in many batches.
LINES = 40_000
GROWTH = 500  # lines appended before each run, as a live log grows between cron runs
BATCH = 200_000  # bytes per append (collect's batch_bytes)


def _start(driver: Path, log: Path, ds: Path, kill_at: str | None = None) -> subprocess.Popen[str]:
    # No PYTHONPATH=ROOT: the tierscope/ folder of the working tree would hide the installed rooms.
    env = {**os.environ, "KILL_AT": kill_at or ""}
    return subprocess.Popen(
        [sys.executable, str(driver), str(log), str(ds), str(BATCH)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )


def _kill(proc: subprocess.Popen[str]) -> None:
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert proc.stdin and proc.stdout
    proc.stdin.close()
    proc.stdout.close()


def test_sigkill_at_20_moments_then_rerun_holds_every_line_exactly_once(tmp_path: Path) -> None:
    log = tmp_path / "big.log"
    written = LINES - 20 * GROWTH
    with log.open("w") as fh:
        fh.writelines(step_line(s, task=s % 4) for s in range(1, written + 1))
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER)
    ds = tmp_path / "ds"
    rng = random.Random(20)
    before_kills = temp_left = 0
    for n in range(20):
        # The log grew since the last run, so every run has at least a batch to store:
        # a data file and the state file, two renames.
        with log.open("a") as fh:
            fh.writelines(step_line(s, task=s % 4) for s in range(written + 1, written + GROWTH + 1))
        written += GROWTH
        if n % 2 == 0:
            # Exactly at a rename: before it (the temporary file is written, not yet in
            # place) or after it (data stored, the offset not yet saved, or the reverse).
            where = "before" if n % 4 == 0 else "after"
            proc = _start(driver, log, ds, f"{rng.randint(1, 2)}:{where}")
            assert proc.stdout is not None
            assert proc.stdout.readline().strip() == "START"
            assert proc.stdout.readline().strip() == "BLOCK"
            _kill(proc)
            if where == "before":
                before_kills += 1
                temp_left += bool(Dataset(ds).temp_files())
        else:
            # At a random moment: during import, parsing, a Parquet write, an fsync...
            proc = _start(driver, log, ds)
            assert proc.stdout is not None
            proc.stdout.readline()  # START: the interpreter is up
            time.sleep(rng.uniform(0.0, 0.6))
            _kill(proc)
    assert written == LINES
    assert temp_left == before_kills == 5  # each kill before a rename left its temporary file
    final = _start(driver, log, ds)
    out, _ = final.communicate(timeout=300)
    assert final.returncode == 0 and "DONE" in out
    # Every line once: steps 1..LINES, no repeats, nothing missing.
    assert stored_steps(Dataset(ds)) == list(range(1, LINES + 1))
    report = doctor.check(Dataset(ds), STATE_CHECKS)
    assert report.problems == [] and Dataset(ds).temp_files() == []


def test_a_lock_held_by_a_killed_process_does_not_block(tmp_path: Path) -> None:
    ds = tmp_path / "ds"
    ds.mkdir()
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys; from filelock import FileLock; l = FileLock(sys.argv[1]); l.acquire(); "
            "print('HELD', flush=True); sys.stdin.readline()",
            str(ds / ".lock"),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == "HELD"
    busy = _cli(["collect", "files", str(_small_log(tmp_path)), "-d", str(ds), "--lock-timeout", "0"])
    assert busy.returncode == 75
    _kill(holder)
    assert (ds / ".lock").exists()  # the file stays; nobody holds it
    ok = _cli(["collect", "files", str(_small_log(tmp_path)), "-d", str(ds), "--lock-timeout", "0", "--quiet"])
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout == "" and ok.stderr == ""


def test_busy_dataset_exits_75_with_one_line_on_stderr(tmp_path: Path) -> None:
    ds = tmp_path / "ds"
    ds.mkdir()
    with FileLock(ds / ".lock"):
        busy = _cli(["collect", "files", str(_small_log(tmp_path)), "-d", str(ds), "--lock-timeout", "0.2", "-q"])
    assert busy.returncode == 75
    assert busy.stdout == ""
    lines = busy.stderr.strip().splitlines()
    assert len(lines) == 1 and "locked by another collect" in lines[0] and "0.2 s" in lines[0]


def test_two_collects_started_together_one_waits_or_exits_75(tmp_path: Path) -> None:
    log = tmp_path / "a.log"
    with log.open("w") as fh:
        fh.writelines(step_line(s) for s in range(1, 20_001))
    ds = tmp_path / "ds"
    args = ["collect", "files", str(log), "-d", str(ds), "--run-id", "r", "-q"]
    # One waits up to 60 s for the other: both succeed. The other does not wait: it
    # succeeds (it ran first or after) or exits 75.
    waiting = _popen_cli([*args, "--lock-timeout", "60"])
    impatient = _popen_cli([*args, "--lock-timeout", "0"])
    waiting.communicate(timeout=120)
    impatient.communicate(timeout=120)
    assert waiting.returncode == 0
    assert impatient.returncode in (0, 75)
    assert stored_steps(Dataset(ds)) == list(range(1, 20_001))


def _small_log(tmp_path: Path) -> Path:
    log = tmp_path / "small.log"
    log.write_text("".join(step_line(s) for s in (1, 2, 3)))
    return log


def _popen_cli(args: list[str]) -> subprocess.Popen[str]:
    # From outside the repository: "-m" puts the working directory first on sys.path, and the
    # tierscope/ folder of the working tree would hide the installed package's rooms.
    return subprocess.Popen(
        [sys.executable, "-m", "tierscope", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tempfile.gettempdir(),
    )


def _cli(args: list[str]) -> subprocess.CompletedProcess[str]:
    proc = _popen_cli(args)
    out, err = proc.communicate(timeout=120)
    return subprocess.CompletedProcess(args, proc.returncode, out, err)
