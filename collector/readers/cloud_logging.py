"""The Cloud Logging reader: a training job's entries, oldest first, a page at a time.

Entries are read by :mod:`tierscope.collector.sources.cloud_logging`, turned into records by the
same code as an offline export (:mod:`tierscope.collector.sources.logentries`) and handed to the
sink every ``pages_per_append`` pages, each batch with the watermark after it
(:class:`~tierscope.collector.positions.CloudWatermark`, one document per (project, job filter))::

    {"version": 1, "kind": "cloud-logging", "project": "p", "job_filter": "(resource.type=...) AND (...)",
     "watermark": {"timestamp": "2026-01-05T09:00:35.120000Z", "insert_ids": ["a1..", ...],
                   "read_at": "2026-11-29T23:00:00.000000Z"},
     "complete": false, "error": "...", "updated_at": "..."}

``timestamp`` is the last stored entry's; ``insert_ids`` the entries stored at exactly that
time; ``read_at`` when this collect started reading. The next collect starts at
``min(timestamp, read_at - overlap)``: entries can reach Cloud Logging a little after their
timestamp, so a window of ``overlap`` before the time of reading is read again (the dataset's
dedupe absorbs it), while a backfill of old entries resumes exactly where it stopped, skipping
the insertIds already stored at that timestamp. A collect killed or failing part-way has stored
every page before the watermark, so the next one loses nothing and stores nothing twice.

The Cloud Logging client (google-cloud-logging, requests) is imported only once entries are read:
the registry lists this reader for every collect.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tierscope.collector.cloudtime import format_time
from tierscope.collector.errors import CollectorError
from tierscope.collector.manifest import RunSpec
from tierscope.collector.positions import CloudWatermark, Positions, Watermark, load_watermark
from tierscope.collector.reading import Batch, ReadOptions
from tierscope.collector.runs import CollectResult, SourceCounts

if TYPE_CHECKING:
    from tierscope.collector.sources.cloud_logging import Connection, Cursor, RequestStats
    from tierscope.collector.sources.logentries import Entry

#: Without a watermark or ``since``: Cloud Logging keeps entries 30 days by default.
DEFAULT_LOOKBACK = timedelta(days=30)


@dataclass(frozen=True)
class CloudQuery:
    """What one collect reads from Cloud Logging: the entries of ``job_ids`` (sorted, unique) in
    ``connection``'s project, from the watermark (unless ``ignore_watermark``) or ``since`` (and
    before ``until``); ``tier`` for records without one, else ``tier_by_run``'s; ``page_size``
    entries a page, stored every ``pages_per_append`` pages; ``overlap`` read again before the
    time of the last reading. ``clock`` tells the time (UTC); ``on_progress`` hears after each page."""

    job_ids: tuple[str, ...]
    connection: Connection
    since: datetime | None
    until: datetime | None
    tier: str | None
    tier_by_run: Mapping[str, str]
    page_size: int
    overlap: timedelta
    ignore_watermark: bool
    pages_per_append: int
    clock: Callable[[], datetime]
    on_progress: Callable[[CloudProgress], None] | None = None

    @property
    def job_filter(self) -> str:
        from tierscope.collector.sources.cloud_logging import job_filter

        return job_filter(self.job_ids)


@dataclass
class CloudProgress:
    """Reported after each page: entries read so far, step records and events stored."""

    entries: int
    stored: int
    requests: int
    retries: int


@dataclass
class CloudCollectResult(CollectResult):
    """A collect's counts (one :class:`SourceCounts` for the project, ``lines`` = entries),
    the filter sent, where reading started, and the HTTP counters."""

    project: str = ""
    filter: str = ""
    start: datetime | None = None
    resumed: bool = False
    stats: RequestStats | None = None
    state_name: str = ""
    complete: bool = False
    #: Entries at the watermark's timestamp left out because the last collect stored them.
    skipped_seen: int = 0


class CollectStopped(CollectorError):
    """Cloud Logging failed part-way; what was read is stored and the next collect resumes.

    ``result`` holds what was done; ``__cause__`` is the :class:`CloudLoggingError`.
    """

    def __init__(self, message: str, result: CloudCollectResult) -> None:
        super().__init__(message)
        self.result = result


class CloudLoggingReader:
    """Cloud Logging entries of training jobs (a :class:`CloudQuery`)."""

    name = "cloud-logging"

    def claims(self, source: Path | str | object) -> bool:
        return isinstance(source, CloudQuery)

    def open(
        self, source: Path | str | object, run: RunSpec, positions: Positions, options: ReadOptions
    ) -> CloudLoggingReading:
        if not isinstance(source, CloudQuery):
            raise TypeError(f"a Cloud Logging reader reads a CloudQuery, not {source!r}")
        return CloudLoggingReading(source, positions)


class CloudLoggingReading:
    """One collect's read of a :class:`CloudQuery`; ``result`` says what it did, ``counts`` is its
    one source. Stored batch by batch in order (a failed read stores what came before it first)."""

    pipelined = False

    def __init__(self, query: CloudQuery, positions: Positions) -> None:
        self.query, self.positions = query, positions
        conn = query.connection
        self.mark = CloudWatermark(project=conn.project, job_filter=query.job_filter)
        self.result = CloudCollectResult(project=conn.project, stats=conn.stats, state_name=self.mark.name)
        self.counts = SourceCounts(source=f"cloud-logging:projects/{conn.project}", run_id=",".join(query.job_ids))
        self.result.sources.append(self.counts)
        self._pending: list[Entry] = []
        self._progress: Cursor | None = None
        self._started: datetime = datetime.min

    def batches(self) -> Iterator[Batch]:
        from tierscope.collector.formats import ParseContext, parse_lines
        from tierscope.collector.sources.cloud_logging import (
            CloudLoggingError,
            Cursor,
            build_filter,
            read_entries,
        )

        query, result, counts = self.query, self.result, self.counts
        saved = None if query.ignore_watermark else load_watermark(self.positions.state_dir, *self._key)
        mark = saved.watermark if saved is not None else None
        self._started = query.clock()
        cursor = None
        if mark is not None and (query.since is None or mark.start(query.overlap) >= query.since):
            start = mark.start(query.overlap)
            cursor = Cursor(mark.timestamp, set(mark.insert_ids))
            result.resumed = True
        else:
            start = query.since or self._started - DEFAULT_LOOKBACK
        result.start = start
        result.filter = build_filter(list(query.job_ids), start, query.until)
        self.mark.watermark = mark
        # The watermark moves only past entries already stored, so it never claims more than the dataset holds.
        self._progress = Cursor(cursor.timestamp, set(cursor.insert_ids)) if cursor else None
        context = ParseContext(chain=parse_lines)
        pages = 0
        try:
            for chunk in read_entries(query.connection, result.filter, query.page_size, after=cursor, now=query.clock):
                counts.lines += len(chunk.entries)
                result.skipped_seen += chunk.skipped_seen
                self._pending.extend(chunk.entries)
                pages += 1
                if pages % max(1, query.pages_per_append) == 0:
                    yield from self._flush(context)
                self._report()
            yield from self._flush(context)
        except CloudLoggingError as exc:
            yield from self._flush(context)
            self.mark.error = str(exc)
            yield Batch(None, self._saved())
            if counts.lines == 0:
                raise
            where = format_time(self.mark.watermark.timestamp) if self.mark.watermark else "the start"
            raise CollectStopped(
                f"{exc}. Stopped after {counts.lines} entries: what was read is stored "
                f"(up to {where}); run the same command again to resume from there",
                result,
            ) from exc
        self._report()
        if self._progress is not None:
            # Everything up to the watermark was (re-)read by this collect: its start time now counts.
            self._advance()
        self.mark.complete = True
        yield Batch(None, self._saved())
        result.complete = True

    @property
    def _key(self) -> tuple[str, str]:
        return self.mark.project, self.mark.job_filter

    def _flush(self, context: Any) -> Iterator[Batch]:
        """The entries read since the last batch, as one, with the watermark past them."""
        from tierscope.collector.sources.cloud_logging import Cursor
        from tierscope.collector.sources.logentries import records_from_entries

        pending, query = self._pending, self.query
        if not pending:
            return
        parsed = records_from_entries(pending, context, tier=query.tier, tier_by_run=query.tier_by_run)
        if self._progress is None:
            first = next((e.timestamp for e in pending if e.timestamp is not None), None)
            self._progress = Cursor(first) if first is not None else None
        if self._progress is not None:
            self._progress.advance(pending)
            self._advance()
        batch = Batch(parsed, self._saved())
        pending.clear()
        yield batch

    def _advance(self) -> None:
        progress = self._progress
        assert progress is not None
        self.mark.watermark = Watermark(progress.timestamp, sorted(progress.insert_ids), self._started)

    def _saved(self) -> CloudWatermark:
        """The watermark document as it stands, stamped now (a copy: the reading goes on)."""
        self.mark.updated_at = format_time(self.query.clock())
        return dataclasses.replace(self.mark)

    def _report(self) -> None:
        query, counts = self.query, self.counts
        if query.on_progress:
            stats = query.connection.stats
            query.on_progress(CloudProgress(counts.lines, counts.steps + counts.events, stats.requests, stats.retries))
