"""One writer at a time per dataset: the ``.lock`` file, held with ``flock`` via filelock (a cron job's
collect, which does not wait, ``flock``-s the file itself: :func:`held`) (on Cloud Storage: the lease object
``.lock``, :class:`tierscope.dataset.objects.Lease`).

The kernel releases an ``flock`` when its holder dies, even by SIGKILL, so a killed
collect never leaves a lock that blocks the next one: the lock *file* may stay, but nobody
holds it. A lease on Cloud Storage is taken over once its expiry has passed (a killed holder
stops renewing it). Whoever takes the lock first finishes what a killed writer left half done
(temporary files, an interrupted compaction).
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from tierscope.dataset import journal, state
from tierscope.dataset.errors import DatasetBusyError, DatasetError, StateCorruptError, a_file_not_a_dataset
from tierscope.dataset.objects import GsPath, Lease, LeaseBusy

if TYPE_CHECKING:
    from filelock import FileLock

    from tierscope.dataset.store import Dataset

#: The lock file in a dataset's root (:attr:`tierscope.dataset.store.Dataset.lock_path`).
LOCK_NAME = ".lock"
#: How long :func:`let_waiters_in` leaves the lock free: several polls of a waiter (filelock polls every
#: 0.05 s, a lease every 0.25 s at most), so a collect waiting for the lock takes it.
LET_IN_PAUSE_S = 0.6
#: The lock :func:`locked` holds for each dataset (by ``id``), for :func:`let_waiters_in`.
_HELD: dict[int, FileLock | Lease] = {}


@contextmanager
def locked(dataset: Dataset, timeout: float = 60.0, recover_first: bool = True) -> Iterator[Dataset]:
    """Hold ``dataset``'s lock for the ``with`` block, after recovering from a killed writer
    (unless ``recover_first`` is False: ``doctor --fix`` must first move a corrupt journal aside).

    Waits up to ``timeout`` seconds (0: do not wait) for another holder, then raises
    :class:`DatasetBusyError` (exit code 75 in the CLI).
    """
    if dataset.root.exists() and not dataset.root.is_dir():
        raise DatasetError(a_file_not_a_dataset(dataset.root))
    dataset.root.mkdir(parents=True, exist_ok=True)
    lock = _lock(dataset, timeout)
    _acquire(lock, dataset.root, timeout)
    dataset.holding_lock = True
    _HELD[id(dataset)] = lock
    try:
        if recover_first:
            recover(dataset)
        yield dataset
    finally:
        _HELD.pop(id(dataset), None)
        dataset.holding_lock = False
        lock.release()


def let_waiters_in(dataset: Dataset, pause: float = LET_IN_PAUSE_S) -> None:
    """Release the lock :func:`locked` holds on ``dataset`` for ``pause`` seconds, so that another
    collect waiting for it takes it, then take it again (waiting as long as :func:`locked` did) and
    recover what a writer killed meanwhile left. Call only at a safe point: everything written is
    committed, and whatever was loaded of the dataset's state under the lock is loaded again after.

    Raises :class:`DatasetBusyError` if the lock is not free again in time: what was
    written before is kept, the ``with`` block of :func:`locked` then holds no lock."""
    lock = _HELD[id(dataset)]
    dataset.holding_lock = False
    lock.release()
    time.sleep(pause)
    try:
        _acquire(lock, dataset.root, float(lock.timeout))
    except DatasetBusyError as exc:
        raise DatasetBusyError(
            f"{exc} (this collect let another take it between two files; what it read before is stored)"
        ) from None
    dataset.holding_lock = True
    recover(dataset)


def _lock(dataset: Dataset, timeout: float) -> FileLock | Lease:
    lock_path = dataset.lock_path
    if isinstance(lock_path, GsPath):
        return Lease(lock_path, timeout)
    from filelock import FileLock

    return FileLock(lock_path, timeout=timeout)


def _acquire(lock: FileLock | Lease, root: Path, timeout: float) -> None:
    from filelock import Timeout

    try:
        lock.acquire()
    except (Timeout, LeaseBusy):
        raise _busy(root, timeout) from None


def _busy(root: Path, timeout: float) -> DatasetBusyError:
    return DatasetBusyError(f"dataset {root} is locked by another collect (waited {timeout:g} s); try again later")


@contextmanager
def held(root: Path, timeout: float = 60.0) -> Iterator[None]:
    """Hold the lock of the local dataset directory ``root`` (which exists) for the ``with`` block,
    without a :class:`~tierscope.dataset.store.Dataset` and without recovering: for a reader of
    its state that must see no writer half way (:mod:`tierscope.collector.unchanged`), and that
    leaves any recovery to a command that takes :func:`locked`. Raises :class:`DatasetBusyError`
    after ``timeout`` seconds.

    With ``timeout`` 0 (a cron job's collect, which never waits) the lock file a collect left is
    ``flock``-ed directly (:func:`_flock_now`), the very lock filelock takes on it: importing filelock (4.x:
    ``logging``, ``inspect``, ``secrets``...) cost more than the rest of a collect that finds nothing new.
    Any case but the plain one (no lock file yet, a link, another owner, no ``flock`` on the file system)
    is filelock's, as before."""
    fd = _flock_now(root / LOCK_NAME) if timeout <= 0 else None
    if fd is not None:
        try:
            yield
        finally:
            os.close(fd)  # closing the only descriptor of the open file releases its flock
        return
    from filelock import FileLock

    lock = FileLock(root / LOCK_NAME, timeout=timeout)
    _acquire(lock, root, timeout)
    try:
        yield
    finally:
        lock.release()


#: What ``flock`` says where another holds the lock (some file systems say EACCES), as filelock reads it.
_CONTENDED = frozenset({errno.EAGAIN, errno.EWOULDBLOCK, errno.EACCES})


def _flock_now(path: Path) -> int | None:
    """A descriptor of the existing lock file ``path`` holding its ``flock``, taken without waiting;
    raises :class:`DatasetBusyError` if another process holds it; None where filelock must take it
    (the file missing or not a plain file of this user's with one name, ``flock`` failing otherwise, the
    file replaced meanwhile), with nothing held."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_nlink != 1 or st.st_uid != os.geteuid():
            os.close(fd)
            return None
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        if not os.path.samestat(os.lstat(path), st):
            os.close(fd)  # another name now: the lock waiters share is the new file's
            return None
    except OSError as exc:
        os.close(fd)
        if exc.errno in _CONTENDED:
            raise _busy(path.parent, 0) from None
        return None
    except BaseException:
        os.close(fd)
        raise
    return fd


def recover(dataset: Dataset) -> int:
    """Move unreadable state documents aside (a notice each), finish interrupted compactions,
    then remove temporary files; returns how many compactions were finished. Call only
    holding the lock."""
    for error in state.unreadable(dataset.root):
        dataset.set_aside_state(error)
    return _finish(dataset)


def _finish(dataset: Dataset) -> int:
    # Compactions first: a staged merged file is the only copy of rows whose files step 3 deleted.
    done = journal.finish(dataset.root)
    dataset.remove_temp_files()
    return done


def recover_if_free(dataset: Dataset) -> int:
    """What a reader does on finding a compaction unfinished: if nobody holds the lock, its
    holder died, so take it (without waiting) and finish the compaction, so plain Parquet
    readers see every record again. Returns how many were finished (0 if the lock is held,
    by a writer that finishes it itself, or the dataset cannot be written by this user)."""
    if not dataset.lock_path.exists():
        return 0
    from filelock import Timeout

    lock = _lock(dataset, 0)
    try:
        lock.acquire()
    except (Timeout, LeaseBusy, OSError, DatasetError):  # held, or read-only: read through the journal as it is
        return 0
    dataset.holding_lock = True
    try:
        return _finish(dataset)
    except StateCorruptError:
        return 0  # a damaged journal: the reader says so itself; `doctor --fix` moves it aside
    finally:
        dataset.holding_lock = False
        lock.release()
