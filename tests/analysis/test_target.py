"""Time to a target loss or accuracy: generated runs whose every second is known, and the 2016 logs."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from typer.testing import CliRunner

from tests.analysis.test_summary_2016 import STANDARD_1
from tierscope.analysis import analyze
from tierscope.analysis.options import AnalysisOptions
from tierscope.analysis.target import HOLD_RECORDS, Target, TargetError, at_steps, reached_at, target_of
from tierscope.cli import app
from tierscope.dataset.schema import EVENT_SCHEMA, RUN_SCHEMA, STEP_SCHEMA, conform
from tierscope.dataset.store import Dataset

T0 = datetime(2019, 12, 1, 12, 0, tzinfo=UTC)


def _row(run: str, role: str, index: int, step: int, i: int, **values: object) -> dict[str, object]:
    return {"run_id": run, "tier": "BASIC", "role": role, "task_index": index, "step": step,
            "source": f"{run}-{role}{index}.log", "source_offset": i, "format": "json", **values}  # fmt: skip


def _job_loss(step: int) -> float:
    """1000 / step, but a lucky batch at step 500 (0.1) and two at steps 800 and 900 (0.5)."""
    return {500: 0.1, 800: 0.5, 900: 0.5}.get(step, 1000 / step)


def _generated(root: Path) -> Dataset:
    """Four runs (tier BASIC on 2019-12-01: 0.3878 ML units/h x 0.49 USD = 0.190022 USD/h).

    - ``job``: started at T0; master/0 logs steps 100..2000 at 30 + step / 5 s (5 global steps/s after a 30 s
      start-up), dies, and 60 s later resumes from step 1500: steps 1600..3000 at 490 + 20 s per 100 steps
      (step 2500 at 690 s). Training loss :func:`_job_loss` on every record; an evaluator logs eval_accuracy
      0.80, 0.91, 0.95 at steps 1000, 2000, 3000 with no clock at all.
    - ``late``: no timestamps (the 2016 style). master/0 logs steps 100..1000 at elapsed 10 + step / 10 s and
      no loss; worker/0 started 10 s after it and logs steps 150..1050 at its own elapsed step / 10 s, with
      loss 1.0 below step 650 and 0.1 from there.
    - ``noloss``: master/0 logs steps and timestamps, no metric.
    - ``noclock``: master/0 logs steps 100..500 and 5 global steps/s, no time, loss 0.1.
    """
    rows, i = [], 0
    for step in range(100, 2001, 100):
        i += 1
        rows.append(_row("job", "master", 0, step, i, timestamp=T0 + timedelta(seconds=30 + step / 5),
                         elapsed_s=30 + step / 5, loss=_job_loss(step)))  # fmt: skip
    for k, step in enumerate(range(1600, 3001, 100), start=1):
        i += 1
        rows.append(_row("job", "master", 0, step, i, timestamp=T0 + timedelta(seconds=490 + 20 * k),
                         elapsed_s=20.0 * k + 20, loss=_job_loss(step)))  # fmt: skip
    for k, (step, acc) in enumerate(((1000, 0.80), (2000, 0.91), (3000, 0.95)), start=1):
        rows.append(_row("job", "evaluator", 0, step, k, eval_accuracy=acc, eval_loss=1 - acc))
    for k, step in enumerate(range(100, 1001, 100), start=1):
        rows.append(_row("late", "master", 0, step, k, elapsed_s=10 + step / 10))
    for k, step in enumerate(range(150, 1051, 100), start=1):
        rows.append(_row("late", "worker", 0, step, k, elapsed_s=step / 10, loss=1.0 if step < 650 else 0.1))
    for k, step in enumerate(range(100, 1001, 100), start=1):
        rows.append(_row("noloss", "master", 0, step, k, timestamp=T0 + timedelta(seconds=step / 5)))
    for k, step in enumerate(range(100, 501, 100), start=1):
        rows.append(_row("noclock", "master", 0, step, k, global_steps_per_s=5.0, loss=0.1))
    dataset = Dataset(root)
    dataset.append("steps", conform(pl.DataFrame(rows, infer_schema_length=None), STEP_SCHEMA))
    started = {"run_id": "job", "event": "started", "timestamp": T0, "source": "job.log", "source_offset": 0}
    dataset.append("events", conform(pl.DataFrame([started]), EVENT_SCHEMA))
    facts = [{"run_id": r, "tier": "BASIC", "date": date(2019, 12, 1), "collected_at": T0}
             for r in ("job", "late", "noloss", "noclock")]  # fmt: skip
    dataset.append("runs", conform(pl.DataFrame(facts), RUN_SCHEMA))
    return dataset


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Dataset:
    return _generated(tmp_path_factory.mktemp("target") / "ds")


def _rows(dataset: Dataset, **target: float) -> dict[str, dict]:
    summary = analyze(dataset, AnalysisOptions(**target)).summary
    return {r["run_id"]: r for r in summary.iter_rows(named=True)}


USD_PER_HOUR = 0.3878 * 0.49


def test_a_loss_target_by_hand(generated: Dataset) -> None:
    rows = _rows(generated, target_loss=0.6)
    job = rows["job"]
    # 1000 / step <= 0.6 from step 1667 on: 1700 (0.588), 1800, 1900 hold it; the lucky batch at 500 (0.1, one
    # record) and the two at 800 and 900 (0.5, 0.5, then 1000 / 1000 = 1.0) are never 3 in a row.
    assert HOLD_RECORDS == 3
    assert (job["target_status"], job["target_metric"], job["step_at_target"]) == ("reached", "loss", 1700)
    assert job["value_at_target"] == pytest.approx(1000 / 1700)
    assert job["time_to_target_s"] == pytest.approx(30 + 1700 / 5)  # 370 s since the started event
    assert job["cost_to_target"] == pytest.approx(370 / 3600 * USD_PER_HOUR)  # 0.019530 USD
    assert job["ml_unit_hours_to_target"] == pytest.approx(370 / 3600 * 0.3878)  # 0.039857 unit-h
    assert job["target_reason"] is None and job["target_value"] == 0.6
    # late: the worker's step 650 (its own elapsed 65 s, but it started 10 s after the master) is timed on the
    # master's clock: between its step 600 (70 s) and 700 (80 s): 75 s.
    late = rows["late"]
    assert (late["step_at_target"], late["time_to_target_s"]) == (650, pytest.approx(75.0))
    assert rows["noloss"]["target_status"] == "not_logged" and rows["noloss"]["time_to_target_s"] is None
    assert rows["noloss"]["target_reason"] == "no step record of a training task logs loss"
    # noclock: reached at its first record, but nothing says when
    noclock = rows["noclock"]
    assert (noclock["target_status"], noclock["step_at_target"], noclock["time_to_target_s"]) == ("no_time", 100, None)
    assert "no clock" in noclock["target_reason"]


def test_a_target_reached_after_a_restart_counts_the_whole_lifetime(generated: Dataset) -> None:
    job = _rows(generated, target_loss=0.41)["job"]
    # 1000 / step <= 0.41 from step 2439: 2500, in the second process, 10 intervals of 20 s after its resume at
    # 490 s: 690 s since the job started (restart and recomputed steps included: the job was billed for them)
    assert (job["step_at_target"], job["time_to_target_s"]) == (2500, pytest.approx(690.0))


def test_an_accuracy_target_reads_the_evaluations_first(generated: Dataset) -> None:
    rows = _rows(generated, target_accuracy=0.9)
    job = rows["job"]
    # eval_accuracy 0.91 at step 2000: one evaluation is enough; the evaluator has no clock, so it is timed at
    # the lead's first time at step 2000: 30 + 2000 / 5 = 430 s (not 510 s + ..., its second pass near it)
    assert (job["target_metric"], job["step_at_target"], job["value_at_target"]) == ("eval_accuracy", 2000, 0.91)
    assert job["time_to_target_s"] == pytest.approx(430.0)
    assert rows["late"]["target_status"] == "not_logged"  # no accuracy of any kind
    never = _rows(generated, target_accuracy=0.99)["job"]
    assert never["target_status"] == "not_reached" and never["time_to_target_s"] is None
    assert never["target_reason"] == "eval_accuracy never at or above 0.99 (best 0.95)"


def test_the_hold_rule_by_hand() -> None:
    loss = Target("loss", 1.0)
    # a lucky batch, then two at the target, then three: the first of the three
    values = np.array([2.0, 0.5, 2.0, 0.9, 0.9, 2.0, 1.0, 0.8, 0.7, 2.0])
    assert reached_at(values, loss, 3) == (6, "reached", 3)
    assert reached_at(values[:9][:8], loss, 3) == (None, "not_held", 2)  # ... 1.0, 0.8: the log ends
    assert reached_at(np.array([2.0, np.nan, 3.0]), loss, 1) == (None, "not_reached", 0)  # NaN never meets
    assert reached_at(np.array([0.5]), Target("accuracy", 0.5), 1) == (0, "reached", 1)


def test_times_beyond_the_lead_are_at_the_steady_rate() -> None:
    # the lead at steps 100 and 200 (10 s, 20 s), 10 steps/s: step 50 at 5 s, 150 at 15 s, 300 at 30 s
    got = at_steps(np.array([50.0, 150.0, 300.0]), np.array([100.0, 200.0]), np.array([10.0, 20.0]), 10.0)
    assert got == pytest.approx([5.0, 15.0, 30.0])
    assert np.isnan(at_steps(np.array([300.0]), np.array([100.0]), np.array([10.0]), None)).all()


def test_one_target_at_a_time() -> None:
    with pytest.raises(TargetError, match="not both"):
        target_of(0.5, 0.9)
    assert target_of(None, None) is None and target_of(None, 0.9) == Target("accuracy", 0.9)


def test_the_2016_logs_by_hand(dataset_2016: Dataset) -> None:
    rows = _rows(dataset_2016, target_loss=2.0)
    # local (one process, its elapsed_s the job's clock): loss 2.346 2.125 2.139 1.965 2.054 | 1.987 1.866 1.998
    # 1.930 2.075 at steps 100..1000: <= 2.0 at 400 alone, then 600, 700, 800 in a row: step 600, 36.647 s.
    local = rows["local"]
    assert (local["step_at_target"], local["time_to_target_s"]) == (600, pytest.approx(36.647))
    assert local["cost_to_target"] is None and local["ml_unit_hours_to_target"] is None  # own hardware
    # basic: 2.314 2.129 2.148 1.952 2.069 1.990 1.858 2.006 1.948 2.042: at most 2 in a row (600, 700)
    assert rows["basic"]["target_status"] == "not_held"
    assert rows["basic"]["target_reason"] == "loss at or below 2 in 4 of 10 records, never 3 in a row (at most 2)"
    # standard_1, every task's records by global step: 2.439 2.319 2.049 2.050 2.069 (100-500, workers) 2.140 (700,
    # master) 1.948 1.888 1.967 (800-1000, workers): step 800. Only master/0 (the lead) logs the job's clock: step
    # 700 at 45.261 s, so step 800 is 100 steps later at the steady 22.3894 steps/s (tests/analysis/
    # test_summary_2016.py): 45.261 + 4.4664 = 49.727 s; x 10 ML units/h (STANDARD_1, 2016): 0.13813 unit-h.
    # 4.8x the steps/s of basic, yet slower to the target
    # than the laptop: the asynchronous workers need 800 global steps where one process needs 600.
    std = rows["standard_1"]
    assert std["step_at_target"] == 800
    assert std["time_to_target_s"] == pytest.approx(45.261 + 100 / STANDARD_1, abs=1e-3)
    assert std["ml_unit_hours_to_target"] == pytest.approx(49.7274 / 3600 * 10, abs=1e-5)
    assert rows["premium_1"]["target_status"] == "not_logged"  # it never ran
    # accuracy (of training batches: the 2016 logs have Train lines only, no Eval blocks). standard_1 by global
    # step: 0.093 0.290 0.247 0.220 0.243 0.247 0.267 0.267 0.257 (100-500, 700-1000): >= 0.25 at 200 alone, then
    # 800, 900, 1000: step 800. local and basic end on two records at or above it (900, 1000): not held.
    acc = _rows(dataset_2016, target_accuracy=0.25)
    assert (acc["standard_1"]["target_metric"], acc["standard_1"]["step_at_target"]) == ("accuracy", 800)
    assert acc["local"]["target_status"] == acc["basic"]["target_status"] == "not_held"
    assert acc["basic"]["target_reason"].endswith("(the log ends)")


def test_the_cli_columns_and_table(dataset_2016: Dataset) -> None:
    runner = CliRunner()
    base = ["summary", "-d", str(dataset_2016.root)]
    doc = json.loads(runner.invoke(app, [*base, "--json", "--target-loss", "2"]).output)
    local = next(r for r in doc if r["run_id"] == "local")
    assert (local["step_at_target"], local["time_to_target_s"]) == (600, pytest.approx(36.647))
    assert {"time_to_target_s", "step_at_target", "cost_to_target", "target_status", "target_reason"} <= set(local)
    table = runner.invoke(app, [*base, "--target-loss", "2", "--wide"], env={"COLUMNS": "250"}).output
    assert "target loss <= 2" in table and "s to target" in table and "36.6" in table
    assert "run basic: loss at or below 2 in 4 of 10 records" in table
    plain = runner.invoke(app, [*base, "--wide"], env={"COLUMNS": "250"}).output
    assert "to target" not in plain.replace("USD to N", "")  # no target, no column
    both = runner.invoke(app, [*base, "--target-loss", "2", "--target-accuracy", "0.9"])
    assert both.exit_code == 2 and "give one of" in both.output


def test_evaluations_logged_as_events_count_for_an_accuracy_target(tmp_path: Path) -> None:
    # tierscope's trainer writes its held-out evaluation as an eval_end event (metrics in the detail),
    # not as a step record. Run "ev": master/0 logs steps 100..500 at 10 + step / 10 s after its started
    # event (training accuracy 0.5 throughout: never the target); eval_end at step 300 says 0.93 at 42 s.
    # One evaluation at the target is enough: reached at step 300, at 42 s; 0.9 from the training
    # accuracy alone would be not_held.
    rows = [_row("ev", "master", 0, s, k, timestamp=T0 + timedelta(seconds=10 + s / 10), elapsed_s=10 + s / 10,
                 loss=1.0, accuracy=0.5) for k, s in enumerate(range(100, 501, 100), start=1)]  # fmt: skip
    dataset = Dataset(tmp_path / "ds")
    dataset.append("steps", conform(pl.DataFrame(rows, infer_schema_length=None), STEP_SCHEMA))
    events = [
        {"run_id": "ev", "event": "started", "timestamp": T0, "source": "ev.log", "source_offset": 0},
        {"run_id": "ev", "event": "eval_end", "role": "master", "task_index": 0, "step": 300,
         "timestamp": T0 + timedelta(seconds=42), "source": "ev.log", "source_offset": 9,
         "detail": json.dumps({"eval_loss": 0.2, "eval_accuracy": 0.93, "examples": 1000})},
        {"run_id": "ev", "event": "eval_end", "role": "master", "task_index": 0, "step": 400,
         "timestamp": T0 + timedelta(seconds=52), "source": "ev.log", "source_offset": 12, "detail": "not json"},
    ]  # fmt: skip
    dataset.append("events", conform(pl.DataFrame(events, infer_schema_length=None), EVENT_SCHEMA))
    ev = _rows(dataset, target_accuracy=0.9)["ev"]
    assert (ev["target_status"], ev["target_metric"], ev["step_at_target"]) == ("reached", "eval_accuracy", 300)
    assert ev["value_at_target"] == pytest.approx(0.93)
    assert ev["time_to_target_s"] == pytest.approx(42.0)


def test_the_loss_chart_of_a_batch_taken_whole_or_filtered_is_the_same(generated: Dataset) -> None:
    """TargetPass takes a batch whose runs are all charted as it is, and filters one holding others: each
    run's buckets are its own, so charting every run, or all but the last with a run id no batch holds (the
    same count: the same points per run), gives the same points for the runs both chart."""
    from tierscope.analysis.batches import interval_figures
    from tierscope.analysis.target import METRICS, TargetPass

    steps = generated.scan("steps")
    runs = sorted(set(steps.select("run_id").collect()["run_id"]))
    assert len(runs) >= 2
    passes = {"whole": TargetPass(steps, None, {}, runs), "filtered": TargetPass(steps, None, {}, [*runs[:-1], "none"])}
    for gather in passes.values():
        interval_figures(steps, extra=METRICS, visit=gather.add)
    whole, filtered = (passes[k].series().points for k in ("whole", "filtered"))
    assert filtered.height > 0
    assert whole.filter(pl.col("run_id") != runs[-1]).equals(filtered)
