"""A clock that jumps by days between two steps of one process is a clock set wrong: the run is set aside with a
reason (tierscope.analysis.clock.clock_jumps, found in the pass that builds the intervals), never a sustained rate
of 2e-7 steps/s or a goodput of 1.0; a 40-minute checkpoint stall in the same run shape is a real pause and is
kept."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.support.cli_helpers import collect_and_summarize
from tierscope.analysis.analyze import step_overview
from tierscope.analysis.batches import RECORD_COLUMNS, interval_figures
from tierscope.analysis.clock import on_the_clock
from tierscope.cli import app
from tierscope.dataset.store import Dataset


def _estimator_log(path: Path, stall_after: int | None = None, year_from: int | None = None) -> None:
    """A Cloud ML Engine Estimator job as ``gcloud ai-platform jobs stream-logs`` prints it (the shape of
    tests/analysis/test_goodput.py's): steps 100..2000 every 20 s at 5 steps/s, the first at 50 s.
    ``stall_after``: the interval after that step also holds a 40-minute checkpoint save (2,400 s more);
    ``year_from``: from that step on, the timestamps jump 300 years ahead (2018 -> 2318). It ends with
    ``Training finished``."""
    t0 = datetime(2018, 2, 6, 17, 0, 0)
    lines, t, last = [], 30.0, 0.0
    for step in range(100, 2001, 100):
        t += 20
        at = t0 + timedelta(seconds=t)
        if year_from is not None and step >= year_from:
            at = at.replace(year=at.year + 300)
        head = f"INFO\t{at:%Y-%m-%d %H:%M:%S} +0000\tmaster-replica-0\t\t"
        if step > 100:
            lines.append(f"{head}global_step/sec: {100 / (t - last):.4g}")
        lines.append(f"{head}loss = 0.5, step = {step}" + (f" ({t - last:.3f} sec)" if step > 100 else ""))
        last = t
        if step == stall_after:
            lines.append(f"{head}Saving checkpoints for {step} into gs://bucket/model/model.ckpt.")
            t += 2400
    lines.append(f"{head}Training finished")  # the run's end, at the last step's time
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _summary(tmp_path: Path, **shape: int) -> tuple[dict[str, object], str]:
    log = tmp_path / "train.log"
    _estimator_log(log, **shape)
    row, text = collect_and_summarize(log, tmp_path / "ds")
    return row, text


def test_a_forty_minute_checkpoint_stall_is_kept(tmp_path: Path) -> None:
    row, text = _summary(tmp_path, stall_after=1000)
    # 1000 -> 1100 takes 20 + 2,400 s: under a day, a pause and no jump; the run keeps its figures
    assert row["steady_status"] is None
    assert row["steady_global_steps_per_s"] == pytest.approx(5.0)  # 100 steps / 20 s, the stall left out
    # mean: 1,900 steps (100 -> 2000) over 18 x 20 s + 2,420 s = 2,780 s: 0.6835
    assert row["mean_global_steps_per_s"] == pytest.approx(1900 / 2780)
    assert row["sustained_global_steps_per_s"] is not None and row["goodput"] is not None
    assert "clock jumps" not in text


def test_timestamps_that_jump_three_hundred_years_set_the_run_aside(tmp_path: Path) -> None:
    row, text = _summary(tmp_path, year_from=1500)
    # 1400 at 2018-02-06 17:09:40, 1500 at 2318-02-06 17:10:00: 300 years (109,572 days, 72 leap days) + 20 s,
    # where the run's median is 20 s / 100 steps = 0.2 s a step: far over a day and 100 x 20 s
    assert row["steady_status"] == "clock_jump"
    assert row["steady_global_steps_per_s"] is None and row["mean_global_steps_per_s"] is None
    assert row["sustained_global_steps_per_s"] is None and row["goodput"] is None and row["lifetime_s"] is None
    # nor is the run priced on a date read off that clock (its `finished` line's 2318-02-06): no log date, today's
    assert (row["price_date"], row["price_date_origin"]) == (str(datetime.now(UTC).date()), "today")
    said = " ".join(text.split())
    assert "run est: its clock jumps 300.0 years between global steps 1,400 and 1,500, where a step takes 0.2 s" in said
    assert "no steady rate: its clock jumps by days between two steps of one process" in said


@pytest.mark.parametrize("max_records", [10**6, 1])  # one batch; pieces (19 records over a budget of 2 x 1)
def test_the_pass_finds_the_jump_in_a_batch_and_in_pieces(tmp_path: Path, max_records: int) -> None:
    log = tmp_path / "train.log"
    _estimator_log(log, year_from=1500)
    ds = tmp_path / "ds"
    args = ["collect", "files", str(log), "-d", str(ds), "--run-id", "est", "--settle", "0"]
    assert CliRunner().invoke(app, args).exit_code == 0
    collected = Dataset(ds)  # held while its scan is read: the scan reads the files it pins
    steps = collected.scan("steps").with_columns(on_the_clock())
    counts = step_overview(steps).select(RECORD_COLUMNS)  # as analyze hands them: each run's records counted
    figures = interval_figures(steps, max_records=max_records, counts=counts)
    (jump,) = figures.jumps.to_dicts()
    # 1400 -> 1500: 2018-02-06 17:09:40 -> 2318-02-06 17:10:00, 300 x 365 days + 72 leap days (2020..2316 by
    # fours, 75, less 2100, 2200, 2300) = 109,572 days = 9,466,963,200 s, + 20 s; the 18 other intervals take
    # 20 s / 100 steps: the lower median pace is 0.2 s a step, and 9.5e9 s > 100 x 100 x 0.2 = 2,000 s
    assert jump == {"run_id": "est", "clock_jumps": 1, "jump_s": 109_572 * 86400 + 20.0, "jump_from_step": 1400,
                    "jump_to_step": 1500, "step_s": pytest.approx(0.2)}  # fmt: skip
    # set aside: its records are still counted (steps 100..2000: 20) and no figure is built on them
    (row,) = figures.throughput.to_dicts()
    assert row["records"] == 20 and row["steady_global_steps_per_s"] is None and row["mean_global_steps_per_s"] is None
    assert figures.samples == {} and figures.tasks.height == 0


def test_a_stall_under_a_day_is_no_jump_in_the_pass(tmp_path: Path) -> None:
    log = tmp_path / "train.log"
    _estimator_log(log, stall_after=1000)  # 2,420 s between steps 1000 and 1100: under a day
    ds = tmp_path / "ds"
    args = ["collect", "files", str(log), "-d", str(ds), "--run-id", "est", "--settle", "0"]
    assert CliRunner().invoke(app, args).exit_code == 0
    collected = Dataset(ds)
    assert interval_figures(collected.scan("steps"), max_records=1).jumps.height == 0
