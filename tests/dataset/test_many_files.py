"""A dataset of more data files than the process may open stays readable, and says why when not.

A run collected every ten minutes without ``compact`` gains ~150 files a day. The datasets here are
written file by file with the store's own writer (:func:`write_atomic`, what every append uses), and
read by ``summary`` and ``report`` in a process whose open-file limit is lowered with
``resource.setrlimit``: 1,200 files under a limit of 256 (the field's 100,000 under 1,024, scaled
down so the files are written in a few seconds; 4.7 files per slot against 98 there).

Why the scaled case stands for the field's: the readers' open files do not grow with the files. They
pin a quarter of the limit (64 here, 256 there; :func:`pin_budget`) and read every other file by its
path, which polars and pyarrow open a few at a time (their thread pools: the cores, not the files), so
both cases take the same branch (pins full, most files by path) with 192 and 768 slots left. Measured
on 2 cores: ``summary`` of 1,200 and of 6,000 such files succeeds under a limit of 24 (6 pins),
``report`` under 32; the limit stays 256 so a many-core runner's pools fit.
"""

from __future__ import annotations

import errno
import json
import resource
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import polars as pl
import pytest

from tests.support.lead_records import lead_frame
from tierscope.cli.common import print_error
from tierscope.dataset.schema import STEP_SCHEMA, conform
from tierscope.dataset.store import Dataset, partition_dir_name, pin_budget, write_atomic

FILES = 1_200
STEPS_PER_FILE = 10
OPEN_FILES = 256
T0 = datetime(2024, 1, 1, tzinfo=UTC)


def write_run_files(root: Path, run_id: str, files: int) -> None:
    """``files`` data files of run ``run_id``, file i holding global steps 10i+1 .. 10i+10, one every
    0.1 s (10 steps/s, as each record says), and the run's facts."""
    directory = root / "steps" / partition_dir_name(run_id)
    directory.mkdir(parents=True)
    for i in range(files):
        steps = list(range(i * STEPS_PER_FILE + 1, (i + 1) * STEPS_PER_FILE + 1))
        frame = lead_frame(
            run_id, steps, [s / 10 for s in steps], 10.0, timestamps=[T0 + timedelta(seconds=s / 10) for s in steps]
        )
        write_atomic(conform(frame, STEP_SCHEMA).drop("run_id"), directory)
    Dataset(root).append("runs", pl.DataFrame({"run_id": [run_id], "tier": ["BASIC"], "collected_at": [T0]}))


@pytest.fixture(scope="module")
def crowded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("crowded") / "ds"
    write_run_files(root, "r", FILES)
    return root


def _limited(limit: int) -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))


def tierscope(*argv: str, limit: int = OPEN_FILES) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tierscope", *argv],
        capture_output=True,
        text=True,
        check=False,
        preexec_fn=lambda: _limited(limit),
    )


def test_summary_reads_more_files_than_it_may_open(crowded: Path) -> None:
    done = tierscope("summary", "-d", str(crowded), "--json")
    assert done.returncode == 0, done.stderr
    (row,) = json.loads(done.stdout)
    # 1,200 files x 10 records; the last file's last step is 1,200 x 10; every record says 10 steps/s
    assert row["records"] == 12_000
    assert row["last_step"] == 12_000
    assert row["steady_global_steps_per_s"] == pytest.approx(10.0)


def test_report_reads_more_files_than_it_may_open(crowded: Path, tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    done = tierscope("report", "-d", str(crowded), "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert out.stat().st_size > 0


def test_pins_stay_within_a_quarter_of_the_limit() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (OPEN_FILES, hard))
        assert pin_budget() == OPEN_FILES // 4
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_out_of_open_files_names_the_cause_and_compact(capsys: pytest.CaptureFixture[str]) -> None:
    # what the readers raised before: the file being opened when the slots ran out, blamed
    exc = OSError(errno.EMFILE, "Too many open files", "/data/ds/state/compactions.json")
    assert print_error(exc) == 1
    said = " ".join(capsys.readouterr().err.split())
    assert said.startswith("error: too many open files: this process may hold")
    assert "tierscope compact -d DATASET" in said
    assert "ulimit -n" in said
    assert "cannot write or read" not in said  # the file is not the cause


def test_a_polars_error_out_of_files_gets_the_same_line(capsys: pytest.CaptureFixture[str]) -> None:
    exc = pl.exceptions.ComputeError("failed to open part-1.parquet: Too many open files (os error 24)")
    print_error(exc)
    assert "tierscope compact" in capsys.readouterr().err


def test_collect_suggests_compact_past_the_threshold(tmp_path: Path) -> None:
    from tierscope.dataset.compact import SUGGEST_COMPACT_FILES

    root = tmp_path / "ds"
    write_run_files(root, "r", SUGGEST_COMPACT_FILES)  # with the runs table's file: 501 files
    log = tmp_path / "app.log"
    log.write_text("Train [worker/0], step 99999:loss:2.0, accuracy:0.5 (1.0 sec) 10.0 global_steps/s\n")
    done = tierscope("collect", "files", str(log), "-d", str(root), "--run-id", "r", "--settle", "0", "-q")
    assert done.returncode == 0, done.stderr
    said = " ".join(done.stderr.split())
    # 500 step files + 1 runs file before; the collect adds one step file, and one runs file for its facts
    assert "note: run r is stored in 50" in said
    assert f"tierscope compact -d {root}" in said


def test_collect_says_nothing_below_the_threshold(tmp_path: Path) -> None:
    root = tmp_path / "ds"
    log = tmp_path / "app.log"
    log.write_text("Train [worker/0], step 1:loss:2.0, accuracy:0.5 (1.0 sec) 10.0 global_steps/s\n")
    done = tierscope("collect", "files", str(log), "-d", str(root), "--run-id", "r", "--settle", "0", "-q")
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
