"""A log file followed through every rotation since the last collect.

Between two collects a log may be rotated more than once (a collect skipped while the dataset was
busy, a host down, a fast ``size`` rotation): ``app.log`` became ``app.log.1``, then ``app.log.2``
(perhaps compressed, ``app.log.2.gz``, or moved to logrotate's ``olddir``), and a second file became
``app.log.1``. What was written since the last collect is then, oldest first: the rest of the file
read last time (the *predecessor*, from where that collect stopped), every copy rotated after it
(whole), and the current file. :func:`follow` finds them by name and content; what it cannot find is
said, never skipped in silence.

A rotated copy is a file in the log's folder, or in an ``olddir``, whose name is the log's followed
by ``.``, ``-`` or ``_`` and a number, a date or a time, maybe ``.gz`` (``app.log.1``, ``app.log.2.gz``,
``app.log-20240101``). Numbered
copies are ordered by their number (1 is the newest: logrotate's and Python's ``RotatingFileHandler``'s
scheme), others newest modified first (``dateext`` names, whose date the modification time agrees with).
"""

from __future__ import annotations

import gzip
import hashlib
import os
import re
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol


class LastRead(Protocol):
    """What the last collect kept of a file it read (:class:`tierscope.collector.offsets.FileState`,
    which imports this module): where it stopped and the fingerprints of what it read."""

    offset: int
    line: int
    mtime_ns: int
    head_len: int
    head_sha256: str
    tail_len: int
    tail_sha256: str


#: A numbered copy's suffix: ``.1``, ``.12.gz`` (up to 5 digits: more is a date or a Unix time).
_NUMBERED = re.compile(r"^\.(\d{1,5})(\.gz)?$")
#: Any rotated copy's suffix: a separator, then a number, a date or a time (``-20240101``,
#: ``.2024-01-01``, ``-1704067200``, ``_2024-01-01T00``), maybe ``.gz``. A ``.bak`` or ``.old`` is no
#: rotation: someone's copy, not read into the run.
_ROTATED = re.compile(r"^[.\-_]\d[\d\-_T]*(\.gz)?$")
_GZIP_MAGIC = b"\x1f\x8b"


@dataclass(frozen=True)
class Chain:
    """What a rotated log holds that the last collect did not read, oldest first.

    ``predecessor``: the file the last collect read, moved or copied aside (read from where that
    collect stopped), None when it is nowhere to be found. ``between``: the copies rotated after it,
    each read whole, oldest first. ``missing``: one sentence per part that could not be found."""

    predecessor: Path | None
    between: list[Path] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)


def rotated_copies(path: Path, olddirs: Sequence[Path] = ()) -> list[Path]:
    """The rotated copies of ``path`` in its folder and in ``olddirs``, newest first (see the module doc)."""
    numbered: list[tuple[int, Path]] = []
    dated: list[tuple[int, Path]] = []
    try:
        current = path.stat()
        itself = (current.st_dev, current.st_ino)
    except OSError:
        itself = None
    for folder in dict.fromkeys([path.parent, *olddirs]):
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in names:
            suffix = name[len(path.name) :]
            if not name.startswith(path.name) or not _ROTATED.match(suffix):
                continue
            copy = folder / name
            try:
                st = copy.stat()
            except OSError:
                continue
            if not stat.S_ISREG(st.st_mode) or (st.st_dev, st.st_ino) == itself:  # the log itself, linked
                continue
            number = _NUMBERED.match(suffix)
            if number:
                numbered.append((int(number.group(1)), copy))
            else:
                dated.append((-st.st_mtime_ns, copy))
    return [p for _, p in sorted(numbered)] + [p for _, p in sorted(dated)]


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _read_at(handle: gzip.GzipFile, offset: int, length: int) -> bytes:
    handle.seek(offset)
    return handle.read(length)


def holds(copy: Path, prev: LastRead) -> bool:
    """Whether ``copy`` (plain or gzip) holds the bytes ``prev`` describes where it describes them: its
    first ``head_len`` bytes and the ``tail_len`` bytes before ``offset`` hash as recorded."""
    try:
        with copy.open("rb") as raw:
            if os.pread(raw.fileno(), 2, 0) == _GZIP_MAGIC:
                with gzip.GzipFile(fileobj=raw, mode="rb") as unzipped:
                    head = _read_at(unzipped, 0, prev.head_len)
                    tail = _read_at(unzipped, prev.offset - prev.tail_len, prev.tail_len)
            else:
                if os.fstat(raw.fileno()).st_size < prev.offset:
                    return False
                head = os.pread(raw.fileno(), prev.head_len, 0)
                tail = os.pread(raw.fileno(), prev.tail_len, prev.offset - prev.tail_len)
    except (OSError, EOFError, gzip.BadGzipFile):
        return False
    return (
        len(head) == prev.head_len
        and len(tail) == prev.tail_len
        and _sha(head) == prev.head_sha256
        and _sha(tail) == prev.tail_sha256
    )


def follow(path: Path, prev: LastRead, olddirs: Sequence[Path] = ()) -> Chain:
    """What ``path`` (a log read last time as ``prev``, since rotated or replaced) left unread in its
    rotated copies. The predecessor is the newest copy holding ``prev``'s bytes (the renamed file, a
    ``copytruncate`` copy, either compressed); the copies newer than it are unread. Without it, the
    copies modified since the last read are unread, and the rest of the old file is said to be lost.
    A gap in the numbers between the predecessor and the newest copy is said too."""
    copies = rotated_copies(path, olddirs)
    where = _where(path, olddirs)
    for k, copy in enumerate(copies):
        if holds(copy, prev):
            between = list(reversed(copies[:k]))
            return Chain(copy, between, _gaps(path, copy, between))
    since = [c for c in copies if _mtime_ns(c) > prev.mtime_ns]
    lost = (
        f"{path.name} was rotated away or replaced, and the file read last time (to line {prev.line:,}) is not "
        f"among {where}: any lines written to it after line {prev.line:,} were not collected"
    )
    return Chain(None, list(reversed(since)), [lost])


def _gaps(path: Path, predecessor: Path, between: list[Path]) -> list[str]:
    """A sentence for each numbered copy missing between ``predecessor`` and the newest (deleted by
    the rotation's ``rotate`` count, or compressed under another name)."""
    first = _NUMBERED.match(predecessor.name[len(path.name) :])
    if first is None:
        return []
    have = {int(m.group(1)) for p in between if (m := _NUMBERED.match(p.name[len(path.name) :]))}
    return [
        f"{path.name}.{n} rotated away before it was read: its lines were not collected"
        for n in range(int(first.group(1)) - 1, 0, -1)
        if n not in have
    ]


def _where(path: Path, olddirs: Sequence[Path]) -> str:
    folders = [str(path.parent), *(str(d) for d in olddirs)]
    return f"{path.name}'s rotations in {' or '.join(dict.fromkeys(folders))}"


def _mtime_ns(path: Path) -> int:
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return 0
