"""Intervals, segments, duplicates and warm-up on small generated runs, checked by hand."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import polars as pl
import pytest

from tierscope.analysis.records import merge_duplicates
from tierscope.analysis.throughput import interval_rates, run_throughput
from tierscope.dataset.schema import STEP_SCHEMA, conform

T0 = datetime(2024, 1, 1, tzinfo=UTC)


def steps_frame(rows: list[dict]) -> pl.LazyFrame:
    base = {"run_id": "r", "tier": "BASIC", "role": "master", "task_index": 0, "source": "r.log", "format": "cloudml"}
    full = [{**base, "source_offset": i + 1, **row} for i, row in enumerate(rows)]
    return conform(pl.DataFrame(full, infer_schema_length=None), STEP_SCHEMA).lazy()


def two_processes(offset: int) -> list[dict]:
    """A master preempted after step 1000 and restarted from a checkpoint at ``1000 + offset``.

    First process: steps 100..1000 every 100 steps; intervals of 5, 4, 5, 4, ... seconds
    (20 and 25 steps/s). Second process: its elapsed_s restarts at 0; same pattern.
    """
    rows = []
    for process, start in ((0, 0), (1, 1000 + offset)):
        elapsed = 8.0  # start-up: the first interval is warm-up
        for k in range(1, 11):
            rows.append({"step": start + 100 * k, "elapsed_s": elapsed, "loss": 2.0 - 0.01 * k + process})
            elapsed += 5.0 if k % 2 else 4.0
    return rows


def test_a_resume_far_ahead_gives_the_rates_of_the_clean_restart() -> None:
    clean = run_throughput(steps_frame(two_processes(0))).row(0, named=True)
    resumed = run_throughput(steps_frame(two_processes(954_000))).row(0, named=True)
    # per process 9 steady intervals of 100 steps: 5 of 100/5 = 20 and 4 of 100/4 = 25 steps/s; the 4 s
    # ones are 0.8x the median 5 s (within the bound: kept). Steady and mean alike: 2 x 900 steps over
    # 2 x 41 s (9 intervals of 5,4,5,4,5,4,5,4,5 s) = 1800 / 82 = 21.951 (the median was 20).
    for row in (clean, resumed):
        assert row["segments"] == 2 and row["restarts"] == 1
        assert row["steady_intervals"] == 18
        assert row["steady_global_steps_per_s"] == pytest.approx(1800 / 82)
        assert row["mean_global_steps_per_s"] == pytest.approx(1800 / 82)
    assert resumed["last_step"] == 956_000
    # a naive rate across the gap: 954,100 steps over 8 s of "elapsed" that went backwards -> nonsense
    for key in ("steady_global_steps_per_s", "mean_global_steps_per_s", "steady_ci_low", "steady_ci_high"):
        assert resumed[key] == clean[key]


def test_a_jump_ahead_on_a_continuous_clock_starts_a_segment() -> None:
    # Timestamps only (a structured log): 10 records 5 s apart at 20 steps/s, then a
    # resume from 475,000 to 955,000 within 60 s, then 10 more records at 20 steps/s.
    rows = [{"step": 100 * k, "timestamp": T0 + timedelta(seconds=5 * k)} for k in range(1, 11)]
    rows += [{"step": 955_000 + 100 * k, "timestamp": T0 + timedelta(seconds=110 + 5 * k)} for k in range(1, 11)]
    rows[9]["step"] = 475_000  # the last record before the resume
    intervals = interval_rates(steps_frame(rows)).collect()
    # 100 -> ... -> 900 -> 475,000: a jump of 474,100 steps in 5 s = 94,820 steps/s, > 10 x the
    # median 20: its own segment; then 475,000 -> 955,100 in 65 s (7,386 steps/s): another. Steady:
    # 17 intervals of 100 steps in 5 s past the segments' first records, 1700 / 85 s = 20.
    assert intervals["segment"].to_list() == [0] * 9 + [1] + [2] * 10
    row = run_throughput(steps_frame(rows)).row(0, named=True)
    assert row["steady_global_steps_per_s"] == pytest.approx(20.0)
    assert row["mean_global_steps_per_s"] == pytest.approx(20.0)  # (800 + 900) / (40 + 45)
    naive = (955_000 + 1000 - 100) / 155  # first to last record, across the gap
    assert naive / 20 > 100


def test_a_step_going_backwards_starts_a_segment() -> None:
    # restarted from an older checkpoint (step 600) after reaching 1000, same clock
    rows = [{"step": 100 * k, "timestamp": T0 + timedelta(seconds=5 * k)} for k in range(1, 11)]
    rows += [{"step": 600 + 100 * k, "timestamp": T0 + timedelta(seconds=70 + 5 * k)} for k in range(1, 5)]
    intervals = interval_rates(steps_frame(rows)).collect()
    assert intervals["segment"].to_list() == [0] * 10 + [1] * 4
    # steps 700..1000 logged twice: by different processes at different times, so not duplicates
    assert intervals.height == 14
    assert intervals.filter(pl.col("segment") == 1)["d_step"].to_list() == [None, 100, 100, 100]


def test_every_record_duplicated_at_error_severity_counts_once() -> None:
    clean_rows = two_processes(954_000)
    # the platform copies stdout to stderr at severity ERROR: another source, another line,
    # the same text; a second handler writes a structured copy with interval_s and a clock
    copies = [{**r, "source": "r.stderr", "entry_id": f"e{i}"} for i, r in enumerate(clean_rows)]
    structured = [
        {"step": r["step"], "interval_s": None, "timestamp": T0, "format": "structured", "source": "cloud"}
        for r in clean_rows
    ]
    clean = run_throughput(steps_frame(clean_rows)).row(0, named=True)
    doubled = run_throughput(steps_frame(clean_rows + copies + structured)).row(0, named=True)
    assert doubled["duplicates"] == 40  # 20 records, each merged with 2 copies
    for key in ("segments", "steady_intervals", "steady_global_steps_per_s", "mean_global_steps_per_s"):
        assert doubled[key] == clean[key]
    assert doubled["steady_ci_low"] == clean["steady_ci_low"]


def test_merged_copies_complete_each_other() -> None:
    rows = [
        {"step": 100, "elapsed_s": 5.0, "loss": 2.3},
        {"step": 100, "elapsed_s": None, "interval_s": 5.0, "timestamp": T0, "format": "estimator"},
    ]
    merged = merge_duplicates(steps_frame(rows)).collect().row(0, named=True)
    assert (merged["elapsed_s"], merged["interval_s"], merged["loss"], merged["copies"]) == (5.0, 5.0, 2.3, 2)
    assert merged["timestamp"] == T0


def test_leading_slow_intervals_are_warm_up_but_a_later_slow_one_is_not() -> None:
    # intervals (s per 100 steps): 30 (first: warm-up), 25, 12, then 5 x 8, then 12 again
    gaps = [30, 25, 12, 5, 5, 5, 5, 5, 5, 5, 5, 12]
    elapsed, rows = 0.0, []
    for k, gap in enumerate(gaps, start=1):
        elapsed += gap
        rows.append({"step": 100 * k, "elapsed_s": elapsed})
    intervals = interval_rates(steps_frame(rows)).collect()
    # run median of the non-first intervals: rates 4, 8.333, 20 x 8, 8.333 -> median 20;
    # half of it is 10: 4 and 8.333 lead the segment and are below 10 -> warm-up; the last
    # 8.333 is below 10 too but comes after steady intervals -> past warm-up, where the stall bound
    # leaves it out of the steady rate (12 s is 2.4x the median 5 s): 800 steps / 40 s = 20
    assert intervals["warmup"].to_list() == [True, True, True] + [False] * 9
    row = run_throughput(steps_frame(rows)).row(0, named=True)
    assert row["steady_intervals"] == 9
    assert row["steady_global_steps_per_s"] == pytest.approx(20.0)
    assert row["mean_global_steps_per_s"] == pytest.approx(900 / 52)  # 8 x 5 s + 12 s


def test_bootstrap_interval_is_seeded_and_brackets_the_median() -> None:
    rows, elapsed = [], 0.0
    for k, gap in enumerate([9, 5, 4, 6, 5, 5, 4, 6, 5, 5], start=1):
        elapsed += gap
        rows.append({"step": 100 * k, "elapsed_s": elapsed})
    a = run_throughput(steps_frame(rows), seed=1).row(0, named=True)
    b = run_throughput(steps_frame(rows), seed=1).row(0, named=True)
    assert a == b
    # rates 20, 25, 16.67, 20, 20, 25, 16.67, 20, 20 over 100 steps each: 5, 4, 6, 5, 5, 4, 6, 5, 5 s, within
    # 0.8x-1.2x of the median 5 s (all kept): 900 / 45 s = 20; resampled rates lie between the smallest and
    # the largest value
    assert a["steady_global_steps_per_s"] == pytest.approx(20.0)
    assert 100 / 6 <= a["steady_ci_low"] <= 20.0 <= a["steady_ci_high"] <= 25.0
    # one steady interval: no interval at all rather than a zero-width one
    single = run_throughput(steps_frame(rows[:2])).row(0, named=True)
    assert single["steady_ci_low"] is None and single["steady_global_steps_per_s"] == pytest.approx(20.0)
    # startup: first steady record step 200 at 14 s; 200 / 20 = 10 s at the steady pace -> 4 s lost
    assert a["startup_s"] == pytest.approx(4.0)


def test_records_that_state_their_rate_but_no_time_stay_in_one_segment() -> None:
    # A log of `(S sec/step)` or `global_step/sec: X` lines with no clock (case11, case15):
    # each record is its own interval rate. Rates 2, 4, 4, 5 steps/s: the first is warm-up; the
    # other three, 100 steps each, within the bound (0.25, 0.25, 0.2 s a step: 0.8x the median):
    # steady 300 / (25 + 25 + 20 s) = 4.2857; one segment, no restart.
    rows = [{"step": 100 * (k + 1), "global_steps_per_s": r} for k, r in enumerate((2.0, 4.0, 4.0, 5.0))]
    got = run_throughput(steps_frame(rows)).row(0, named=True)
    assert (got["segments"], got["restarts"]) == (1, 0)
    assert got["steady_global_steps_per_s"] == pytest.approx(300 / 70)
    # No step gains over known time: no overall rate is made up.
    assert got["mean_global_steps_per_s"] is None


def test_step_less_records_are_not_merged_as_copies_of_one_record() -> None:
    # TPUEstimator's `global_step/sec: X` lines carry no step (step null, position = line):
    # three lines are three records. Rates 1.0, 0.9, 1.1 a second apart: warm-up 1.0, steady 0.9 steps in 1 s
    # and 1.1 in 1 s (step times 1.11 s and 0.91 s, within the bound of their median): 2 / 2 s = 1.0.
    rows = [
        {"step": None, "position": 4 * k + 1, "global_steps_per_s": r, "timestamp": T0 + timedelta(seconds=k)}
        for k, r in enumerate((1.0, 0.9, 1.1))
    ]
    got = run_throughput(steps_frame(rows)).row(0, named=True)
    assert (got["records"], got["duplicates"], got["segments"]) == (3, 0, 1)
    assert got["steady_global_steps_per_s"] == pytest.approx(1.0)
    assert got["mean_global_steps_per_s"] is None
