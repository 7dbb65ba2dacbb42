"""The report's throughput series over time: the task clock from ``interval_s`` (or a step time) only
where it is needed."""

from __future__ import annotations

from datetime import datetime, timedelta

import polars as pl
import pytest

from tierscope.analysis.series import needs_interval_clock, steady_rates


def _intervals(elapsed: list[float | None], stamps: list[datetime | None]) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "run_id": ["a"] * 3,
            "role": ["master"] * 3,
            "task_index": [0] * 3,
            "timestamp": stamps,
            "elapsed_s": elapsed,
            "interval_s": [2.0, 3.0, 5.0],
            "d_seconds": [None, 3.0, 5.0],
            "step_timed": [False, False, False],
            "rate": [1.0, 2.0, 3.0],
            "warmup": [False, False, False],
        },
        schema_overrides={"timestamp": pl.Datetime("us", "UTC"), "elapsed_s": pl.Float64},
    )


def test_seconds_from_the_interval_sum_only_where_no_timestamp_nor_elapsed() -> None:
    # interval_s only: seconds are its running sum, 2, 2 + 3 = 5, 5 + 5 = 10.
    only_intervals = _intervals([None, None, None], [None, None, None])
    assert needs_interval_clock(only_intervals)
    seconds = steady_rates(only_intervals)["seconds"].to_list()
    assert seconds == [2.0, 5.0, 10.0]
    # elapsed_s on every record (or a timestamp): the running sum is never read, so leaving it out
    # gives the same seconds: elapsed as logged, and 0, 4 s, 9 s after the first timestamp.
    t0 = datetime(2016, 7, 1, 12, 0, 0)
    for frame, expected in (
        (_intervals([1.5, 4.0, 8.0], [None, None, None]), [1.5, 4.0, 8.0]),
        (_intervals([None, None, None], [t0, t0 + timedelta(seconds=4), t0 + timedelta(seconds=9)]), [0.0, 4.0, 9.0]),
    ):
        assert not needs_interval_clock(frame)
        for clock in (True, False):
            assert steady_rates(frame, clock)["seconds"].to_list() == expected


def test_a_step_time_is_the_task_clock_where_nothing_else_is() -> None:
    # TF-slim lines (case24's shape): no interval_s, no elapsed_s, no timestamp; the intervals are timed
    # by each line's step time (step_timed), 18.507 s and 17.088 s after the first line (its own time
    # unknown: 0). The clock: 0, 18.507, 18.507 + 17.088 = 35.595 (the first is warm-up, not charted).
    frame = _intervals([None, None, None], [None, None, None]).with_columns(
        interval_s=pl.lit(None, pl.Float64),
        d_seconds=pl.Series([None, 18.507, 17.088]),
        step_timed=pl.Series([False, True, True]),
        warmup=pl.Series([True, False, False]),
    )
    assert needs_interval_clock(frame)
    assert steady_rates(frame)["seconds"].to_list() == pytest.approx([18.507, 35.595])
