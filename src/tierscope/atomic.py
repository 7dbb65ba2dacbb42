"""Replace a file whole or not at all: write a temporary name beside it, fsync, rename, fsync the directory.

The one copy of the primitive, for every room: the dataset's data files and state documents
(:mod:`tierscope.dataset.durable`), the trainer's ``run.json``, the report and its figures.
A reader sees the old file or the new one, never half of one; a kill leaves at most a
``.tmp-*`` file beside the target. Standard library only, so the trainer's TensorFlow tasks
may import it without loading anything else.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

#: Prefix of every temporary file. Dataset readers skip it and the next locked collect deletes it;
#: the collector never takes such a file for a log.
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
    # os.urandom, not uuid: uuid imports platform, 2.5 ms of a cron collect's CPU
    return final.with_name(f"{TMP_PREFIX}{os.urandom(4).hex()}-{final.name}")


@contextlib.contextmanager
def writing(tmp: Path, final: Path | str) -> Iterator[None]:
    """Around the writing (and commit) of ``tmp``, the temporary file of ``final``: on any failure
    ``tmp`` is removed, and a system error is raised again as one about ``final``, its errno kept.

    ``final`` is the file the user asked for (``--out``, a dataset's data file): the temporary name,
    or none at all (pyarrow names no file and words its error its own way), tells them nothing. The
    removal's own failure is not raised: on a read-only file system it fails too (EROFS, even for
    a file that was never created) and would hide the first error, which is the one to report.
    """
    try:
        yield
    except BaseException as exc:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        if isinstance(exc, OSError):
            code = exc.errno
            words = os.strerror(code) if code else (exc.strerror or str(exc))
            raise OSError(code, words, str(final)) from exc
        raise


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
    """Replace ``path`` (its folder created if missing) with ``data`` atomically and durably.

    Raises :class:`OSError` naming ``path`` (disk full, permissions); the temporary file is removed then.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = temp_path(path)
    with writing(tmp, path):
        tmp.write_bytes(data)
        commit(tmp, path)


def write_text_atomic(path: Path, text: str) -> None:
    """:func:`write_bytes_atomic` of ``text`` encoded as UTF-8."""
    write_bytes_atomic(path, text.encode("utf-8"))
