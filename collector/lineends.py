"""Files whose lines end in a carriage return alone (classic Mac OS, some Windows tools and serial
consoles): read as lines, not as one line of 100 records.

A carriage return inside a line is a terminal's redraw (a Keras or tqdm progress bar): those files
have newlines too, at the latest when a bar finishes, and are read as they always were. So a file is
read with ``\\r`` as its line end only when it holds no newline at all and a carriage return within
its first :data:`SNIFF_BYTES`.
"""

from __future__ import annotations

import os
from typing import BinaryIO

#: Where a carriage return must appear for a file without newlines to be read as lines ended by it.
SNIFF_BYTES = 64 * 1024
#: Bytes searched for a newline at a time.
_SCAN_BYTES = 1 << 20


def cr_only(raw: BinaryIO) -> bool:
    """Whether the plain file ``raw`` ends its lines with ``\\r`` alone: a carriage return in its first
    :data:`SNIFF_BYTES` and no newline anywhere (searched at memchr speed, only when the first test holds)."""
    fd = raw.fileno()
    head = os.pread(fd, SNIFF_BYTES, 0)
    if b"\r" not in head or b"\n" in head:
        return False
    offset = len(head)
    while chunk := os.pread(fd, _SCAN_BYTES, offset):
        if b"\n" in chunk:
            return False
        offset += len(chunk)
    return True


_CR_AS_LF = bytes.maketrans(b"\r", b"\n")


class CrLines:
    """A reader of ``raw`` (a plain file) that gives each ``\\r`` as ``\\n``: one byte for one, so
    offsets into it are offsets into the file, and where a collect stopped stays valid."""

    def __init__(self, raw: BinaryIO) -> None:
        self.raw = raw

    def readinto(self, view: memoryview) -> int:
        got = self.raw.readinto(view)  # type: ignore[attr-defined]
        if got:
            view[:got] = bytes(view[:got]).translate(_CR_AS_LF)
        return got

    def read(self, size: int = -1) -> bytes:
        return self.raw.read(size).translate(_CR_AS_LF)

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        return self.raw.seek(offset, whence)

    def fileno(self) -> int:
        return self.raw.fileno()
