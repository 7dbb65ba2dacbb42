"""Section (c): ``collect_cloud`` from the local fake Cloud Logging server (``tests/fake_logging_server.py``),
without a quota and with the server emulating 60 ``entries.list`` requests a minute (the
client's own limit, :data:`~tierscope.collector.sources.cloud_logging.DEFAULT_REQUESTS_PER_MINUTE`, on).
Skipped with "not available yet" when the fake server or the collector is missing."""

from __future__ import annotations

import importlib
import math
import shutil
import sys
import time
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from benchmarks.measure import REPO, BenchError
from benchmarks.table import Figure, Target

SECTION = "cloud logging"
QUOTA_PER_MINUTE = 60
JOB = "tierscope_bench_job"


@dataclass(frozen=True)
class CloudOptions:
    entries: int


def _collect(work: Path, fake: Any, entries: list[dict[str, Any]], quota: int | None) -> tuple[float, Any]:
    """(seconds, result) of one collect of every entry into a fresh dataset."""
    from tierscope.collector.cloud import CloudOptions, collect_cloud
    from tierscope.collector.sources.cloud_logging import DEFAULT_REQUESTS_PER_MINUTE, RetryPolicy
    from tierscope.dataset.store import Dataset

    dataset = work / "cloud-ds"
    shutil.rmtree(dataset, ignore_errors=True)
    with fake.FakeLoggingServer(entries, project="bench", quota_per_minute=quota) as server:
        start = time.perf_counter()
        result = collect_cloud(Dataset(dataset), [JOB], CloudOptions(
            project="bench", endpoint=server.url, since=fake.START - timedelta(hours=1),
            requests_per_minute=DEFAULT_REQUESTS_PER_MINUTE if quota else None,
            retry=RetryPolicy(initial_s=0.5, maximum_s=8.0, deadline_s=180.0), tier="STANDARD_1",
        ))  # fmt: skip
        seconds = time.perf_counter() - start
    shutil.rmtree(dataset, ignore_errors=True)
    return seconds, result


def measure(work: Path, opts: CloudOptions) -> list[Figure]:
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))  # the fake server lives with the tests
    try:
        fake = importlib.import_module("tests.support.fake_logging_server")
        importlib.import_module("tierscope.collector.cloud")
    except ImportError as exc:
        return [Figure(SECTION, "Cloud Logging collect", "entries/s", None, note=f"not available yet ({exc})")]
    entries = fake.job_entries(opts.entries, job_id=JOB, project="bench")
    pages = math.ceil(opts.entries / 1000)
    figures = []
    for label, quota in (("no quota", None), (f"{QUOTA_PER_MINUTE} requests/min quota", QUOTA_PER_MINUTE)):
        seconds, result = _collect(work, fake, entries, quota)
        if result.total("lines") != opts.entries:
            raise BenchError(f"collect cloud read {result.total('lines')} of {opts.entries} entries ({label})")
        stats = result.stats
        figures += [
            Figure(SECTION, f"collect cloud, {opts.entries:,} entries, {label}", "entries/s", opts.entries / seconds,
                   extra={"seconds": seconds, "waited_s": stats.waited_s}),
            Figure(SECTION, f"API requests, {label} ({pages} pages)", "requests", stats.requests,
                   higher_is_better=False, targets=(Target("<=", pages + stats.retries),),
                   note=f"{stats.retries} retries, {stats.waited_s:.0f} s waiting for the rate limit",
                   extra={"retries": stats.retries, "statuses": stats.statuses}),
        ]  # fmt: skip
    figures[2].baseline = figures[0].value  # the quota's cost: entries/s against the run without it
    return figures
