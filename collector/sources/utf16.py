"""Logs written as UTF-16 with a byte-order mark, read as their text.

Windows PowerShell 5.1 redirects a program's output (``python train.py > train.log``) as UTF-16LE with its mark
(Microsoft Learn, about_Redirection, PowerShell 5.1): read as UTF-8 bytes, every other byte is a NUL and no line
reads. The mark (``FF FE`` little-endian, ``FE FF`` big-endian) says how the text is written; this reader gives it
as UTF-8, so the lines are the text's. Its offsets are the text's, not the file's, so such a file is read whole,
as a gzip file is (:mod:`tierscope.collector.offsets`). Bytes that are no UTF-16 (a lone surrogate, an odd last
byte) become U+FFFD, as bytes that are no UTF-8 do in a plain log: the line is then a reject with its number.
"""

from __future__ import annotations

import codecs
import io
import os
from typing import BinaryIO

#: The byte-order marks of UTF-16 (little-endian, big-endian): a file starting with one is UTF-16 text.
MARKS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)
#: Bytes of the file decoded at a time.
_CHUNK = 1 << 20


def is_utf16(head: bytes) -> bool:
    """Whether a file whose first bytes are ``head`` starts with a UTF-16 byte-order mark (and not UTF-32's,
    ``FF FE 00 00``, whose first two bytes are UTF-16LE's)."""
    return head[:2] in MARKS and head[:4] != codecs.BOM_UTF32_LE


def utf16_mark(raw: BinaryIO) -> bool:
    """Whether the open file ``raw`` starts with a UTF-16 byte-order mark (:func:`is_utf16`; its position kept)."""
    return is_utf16(os.pread(raw.fileno(), 4, 0))


class Utf16Text(io.RawIOBase):
    """A reader of ``raw`` (a file starting with a UTF-16 mark) giving its text as UTF-8 bytes, the mark left out,
    from its start. Closing it closes ``raw`` only if it ``owns`` it (as a gzip reader over a file object leaves
    the file open)."""

    def __init__(self, raw: BinaryIO, owns: bool = False) -> None:
        self.raw = raw
        self.owns = owns
        raw.seek(0)
        self.decoder = codecs.getincrementaldecoder("utf-16")(errors="replace")  # the mark gives the byte order
        self.pending = bytearray()
        self.eof = False

    def readable(self) -> bool:
        return True

    def readinto(self, view: memoryview) -> int:  # type: ignore[override]
        want = len(view)
        while len(self.pending) < want and not self.eof:
            chunk = self.raw.read(_CHUNK)
            self.eof = not chunk
            self.pending += self.decoder.decode(chunk, final=self.eof).encode("utf-8", "surrogatepass")
        got = min(want, len(self.pending))
        view[:got] = self.pending[:got]
        del self.pending[:got]
        return got

    def fileno(self) -> int:
        return self.raw.fileno()

    def close(self) -> None:
        super().close()
        if self.owns:
            self.raw.close()
