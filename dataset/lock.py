"""One writer at a time per dataset: the ``.lock`` file, held with ``flock`` via filelock.

The kernel releases an ``flock`` when its holder dies, even by SIGKILL, so a killed
collect never leaves a lock that blocks the next one: the lock *file* may stay, but nobody
holds it. Whoever takes the lock first finishes what a killed writer left half done
(temporary files, an interrupted compaction).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from filelock import FileLock, Timeout

from tierscope.dataset import journal
from tierscope.dataset.errors import DatasetBusyError, DatasetError
from tierscope.dataset.store import Dataset


@contextmanager
def locked(dataset: Dataset, timeout: float = 60.0, recover_first: bool = True) -> Iterator[Dataset]:
    """Hold ``dataset``'s lock for the ``with`` block, after recovering from a killed writer
    (unless ``recover_first`` is False: ``doctor --fix`` must first move a corrupt journal aside).

    Waits up to ``timeout`` seconds (0: do not wait) for another holder, then raises
    :class:`DatasetBusyError` (exit code 75 in the CLI).
    """
    if dataset.root.exists() and not dataset.root.is_dir():
        raise DatasetError(f"{dataset.root} is a file, not a dataset directory; pass --dataset a directory")
    dataset.root.mkdir(parents=True, exist_ok=True)
    lock = FileLock(dataset.lock_path, timeout=timeout)
    try:
        lock.acquire()
    except Timeout:
        raise DatasetBusyError(
            f"dataset {dataset.root} is locked by another collect (waited {timeout:g} s); try again later"
        ) from None
    try:
        if recover_first:
            recover(dataset)
        yield dataset
    finally:
        lock.release()


def recover(dataset: Dataset) -> None:
    """Remove temporary files and finish interrupted compactions. Call only holding the lock."""
    dataset.remove_temp_files()
    journal.finish(dataset.root)
