"""Owned temporary directories (tierscope.tempdirs): one a killed process left is removed by the next user of its
prefix; one whose process lives is left alone."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tierscope import tempdirs
from tierscope.analysis.batches import SPILL_PREFIX

HOLD = """
import sys, time
from tierscope import tempdirs
from tierscope.analysis.batches import SPILL_PREFIX
with tempdirs.owned_dir(sys.argv[1]) as path:
    (path / "piece-0.parquet").write_bytes(b"x" * 1000)  # a spill file
    print(path, flush=True)
    time.sleep(60)
"""


def _holder() -> tuple[subprocess.Popen[str], Path]:
    proc = subprocess.Popen([sys.executable, "-c", HOLD, SPILL_PREFIX], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    return proc, Path(proc.stdout.readline().strip())


def _age(path: Path) -> None:
    """As if made long ago: a fresh directory is never swept (its owner may be about to lock it)."""
    old = time.time() - 2 * tempdirs.SWEEP_AGE_S
    os.utime(path, (old, old))


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX file locks")
def test_a_owned_dir_of_a_killed_process_is_removed_and_a_live_ones_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempdirs.tempfile, "tempdir", None)  # gettempdir() reads TMPDIR again
    killed, left = _holder()
    killed.send_signal(signal.SIGKILL)  # no finally, no atexit: the spill stays behind
    killed.wait()
    alive, kept = _holder()
    try:
        _age(left)
        _age(kept)
        assert (left / "piece-0.parquet").is_file()
        with tempdirs.owned_dir(SPILL_PREFIX) as mine:
            assert mine.is_dir()
            assert not left.exists()  # its owner is dead: nobody holds its lock
            assert (kept / "piece-0.parquet").is_file()  # its owner still runs
        assert not mine.exists()
    finally:
        alive.kill()
        alive.wait()


READ_AND_HOLD = """
import sys, time
from tierscope.dataset.store import Dataset
ds = Dataset(sys.argv[1])
ds.read("steps")  # pins the data files: links under a tierscope-pins-* directory
print(ds._pins.farm, flush=True)
time.sleep(60)
"""


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="readers pin files through /proc/self/fd")
def test_a_readers_pins_directory_a_sigkill_left_is_removed_by_the_next_reader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tierscope
    from tierscope.cli import app
    from tierscope.dataset.store import PINS_PREFIX, Dataset

    log = Path(tierscope.__file__).parent / "data" / "cloudml-tiers-2016" / "basic.log"  # the bundled log
    dataset = tmp_path / "ds"
    got = CliRunner().invoke(app, ["collect", "files", str(log), "-d", str(dataset), "--run-id", "r", "--quiet"])
    assert got.exit_code == 0, got.output
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = {**os.environ, "TMPDIR": str(temp)}
    proc = subprocess.Popen(
        [sys.executable, "-c", READ_AND_HOLD, str(dataset)], stdout=subprocess.PIPE, text=True, env=env
    )
    assert proc.stdout is not None
    left = Path(proc.stdout.readline().strip())
    proc.send_signal(signal.SIGKILL)  # no finalizer runs: the farm stays behind
    proc.wait()
    assert left.is_dir() and left.name.startswith(PINS_PREFIX)
    _age(left)
    monkeypatch.setenv("TMPDIR", str(temp))
    monkeypatch.setattr(tempdirs.tempfile, "tempdir", None)
    reader = Dataset(dataset)
    assert reader.read("steps").height > 0
    assert not left.exists()  # swept: nobody held its lock
    assert reader._pins.farm is not None and reader._pins.farm.is_dir()  # the live reader's own is kept


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX file locks")
def test_a_directory_left_without_its_lock_file_is_swept_once_old(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A process killed between making its directory and locking it (or half way through removing it) left
    one without ``.owner``, which no sweep removed: 455 of them were found in one machine's /tmp."""
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempdirs.tempfile, "tempdir", None)
    old, young = tmp_path / f"{SPILL_PREFIX}old", tmp_path / f"{SPILL_PREFIX}young"
    for made in (old, young):
        (made / "sub").mkdir(parents=True)
        (made / "sub" / "piece-0.parquet").write_bytes(b"x")
    _age(old)
    (tmp_path / f"{SPILL_PREFIX}file").write_text("not a directory")  # never touched
    assert tempdirs.sweep(SPILL_PREFIX) == 1
    assert not old.exists()
    assert (young / "sub" / "piece-0.parquet").is_file()  # its maker may be about to lock it
    assert (tmp_path / f"{SPILL_PREFIX}file").is_file()
