"""The one duration grammar of the command line (``--last``, ``--overlap``, ``--deadline``)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from tierscope.cli import app
from tierscope.cli.durations import UNIT_SECONDS, parse_duration, parse_when


@pytest.mark.parametrize(
    ("text", "bare_unit", "seconds"),
    [
        ("90s", None, 90),
        ("30m", None, 30 * 60),
        ("90min", None, 90 * 60),
        ("24h", None, 24 * 3600),
        ("7d", None, 7 * 86_400),  # --last 7d: 604,800 s
        ("2w", None, 14 * 86_400),
        ("1.5d", None, 36 * 3600),  # 1.5 x 24 h
        (" 5m ", None, 300),  # --overlap's default, with stray spaces
        ("6h", "h", 6 * 3600),  # --deadline 6h
        ("6", "h", 6 * 3600),  # --deadline 6: a bare number is hours
        ("1440m", "h", 86_400),  # 1440 / 60 = 24 h
        ("0m", None, 0),
    ],
)
def test_durations_in_every_unit(text: str, bare_unit: str | None, seconds: float) -> None:
    assert parse_duration(text, bare_unit) == timedelta(seconds=seconds)


def test_a_duration_longer_than_any_says_the_longest() -> None:
    # 10**20 days overflows timedelta (at most 999,999,999 days), which is the longest written
    assert parse_duration("999999999d") == timedelta(days=999_999_999)
    with pytest.raises(
        ValueError, match=r"^'100000000000000000000d' is longer than any duration can be; write at most"
    ):
        parse_duration("100000000000000000000d")


@pytest.mark.parametrize(
    ("text", "bare_unit"),
    [("7", None), ("soon", "h"), ("bogus", None), ("-1h", None), ("1y", None), ("h", "h"), ("", "h"), ("1.h", None)],
)
def test_what_is_not_a_duration_says_what_is_expected(text: str, bare_unit: str | None) -> None:
    with pytest.raises(ValueError, match="is not a duration; write a number and a unit"):
        parse_duration(text, bare_unit)


@given(
    st.integers(min_value=0, max_value=10**6),
    st.integers(min_value=0, max_value=99),
    st.sampled_from(sorted(UNIT_SECONDS)),
    st.booleans(),
)
def test_number_and_unit_give_number_times_the_unit(whole: int, hundredths: int, unit: str, space: bool) -> None:
    text = f"{whole}.{hundredths:02d}{' ' if space else ''}{unit}"
    expected = timedelta(seconds=(whole + hundredths / 100) * UNIT_SECONDS[unit])
    # timedelta keeps microseconds: the float product may differ by one in the last place.
    assert abs(parse_duration(text) - expected) <= timedelta(microseconds=1)


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (["recommend", "--steps", "10", "--deadline", "0h"], "--deadline"),  # no time at all
        (["recommend", "--steps", "10", "--deadline", "soon"], "--deadline"),
        (["collect", "cloud", "--job-id", "j", "--project", "p", "--last", "7"], "--last"),  # a unit is required
        (["collect", "cloud", "--job-id", "j", "--project", "p", "--overlap", "5 minutes"], "--overlap"),
        # past timedelta's 999,999,999 days: was an OverflowError's traceback
        (["recommend", "--steps", "10", "--deadline", "1000000000d"], "--deadline"),
        # 999,999,999 days is a duration, but now less that is before year 1
        (["collect", "cloud", "--job-id", "j", "--project", "p", "--last", "999999999d"], "--last"),
    ],
)
def test_a_bad_duration_option_is_a_usage_error_before_anything_is_read(
    tmp_path: Path, args: list[str], option: str
) -> None:
    result = CliRunner().invoke(app, [*args, "-d", str(tmp_path / "ds")])
    assert result.exit_code == 2, result.output
    assert f"Invalid value for {option}" in result.output and "Traceback" not in result.output
    assert not (tmp_path / "ds").exists()


@pytest.mark.parametrize(
    ("text", "when"),
    [
        ("2026-01-05", datetime(2026, 1, 5, tzinfo=UTC)),  # a date is its midnight, UTC
        (" 2026-01-05T09:00:00Z ", datetime(2026, 1, 5, 9, tzinfo=UTC)),
        ("2026-01-05T09:00:00+02:00", datetime(2026, 1, 5, 7, tzinfo=UTC)),  # 09:00 at +2 h is 07:00 UTC
        ("2026-01-05T09:00:00", datetime(2026, 1, 5, 9, tzinfo=UTC)),  # naive is UTC
    ],
)
def test_a_point_in_time_is_iso_8601_in_utc(text: str, when: datetime) -> None:
    assert parse_when(text) == when


def test_a_time_that_is_not_iso_8601_says_what_is_expected() -> None:
    with pytest.raises(ValueError, match=r"not ISO 8601 \(like 2026-01-05"):
        parse_when("yesterday")
