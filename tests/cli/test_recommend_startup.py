"""recommend says what its hours hold of a run's start-up: the start-up each measured run paid once, before its
steady pace (sustained.ONCE_S), in the hours; and, by name, the runs whose log times no start before its first
step record, whose hours leave it out (tierscope.cli.output.startup_basis)."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

from typer.testing import CliRunner

from tierscope.cli import app
from tierscope.dataset.store import Dataset

runner = CliRunner()


def test_the_2016_hours_include_the_start_up_each_run_paid(dataset_2016: Dataset) -> None:
    args = ["recommend", "-d", str(dataset_2016.root), "--steps", "1000", "--deadline", "10m"]
    out = " ".join(runner.invoke(app, [*args, "--price-date", "2019-12-01"], env={"COLUMNS": "200"}).output.split())
    # STANDARD_1's start-up (README, tests/analysis/test_summary_2016.py): its lead's first steady record at
    # elapsed 13.996 s past its steps at the steady rate -> 14 s; BASIC's first record, step 100 at 21.535 s, is
    # its steps at 4.644 steps/s (100 / 4.644 = 21.53 s): 0 s; 1,000 steps at 22.389 + 14 s = 58.7 s
    assert "Hours include the start-up each measured run paid once, before its steady pace: basic 0 s, " in out
    assert "standard_1 14 s." in out
    assert "Start-up left out" not in out


def test_a_log_timing_no_start_before_its_first_step_is_named(tmp_path: Path) -> None:
    # An Estimator log with Python logging's timestamps (the shape of tests/analysis/test_goodput.py's): a first
    # line at 10:00:00 that no format reads, steps 100 ... 2000 from 10:02:00 every 20 s (5 global steps/s).
    # Nothing stored times 10:00:00 (no start event, no elapsed seconds): its 120 s before step 100 are unknown.
    t0 = datetime(2024, 3, 1, 10, 0, 0)
    lines = [f"{t0:%Y-%m-%d %H:%M:%S},000 INFO Starting training"]
    for i in range(1, 21):
        at = t0 + timedelta(seconds=100 + 20 * i)
        lines.append(
            f"{at:%Y-%m-%d %H:%M:%S},000 INFO loss = 0.5, step = {100 * i}" + (" (20.000 sec)" if i > 1 else "")
        )
    lines.append(f"{at:%Y-%m-%d %H:%M:%S},000 INFO Training finished")
    log = tmp_path / "start.log"
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    ds = str(tmp_path / "ds")
    done = runner.invoke(app, ["collect", "files", str(log), "-d", ds, "--machine", "n1-standard-8", "--settle", "0"])
    assert done.exit_code == 0, done.output
    args = ["recommend", "-d", ds, "--steps", "100000", "--deadline", "72h", "--price-date", "2026-12-01"]
    out = " ".join(runner.invoke(app, args, env={"COLUMNS": "200"}).output.split())
    # 100,000 steps / 5 steps/s = 20,000 s = 5.56 h, no start-up in them; the note says so
    assert " 5.56 " in out
    assert (
        "Start-up left out of the hours of start: nothing read from the log times its start before its first step "
        "record (no start event, no elapsed seconds)."
    ) in out
    assert "Hours include the start-up" not in out
