"""collector/positions.py: a file offset and a Cloud Logging watermark are one family of state
documents, each checked by ``doctor`` and quarantined by ``doctor --fix`` the same way."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest

from tests.collector.conftest import PROJECT
from tests.support.fake_logging_server import START, FakeLoggingServer, job_entries
from tierscope.collector.cloud import CloudOptions, collect_cloud
from tierscope.collector.collect import STATE_CHECKS
from tierscope.collector.positions import (
    FILES_NAME,
    CloudWatermark,
    Watermark,
    check_positions,
    load_watermark,
    save_watermark,
    watermark_name,
)
from tierscope.collector.sources.cloud_logging import RetryPolicy, job_filter
from tierscope.dataset import doctor
from tierscope.dataset.errors import StateCorruptError
from tierscope.dataset.store import Dataset

JOB = "tierscope_job_1"
FILTER = job_filter([JOB])
FAST = RetryPolicy(initial_s=0.001, maximum_s=0.004, deadline_s=2.0)


def _malformed(ds: Dataset) -> Path:
    """A watermark document whose timestamp is not a time (a hand edit gone wrong)."""
    save_watermark(ds.state_dir, CloudWatermark(PROJECT, FILTER, Watermark(START, ["a"], START)))
    path = ds.state_dir / f"{watermark_name(PROJECT, FILTER)}.json"
    doc = json.loads(path.read_text())
    doc["watermark"]["timestamp"] = "yesterday"
    path.write_text(json.dumps(doc))
    return path


def test_a_watermark_round_trips(tmp_path: Path) -> None:
    mark = CloudWatermark(PROJECT, FILTER, Watermark(START, ["a", "b"], START + timedelta(hours=1)), complete=True)
    save_watermark(tmp_path, mark)
    got = load_watermark(tmp_path, PROJECT, FILTER)
    assert got == mark
    assert load_watermark(tmp_path, PROJECT, job_filter(["another_job"])) is None


def test_a_malformed_watermark_is_a_state_error_doctor_finds_and_quarantines(
    server: FakeLoggingServer, tmp_path: Path
) -> None:
    ds = Dataset(tmp_path / "ds")
    path = _malformed(ds)
    malformed = path.read_bytes()
    (error,) = check_positions(ds.state_dir)
    assert error.path == path and error.problem.startswith("is not a Cloud Logging watermark document")
    with pytest.raises(StateCorruptError, match="is not a Cloud Logging watermark document"):
        load_watermark(ds.state_dir, PROJECT, FILTER)
    server.add_entries(job_entries(30))
    options = CloudOptions(
        project=PROJECT, endpoint=server.url, since=START - timedelta(hours=1), retry=FAST, requests_per_minute=None
    )
    # The collect names the document and what to do; it stores nothing and leaves the document as it was.
    with pytest.raises(StateCorruptError, match="doctor"):
        collect_cloud(ds, [JOB], options)
    assert path.read_bytes() == malformed and not ds.files("steps")

    (problem,) = doctor.check(ds, STATE_CHECKS).problems
    assert problem.path == path
    report = doctor.doctor(ds, fix=True, state_checks=STATE_CHECKS)
    assert report.healthy and not path.exists()
    assert (ds.root / "quarantine" / path.relative_to(ds.root)).is_file()
    # Without its watermark the next collect reads from --since: all 30 entries.
    result = collect_cloud(ds, [JOB], options)
    assert result.total("steps") == 30 and not result.resumed
    assert doctor.check(ds, STATE_CHECKS).problems == []


def test_the_file_offsets_are_checked_the_same_way(tmp_path: Path) -> None:
    ds = Dataset(tmp_path / "ds")
    ds.state_dir.mkdir(parents=True)
    offsets = ds.state_dir / f"{FILES_NAME}.json"
    offsets.write_text('{"version": 1, "files": [{"bogus": 1}]}')
    _malformed(ds)
    problems = sorted(e.problem.split(" (")[0] for e in check_positions(ds.state_dir))
    assert problems == ["is not a Cloud Logging watermark document", "is not a file-offsets document"]
    report = doctor.doctor(ds, fix=True, state_checks=STATE_CHECKS)
    assert len(report.problems) == 2 and report.healthy
    assert check_positions(ds.state_dir) == []
