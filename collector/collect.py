"""Collect step logs from files into a dataset: the library behind ``tierscope collect files``."""

from __future__ import annotations

import dataclasses
import os
import time
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor, wait
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO

import polars as pl

from tierscope.collector.errors import InputError, MissingInputError
from tierscope.collector.formats import (
    HEAD_BYTES,
    FileFormat,
    ParseContext,
    Parsed,
    UnknownFormatError,
    check_format,
    parse_lines,
    sniff_file,
    sniff_format,
)
from tierscope.collector.manifest import RunSpec
from tierscope.collector.offsets import FileState, OffsetStore, Segment, line_start, plan_reads, snapshot

# Defined there to be read before polars is imported (a collect with nothing new needs no more).
from tierscope.collector.runs import LOG_SUFFIXES as LOG_SUFFIXES
from tierscope.collector.runs import CollectResult as CollectResult
from tierscope.collector.runs import SourceCounts as SourceCounts
from tierscope.collector.runs import _is_link_loop, check_utf8_name
from tierscope.collector.runs import default_run_id as default_run_id
from tierscope.collector.runs import directory_run as directory_run
from tierscope.collector.runs import is_log_name as is_log_name
from tierscope.collector.runs import parse_run_meta as parse_run_meta
from tierscope.collector.runs import runs_from_paths as runs_from_paths
from tierscope.collector.sources.eventfiles import is_event_file
from tierscope.collector.sources.files import (
    DEFAULT_BATCH_BYTES,
    LONG_LINE_KEEP_CHARS,
    MAX_LINE_BYTES,
    LineBatch,
    decompressed,
    iter_handle_batches,
    open_raw,
    ramp_sizes,
)
from tierscope.collector.unchanged import note_recorded, run_facts
from tierscope.dataset import rewind
from tierscope.dataset.doctor import StateCheck
from tierscope.dataset.errors import StateCorruptError
from tierscope.dataset.lock import locked
from tierscope.dataset.schema import REJECT_RAW_MAX, RUN_KEY, RUN_SCHEMA
from tierscope.dataset.store import AppendResult, Dataset, Staged, import_writer
from tierscope.gcs import is_url

#: The state documents a collect keeps, checked by ``tierscope doctor`` (:func:`tierscope.dataset.doctor.check`).
STATE_CHECKS: tuple[StateCheck, ...] = (OffsetStore,)
#: Batches of a segment read without pyarrow (see :func:`iter_handle_batches`).
_COPIED_BATCHES = 2
#: Seconds without change after which a file's unterminated last line is taken as it is.
DEFAULT_SETTLE_S = 300.0


def _fill(frame: pl.DataFrame, **values: str | None) -> pl.DataFrame:
    """Add or complete columns with a constant, keeping values the records carry themselves."""
    for name, value in values.items():
        if name in frame.columns:
            frame = frame.with_columns(pl.col(name).fill_null(pl.lit(value, dtype=pl.String)))
        else:
            frame = frame.with_columns(pl.lit(value, dtype=pl.String).alias(name))
    return frame


def file_year(path: Path) -> int:
    """The year of ``path``'s last modification (UTC): the default year of glog timestamps."""
    return datetime.fromtimestamp(path.stat().st_mtime, UTC).year


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


def store_parsed(
    dataset: Dataset, parsed: Parsed, run: RunSpec, source: str, counts: SourceCounts, staged: Staged | None = None
) -> None:
    """Append what ``parsed`` holds to ``dataset`` and add to ``counts``; run, tier and source
    fill in only where the rows carry none. Caller holds the lock. With ``staged``, the files are
    left for :meth:`~tierscope.dataset.store.Dataset.commit_staged` (see :class:`_Storing`)."""
    counts.skipped += parsed.skipped
    counts.notes.extend(parsed.notes)
    ctx = {"run_id": run.run_id, "tier": run.tier, "source": source}
    if parsed.steps.height:
        if "loss" in parsed.steps.columns:
            nan = parsed.steps.filter(pl.col("loss").is_nan())
            if nan.height:
                counts.nan_loss += nan.height
                if counts.first_nan_loss is None and "source_offset" in nan.columns:
                    counts.first_nan_loss = nan.get_column("source_offset").min()  # type: ignore[assignment]
        got = dataset.append("steps", _fill(parsed.steps, **ctx), staged)
        counts.steps += got.stored
        counts.duplicates += got.duplicates
    if parsed.events.height:
        got = dataset.append("events", _fill(parsed.events, **ctx), staged)
        counts.events += got.stored
        counts.duplicates += got.duplicates
    if parsed.rejects.height:
        rejects = _fill(parsed.rejects, run_id=run.run_id, source=source).with_columns(
            pl.col("raw").str.slice(0, REJECT_RAW_MAX)
        )
        got = dataset.append("rejects", rejects, staged)
        counts.rejects += got.stored + got.duplicates


def collect_file(
    dataset: Dataset,
    path: Path,
    run: RunSpec,
    fmt: str | None = None,
    year: int | None = None,
    batch_bytes: int = DEFAULT_BATCH_BYTES,
    *,
    offsets: OffsetStore | None = None,
    settle_s: float = DEFAULT_SETTLE_S,
    reread: bool = False,
) -> SourceCounts:
    """Parse what is new in ``path`` batch by batch and append it to ``dataset``. Caller holds the lock.

    ``fmt`` (else the run's format) skips sniffing; ``year`` dates glog timestamps (default:
    the file's modification year; for a whole-file format, the entries' own times). A
    whole-file format (a Cloud Logging JSON export, a console CSV download: see
    :func:`tierscope.collector.formats.sniff_file`) is read whole; any other file line by line.

    A log is read from where the last collect stopped (:mod:`tierscope.collector.offsets`; ``reread``:
    from its start). After each batch the records are stored first and the offset saved
    second, so a kill in between only makes the next collect re-read lines it then skips as
    duplicates. An unterminated last line is taken if it is a whole record or event, or once
    the file has not changed for ``settle_s`` seconds; otherwise it is left for the next
    collect (its writer may be half way through it). Raises :class:`InputError` for an
    unreadable file and :class:`~tierscope.collector.formats.UnknownFormatError` for an unknown ``fmt``.
    """
    source = str(path)
    only = fmt or run.format
    named = check_format(only, run.formats) if only else None
    if not path.is_file():
        why = (
            "a directory"
            if path.is_dir()
            else "not a regular file"
            if path.exists()
            else "a symbolic link loop (the link leads back to itself)"
            if _is_link_loop(path)
            else "no such file or directory"
        )
        raise MissingInputError(f"cannot read {path}: {why}")
    check_utf8_name(path)
    offsets = offsets if offsets is not None else OffsetStore(dataset.state_dir)
    if is_event_file(path):
        from tierscope.collector.collect_events import collect_event_file  # it builds on this module

        return collect_event_file(dataset, path, run, offsets, settle_s, reread)
    prev = offsets.get(path, run.run_id)
    whole_file = named if isinstance(named, FileFormat) else None if only else sniff_file(file_head(path))
    if whole_file is not None:
        return _read_whole(offsets, path, run, reread, lambda: collect_whole(dataset, path, run, whole_file, year))
    context = ParseContext(year=year if year is not None else file_year(path), formats=run.formats)
    counts = SourceCounts(source=source, run_id=run.run_id, format=only or (prev.format if prev else None))
    with open_raw(path) as raw:
        reader = decompressed(raw)
        whole = reader is not raw
        segments = plan_reads(raw, path, prev, whole, reread)
        if not segments:
            counts.notes.append("unchanged")
        for seg in segments:
            if seg.why not in ("new", "grown"):
                counts.notes.append(f"{seg.why}: read from line {seg.start_line + 1} of {seg.path}")
            reading = _Reading(dataset, run, only, context, counts, batch_bytes)
            if seg.current:
                reading.segment(seg, reader, raw, offsets, settle_s, whole)
            else:
                with open_raw(seg.path) as old:
                    reading.segment(seg, old, old, None, 0.0, False)
    counts.note_nan_loss()
    return counts


def _read_whole(
    offsets: OffsetStore, path: Path, run: RunSpec, reread: bool, read: Callable[[], SourceCounts]
) -> SourceCounts:
    """Run ``read`` (which reads ``path`` whole) unless the file is unchanged since the last collect."""
    with open_raw(path) as raw:
        if not plan_reads(raw, path, offsets.get(path, run.run_id), True, reread):
            return SourceCounts(source=str(path), run_id=run.run_id, notes=["unchanged"])
        counts = read()
        offsets.put(snapshot(raw, path, run.run_id, 0, counts.lines, True, counts.format))
    return counts


@dataclass
class _Reading:
    """One file's read: where records go and what is counted."""

    dataset: Dataset
    run: RunSpec
    only: str | None
    context: ParseContext
    counts: SourceCounts
    batch_bytes: int

    def segment(
        self,
        seg: Segment,
        reader: BinaryIO,
        raw: BinaryIO,
        offsets: OffsetStore | None,
        settle_s: float,
        whole: bool,
    ) -> None:
        """Read ``seg`` from ``reader`` (over ``raw``), saving the offset after each batch if ``offsets``."""
        counts = self.counts
        settled = whole or time.time() - os.fstat(raw.fileno()).st_mtime >= settle_s
        # The first parse waits for two batches (the second tells whether the first is the last):
        # copied, they need no pyarrow, which the store thread is importing meanwhile (_Storing).
        batches = iter_handle_batches(
            reader,
            seg.path,
            seg.start_offset,
            seg.start_line,
            self.batch_bytes,
            copied=_COPIED_BATCHES,
            first_sizes=ramp_sizes(self.batch_bytes),
        )
        pending: pl.DataFrame | None = None
        with _Storing() as storing:
            for number, (batch, last) in enumerate(_with_lookahead(self._complete(_read_ahead(batches), settled))):
                counts.lines += batch.lines.height
                lines, too_long = long_line_rejects(batch)
                lines, blank = _without_blank_runs(lines)
                lines = lines if pending is None else pl.concat([pending, lines])
                if number == 0 and counts.format is None and self.only is None:
                    counts.format = sniff_format(lines.get_column("line"), self.context.formats)
                parsed = parse_lines(lines, only=self.only, context=self.context, first=counts.format, final=last)
                parsed.skipped += blank  # counted by the store, the one writer of counts.skipped meanwhile
                if too_long.height:
                    parsed.rejects = pl.concat([parsed.rejects, too_long], how="diagonal_relaxed")
                pending = parsed.pending
                ends = (batch.end_offset, batch.end_line)
                storing.then(
                    lambda parsed=parsed, ends=ends, pending=pending: self._store(
                        parsed, raw, seg, offsets, whole, ends, pending
                    )
                )
        if offsets is not None and whole:
            # Marked read only once whole: a kill half way makes the next collect read it again.
            offsets.put(snapshot(raw, seg.path, self.run.run_id, 0, counts.lines, True, counts.format))

    def _complete(self, batches: Iterator[LineBatch], settled: bool) -> Iterator[LineBatch]:
        """``batches``, without an unterminated last line that may still be being written."""
        for batch in batches:
            # An over-long line is a reject however it ends: waiting cannot make it shorter.
            if not batch.terminated and not settled and not batch.long_lines:
                alone = parse_lines(
                    batch.lines, only=self.only, context=dataclasses.replace(self.context), first=self.counts.format
                )
                if not (alone.steps.height or alone.events.height):
                    self.counts.notes.append(f"line {batch.end_line} has no newline yet: left for the next collect")
                    return
            yield batch

    def _store(
        self,
        parsed: Parsed,
        raw: BinaryIO,
        seg: Segment,
        offsets: OffsetStore | None,
        whole: bool,
        ends: tuple[int, int],
        pending: pl.DataFrame | None,
    ) -> _Commit:
        """Write one batch's records under temporary names; returns what makes them visible and
        then (if ``offsets`` and not ``whole``) saves where the next read starts."""
        staged = Staged()
        try:
            store_parsed(self.dataset, parsed, self.run, self.counts.source, self.counts, staged)
            resume = self._resume_at(raw, seg, ends, pending) if offsets is not None and not whole else None
        except BaseException:
            self.dataset.discard_staged(staged)
            raise
        return _Commit(self.dataset, staged, offsets, resume)

    def _resume_at(self, raw: BinaryIO, seg: Segment, ends: tuple[int, int], pending: pl.DataFrame | None) -> FileState:
        """The state after a batch ending at byte and line ``ends``: past its last line, or at the
        first line held back as look-ahead."""
        run_id, fmt = self.run.run_id, self.counts.format
        end_offset, end_line = ends
        if pending is None or pending.height == 0:
            return snapshot(raw, seg.path, run_id, end_offset, end_line, False, fmt)
        first = int(pending.get_column("source_offset").min())  # type: ignore[arg-type]
        start = line_start(raw.fileno(), end_offset, end_line - first + 1)
        return snapshot(raw, seg.path, run_id, start, first - 1, False, fmt)


@dataclass
class _Commit:
    """What makes one stored batch durable: its staged files, then its offset."""

    dataset: Dataset
    staged: Staged
    offsets: OffsetStore | None
    resume: FileState | None

    def run(self) -> None:
        self.dataset.commit_staged(self.staged)
        if self.offsets is not None and self.resume is not None:
            self.offsets.put(self.resume)

    def discard(self) -> None:
        self.dataset.discard_staged(self.staged)


#: Stores queued at most, the one under way included: the caller parses batch N+2 while batch N
#: is written and N+1 waits, so a write that takes longer than a parse (the machine's other load,
#: a slow disk) no longer holds the next parse up, at the cost of one more batch's records held.
_QUEUED_STORES = 2


class _Storing:
    """Stores batches on a thread of their own while the caller reads and parses the next, and
    commits each (fsync, rename, offset) on a third while the next batch is written.

    Polars and pyarrow release the GIL, and fsync waits on the disk, so parsing batch N+2,
    writing batch N+1 and committing batch N share the cores. One write at a time and one commit
    at a time, each in batch order: the writes run one after another on one thread (at most
    :data:`_QUEUED_STORES` queued: :meth:`then` waits for the oldest beyond that), a write runs
    only after every earlier write succeeded (after a failed one it raises that error instead of
    writing), and a commit only after the previous one succeeded (after a failed one it
    removes its files instead), so records become visible, and offsets are saved after the
    records they cover, exactly in the order a collect without the threads has (a kill leaves
    the same states, plus temporary files the next collect removes). A write that must read back
    rows of a batch not yet committed waits for that commit (:meth:`Dataset.append`). About
    four batches' frames at the peak (see :func:`_read_ahead`). An error of a write or a commit
    is raised in the caller by a later :meth:`then` or on leaving the ``with`` block; leaving it
    on an error of the caller's first waits for the work under way (each commit is atomic, and
    its offset follows it).
    """

    def __init__(self) -> None:
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tierscope-store")
        self._commits = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tierscope-commit")
        self._running: deque[Future[None]] = deque()
        self._committing: Future[None] | None = None
        # The writer's import (pyarrow, about 0.3 s) while the first batch is read and parsed.
        self._pool.submit(import_writer)

    def then(self, store: Callable[[], _Commit]) -> None:
        """Queue ``store`` after the stores before it, once fewer than :data:`_QUEUED_STORES` are
        queued (raising the error of a store or a commit that failed)."""
        while self._running and (len(self._running) >= _QUEUED_STORES or self._running[0].done()):
            self._running.popleft().result()
        committing = self._committing
        if committing is not None and committing.done():
            committing.result()
        previous = self._running[-1] if self._running else None
        self._running.append(self._pool.submit(self._store, store, previous))

    def _store(self, store: Callable[[], _Commit], previous: Future[None] | None) -> None:
        if previous is not None:
            previous.result()  # done (one thread, in order): a batch is written only after every batch before it
        done = store()
        self._committing = self._commits.submit(self._commit, done, self._committing)

    @staticmethod
    def _commit(done: _Commit, previous: Future[None] | None) -> None:
        try:
            if previous is not None:
                previous.result()  # a batch is committed only after every batch before it
        except BaseException:
            done.discard()
            raise
        done.run()

    def __enter__(self) -> _Storing:
        return self

    def __exit__(self, kind: type[BaseException] | None, *_: object) -> None:
        try:
            if kind is None:
                while self._running:
                    self._running.popleft().result()
                if self._committing is not None:
                    self._committing.result()
            else:
                # The caller's error wins over the store's; a store queued but not begun is dropped.
                for queued in self._running:
                    queued.cancel()
                wait(self._running)
                if self._committing is not None:
                    wait([self._committing])
        finally:
            self._pool.shutdown(wait=True)
            self._commits.shutdown(wait=True)


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


def collect_whole(
    dataset: Dataset, path: Path, run: RunSpec, fmt: FileFormat, year: int | None = None, source: str | None = None
) -> SourceCounts:
    """Read ``path`` whole with the whole-file format ``fmt`` and append what it holds
    (``lines`` counts entries or rows). Caller holds the lock.

    Records without a run id of their own or a job id belong to ``run.run_id``; ``run.tier``
    fills in records without a tier. ``year`` dates glog headers inside messages (default: none,
    the entry's own time is used). ``source`` names the file in records and rejects (default:
    ``path``; a downloaded object's URL). Raises :class:`InputError` if the file is not in ``fmt``.
    """
    got = fmt.read(path, run.run_id, run.tier, ParseContext(year=year, formats=run.formats))
    source = source or str(path)
    counts = SourceCounts(source=source, run_id=run.run_id, lines=got.items, format=fmt.name)
    for part in got.parts:
        if source != str(path) and part.rejects.height and "source" in part.rejects.columns:
            renamed = pl.col("source").replace(str(path), source)
            part = dataclasses.replace(part, rejects=part.rejects.with_columns(renamed))
        store_parsed(dataset, part, run, source, counts)
    counts.note_nan_loss()
    return counts


def file_head(path: Path) -> str:
    """The first :data:`~tierscope.collector.formats.HEAD_BYTES` of ``path`` (gzip decompressed),
    decoded; empty when they cannot be read (the line reader then says why)."""
    try:
        with open_raw(path) as raw:
            return decompressed(raw).read(HEAD_BYTES).decode("utf-8", errors="replace")
    except (OSError, EOFError, InputError):
        return ""


#: The facts of a run a collect may leave out: every column of the runs table's key but the run id.
RUN_FACTS = tuple(c for c in RUN_KEY if c != "run_id")


def record_runs(dataset: Dataset, runs: list[RunSpec]) -> AppendResult:
    """Append what is known about each run to the ``runs`` table where it differs from the run's
    newest row (the newest row wins: facts changed back to earlier ones are appended again).

    A fact a collect does not give (no ``--tier``, a file collected without the manifest that
    dated it) is the newest row's: "not given" keeps what is known, only a value given changes it.
    A fact once known can be changed, not unset."""
    now = datetime.now(UTC)
    rows = pl.DataFrame([{**run_facts(r), "collected_at": now} for r in runs], schema=RUN_SCHEMA)
    if rows.height and dataset.files("runs"):
        held = dataset.read("runs", where=pl.col("run_id").is_in(rows["run_id"].unique().to_list()))
        newest = held.sort("collected_at").group_by("run_id", maintain_order=True).last()
        rows = with_known_facts(rows, newest)
        unchanged = rows.join(newest.select(RUN_KEY), on=list(RUN_KEY), how="semi", nulls_equal=True)
        result = AppendResult(duplicates=unchanged.height)
        result += dataset.append("runs", rows.join(unchanged, on=list(RUN_KEY), how="anti", nulls_equal=True))
        return result
    return dataset.append("runs", rows)


def with_known_facts(rows: pl.DataFrame, newest: pl.DataFrame) -> pl.DataFrame:
    """``rows`` (:data:`~tierscope.dataset.schema.RUN_SCHEMA`) with each of :data:`RUN_FACTS` they leave
    null taken from their run's row in ``newest`` (one row per run id; a run without one keeps its nulls)."""
    known = newest.select("run_id", *(pl.col(c).alias(f"_known_{c}") for c in RUN_FACTS))
    merged = rows.join(known, on="run_id", how="left", maintain_order="left")
    return merged.with_columns(pl.coalesce(c, f"_known_{c}").alias(c) for c in RUN_FACTS).select(list(RUN_SCHEMA))


def collect_runs(
    dataset: Dataset,
    runs: list[RunSpec],
    lock_timeout: float = 60.0,
    on_file: Callable[[SourceCounts], None] | None = None,
    year: int | None = None,
    *,
    settle_s: float = DEFAULT_SETTLE_S,
    reread: bool = False,
    batch_bytes: int = DEFAULT_BATCH_BYTES,
) -> CollectResult:
    """Collect what is new in every file of every run into ``dataset``, holding the dataset's lock.

    ``year`` dates glog timestamps (default: each file's modification year); ``settle_s``,
    ``reread``: see :func:`collect_file`. An unreadable input file is listed in ``errors`` and
    the others are collected. Raises :class:`DatasetBusyError` if another collect holds the
    lock for longer than ``lock_timeout`` seconds, :class:`StateCorruptError` /
    :class:`DatasetCorruptError` for a damaged dataset, :class:`OSError` if the dataset
    cannot be written (disk full).
    """
    with dataset_lock(dataset, lock_timeout):
        offsets = _offsets(dataset)
        result = CollectResult()
        absent: set[str] = set()  # runs none of whose files is there: nothing is known of them yet
        for run in runs:
            missing = 0
            for path in run.files:
                try:
                    counts = (_collect_object if is_url(path) else collect_file)(
                        dataset,
                        path,  # type: ignore[arg-type]
                        run,
                        year=year,
                        batch_bytes=batch_bytes,
                        offsets=offsets,
                        settle_s=settle_s,
                        reread=reread,
                    )
                except MissingInputError as exc:
                    missing += 1
                    result.errors.append(_in_manifest(exc, run))
                    continue
                except InputError as exc:
                    # One unreadable log must not stop the others; what it held so far is stored.
                    result.errors.append(_in_manifest(exc, run))
                    continue
                except UnknownFormatError as exc:
                    # Nor one run of a manifest naming a format that does not exist.
                    result.errors.append(UnknownFormatError(f"run {run.run_id!r} ({path}): {exc}"))
                    continue
                result.sources.append(counts)
                if on_file:
                    on_file(counts)
            if run.files and missing == len(run.files):
                absent.add(run.run_id)
        # A run whose files are all missing (a typo in a manifest) would be a row of facts with no
        # records, an `empty` run in every summary; it is recorded once a file of it is read. A row
        # an earlier collect wrote stays.
        recorded = [run for run in runs if run.run_id not in absent]
        record_runs(dataset, recorded)
        note_recorded(dataset.root, recorded)  # the next collect can tell it has nothing to do (collector.unchanged)
        return result


def _in_manifest(error: InputError, run: RunSpec) -> InputError:
    """``error`` naming the manifest that declared ``run`` (and, for a file that is not there, what to do
    there); unchanged for a file named on the command line: its message already names what the user typed."""
    if run.manifest is None:
        return error
    if isinstance(error, MissingInputError):
        return MissingInputError(
            f"{error} (run {run.run_id!r} of manifest {run.manifest}, whose paths are relative to its folder); "
            "correct the path there and collect again"
        )
    return InputError(f"{error} (run {run.run_id!r} of manifest {run.manifest})")


def _collect_object(dataset: Dataset, url: str, run: RunSpec, **kwargs: Any) -> SourceCounts:
    """:func:`tierscope.collector.collect_objects.collect_object` (imported only for a ``gs://`` URL)."""
    from tierscope.collector.collect_objects import collect_object

    return collect_object(dataset, url, run, **kwargs)


def _offsets(dataset: Dataset) -> OffsetStore:
    """The offsets, after acting on what ``doctor --fix`` left to re-read (:mod:`tierscope.dataset.rewind`).

    A ``files.json`` of the wrong shape is moved aside like one that does not parse (a notice
    on the dataset says so): correctness does not rest on it, only re-reading does.
    """
    try:
        offsets = OffsetStore(dataset.state_dir)
    except StateCorruptError as exc:
        dataset.set_aside_state(exc)
        offsets = OffsetStore(dataset.state_dir)
    todo = rewind.pending(dataset.root)
    for wanted in todo:
        offsets.forget(wanted.run_id, wanted.sources)
    if todo:
        rewind.clear(dataset.root)  # only once the offsets are saved: a kill before means doing it again
    return offsets


def dataset_lock(dataset: Dataset, lock_timeout: float = 60.0) -> AbstractContextManager[Dataset]:
    """Hold ``dataset``'s lock (creating the dataset directory) after finishing what a killed
    writer left (:func:`tierscope.dataset.lock.locked`). Raises :class:`DatasetBusyError` after
    ``lock_timeout`` seconds."""
    return locked(dataset, lock_timeout)
