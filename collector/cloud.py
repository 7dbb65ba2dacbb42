"""Collect training-job step logs from Cloud Logging: the library behind ``tierscope collect cloud``.

The loop over the Cloud Logging reader (:mod:`tierscope.collector.readers.cloud_logging`, which
says how reading resumes from its watermark) and the sink, under the dataset's lock; then the
jobs' facts are recorded as runs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from tierscope.collector import registry
from tierscope.collector.errors import CollectorError
from tierscope.collector.manifest import RunSpec
from tierscope.collector.readers.cloud_logging import (
    DEFAULT_LOOKBACK,
    CloudCollectResult,
    CloudLoggingReading,
    CloudProgress,
    CloudQuery,
    CollectStopped,
)
from tierscope.collector.reading import ReadOptions
from tierscope.collector.sink import Sink, dataset_lock, record_runs
from tierscope.collector.sources.cloud_logging import (
    DEFAULT_REQUESTS_PER_MINUTE,
    MAX_PAGE_SIZE,
    Connection,
    RetryPolicy,
    connect,
)
from tierscope.dataset.store import Dataset

#: How late an entry may reach Cloud Logging after its timestamp and still be collected.
DEFAULT_OVERLAP = timedelta(minutes=5)
DEFAULT_PAGES_PER_APPEND = 5

__all__ = [
    "DEFAULT_LOOKBACK",
    "DEFAULT_OVERLAP",
    "DEFAULT_PAGES_PER_APPEND",
    "CloudCollectResult",
    "CloudOptions",
    "CloudProgress",
    "CollectStopped",
    "collect_cloud",
]


@dataclass(frozen=True)
class CloudOptions:
    """How ``collect cloud`` reads.

    - ``project``: the Google Cloud project (default: ``$GOOGLE_CLOUD_PROJECT``, else the
      credentials'); ``endpoint``: an emulator or test server (anonymous credentials).
    - ``since``, ``until``: read entries with ``since <= timestamp < until``; reading starts at the
      stored watermark (unless ``ignore_watermark``), never before ``since``; without either, the
      last :data:`DEFAULT_LOOKBACK`.
    - ``tier``: the tier of records without one of their own; else the tier of the run with the
      job's id in ``runs`` (a manifest).
    - ``page_size`` entries a request (the API's maximum by default); stored every
      ``pages_per_append`` pages; ``overlap`` read again before the last reading's start.
    - ``requests_per_minute``: the client-side rate limit (None: off); ``retry`` bounds the
      back-off on 429/5xx; ``lock_timeout``: seconds to wait for another collect's lock.
    """

    project: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    tier: str | None = None
    runs: Sequence[RunSpec] = ()
    endpoint: str | None = None
    page_size: int = MAX_PAGE_SIZE
    requests_per_minute: int | None = DEFAULT_REQUESTS_PER_MINUTE
    retry: RetryPolicy | None = None
    overlap: timedelta = DEFAULT_OVERLAP
    ignore_watermark: bool = False
    pages_per_append: int = DEFAULT_PAGES_PER_APPEND
    lock_timeout: float = 60.0


def collect_cloud(
    dataset: Dataset,
    job_ids: Sequence[str],
    options: CloudOptions = CloudOptions(),
    *,
    on_progress: Callable[[CloudProgress], None] | None = None,
    now: Callable[[], datetime] | None = None,
    connection: Connection | None = None,
    run: RunSpec | None = None,
) -> CloudCollectResult:
    """Collect the step records of training jobs ``job_ids`` from Cloud Logging into ``dataset``
    (see :class:`CloudOptions`). ``on_progress`` hears after each page; ``now`` tells the time
    (UTC); ``connection`` replaces :func:`~tierscope.collector.sources.cloud_logging.connect` (tests).
    ``run``: the one run the jobs' records belong to (a sweep's configuration): its facts are recorded
    instead of a run per job id, and its run id and tier fill in, or are set on every record when given
    (``run_id_given``, ``tier_given``), as for a collect of files.

    Raises :class:`~tierscope.collector.sources.cloud_logging.CloudLoggingError` when nothing could
    be read (no credentials, permission denied, unknown project, bad filter),
    :class:`CollectStopped` when reading failed after some entries were stored,
    :class:`~tierscope.dataset.errors.DatasetBusyError` when another collect holds the lock,
    :class:`~tierscope.dataset.errors.StateCorruptError` when the stored watermark is malformed
    (``tierscope doctor --fix`` moves it aside; ``ignore_watermark`` reads without it).
    """
    if not job_ids:
        raise CollectorError("give at least one --job-id")
    opts = options
    conn = connection or connect(opts.project, opts.endpoint, opts.requests_per_minute, opts.retry)
    jobs = tuple(sorted(set(job_ids)))
    tier_by_run = {r.run_id: r.tier for r in opts.runs if r.run_id in jobs and r.tier}
    query = CloudQuery(
        job_ids=jobs,
        connection=conn,
        since=opts.since,
        until=opts.until,
        tier=opts.tier,
        tier_by_run=tier_by_run,
        page_size=opts.page_size,
        overlap=opts.overlap,
        ignore_watermark=opts.ignore_watermark,
        pages_per_append=opts.pages_per_append,
        clock=now or (lambda: datetime.now(UTC)),
        on_progress=on_progress,
    )
    # Records always carry their run (the job id) and source (the log name); only the tier may be missing.
    fill = run or RunSpec(run_id=jobs[0], tier=opts.tier, files=[])
    with dataset_lock(dataset, opts.lock_timeout):
        sink = Sink(dataset)
        reading = registry.reader_for(query).open(query, fill, sink.positions, ReadOptions())
        assert isinstance(reading, CloudLoggingReading)
        sink.take(reading, fill)
        record_runs(
            dataset,
            [run]
            if run is not None
            else [
                next((r for r in opts.runs if r.run_id == job), None)
                or RunSpec(run_id=job, tier=opts.tier or tier_by_run.get(job), files=[], ran_on="Cloud Logging")
                for job in jobs
            ],
        )
        return reading.result
