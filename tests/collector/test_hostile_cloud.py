"""Hostile Cloud Logging: ``collect cloud`` against the real google-cloud-logging
client and tests/fake_logging_server.py."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest

from tests.collector.conftest import PROJECT
from tests.support.fake_logging_server import START, FakeLoggingServer, job_entries, write_export
from tierscope.collector.cloud import CloudOptions, CollectStopped, collect_cloud
from tierscope.collector.sources.cloud_logging import MAX_EMPTY_PAGES, CloudLoggingError, RetryPolicy
from tierscope.dataset.store import Dataset

JOB = "tierscope_job_1"
FAST = RetryPolicy(initial_s=0.001, maximum_s=0.004, deadline_s=2.0)


def collect(server: FakeLoggingServer, dataset: Dataset):
    return collect_cloud(
        dataset,
        [JOB],
        CloudOptions(
            project=PROJECT,
            endpoint=server.url,
            since=START - timedelta(hours=1),
            retry=FAST,
            requests_per_minute=None,
            tier="STANDARD_1",
        ),
    )


def _hostile(entries: list[dict]) -> list[dict]:
    """Entries 3, 4 and 5 made hostile (placeholders the server's rewrite turns into raw JSON)."""
    structured = [e for e in entries if "jsonPayload" in e and "tierscope" in e["jsonPayload"]]
    structured[3]["jsonPayload"]["loss"] = "@HUGE_FLOAT@"
    structured[4]["jsonPayload"]["loss"] = "@HUGE_INT@"
    structured[5]["jsonPayload"]["extra"] = "@DEEP@"
    return entries


def _raw(data: bytes) -> bytes:
    return (
        data.replace(b'"@HUGE_FLOAT@"', b"1e400")
        .replace(b'"@HUGE_INT@"', b"9" * 5000)
        .replace(b'"@DEEP@"', b"[" * 100_000 + b"]" * 100_000)
    )


def test_unrepresentable_values_in_entries_are_rejects_and_the_rest_is_stored(
    server: FakeLoggingServer, tmp_path: Path
) -> None:
    server.add_entries(_hostile(job_entries(300)))
    server.rewrite = _raw
    ds = Dataset(tmp_path / "ds")
    result = collect(server, ds)  # was: ValueError (4300 digits) out of the client, nothing stored
    assert result.total("steps") == 297  # 300 entries, one step each, 3 hostile
    reasons = sorted(ds.read("rejects")["reason"].to_list())
    assert len(reasons) == 3
    assert reasons[0].startswith("integer of 5,000 digits (more than 4,300) at loss")
    assert reasons[1].startswith("number 1e400 is out of the range of a 64-bit float at loss")
    assert reasons[2].startswith("value nested more than 512 levels deep at extra")


def test_the_same_values_in_a_gcloud_export_are_rejects_too(tmp_path: Path) -> None:
    from tierscope.collector.collect import collect_runs, runs_from_paths

    path = tmp_path / "job.json"
    write_export(_hostile(job_entries(300)), path)
    path.write_bytes(_raw(path.read_bytes()))
    ds = Dataset(tmp_path / "ds")
    result = collect_runs(ds, runs_from_paths([path], None, "STANDARD_1", None))
    assert not result.errors  # was: ValueError (4300 digits) from json.load
    assert result.total("steps") == 297
    reasons = ds.read("rejects")["reason"].to_list()
    assert len(reasons) == 3
    assert all(r.startswith("item ") for r in reasons)
    # The export's rejects name the item's position in the array (1-based), not "None".
    assert None not in ds.read("rejects")["source_offset"].to_list()


def test_a_repeated_page_token_is_an_error_naming_the_filter(server: FakeLoggingServer, tmp_path: Path) -> None:
    server.add_entries(job_entries(2500))
    server.token_mode = "repeat"
    with pytest.raises(CollectStopped) as caught:
        collect(server, Dataset(tmp_path / "ds"))  # was: endless requests
    assert isinstance(caught.value.__cause__, CloudLoggingError)
    assert "returned the page token 'the-same-token' a second time" in str(caught.value)
    assert f'resource.labels.job_id="{JOB}"' in str(caught.value)
    assert len(server.requests) == 2


def test_endless_empty_pages_are_an_error_after_the_documented_number(
    server: FakeLoggingServer, tmp_path: Path
) -> None:
    server.add_entries(job_entries(10))
    server.token_mode = "empty"
    with pytest.raises(CloudLoggingError) as caught:
        collect(server, Dataset(tmp_path / "ds"))  # was: 1,936 requests in 90 s and counting
    assert f"{MAX_EMPTY_PAGES + 1} empty pages in a row" in str(caught.value)
    assert "The filter was: " in str(caught.value)
    assert len(server.requests) == MAX_EMPTY_PAGES + 1


def test_a_response_cut_mid_body_is_retried_like_a_503(server: FakeLoggingServer, tmp_path: Path) -> None:
    server.add_entries(job_entries(2500))
    server.cut_bodies(2)
    ds = Dataset(tmp_path / "ds")
    result = collect(server, ds)  # was: exit 1, "cannot reach Cloud Logging (ChunkedEncodingError ...)"
    assert result.total("steps") == 2500
    assert result.stats.retries == 2
    assert json.dumps(server.statuses) == json.dumps([200] * 5)  # 3 pages + 2 cut and sent again
