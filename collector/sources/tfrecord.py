"""TFRecord framing, the container of TensorBoard event files, read from a byte offset.

Each record is ``uint64 length | uint32 masked CRC-32C of length | data | uint32 masked
CRC-32C of data`` (little-endian), so where a record ends is exact: a collect resumes a growing
file at the byte after its last complete record. The checksum is the one tensorboard's own
writer computes (``tensorboard.summary.writer.record_writer``).

Why not tensorboard's ``EventFileLoader``: it cannot start at an offset (its reader without
TensorFlow refuses one; with TensorFlow installed it imports it, seconds per collect, and reads
through ``tf_record_iterator``), and it ends silently at a cut-off record and at a damaged one
alike. Here the end is told apart (:class:`Ending`): the file ends between records, inside one
(cut off: a writer killed mid-write, or still writing), or at a record whose length fails its
checksum (nothing after it can be framed). A record whose *data* fails its checksum is damaged
but its length is trusted, so reading goes on after it.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO, Literal

#: Header: the length and its checksum; footer: the data's checksum (bytes).
HEADER_BYTES, FOOTER_BYTES = 12, 4
#: A record longer than this is passed over unread and unchecked: a scalar summary is a few
#: dozen bytes, and only graphs, images or histograms come near it. Bounds memory and time
#: (the checksum runs in Python, about 6 MB/s).
MAX_RECORD_BYTES = 1 << 20


def masked_crc32c(data: bytes) -> int:
    """TFRecord's masked CRC-32C of ``data``, as tensorboard's writer computes it."""
    from tensorboard.compat.tensorflow_stub.pywrap_tensorflow import masked_crc32c as crc

    return int(crc(data))


@dataclass(frozen=True)
class Record:
    """One record: its 1-based ``number`` in the file, its bytes ``start`` to ``end`` (header
    to footer), its ``data`` (empty when ``skipped`` or ``damaged``). ``damaged``: the data fails
    its checksum; ``skipped``: longer than :data:`MAX_RECORD_BYTES`, passed over."""

    number: int
    start: int
    end: int
    data: bytes
    damaged: bool = False
    skipped: bool = False


@dataclass
class Ending:
    """Where reading stopped: ``offset``/``number`` past the last whole record; ``how``:
    ``end`` (between records), ``cut`` (inside a record, ``size`` the file's bytes) or
    ``unframed`` (a length failing its checksum at ``offset``: the rest cannot be read)."""

    offset: int
    number: int
    how: Literal["end", "cut", "unframed"] = "end"
    size: int = 0


def read_records(fh: BinaryIO, offset: int = 0, number: int = 0, ending: Ending | None = None) -> Iterator[Record]:
    """The records of ``fh`` from byte ``offset`` (just past record ``number``), in order.

    When the iteration ends, ``ending`` (if given) says where and how. Never raises for the
    file's bytes; :class:`OSError` from reading passes through.
    """
    ending = ending if ending is not None else Ending(offset, number)
    ending.offset, ending.number = offset, number
    fh.seek(offset)
    while True:
        header = fh.read(HEADER_BYTES)
        if len(header) < HEADER_BYTES:
            ending.how, ending.size = ("cut" if header else "end"), offset + len(header)
            return
        length_bytes, (length_crc,) = header[:8], struct.unpack("<I", header[8:])
        if masked_crc32c(length_bytes) != length_crc:
            ending.how = "unframed"
            return
        (length,) = struct.unpack("<Q", length_bytes)
        end = offset + HEADER_BYTES + length + FOOTER_BYTES
        if length > MAX_RECORD_BYTES:
            # Compared with the file's size, not sought to: a length of up to 2**64 cannot be.
            size = fh.seek(0, 2)
            if end > size:
                ending.how, ending.size = "cut", size
                return
            fh.seek(end)
            record = Record(number + 1, offset, end, b"", skipped=True)
        else:
            body = fh.read(length + FOOTER_BYTES)
            if len(body) < length + FOOTER_BYTES:
                ending.how, ending.size = "cut", offset + HEADER_BYTES + len(body)
                return
            data, (data_crc,) = body[:length], struct.unpack("<I", body[length:])
            good = masked_crc32c(data) == data_crc
            record = Record(number + 1, offset, end, data if good else b"", damaged=not good)
        offset, number = end, number + 1
        ending.offset, ending.number = offset, number
        yield record
