"""Goodput per run: buckets against a generated run whose every second is known."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import polars as pl
import pytest
from typer.testing import CliRunner

from tierscope import Dataset, analyze
from tierscope.cli import app
from tierscope.dataset.schema import EVENT_SCHEMA, RUN_SCHEMA, STEP_SCHEMA, conform

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
    assert row["deviation_warmup_s"] == pytest.approx(0, abs=1)
    # 30 s - 20 s, twice; no event explains them: productive, as ML Goodput Measurement counts a slow
    # step it has no event for, and its step-time deviation
    assert row["stalls"] == 2 and row["deviation_stalls_s"] == pytest.approx(20, abs=1)
    assert row["badput_checkpoint_s"] is None
    # between step 2000 (450 s) and step 1600 (530 s): 80 s, less the 100 steps from 1500 at 5/s (20 s)
    assert row["badput_restarts_s"] == pytest.approx(60, abs=1)
    assert row["badput_wasted_s"] == pytest.approx(100, abs=1)  # 2000 - 1500 = 500 steps again, at 5 steps/s
    assert row["badput_tail_s"] == pytest.approx(20, abs=1)
    # at the steady rate: 3000 distinct steps at 5 steps/s = 600 s = 830 - 30 - 20 - 60 - 100 - 20 - 2 x 10;
    # the library's productive time adds the two unexplained 10 s stalls: 620 s = 830 - 30 - 60 - 100 - 20
    assert row["productive_at_steady_s"] == pytest.approx(600, abs=1)
    assert row["productive_s"] == pytest.approx(620, abs=1)
    assert row["goodput"] == pytest.approx(620 / 830, abs=0.005)  # 74.7 %
    # ideal step time: 33 intervals after first records, 31 at 20 s / 100 steps = 0.2 s a step, 2 at 0.3 s;
    # median 0.2, MAD 0 (31 of 33 deviations are 0): bound 0.2, the mean of the 31 kept is 0.2 s.
    # Deviation: 31 x 20 + 2 x 30 = 680 s for 3300 steps, less 3300 x 0.2 = 660 s: 20 s, no checkpoint event in it
    assert row["ideal_step_time_s"] == pytest.approx(0.2)
    assert row["step_time_deviation_s"] == pytest.approx(20)
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
    # BASIC on 2019-12-01: USD per 1,000 steps / goodput (620 / 830, the library's accounting)
    assert row["price_per_1000_productive_steps"] == pytest.approx(row["usd_per_1000_steps"] / (620 / 830), rel=0.01)


def _with_milestones(dataset: Dataset, eval_s: float | None = None) -> Dataset:
    """The generated job of :func:`_generated` with the events a trainer like tierscope's writes: the
    launcher's start at 0 s, the master's ``initialized`` at 12 s and ``first_step`` (step 1) at 30.2 s;
    a checkpoint save after step 700 (170 s .. 180 s) and after step 1300 (300 s .. 310 s): the two
    10 s stalls; an instant one after step 1500 (350 s), the one the second process restores at 475 s.
    ``eval_s``: the save after step 1300 is an evaluation of that many seconds instead."""
    master = {"role": "master", "task_index": 0}
    second = ("checkpoint_begin", "checkpoint_end") if eval_s is None else ("eval_begin", "eval_end")
    rows = [
        ("initialized", 12.0, None),
        ("first_step", 30.2, 1),
        ("checkpoint_begin", 170.0, 700),
        ("checkpoint_end", 180.0, 700),
        (second[0], 300.0, 1300),
        (second[1], 310.0 if eval_s is None else 300.0 + eval_s, 1300),
        ("checkpoint_begin", 350.0, 1500),
        ("checkpoint_end", 350.0, 1500),
        ("restored", 475.0, 1500),
    ]
    events = pl.DataFrame(
        [{"run_id": "job", "event": e, "timestamp": T0 + timedelta(seconds=at), "step": step, "source": "job.log",
          **master} for e, at, step in rows]
    )  # fmt: skip
    dataset.append("events", conform(events, EVENT_SCHEMA))
    return dataset


def test_checkpoint_stalls_restore_and_start_up_from_events_by_hand(tmp_path) -> None:
    row = analyze(_with_milestones(_generated(tmp_path / "ds"))).summary.row(0, named=True)
    # start-up: the first step ends at 30.2 s, less its own 1 / 5 = 0.2 s of work: 30 s, of which
    # 12 s initialisation (job start to `initialized`) and 18 s program start-up
    assert row["badput_startup_s"] == pytest.approx(30, abs=1)
    assert row["badput_init_s"] == pytest.approx(12, abs=1)
    assert row["badput_program_startup_s"] == pytest.approx(18, abs=1)
    # the first record (step 100 at 50 s) after the first step: 19.8 s for 99 steps at 5/s = 19.8 s: no warm-up
    assert row["deviation_warmup_s"] == pytest.approx(0, abs=1)
    # intervals 700 -> 800 and 1300 -> 1400: 30 s for 20 s of steps, each with a 10 s save in it
    assert row["stalls"] == 2 and row["badput_checkpoint_s"] == pytest.approx(20, abs=1)  # 10 + 10
    assert row["badput_eval_s"] == 0.0 and row["deviation_stalls_s"] == pytest.approx(0, abs=1)
    # the saves explain the whole excess over the ideal 0.2 s a step: no step-time deviation left
    assert row["step_time_deviation_s"] == pytest.approx(0, abs=1e-6)
    # the restored step (1500) says it directly: 2000 - 1500 = 500 steps again at 5/s = 100 s; the gap
    # 450 s -> 530 s (step 1600) less 100 steps from 1500 at 5/s (20 s) = 60 s
    assert row["badput_wasted_s"] == pytest.approx(100, abs=1)
    assert row["badput_restarts_s"] == pytest.approx(60, abs=1)
    assert row["badput_tail_s"] == pytest.approx(20, abs=1)
    assert row["lifetime_s"] == pytest.approx(830, abs=1)
    # 830 - 30 - 20 - 60 - 100 - 20 = 600 s: 3000 distinct steps at 5 steps/s
    assert row["goodput"] == pytest.approx(600 / 830, abs=0.005)  # 72.3 %
    assert row["badput_checkpoint_share"] == pytest.approx(20 / 830, abs=0.002)


def test_a_stall_longer_than_its_evaluation_keeps_the_rest_as_other(tmp_path) -> None:
    row = analyze(_with_milestones(_generated(tmp_path / "ds"), eval_s=4.0)).summary.row(0, named=True)
    # 700 -> 800: the 10 s checkpoint; 1300 -> 1400: 10 s of excess, of which the evaluation
    # (eval_begin 300 s, eval_end 304 s) explains 4 s; the other 6 s are input or unknown
    assert row["badput_checkpoint_s"] == pytest.approx(10, abs=0.5)
    assert row["badput_eval_s"] == pytest.approx(4, abs=0.5)
    assert row["deviation_stalls_s"] == pytest.approx(6, abs=0.5)
    # productive: 600 s of steps at 5/s and the unexplained 6 s
    assert row["productive_s"] == pytest.approx(606, abs=1)


def test_stalls_without_events_cannot_be_classified(tmp_path) -> None:
    row = analyze(_generated(tmp_path / "ds")).summary.row(0, named=True)
    # no event says what held steps 700 -> 800 and 1300 -> 1400 up: not observable, not zero, and
    # (as the library counts what is not recorded) productive, in the step-time deviation
    assert row["badput_checkpoint_s"] is None and row["badput_eval_s"] is None
    assert row["deviation_stalls_s"] == pytest.approx(20, abs=1)
    assert row["badput_init_s"] is None and row["badput_program_startup_s"] is None


def _estimator_log(path, single_process: bool = False) -> None:
    """A Cloud ML Engine Estimator job as ``gcloud ... stream-logs`` prints it: steps 100..2000 every
    20 s at 5 steps/s (the first at 50 s), the steps after 700 and 1300 held up 10 s by a checkpoint
    save, so those intervals take 30 s (``global_step/sec: 3.333``, ``(30.000 sec)``).
    ``single_process``: the same steps as one process's glog lines, which name no task."""
    t0 = datetime(2018, 2, 6, 17, 0, 0)
    lines, t, last = [], 30.0, 0.0
    for step in range(100, 2001, 100):
        t += 20
        at = t0 + timedelta(seconds=t)
        stamp = at.strftime("%Y-%m-%d %H:%M:%S +0000")
        head = (
            f"I{at:%m%d %H:%M:%S}.000000 140456655849280 basic_session_run_hooks.py:260] "
            if single_process
            else f"INFO\t{stamp}\tmaster-replica-0\t\t"
        )
        if step > 100:
            lines.append(f"{head}global_step/sec: {100 / (t - last):.4g}")
        lines.append(f"{head}loss = 0.5, step = {step}" + (f" ({t - last:.3f} sec)" if step > 100 else ""))
        last = t
        if step in (700, 1300):
            lines.append(f"{head}Saving checkpoints for {step} into gs://bucket/model/model.ckpt.")
            t += 10
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_estimator_checkpoint_lines_classify_a_text_logs_stalls(tmp_path) -> None:
    log = tmp_path / "train.log"
    _estimator_log(log)
    ds = tmp_path / "ds"
    runner = CliRunner()
    # settle 0: a finished job's log (while a log may grow, the lines it ends in may wait for the next)
    done = runner.invoke(
        app, ["collect", "files", str(log), "-d", str(ds), "--run-id", "est", "--tier", "BASIC", "--settle", "0"]
    )
    assert done.exit_code == 0, done.output
    events = Dataset(ds).read("events").sort("source_offset")
    assert events.select("event", "step").rows() == [("checkpoint_begin", 700), ("checkpoint_begin", 1300)]
    result = runner.invoke(app, ["summary", "-d", str(ds), "--json"])
    assert result.exit_code == 0, result.output
    (row,) = json.loads(result.output)
    # two intervals of 30 s for 100 steps at 5/s (20 s): 10 s each, both after a `Saving checkpoints` line
    assert row["stalls"] == 2 and row["badput_checkpoint_s"] == pytest.approx(20, abs=1)
    assert row["deviation_stalls_s"] == pytest.approx(0, abs=1)
    # no evaluation line, and no trainer known to write one for every evaluation: not observable (null)
    assert row["badput_eval_s"] is None


def test_a_single_process_log_without_task_names_gets_goodput_by_hand(tmp_path) -> None:
    # Before: a log naming no role or task (one process's glog lines, the commonest real log)
    # got no goodput at all: its lead task's null key matched no row of a join.
    log = tmp_path / "train.log"
    _estimator_log(log, single_process=True)
    ds = tmp_path / "ds"
    runner = CliRunner()
    # settle 0: a finished job's log (while a log may grow, the lines it ends in may wait for the next)
    done = runner.invoke(app, ["collect", "files", str(log), "-d", str(ds), "--run-id", "one", "--settle", "0"])
    assert done.exit_code == 0, done.output
    assert Dataset(ds).read("steps").get_column("role").null_count() == 20  # no task named
    result = runner.invoke(app, ["summary", "-d", str(ds), "--json"])
    assert result.exit_code == 0, result.output
    (row,) = json.loads(result.output)
    # 19 intervals: 17 of 100 steps in 20 s (5/s), 2 in 30 s (3.33/s): steady median 5 steps/s.
    assert row["steady_global_steps_per_s"] == pytest.approx(5)
    # First record: step 100 at 50 s, so the run started 100 / 5 = 20 s earlier, at 30 s; the last,
    # step 2000, at 50 + 17 * 20 + 2 * 30 = 450 s: lifetime 420 s; productive 2000 / 5 = 400 s.
    assert row["lifetime_s"] == pytest.approx(420)
    assert row["productive_s"] == pytest.approx(400)
    assert row["goodput"] == pytest.approx(400 / 420)
    # The two 10 s stalls, each after a `Saving checkpoints` line of this (unnamed) task.
    assert row["stalls"] == 2 and row["badput_checkpoint_s"] == pytest.approx(20, abs=1)
    assert row["deviation_stalls_s"] == pytest.approx(0, abs=1)


def test_a_single_process_log_reaches_a_loss_target_by_hand(tmp_path) -> None:
    # The same null key in time to target: it said "no step record of a training task logs loss".
    log = tmp_path / "train.log"
    _estimator_log(log, single_process=True)
    ds = tmp_path / "ds"
    runner = CliRunner()
    # settle 0: a finished job's log (while a log may grow, the lines it ends in may wait for the next)
    args = ["collect", "files", str(log), "-d", str(ds), "--run-id", "one", "--settle", "0"]
    assert runner.invoke(app, args).exit_code == 0
    result = runner.invoke(app, ["summary", "-d", str(ds), "--json", "--target-loss", "1"])
    assert result.exit_code == 0, result.output
    (row,) = json.loads(result.output)
    # every record logs loss 0.5 <= 1: held from the first of three, step 100 at 50 s; the run started
    # at 50 - 100 / 5 = 30 s (as goodput places it), so 20 s to the target
    assert (row["target_status"], row["step_at_target"]) == ("reached", 100)
    assert row["time_to_target_s"] == pytest.approx(20)


def test_the_laptop_logs_goodput_is_ml_goodput_measurements_rule_by_hand(dataset_2016: Dataset) -> None:
    row = {r["run_id"]: r for r in analyze(dataset_2016).summary.iter_rows(named=True)}["local"]
    # local.log: steps 100..1000 every 100 steps at (6.247, 15.281, 20.713, 26.001, 31.343, 36.647, 41.959,
    # 47.250, 52.522, 57.748) s. Seconds per 100 steps of the 9 intervals: 9.034, 5.432, 5.288, 5.342,
    # 5.304, 5.312, 5.291, 5.272, 5.226. Median 5.304; absolute deviations 3.730, 0.128, 0.016, 0.038, 0,
    # 0.008, 0.013, 0.032, 0.078, whose median (MAD) is 0.032; bound 5.304 + 3 x 0.032 = 5.400 drops 9.034
    # and 5.432; the ideal is the mean of the other 7: 37.035 / 7 = 5.29071 s per 100 steps.
    assert row["ideal_step_time_s"] == pytest.approx(0.0529071, rel=1e-5)
    # step-time deviation: 9 intervals took 57.748 - 6.247 = 51.501 s, 900 steps at the ideal 47.6164 s: 3.8846 s
    assert row["step_time_deviation_s"] == pytest.approx(3.8846, abs=1e-3)
    # of which the 100 -> 200 interval's excess at the steady rate 18.8384 (800 steps / 42.4667 s, that interval
    # left out as a stall: tests/analysis/test_summary_2016.py): 9.034 - 100 / 18.8384 = 9.034 - 5.3083 = 3.7257 s
    assert row["deviation_stalls_s"] == pytest.approx(3.7257, abs=1e-3)
    # badput: start-up only, 6.247 - 5.3083 = 0.9387 s (no end event: no tail; no checkpoint line).
    # The library counts the slow interval as productive: 57.748 - 0.9387 = 56.8093 s of 57.748 s = 0.9837,
    # where valuing it at the steady rate gives 53.0836 / 57.748 = 0.9192.
    assert row["productive_s"] == pytest.approx(56.8093, abs=1e-3)
    assert row["goodput"] == pytest.approx(0.9837, abs=1e-4)
    assert row["productive_at_steady_s"] / row["lifetime_s"] == pytest.approx(0.9192, abs=1e-4)
