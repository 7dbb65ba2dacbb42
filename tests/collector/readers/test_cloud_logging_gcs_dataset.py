"""``collect cloud`` into a dataset on Cloud Storage (the emulator): its watermark is a state
document there, so the next collect, from any host, resumes where this one stopped."""

from __future__ import annotations

import pytest

from tests.collector.conftest import PROJECT
from tests.collector.readers.test_cloud_logging import FAST, JOB, SINCE
from tests.support.fake_logging_server import FakeLoggingServer, job_entries
from tests.support.gcs_emulator import Emulator
from tierscope.collector.cloud import CloudOptions, collect_cloud
from tierscope.collector.positions import watermark_name
from tierscope.collector.sources.cloud_logging import job_filter
from tierscope.dataset.store import Dataset


def test_collect_cloud_into_a_gs_dataset_resumes_from_its_watermark(
    server: FakeLoggingServer, gcs_emulator: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key, value in gcs_emulator.env.items():
        monkeypatch.setenv(key, value)
    bucket = gcs_emulator.bucket("cloud-watermark")
    url = "gs://cloud-watermark/ds"
    args = {"project": PROJECT, "endpoint": server.url, "retry": FAST, "requests_per_minute": None}
    server.add_entries(job_entries(1500))
    first = collect_cloud(Dataset(url), [JOB], CloudOptions(since=SINCE, tier="STANDARD_1", **args))  # type: ignore[arg-type]
    assert first.total("steps") == 1500 and first.complete
    assert bucket.blob(f"ds/state/{watermark_name(PROJECT, job_filter([JOB]))}.json").exists()
    # A second collect without --since starts at the watermark (less the overlap) and stores nothing new.
    second = collect_cloud(Dataset(url), [JOB], CloudOptions(tier="STANDARD_1", **args))  # type: ignore[arg-type]
    assert second.total("steps") == 0
    steps = Dataset(url).read("steps")
    assert steps.height == 1500 and steps.select("step").n_unique() == 1500
