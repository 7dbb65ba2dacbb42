"""What a collect tells of files it does not read in a folder, and of one log's text stored under two runs."""

from __future__ import annotations

import os
import time
from pathlib import Path

from tests.support.ingest_helpers import collect, write_steps
from tierscope.collector.collect import collect_runs
from tierscope.collector.manifest import RunSpec
from tierscope.collector.runs import unread_in_folders, unread_note
from tierscope.dataset.store import Dataset


def test_a_folder_names_the_files_it_does_not_read(tmp_path: Path) -> None:
    folder = tmp_path / "job"
    folder.mkdir()
    write_steps(folder / "train.log", range(0, 300, 100))
    (folder / "train.log.1").write_text("rotated: read with train.log\n")
    (folder / "a.csv").write_text("step,loss\n1,2.3\n")
    (folder / "notes.md").write_text("# notes\n")
    (folder / ".DS_Store").write_bytes(b"\0")
    (folder / "run.json").write_text("{}")
    unread = unread_in_folders([folder, tmp_path / "job" / "train.log"])  # a file given by name is no folder
    # a.csv and notes.md only: the log, its rotated copy, run.json and a hidden file are not news
    assert [p.name for p in unread] == ["a.csv", "notes.md"]
    assert unread_note(unread) == (
        "skipped 2 files not named as logs (a.csv, notes.md; a log ends in .log, .jsonl, .txt, .gz, .json, .out, "
        ".err): collect them by name to read them"
    )
    assert unread_note([]) is None


def test_one_text_under_a_second_run_is_told_once(tmp_path: Path) -> None:
    log, copy = tmp_path / "a.log", tmp_path / "b.log"
    write_steps(log, range(0, 300, 100))
    copy.write_bytes(log.read_bytes())
    past = time.time() - 3600  # settled: read whole
    for p in (log, copy):
        os.utime(p, (past, past))
    ds = Dataset(tmp_path / "ds")
    collect(ds, log, run_id="r1")
    result = collect_runs(ds, [RunSpec(run_id="r2", tier="BASIC", files=[copy])])
    assert result.warnings == [
        f"{copy} (run r2) looks like the same log as {log} (same size, same first and last 4 KiB), collected as "
        "run r1: its records are now stored under both runs, and counted in each; if it is one run, collect it into "
        "a new dataset under one run id"
    ]
    # stored all the same (3 records each run): a user may mean it
    assert Dataset(ds.root).read("steps").group_by("run_id").len().sort("run_id")["len"].to_list() == [3, 3]
    # collected again: nothing new is read, nothing said again
    assert collect_runs(ds, [RunSpec(run_id="r2", tier="BASIC", files=[copy])]).warnings == []
    # another text under another run: nothing said
    other = tmp_path / "c.log"
    write_steps(other, range(0, 400, 100))
    os.utime(other, (past, past))
    assert collect_runs(ds, [RunSpec(run_id="r3", tier="BASIC", files=[other])]).warnings == []
