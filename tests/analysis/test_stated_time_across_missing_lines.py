"""A record that states its time since the program's previous line (``interval_s``: an Estimator hook's ``(60.000
sec)``) and no rate, logged after lines the file lacks (an excerpt, a lost page, a line read aside as a reject):
the stated seconds are the program's last interval only, while the step gain is the file's. Where the file's own
clock (its stamps) spans well over the stated seconds and the step gain is well over the one before, lines are
missing, and the clock times the gain (tierscope.analysis.throughput's ``_clock_seconds``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.cli_helpers import collect_and_summarize
from tierscope.analysis.steady_sql import steady_state_query


def _glog(path: Path, every_s: int, lost: int | None) -> None:
    """Estimator's hook lines under absl's glog header (tensorflow/python/training/basic_session_run_hooks.py's
    ``loss = %s, step = %s (%.3f sec)``): steps 100..1000 every ``every_s`` s by the stamps, each after the first
    stating 60.000 sec; the line of step ``lost`` left out (None: none)."""
    lines = []
    for k, step in enumerate(range(100, 1001, 100)):
        if step == lost:
            continue
        t = 600 + k * every_s
        stated = " (60.000 sec)" if k else ""
        head = f"I1105 10:{t // 60:02d}:{t % 60:02d}.000000 140 basic_session_run_hooks.py:260]"
        lines.append(f"{head} loss = 0.5, step = {step}{stated}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _row(tmp_path: Path, every_s: int, lost: int | None) -> dict[str, object]:
    log = tmp_path / "est.log"
    _glog(log, every_s, lost)
    row, _ = collect_and_summarize(log, tmp_path / "ds")
    return row


def test_the_clock_times_the_steps_gained_across_a_lost_line(tmp_path: Path) -> None:
    # step 600's line lost: 500 (10:14:00) -> 700 (10:16:00) is 200 steps over 120 s by the stamps, and 700 states
    # 60 s (its hook's last 100 steps). Taken as 200 steps in 60 s, that interval read 3.33 steps/s and the mean
    # (and steady) rate was 900 steps / (7 x 60 + 60 s) = 1.875; by the stamps it is 900 / 540 = 1.667, the
    # 100 / 60 every interval ran at.
    row = _row(tmp_path, every_s=60, lost=600)
    assert row["records"] == 9
    assert row["steady_global_steps_per_s"] == pytest.approx(100 / 60)
    assert row["mean_global_steps_per_s"] == pytest.approx(100 / 60)


def test_a_clock_longer_than_the_stated_time_at_an_even_gain_keeps_the_stated_time(tmp_path: Path) -> None:
    # near miss: stamps 90 s apart (the line printed 30 s after its hook timed it, each time) and every gain 100
    # steps: nothing is missing, the stated 60 s time each interval: 100 / 60 = 1.667 steps/s
    row = _row(tmp_path, every_s=90, lost=None)
    assert row["records"] == 10
    assert row["steady_global_steps_per_s"] == pytest.approx(100 / 60)
    assert row["mean_global_steps_per_s"] == pytest.approx(100 / 60)


def test_the_steady_state_query_times_the_gain_alike(tmp_path: Path) -> None:
    # the query BigQuery runs (analysis.steady_sql) follows the same rule: 100 / 60 = 1.667 steps/s
    duckdb = pytest.importorskip("duckdb", reason="duckdb is a test dependency (pip install '.[test]')")
    _row(tmp_path, every_s=60, lost=600)
    steps = f"read_parquet('{tmp_path / 'ds'}/steps/*/part-*.parquet', hive_partitioning = true)"
    ((run, rate, _),) = duckdb.sql(steady_state_query(steps, "duckdb")).fetchall()
    assert (run, rate) == ("est", pytest.approx(100 / 60))
