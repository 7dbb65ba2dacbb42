"""Ctrl-C (SIGINT) and SIGTERM stop a real ``tierscope`` process wherever they land: exit 130
(SIGINT) or 143 (SIGTERM) and one line on stderr; a collect leaves a dataset ``doctor`` finds
clean, with nothing temporary, and the next collect stores the rest of the log exactly once.

One child starts with SIGINT ignored, as a shell without job control starts every background
command (a script's ``tierscope collect ... &``: how the defect was found). It must ignore the
signal, as every Unix program does: polars hooks SIGINT when it is imported and stopped such a
collect only when the signal landed inside one of its queries, so its exit depended on the instant.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.ingest_helpers import collect, step_line, stored_steps
from tierscope.collector.collect import STATE_CHECKS
from tierscope.dataset import doctor
from tierscope.dataset.store import Dataset

pytestmark = pytest.mark.skipif(not Path("/proc/self/fd").exists(), reason="watches the children in /proc (Linux)")

TIERSCOPE = str(Path(sys.executable).with_name("tierscope"))
#: 40,000 step lines (about 4.2 MB, steps 1..40000) read in 20 kB batches: about 200 batches of
#: some 190 lines, so a signal within a second of the first stored batch lands mid-collect.
LINES = 40_000
BATCH = "20000"
KEPT = "what was stored so far is kept; run the same collect again to carry on"


def _write_log(path: Path) -> None:
    with path.open("w") as fh:
        fh.writelines(step_line(s, task=s % 4) for s in range(1, LINES + 1))


def _start(args: list[str], sigint_ignored: bool = False) -> subprocess.Popen[str]:
    """``tierscope ARGS`` as cron or a shell starts it; with ``sigint_ignored``, as a shell
    without job control starts ``tierscope ARGS &``."""
    disposition = signal.SIG_IGN if sigint_ignored else signal.SIG_DFL

    def before_exec() -> None:
        signal.signal(signal.SIGINT, disposition)

    return subprocess.Popen(
        [TIERSCOPE, *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=before_exec,  # Popen has no option for a disposition; this sets one, nothing else
    )


def _wait_for(done: object, proc: subprocess.Popen[str], what: str, timeout_s: float = 120.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not done():  # type: ignore[operator]
        assert proc.poll() is None, (what, proc.communicate())
        assert time.monotonic() < deadline, f"not in time: {what}"
        time.sleep(0.002)


def _collect_args(log: Path, ds: Path, *extra: str) -> list[str]:
    return ["collect", "files", str(log), "-d", str(ds), "--run-id", "big", "--settle", "0", "-q", *extra]


# (signal, seconds after the first stored batch, SIGINT ignored by the parent). Irregular delays,
# so the signals fall in different places of a batch (tens of ms each: read on one thread, parse
# in the main thread's polars calls, store and commit on two more while the main thread waits).
STOPS = [
    (signal.SIGINT, 0.0, True),
    (signal.SIGINT, 0.31, False),
    (signal.SIGINT, 0.13, False),
    (signal.SIGTERM, 0.07, False),
]


def test_a_signal_mid_collect_stops_it_cleanly_and_the_next_collect_stores_the_rest_once(tmp_path: Path) -> None:
    log = tmp_path / "big.log"
    _write_log(log)
    sets = [tmp_path / f"ds{n}" for n in range(len(STOPS))]
    procs = [
        _start(_collect_args(log, ds, "--batch-bytes", BATCH), ignored)
        for ds, (_, _, ignored) in zip(sets, STOPS, strict=True)
    ]
    for ds, proc in zip(sets, procs, strict=True):
        _wait_for(lambda ds=ds: any(ds.glob("steps/run_id=big/part-*.parquet")), proc, f"a batch stored in {ds}")
    # The children started together: each signal at its delay after them all storing.
    started = time.monotonic()
    for n in sorted(range(len(STOPS)), key=lambda n: STOPS[n][1]):
        sig, delay_s, _ = STOPS[n]
        time.sleep(max(0.0, started + delay_s - time.monotonic()))
        procs[n].send_signal(sig)
    outcomes = [(proc.wait(timeout=120), proc.communicate()[1]) for proc in procs]
    # All at once, so a failure shows which signals were lost (exit 0, no line) or not ignored.
    assert outcomes == [
        (0, "") if ignored  # the collect ran to its end (-q: nothing printed)
        else (130, f"interrupted: {KEPT}\n") if sig == signal.SIGINT
        else (143, f"interrupted by SIGTERM: {KEPT}\n")
        for sig, _, ignored in STOPS
    ]  # fmt: skip
    for ds, (_, _, ignored) in zip(sets, STOPS, strict=True):
        if ignored:  # every line read once: steps 1..40000
            assert stored_steps(Dataset(ds)) == list(range(1, LINES + 1)), ds
            continue
        # A clean stop: the batches under way were stored or dropped whole, nothing temporary left.
        assert Dataset(ds).temp_files() == [], ds
        assert doctor.check(Dataset(ds), STATE_CHECKS).problems == [], ds
        kept = stored_steps(Dataset(ds))
        # The log's first lines, each once (batches are committed whole and in order), and not
        # all of them: the signal landed mid-collect.
        assert 0 < len(kept) < LINES and kept == list(range(1, len(kept) + 1)), (ds, len(kept))
        # The next collect reads from the saved offset: the 40,000 lines hold steps 1..40000,
        # one record each, so the dataset then holds exactly those, none twice.
        collect(Dataset(ds), log, run_id="big", settle_s=0)
        assert stored_steps(Dataset(ds)) == list(range(1, LINES + 1)), ds


@pytest.fixture(scope="module")
def analysed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A dataset of the 40,000-record log in some 40 files (100 kB batches), for summary and report:
    their reads of it take long enough to be seen (:func:`_reading`)."""
    root = tmp_path_factory.mktemp("analysed")
    _write_log(root / "big.log")
    collect(Dataset(root / "ds"), root / "big.log", run_id="big", settle_s=0, batch_bytes=100_000)
    return root / "ds"


def _reading(pid: int, ds: Path) -> bool:
    """Whether process ``pid`` has one of ``ds``'s data files open: the analysis is under way."""
    try:
        opened = [str(fd.readlink()) for fd in Path(f"/proc/{pid}/fd").iterdir()]
    except (FileNotFoundError, ProcessLookupError):  # ended, or a file closed meanwhile
        return False
    return any(o.startswith(str(ds)) and o.endswith(".parquet") for o in opened)


@pytest.mark.parametrize(
    ("command", "sig", "ignored"),
    [(["summary"], signal.SIGINT, False), (["report", "--out", "REPORT"], signal.SIGTERM, False)],
)
def test_a_signal_during_summary_or_report_exits_130_or_143_with_one_line(
    analysed: Path, tmp_path: Path, command: list[str], sig: signal.Signals, ignored: bool
) -> None:
    args = [str(tmp_path / "r.html") if a == "REPORT" else a for a in command]
    proc = _start([*args, "-d", str(analysed)], ignored)
    _wait_for(lambda: _reading(proc.pid, analysed), proc, "the dataset read")
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=120)
    expected = (130, "interrupted\n") if sig == signal.SIGINT else (143, "interrupted by SIGTERM\n")
    assert (proc.returncode, _without_polars_panic(err)) == expected


def _without_polars_panic(err: str) -> str:
    """``err`` less the panic text polars' Rust side prints itself when the interrupt lands while the main
    thread runs a Python callback for it (``thread '<unnamed>' panicked at crates/polars-python/...:
    PyErr { type: <class 'KeyboardInterrupt'> ...``, with its backtrace): polars writes it before
    tierscope gets the exception, so nothing here can keep it off stderr. Anything else stays."""
    if "panicked at crates/polars" not in err or "KeyboardInterrupt" not in err:
        return err
    lines = err.splitlines(keepends=True)
    return lines[-1] if lines and lines[-1].startswith("interrupted") else err


@pytest.mark.parametrize("after_s", [0.0, 0.15])
def test_a_second_signal_once_report_has_said_it_stopped_changes_nothing(
    analysed: Path, tmp_path: Path, after_s: float
) -> None:
    # The first signal stops the analysis while the renderer is still being imported on a
    # thread of its own (tierscope.ahead). The process then waited for those imports at exit (0.2 s
    # to 1 s), and a second signal there printed "Exception ignored in: <module 'threading'>" and a
    # traceback: 0.15 s after the line landed in that wait. Now the process is gone by then, or
    # ignores the signal.
    proc = _start(["report", "--out", str(tmp_path / "r.html"), "-d", str(analysed)])
    _wait_for(lambda: _reading(proc.pid, analysed), proc, "the dataset read")
    proc.send_signal(signal.SIGTERM)
    assert proc.stderr is not None
    line = proc.stderr.readline()  # printed once the exit code is decided
    time.sleep(after_s)
    proc.send_signal(signal.SIGINT)  # a process that has ended but not been waited for takes it and ignores it
    rest = proc.stderr.read()
    assert (proc.wait(timeout=120), line, rest) == (143, "interrupted by SIGTERM\n", "")
    assert not (tmp_path / "r.html").exists()
