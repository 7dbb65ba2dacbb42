"""Bounds on the work one input may cost a collect: the size a compressed file may expand to, and
the time a collect may run.

A gzip of 4 GiB of newlines is 4.2 MB: read line by line it held the dataset's lock for hours, and a
supervisor killing it made the next collect start it again from byte 0. Its size is measured first,
by decompressing without reading lines (zlib at hundreds of MB/s; stopped at the limit): a file that
expands past :func:`expand_limit` is refused, named, before a line of it is read.
"""

from __future__ import annotations

import gzip
import time
import zlib
from dataclasses import dataclass
from typing import BinaryIO

#: How many times its compressed size a file may expand to, by default (text logs compress 5 to 20
#: times; a log of identical lines some 50 times).
DEFAULT_EXPAND_RATIO = 100.0
#: A compressed file may always expand to this (a small log of repeated lines has a large ratio): 64 MiB,
#: read in seconds whatever it holds (33 million empty lines: some 7 CPU seconds).
EXPAND_FLOOR_BYTES = 64 * 1024**2
#: And never past this, whatever its compressed size.
EXPAND_CAP_BYTES = 20 * 1024**3
#: Bytes decompressed at a time while measuring.
_MEASURE_CHUNK = 1 << 20


def expand_limit(compressed_bytes: int, ratio: float = DEFAULT_EXPAND_RATIO) -> int:
    """The most bytes a compressed file of ``compressed_bytes`` may expand to: ``ratio`` times its size,
    at least :data:`EXPAND_FLOOR_BYTES`, at most :data:`EXPAND_CAP_BYTES`."""
    return int(min(max(compressed_bytes * ratio, EXPAND_FLOOR_BYTES), EXPAND_CAP_BYTES))


def expands_past(raw: BinaryIO, limit: int) -> bool:
    """Whether the gzip ``raw`` (at its start; left there) decompresses to more than ``limit`` bytes.
    Reads only what it needs: at most ``limit`` bytes decompressed. A damaged stream counts only what
    decompresses (the reader says what is wrong with it later)."""
    seen = 0
    try:
        with gzip.GzipFile(fileobj=raw, mode="rb") as unzipped:
            while seen <= limit:
                chunk = unzipped.read(_MEASURE_CHUNK)
                if not chunk:
                    break
                seen += len(chunk)
    except (OSError, EOFError, zlib.error):
        pass
    finally:
        raw.seek(0)
    return seen > limit


def too_large(name: object, compressed_bytes: int, limit: int, ratio: float) -> str:
    """The reason a compressed file is refused (a reject's and the collect's note)."""
    return (
        f"{name} decompresses to more than {limit:,} bytes ({ratio:g} times its {compressed_bytes:,} bytes, "
        f"at least {EXPAND_FLOOR_BYTES // 1024**2} MiB, at most {EXPAND_CAP_BYTES // 1024**3} GiB): not read "
        "(a compressed bomb?); if it is a real log, decompress it and collect the text, or raise --max-expand"
    )


@dataclass
class Deadline:
    """When a collect must stop taking new work (``time.monotonic()`` seconds; None: never)."""

    at: float | None = None

    @classmethod
    def after(cls, seconds: float | None) -> Deadline:
        return cls(None if seconds is None else time.monotonic() + seconds)

    def passed(self) -> bool:
        return self.at is not None and time.monotonic() >= self.at
