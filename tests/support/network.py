"""Keep a test off the network: only the local host's names resolve."""

from __future__ import annotations

import socket

import pytest

LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")


def only_localhost(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail any name lookup but the local host's (:data:`LOCAL_HOSTS`) for the rest of the test: a
    Google client must reach only its local fake server (and never, say, the GCE metadata server)."""
    real = socket.getaddrinfo

    def local_only(host: object, *args: object, **kwargs: object) -> object:
        if host not in LOCAL_HOSTS:
            raise AssertionError(f"test tried to resolve {host!r}")
        return real(host, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(socket, "getaddrinfo", local_only)
