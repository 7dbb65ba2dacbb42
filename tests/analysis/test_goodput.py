"""Issue 12, goodput per run: buckets against a generated run whose every second is known."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import polars as pl
import pytest
from typer.testing import CliRunner

from tierscope.analysis import analyze
from tierscope.cli import app
from tierscope.dataset.schema import EVENT_SCHEMA, RUN_SCHEMA, STEP_SCHEMA, conform
from tierscope.dataset.store import Dataset

T0 = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
RATE = 5.0  # global steps/s, logging every 100 steps: 20 s an interval


def _generated(root) -> Dataset:
    """A job of known time: start-up 30 s; steps 100..2000 logged every 20 s, the intervals ending at
    steps 800 and 1400 held up 10 s each by a checkpoint save; the process dies after step 2000
    (t = 30 + 20 x 20 + 2 x 10 = 450 s) and comes back 60 s later from the checkpoint at step 1500,
    500 steps back; it logs 1600..3000 (t = 450 + 60 + 20 = 530 s .. 530 + 14 x 20 = 810 s) and ends 20 s
    after its last record (830 s)."""
    rows, t = [], 30.0  # (step, seconds since the job started, seconds since the process started)
    for step in range(100, 2001, 100):
        t += 20 + (10 if step in (800, 1400) else 0)
        rows.append((step, t, t))
    t += 60
    for step in range(1600, 3001, 100):
        t += 20
        rows.append((step, t, t - 470))  # the second process started at 470 s
    steps = pl.DataFrame(
        [{"run_id": "job", "tier": "CUSTOM", "role": "master", "task_index": 0, "step": s,
          "timestamp": T0 + timedelta(seconds=at), "elapsed_s": elapsed, "source": "job.log",
          "source_offset": i + 1, "format": "json"}
         for i, (s, at, elapsed) in enumerate(rows)]
    )  # fmt: skip
    events = pl.DataFrame(
        [{"run_id": "job", "event": e, "timestamp": T0 + timedelta(seconds=at), "source": "job.log",
          "source_offset": o} for e, at, o in (("started", 0, 0), ("finished", 830, 99))]
    )  # fmt: skip
    dataset = Dataset(root)
    dataset.append("steps", conform(steps, STEP_SCHEMA))
    dataset.append("events", conform(events, EVENT_SCHEMA))
    dataset.append("runs", conform(pl.DataFrame([{"run_id": "job", "tier": "CUSTOM", "collected_at": T0}]), RUN_SCHEMA))
    return dataset


def test_buckets_of_a_generated_run_by_hand(tmp_path) -> None:
    row = analyze(_generated(tmp_path / "ds")).summary.row(0, named=True)
    assert row["steady_global_steps_per_s"] == pytest.approx(RATE)
    assert row["lifetime_s"] == pytest.approx(830, abs=1)
    assert row["badput_startup_s"] == pytest.approx(30, abs=1)  # 50 s to step 100, of which 100 / 5 = 20 s work
    assert row["badput_warmup_s"] == pytest.approx(0, abs=1)
    assert row["stalls"] == 2 and row["badput_stalls_s"] == pytest.approx(20, abs=1)  # 30 s - 20 s, twice
    # between step 2000 (450 s) and step 1600 (530 s): 80 s, less the 100 steps from 1500 at 5/s (20 s)
    assert row["badput_restarts_s"] == pytest.approx(60, abs=1)
    assert row["badput_wasted_s"] == pytest.approx(100, abs=1)  # 2000 - 1500 = 500 steps again, at 5 steps/s
    assert row["badput_tail_s"] == pytest.approx(20, abs=1)
    # productive: 3000 distinct steps at 5 steps/s = 600 s = 830 - 30 - 20 - 60 - 100 - 20
    assert row["productive_s"] == pytest.approx(600, abs=1)
    assert row["goodput"] == pytest.approx(600 / 830, abs=0.005)  # 72.3 %
    assert row["badput_wasted_share"] == pytest.approx(100 / 830, abs=0.002)
    assert row["goodput_unobserved"] is None and row["goodput_clock"] == "timestamp"


def test_the_2016_logs_cannot_show_a_tail_and_say_so(dataset_2016: Dataset) -> None:
    rows = {r["run_id"]: r for r in analyze(dataset_2016).summary.iter_rows(named=True)}
    basic = rows["basic"]
    # cloudml lines: elapsed_s since the task started, no end event: the tail is not observable (null, not 0)
    assert basic["badput_tail_s"] is None and basic["goodput_unobserved"] == "tail"
    assert basic["goodput_clock"] == "elapsed" and basic["badput_restarts_s"] == 0.0
    assert rows["premium_1"]["goodput"] is None  # no step at all
    # no dollar price in 2016: no price per productive step either
    assert basic["price_per_1000_productive_steps"] is None


def test_summary_json_has_the_goodput_columns_and_the_price_per_productive_step(tmp_path) -> None:
    ds = _generated(tmp_path / "ds")
    ds.append("runs", conform(pl.DataFrame([{"run_id": "job", "tier": "BASIC", "collected_at": T0 + timedelta(1)}]),
                              RUN_SCHEMA))  # fmt: skip
    result = CliRunner().invoke(app, ["summary", "-d", str(ds.root), "--json", "--price-date", "2019-12-01"])
    assert result.exit_code == 0, result.output
    (row,) = json.loads(result.output)
    for key in ("goodput", "lifetime_s", "badput_startup_s", "badput_tail_share", "price_per_1000_productive_steps"):
        assert key in row
    # BASIC on 2019-12-01: USD per 1,000 steps / goodput (600 / 830)
    assert row["price_per_1000_productive_steps"] == pytest.approx(row["usd_per_1000_steps"] / (600 / 830), rel=0.01)
