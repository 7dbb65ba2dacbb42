"""Where the last collect stopped in each log file, so the next one reads only what is new.

State is one document of the positions family (:mod:`tierscope.collector.positions`): per
(file, run) the byte offset and line number reached, the file's identity (device, inode, size,
mtime) and two fingerprints: SHA-256 of the first :data:`FINGERPRINT_BYTES` bytes (*head*) and of the bytes just before
the offset (*tail*). The next collect of that file (:func:`plan_reads`):

- same head and tail, size >= offset: the file grew (or is unchanged); read from the offset.
  The inode may differ (a tool that replaces a file by a longer copy, like rsync): the
  content decides.
- otherwise it was truncated, rotated or replaced: it is read from its start. If a sibling
  named like it (``app.log.1``, ``app.log-20240101``) is the old file (same inode, or same
  head and tail: ``copytruncate``), that file's unread remainder is read first, under the
  original name and line numbers, so lines written just before the rotation are not lost; then
  every copy rotated after it, whole (:mod:`tierscope.collector.rotation`: numbered, dated,
  compressed, in an ``olddir``); what cannot be found is said. Each later generation's lines are
  numbered on from the one before it (:data:`NUMBERED_ON`), the file's position then counting the
  log's lines since its first read: the records keep the order they were written in.
- gzip files, JSON exports and console CSVs are read whole, once; again only if their size or
  fingerprints change.

Correctness does not rest on this state: the dataset skips records it already holds, so a
state that is lost, stale or behind (a kill between storing data and saving the state)
only costs re-reading. That is why data is stored before the state is saved.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO

from tierscope.collector.lineends import cr_only
from tierscope.collector.rotation import follow
from tierscope.gcs import is_url

#: Bytes hashed at the start of a file and just before the offset.
FINGERPRINT_BYTES = 4096


@dataclass
class FileState:
    """How far one file was read for one run. Offsets in bytes of the file as stored.

    ``whole``: the file is read whole or not at all (gzip, a JSON export, a console CSV);
    ``offset`` is then its size. ``format``: the format sniffed from its first lines.
    """

    path: str  # absolute
    run_id: str
    device: int
    inode: int
    size: int
    mtime_ns: int
    offset: int
    line: int
    head_sha256: str
    head_len: int
    tail_sha256: str
    tail_len: int
    whole: bool
    collected_at: str
    format: str | None = None
    #: A Cloud Storage object's generation: its fingerprint (objects never change; a rewrite is a
    #: new generation). None for a local file. An object's ``path`` is its ``gs://`` URL.
    generation: str | None = None
    #: A file read whole (gzip) whose read stopped at a safe point (``--max-seconds``): the lines done.
    #: The next collect of the same bytes goes on after them; None once read to its end.
    resume_line: int | None = None
    #: What the parse of the lines before ``offset`` knows that judges the lines after it (whether the newest
    #: record announced work it had not reached, whether a step record came before a traceback appended since
    #: and its step: :func:`tierscope.collector.formats.status.carried_work`; the step-line layout learned from the
    #: file's head: :func:`tierscope.collector.formats.layout.carried_layout`);
    #: the next collect that goes on from ``offset`` starts from it. None: nothing (a file's start).
    carry: dict[str, Any] | None = None
    #: The lines after ``offset`` that a collect of the file, still being written, held back
    #: (:mod:`tierscope.collector.held`): they end at ``size``, the file's size, with ``mtime_ns``, when they were
    #: read. None: none held (the file ended at ``offset``, or its read stopped there for another reason).
    held_lines: int | None = None


@dataclass(frozen=True)
class Segment:
    """A stretch of a file to read: ``path`` from byte ``start_offset`` (after line ``start_line``).

    ``current`` is False for the remainder of a rotated predecessor and for the copies rotated
    after it (their state is not saved). ``why`` says why it is read from there (``new``,
    ``grown``, ``truncated``, ``replaced``, ``rotated remainder``, ``rotated``, ``whole``,
    ``reread``). ``missing``: what of the log's rotations could not be found before this
    segment, a sentence each (:func:`tierscope.collector.rotation.follow`).
    """

    path: Path | str
    start_offset: int
    start_line: int
    why: str
    current: bool = True
    missing: tuple[str, ...] = ()


def state_key(path: Path | str) -> str:
    """The key of a file's state: its absolute path, or an object's ``gs://`` URL as it is."""
    return path if is_url(path) else os.path.abspath(path)  # type: ignore[return-value]


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _pread(fd: int, length: int, offset: int) -> bytes:
    chunks, got = [], 0
    while got < length:
        chunk = os.pread(fd, length - got, offset + got)
        if not chunk:
            break
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def _matches(fd: int, size: int, prev: FileState) -> bool:
    """Does the open file ``fd`` (``size`` bytes) hold ``prev``'s bytes at the same places?"""
    if size < prev.offset or size < prev.head_len:
        return False
    if _sha(_pread(fd, prev.head_len, 0)) != prev.head_sha256:
        return False
    return _sha(_pread(fd, prev.tail_len, prev.offset - prev.tail_len)) == prev.tail_sha256


def snapshot(
    raw: BinaryIO, path: Path, run_id: str, offset: int, line: int, whole: bool, fmt: str | None = None
) -> FileState:
    """The state to save after reading ``raw`` (the open file at ``path``) up to ``offset``/``line``."""
    fd = raw.fileno()
    st = os.fstat(fd)
    end = st.st_size if whole else offset
    head = _pread(fd, min(FINGERPRINT_BYTES, end), 0)
    tail_len = min(FINGERPRINT_BYTES, end)
    tail = _pread(fd, tail_len, end - tail_len)
    return FileState(
        path=state_key(path),
        run_id=run_id,
        device=st.st_dev,
        inode=st.st_ino,
        size=st.st_size,
        mtime_ns=st.st_mtime_ns,
        offset=end,
        line=line,
        head_sha256=_sha(head),
        head_len=len(head),
        tail_sha256=_sha(tail),
        tail_len=tail_len,
        whole=whole,
        collected_at=datetime.now(UTC).isoformat(timespec="seconds"),
        format=fmt,
    )


#: Why the file under a log's name is read from its start after a rotation (:func:`plan_reads`): logrotate's
#: ``copytruncate`` (the text copied aside, this file, the same one, cut to nothing) and its default (the file
#: renamed aside, a new one created under the name).
COPYTRUNCATE, RENAMED = "copytruncate rotation", "rename rotation"


def plan_reads(
    raw: BinaryIO,
    path: Path,
    prev: FileState | None,
    whole: bool,
    reread: bool = False,
    olddirs: tuple[Path, ...] = (),
) -> list[Segment]:
    """What to read of ``path`` (open as ``raw``) given the state of the last collect.

    Returns no segment for an unchanged file read ``whole``. A rotated log gives, oldest first, the
    remainder of its predecessor, each copy rotated after it, then the file itself (its rotated
    copies are looked for beside it and in ``olddirs``: :func:`tierscope.collector.rotation.follow`).
    ``reread`` reads the file from its start (``reread``), its lines numbered as the last collect numbered them
    (on from the generations rotated before it), except a log rotated since the last collect, which is read as
    without it (the file is read from its start either way).
    """
    fd = raw.fileno()
    size = os.fstat(fd).st_size
    if prev is None or (reread and (whole or prev.whole)):
        return [Segment(path, 0, 0, "reread" if reread else "new")]
    if whole:
        if prev.whole and prev.size == size and _matches(fd, size, prev):
            # A read stopped part way goes on after its lines (the reader finds where they end).
            return [] if prev.resume_line is None else [Segment(path, 0, prev.resume_line, "resumed")]
        return [Segment(path, 0, 0, "whole")]
    if not prev.whole and _matches(fd, size, prev):
        if not reread:
            return [Segment(path, prev.offset, prev.line, "grown")]
        # A file numbered on after a rotation (NUMBERED_ON) is read again under the same numbers: from 1, its
        # lines would be stored a second time as the older generation's (an event's or reject's key holds its line).
        before = prev.line - _lines_before(fd, prev.offset, b"\r" if cr_only(raw) else b"\n")
        return [Segment(path, 0, max(before, 0), "reread")]
    why = "truncated" if size < prev.offset else "replaced"
    if prev.whole:
        return [Segment(path, 0, 0, "reread" if reread else why)]
    # A rotation since the last collect is followed even when asked to read again: the file under the name is
    # read from its start all the same, and the rotated copy's unread remainder exists nowhere else (read from
    # line 1 instead, the newer text would be numbered as the older, and that remainder lost for good).
    chain = follow(path, prev, olddirs)
    if chain.predecessor is not None or chain.between:
        # the text read last time is under another name: a rotation, not a file cut short or written anew, and the
        # note names its kind (the file under the name still the one read, cut to its start; or a new file)
        st = os.fstat(fd)
        why = COPYTRUNCATE if (st.st_dev, st.st_ino) == (prev.device, prev.inode) else RENAMED
    # Numbered on from the lines read before (see NUMBERED_ON); the reader numbers each segment after the one before.
    segments = [Segment(p, 0, prev.line, "rotated", current=False) for p in chain.between]
    segments.append(Segment(path, 0, prev.line, why))
    if chain.predecessor is not None:
        segments.insert(0, Segment(chain.predecessor, prev.offset, prev.line, "rotated remainder", current=False))
    return [dataclasses.replace(segments[0], missing=tuple(chain.missing)), *segments[1:]]


#: The segments that begin a later generation of a log (a copy rotated after the file read last time, the file
#: now under its name, truncated or replaced): their lines are numbered on from the lines of the log read before
#: them, not from 1. A clock-less log's records are in the order of their ``(source, source_offset)`` (all of a
#: log's generations are stored under its name), so numbering each generation from 1 would interleave them: the
#: analysis would read every line of the newer as a restart from the older's steps.
NUMBERED_ON = frozenset({"rotated", "truncated", "replaced", COPYTRUNCATE, RENAMED})


def line_start(fd: int, end: int, back: int, line_end: bytes = b"\n") -> int:
    """Where the line ``back`` lines before byte ``end`` starts (``end`` is just past a ``line_end``,
    a newline or, in a file of carriage returns alone, a carriage return): the offset to resume at so
    that the last ``back`` lines are read again."""
    need = back + 1  # the newline ending the last line, then one per line before
    pos = end
    while pos > 0:
        size = min(_BACK_CHUNK, pos)
        chunk = os.pread(fd, size, pos - size)
        found = chunk.count(line_end)
        if found < need:
            need -= found
            pos -= size
            continue
        # The last j with need newlines in chunk[j:] is the one wanted; counts are in C, so a
        # chunk of a million empty lines costs twenty counts, not a million finds.
        lo, hi = 0, len(chunk) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if chunk.count(line_end, mid) >= need:
                lo = mid
            else:
                hi = mid - 1
        return pos - size + lo + 1
    return 0


def _lines_before(fd: int, end: int, line_end: bytes = b"\n") -> int:
    """The lines of the file ``fd`` before byte ``end``: its ``line_end`` bytes, and one more for a last line
    without one (a settled file's, read to its end)."""
    count, pos = 0, 0
    while pos < end and (chunk := os.pread(fd, min(_BACK_CHUNK, end - pos), pos)):
        count += chunk.count(line_end)
        pos += len(chunk)
    return count + (end > 0 and _pread(fd, 1, end - 1) != line_end)


#: Bytes read at a time walking back from a batch's end.
_BACK_CHUNK = 1 << 20
