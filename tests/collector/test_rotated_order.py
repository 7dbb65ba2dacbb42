"""A log rotated between two collects keeps the order it was written in.

cron collects ``app.log``; the writer goes on, then rotates it (``app.log`` -> ``app.log.1``, a new
``app.log``); the next collect reads the rest of the old file, then the new one. Each generation's
records are stored under the log's name; the new generation's lines are numbered on from the old
one's, so ``(source, source_offset)``, the order of a clock-less log, is the order of writing."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from tests.support.ingest_helpers import collect, step_line, write_steps
from tierscope.analysis import analyze
from tierscope.collector.collect import collect_runs
from tierscope.collector.manifest import RunSpec
from tierscope.dataset.store import Dataset


def _written_in_one_file(tmp_path: Path) -> dict:
    """The summary row of steps 1-200 written to one file, never rotated: the control."""
    log = tmp_path / "one" / "app.log"
    log.parent.mkdir()
    write_steps(log, range(1, 201))
    ds = Dataset(tmp_path / "one-ds")
    collect(ds, log)
    return analyze(ds).summary.row(0, named=True)


def _rotate(tmp_path: Path, copytruncate: bool = False) -> tuple[Path, Path, Dataset]:
    """Steps 1-100 collected, 101-130 written, the log rotated to app.log.1, 131-200 written to app.log, not yet
    collected. The rotation is logrotate's default (app.log renamed, a new file, a new inode, under its name) or
    ``copytruncate`` (app.log copied aside, then the same file cut to nothing and written on). Returns the
    folder, the log and the dataset."""
    folder = tmp_path / "logs"
    folder.mkdir()
    log = folder / "app.log"
    ds = Dataset(tmp_path / "ds")
    write_steps(log, range(1, 101))
    assert collect(ds, log) == [100]
    write_steps(log, range(101, 131))
    if copytruncate:
        (folder / "app.log.1").write_bytes(log.read_bytes())
        with log.open("r+") as fh:
            fh.truncate(0)
        write_steps(log, range(131, 201))
    else:
        log.rename(folder / "app.log.1")
        write_steps(log, range(131, 201), mode="w")
    return folder, log, ds


def _rotated(tmp_path: Path) -> tuple[Path, Dataset, list[str]]:
    """:func:`_rotate`, then collected again. Returns the folder, the dataset and the second collect's notes."""
    folder, log, ds = _rotate(tmp_path)
    result = collect_runs(ds, [RunSpec(run_id="r", tier="BASIC", files=[log])])
    [source] = result.sources
    assert source.lines == 30 + 70  # the old file's rest, then the new file
    return folder, ds, source.notes


def test_a_rotation_between_collects_keeps_the_order_of_writing(tmp_path: Path) -> None:
    folder, ds, notes = _rotated(tmp_path)
    steps = Dataset(ds.root).read("steps").sort("source", "source_offset")
    # Every record under the log's name; in (source, source_offset) order the steps are 1..200, once each:
    # the old file's lines 1-130, then the new file's 70 lines numbered 131-200 (130 + 1 .. 130 + 70).
    assert set(steps["source"]) == {str(folder / "app.log")}
    assert steps["step"].to_list() == list(range(1, 201))
    assert steps["source_offset"].to_list() == list(range(1, 201))
    assert any("numbered on from line 131" in n for n in notes), notes


def test_a_rotation_between_collects_reads_as_one_file(tmp_path: Path) -> None:
    _, ds, _ = _rotated(tmp_path)
    row = analyze(ds).summary.row(0, named=True)
    control = _written_in_one_file(tmp_path)
    # One segment, no restart: steps 1..200 at elapsed step/10 s, each line saying 10.0 global steps/s,
    # so 199 intervals of 1 step in 0.1 s: 10.0 global steps/s steady, as the same lines in one file read.
    assert (row["segments"], row["restarts"]) == (1, 0)
    assert round(row["steady_global_steps_per_s"], 6) == 10.0
    for key in ("segments", "restarts", "records", "steady_global_steps_per_s", "goodput", "lifetime_s"):
        assert row.get(key) == control.get(key), key


def test_the_next_collect_goes_on_numbering_the_new_file(tmp_path: Path) -> None:
    folder, ds, _ = _rotated(tmp_path)
    write_steps(folder / "app.log", range(201, 211))
    assert collect(ds, folder / "app.log") == [10]
    steps = Dataset(ds.root).read("steps").filter(pl.col("step") > 200).sort("source_offset")
    # the new file's lines 71-80, stored as 130 + 71 .. 130 + 80
    assert steps["source_offset"].to_list() == list(range(201, 211))


def test_a_reread_first_after_a_rotation_reads_the_rotated_remainder_and_numbers_on(tmp_path: Path) -> None:
    # `--reread` as the first collect after the rotation: the old file's unread lines 101-130 exist only in
    # app.log.1, so they are read as a normal collect reads them, then the new file numbered on from line 131.
    _, log, ds = _rotate(tmp_path)
    assert collect(ds, log, reread=True) == [30 + 70]  # the old file's rest, then the new file
    assert collect(ds, log) == [0]  # nothing left behind: the remainder is not owed to a later collect
    steps = Dataset(ds.root).read("steps").sort("source", "source_offset")
    # steps 1..200 once each, under the log's name, the new file's 70 lines numbered 130 + 1 .. 130 + 70
    assert set(steps["source"]) == {str(log)}
    assert steps["step"].to_list() == list(range(1, 201))
    assert steps["source_offset"].to_list() == list(range(1, 201))
    row = analyze(ds).summary.row(0, named=True)
    # as the same 200 lines in one file: one segment, no restart, 199 intervals of 1 step in 0.1 s = 10.0 steps/s
    assert (row["records"], row["segments"], row["restarts"]) == (200, 1, 0)
    assert round(row["steady_global_steps_per_s"], 6) == 10.0


def test_a_reread_of_an_unrotated_log_still_reads_it_from_its_start(tmp_path: Path) -> None:
    # the near miss: no rotation, so `--reread` reads all 130 lines of app.log again, every one already stored
    log = tmp_path / "app.log"
    ds = Dataset(tmp_path / "ds")
    write_steps(log, range(1, 101))
    assert collect(ds, log) == [100]
    write_steps(log, range(101, 131))
    assert collect(ds, log, reread=True) == [130]
    steps = Dataset(ds.root).read("steps").sort("source_offset")
    assert steps["step"].to_list() == list(range(1, 131))


#: A step line cut short: a reject, whose key holds its line number (the near-miss of a record).
_CUT = "Train [worker/0], step 15x2:loss:2.0 (1.0 sec) 10.0 global_steps/s\n"


def test_a_reread_after_the_rotation_was_collected_keeps_the_numbers_it_gave(tmp_path: Path) -> None:
    folder, ds, _ = _rotated(tmp_path)
    log = folder / "app.log"
    with log.open("a") as fh:
        fh.write(_CUT)
    write_steps(log, range(202, 211))
    assert collect(ds, log) == [10]
    # the new file's 80 lines again, numbered 130 + 1 .. 130 + 80 as before: the cut line is its line 71, the
    # log's 201, stored once (from 1 it would be stored again as line 71, and the steps under the older's numbers)
    assert collect(ds, log, reread=True) == [80]
    rejects = Dataset(ds.root).read("rejects")
    assert rejects["source_offset"].to_list() == [201]
    steps = Dataset(ds.root).read("steps").filter(pl.col("step") > 130).sort("source_offset")
    assert steps["source_offset"].to_list() == [*range(131, 201), *range(202, 211)]


@pytest.mark.parametrize("end", ["\n", "\r"])
def test_a_reread_of_a_log_never_rotated_numbers_from_1(tmp_path: Path, end: str) -> None:
    # the near miss: no generation before it, so the reread numbers from line 1 again, in a file of newlines or of
    # carriage returns alone, its last line read without its line end (settled): 1 + 1 + 1 lines, the cut one 2nd
    log = tmp_path / "app.log"
    log.write_bytes((step_line(1) + _CUT + step_line(3).rstrip("\n")).replace("\n", end).encode())
    ds = Dataset(tmp_path / "ds")
    assert collect(ds, log, settle_s=0.0) == [3]
    assert collect(ds, log, reread=True, settle_s=0.0) == [3]
    assert Dataset(ds.root).read("rejects")["source_offset"].to_list() == [2]
    steps = Dataset(ds.root).read("steps").sort("source_offset")
    assert steps.select("step", "source_offset").rows() == [(1, 1), (3, 3)]


def test_a_rename_rotation_is_said_so_not_truncated(tmp_path: Path) -> None:
    # logrotate's default: app.log renamed to app.log.1 and a new app.log created (a new inode under the name)
    _, _, notes = _rotated(tmp_path)
    said = " ".join(notes)
    assert "rename rotation: " in said and "truncated" not in said, notes


def test_a_copytruncate_rotation_is_said_so(tmp_path: Path) -> None:
    # logrotate's copytruncate: app.log copied to app.log.1, then the same file (its inode) cut to nothing; the
    # writer goes on in it. Steps 1-100 collected, 101-130 written, copied aside, 131-200 written after the cut.
    _, log, ds = _rotate(tmp_path, copytruncate=True)
    result = collect_runs(ds, [RunSpec(run_id="r", tier="BASIC", files=[log])])
    [source] = result.sources
    said = " ".join(source.notes)
    # the copy's unread 30 lines, then the 70 of the file cut and written again, numbered on from line 131
    assert source.lines == 30 + 70
    assert "copytruncate rotation: " in said and "numbered on from line 131" in said, source.notes
    # near miss: the same file cut with no copy aside is a truncation, and is said so
    with log.open("r+") as fh:
        fh.truncate(0)
    write_steps(log, range(201, 211))
    again = collect_runs(ds, [RunSpec(run_id="r", tier="BASIC", files=[log])])
    assert any("truncated" in n for n in again.sources[0].notes), again.sources[0].notes
