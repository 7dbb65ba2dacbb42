"""Incremental reading: idempotence, growth, rotation, truncation, gzip, unterminated lines."""

from __future__ import annotations

import gzip
import os
from pathlib import Path

import pytest

from tests.support.ingest_helpers import collect, following, frame_of, step_line, stored_steps, write_steps
from tierscope.collector.positions import OffsetStore
from tierscope.dataset.store import Dataset


@pytest.fixture
def ds(tmp_path: Path) -> Dataset:
    return Dataset(tmp_path / "ds")


def test_same_collect_three_times_equals_once(tmp_path: Path, ds: Dataset) -> None:
    log = tmp_path / "a.log"
    write_steps(log, range(1, 101))
    with log.open("a") as fh:
        fh.write("Train [worker/0], step 7:loss:oops\n")  # one reject
        fh.write("checkpoint saved\n")  # one skipped line
    once = Dataset(tmp_path / "once")
    collect(once, log)
    assert collect(ds, log) == [102]
    files_after_first = sorted(p.name for p in ds.root.rglob("*.parquet"))
    # The second and third collects read nothing (offsets) ...
    assert collect(ds, log) == [0] and collect(ds, log) == [0]
    # ... and even re-reading from the start adds nothing (identity by content).
    assert collect(ds, log, reread=True) == [102]
    assert sorted(p.name for p in ds.root.rglob("*.parquet")) == files_after_first
    for table in ("steps", "events", "rejects"):
        assert frame_of(ds, table).equals(frame_of(once, table))
    assert stored_steps(ds) == list(range(1, 101))
    assert frame_of(ds, "rejects")["source_offset"].to_list() == [101]


def test_growth_is_read_from_where_the_last_collect_stopped(tmp_path: Path, ds: Dataset) -> None:
    log = tmp_path / "a.log"
    write_steps(log, range(1, 11))
    assert collect(ds, log) == [10]
    write_steps(log, range(11, 16))
    # 5 new lines read, not 15: the first 10 are skipped by offset.
    assert collect(ds, log) == [5]
    assert stored_steps(ds) == list(range(1, 16))
    state = OffsetStore(ds.state_dir).get(log, "r")
    assert state is not None
    # 15 lines; offset = byte length of the file (every line is complete).
    assert (state.line, state.offset) == (15, log.stat().st_size)
    # Line numbers continue: step 11 is line 11.
    steps = frame_of(ds, "steps")
    assert steps.filter(steps["step"] == 11)["source_offset"].item() == 11


def test_rename_rotation_reads_the_unread_tail_of_the_old_file_then_the_new_one(tmp_path: Path, ds: Dataset) -> None:
    log = tmp_path / "app.log"
    write_steps(log, range(1, 11))
    collect(ds, log)
    write_steps(log, range(11, 14))  # written after the collect, before rotation
    log.rename(tmp_path / "app.log.1")
    write_steps(log, range(14, 20), mode="w")
    # 3 lines from app.log.1's tail + 6 from the new app.log
    assert collect(ds, log) == [9]
    assert stored_steps(ds) == list(range(1, 20))
    write_steps(log, range(20, 22))
    assert collect(ds, log) == [2]
    assert stored_steps(ds) == list(range(1, 22))


def test_copytruncate_rotation_finds_the_copy(tmp_path: Path, ds: Dataset) -> None:
    log = tmp_path / "app.log"
    write_steps(log, range(1, 6))
    collect(ds, log)
    write_steps(log, range(6, 9))
    (tmp_path / "app.log-20240101").write_bytes(log.read_bytes())
    inode = log.stat().st_ino
    with log.open("r+") as fh:
        fh.truncate(0)
    write_steps(log, range(9, 11))
    assert log.stat().st_ino == inode  # same file, truncated
    assert collect(ds, log) == [3 + 2]
    assert stored_steps(ds) == list(range(1, 11))


def test_file_rewritten_in_place_longer_than_before_is_read_from_its_start(tmp_path: Path, ds: Dataset) -> None:
    # Same inode, size grew past the old offset, but the bytes are different: only the
    # fingerprints can tell. Reading from the old offset would lose steps 100..104.
    log = tmp_path / "a.log"
    write_steps(log, range(1, 4))
    collect(ds, log)
    write_steps(log, range(100, 110), mode="w")
    assert collect(ds, log) == [10]
    assert stored_steps(ds) == [1, 2, 3, *range(100, 110)]


def test_inode_reused_with_same_first_lines_is_caught_by_the_tail_fingerprint(tmp_path: Path, ds: Dataset) -> None:
    log = tmp_path / "a.log"
    write_steps(log, range(1, 6))
    collect(ds, log)
    # A new file with the same first 3 lines but different lines 4-5, then more.
    os.unlink(log)
    write_steps(log, [1, 2, 3, 40, 50, 60, 70])
    assert collect(ds, log) == [7]
    assert stored_steps(ds) == [1, 2, 3, 4, 5, 40, 50, 60, 70]


def test_gzip_is_read_whole_once(tmp_path: Path, ds: Dataset) -> None:
    gz = tmp_path / "old.log.gz"
    with gzip.open(gz, "wt") as fh:
        fh.writelines(step_line(s) for s in range(1, 51))
    assert collect(ds, gz) == [50]
    assert collect(ds, gz) == [0]
    with gzip.open(gz, "wt") as fh:  # replaced by a different archive: read again, whole
        fh.writelines(step_line(s) for s in range(1, 61))
    assert collect(ds, gz) == [60]
    assert stored_steps(ds) == list(range(1, 61))


def test_unterminated_last_line_waits_for_its_newline(tmp_path: Path, ds: Dataset) -> None:
    log = tmp_path / "a.log"
    following(ds, log)
    write_steps(log, range(1, 3))
    half = step_line(3)[:30]
    with log.open("a") as fh:
        fh.write(half)
    assert collect(ds, log) == [2]  # the half line is neither stored nor rejected
    assert frame_of(ds, "rejects").height == 0
    with log.open("a") as fh:
        fh.write(step_line(3)[30:])
    assert collect(ds, log) == [1]
    assert stored_steps(ds) == [1, 2, 3]
    assert frame_of(ds, "rejects").height == 0


def test_unterminated_line_that_reads_as_a_record_waits_for_its_newline(tmp_path: Path, ds: Dataset) -> None:
    # TensorFlow's StepCounterHook line `INFO:tensorflow:global_step/sec: 12.2695` (tensorflow/models issue 4090,
    # cifar10_estimator's log, 2018; ../shared/cases case08), caught by a collect while its writer had written
    # 'global_step/sec: 12.2' of it: read then, it is a whole record of 12.2 steps/s, and '695' a line of its own.
    log = tmp_path / "a.log"
    following(ds, log)
    log.write_text(step_line(1) + step_line(2).rstrip("\n"))
    assert collect(ds, log) == [1]  # a 2016 step line without its newline waits too
    assert stored_steps(ds) == [1]
    hook, hooks = tmp_path / "hook.log", Dataset(tmp_path / "hooks")
    following(hooks, hook)
    hook.write_text("INFO:tensorflow:global_step/sec: 12.2")
    assert collect(hooks, hook) == [0]
    assert not hooks.files("steps", "r")
    with hook.open("a") as fh:
        fh.write("695\n")
    # whole now, but a report the file ends in while it may still grow: its loss line may come next (the Estimator
    # prints the rate before the record it belongs to), so it too waits, for that line or for the file to settle
    assert collect(hooks, hook) == [0]
    assert not hooks.files("steps", "r")
    assert collect(hooks, hook, settle_s=0.0) == [1]
    assert frame_of(hooks, "steps")["global_steps_per_s"].to_list() == [12.2695]  # the whole line's rate, once
    assert frame_of(hooks, "rejects").height == 0
    # A job that ended without the last newline: once the file has not changed for the settle time, read as it is.
    assert collect(ds, log, settle_s=0.0) == [1]
    assert stored_steps(ds) == [1, 2]


def test_unterminated_garbage_is_taken_once_the_file_settles(tmp_path: Path, ds: Dataset) -> None:
    log = tmp_path / "a.log"
    following(ds, log)
    log.write_text(step_line(1) + "Train [worker/0], step 2:lo")
    assert collect(ds, log) == [1]
    assert collect(ds, log, settle_s=0.0) == [1]
    assert frame_of(ds, "rejects")["source_offset"].to_list() == [2]
    assert collect(ds, log, settle_s=0.0) == [0]
