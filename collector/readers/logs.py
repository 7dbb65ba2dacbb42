"""The text log reader: one reader over two byte sources, a local file and a Cloud Storage object.

A log is read batch by batch (:mod:`tierscope.collector.sources.files`), each batch through the
format chain (:func:`tierscope.collector.formats.parse_lines`), and handed to the sink with the
position after it. A whole-file format (a Cloud Logging JSON export, a console CSV download:
:func:`tierscope.collector.formats.sniff_file`) is read whole instead, its parts handed on one
by one and the file marked read at its end.

The two byte sources differ only in how they are found again:

- a **local file** (:class:`LocalFile`) is read from where the last collect stopped
  (:mod:`tierscope.collector.offsets`; ``reread``: from its start); a rotated predecessor's
  unread remainder first. After each batch the records are stored first and the offset saved
  second, so a kill in between only makes the next collect re-read lines it then skips as
  duplicates. An unterminated last line is left for the next collect (its writer may be half way
  through it, and a cut line may read as a whole one), or taken once the file has not changed for
  ``settle_s`` seconds. A gzip file is read whole and marked read at its end; a read
  stopped by ``--max-seconds`` saves the lines done (:attr:`FileState.resume_line`), and the next
  collect of the same bytes decompresses them again without reading them and goes on after them.
- a **Cloud Storage object** (:class:`StoredObjectSource`) is read whole, unless this generation
  of it was read already (a rewritten object is a new generation: read from its start, the records
  already stored skipped as duplicates), and marked read at its end, so a collect killed half way
  reads it again (objects do not grow: nothing is left for later). A whole-file format is
  downloaded to a temporary file, at most :data:`WHOLE_FILE_MAX_BYTES`.
"""

from __future__ import annotations

import dataclasses
import gzip
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager, contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import BinaryIO

import polars as pl

from tierscope.collector.errors import CutOffError, InputError
from tierscope.collector.formats import (
    HEAD_BYTES,
    SNIFF_LINES,
    FileFormat,
    ParseContext,
    Parsed,
    check_format,
    learn_from_head,
    parse_lines,
    sniff_file,
    sniff_format,
)
from tierscope.collector.formats.layout import STATE as LAYOUT_STATE
from tierscope.collector.formats.layout import carried_layout, resume_layout
from tierscope.collector.formats.memory import KEY as MEMORY
from tierscope.collector.formats.memory import recall, remembered
from tierscope.collector.formats.status import carried_work, resume_work
from tierscope.collector.held import FIRST_READS, held_note, settled
from tierscope.collector.limits import expand_limit, expands_past, too_large
from tierscope.collector.lineends import CrLines, cr_only
from tierscope.collector.manifest import RunSpec
from tierscope.collector.offsets import NUMBERED_ON, FileState, Segment, line_start, plan_reads, snapshot
from tierscope.collector.positions import Positions
from tierscope.collector.reading import Batch, ReadOptions
from tierscope.collector.runs import SourceCounts, check_readable
from tierscope.collector.sources import objects
from tierscope.collector.sources.files import (
    WHOLE_FILE_MAX_BYTES,
    LineBatch,
    decompressed,
    file_head,
    file_year,
    iter_handle_batches,
    long_line_rejects,
    open_raw,
    ramp_sizes,
    reader_of,
)
from tierscope.gcs import is_url

#: Batches of a segment read without pyarrow (see :func:`iter_handle_batches`).
_COPIED_BATCHES = 2
#: The key of a position's carry saying its format was sniffed from fewer lines than a sniff reads
#: (:data:`~tierscope.collector.formats.SNIFF_LINES`) while the file was still being written: the next collect
#: sniffs it again from the file's head, as one read of the whole file would.
SNIFFED_SHORT = "sniffed-short"


# --- the two byte sources --------------------------------------------------------------------


class LocalFile:
    """A log on the local file system. Raises :class:`MissingInputError` if it is not a regular
    file, :class:`InputError` if its name is not UTF-8."""

    def __init__(self, path: Path) -> None:
        check_readable(path)
        self.path = path
        self.name = str(path)

    def previous(self, positions: Positions, run_id: str) -> FileState | None:
        return positions.offsets.get(self.path, run_id)

    def unchanged(self, prev: FileState | None, reread: bool) -> bool:
        return False  # told from its bytes once open (plan)

    def year(self, given: int | None) -> int:
        return given if given is not None else file_year(self.path)

    def whole_year(self, given: int | None) -> int | None:
        return given  # a whole-file format's entries carry their own times

    def opened(self) -> AbstractContextManager[BinaryIO]:
        return open_raw(self.path)

    def head(self, raw: BinaryIO) -> str:
        return file_head(self.path, HEAD_BYTES)

    def stream(self, raw: BinaryIO) -> tuple[BinaryIO, bool]:
        """A reader of ``raw``'s lines, and whether it is read whole (gzip). A file of carriage returns
        and no newline is read with each ``\\r`` as a line end (:mod:`tierscope.collector.lineends`)."""
        reader = decompressed(raw)
        if reader is raw and cr_only(raw):
            return CrLines(raw), False  # type: ignore[return-value]
        return reader, reader is not raw

    def plan(
        self, raw: BinaryIO, prev: FileState | None, whole: bool, reread: bool, olddirs: tuple[Path, ...] = ()
    ) -> list[Segment]:
        return plan_reads(raw, self.path, prev, whole, reread, olddirs)

    def settled(self, raw: BinaryIO, whole: bool, settle_s: float) -> bool:
        return whole or settled(os.fstat(raw.fileno()), settle_s)

    def read_whole(self, raw: BinaryIO, run_id: str, lines: int, fmt: str | None) -> FileState:
        """The position of the file read whole."""
        return snapshot(raw, self.path, run_id, 0, lines, True, fmt)

    @contextmanager
    def local_copy(self, raw: BinaryIO, fmt: FileFormat) -> Iterator[Path]:
        yield self.path


class StoredObjectSource:
    """A log object on Cloud Storage. Raises :class:`InputError` if it cannot be read."""

    def __init__(self, url: str) -> None:
        self.obj = objects.stat(url)
        self.name = self.obj.url  # a plain str from here on: it goes into frames and state documents

    def previous(self, positions: Positions, run_id: str) -> FileState | None:
        return positions.offsets.get(self.name, run_id)

    def unchanged(self, prev: FileState | None, reread: bool) -> bool:
        return not reread and prev is not None and prev.whole and prev.generation == self.obj.generation

    def year(self, given: int | None) -> int | None:
        if given is None and self.obj.updated is not None:
            return self.obj.updated.year
        return given

    def whole_year(self, given: int | None) -> int | None:
        return self.year(given)

    def opened(self) -> AbstractContextManager[BinaryIO]:
        return objects.opened(self.name)

    def head(self, raw: BinaryIO) -> str:
        """The object's first :data:`HEAD_BYTES` (decompressed), decoded, for sniffing; empty if unreadable."""
        try:
            return _object_lines(raw).read(HEAD_BYTES).decode("utf-8", errors="replace")
        except (OSError, EOFError):
            return ""

    def stream(self, raw: BinaryIO) -> tuple[BinaryIO, bool]:
        return _object_lines(raw), True

    def plan(
        self, raw: BinaryIO, prev: FileState | None, whole: bool, reread: bool, olddirs: tuple[Path, ...] = ()
    ) -> list[Segment]:
        why = "reread" if reread else "new" if prev is None else "rewritten"  # an object is never rotated
        return [Segment(self.name, 0, 0, why)]

    def settled(self, raw: BinaryIO, whole: bool, settle_s: float) -> bool:
        return True  # an object is complete once it exists

    def read_whole(self, raw: BinaryIO, run_id: str, lines: int, fmt: str | None) -> FileState:
        """What is kept of an object read whole: its generation (the fingerprint), size and lines."""
        obj = self.obj
        updated = obj.updated or datetime.fromtimestamp(0, UTC)
        return FileState(
            path=obj.url,
            run_id=run_id,
            device=0,
            inode=0,
            size=obj.size,
            mtime_ns=int(updated.timestamp() * 1e9),
            offset=obj.size,
            line=lines,
            head_sha256="",
            head_len=0,
            tail_sha256="",
            tail_len=0,
            whole=True,
            collected_at=datetime.now(UTC).isoformat(timespec="seconds"),
            format=fmt,
            generation=obj.generation,
        )

    @contextmanager
    def local_copy(self, raw: BinaryIO, fmt: FileFormat) -> Iterator[Path]:
        """A temporary copy of the object (the whole-file formats read a path)."""
        obj = self.obj
        if obj.size > WHOLE_FILE_MAX_BYTES:
            raise InputError(
                f"{obj.url} is a {fmt.name} file of {obj.size >> 20} MiB, more than tierscope reads whole "
                f"({WHOLE_FILE_MAX_BYTES >> 20} MiB): split it (export shorter time ranges)"
            )
        with tempfile.TemporaryDirectory(prefix="tierscope-object-") as tmp:
            local = Path(tmp) / obj.name
            raw.seek(0)
            with local.open("wb") as out:
                shutil.copyfileobj(raw, out)
            yield local


def _object_lines(raw: BinaryIO) -> BinaryIO:
    """A reader of ``raw``'s bytes from its start: itself, gzip decompressing it, or its UTF-16 text as UTF-8
    (:mod:`tierscope.collector.sources.utf16`)."""
    raw.seek(0)
    head = raw.read(4)
    raw.seek(0)
    return reader_of(raw, head)


ByteSource = LocalFile | StoredObjectSource


# --- the reader ------------------------------------------------------------------------------


class LogReader:
    """Text logs: local files and ``gs://`` objects (see the module doc)."""

    name = "log"

    def claims(self, source: Path | str | object) -> bool:
        return isinstance(source, Path | str)

    def open(self, source: Path | str | object, run: RunSpec, positions: Positions, options: ReadOptions) -> LogReading:
        only = options.fmt or run.format
        named = check_format(only, run.formats) if only else None
        src: ByteSource = StoredObjectSource(str(source)) if is_url(source) else LocalFile(Path(str(source)))
        return LogReading(src, run, positions, options, only, named)


class LogReading:
    """One log opened by :class:`LogReader`: its batches, stored on the sink's threads."""

    pipelined = True

    def __init__(
        self,
        source: ByteSource,
        run: RunSpec,
        positions: Positions,
        options: ReadOptions,
        only: str | None,
        named: object,
    ) -> None:
        self.source, self.run, self.options, self.only = source, run, options, only
        self.whole_format = named if isinstance(named, FileFormat) else None
        self.sniff = named is None
        self.prev = source.previous(positions, run.run_id)
        #: The format the last collect sniffed from too few lines is sniffed again (:data:`SNIFFED_SHORT`).
        self.resniff = False
        self.counts = SourceCounts(
            source=source.name, run_id=run.run_id, format=only or (self.prev.format if self.prev else None)
        )

    def batches(self) -> Iterator[Batch]:
        src, opts, counts = self.source, self.options, self.counts
        if src.unchanged(self.prev, opts.reread):
            counts.format = self.prev.format if self.prev else None
            counts.notes.append("unchanged")
            return
        with src.opened() as raw:
            whole_format = sniff_file(src.head(raw)) if self.sniff else self.whole_format
            if whole_format is not None:
                yield from self._whole(raw, whole_format)
                return
            if isinstance(src, StoredObjectSource) and self.prev is not None and not opts.reread:
                counts.notes.append(f"a new generation of the object ({src.obj.generation}): read from its start")
            context = ParseContext(year=src.year(opts.year), formats=self.run.formats)
            reader, whole = src.stream(raw)
            segments = src.plan(raw, self.prev, whole, opts.reread, self.run.olddirs)
            if [s.why for s in segments] in (["truncated"], ["replaced"]):
                # another text from its start, no rotation of the one read before: its format is sniffed anew
                counts.format = self.only
            first = segments[0] if segments else None
            if first and self.prev is not None and (first.start_offset or first.start_line) and first.why in _GOES_ON:
                # sniffed from too few lines: sniffed again, from the head, when there are lines to read
                self.resniff = bool((self.prev.carry or {}).get(SNIFFED_SHORT)) and self.only is None
                # goes on where the last collect stopped: what the formats decided from the lines read then holds
                recall(context, (self.prev.carry or {}).get(MEMORY))
                # ... and a bare ending is judged by the records read then
                resume_work(context, self.prev.carry)
                # ... and reports printed as a group of lines are known by the file's head
                learn_from_head(src.head(raw), context)
                resume_layout(context, self.prev.carry)
            if not segments:
                counts.notes.append("unchanged")
            elif isinstance(reader, gzip.GzipFile) and (bomb := self._bomb(raw)) is not None:
                # marked read: not measured again until it changes
                yield Batch(bomb, src.read_whole(raw, self.run.run_id, counts.lines, None))
                return
            numbered_to: int | None = None  # the log's line the segment before ended at
            for seg in segments:
                if opts.deadline.passed():
                    return
                counts.notes.extend(seg.missing)
                if seg.why in NUMBERED_ON and numbered_to is not None:
                    seg = dataclasses.replace(seg, start_line=numbered_to)
                if isinstance(src, LocalFile) and seg.why in (*NUMBERED_ON, "reread") and seg.start_line:
                    counts.notes.append(_numbered_on(seg))
                elif isinstance(src, LocalFile) and seg.why not in ("new", "grown"):
                    counts.notes.append(f"{seg.why}: read from line {seg.start_line + 1} of {seg.path}")
                if seg.why == "resumed":
                    seg = self._resumed(seg)
                reading = _Segment(self, context, seg)
                try:
                    if not seg.current:
                        # a rotated copy may be compressed (logrotate's compress): its offsets are of the text
                        with open_raw(Path(seg.path)) as old:
                            yield from reading.batches(decompressed(old), old, saving=False, whole=False)
                    else:
                        yield from reading.batches(reader, raw, saving=not whole, whole=whole)
                except CutOffError as cut:
                    if not self._held_cut(Path(seg.path), cut):
                        raise
                    return  # no position saved: the next collect reads it again, what was stored before the cut skipped
                if reading.stopped:
                    return  # by the deadline: a gzip's position is its lines done (_Segment.batches)
                numbered_to = reading.end_line
            if segments and whole:
                # Marked read only once whole: a kill half way makes the next collect read it again.
                done = counts.lines + (segments[0].start_line if segments[0].why == "resumed" else 0)
                yield Batch(None, src.read_whole(raw, self.run.run_id, done, counts.format))

    def _held_cut(self, path: Path, cut: CutOffError) -> bool:
        """Whether ``path``, a compressed file cut off (``cut``), is held as a text file's unfinished last line is:
        a local file changed within the settle time is taken for one still being written (gzip's writer, logrotate's
        ``compress``), and read once it is whole; the collect says so in one line. A settled one is cut for good:
        False, and the caller raises ``cut`` (a gs:// object is whole once it exists)."""
        if not isinstance(self.source, LocalFile):
            return False
        try:
            st = path.stat()
        except OSError:
            return False
        if settled(st, self.options.settle_s):
            return False
        ago = max(0, round(time.time() - st.st_mtime))
        what = "the file" if str(path) == self.source.name else str(path)  # a rotated copy is named
        after = f" (after line {cut.lines:,})" if cut.lines else ""
        self.counts.notes.append(
            f"{what} ends before its compressed stream does{after} and changed {ago} s ago: "
            f"still being written, it is read again once it is whole (records stored already are skipped; cut still "
            f"after --settle {self.options.settle_s:g} s, it is an error saying how to recover it)"
        )
        return True

    def _resumed(self, seg: Segment) -> Segment:
        """``seg`` (a gzip whose last read stopped after line ``seg.start_line``) with the offset in the
        decompressed text where that line ends, found by decompressing the file again up to there and
        counting newlines, without reading lines (zlib and a byte count: some 10 times faster than the
        read; the reader's seek then decompresses them once more). Linear in the text done so far, which
        the decompressed-size limit bounds. Read from its start if the lines are no longer all there."""
        with open_raw(Path(seg.path)) as again:
            ends = _line_ends_offset(decompressed(again), seg.start_line)
        if ends is None:
            return dataclasses.replace(seg, start_offset=0, start_line=0, why="whole")
        return dataclasses.replace(seg, start_offset=ends)

    def _bomb(self, raw: BinaryIO) -> Parsed | None:
        """The one reject of a gzip that expands past its limit (:mod:`tierscope.collector.limits`), naming
        it, or None. The file then counts as one line, rejected whole. A ``gs://`` object is measured
        as a local file is, from a first download of at most its compressed size (the read downloads it
        again: objects are small, and a bomb is refused before a line of it is stored)."""
        src = self.source
        size = src.obj.size if isinstance(src, StoredObjectSource) else os.fstat(raw.fileno()).st_size
        ratio = self.options.max_expand
        limit = expand_limit(size, ratio)
        if not expands_past(raw, limit):
            return None
        reason = too_large(self.source.name, size, limit, ratio)
        self.counts.lines += 1
        self.counts.notes.append(reason)
        nothing = pl.DataFrame()
        reject = pl.DataFrame(
            {"source_offset": [None], "reason": [reason], "raw": [""]},
            schema={"source_offset": pl.Int64, "reason": pl.String, "raw": pl.String},
        )
        return Parsed(steps=nothing, events=nothing, rejects=reject, rest=nothing)

    def _whole(self, raw: BinaryIO, fmt: FileFormat) -> Iterator[Batch]:
        """Read the source whole with ``fmt`` (``lines`` counts entries or rows), unless a local file
        is unchanged since the last collect. Records without a run id of their own or a job id
        belong to the run; its tier fills in records without one. Raises :class:`InputError` if the
        file is not in ``fmt``."""
        src, counts, run = self.source, self.counts, self.run
        if isinstance(src, LocalFile) and not src.plan(raw, self.prev, True, self.options.reread):
            counts.format = None
            counts.notes.append("unchanged")
            return
        counts.format = fmt.name
        context = ParseContext(year=src.whole_year(self.options.year), formats=run.formats, chain=parse_lines)
        with src.local_copy(raw, fmt) as path:
            got = fmt.read(path, run.run_id, run.tier, context)
            counts.lines = got.items
            for part in got.parts:
                if src.name != str(path) and part.rejects.height and "source" in part.rejects.columns:
                    renamed = pl.col("source").replace(str(path), src.name)
                    part = dataclasses.replace(part, rejects=part.rejects.with_columns(renamed))
                yield Batch(part)
        yield Batch(None, src.read_whole(raw, run.run_id, counts.lines, counts.format))


class _Segment:
    """One stretch of a log read line batch by line batch (see :class:`~tierscope.collector.offsets.Segment`)."""

    def __init__(self, log: LogReading, context: ParseContext, seg: Segment) -> None:
        self.log, self.context, self.seg = log, context, seg
        self.counts = log.counts
        #: The read stopped at the collect's deadline, after the batch in hand.
        self.stopped = False
        #: What ends the lines read: a newline, or a carriage return alone.
        self.line_end = b"\n"
        #: The format was sniffed from fewer lines of the file's head than a sniff reads.
        self.sniffed_short = False
        #: Where the bytes read end (past an unterminated last line, if one was read), and whether one was.
        self.read_end = seg.start_offset
        self.unfinished = False
        #: The number of the last line read (the lines held for the next collect excepted).
        self.end_line = seg.start_line

    def _sniff(self, lines: pl.DataFrame, raw: BinaryIO) -> str | None:
        """The format sniffed from the file's first lines: the batch's, where the read starts at the file's
        start, else the head's (a collect going on from lines read before, whose sniff saw too few)."""
        sample = lines.get_column("line")
        if self.seg.start_offset:
            sample = pl.Series("line", self.log.source.head(raw).split("\n")[:-1], dtype=pl.String)
        self.sniffed_short = sample.len() < SNIFF_LINES
        return sniff_format(sample, self.context.formats)

    def batches(self, reader: BinaryIO, raw: BinaryIO, *, saving: bool, whole: bool) -> Iterator[Batch]:
        """Read the segment from ``reader`` (over ``raw``); with ``saving``, each batch carries the
        position after it."""
        counts, seg, log = self.counts, self.seg, self.log
        self.line_end = b"\r" if isinstance(reader, CrLines) else b"\n"
        # A file's first read cannot tell a log still being written from a copy of an ended job's (a download, an
        # excerpt): both changed moments ago. The copy is the commoner first read, and reading its every line is
        # what its user expects; a live log is followed from its second collect on, holding its open end until it
        # settles. A last line without its newline still waits on a first read: a live writer's buffered output
        # stops mid-line, and the rest of a line taken now would be read later as a line of its own.
        settled = log.source.settled(raw, whole, log.options.settle_s) if saving or whole else True
        decided = settled or seg.why in FIRST_READS
        # The first parse waits for two batches (the second tells whether the first is the last):
        # copied, they need no pyarrow, which the store thread is importing meanwhile (sink._Storing).
        batches = iter_handle_batches(
            reader,
            seg.path,
            seg.start_offset,
            seg.start_line,
            log.options.batch_bytes,
            copied=_COPIED_BATCHES,
            first_sizes=ramp_sizes(log.options.batch_bytes),
        )
        pending: pl.DataFrame | None = None
        yielded = False
        # a file still being written may end in the middle of a report printed as a group of lines
        self.context.may_grow = saving and not decided
        for number, (batch, last) in enumerate(_with_lookahead(self._complete(_read_ahead(batches), settled))):
            counts.lines += batch.lines.height
            lines, too_long = long_line_rejects(batch)
            lines, blank = _without_blank_runs(lines)
            lines = lines if pending is None else pl.concat([pending, lines])
            if number == 0 and (counts.format is None or log.resniff) and log.only is None:
                counts.format = self._sniff(lines, raw)
            parsed = parse_lines(lines, only=log.only, context=self.context, first=counts.format, final=last)
            parsed.skipped += blank  # counted by the sink, the one writer of counts.skipped meanwhile
            if too_long.height:
                parsed.rejects = pl.concat([parsed.rejects, too_long], how="diagonal_relaxed")
            pending = parsed.pending
            position = self._resume_at(raw, (batch.end_offset, batch.end_line), pending) if saving else None
            stopping = not last and log.options.deadline.passed()
            # The lines done: those before the look-ahead held back for the next batch.
            done = batch.end_line if pending is None or not pending.height else _first_line(pending) - 1
            self.end_line = batch.end_line
            if stopping and whole and self.seg.current and isinstance(log.source, LocalFile):
                # A gzip's position: its bytes, and the lines done.
                read = snapshot(raw, Path(self.seg.path), log.run.run_id, 0, done, True, counts.format)
                position = dataclasses.replace(read, resume_line=done)
            if position is not None:
                learned = carried_layout(self.context)
                memory = remembered(self.context)
                carry = {
                    **({SNIFFED_SHORT: True} if self.sniffed_short and not whole else {}),
                    **(carried_work(self.context) or {}),
                    **({LAYOUT_STATE: learned} if learned else {}),
                    **({MEMORY: memory} if memory else {}),
                }
                position = dataclasses.replace(position, carry=carry or None)
            if last and position is not None and (self.context.may_grow or self.unfinished) and not stopping:
                position = self._held(position, batch.end_line - done)
            yield Batch(parsed, position)
            if last and saving and done < batch.end_line:
                # the lines of a report still being written: read, and counted, by the next collect
                counts.lines -= batch.end_line - done
            if last:
                yielded = True
            if stopping:
                # The look-ahead held back is read by the next collect: counted there, once.
                counts.lines -= batch.end_line - done
                counts.notes.append(_stopped(done, whole and position is not None))
                self.stopped = True
                return  # a safe point: this batch is stored, then its position saved

        if not yielded and saving and self.unfinished and self.seg.current:
            # nothing but a last line without its newline: where it starts is kept, with what was held
            yield Batch(None, self._held(self._unread(raw), 0))
        elif not yielded and saving and self.seg.current and seg.why in FIRST_READS and self.read_end == 0:
            # an empty log (a job's, just created): kept, so that the lines written next are followed as it grows
            yield Batch(None, self._unread(raw))

    def _unread(self, raw: BinaryIO) -> FileState:
        """The position of a segment none of whose lines were read: its start, with what the lines before knew."""
        seg, log = self.seg, self.log
        at = snapshot(raw, Path(seg.path), log.run.run_id, seg.start_offset, seg.start_line, False, self.counts.format)
        carry = log.prev.carry if seg.why == "grown" and log.prev is not None else None
        return dataclasses.replace(at, carry=carry)

    def _held(self, position: FileState, pending: int) -> FileState:
        """``position`` (before the last ``pending`` lines read, and an unterminated one), marked as holding them
        (:mod:`tierscope.collector.held`) when they end the file as it is now; the collect says so, once."""
        lines = pending + self.unfinished
        if not lines:
            return position
        self.counts.notes.append(
            held_note(position.line + 1, lines, position.mtime_ns / 1e9, self.log.options.settle_s)
        )
        if position.size != self.read_end or position.offset >= position.size:
            return position  # written meanwhile: the next collect reads on
        return dataclasses.replace(position, held_lines=lines)

    def _complete(self, batches: Iterator[LineBatch], settled: bool) -> Iterator[LineBatch]:
        """``batches``, without an unterminated last line that may still be being written: a line cut mid-write
        may read as a whole one (``global_step/sec: 12.2`` of ``12.2695``), and its rest, once written, as a
        line of its own, so it is read once its newline comes, or once the file has settled."""
        for batch in batches:
            self.read_end = batch.end_offset
            # An over-long line is a reject however it ends: waiting cannot make it shorter.
            if not batch.terminated and not settled and not batch.long_lines:
                self.unfinished = True
                return
            yield batch

    def _resume_at(self, raw: BinaryIO, ends: tuple[int, int], pending: pl.DataFrame | None) -> FileState:
        """The position after a batch ending at byte and line ``ends``: past its last line, or at
        the first line held back as look-ahead."""
        run_id, fmt, path = self.log.run.run_id, self.counts.format, Path(self.seg.path)
        end_offset, end_line = ends
        if pending is None or pending.height == 0:
            return snapshot(raw, path, run_id, end_offset, end_line, False, fmt)
        first = _first_line(pending)
        start = line_start(raw.fileno(), end_offset, end_line - first + 1, self.line_end)
        return snapshot(raw, path, run_id, start, first - 1, False, fmt)


#: The segments that go on from where the last collect stopped in the same text: what its parse decided holds.
_GOES_ON = frozenset({"grown", "rotated remainder", "resumed"})


def _numbered_on(seg: Segment) -> str:
    """The note of a later generation of a log whose lines are numbered on from the one before it (``NUMBERED_ON``)."""
    return (
        f"{seg.why}: {seg.path} read from its start, its lines numbered on from line {seg.start_line + 1:,} "
        f"(after the log's {seg.start_line:,} lines before it), so its records keep the order of writing"
    )


def _first_line(pending: pl.DataFrame) -> int:
    """The number of the first line of ``pending`` (the look-ahead held back for the next batch)."""
    return int(pending.get_column("source_offset").min())  # type: ignore[arg-type]


def _stopped(line: int, compressed: bool) -> str:
    """The note of a read stopped by ``--max-seconds`` after ``line``."""
    after = (
        "the next collect decompresses the lines done again, without reading them, and goes on from there"
        if compressed
        else "the next collect goes on from there"
    )
    return f"stopped after line {line:,} by --max-seconds: what was read is stored; {after}"


#: Bytes decompressed at a time while looking for where a gzip's lines done end.
_SKIP_CHUNK = 1 << 20


def _line_ends_offset(reader: BinaryIO, lines: int) -> int | None:
    """The offset in ``reader``'s bytes just past its ``lines``-th newline (0 for 0 lines), or None
    if it holds fewer."""
    offset = 0
    left = lines
    while left > 0:
        chunk = reader.read(_SKIP_CHUNK)
        if not chunk:
            return None
        found = chunk.count(b"\n")
        if found < left:
            left -= found
            offset += len(chunk)
            continue
        at = -1
        for _ in range(left):
            at = chunk.index(b"\n", at + 1)
        return offset + at + 1
    return offset


def _with_lookahead(batches: Iterator[LineBatch]) -> Iterator[tuple[LineBatch, bool]]:
    """``(batch, is_last)`` pairs."""
    previous = next(batches, None)
    for batch in batches:
        yield previous, False  # type: ignore[misc]
        previous = batch
    if previous is not None:
        yield previous, True


def _read_ahead(batches: Iterator[LineBatch]) -> Iterator[LineBatch]:
    """``batches``, the next one read on a thread of its own while the caller parses this one
    (reading is file reads and polars' splitting, which release the GIL). Reads stay in order,
    one at a time; a read's error is raised where its batch would have come. Closing this
    iterator waits for the read under way."""
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="tierscope-read") as pool:
        ahead = pool.submit(next, batches, None)
        while (batch := ahead.result()) is not None:
            ahead = pool.submit(next, batches, None)
            yield batch


#: Blank lines kept of a run of them; the rest skip the format chain (counted as skipped). No
#: format looks further than two lines around a line, so every other line reads as before.
_BLANK_RUN_KEPT = 3


def _without_blank_runs(lines: pl.DataFrame) -> tuple[pl.DataFrame, int]:
    """``lines`` without the empty lines past the first :data:`_BLANK_RUN_KEPT` of each run, and
    how many were dropped: 64 MiB of empty lines then costs a scan, not the whole chain's work."""
    blank = pl.col("_blank")
    deep = blank
    for back in range(1, _BLANK_RUN_KEPT + 1):
        deep = deep & blank.shift(back).fill_null(False)
    keep = lines.select((pl.col("line").str.len_bytes() == 0).alias("_blank")).select(~deep).to_series()
    dropped = int(lines.height - keep.sum())
    return (lines.filter(keep), dropped) if dropped else (lines, 0)
