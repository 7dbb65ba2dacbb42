"""A stored time outside 1970-9999 is a reject with its reason, whichever input brought it.

One LogEntry dated ``0001-01-01T00:00:00Z`` was stored by ``logentry-lines`` though the README says
such times are rejects, and every summary of the dataset then ended in OverflowError. Each input here
holds one record at such a time (and records at ordinary times): the odd one is a reject naming its
time, the others are stored, and the summary reads.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.support.ingest_helpers import step_line
from tierscope.cli import app
from tierscope.dataset.schema import off_the_clock
from tierscope.dataset.store import Dataset

runner = CliRunner()


def logentry_lines(path: Path, first_time: str) -> Path:
    """Three LogEntries of a sink, one a line, steps 100-300; the first dated ``first_time``."""
    times = [first_time, "2016-12-31T08:02:00.000000Z", "2016-12-31T08:03:00.000000Z"]
    rows = [
        {
            "insertId": f"id{n}",
            "logName": "projects/p/logs/master-replica-0",
            "resource": {"type": "ml_job", "labels": {"job_id": "j", "task_name": "master-replica-0"}},
            "textPayload": step_line(100 * n).strip(),
            "timestamp": when,
            "severity": "INFO",
        }
        for n, when in enumerate(times, start=1)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def console_csv(path: Path, first_time: str) -> Path:
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(["timestamp", "severity", "insertId", "resource.labels.task_name", "textPayload"])
    times = ["2024-04-12T08:15:03.000000Z", "2024-04-12T08:15:02.000000Z", first_time]  # newest first
    for n, when in zip((3, 2, 1), times, strict=True):
        writer.writerow([when, "INFO", f"e{n}", "master-replica-0", f"INFO:tensorflow:loss = 0.9, step = {100 * n}"])
    path.write_text(buf.getvalue())
    return path


def collect(*argv: str) -> None:
    done = runner.invoke(app, ["collect", "files", *argv, "--settle", "0"])
    assert done.exit_code == 0, done.output


@pytest.mark.parametrize(
    ("when", "shown"),
    [("0001-01-01T00:00:00Z", "0001-01-01T00:00:00"), ("1969-12-31T23:59:59Z", "1969-12-31T23:59:59")],
)
@pytest.mark.parametrize("kind", ["logentry-lines", "console-csv"])
def test_a_time_off_the_clock_is_a_reject(tmp_path: Path, kind: str, when: str, shown: str) -> None:
    make = logentry_lines if kind == "logentry-lines" else console_csv
    log = make(tmp_path / ("sink.json" if kind == "logentry-lines" else "download.csv"), when)
    ds = tmp_path / "ds"
    collect(str(log), "-d", str(ds), "--run-id", "r")
    fresh = Dataset(ds)
    assert sorted(fresh.read("steps")["step"].to_list()) == [200, 300]
    (reason,) = fresh.read("rejects")["reason"].to_list()
    assert reason.startswith(f"step record at step 100: time {shown}")
    assert reason.endswith("is outside 1970-9999")
    assert runner.invoke(app, ["summary", "-d", str(ds)]).exit_code == 0


def test_a_declared_formats_time_off_the_clock_is_a_reject(tmp_path: Path) -> None:
    formats = tmp_path / "formats.toml"
    formats.write_text(
        '[[format]]\nname = "stamped"\n'
        r"regex = '^(?P<timestamp>\S+) step (?P<step>\d+) (?P<global_steps_per_s>\S+) steps/s$'"
        '\ntime_format = "%Y-%m-%dT%H:%M:%S"\n'
    )
    log = tmp_path / "app.log"
    log.write_text("0001-01-01T00:00:00 step 1 10.0 steps/s\n2024-01-01T00:00:00 step 2 10.0 steps/s\n")
    ds = tmp_path / "ds"
    collect(str(log), "-d", str(ds), "--run-id", "r", "--formats", str(formats))
    fresh = Dataset(ds)
    assert fresh.read("steps")["step"].to_list() == [2]
    rejects = fresh.read("rejects")
    assert rejects["source_offset"].to_list() == [1]
    assert "is outside 1970-9999" in rejects["reason"][0] or "1970 and 9999" in rejects["reason"][0]


def test_glog_lines_dated_in_the_year_1_store_no_such_time(tmp_path: Path) -> None:
    log = tmp_path / "train.log"
    log.write_text(
        "I1231 08:00:01.000000 140 basic_session_run_hooks.py:260] loss = 2.0, step = 1\n"
        "I1231 08:00:02.000000 140 basic_session_run_hooks.py:260] loss = 1.9, step = 101 (1.000 sec)\n"
    )
    ds = tmp_path / "ds"
    collect(str(log), "-d", str(ds), "--run-id", "r", "--year", "1")
    stored = Dataset(ds).read("steps")
    assert stored.filter(off_the_clock()).height == 0  # read as untimed, or a reject: never stored
    assert runner.invoke(app, ["summary", "-d", str(ds)]).exit_code == 0
