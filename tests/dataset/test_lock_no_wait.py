"""The lock a cron job's collect takes without waiting (``held(root, 0)``): the same ``flock`` on the
same ``.lock`` file that filelock takes, so each excludes the other, and taken without importing
filelock where the file is a plain one a collect left."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from filelock import FileLock, Timeout

from tierscope.dataset.errors import DatasetBusyError
from tierscope.dataset.lock import LOCK_NAME, held


def _dataset_with_lock_file(tmp_path: Path) -> Path:
    root = tmp_path / "ds"
    root.mkdir()
    lock = FileLock(root / LOCK_NAME)
    lock.acquire()
    lock.release()  # the file stays, as after every collect
    return root


def test_a_filelock_holder_makes_the_no_wait_lock_busy(tmp_path: Path) -> None:
    root = _dataset_with_lock_file(tmp_path)
    with (
        FileLock(root / LOCK_NAME),
        pytest.raises(DatasetBusyError, match="locked by another collect"),
        held(root, 0),
    ):
        pass


def test_the_no_wait_lock_keeps_filelock_out_until_released(tmp_path: Path) -> None:
    root = _dataset_with_lock_file(tmp_path)
    other = FileLock(root / LOCK_NAME, timeout=0)
    with held(root, 0):
        with pytest.raises(Timeout):
            other.acquire()
        with pytest.raises(DatasetBusyError), held(root, 0):  # nor a second no-wait taker (its own open file)
            pass
    other.acquire()  # released on leaving the block
    other.release()


def test_it_is_released_when_the_block_raises(tmp_path: Path) -> None:
    root = _dataset_with_lock_file(tmp_path)
    with pytest.raises(RuntimeError), held(root, 0):
        raise RuntimeError
    other = FileLock(root / LOCK_NAME, timeout=0)
    other.acquire()
    other.release()


def test_without_a_lock_file_filelock_takes_it_and_makes_the_file(tmp_path: Path) -> None:
    root = tmp_path / "ds"
    root.mkdir()
    with held(root, 0):
        assert (root / LOCK_NAME).is_file()
        with pytest.raises(Timeout):
            FileLock(root / LOCK_NAME, timeout=0).acquire()


def _takes_filelock(root: Path) -> bool:
    """Whether a fresh process holding ``root``'s lock without waiting imported filelock to take it."""
    code = (
        "import sys\n"
        "from tierscope.dataset.lock import held\n"
        f"with held(__import__('pathlib').Path({str(root)!r}), 0):\n"
        "    print('filelock' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return out.stdout.strip() == "True"


def test_a_lock_file_with_a_second_name_is_left_to_filelock(tmp_path: Path) -> None:
    # A hard link is a name another account may have planted: filelock's own checks judge it.
    root = _dataset_with_lock_file(tmp_path)
    os.link(root / LOCK_NAME, tmp_path / "other-name")
    assert _takes_filelock(root)


def test_the_plain_case_imports_no_filelock(tmp_path: Path) -> None:
    assert not _takes_filelock(_dataset_with_lock_file(tmp_path))
