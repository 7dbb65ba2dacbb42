"""The test emulator keeps the promises tierscope's dataset on object storage relies on.

If one of these fails, a test of the dataset on Cloud Storage would pass or fail for the
emulator's reasons, not tierscope's.
"""

from __future__ import annotations

import pytest
from google.api_core.exceptions import NotFound, PreconditionFailed

from tests.support.gcs_emulator import Emulator


def test_if_generation_match_zero_creates_only_once(gcs_emulator: Emulator) -> None:
    bucket = gcs_emulator.bucket("precondition-create")
    first = bucket.blob("lease")
    first.upload_from_string(b"holder-a", if_generation_match=0)
    with pytest.raises(PreconditionFailed):
        bucket.blob("lease").upload_from_string(b"holder-b", if_generation_match=0)
    assert bucket.blob("lease").download_as_bytes() == b"holder-a"


def test_generation_match_guards_overwrite_and_delete(gcs_emulator: Emulator) -> None:
    bucket = gcs_emulator.bucket("precondition-replace")
    blob = bucket.blob("state.json")
    blob.upload_from_string(b"v1", if_generation_match=0)
    v1 = blob.generation
    blob.upload_from_string(b"v2", if_generation_match=v1)
    assert blob.generation != v1
    # A writer still holding v1 loses: its write and its delete are refused, nothing changes.
    with pytest.raises(PreconditionFailed):
        bucket.blob("state.json").upload_from_string(b"stale", if_generation_match=v1)
    with pytest.raises(PreconditionFailed):
        bucket.blob("state.json").delete(if_generation_match=v1)
    assert bucket.blob("state.json").download_as_bytes() == b"v2"
    bucket.blob("state.json").delete(if_generation_match=blob.generation)
    with pytest.raises(NotFound):
        bucket.blob("state.json").download_as_bytes()


def test_resumable_upload_checks_its_precondition(gcs_emulator: Emulator) -> None:
    # Above 8 MiB google-cloud-storage switches from one multipart request to a resumable upload.
    bucket = gcs_emulator.bucket("precondition-resumable")
    big = b"x" * (9 << 20)
    bucket.blob("part").upload_from_string(big, if_generation_match=0)
    with pytest.raises(PreconditionFailed):
        bucket.blob("part").upload_from_string(big + b"y", if_generation_match=0)
    assert bucket.blob("part").download_as_bytes() == big


def test_gcsfs_and_polars_read_what_the_client_wrote(gcs_emulator: Emulator, monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in gcs_emulator.env.items():
        monkeypatch.setenv(key, value)
    import gcsfs  # after the environment: gcsfs reads GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT on import
    import polars as pl

    bucket = gcs_emulator.bucket("gcsfs-read")
    bucket.blob("logs/a.log").upload_from_string(b"line one\nline two\n")
    fs = gcsfs.GCSFileSystem(token="anon", endpoint_url=gcs_emulator.endpoint, skip_instance_cache=True)
    assert fs.ls("gcsfs-read/logs") == ["gcsfs-read/logs/a.log"]
    with fs.open("gcsfs-read/logs/a.log", "rb") as handle:
        assert pl.read_csv(handle, has_header=False, new_columns=["line"])["line"].to_list() == ["line one", "line two"]


def test_every_test_bucket_has_its_own_name() -> None:
    # One emulator serves the whole session: two tests creating the same bucket would fail with
    # 409 Conflict depending on the order they run in.
    import re
    from collections import Counter
    from pathlib import Path

    tests = Path(__file__).resolve().parent
    names = Counter(
        name
        for path in tests.rglob("test_*.py")
        for name in re.findall(r"(?:gcs_emulator|storage|emulator)\.bucket\(\"([^\"]+)\"\)", path.read_text())
    )
    assert [name for name, n in names.items() if n > 1] == []
