"""A collect with nothing new, told from the state (tierscope.collector.unchanged): it answers
exactly what the full collect answers, and steps aside whenever the full collect has work."""

from __future__ import annotations

import dataclasses
import gzip
import os
import re
from pathlib import Path

import pytest
from filelock import FileLock

from tests.support.ingest_helpers import write_steps
from tierscope.collector.collect import collect_runs
from tierscope.collector.manifest import RunSpec
from tierscope.collector.offsets import snapshot
from tierscope.collector.positions import OffsetStore
from tierscope.collector.sink import record_runs
from tierscope.collector.unchanged import collect_unchanged, facts_recorded
from tierscope.dataset import journal, rewind
from tierscope.dataset.errors import DatasetBusyError
from tierscope.dataset.lock import LOCK_NAME
from tierscope.dataset.store import Dataset


def _spec(*files: Path, tier: str = "BASIC") -> list[RunSpec]:
    return [RunSpec(run_id="r", tier=tier, files=list(files))]


def _as_dicts(result: object) -> list[dict[str, object]]:
    return [dataclasses.asdict(s) for s in result.sources]  # type: ignore[attr-defined]


@pytest.fixture
def collected(tmp_path: Path) -> tuple[Dataset, Path]:
    log = tmp_path / "a.log"
    write_steps(log, range(100, 110))
    ds = Dataset(tmp_path / "ds")
    assert collect_runs(ds, _spec(log)).total("steps") == 10
    return ds, log


def test_it_answers_what_the_full_collect_answers(collected: tuple[Dataset, Path]) -> None:
    ds, log = collected
    quick = collect_unchanged(ds.root, _spec(log))
    assert quick is not None
    runs_before = sorted(p.name for p in (ds.root / "runs").rglob("*.parquet"))
    full = collect_runs(Dataset(ds.root), _spec(log))
    # one file, 0 lines read, the format the first collect sniffed, no note: the same counts
    assert _as_dicts(quick) == _as_dicts(full)
    [counts] = quick.sources
    assert (counts.source, counts.run_id, counts.lines, counts.steps, counts.notes) == (str(log), "r", 0, 0, [])
    assert counts.format == "cloudml" and quick.errors == []
    # and the full collect stored no run row either (the facts were held)
    assert sorted(p.name for p in (ds.root / "runs").rglob("*.parquet")) == runs_before


def test_it_steps_aside_when_the_file_grew_or_holds_a_line_still_being_written(collected: tuple[Dataset, Path]) -> None:
    ds, log = collected
    write_steps(log, [110])
    assert collect_unchanged(ds.root, _spec(log)) is None
    assert collect_runs(ds, _spec(log)).total("steps") == 1
    assert collect_unchanged(ds.root, _spec(log)) is not None
    with log.open("a") as fh:
        fh.write("Train [worker/0], step 111:loss")  # no newline yet: the full collect decides
    assert collect_unchanged(ds.root, _spec(log)) is None


#: A held note's age in seconds: the one thing two collects a second apart may say otherwise.
_AGE = re.compile(r"changed \d+ s ago")


def _held_collect(tmp_path: Path) -> tuple[Dataset, Path]:
    """A dataset of a log of 10 records (lines 1-10) and a cut 11th line, collected while it may still grow."""
    log = tmp_path / "a.log"
    ds = Dataset(tmp_path / "ds")
    log.touch()
    collect_runs(ds, _spec(log))  # cron's first collect: the job's log just created, followed from then on
    write_steps(log, range(100, 110))
    with log.open("a") as fh:
        fh.write("Train [worker/0], step 111:loss")  # a writer half way through its line
    result = collect_runs(ds, _spec(log))  # the default settle time, 300 s: the file changed just now
    assert (result.total("steps"), result.sources[0].lines) == (10, 10)  # line 11 held back, not counted
    return ds, log


def test_a_file_ending_in_lines_held_back_has_nothing_new_until_it_changes(tmp_path: Path) -> None:
    ds, log = _held_collect(tmp_path)
    quick = collect_unchanged(ds.root, _spec(log))
    assert quick is not None  # answered from the state: no read of the file
    [counts] = quick.sources
    assert (counts.lines, counts.steps) == (0, 0)
    [note] = counts.notes
    assert "its last line (11) may still be completed" in note and "--settle 300 s" in note, note
    assert "or now with --settle 0" in note, note
    # what the full collect answers too (it holds the line again), but for the seconds since the file changed
    full = collect_runs(Dataset(ds.root), _spec(log))
    assert [_AGE.sub("", n) for n in full.sources[0].notes] == [_AGE.sub("", note)]
    assert full.sources[0].lines == 0 and full.total("steps") == 0
    # the line's end written: the file grew, the full collect reads it
    with log.open("a") as fh:
        fh.write(":0.071, accuracy:0.961 (4.390 sec) 22.781 global_steps/s, 5.695 local_steps/s\n")
    assert collect_unchanged(ds.root, _spec(log)) is None
    assert collect_runs(Dataset(ds.root), _spec(log)).total("steps") == 1
    assert collect_unchanged(ds.root, _spec(log)).sources[0].notes == []  # type: ignore[union-attr]


def test_lines_held_back_are_read_once_the_file_settles(tmp_path: Path) -> None:
    ds, log = _held_collect(tmp_path)
    assert collect_unchanged(ds.root, _spec(log), settle_s=3600) is not None
    # not changed for the settle time (0 s: the job has ended): the full collect reads the cut line
    assert collect_unchanged(ds.root, _spec(log), settle_s=0) is None
    full = collect_runs(Dataset(ds.root), _spec(log), settle_s=0)
    # line 11, "...step 111:loss": a record cut off, kept aside as a reject
    assert (full.sources[0].lines, full.total("steps"), full.total("rejects")) == (1, 0, 1)
    quick = collect_unchanged(ds.root, _spec(log))
    assert quick is not None and quick.sources[0].notes == []


def test_a_file_touched_since_its_lines_were_held_back_is_read(tmp_path: Path) -> None:
    ds, log = _held_collect(tmp_path)
    # the same size, another modification time: it may have been rewritten in place
    later = log.stat().st_mtime_ns + 1_000_000
    os.utime(log, ns=(later, later))
    assert collect_unchanged(ds.root, _spec(log)) is None


def test_a_read_stopped_short_of_the_end_is_no_held_tail(tmp_path: Path) -> None:
    log = tmp_path / "a.log"
    write_steps(log, range(100, 110))
    ds = Dataset(tmp_path / "ds")
    collect_runs(ds, _spec(log), settle_s=0)
    offsets = OffsetStore(ds.state_dir)
    state = offsets.get(log, "r")
    assert state is not None and state.held_lines is None and state.offset == log.stat().st_size
    # as a read stopped by --max-seconds leaves it: the position after line 9, the file's last line unread
    last = len(log.read_bytes().splitlines(keepends=True)[-1])
    with log.open("rb") as raw:
        stopped = snapshot(raw, log, "r", state.offset - last, 9, False, state.format)
    offsets.put(dataclasses.replace(stopped, carry=state.carry))
    assert collect_unchanged(ds.root, _spec(log)) is None  # line 10 is to be read, not held
    # the near miss: the same position marked as holding that line is nothing new
    offsets.put(dataclasses.replace(stopped, carry=state.carry, held_lines=1))
    assert collect_unchanged(ds.root, _spec(log)) is not None


def test_it_steps_aside_for_new_run_facts_and_then_knows_them(collected: tuple[Dataset, Path]) -> None:
    ds, log = collected
    assert collect_unchanged(ds.root, _spec(log, tier="STANDARD_1")) is None
    collect_runs(ds, _spec(log, tier="STANDARD_1"))
    assert collect_unchanged(ds.root, _spec(log, tier="STANDARD_1")) is not None
    # the BASIC row is still held, but the runs table changed since it was noted: the full path again
    assert collect_unchanged(ds.root, _spec(log)) is None


def test_it_steps_aside_when_the_runs_table_changed_behind_it(collected: tuple[Dataset, Path]) -> None:
    ds, log = collected
    [part] = (ds.root / "runs").rglob("part-*.parquet")
    part.unlink()  # e.g. doctor --fix moved it to quarantine: the run's facts must be stored again
    assert collect_unchanged(ds.root, _spec(log)) is None
    collect_runs(ds, _spec(log))
    assert len(list((ds.root / "runs").rglob("part-*.parquet"))) == 1


@pytest.mark.parametrize("leftover", ["temp data file", "staged merged file", "journal entry", "rewind", "bad state"])
def test_it_leaves_recovery_to_the_full_collect(collected: tuple[Dataset, Path], leftover: str) -> None:
    ds, log = collected
    [partition] = (ds.root / "steps").iterdir()
    if leftover == "temp data file":
        (partition / ".tmp-part-x.parquet").write_bytes(b"half")
    elif leftover == "staged merged file":
        (partition / f"{journal.STAGED_PREFIX}part-x.parquet").write_bytes(b"half")
    elif leftover == "journal entry":
        entry = journal.Entry(f"steps/{partition.name}", "part-m.parquet", ("part-gone.parquet",))
        journal.save(ds.root, journal.Journal(entries=[entry]))
    elif leftover == "rewind":
        rewind.add(ds.root, [rewind.Rewind("r", None, "quarantine/x")])
    else:
        (ds.state_dir / "other.json").write_text("{not json")
    assert collect_unchanged(ds.root, _spec(log)) is None
    collect_runs(ds, _spec(log))  # recovers, as every collect does
    assert collect_unchanged(ds.root, _spec(log)) is not None


def test_it_steps_aside_for_gzip_event_files_reread_and_given_formats(tmp_path: Path) -> None:
    gz = tmp_path / "a.log.gz"
    with gzip.open(gz, "wt") as fh:
        fh.write("Train [worker/0], step 100:loss:2.0, accuracy:0.5 (1.0 sec) 10.0 global_steps/s\n")
    ds = Dataset(tmp_path / "ds")
    collect_runs(ds, _spec(gz))
    assert collect_unchanged(ds.root, _spec(gz)) is None
    plain = tmp_path / "b.log"
    write_steps(plain, [5])
    collect_runs(ds, _spec(plain))
    assert collect_unchanged(ds.root, _spec(plain)) is not None
    assert collect_unchanged(ds.root, _spec(plain), reread=True) is None
    assert collect_unchanged(ds.root, [dataclasses.replace(_spec(plain)[0], format="cloudml")]) is None
    assert collect_unchanged(tmp_path / "never-collected", _spec(plain)) is None


def test_a_whole_file_export_unchanged_says_so(tmp_path: Path) -> None:
    export = tmp_path / "export.csv"  # a Cloud console CSV download: read whole or not at all
    export.write_text(
        "timestamp,severity,insertId,resource.labels.task_name,textPayload\n"
        "2024-04-12T08:15:00.000000Z,INFO,e1,master-replica-0,"
        '"Train [master/0], step 100:loss:2.0, accuracy:0.5 (1.0 sec) 10.0 global_steps/s, 10.0 local_steps/s"\n'
    )
    ds = Dataset(tmp_path / "ds")
    first = collect_runs(ds, _spec(export))
    assert first.sources[0].format == "logging-csv" and first.total("steps") == 1
    quick = collect_unchanged(ds.root, _spec(export))
    full = collect_runs(Dataset(ds.root), _spec(export))
    assert quick is not None and _as_dicts(quick) == _as_dicts(full)
    assert quick.sources[0].notes == ["unchanged"] and quick.sources[0].format is None


def test_it_waits_for_the_lock_like_the_full_collect(collected: tuple[Dataset, Path]) -> None:
    ds, log = collected
    assert ds.lock_path == ds.root / LOCK_NAME
    with FileLock(ds.lock_path), pytest.raises(DatasetBusyError, match="locked by another collect"):
        collect_unchanged(ds.root, _spec(log), lock_timeout=0)


def test_its_note_is_a_cache_doctor_does_not_count_and_a_bad_one_costs_only_time(
    collected: tuple[Dataset, Path],
) -> None:
    from tierscope.collector.unchanged import RECORDED
    from tierscope.dataset.state import StateStore

    ds, log = collected
    assert StateStore(ds.state_dir).names() == ["files"]  # no state document more than before
    assert [p.name for p in ds.state_dir.glob("*.json")] == ["files.json"]  # doctor counts these
    (ds.state_dir / RECORDED).write_bytes(b"\xff not json")
    assert collect_unchanged(ds.root, _spec(log)) is None
    assert collect_runs(ds, _spec(log)).total("steps") == 0
    assert collect_unchanged(ds.root, _spec(log)) is not None


@pytest.mark.parametrize("kind", ["fifo", "link", "huge"])
def test_a_hostile_note_is_never_read_and_the_full_collect_replaces_it(
    collected: tuple[Dataset, Path], kind: str
) -> None:
    """A note that is a FIFO (opening or reading it would wait for a writer forever), a symbolic link
    (to /dev/zero it would be read forever; here to a copy of the good note, which must not be
    followed either) or a sparse file of 1 GiB (read whole before: 1 GiB of memory for a cache) is
    no note: the fast path steps aside at once, and the full collect writes a regular note again."""
    import os
    import threading

    from tierscope.collector.unchanged import RECORDED

    ds, log = collected
    note = ds.state_dir / RECORDED
    good = note.read_bytes()
    note.unlink()
    if kind == "fifo":
        os.mkfifo(note)
    elif kind == "link":
        (ds.root / "copy").write_bytes(good)
        note.symlink_to(ds.root / "copy")
    else:
        with note.open("wb") as fh:
            fh.truncate(1 << 30)
    answers: list[object] = []
    worker = threading.Thread(target=lambda: answers.append(collect_unchanged(ds.root, _spec(log))), daemon=True)
    worker.start()
    worker.join(timeout=60)
    assert answers == [None]  # answered (not blocked), and the full path is taken
    assert collect_runs(ds, _spec(log)).total("steps") == 0  # 10 records stored once, by the first collect
    assert not note.is_symlink() and note.read_bytes().startswith(b"{")
    assert collect_unchanged(ds.root, _spec(log)) is not None


def test_facts_noted_are_facts_record_runs_would_not_append(collected: tuple[Dataset, Path]) -> None:
    # The collect of new lines skips appending the run facts when the note says they are held:
    # exactly when appending them would store nothing.
    ds, log = collected
    write_steps(log, [110, 111])
    assert facts_recorded(ds.root, _spec(log))
    assert record_runs(ds, _spec(log)).stored == 0
    runs_before = sorted(p.name for p in (ds.root / "runs").rglob("*.parquet"))
    assert collect_runs(ds, _spec(log)).total("steps") == 2
    assert sorted(p.name for p in (ds.root / "runs").rglob("*.parquet")) == runs_before
    # new facts: not held, and the collect of the next lines stores them (one more row, tier STANDARD_1)
    write_steps(log, [112])
    assert not facts_recorded(ds.root, _spec(log, tier="STANDARD_1"))
    assert collect_runs(ds, _spec(log, tier="STANDARD_1")).total("steps") == 1
    assert ds.read("runs").sort("collected_at").get_column("tier").to_list() == ["BASIC", "STANDARD_1"]
    assert facts_recorded(ds.root, _spec(log, tier="STANDARD_1"))
    # two runs of one id: which facts end up newest is record_runs' to say
    two = [*_spec(log, tier="STANDARD_1"), *_spec(log, tier="STANDARD_1")]
    assert not facts_recorded(ds.root, two)
