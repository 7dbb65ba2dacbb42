"""The lock a collect with little to do takes (:func:`tierscope.dataset.lock.held`, its own ``flock``)
and filelock's (every other writer's) exclude each other, across processes and within one, and a
killed holder of either leaves the lock free."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from filelock import FileLock, Timeout

from tierscope.dataset.errors import DatasetBusyError
from tierscope.dataset.lock import LOCK_NAME, held

HOLD_WITH_FILELOCK = (
    "import sys; from filelock import FileLock; l = FileLock(sys.argv[1]); l.acquire(); "
    "print('HELD', flush=True); sys.stdin.readline()"
)
HOLD_WITH_HELD = (
    "import sys; from pathlib import Path; from tierscope.dataset.lock import held\n"
    "with held(Path(sys.argv[1]).parent, 5):\n"
    "    print('HELD', flush=True); sys.stdin.readline()"
)


def _holder(code: str, lock: Path) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", code, str(lock)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "HELD"
    return proc


def _kill(proc: subprocess.Popen[str]) -> None:
    proc.kill()  # SIGKILL
    proc.communicate()  # reaped, its pipes closed


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A dataset directory whose lock file a collect left (filelock created it)."""
    lock = FileLock(tmp_path / LOCK_NAME)
    lock.acquire()
    lock.release()
    return tmp_path


def test_a_filelock_holder_in_another_process_makes_held_wait_then_give_up(root: Path) -> None:
    holder = _holder(HOLD_WITH_FILELOCK, root / LOCK_NAME)
    try:
        started = time.monotonic()
        with pytest.raises(DatasetBusyError, match=r"locked by another collect \(waited 0.3 s\)"), held(root, 0.3):
            pass
        assert time.monotonic() - started >= 0.3  # it waited its timeout, polling
    finally:
        _kill(holder)
    with held(root, 0):  # the killed holder's flock went with it
        pass
    assert (root / LOCK_NAME).is_file()


def test_held_in_another_process_makes_filelock_wait_and_its_death_frees_it(root: Path) -> None:
    holder = _holder(HOLD_WITH_HELD, root / LOCK_NAME)
    try:
        with pytest.raises(Timeout):
            FileLock(root / LOCK_NAME, timeout=0.2).acquire()
    finally:
        _kill(holder)
    lock = FileLock(root / LOCK_NAME, timeout=0)
    lock.acquire()  # free again
    lock.release()


def test_within_one_process_each_excludes_the_other(root: Path) -> None:
    with FileLock(root / LOCK_NAME), pytest.raises(DatasetBusyError), held(root, 0):
        pass
    with held(root, 0):
        with pytest.raises(Timeout):
            FileLock(root / LOCK_NAME, timeout=0).acquire()
        with pytest.raises(DatasetBusyError), held(root, 0):
            pass
    with held(root, 0):  # released at the end of the block
        pass


def test_without_a_lock_file_it_locks_through_filelock(tmp_path: Path) -> None:
    with held(tmp_path, 0):
        assert (tmp_path / LOCK_NAME).is_file()
        with pytest.raises(Timeout):
            FileLock(tmp_path / LOCK_NAME, timeout=0).acquire()
    FileLock(tmp_path / LOCK_NAME, timeout=0).acquire()


def test_a_link_as_the_lock_file_is_left_to_filelock(tmp_path: Path) -> None:
    (tmp_path / "elsewhere").write_text("")
    (tmp_path / LOCK_NAME).symlink_to(tmp_path / "elsewhere")
    # filelock refuses a link too (it opens with O_NOFOLLOW): an error, never a lock of the link's target
    with pytest.raises(OSError), held(tmp_path, 0):
        pass
