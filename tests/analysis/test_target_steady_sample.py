"""The loss chart places a record beyond its lead task's records at the run's steady rate: taken from the
summary's steady sample where that sample holds the intervals the chart would read, else read from them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest
from typer.testing import CliRunner

from tests.support import SHARED
from tierscope.analysis.batches import interval_figures
from tierscope.analysis.bootstrap import SteadyRates
from tierscope.analysis.target import METRICS, TargetPass, _steady_rate
from tierscope.cli import app
from tierscope.dataset.store import Dataset

CASE05 = SHARED / "cases" / "inputs" / "case05.log"


def _intervals(warmup: list[bool]) -> pl.DataFrame:
    """One run's intervals of 100 global steps each at 20 global steps/s (5 s each)."""
    n = len(warmup)
    return pl.DataFrame(
        {
            "run_id": ["r"] * n,
            "warmup": warmup,
            "rate": [20.0] * n,
            "d_step": [100] * n,
            "d_seconds": [5.0] * n,
        }
    )


def test_the_sample_is_taken_where_it_holds_as_many_intervals() -> None:
    run = _intervals([True, False, False, False])
    # Three steady intervals of 20 global steps/s over equal steps: the rate is 20 (equal rates give it to the bit).
    assert _steady_rate(run) == 20.0
    # A sample of three intervals is those three (the summary's sample is these less any holding a pause):
    # its rate is the answer, here a made-up 50 that shows which was read.
    assert _steady_rate(run, SteadyRates(np.array([50.0, 50.0, 50.0]), None)) == 50.0
    # A sample of one is not (two held a pause): the three are read, 20.
    assert _steady_rate(run, SteadyRates(np.array([50.0]), None)) == 20.0
    # A run wholly in warm-up has no steady interval to read, whatever its sample (its first ones): none.
    assert _steady_rate(_intervals([True, True]), SteadyRates(np.array([50.0]), None)) is None


def _points(dataset: Dataset, samples: bool) -> tuple[pl.DataFrame, dict[str, SteadyRates]]:
    """The loss chart's points of every run, the runs' steady rates taken from their samples or not; the samples."""
    steps = dataset.scan("steps")
    runs = sorted(set(steps.select("run_id").collect()["run_id"]))
    known: dict[str, SteadyRates] = {}
    gather = TargetPass(steps, None, {}, runs, None, known if samples else None)
    interval_figures(steps, extra=METRICS, visit=gather.add, samples=known)
    return gather.series().points, known


def test_the_loss_chart_of_the_2016_runs_is_the_same_either_way(dataset_2016: Dataset) -> None:
    (with_samples, _), (without, _) = _points(dataset_2016, True), _points(dataset_2016, False)
    assert with_samples.height > 0
    assert with_samples.equals(without)


def test_case05_rate_is_read_from_the_intervals_its_sample_leaves_out(tmp_path: Path) -> None:
    if not CASE05.exists():
        pytest.skip(f"{CASE05} is absent (the real excerpts live in ../shared/cases beside the repository)")
    dataset = tmp_path / "ds"
    got = CliRunner().invoke(app, ["collect", "files", str(CASE05), "--run-id", "case05", "-d", str(dataset), "-q"])
    assert got.exit_code == 0, got.output
    seen: list[pl.DataFrame] = []
    known: dict[str, SteadyRates] = {}
    collected = Dataset(dataset)  # held while its scan is read: the scan reads the files it pins
    interval_figures(collected.scan("steps"), extra=METRICS, visit=seen.append, samples=known)
    # Steady intervals 1 -> 118, 118 -> 237 (each holding an evaluation) and 237 -> 327: the summary's sample is
    # the one without (59.8 global steps/s, tests/analysis/test_steady_evaluations.py), the chart's rate all
    # three's: 326 steps in 9.229 s = 35.3 (that test's "before"). The sample is not taken.
    assert known["case05"].size == 1
    assert known["case05"].steady() == pytest.approx(59.8, abs=0.05)
    assert _steady_rate(seen[0], known["case05"]) == _steady_rate(seen[0]) == pytest.approx(35.3, abs=0.05)
