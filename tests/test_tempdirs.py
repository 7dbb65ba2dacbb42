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
