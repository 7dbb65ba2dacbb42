"""Durable writes for the dataset: the POSIX primitives of :mod:`tierscope.atomic` for a local
dataset, the object-store operations of :mod:`tierscope.dataset.objects` for one on Cloud Storage.

Used for data files (:mod:`tierscope.dataset.store`, :mod:`tierscope.dataset.compact`) and
state documents (:mod:`tierscope.dataset.state`). The POSIX primitive lives outside the dataset
room because the trainer, which may not import the dataset, writes ``run.json`` the same way.
A kill leaves at most a ``.tmp-*`` file (:data:`TMP_PREFIX`), which the dataset's readers
ignore and the next locked writer removes; on Cloud Storage not even that (an upload that did
not complete leaves no object).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from tierscope import atomic
from tierscope.atomic import TMP_PREFIX, writing
from tierscope.dataset.objects import GsPath

__all__ = [
    "TMP_PREFIX",
    "commit",
    "fsync_dir",
    "move",
    "read_regular",
    "remove",
    "temp_path",
    "write_bytes_atomic",
    "writing",
]


def fsync_dir(path: Path | GsPath) -> None:
    """Flush ``path``'s directory entries (nothing to do on Cloud Storage)."""
    if not isinstance(path, GsPath):
        atomic.fsync_dir(path)


def temp_path(final: Path | GsPath) -> Path:
    """A unique temporary name next to ``final``; a local one for an object (uploaded by :func:`commit`)."""
    if isinstance(final, GsPath):
        import tempfile  # here: a collect of local files need not import it

        return Path(tempfile.gettempdir()) / f"{TMP_PREFIX}{os.urandom(4).hex()}-{final.name}"
    return atomic.temp_path(final)


def commit(tmp: Path | GsPath, final: Path | GsPath) -> None:
    """Make ``tmp`` visible as ``final`` whole or not at all: a rename locally; on Cloud Storage
    a write-once upload of the local ``tmp`` (removed after), or for an object ``tmp`` a copy
    and a delete. An object ``final`` is never replaced (:class:`~.objects.StateConflictError`)."""
    if not isinstance(final, GsPath):
        atomic.commit(tmp, final)  # type: ignore[arg-type]
        return
    if isinstance(tmp, GsPath):
        if final.store.stat(final.key) is None:  # a killed rename may have copied already
            final.store.copy(tmp.key, final.key)
        tmp.unlink(missing_ok=True)
        return
    final.store.write_once(final.key, tmp)
    tmp.unlink(missing_ok=True)


def read_regular(path: Path, limit: int | None = None, *, follow_links: bool = True) -> bytes | None:
    """The bytes of the local file ``path``, or None if it is not a regular file of at most
    ``limit`` bytes: a FIFO (opened without waiting for a writer), a device (``/dev/zero`` would
    be read forever), a directory, or with ``follow_links`` False a symbolic link. Raises
    :class:`FileNotFoundError` if there is none, :class:`OSError` if it cannot be read."""
    flags = os.O_RDONLY | os.O_NONBLOCK | (0 if follow_links else os.O_NOFOLLOW)
    try:
        fd = os.open(path, flags)
    except OSError:
        if not follow_links and os.path.islink(path):
            return None  # ELOOP: the link itself
        raise
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or (limit is not None and st.st_size > limit):
        os.close(fd)
        return None
    with os.fdopen(fd, "rb") as handle:
        data = handle.read() if limit is None else handle.read(limit + 1)
    return None if limit is not None and len(data) > limit else data


def write_bytes_atomic(path: Path | GsPath, data: bytes) -> None:
    """Replace ``path`` with ``data`` atomically and durably; for an object, only if it is still
    the generation this process last saw (raises :class:`~.objects.StateConflictError` if not).

    Raises :class:`OSError` (disk full, permissions); the temporary file is removed then.
    """
    if isinstance(path, GsPath):
        path.store.replace(path.key, data)
    else:
        atomic.write_bytes_atomic(path, data)


def move(source: Path | GsPath, target: Path | GsPath) -> None:
    """Move ``source`` to ``target`` (same kind, same dataset), durably."""
    if isinstance(source, GsPath) and isinstance(target, GsPath):
        target.store.copy(source.key, target.key)
        source.unlink(missing_ok=True)
        return
    os.replace(source, target)  # type: ignore[arg-type]
    fsync_dir(target.parent)
    fsync_dir(source.parent)


def remove(path: Path | GsPath) -> None:
    """Delete ``path`` durably."""
    path.unlink(missing_ok=True)
    fsync_dir(path.parent)
