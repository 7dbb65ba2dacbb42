"""Fixtures of the collector's tests: no network, and the fake Cloud Logging server."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.fake_logging_server import FakeLoggingServer
from tests.support.network import only_localhost

#: The project the fake Cloud Logging server serves.
PROJECT = "test-project"


@pytest.fixture(autouse=True)
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests must not reach the network (google-cloud-logging would otherwise ask the GCE
    metadata server about its loggers)."""
    only_localhost(monkeypatch)


@pytest.fixture
def server() -> Iterator[FakeLoggingServer]:
    """A fake Cloud Logging server on 127.0.0.1 serving :data:`PROJECT`, stopped after the test."""
    with FakeLoggingServer(project=PROJECT) as srv:
        yield srv
