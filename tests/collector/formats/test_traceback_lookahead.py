"""A batch ending inside a traceback holds its start back for the next batch (the exception
line may come there); the start is found from the batch's tail, however long the traceback."""

from __future__ import annotations

import polars as pl
import pytest

from tierscope.collector.formats.traceback import PythonTraceback

START = "Traceback (most recent call last):"
FRAME = '  File "train.py", line 9, in <module>'


def undecided(texts: list[str]) -> int | None:
    lines = pl.DataFrame(
        {"source_offset": list(range(101, 101 + len(texts))), "line": texts},
        schema={"source_offset": pl.Int64, "line": pl.String},
    )
    return PythonTraceback().undecided_from(lines)


@pytest.mark.parametrize("frames", [0, 1, 63, 64, 65, 1000])
def test_a_traceback_still_open_at_the_end_is_held_back_from_its_start(frames: int) -> None:
    # lines 101-102 come before it; its start is line 103, whatever the number of frame lines after
    # (the 64-line window at the end is widened until it reaches a line that is not indented)
    assert undecided(["x", "INFO step 1", START, *[FRAME] * frames]) == 103


def test_a_traceback_closed_by_its_exception_line_or_any_other_line_is_decided() -> None:
    assert undecided([START, FRAME, "KeyError: 'x'"]) is None
    assert undecided([START, FRAME, "", FRAME]) is None  # an empty line is not indented
    assert undecided([START, *[FRAME] * 200, "INFO step 2", *[FRAME] * 5]) is None
    assert undecided(["INFO step 1", *[FRAME] * 100]) is None  # indented lines without a start
    assert undecided([]) is None


def test_of_two_open_tracebacks_the_last_start_counts() -> None:
    # lines 101-103 are a closed traceback, 104 starts the one still open
    assert undecided([START, FRAME, "ValueError: y", START, FRAME]) == 104
