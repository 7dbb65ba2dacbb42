"""Records that claim one step with other figures are two records in conflict, not a record and its copy; and a
run whose tasks disagree (two jobs' logs named as one job's tasks) is said.

Every log is written for the test; each expected value is worked out by hand in a comment."""

from __future__ import annotations

from pathlib import Path

import polars as pl
from typer.testing import CliRunner

from tierscope.cli import app
from tierscope.dataset.store import Dataset

runner = CliRunner()

LINE = "I1130 14:{m:02d}:{s:02d}.000000 1401 logging_writer.py:48] [{step}] steps_per_sec={rate}\n"


def log(path: Path, rate: float, steps: range, start_min: int = 1) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(LINE.format(m=start_min + i, s=0, step=step, rate=rate) for i, step in enumerate(steps)))
    return path


def test_a_rotated_name_holding_another_runs_figures_is_kept_aside_not_dropped(tmp_path: Path) -> None:
    # train.log (5.5 steps/s) and train.log.1 (10.0 steps/s) at steps 100, 200, 300: one run by the rotation
    # name, but the second's figures differ (10.0 vs 5.5, 82 % apart): 3 conflicts, kept aside as 3 rejected
    # lines, none a duplicate; the closing line adds up: 6 lines = 3 stored + 0 duplicates + 3 rejected.
    a = log(tmp_path / "two1" / "train.log", 5.5, range(100, 301, 100))
    b = log(tmp_path / "two1" / "train.log.1", 10.0, range(100, 301, 100))
    ds = tmp_path / "ds"
    got = runner.invoke(app, ["collect", "files", str(a), str(b), "-d", str(ds)])
    assert got.exit_code == 0, got.output
    assert got.output.splitlines()[-1].startswith(
        "read 6 lines: stored 3 step records and 0 events, 0 duplicates already stored, kept aside 3 rejected lines"
    ), got.output
    assert "3 step records claim steps of run 'train' already read with other figures (first: line 1, step 100" in (
        got.output
    )
    assert "--run-id" in got.output
    rejects = Dataset(ds).read("rejects").sort("source_offset")
    assert rejects["source_offset"].to_list() == [1, 2, 3]
    assert rejects["reason"][0] == (
        f"step 100 conflicts with the record of that step at {a}:1: global_steps_per_s 10.0 here, 5.5 there "
        "(two runs read as one?)"
    )
    steps = Dataset(ds).read("steps")
    assert steps["global_steps_per_s"].to_list() == [5.5, 5.5, 5.5]


def test_a_copy_whose_figures_agree_within_rounding_is_a_duplicate(tmp_path: Path) -> None:
    # the same record printed to 4 and to 6 digits: 5.4952 vs 5.495231 differ by 0.0006 % (< 0.1 %): copies
    a = log(tmp_path / "train.log", 5.4952, range(100, 301, 100))
    b = log(tmp_path / "train.log.1", 5.495231, range(100, 301, 100))
    got = runner.invoke(app, ["collect", "files", str(a), str(b), "-d", str(tmp_path / "ds")])
    assert got.exit_code == 0, got.output
    assert "stored 3 step records and 0 events, 3 duplicates already stored, kept aside 0 rejected" in got.output


def test_conflicts_within_one_batch_are_kept_aside_too(tmp_path: Path) -> None:
    # one file holding step 100 twice at the same time with other rates (5.5 then 10.0): the first stored, the
    # second a conflict naming line 1; a collect again holds nothing new (the reject is stored once)
    path = tmp_path / "train.log"
    path.write_text(LINE.format(m=1, s=0, step=100, rate=5.5) + LINE.format(m=1, s=0, step=100, rate=10.0))
    ds = tmp_path / "ds"
    got = runner.invoke(app, ["collect", "files", str(path), "-d", str(ds)])
    assert got.exit_code == 0, got.output
    rejects = Dataset(ds).read("rejects")
    assert rejects["source_offset"].to_list() == [2] and f"{path}:1" in rejects["reason"][0]
    again = runner.invoke(app, ["collect", "files", str(path), "--reread", "-d", str(ds)])
    assert again.exit_code == 0, again.output
    assert Dataset(ds).read("rejects").height == 1
    assert Dataset(ds).read("steps").select(pl.col("global_steps_per_s")).to_series().to_list() == [5.5]


def test_two_jobs_named_as_one_runs_tasks_are_said(tmp_path: Path) -> None:
    # worker-0.log at 1.19 steps/s and worker-1.log at 4.76: one run by the folder's name, its tasks 4.76 / 1.19 =
    # 4.0x apart (> 2x): warned, with the files and how to collect them apart; both stored as read
    w0 = log(tmp_path / "two2" / "worker-0.log", 1.19, range(100, 501, 100))
    w1 = log(tmp_path / "two2" / "worker-1.log", 4.76, range(100, 501, 100))
    got = runner.invoke(app, ["collect", "files", str(w0), str(w1), "-d", str(tmp_path / "ds")])
    assert got.exit_code == 0, got.output
    assert "run 'two2': its tasks step at rates 4.0x apart (worker 1 4.76 steps/s, worker 0 1.19)" in got.output
    assert "collect each file apart with --run-id NAME" in got.output


def test_tasks_of_one_job_at_one_pace_and_time_are_not_warned(tmp_path: Path) -> None:
    # 5.0 and 4.0 steps/s (1.25x apart, a straggler's), clocks 14:01-14:05 both: one job, no warning
    w0 = log(tmp_path / "job" / "worker-0.log", 5.0, range(100, 501, 100))
    w1 = log(tmp_path / "job" / "worker-1.log", 4.0, range(100, 501, 100))
    got = runner.invoke(app, ["collect", "files", str(w0), str(w1), "-d", str(tmp_path / "ds")])
    assert got.exit_code == 0, got.output
    assert "warning" not in got.output


def test_tasks_whose_clocks_do_not_overlap_are_said(tmp_path: Path) -> None:
    # both at 5.0 steps/s, but worker 0 logs 14:01-14:05 and worker 1 14:31-14:35: no moment in common
    w0 = log(tmp_path / "job" / "worker-0.log", 5.0, range(100, 501, 100))
    w1 = log(tmp_path / "job" / "worker-1.log", 5.0, range(100, 501, 100), start_min=31)
    got = runner.invoke(app, ["collect", "files", str(w0), str(w1), "-d", str(tmp_path / "ds")])
    assert got.exit_code == 0, got.output
    assert "its tasks' clocks do not overlap (worker 1 starts at" in got.output
