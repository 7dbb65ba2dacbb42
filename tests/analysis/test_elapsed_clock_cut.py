"""A run's elapsed clock that is cut or cannot be: elapsed times that start again at a restart are a clock cut
(summary's ``clock_missing`` says so, and recommend's note with it), not "no clock"; an elapsed time no process
can have run (``elapsed_time: 1e23``) is left out with a note, never read as a restart
(tierscope.analysis.clock.impossible_elapsed, tierscope.analysis.throughput.ordered_records)."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from tierscope.analysis.analyze import analyze
from tierscope.analysis.clock import CLOCK_MISSING, lead_clock
from tierscope.analysis.options import AnalysisOptions
from tierscope.collector.collect import collect_runs, runs_from_paths
from tierscope.dataset.store import Dataset


def _collect(tmp_path: Path, run: str, records: list[dict[str, float]]) -> Dataset:
    log = tmp_path / f"{run}.log"
    log.write_text("".join(json.dumps(r) + "\n" for r in records))
    ds = Dataset(tmp_path / "ds")
    collect_runs(ds, runs_from_paths([log], run, None, None))
    return ds


def _row(ds: Dataset) -> dict[str, object]:
    (row,) = analyze(ds, AnalysisOptions()).summary.to_dicts()
    return row


# 100 steps every 20 s: steps 100 ... 1000 at 20 ... 200 s (5 global steps/s)
STEADY_RECORDS = [{"step": 100 * i, "elapsed_time": 20.0 * i} for i in range(1, 11)]


def test_elapsed_times_that_start_again_at_a_restart_are_a_clock_cut(tmp_path: Path) -> None:
    # then a resume from step 600: its process' clock starts again (700 at 30 s, ..., 1100 at 110 s)
    resumed = [{"step": 600 + 100 * i, "elapsed_time": 10.0 + 20.0 * i} for i in range(1, 6)]
    row = _row(_collect(tmp_path, "resumed", STEADY_RECORDS + resumed))
    assert (row["restarts"], row["segments"]) == (1, 2)
    # no timestamp joins the two attempts: no lifetime, so no sustained rate; the plan is on the steady 5.0
    assert row["lifetime_s"] is None and row["sustained_global_steps_per_s"] is None
    assert row["steady_global_steps_per_s"] == pytest.approx(5.0)  # 100 steps / 20 s in every steady interval
    assert row["clock_missing"] == "restarted"
    assert CLOCK_MISSING["restarted"] == (
        "its elapsed times start again at its restarts and no timestamp joins its attempts: the time between "
        "them is unknown"
    )


def test_one_attempt_on_its_elapsed_clock_has_one(tmp_path: Path) -> None:
    # the near miss: the same clock never cut is the run's clock (elapsed): 900 steps over 200 - 20 s = 5.0
    row = _row(_collect(tmp_path, "whole", STEADY_RECORDS))
    assert row["goodput_clock"] == "elapsed" and row["clock_missing"] is None
    assert row["sustained_global_steps_per_s"] == pytest.approx(5.0)


def test_elapsed_times_on_part_of_the_records_are_said() -> None:
    # lead records: 3 with an elapsed time, 2 without, one segment, no timestamp: 3 of 5
    lead = pl.DataFrame(
        {
            "timestamp": pl.Series([None] * 5, dtype=pl.Datetime("us", "UTC")),
            "elapsed_s": [10.0, 20.0, 30.0, None, None],
            "segment": pl.Series([0] * 5, dtype=pl.UInt32),
        }
    )
    clock = lead_clock(lead, None, None)
    assert (clock.name, clock.missing) == (None, "partial")
    # the near miss: no elapsed time on any record is no clock at all
    assert lead_clock(lead.with_columns(elapsed_s=pl.lit(None, pl.Float64)), None, None).missing == "none"


def test_an_elapsed_time_no_run_can_have_is_left_out_not_a_restart(tmp_path: Path) -> None:
    # `elapsed_time: 1e23` (3e15 years) between steps 500 and 600: read as a time, step 600's 120 s "went back"
    # and cut a restart there (and the mean rate was 0.000: 900 steps over 1e23 s)
    records = [*STEADY_RECORDS[:5], {"step": 550, "elapsed_time": 1e23}, *STEADY_RECORDS[5:]]
    ds = _collect(tmp_path, "absurd", records)
    analysis = analyze(ds, AnalysisOptions())
    (row,) = analysis.summary.to_dicts()
    assert (row["restarts"], row["segments"]) == (0, 1)
    # the record is left out: 500 -> 600 is one interval of 100 steps in 20 s; the rates are 5.0 throughout
    assert row["steady_global_steps_per_s"] == pytest.approx(5.0)
    assert row["mean_global_steps_per_s"] == pytest.approx(5.0)  # (1000 - 100) / (200 - 20 s)
    assert (
        "absurd",
        # 1,000 years x 365.25 days x 86,400 s = 31,557,600,000 s, printed whole (it read 3.156e+10)
        "1 record stating an elapsed time of 1e+23 s, beyond any run's length (over 31,557,600,000 s, 1,000 years): "
        "left out of its rates, not read as a restart",
    ) in analysis.notes


def test_a_unix_time_read_as_elapsed_seconds_is_still_a_clock(tmp_path: Path) -> None:
    # the near miss: 1.7e9 s (54 years) is within 1,000 years: its differences time the steps (100 / 20 s = 5.0)
    records = [{"step": 100 * i, "elapsed_time": 1.7e9 + 20.0 * i} for i in range(1, 11)]
    ds = _collect(tmp_path, "unix", records)
    analysis = analyze(ds, AnalysisOptions())
    (row,) = analysis.summary.to_dicts()
    assert (row["restarts"], row["segments"]) == (0, 1)
    assert row["steady_global_steps_per_s"] == pytest.approx(5.0)
    assert not [note for run, note in analysis.notes if "beyond any run's length" in note]
