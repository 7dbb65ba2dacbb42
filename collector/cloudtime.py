"""Times as Cloud Logging writes them (standard library only: the watermark's documents use it too)."""

from __future__ import annotations

from datetime import UTC, datetime


def format_time(when: datetime) -> str:
    """``when`` as Cloud Logging writes times: RFC 3339, UTC, microseconds, ``Z``."""
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
