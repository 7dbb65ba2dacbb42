"""A log collected, then appended to, then collected again reads as the same log collected once: what the lines
before the first collect's end know (that step records came, what the newest one announced) judges the lines
appended after it. Lines are written for the test in the shapes TensorFlow's hooks and Python print."""

from __future__ import annotations

from pathlib import Path

import polars as pl
from typer.testing import CliRunner

from tierscope.analysis import analyze
from tierscope.cli import app
from tierscope.dataset.store import Dataset

STEPS = [f"INFO:tensorflow:loss = 0.5, step = {n} (2.0 sec)" for n in (100, 200, 300)]
TRACEBACK = [
    "Traceback (most recent call last):",
    '  File "train.py", line 9, in <module>',
    "    main()",
    "RuntimeError: CUDA error: an illegal memory access was encountered",
]


def _collect(log: Path, dataset: Path, settle: str = "0") -> None:
    result = CliRunner().invoke(app, ["collect", "files", str(log), "-d", str(dataset), "--settle", settle])
    assert result.exit_code == 0, result.output


def _verdict(dataset: Path) -> tuple[list[tuple], tuple]:
    """The failed events (reason, step) and the run's status and failure reason."""
    events = Dataset(dataset).read("events")
    failed = events.filter(pl.col("event") == "failed").select("reason", "step").rows() if events.height else []
    row = analyze(Dataset(dataset)).summary.row(0, named=True)
    return failed, (row["status"], row["failure_reason"])


def _in_two(tmp_path: Path, first: list[str], then: list[str], settle: str = "0") -> tuple[list[tuple], tuple]:
    """``first`` collected (the file written ``settle`` seconds ago at most counts as still being written), then
    ``then`` appended and collected."""
    log = tmp_path / "two" / "train.log"
    log.parent.mkdir()
    log.touch()  # cron's first collect: the job's log just created, followed from then on
    _collect(log, tmp_path / "ds-two", settle)
    log.write_text("".join(line + "\n" for line in first))
    _collect(log, tmp_path / "ds-two", settle)
    with log.open("a") as out:
        out.write("".join(line + "\n" for line in then))
    _collect(log, tmp_path / "ds-two")
    return _verdict(tmp_path / "ds-two")


def _in_one(tmp_path: Path, lines: list[str]) -> tuple[list[tuple], tuple]:
    log = tmp_path / "one" / "train.log"
    log.parent.mkdir()
    log.write_text("".join(line + "\n" for line in lines))
    _collect(log, tmp_path / "ds-one")
    return _verdict(tmp_path / "ds-one")


def test_a_traceback_appended_after_the_steps_fails_the_run_as_in_one_collect(tmp_path: Path) -> None:
    # steps 100..300 read by the first collect, the traceback by the second: it ends a run that made steps, so
    # the run failed, its reason the exception line, at the last step before it (300), as in one collect
    once = _in_one(tmp_path, STEPS + TRACEBACK)
    reason = "RuntimeError: CUDA error: an illegal memory access was encountered"
    assert once == ([(reason, 300)], ("failed", reason))
    assert _in_two(tmp_path, STEPS, TRACEBACK) == once


def test_a_traceback_before_any_step_stays_no_failure_in_two_collects(tmp_path: Path) -> None:
    # a traceback before the first step (a retried import, a warning's stack) fails nothing, in one collect or
    # split before the steps while the file is still being written (changed within the hour's settle time)
    once = _in_one(tmp_path, TRACEBACK + STEPS)
    assert once[0] == []
    assert _in_two(tmp_path, TRACEBACK, STEPS, settle="3600") == once


def test_a_settled_log_that_is_only_a_traceback_is_a_run_that_failed_before_its_first_step(tmp_path: Path) -> None:
    # the program died at start-up: no step record, the exception line its cause, no step to fail at
    reason = "RuntimeError: CUDA error: an illegal memory access was encountered"
    assert _in_one(tmp_path, ["Loading model...", *TRACEBACK]) == ([(reason, None)], ("failed", reason))
