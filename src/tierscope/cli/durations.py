"""The command line's grammar of time: durations (``--last 7d``, ``--overlap 5m``, ``--deadline 6h``)
and points in time (``--since 2026-01-05``)."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

#: Seconds per unit. ``m`` is minutes (months are not a duration a log query or a deadline needs).
UNIT_SECONDS = {"s": 1, "m": 60, "min": 60, "h": 3600, "d": 86_400, "w": 604_800}

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|min|m|h|d|w)?\s*$")


def parse_duration(text: str, bare_unit: str | None = None) -> timedelta:
    """``"90s"``, ``"30m"``, ``"90min"``, ``"24h"``, ``"1.5d"``, ``"2w"`` as a timedelta.

    A number without a unit is read in ``bare_unit`` (``--deadline 6`` is 6 hours) or, when
    ``bare_unit`` is None, refused. Zero is allowed; negative numbers and durations past
    999,999,999 days are not. Raises
    :class:`ValueError` saying what is expected.
    """
    match = _DURATION.match(text)
    unit = (match.group(2) or bare_unit) if match else None
    if match is None or unit is None:
        raise ValueError(f"{text!r} is not a duration; write a number and a unit (s, m, h, d, w), e.g. 90m, 24h, 1.5d")
    try:
        return timedelta(seconds=float(match.group(1)) * UNIT_SECONDS[unit])
    except OverflowError:  # past timedelta's 999,999,999 days: no log query or deadline is that long
        raise ValueError(f"{text!r} is longer than any duration can be; write at most 999999999d") from None


def parse_when(text: str) -> datetime:
    """An ISO 8601 time or date (``2026-01-05``, ``2026-01-05T09:00:00Z``) as UTC (naive = UTC).

    Raises :class:`ValueError` saying what is expected.
    """
    try:
        when = datetime.fromisoformat(text.strip())
    except ValueError:
        raise ValueError(f"time {text!r} is not ISO 8601 (like 2026-01-05 or 2026-01-05T09:00:00Z)") from None
    return when.astimezone(UTC) if when.tzinfo else when.replace(tzinfo=UTC)
