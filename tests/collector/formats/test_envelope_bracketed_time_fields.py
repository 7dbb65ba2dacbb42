"""A bracketed time with the logger's name, then its file and line and the level (Swin Transformer's layout)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from tests.collector.formats.test_envelopes import read


def test_the_time_the_name_the_file_and_line_and_the_level_are_the_envelope() -> None:
    # quoted from MzeroMiko/VMamba issue 273 (2024-07-27): '[%(asctime)s %(name)s] (%(filename)s %(lineno)d):
    # %(levelname)s %(message)s'
    got = read("[2024-07-27 03:37:34 vssm1_high_tiny_gradacc2] (main.py 295): INFO Train: [30/300][210/2859]\teta 0")
    assert got["line"] == "Train: [30/300][210/2859]\teta 0"
    assert got["timestamp"] == datetime(2024, 7, 27, 3, 37, 34, tzinfo=UTC)
    assert got["severity"] == "INFO"


@pytest.mark.parametrize(
    "line",
    [
        # a message's own bracketed date and words: no time of day in the brackets
        "[2024-07-27 release] (main.py 295): INFO step 3",
    ],
)
def test_near_misses_keep_their_text(line: str) -> None:
    got = read(line)
    assert got["line"] == line and got.get("envelope") is None


def test_a_parenthesis_after_the_time_that_is_no_file_and_line_stays_in_the_message() -> None:
    # the time is the envelope; "(see above): INFO" is the message's own (no line number after a file name)
    got = read("[2024-07-27 03:37:34] (see above): INFO step 3")
    assert got["line"] == "(see above): INFO step 3"
