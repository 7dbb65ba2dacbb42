"""Cloud Logging at scale: 25 pages of entries from a master, 4 workers and 3 ps, interleaved, with 429 bursts.

The scale is in pages, not entries: 2,000 entries asked for 80 a page (``page_size``, the collect's own option) make
the 25 pages, bursts and watermarks that 25,000 make at the API's 1,000 a page, with a twelfth of the entries to
serve, parse and store."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from tests.support import ROOT
from tests.support.fake_logging_server import START, FakeLoggingServer, job_entries
from tierscope.collector.cloud import CloudOptions, CollectStopped, collect_cloud
from tierscope.collector.sources.cloud_logging import RetryPolicy
from tierscope.dataset.store import Dataset

JOB = "tierscope_job_1"
PROJECT = "test-project"
N = 2_000
PAGE = 80  # entries a page: N / PAGE = 25 pages
FAST = RetryPolicy(initial_s=0.001, maximum_s=0.004, deadline_s=2.0)
GIVE_UP = RetryPolicy(initial_s=0.001, maximum_s=0.002, deadline_s=0.5)


@pytest.fixture(scope="module")
def entries() -> list[dict]:
    return job_entries(N)  # 8 replicas take turns; text, structured and message payloads rotate


@pytest.fixture
def server(entries: list[dict]) -> Iterator[FakeLoggingServer]:
    with FakeLoggingServer(entries, project=PROJECT) as srv:
        for after in (3, 11, 19):  # three bursts of three 429s
            srv.burst(429, count=3, after_pages=after)
        yield srv


def run(server: FakeLoggingServer, ds: Dataset, **kw: object):
    args: dict[str, object] = {
        "project": PROJECT,
        "endpoint": server.url,
        "since": START - timedelta(hours=1),
        "retry": FAST,
        "requests_per_minute": None,
        "tier": "STANDARD_1",
        "page_size": PAGE,
    }
    args.update(kw)
    return collect_cloud(ds, [JOB], CloudOptions(**args))  # type: ignore[arg-type]


def test_one_collect_then_a_second_that_adds_none(server: FakeLoggingServer, tmp_path: Path) -> None:
    ds = Dataset(tmp_path / "ds")
    first = run(server, ds)
    steps = ds.read("steps")
    assert steps.height == N
    assert steps["entry_id"].n_unique() == N
    # Replica i % 8: the master has 2000 / 8 = 250 entries, each worker 250, each ps 250.
    by_role = dict(steps.group_by("role").len().iter_rows())
    assert by_role == {"master": 250, "worker": 4 * 250, "ps": 3 * 250}
    # 2000 / 80 = 25 pages + 9 retried 429s.
    assert (first.stats.requests, first.stats.retries) == (25 + 9, 9)
    assert server.statuses.count(429) == 9
    second = run(server, ds)
    assert (second.total("steps"), second.total("events"), second.total("rejects")) == (0, 0, 0)
    # The data is months old, so the second collect starts at the watermark: one request, the last timestamp's
    # entries skipped (2000 = 7 * 285 + 5: the last 5 entries share the last timestamp; it holds 5 already-stored ids).
    assert second.stats.requests == 1
    assert second.skipped_seen == 5
    assert ds.read("steps").height == N


def test_a_collect_failing_half_way_then_restarted(server: FakeLoggingServer, tmp_path: Path) -> None:
    ds = Dataset(tmp_path / "ds")
    server.fail_after(12, status=503)
    with pytest.raises(CollectStopped) as stopped:
        run(server, ds, retry=GIVE_UP, pages_per_append=1)
    assert ds.read("steps").height == 12 * PAGE  # 960
    assert stopped.value.result.total("steps") == 12 * PAGE
    failed_requests = len(server.requests)
    server.heal()
    server.burst(429, count=3, after_pages=server.pages_served + 4)
    second = run(server, ds)
    steps = ds.read("steps")
    assert steps.height == N
    assert steps["entry_id"].n_unique() == N
    assert sorted(steps["step"].to_list()) == list(range(1, N + 1))
    assert second.total("duplicates") == 0
    # Position 959 is in the timestamp group 959 // 7 = 137 (positions 959..965): 1 id already stored.
    assert second.skipped_seen == 1
    # 2000 - 960 + 1 = 1041 entries from the watermark: 14 pages of 80 (13 hold 1040), plus 3 retried 429s.
    assert second.stats.requests == 14 + 3
    served = sum(1 for r in server.requests if r.status == 200)
    assert served == 12 + 14  # within a few of 25
    assert failed_requests > 12


def test_a_collect_killed_half_way_then_restarted(tmp_path: Path) -> None:
    """A real kill: the CLI in a subprocess, SIGKILLed while it waits for page 6."""
    entries = job_entries(8_000)
    ds = Dataset(tmp_path / "ds")
    with FakeLoggingServer(entries, project=PROJECT) as server:
        server.hang_after(5)
        env = dict(os.environ, PYTHONPATH=str(ROOT), TIERSCOPE_LOGGING_ENDPOINT=server.url)
        cmd = [sys.executable, "-m", "tierscope", "collect", "cloud", "--job-id", JOB, "--project", PROJECT]
        cmd += ["--since", "2026-01-05T08:00:00Z", "--dataset", str(ds.root), "--pages-per-append", "1", "--quiet"]
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            if not server.hung.wait(timeout=120):
                proc.kill()
                raise AssertionError(f"the collect never reached page 6: {proc.communicate()}")
            # Pages 1-5 were stored before page 6 was asked for.
            assert ds.read("steps").height == 5_000
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=30)
        finally:
            server.release()
            if proc.poll() is None:
                proc.kill()
        assert proc.returncode == -signal.SIGKILL
        result = collect_cloud(
            ds, [JOB], CloudOptions(project=PROJECT, endpoint=server.url, since=START - timedelta(hours=1), retry=FAST)
        )
        steps = ds.read("steps")
        assert steps.height == 8_000
        assert steps["entry_id"].n_unique() == 8_000
        assert result.resumed
        assert result.total("duplicates") == 0
