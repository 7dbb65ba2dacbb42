"""Section (c): reading Cloud Logging from the local fake server, with and without an
emulated quota of 60 ``entries.list`` requests a minute.

Written against the API the Cloud Logging helper is expected to ship (adapt here, in
:func:`_read_all`, if it differs):

- ``tests/fake_logging_server.py``: ``FakeLoggingServer(entries, requests_per_minute=None)``,
  a context manager serving ``entries.list`` over HTTP; ``.url`` is its endpoint; over
  ``requests_per_minute`` in any minute it answers 429, like the real quota.
- ``collector.sources.cloud_logging``: ``connect(project, endpoint, requests_per_minute, retry)``,
  ``build_filter(job_ids, since)``, ``read_entries(conn, filter_)`` yielding chunks with
  ``.entries``, and ``conn.stats.requests`` / ``conn.stats.retries``.

When either is missing the section is skipped with "not available yet".
"""

from __future__ import annotations

import importlib
import math
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from benchmarks.table import Figure, Target

SECTION = "cloud logging"
PAGE = 1000
QUOTA_PER_MINUTE = 60


@dataclass(frozen=True)
class CloudOptions:
    entries: int


def _entries(n: int, job: str) -> list[dict[str, Any]]:
    """``n`` LogEntry resources (API form) carrying tierscope structured step records."""
    start = datetime(2026, 11, 29, tzinfo=UTC)
    out = []
    for i in range(n):
        when = (start + timedelta(milliseconds=50 * i)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        out.append(
            {
                "logName": f"projects/bench/logs/{job}",
                "insertId": f"id{i:08d}",
                "timestamp": when,
                "severity": "INFO",
                "resource": {"type": "ml_job", "labels": {"job_id": job, "task_name": f"worker-replica-{i % 4}"}},
                "jsonPayload": {
                    "tierscope": "step", "run_id": job, "tier": "STANDARD_1", "role": "worker",
                    "task_index": i % 4, "step": 100 * (i + 1), "loss": 0.5, "accuracy": 0.9,
                    "elapsed_s": 4.4 * (i + 1), "global_steps_per_s": 22.8, "local_steps_per_s": 5.7,
                },
            }
        )  # fmt: skip
    return out


def _read_all(entries: list[dict[str, Any]], quota: int | None) -> tuple[float, int, int, int]:
    """(seconds, entries read, requests, retries) for one full read through the fake server."""
    server_mod = importlib.import_module("tests.fake_logging_server")
    cl = importlib.import_module("collector.sources.cloud_logging")
    with server_mod.FakeLoggingServer(entries, requests_per_minute=quota) as server:
        conn = cl.connect(project="bench", endpoint=server.url, requests_per_minute=cl.DEFAULT_REQUESTS_PER_MINUTE)
        filter_ = cl.build_filter(["bench-job"], since=datetime(2026, 1, 1, tzinfo=UTC))
        start = time.perf_counter()
        got = sum(len(chunk.entries) for chunk in cl.read_entries(conn, filter_))
        seconds = time.perf_counter() - start
    return seconds, got, conn.stats.requests, conn.stats.retries


def measure(opts: CloudOptions) -> list[Figure]:
    try:
        entries = _entries(opts.entries, "bench-job")
        free = _read_all(entries, None)
        quota = _read_all(entries, QUOTA_PER_MINUTE)
    except (ImportError, AttributeError, TypeError) as exc:
        note = f"not available yet ({type(exc).__name__}: {exc})"
        return [Figure(SECTION, "Cloud Logging read", "entries/s", None, note=note)]
    pages = math.ceil(opts.entries / PAGE)
    figures = []
    for label, (seconds, got, requests, retries) in (("no quota", free), (f"{QUOTA_PER_MINUTE} req/min quota", quota)):
        if got != opts.entries:
            raise RuntimeError(f"read {got} of {opts.entries} entries from the fake server ({label})")
        figures += [
            Figure(SECTION, f"{opts.entries:,} entries, {label}", "entries/s", got / seconds,
                   extra={"seconds": seconds, "requests": requests, "retries": retries}),
            Figure(SECTION, f"API requests, {label} (pages + retries)", "requests", requests,
                   higher_is_better=False, targets=(Target("<=", pages + retries),), extra={"retries": retries}),
        ]  # fmt: skip
    return figures
