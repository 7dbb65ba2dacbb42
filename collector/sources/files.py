"""Log files on disk, read as batches of numbered lines.

A file is read in batches of about ``batch_bytes`` that end on a line boundary, so a
collect never holds a whole large file in memory. Plain files can be read from a byte
offset (where the last collect stopped); gzip files are read whole. Bytes that are not
UTF-8 are replaced (U+FFFD) rather than failing the file: the line then fails to parse
and is kept aside as a reject, with its line number.
"""

from __future__ import annotations

import gzip
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import polars as pl

from collector.errors import InputError

DEFAULT_BATCH_BYTES = 64 * 1024 * 1024


@dataclass
class LineBatch:
    """Numbered lines (``source_offset`` Int64 1-based, ``line`` String) and where they end.

    ``end_offset`` is the byte offset just past the last line of the batch (of the
    decompressed stream for gzip); ``end_line`` the number of that line. ``terminated`` is
    False for the batch holding only an unterminated last line (no newline yet: its writer
    may still be writing it).
    """

    lines: pl.DataFrame
    end_offset: int
    end_line: int
    terminated: bool = True


def is_gzip(path: Path) -> bool:
    with path.open("rb") as fh:
        return fh.read(2) == b"\x1f\x8b"


def _open(path: Path) -> BinaryIO:
    try:
        if is_gzip(path):
            return gzip.open(path, "rb")  # type: ignore[return-value]
        return path.open("rb")
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from exc


def open_raw(path: Path) -> BinaryIO:
    """``path`` opened for reading bytes as stored (compressed or not). Raises :class:`InputError`."""
    try:
        return path.open("rb")
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from exc


def decompressed(raw: BinaryIO) -> BinaryIO:
    """A reader of ``raw``'s lines: itself, or a gzip reader over it if it starts with the gzip magic."""
    head = os.pread(raw.fileno(), 2, 0)
    if head == b"\x1f\x8b":
        return gzip.GzipFile(fileobj=raw, mode="rb")  # type: ignore[return-value]
    return raw


def iter_line_batches(
    path: Path,
    start_offset: int = 0,
    start_line: int = 0,
    batch_bytes: int = DEFAULT_BATCH_BYTES,
    final: bool = True,
) -> Iterator[LineBatch]:
    """Yield the lines of ``path`` after byte ``start_offset`` (which follows line ``start_line``).

    With ``final=False`` an unterminated last line is left for the next collect (the
    writer may still be writing it); with ``final=True`` it is read too. Raises
    :class:`InputError` if the file cannot be opened or read.
    """
    with _open(path) as fh:
        yield from iter_handle_batches(fh, path, start_offset, start_line, batch_bytes, final)


def iter_handle_batches(
    fh: BinaryIO,
    name: Path | str,
    start_offset: int = 0,
    start_line: int = 0,
    batch_bytes: int = DEFAULT_BATCH_BYTES,
    final: bool = True,
) -> Iterator[LineBatch]:
    """:func:`iter_line_batches` over an open reader; ``name`` is for messages only.

    With ``final=True`` an unterminated last line comes alone in the last batch, marked
    ``terminated=False``, so the caller can decide whether to take it.
    """
    offset, line_no = start_offset, start_line
    carry = b""
    try:
        if start_offset:
            fh.seek(start_offset)
    except (OSError, EOFError) as exc:
        raise InputError(f"cannot read {name} after byte {offset}: {exc}") from exc
    while True:
        try:
            chunk = fh.read(batch_bytes)
        except (OSError, EOFError) as exc:
            raise InputError(f"cannot read {name} after byte {offset}: {exc}") from exc
        data = carry + chunk
        if not chunk:
            if data and final:
                batch = _batch(data, line_no)
                yield LineBatch(batch, offset + len(data), line_no + batch.height, terminated=False)
            return
        cut = data.rfind(b"\n")
        if cut < 0:
            carry = data
            continue
        body, carry = data[: cut + 1], data[cut + 1 :]
        batch = _batch(body, line_no)
        offset += len(body)
        line_no += batch.height
        yield LineBatch(batch, offset, line_no)


def _batch(data: bytes, first_line: int) -> pl.DataFrame:
    text = data.decode("utf-8", errors="replace")
    if text.endswith("\n"):
        text = text[:-1]
    lines = pl.Series("line", text.split("\n"), dtype=pl.String).str.strip_chars_end("\r")
    return pl.DataFrame(
        {
            "source_offset": pl.int_range(first_line + 1, first_line + 1 + len(lines), eager=True, dtype=pl.Int64),
            "line": lines,
        }
    )
