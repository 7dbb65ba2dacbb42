"""Durable file replacement: write to a temporary name, fsync, rename, fsync the directory.

Used for data files (:mod:`tierscope.dataset.store`) and state documents (:mod:`tierscope.dataset.state`).
A reader sees the old file or the new one, never half of one; a kill leaves at most a
``.tmp-*`` file, which readers ignore and the next locked writer removes.
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path

#: Prefix of every temporary file; readers skip it, the next locked collect deletes it.
TMP_PREFIX = ".tmp-"


def fsync_dir(path: Path) -> None:
    """Flush ``path``'s directory entries (a rename is durable only after this)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def temp_path(final: Path) -> Path:
    """A unique temporary name next to ``final`` (same directory, so the rename is atomic)."""
    return final.with_name(f"{TMP_PREFIX}{uuid.uuid4().hex[:8]}-{final.name}")


def commit(tmp: Path, final: Path) -> None:
    """fsync ``tmp``, rename it to ``final`` (replacing it), fsync the directory."""
    fd = os.open(tmp, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, final)
    fsync_dir(final.parent)


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` atomically and durably. Raises :class:`OSError` (disk full...)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = temp_path(path)
    try:
        tmp.write_bytes(data)
        commit(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
