"""Log files on disk, read as batches of numbered lines.

A file is read in batches of about ``batch_bytes`` that end on a line boundary, so a
collect never holds a whole large file in memory. Plain files can be read from a byte
offset (where the last collect stopped); gzip files are read whole. Bytes that are not
UTF-8 are replaced (U+FFFD) rather than failing the file: the line then fails to parse
and is kept aside as a reject, with its line number.
"""

from __future__ import annotations

import dataclasses
import gzip
import os
import struct
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import pairwise
from pathlib import Path
from typing import BinaryIO

import polars as pl

from tierscope.collector.errors import CutOffError, InputError
from tierscope.collector.sources.utf16 import Utf16Text, is_utf16, utf16_mark

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
    #: Lines longer than MAX_LINE_BYTES, cut to their first LONG_LINE_KEEP_CHARS characters in
    #: ``lines``: line number -> length in bytes.
    long_lines: dict[int, int] = field(default_factory=dict)


#: The first two bytes of a gzip file.
GZIP_MAGIC = b"\x1f\x8b"


def is_gzip(path: Path) -> bool:
    with path.open("rb") as fh:
        return fh.read(2) == GZIP_MAGIC


def _open(path: Path) -> BinaryIO:
    try:
        if is_gzip(path):
            return gzip.open(path, "rb")  # type: ignore[return-value]
        raw = path.open("rb")
        return Utf16Text(raw, owns=True) if utf16_mark(raw) else raw  # type: ignore[return-value]
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from exc


def open_raw(path: Path) -> BinaryIO:
    """``path`` opened for reading bytes as stored (compressed or not). Raises :class:`InputError`."""
    try:
        return path.open("rb")
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from exc


def decompressed(raw: BinaryIO) -> BinaryIO:
    """:func:`reader_of` the open file ``raw``, its first bytes read where they are (its position kept)."""
    return reader_of(raw, os.pread(raw.fileno(), 4, 0))


def reader_of(raw: BinaryIO, head: bytes) -> BinaryIO:
    """A reader of ``raw``'s lines from its start, ``head`` its first four bytes (or all it has): itself, a gzip
    reader over it if it starts with :data:`GZIP_MAGIC`, or its text as UTF-8 if it starts with a UTF-16
    byte-order mark (:mod:`tierscope.collector.sources.utf16`); either of the two is read whole."""
    if head[:2] == GZIP_MAGIC:
        return gzip.GzipFile(fileobj=raw, mode="rb")  # type: ignore[return-value]
    if is_utf16(head):
        return Utf16Text(raw)  # type: ignore[return-value]
    return raw


def file_year(path: Path) -> int:
    """The year of ``path``'s last modification (UTC): the default year of glog timestamps."""
    return datetime.fromtimestamp(path.stat().st_mtime, UTC).year


def file_head(path: Path, size: int) -> str:
    """The first ``size`` bytes of ``path`` (gzip decompressed), decoded: what a format is sniffed
    from; empty when they cannot be read (the line reader then says why)."""
    try:
        with open_raw(path) as raw:
            return decompressed(raw).read(size).decode("utf-8", errors="replace")
    except (OSError, EOFError, InputError):
        return ""


#: The most a whole-file format (a JSON export, a console CSV download) reads, decompressed:
#: such a file is decoded whole, at about ten times its size in memory.
WHOLE_FILE_MAX_BYTES = 64 << 20


_TOO_BIG_HINT = "split it (export shorter time ranges), or read the logs live with `tierscope collect cloud`"


def read_whole(path: Path, what: str, hint: str = _TOO_BIG_HINT) -> bytes:
    """``path``'s bytes (gzip decompressed), at most :data:`WHOLE_FILE_MAX_BYTES` (a gzip bomb
    stops there). Raises :class:`InputError` for a larger or unreadable file; ``what`` names
    the format in the message, ``hint`` what to do with a larger file."""
    try:
        with _open(path) as fh:
            data = fh.read(WHOLE_FILE_MAX_BYTES + 1)
    except (OSError, EOFError) as exc:
        raise InputError(f"cannot read {path}: {exc}") from exc
    if len(data) > WHOLE_FILE_MAX_BYTES:
        raise InputError(
            f"{path} is {what} of more than {WHOLE_FILE_MAX_BYTES >> 20} MiB, more than tierscope reads whole: {hint}"
        )
    return data


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
    *,
    copied: int = 0,
    first_sizes: tuple[int, ...] = (),
) -> Iterator[LineBatch]:
    """:func:`iter_line_batches` over an open reader; ``name`` is for messages only.

    ``first_sizes``: the byte sizes of the first batches, before ``batch_bytes`` (each at most
    ``batch_bytes``; see :func:`ramp_sizes`).

    The first ``copied`` batches are copied into polars rather than handed over through pyarrow
    (see :data:`_ARROW_MIN_BYTES`): a caller importing pyarrow on another thread meanwhile gets
    them without waiting for that import.

    With ``final=True`` an unterminated last line comes alone in the last batch, marked
    ``terminated=False``, so the caller can decide whether to take it. A line longer than
    :data:`MAX_LINE_BYTES` comes cut to its first :data:`LONG_LINE_KEEP_CHARS` characters,
    its number and length in ``long_lines``; a batch holds at most :data:`MAX_BATCH_LINES`
    lines. Time is linear in the bytes read and memory bounded (:data:`READ_BUFFER_BYTES`
    plus a batch's frames) whatever the bytes: no newline at all, NULs, a compressed bomb.
    """
    batch_bytes = max(1, batch_bytes)
    offset, line_no = start_offset, start_line  # the file offset of buf[begin], the line before it
    # One buffer for every batch: fresh memory costs a page fault per 4 KB, which was a third
    # of the reading time. Safe because a batch's lines are copied out of it (see _split_lines).
    buf = bytearray(MAX_LINE_BYTES + batch_bytes + 1)
    begin = end = 0  # buf[begin:end] holds what was read and not yet yielded
    extra = 0  # file bytes of buf[begin:end] it does not hold (a long line kept as its prefix)
    long_lines: dict[int, int] = {}  # numbers and lengths of the long lines in buf[begin:end]
    eof = filled = False
    yielded = 0
    try:
        if start_offset:
            fh.seek(start_offset)
    except (OSError, EOFError) as exc:
        raise InputError(f"cannot read {name} after byte {offset}: {exc}") from exc
    dense = False  # the last batch was cut at MAX_BATCH_LINES: what is left likely holds as many
    while True:
        cut = _nth_newline(buf, begin, end, MAX_BATCH_LINES) if dense else -1
        capped = cut >= 0
        if not capped:
            cut = buf.rfind(b"\n", begin, end)
        if cut >= 0 and (capped or eof or filled):
            arrow = yielded >= copied
            # The lines are counted by polars, off the GIL, before they are split; only a range of
            # more than MAX_BATCH_LINES (very short lines) is counted again, to cut it at the limit.
            batch = None if capped else _batch_within(buf, begin, cut + 1, line_no, long_lines, arrow)
            if batch is None:
                if not capped:
                    cut, capped = _nth_newline(buf, begin, end, MAX_BATCH_LINES), True
                batch = _batch(buf, begin, cut + 1, line_no, long_lines, arrow)
            dense = capped
            offset += cut + 1 - begin + extra
            line_no += batch.lines.height
            yield dataclasses.replace(batch, end_offset=offset, end_line=line_no)
            begin, extra, long_lines = cut + 1, 0, {}
            yielded += 1
            continue
        if eof:
            if end > begin and final:
                batch = _batch(buf, begin, end, line_no, long_lines, arrow=yielded >= copied)
                yield dataclasses.replace(
                    batch,
                    end_offset=offset + end - begin + extra,
                    end_line=line_no + batch.lines.height,
                    terminated=False,
                )
            return
        if cut < 0 and end - begin > MAX_LINE_BYTES:
            begin, end, extra, eof, length = _skip_long_line(fh, name, buf, begin, end, line_no)
            long_lines, filled = {line_no + 1: length}, False
            continue
        # Keep the unfinished line at the buffer's start and fill the rest: one copy of at
        # most MAX_LINE_BYTES per filled buffer, never one per read.
        buf[: end - begin] = buf[begin:end]
        begin, end = 0, end - begin
        limit = min(batch_bytes, first_sizes[yielded]) if yielded < len(first_sizes) else batch_bytes
        end, eof = _fill(fh, name, buf, end, line_no, limit)
        filled = True


#: A line longer than this (in bytes) is a reject holding its first LONG_LINE_KEEP_CHARS
#: characters: it is never held whole, so a file without a newline costs no more memory
#: than one with.
MAX_LINE_BYTES = 1 << 20
#: Characters of an over-long line kept in its reject (the schema's raw limit).
LONG_LINE_KEEP_CHARS = 2000
#: At most this many lines per batch: 64 MiB of empty lines would otherwise be 32 million
#: rows per batch (2 GB of frames); a batch of 512 Ki lines stays under 100 MB whatever they hold.
MAX_BATCH_LINES = 1 << 19
#: Batches of at least this many bytes start with smaller ones (:func:`ramp_sizes`).
RAMP_MIN_BYTES = 8 << 20
#: The first batches' sizes as fractions of a batch: 1/8, then 1/4.
_RAMP_DIVISORS = (8, 4)


def ramp_sizes(batch_bytes: int) -> tuple[int, ...]:
    """The sizes of a read's first batches when batches are ``batch_bytes``: a collect stores
    nothing until its first batch is read and parsed (and the second read: it tells whether the
    first is the last), and meanwhile one core waits. Batches of 4 then 8 MB before the 32 MB
    ones get the pipeline going in a fifth of the time, for two more batches' fixed cost (about
    40 ms of CPU each). Below :data:`RAMP_MIN_BYTES` (tests' small batches), none."""
    if batch_bytes < RAMP_MIN_BYTES:
        return ()
    return tuple(batch_bytes // d for d in _RAMP_DIVISORS)


#: The read buffer's size: one batch plus one line at the limit.
READ_BUFFER_BYTES = MAX_LINE_BYTES + DEFAULT_BATCH_BYTES
#: Bytes scanned at a time while counting newlines (each scanned once).
_COUNT_STEP = 1 << 16
#: Bytes read at a time while skipping an over-long line's tail.
_SKIP_TAIL = 1 << 20


def _fill(fh: BinaryIO, name: Path | str, buf: bytearray, end: int, line_no: int, limit: int = 0) -> tuple[int, bool]:
    """Read into ``buf[end:]`` (at most ``limit`` bytes if given) until it is full or the
    input ends: ``(new end, at end of input)``. A gzip reader returns 64 KiB a call, so one
    call is not a buffer."""
    view = memoryview(buf)
    stop = len(buf) if not limit else min(len(buf), end + limit)
    while end < stop:
        try:
            got = fh.readinto(view[end:stop])
        except EOFError as exc:
            # gzip's reader drops the whole batch it was decompressing: say what to do with the file.
            raise CutOffError(
                f"cannot read {name} after line {line_no}: the compressed file is cut off ({exc}); "
                f"collect it once it is complete, or recover what it holds with `zcat {name} > recovered.log`",
                line_no,
            ) from exc
        except OSError as exc:
            raise InputError(f"cannot read {name} after line {line_no}: {exc}") from exc
        if not got:
            return end, True
        end += got
    return end, False


def _skip_long_line(
    fh: BinaryIO, name: Path | str, buf: bytearray, begin: int, end: int, line_no: int
) -> tuple[int, int, int, bool, int]:
    """Read past the over-long line (no newline) at ``buf[begin:end]``, keeping only its prefix.

    Returns ``(begin, end, extra, eof, length)``: ``buf[begin:end]`` now holds the prefix,
    its newline unless the input ended first, and what was read after it; ``extra`` is the
    file bytes dropped, ``length`` the line's length in bytes (its newline not counted).
    """
    keep = _prefix(buf, begin, end)
    length = end - begin
    start = 4 * LONG_LINE_KEEP_CHARS + 1  # room for the prefix and its newline before what follows
    while True:
        got, eof = _fill(fh, name, buf, start, line_no)
        nl = buf.find(b"\n", start, got)
        if nl >= 0:
            length += nl - start
            head = nl + 1 - len(keep) - 1
            buf[head : nl + 1] = keep + b"\n"
            return head, got, length - len(keep), eof, length
        length += got - start
        if eof:
            buf[: len(keep)] = keep
            return 0, len(keep), length - len(keep), True, length


def _nth_newline(buf: bytearray, begin: int, end: int, n: int) -> int:
    """The index of the ``n``-th newline in ``buf[begin:end]``, -1 if it holds fewer; linear in
    the bytes up to it (counted in C a step at a time, bisected within the last step). Asked only
    of a range known to hold more (the reader counts its lines first, see :func:`_batch_within`)."""
    if end - begin < n:
        return -1
    pos = begin
    while pos < end:
        stop = min(pos + _COUNT_STEP, end)
        found = buf.count(b"\n", pos, stop)
        if found >= n:
            lo, hi = pos, stop - 1
            while lo < hi:
                mid = (lo + hi) // 2
                if buf.count(b"\n", pos, mid + 1) >= n:
                    hi = mid
                else:
                    lo = mid + 1
            return lo
        n -= found
        pos = stop
    return -1


def _prefix(buf: bytearray, begin: int, end: int) -> bytes:
    """The first LONG_LINE_KEEP_CHARS characters of the line at ``buf[begin:end]``, as UTF-8 bytes."""
    head = bytes(buf[begin : min(end, begin + 4 * LONG_LINE_KEEP_CHARS)]).decode("utf-8", errors="replace")
    return head[:LONG_LINE_KEEP_CHARS].replace("\n", " ").encode("utf-8")


#: Bytes per value the batch is cut into before splitting: polars splits many values in
#: parallel, and treats a one-value column as a scalar (copying the whole batch).
_PIECE_BYTES = 1 << 20


#: Below this many bytes a batch is copied into polars; above, it is handed over through Arrow
#: without a copy, which saves more than importing pyarrow costs (about 0.1 s).
_ARROW_MIN_BYTES = 8 << 20
#: The largest offset an Arrow view holds (a signed 32-bit integer): a batch handed over as
#: views ends below it.
_VIEW_MAX_OFFSET = (1 << 31) - 1
#: Bytes a view holds inline (a shorter value has no offset).
_VIEW_INLINE = 12


class _ArrowArray:
    """An Arrow array polars takes through the C data interface alone: ``pl.Series`` of a pyarrow array
    itself first imports ``pyarrow.compute`` (polars' ``coerce_arrow``), and with it numpy and its
    BLAS, which nothing in a collect uses (0.06-0.1 CPU-s of every collect that reads a large batch)."""

    __slots__ = ("array",)

    def __init__(self, array: object) -> None:
        self.array = array

    def __arrow_c_array__(self, requested_schema: object | None = None) -> object:
        return self.array.__arrow_c_array__(requested_schema)  # type: ignore[attr-defined]


def _pieces(buf: bytearray, cuts: list[int], arrow: bool = True) -> pl.Series:
    """Binary values ``buf[cuts[i]:cuts[i + 1]]``, each without its final newline if it has one
    (so that splitting a value at its newlines gives exactly its lines). Large ones are handed
    over as Arrow views into ``buf``, without a copy."""
    bounds = [(a, b - 1 if b > a and buf[b - 1] == 0x0A else b) for a, b in pairwise(cuts)]
    if arrow and cuts[-1] - cuts[0] >= _ARROW_MIN_BYTES and cuts[-1] <= _VIEW_MAX_OFFSET:
        import pyarrow as pa

        if hasattr(pa, "binary_view"):  # a pyarrow without view types: copied
            views = bytearray()
            for a, b in bounds:
                if b - a <= _VIEW_INLINE:
                    views += struct.pack("<i12s", b - a, bytes(buf[a:b]))
                else:
                    views += struct.pack("<i4sii", b - a, bytes(buf[a : a + 4]), 0, a)
            buffers = [None, pa.py_buffer(views), pa.py_buffer(buf)]
            return pl.Series(_ArrowArray(pa.Array.from_buffers(pa.binary_view(), len(bounds), buffers))).alias("line")
    return pl.Series("line", [bytes(buf[a:b]) for a, b in bounds], dtype=pl.Binary)


def _split_lines(buf: bytearray, begin: int, end: int, arrow: bool = True, max_lines: int = 0) -> pl.Series | None:
    """``buf[begin:end]`` as one String per line (a final newline ends the last line; it does
    not start an empty one), the CR of CRLF line ends removed. With ``max_lines``: None, before
    any line is split, if the range holds more newlines than that."""
    # Cut at newlines into ~1 MB binary values, validate as UTF-8 and split in Rust: a few
    # times faster than bytes.decode + str.split. The split copies the lines out, so the
    # caller may reuse ``buf`` (tests/collector/sources/test_files.py checks it).
    cuts = [begin]
    while end - cuts[-1] > _PIECE_BYTES:
        nl = buf.find(b"\n", cuts[-1] + _PIECE_BYTES, end)
        if nl < 0 or nl + 1 == end:
            break
        cuts.append(nl + 1)
    cuts.append(end)
    pieces = _pieces(buf, cuts, arrow)
    try:
        text = pieces.cast(pl.String)
    except pl.exceptions.ComputeError:  # not UTF-8: decode this batch with replacement characters
        if max_lines and buf.count(b"\n", begin, end) > max_lines:
            return None
        decoded = bytes(buf[begin:end]).decode("utf-8", errors="replace")
        lines = pl.Series("line", decoded.removesuffix("\n").split("\n"), dtype=pl.String)
    else:
        # Each piece but an unterminated last one ended in a newline, left out of its value.
        ended = len(cuts) - 2 + int(end > begin and buf[end - 1] == 0x0A)
        if max_lines and text.str.count_matches("\n", literal=True).sum() + ended > max_lines:
            return None
        lines = text.str.split("\n").explode()
    return lines.str.strip_chars_end("\r") if buf.find(b"\r", begin, end) >= 0 else lines


def _batch(
    buf: bytearray, begin: int, end: int, first_line: int, long_lines: dict[int, int], arrow: bool = True
) -> LineBatch:
    """The lines of ``buf[begin:end]`` numbered from ``first_line + 1`` (offsets left to the
    caller); lines over MAX_LINE_BYTES cut to their prefix and added to ``long_lines``."""
    batch = _batch_within(buf, begin, end, first_line, long_lines, arrow, max_lines=0)
    assert batch is not None  # without a limit every range is a batch
    return batch


def _batch_within(
    buf: bytearray,
    begin: int,
    end: int,
    first_line: int,
    long_lines: dict[int, int],
    arrow: bool = True,
    max_lines: int = MAX_BATCH_LINES,
) -> LineBatch | None:
    """:func:`_batch`, or None if ``buf[begin:end]`` holds more than ``max_lines`` newlines (0: no limit)."""
    lines = _split_lines(buf, begin, end, arrow, max_lines)
    if lines is None:
        return None
    frame = pl.DataFrame(
        {
            "source_offset": pl.int_range(first_line + 1, first_line + 1 + len(lines), eager=True, dtype=pl.Int64),
            "line": lines,
        }
    )
    if end - begin > MAX_LINE_BYTES:  # only then can a line be over the limit
        length = pl.col("line").str.len_bytes()
        over = frame.filter(length > MAX_LINE_BYTES).select("source_offset", length.alias("n"))
        if over.height:
            long_lines = long_lines | dict(over.iter_rows())
            frame = frame.with_columns(
                pl.when(length > MAX_LINE_BYTES)
                .then(pl.col("line").str.slice(0, LONG_LINE_KEEP_CHARS))
                .otherwise(pl.col("line"))
            )
    return LineBatch(frame, 0, 0, long_lines=long_lines)


def long_line_rejects(batch: LineBatch) -> tuple[pl.DataFrame, pl.DataFrame]:
    """``batch``'s lines without its over-long ones, and those as rejects (``source_offset``,
    ``format`` null, ``reason``, ``raw`` = the line's first characters)."""
    if not batch.long_lines:
        return batch.lines, pl.DataFrame()
    numbers = pl.col("source_offset").is_in(list(batch.long_lines))
    rejects = batch.lines.filter(numbers).select(
        "source_offset",
        pl.lit(None, dtype=pl.String).alias("format"),
        pl.col("source_offset")
        .replace_strict(batch.long_lines, return_dtype=pl.Int64)
        .map_elements(long_line_reason, return_dtype=pl.String)
        .alias("reason"),
        pl.col("line").alias("raw"),
    )
    return batch.lines.filter(~numbers), rejects


def long_line_reason(length: int) -> str:
    """Why a line of ``length`` bytes is a reject."""
    return (
        f"line of {length:,} bytes is longer than the limit of {MAX_LINE_BYTES:,} bytes (1 MiB); "
        f"its first {LONG_LINE_KEEP_CHARS:,} characters are kept"
    )
