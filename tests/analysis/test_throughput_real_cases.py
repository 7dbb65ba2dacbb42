"""Rates and start-up on real excerpts (../shared/cases) where the step sequence or the intervals are uneven:
case08 (Estimator lines missing between steps 201 and 801), case22 (a worker's steps 1, 2, 3, 52 by timestamps,
no chief in the log); and the rules behind them on built records (lines missing, mixed interval lengths)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
from typer.testing import CliRunner

from tests.support import SHARED
from tierscope.analysis.bootstrap import SteadyRates, median_draws, steady_rates, weighted_median
from tierscope.analysis.throughput import interval_rates, run_throughput
from tierscope.cli import app
from tierscope.dataset.schema import STEP_SCHEMA, conform

runner = CliRunner()
CASES = SHARED / "cases" / "inputs"


def _case(tmp_path: Path, case: str, name: str) -> dict[str, Any]:
    """``summary --json``'s row of the real excerpt ``name`` collected as run ``case``."""
    log = CASES / name
    if not log.exists():
        pytest.skip(f"{log} is absent (the real excerpts live in ../shared/cases beside the repository)")
    dataset = tmp_path / "ds"
    got = runner.invoke(app, ["collect", "files", str(log), "--run-id", case, "-d", str(dataset), "--quiet"])
    assert got.exit_code == 0, got.output
    shown = runner.invoke(app, ["summary", "-d", str(dataset), "--json"])
    assert shown.exit_code == 0, shown.output
    return {r["run_id"]: r for r in json.loads(shown.stdout)}[case]


def test_case08_the_interval_across_missing_lines_is_timed_over_its_own_100_steps(tmp_path: Path) -> None:
    row = _case(tmp_path, "case08", "case08.log")
    # Records: step 101 (6.63042 global_step/sec, 8.626 sec: warm-up), 201 (12.2695, 8.150 s), 801 (12.399,
    # 8.065 s: the file lacks 301..701; the hook's 8.065 s are since its line at 701), and a step-less
    # 12.348. 801's own figures cover 12.399 x 8.065 = 99.998 -> 100 steps, not the file's 600 (6 > 1.5x).
    # Mean = (100 + 100) / (8.150 + 8.065) = 200 / 16.215 = 12.3343 (was 700 / 16.215 = 43.17).
    assert row["mean_global_steps_per_s"] == pytest.approx(200 / 16.215, rel=1e-9)
    assert row["mean_global_steps_per_s"] == pytest.approx(12.3343, abs=1e-4)
    # Steady: the lengths are alike (8.150 s, 8.065 s, the step-less one counted as their median 8.1075 s):
    # the plain median of 12.2695, 12.399, 12.348 = 12.348, as before. No restart: one segment.
    assert row["steady_global_steps_per_s"] == pytest.approx(12.348)
    assert (row["segments"], row["restarts"], row["records"]) == (1, 0, 4)


def test_case22_steady_is_the_median_over_time_and_startup_is_on_the_workers_clock(tmp_path: Path) -> None:
    row = _case(tmp_path, "case22", "case22.log")
    # Worker 2's records (global step at unix time): 0 @ .659784, 2 @ .680242, 8 @ .693580, 201 @ 1.224505
    # (+1514344770). Intervals: 2 / 0.020458 s = 97.761 (warm-up: below half the median 363.5), 6 / 0.013338 s
    # = 449.843, 193 / 0.530925 s = 363.517. The steady two are 0.013 s and 0.531 s long (39.8x > 10x: mixed), so the
    # median is weighted by seconds: half of 0.544263 s is 0.272 s, and 363.517 alone covers 0.531 s of it:
    # steady = 193 / 0.530925 = 363.5165 (the notes' 363.5; the plain median, halfway, was 406.68).
    assert row["steady_global_steps_per_s"] == pytest.approx(193 / 0.530925, rel=1e-6)
    assert row["steady_global_steps_per_s"] == pytest.approx(363.5165, abs=1e-4)
    # Mean, pooled: (6 + 193) / (0.013338 + 0.530925) = 199 / 0.544263 = 365.632 (unchanged).
    assert row["mean_global_steps_per_s"] == pytest.approx(199 / 0.544263, rel=1e-6)
    # Start-up on the lead's (the one worker's) clock from 'Training begins @ 1514344761.687888': its first
    # steady record, step 8, at 1514344770.693580 - 1514344761.687888 = 9.005692 s, less 8 / 363.5165 =
    # 0.022007 s: 8.983685 s (was null: the worker logs no elapsed_s).
    assert row["startup_s"] == pytest.approx(9.005692 - 8 / (193 / 0.530925), abs=1e-5)
    assert row["startup_s"] == pytest.approx(8.98369, abs=1e-5)


def _records(steps: list[int | None], seconds: list[float | None], rates: list[float | None]) -> pl.LazyFrame:
    n = len(steps)
    frame = pl.DataFrame({
        "run_id": ["r"] * n, "role": ["master"] * n, "task_index": [0] * n, "step": steps,
        "interval_s": seconds, "global_steps_per_s": rates, "source": ["/l.log"] * n,
        "source_offset": list(range(n)), "format": ["estimator"] * n,
    })  # fmt: skip
    return conform(frame, STEP_SCHEMA).lazy()


def test_lines_missing_between_records_of_any_format_keep_the_programs_own_interval() -> None:
    # Every 100 steps at 10 global steps/s (10.0 s each): 100, 200, then 1200 (lines 300..1100 missing:
    # 10x the interval, but 1000 / 10 s = 100 steps/s, exactly 10x the median rate: no resume), 1300.
    steps = _records([100, 200, 1200, 1300], [10.0, 10.0, 10.0, 10.0], [10.0, 10.0, 10.0, 10.0])
    rows = interval_rates(steps).collect()
    # 1200's own figures: 10 steps/s x 10.0 s = 100 steps (not 1000); the others' gains are 100 already.
    assert rows["d_step"].to_list() == [None, 100, 100, 100]
    # Mean: 300 steps / 30 s = 10.0 (1000 steps over 10 s would give 1200 / 30 = 40).
    assert run_throughput(steps)["mean_global_steps_per_s"][0] == pytest.approx(10.0)


def test_mixed_lengths_weigh_their_seconds_alike_ones_keep_the_plain_median() -> None:
    # 363.5 over 0.531 s and 449.8 over 0.013 s: 0.531 > 10 x 0.013, weighted: 363.5 covers over half the time.
    assert steady_rates(np.array([449.8, 363.5]), np.array([0.013, 0.531])).median() == 363.5
    # Within 10x of each other (41.06 s and 4.431 s, as the 2016 STANDARD_1 log): the plain median, (10 + 18) / 2.
    assert steady_rates(np.array([10.0, 18.0]), np.array([41.06, 4.431])).median() == 14.0
    # Equal weights give the plain median; exactly half the weight at or below a value: the mean with the next.
    assert weighted_median(np.array([3.0, 1.0, 2.0, 4.0]), np.ones(4)) == 2.5
    assert weighted_median(np.array([1.0, 2.0, 3.0]), np.array([1.0, 1.0, 2.0])) == 2.5
    # The bootstrap of a weighted sample resamples intervals with their weights: every draw's weighted median
    # is one of the two rates, 363.5 unless the resample holds 449.8 twice (1/4 of the draws).
    sample = SteadyRates(np.array([449.8, 363.5]), np.array([0.013, 0.531]))
    draws = median_draws(sample, "r", draws=2000)
    assert set(np.unique(draws)) <= {363.5, 449.8}
    assert np.mean(draws == 449.8) == pytest.approx(0.25, abs=0.03)
