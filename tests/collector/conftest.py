"""Fixtures of the collector's tests: no network, and the fake Cloud Logging server."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from tests.support.fake_logging_server import FakeLoggingServer

#: The project the fake Cloud Logging server serves.
PROJECT = "test-project"


@pytest.fixture(autouse=True)
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail any name lookup but the local host's: these tests must not reach the network
    (google-cloud-logging would otherwise ask the GCE metadata server about its loggers)."""
    real = socket.getaddrinfo

    def local_only(host: object, *args: object, **kwargs: object) -> object:
        if host not in ("127.0.0.1", "localhost", "::1"):
            raise AssertionError(f"test tried to resolve {host!r}")
        return real(host, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(socket, "getaddrinfo", local_only)


@pytest.fixture
def server() -> Iterator[FakeLoggingServer]:
    """A fake Cloud Logging server on 127.0.0.1 serving :data:`PROJECT`, stopped after the test."""
    with FakeLoggingServer(project=PROJECT) as srv:
        yield srv
