"""Collect training-job step logs from Cloud Logging: the library behind ``tierscope collect cloud``.

Entries are read oldest first, a page at a time (:mod:`tierscope.collector.sources.cloud_logging`),
turned into records by the same code as an offline export
(:mod:`tierscope.collector.sources.logentries`) and appended to the dataset every
``pages_per_append`` pages, under the dataset's lock.

Resume and incremental runs: after each append, a watermark is saved (atomically) in the
dataset's ``state/`` folder, one document per (project, job filter)::

    {"version": 1, "kind": "cloud-logging", "project": "p", "job_filter": "(resource.type=...) AND (...)",
     "watermark": {"timestamp": "2026-01-05T09:00:35.120000Z", "insert_ids": ["a1..", ...],
                   "read_at": "2026-11-29T23:00:00.000000Z"},
     "complete": false, "error": "...", "updated_at": "..."}

``timestamp`` is the last stored entry's; ``insert_ids`` the entries stored at exactly
that time; ``read_at`` when this collect started reading. The next collect starts at
``min(timestamp, read_at - overlap)``: entries can reach Cloud Logging a little after
their timestamp, so a window of ``overlap`` before the time of reading is read again
(the dataset's dedupe absorbs it), while a backfill of old entries resumes exactly
where it stopped, skipping the insertIds already stored at that timestamp. A collect
killed or failing part-way has stored every page before the watermark, so the next one
loses nothing and stores nothing twice.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from tierscope.collector.collect import CollectResult, SourceCounts, dataset_lock, record_runs, store_parsed
from tierscope.collector.errors import CollectorError
from tierscope.collector.formats import ParseContext
from tierscope.collector.manifest import RunSpec
from tierscope.collector.sources.cloud_logging import (
    DEFAULT_REQUESTS_PER_MINUTE,
    MAX_PAGE_SIZE,
    Chunk,
    CloudLoggingError,
    Connection,
    Cursor,
    RequestStats,
    RetryPolicy,
    build_filter,
    connect,
    job_filter,
    read_entries,
)
from tierscope.collector.sources.logentries import Entry, format_time, records_from_entries
from tierscope.dataset.state import StateStore, state_name
from tierscope.dataset.store import Dataset

STATE_KIND = "cloud-logging"
STATE_VERSION = 1
#: Without a watermark or --since: Cloud Logging keeps entries 30 days by default.
DEFAULT_LOOKBACK = timedelta(days=30)
#: How late an entry may reach Cloud Logging after its timestamp and still be collected.
DEFAULT_OVERLAP = timedelta(minutes=5)
DEFAULT_PAGES_PER_APPEND = 5


@dataclass
class Watermark:
    """Where the last collect of a job filter stopped (see the module docstring)."""

    timestamp: datetime
    insert_ids: list[str]
    read_at: datetime

    def to_json(self) -> dict[str, Any]:
        return {
            "timestamp": format_time(self.timestamp),
            "insert_ids": sorted(self.insert_ids),
            "read_at": format_time(self.read_at),
        }

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> Watermark:
        """Raises :class:`KeyError` / :class:`ValueError` for a malformed document."""
        return cls(
            timestamp=datetime.fromisoformat(doc["timestamp"]),
            insert_ids=[str(i) for i in doc.get("insert_ids") or []],
            read_at=datetime.fromisoformat(doc["read_at"]),
        )

    def start(self, overlap: timedelta) -> datetime:
        """Where the next collect starts reading."""
        return min(self.timestamp, self.read_at - overlap)


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
    stats: RequestStats = field(default_factory=RequestStats)
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


def parse_when(text: str) -> datetime:
    """An ISO 8601 time or date (``2026-01-05``, ``2026-01-05T09:00:00Z``) as UTC (naive = UTC).

    Raises :class:`ValueError` saying what is expected.
    """
    try:
        when = datetime.fromisoformat(text.strip())
    except ValueError:
        raise ValueError(f"time {text!r} is not ISO 8601 (like 2026-01-05 or 2026-01-05T09:00:00Z)") from None
    return when.astimezone(UTC) if when.tzinfo else when.replace(tzinfo=UTC)


def watermark_name(project: str, job_ids: Sequence[str]) -> str:
    """The state document name of (``project``, the job filter of ``job_ids``)."""
    return state_name(STATE_KIND, project, job_filter(tuple(job_ids)))


def load_watermark(dataset: Dataset, project: str, job_ids: Sequence[str]) -> Watermark | None:
    """The stored watermark of (``project``, ``job_ids``), or None.

    Raises :class:`~tierscope.dataset.state.StateCorruptError` if the document is unreadable.
    """
    doc = StateStore(dataset.state_dir).load(watermark_name(project, job_ids))
    if not doc or not doc.get("watermark"):
        return None
    try:
        return Watermark.from_json(doc["watermark"])
    except (KeyError, ValueError, TypeError) as exc:
        name = watermark_name(project, job_ids)
        raise CollectorError(
            f"collector state {StateStore(dataset.state_dir).path(name)} has a malformed watermark ({exc}); "
            "delete it or pass --ignore-watermark"
        ) from None


def _tiers(job_ids: Sequence[str], runs: Sequence[RunSpec]) -> dict[str, str]:
    return {r.run_id: r.tier for r in runs if r.run_id in job_ids and r.tier}


def collect_cloud(
    dataset: Dataset,
    job_ids: Sequence[str],
    project: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    tier: str | None = None,
    runs: Sequence[RunSpec] = (),
    endpoint: str | None = None,
    page_size: int = MAX_PAGE_SIZE,
    requests_per_minute: int | None = DEFAULT_REQUESTS_PER_MINUTE,
    retry: RetryPolicy | None = None,
    overlap: timedelta = DEFAULT_OVERLAP,
    ignore_watermark: bool = False,
    pages_per_append: int = DEFAULT_PAGES_PER_APPEND,
    lock_timeout: float = 60.0,
    on_progress: Callable[[CloudProgress], None] | None = None,
    now: Callable[[], datetime] | None = None,
    connection: Connection | None = None,
) -> CloudCollectResult:
    """Collect the step records of training jobs ``job_ids`` from Cloud Logging into ``dataset``.

    Reads entries with ``timestamp >= start`` (and ``< until``), where ``start`` is the
    stored watermark's (unless ``ignore_watermark``), never before ``since``; without
    either, the last :data:`DEFAULT_LOOKBACK`. The tier of a record is its own, else
    ``tier``, else the tier of the run with the job's id in ``runs`` (a manifest).
    ``requests_per_minute=None`` turns the client-side rate limit off; ``retry`` bounds
    the back-off on 429/5xx. ``connection`` replaces :func:`connect` (tests).

    Raises :class:`CloudLoggingError` when nothing could be read (no credentials,
    permission denied, unknown project, bad filter), :class:`CollectStopped` when
    reading failed after some entries were stored, :class:`~tierscope.collector.errors.DatasetBusyError`
    when another collect holds the lock.
    """
    if not job_ids:
        raise CollectorError("give at least one --job-id")
    clock = now or (lambda: datetime.now(UTC))
    conn = connection or connect(project, endpoint, requests_per_minute, retry)
    job_ids = sorted(set(job_ids))
    store = StateStore(dataset.state_dir)
    name = watermark_name(conn.project, job_ids)
    result = CloudCollectResult(project=conn.project, stats=conn.stats, state_name=name)
    counts = SourceCounts(source=f"cloud-logging:projects/{conn.project}", run_id=",".join(job_ids))
    result.sources.append(counts)
    tier_by_run = _tiers(job_ids, runs)

    with dataset_lock(dataset, lock_timeout):
        mark = None if ignore_watermark else load_watermark(dataset, conn.project, job_ids)
        started = clock()
        cursor = None
        if mark is not None and (since is None or mark.start(overlap) >= since):
            start = mark.start(overlap)
            cursor = Cursor(mark.timestamp, set(mark.insert_ids))
            result.resumed = True
        else:
            start = since or started - DEFAULT_LOOKBACK
        result.start = start
        result.filter = build_filter(job_ids, start, until)
        state: dict[str, Any] = {
            "version": STATE_VERSION,
            "kind": STATE_KIND,
            "project": conn.project,
            "job_filter": job_filter(job_ids),
            "watermark": mark.to_json() if mark else None,
            "complete": False,
            "error": None,
        }
        pending: list[Entry] = []
        pages = 0
        context = ParseContext()
        # Records always carry their run (the job id) and source (the log name); only the tier may be missing.
        fill = RunSpec(run_id=job_ids[0], tier=tier, files=[])
        # The watermark moves only past entries already stored, so it never claims more than the dataset holds.
        progress = Cursor(cursor.timestamp, set(cursor.insert_ids)) if cursor else None

        def flush() -> None:
            nonlocal progress
            if not pending:
                return
            parsed = records_from_entries(pending, tier=tier, tier_by_run=tier_by_run, context=context)
            store_parsed(dataset, parsed, fill, counts.source, counts)
            if progress is None:
                first = next((e.timestamp for e in pending if e.timestamp is not None), None)
                progress = Cursor(first) if first is not None else None
            if progress is not None:
                progress.advance(pending)
                state["watermark"] = Watermark(progress.timestamp, sorted(progress.insert_ids), started).to_json()
            state["updated_at"] = format_time(clock())
            store.save(name, state)
            pending.clear()

        def report() -> None:
            if on_progress:
                on_progress(
                    CloudProgress(counts.lines, counts.steps + counts.events, conn.stats.requests, conn.stats.retries)
                )

        try:
            chunk: Chunk
            for chunk in read_entries(conn, result.filter, page_size, after=cursor, now=clock):
                counts.lines += len(chunk.entries)
                result.skipped_seen += chunk.skipped_seen
                pending.extend(chunk.entries)
                pages += 1
                if pages % max(1, pages_per_append) == 0:
                    flush()
                report()
            flush()
        except CloudLoggingError as exc:
            flush()
            state["error"] = str(exc)
            state["updated_at"] = format_time(clock())
            store.save(name, state)
            if counts.lines == 0:
                raise
            where = state["watermark"]["timestamp"] if state["watermark"] else "the start"
            raise CollectStopped(
                f"{exc}. Stopped after {counts.lines} entries: what was read is stored "
                f"(up to {where}); run the same command again to resume from there",
                result,
            ) from exc
        report()
        if progress is not None:
            # Everything up to the watermark was (re-)read by this collect: its start time now counts.
            state["watermark"] = Watermark(progress.timestamp, sorted(progress.insert_ids), started).to_json()
        state["complete"] = True
        state["updated_at"] = format_time(clock())
        store.save(name, state)
        result.complete = True
        record_runs(
            dataset,
            [
                next((r for r in runs if r.run_id == job), None)
                or RunSpec(run_id=job, tier=tier or tier_by_run.get(job), files=[], ran_on="Cloud Logging")
                for job in job_ids
            ],
        )
        return result
