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
from array import array
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import BinaryIO

import polars as pl

from tierscope.collector.errors import InputError

#: 32 MB: at their peak a batch's frames take about 15 times its size (lines, tokens, the
#: records, the Parquet writer), so this keeps a collect near half a GB whatever the file's
#: size; 64 MB batches were no faster.
DEFAULT_BATCH_BYTES = 32 * 1024 * 1024


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
    # One buffer for every batch: fresh memory costs a page fault per 4 KB, which was a third
    # of the reading time. Safe because a batch's lines are copied out of it (see _split_lines).
    buf = bytearray(0)
    try:
        if start_offset:
            fh.seek(start_offset)
    except (OSError, EOFError) as exc:
        raise InputError(f"cannot read {name} after byte {offset}: {exc}") from exc
    while True:
        if len(buf) < len(carry) + batch_bytes:
            buf = bytearray(len(carry) + batch_bytes)
        buf[: len(carry)] = carry
        try:
            got = fh.readinto(memoryview(buf)[len(carry) : len(carry) + batch_bytes])
        except EOFError as exc:
            # gzip's reader drops the whole batch it was decompressing: say what to do with the file.
            raise InputError(
                f"cannot read {name} after line {line_no}: the compressed file is cut off ({exc}); "
                f"collect it once it is complete, or recover what it holds with `zcat {name} > recovered.log`"
            ) from exc
        except OSError as exc:
            raise InputError(f"cannot read {name} after byte {offset}: {exc}") from exc
        size = len(carry) + got
        if not got:
            if size and final:
                batch = _batch(buf, size, line_no)
                yield LineBatch(batch, offset + size, line_no + batch.height, terminated=False)
            return
        cut = buf.rfind(b"\n", 0, size)
        if cut < 0:
            carry = bytes(buf[:size])
            continue
        carry = bytes(buf[cut + 1 : size])
        batch = _batch(buf, cut + 1, line_no)
        offset += cut + 1
        line_no += batch.height
        yield LineBatch(batch, offset, line_no)


#: Bytes per Arrow value the batch is cut into before splitting: polars splits many values
#: in parallel, and treats a one-value column as a scalar (copying the whole batch).
_PIECE_BYTES = 1 << 20


#: Below this many bytes a batch is copied into polars; above, it is handed over through Arrow
#: without a copy, which saves more than importing pyarrow costs (about 0.1 s).
_ARROW_MIN_BYTES = 8 << 20


def _pieces(buf: bytearray, cuts: list[int]) -> pl.Series:
    """Binary values ``buf[cuts[i]:cuts[i + 1]]``."""
    if cuts[-1] < _ARROW_MIN_BYTES:
        return pl.Series("line", [bytes(buf[a:b]) for a, b in pairwise(cuts)], dtype=pl.Binary)
    import pyarrow as pa

    offsets = pa.py_buffer(array("q", cuts))
    return pl.Series(
        "line", pa.Array.from_buffers(pa.large_binary(), len(cuts) - 1, [None, offsets, pa.py_buffer(buf)])
    )


def _split_lines(buf: bytearray, end: int) -> pl.Series:
    """``buf[:end]`` as one String per line (a final newline ends the last line; it does not
    start an empty one), the CR of CRLF line ends removed."""
    # Cut at newlines into ~1 MB binary values, validate as UTF-8 and split in Rust: a few
    # times faster than bytes.decode + str.split. The split copies the lines out, so the
    # caller may reuse ``buf`` (tests/test_files_batches.py checks it).
    cuts = [0]
    while end - cuts[-1] > _PIECE_BYTES:
        nl = buf.find(b"\n", cuts[-1] + _PIECE_BYTES, end)
        if nl < 0 or nl + 1 == end:
            break
        cuts.append(nl + 1)
    cuts.append(end)
    pieces = _pieces(buf, cuts)
    try:
        text = pieces.cast(pl.String)
    except pl.exceptions.ComputeError:  # not UTF-8: decode this batch with replacement characters
        decoded = bytes(buf[:end]).decode("utf-8", errors="replace")
        lines = pl.Series("line", decoded.removesuffix("\n").split("\n"), dtype=pl.String)
    else:
        # Every piece but an unterminated last one ends in a newline, which split turns
        # into an empty last item: drop it.
        ends_nl = [1] * (len(cuts) - 2) + [int(end > 0 and buf[end - 1] == ord("\n"))]
        parts = pl.DataFrame({"p": text.str.split("\n"), "nl": pl.Series(ends_nl, dtype=pl.UInt32)})
        lines = parts.select(line=pl.col("p").list.head(pl.col("p").list.len() - pl.col("nl")))["line"].explode()
    return lines.str.strip_chars_end("\r") if buf.find(b"\r", 0, end) >= 0 else lines


def _batch(buf: bytearray, end: int, first_line: int) -> pl.DataFrame:
    """The lines of ``buf[:end]`` numbered from ``first_line + 1``."""
    lines = _split_lines(buf, end)
    return pl.DataFrame(
        {
            "source_offset": pl.int_range(first_line + 1, first_line + 1 + len(lines), eager=True, dtype=pl.Int64),
            "line": lines,
        }
    )
