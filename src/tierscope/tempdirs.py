"""Private temporary directories a killed process does not leave behind for good (stdlib only).

A run taken in pieces spills its records to a temporary directory (hundreds of MB for a run of
20 M records). :class:`tempfile.TemporaryDirectory` removes it on exit, but not after a SIGKILL
(an OOM kill, ``kill -9``, a timeout): each such kill left one in the temporary folder for good.
So the owner of such a directory holds a lock (``flock``) on a file inside it while it lives,
and whoever opens the next directory of the same prefix first removes those whose lock nobody
holds: the kernel drops a dead process's locks, whatever pid namespace it ran in.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

try:
    import fcntl
except ImportError:  # Windows: no flock; a killed process's directory stays there, as before
    fcntl = None  # type: ignore[assignment]

#: The file whose lock says the directory's owner still runs.
LOCK_NAME = ".owner"
#: A directory younger than this is never removed: its owner may not have taken its lock yet.
SWEEP_AGE_S = 60.0


@contextmanager
def owned_dir(prefix: str) -> Iterator[Path]:
    """A new private directory ``<temp folder>/<prefix>XXXXXXXX``, removed with its contents on
    exit; the abandoned ones of ``prefix`` (:func:`sweep`) are removed first. Raises :class:`OSError`
    if it cannot be made (an unwritable or full temporary folder)."""
    path, fd = claim(prefix)
    try:
        yield path
    finally:
        release(path, fd)


def claim(prefix: str) -> tuple[Path, int]:
    """:func:`owned_dir` for an owner whose life is no ``with`` block (an object's): the new
    directory and the descriptor holding its lock (-1 without ``flock``), both for :func:`release`.
    Raises :class:`OSError` if it cannot be made."""
    sweep(prefix)
    path = Path(tempfile.mkdtemp(prefix=prefix))
    if fcntl is None:
        return path, -1
    try:
        fd = os.open(path / LOCK_NAME, os.O_CREAT | os.O_RDWR, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BaseException:  # a Ctrl-C or SIGTERM here too (tierscope.stopping raises them as exceptions)
        shutil.rmtree(path, ignore_errors=True)
        raise
    return path, fd


def release(path: Path, fd: int) -> None:
    """Remove a :func:`claim`'s directory with its contents, then drop its lock; never raises."""
    shutil.rmtree(path, ignore_errors=True)
    if fd >= 0:
        os.close(fd)


def sweep(prefix: str) -> int:
    """Remove the directories ``<temp folder>/<prefix>*`` older than :data:`SWEEP_AGE_S` whose owner
    is gone: a lock file nobody holds, or no lock file at all (a process killed between making the
    directory and locking it, or while removing it: each left one that no sweep removed, hundreds on a
    busy machine). Another user's is left alone. Returns how many were removed; never raises."""
    if fcntl is None:
        return 0
    removed = 0
    try:
        found = list(Path(tempfile.gettempdir()).glob(f"{prefix}*"))
    except OSError:
        return 0
    for old in found:
        try:
            status = old.lstat()
            if time.time() - status.st_mtime < SWEEP_AGE_S or status.st_uid != os.getuid():
                continue
            fd = os.open(old / LOCK_NAME, os.O_RDWR | os.O_NOFOLLOW)
        except FileNotFoundError:
            if old.is_dir() and not old.is_symlink():  # no lock file: nobody can own it
                shutil.rmtree(old, ignore_errors=True)
                removed += not old.exists()
            continue
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            continue  # held: its owner runs
        else:
            shutil.rmtree(old, ignore_errors=True)
            removed += 1
        finally:
            os.close(fd)
    return removed
