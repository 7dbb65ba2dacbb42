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
from tierscope.analysis.bootstrap import SteadyRates, kept_shares, steady_draws, steady_rates
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
    # Steady: 100 steps at 12.2695, 100 at 12.399, and the step-less 12.348 of unknown length counted as
    # the median known one, 100 steps; step times within 1.01x of the median 1/12.348: all kept.
    # 300 / (100/12.2695 + 100/12.399 + 100/12.348) = 300 / (8.15029 + 8.06517 + 8.09848) = 12.3386
    # (the plain median was 12.348). No restart: one segment.
    assert row["steady_global_steps_per_s"] == pytest.approx(300 / (100 / 12.2695 + 100 / 12.399 + 100 / 12.348))
    assert row["steady_global_steps_per_s"] == pytest.approx(12.3386, abs=1e-4)
    assert (row["segments"], row["restarts"], row["records"]) == (1, 0, 4)


def test_case22_steady_is_its_steps_over_their_time_and_startup_is_on_the_workers_clock(tmp_path: Path) -> None:
    row = _case(tmp_path, "case22", "case22.log")
    # Worker 2's records (global step at unix time): 0 @ .659784, 2 @ .680242, 8 @ .693580, 201 @ 1.224505
    # (+1514344770). Intervals: 2 / 0.020458 s = 97.761 (warm-up: below half the median 406.68), 6 / 0.013338 s
    # = 449.843, 193 / 0.530925 s = 363.517. Step times 2.2230 ms and 2.7509 ms, median 2.4870 ms: 0.894x and
    # 1.106x, both within the bound, both kept. Steady = 199 steps / 0.544263 s = 365.632, the mean (the plain
    # median, halfway between 6 steps and 193, was 406.68; a steps-weighted median 363.517).
    assert row["steady_global_steps_per_s"] == pytest.approx(199 / 0.544263, rel=1e-6)
    assert row["steady_global_steps_per_s"] == pytest.approx(365.632, abs=1e-3)
    # Mean, pooled: (6 + 193) / (0.013338 + 0.530925) = 199 / 0.544263 = 365.632 (unchanged).
    assert row["mean_global_steps_per_s"] == pytest.approx(199 / 0.544263, rel=1e-6)
    # Start-up on the lead's (the one worker's) clock from 'Training begins @ 1514344761.687888': its first
    # steady record, step 8, at 1514344770.693580 - 1514344761.687888 = 9.005692 s, less 8 / 365.632 =
    # 0.021880 s: 8.983812 s (was null: the worker logs no elapsed_s).
    assert row["startup_s"] == pytest.approx(9.005692 - 8 / (199 / 0.544263), abs=1e-5)
    assert row["startup_s"] == pytest.approx(8.98381, abs=1e-5)


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


def test_the_steady_rate_is_the_kept_intervals_steps_over_their_time() -> None:
    # case22's two steady intervals: 6 steps at 449.8 and 193 at 363.5, both within the bound (step times
    # 2.2232 ms and 2.7510 ms about their median 2.4871 ms: 0.894x, 1.106x): 199 / (6/449.8 + 193/363.5).
    assert steady_rates(np.array([449.8, 363.5]), np.array([6.0, 193.0])).steady() == pytest.approx(
        199 / (6 / 449.8 + 193 / 363.5), rel=1e-12
    )
    # Equal lengths keep no weights: the harmonic mean, 3 / (1/10 + 1/10 + 1/12) = 10.5882.
    alike = steady_rates(np.array([10.0, 10.0, 12.0]), np.array([100.0, 100.0, 100.0]))
    assert alike.weights is None
    assert alike.steady() == pytest.approx(3 / (1 / 10 + 1 / 10 + 1 / 12), rel=1e-12)
    # A stall: 5 steps/s among 10s is a step time 2x the median 0.1 s: left out (10.0, 0 of it kept).
    stalled = steady_rates(np.array([10.0, 10.0, 10.0, 5.0]), np.ones(4))
    assert stalled.steady() == pytest.approx(10.0) and stalled.stalls() == 1
    # The taper: 1/8 s a step is 1.25x the median 0.1 s (kept whole), 1/(10/1.375) s is 1.375x (half kept),
    # 1/6 s is 1.667x (none). A fast interval is no stall: 20 steps/s (0.5x) is kept whole.
    shares = kept_shares(np.array([10.0, 10.0, 10.0, 8.0, 10 / 1.375, 6.0, 20.0]))
    assert shares == pytest.approx([1, 1, 1, 1, 0.5, 0, 1])
    # The bootstrap resamples intervals with their steps: a draw is one of the rates alone (a resample
    # of one interval twice: 1/2 of the draws) or the rate of both, 365.46 (1/2).
    sample = SteadyRates(np.array([449.8, 363.5]), np.array([6.0, 193.0]))
    draws = steady_draws(sample, "r", draws=2000)
    both = 199 / (6 / 449.8 + 193 / 363.5)
    assert np.allclose(np.unique(draws), sorted([363.5, both, 449.8]))
    assert np.mean(np.isclose(draws, both)) == pytest.approx(0.5, abs=0.04)
