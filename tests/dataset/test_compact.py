"""Compaction: fewer files, same rows, and every record exactly once after a crash at any step."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

import tierscope.dataset.compact
from tests.support.ingest_helpers import collect, frame_of, stored_steps, write_steps
from tierscope.cli import app
from tierscope.dataset import journal
from tierscope.dataset.compact import compact
from tierscope.dataset.lock import locked
from tierscope.dataset.store import Dataset


class Crash(BaseException):
    """Stands for SIGKILL: raised past every ``except Exception``; nothing is cleaned up."""


def _dataset_of_small_files(tmp_path: Path) -> tuple[Dataset, Path]:
    ds = Dataset(tmp_path / "ds")
    log = tmp_path / "a.log"
    for start in range(1, 50, 10):  # 5 collects of 10 new lines: 5 step files, 5 runs rows
        write_steps(log, range(start, start + 10))
        collect(ds, log)
    return ds, log


def test_compact_merges_each_partition_into_one_file_with_the_same_rows(tmp_path: Path) -> None:
    ds, log = _dataset_of_small_files(tmp_path)
    other = tmp_path / "b.log"
    write_steps(other, [1000, 1001])
    collect(ds, other, run_id="other")  # a partition with one file: left alone
    before = {t: frame_of(ds, t) for t in ("steps", "runs")}
    assert len(ds.files("steps", "r")) == 5
    result = compact(ds)
    # steps/run_id=r: 5 -> 1. runs/run_id=r: one row per collect, deduplicated by key on append,
    # so it holds 1 file already. steps/run_id=other: 1 file.
    assert (result.partitions, result.files_before, result.files_after, result.rows) == (1, 5, 1, 50)
    assert len(ds.files("steps", "r")) == 1 and len(ds.stored_files("steps", "r")) == 1
    for table, frame in before.items():
        assert frame_of(ds, table).equals(frame)
    # Collecting after compaction still skips what is stored.
    write_steps(log, [51])
    assert collect(ds, log, reread=True) == [51]
    assert stored_steps(ds) == [*range(1, 52), 1000, 1001]
    assert compact(ds).partitions == 1 and compact(ds).partitions == 0


def _crash_on(monkeypatch: pytest.MonkeyPatch, name: str, call: int, after: bool) -> None:
    """Make ``tierscope.dataset.compact``'s ``name`` (a module attribute) crash at its ``call``-th call."""
    owner, attr = (journal, name.split(".")[1]) if name.startswith("journal.") else (tierscope.dataset.compact, name)
    real: Callable[..., object] = getattr(owner, attr)
    calls = 0

    def crashing(*args: object, **kwargs: object) -> object:
        nonlocal calls
        calls += 1
        if calls == call and not after:
            raise Crash(name)
        out = real(*args, **kwargs)
        if calls == call and after:
            raise Crash(name)
        return out

    monkeypatch.setattr(owner, attr, crashing)


# Every step of the protocol (tierscope.dataset.journal), crashed just before and just after.
STEPS = [
    ("write_temp", 1, True),  # merged file written under its temporary name
    ("commit", 1, False),
    ("commit", 1, True),  # step 1: staged as .merged-part-..., no entry names it
    ("journal.save", 1, False),  # entry not yet recorded
    ("journal.save", 1, True),  # step 2: entry recorded, replaced files still there
    ("journal.delete_replaced", 1, False),
    ("journal.delete_replaced", 1, True),  # step 3: replaced files gone, staged not renamed in
    ("commit", 2, False),
    ("commit", 2, True),  # step 4: merged file in place, entry still there
    ("journal.save", 2, False),
    ("journal.save", 2, True),  # done
]


@pytest.mark.parametrize(("name", "call", "after"), STEPS)
def test_a_crash_at_any_step_leaves_every_record_exactly_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, call: int, after: bool
) -> None:
    ds, _ = _dataset_of_small_files(tmp_path)
    with monkeypatch.context() as patch:
        _crash_on(patch, name, call, after)
        with pytest.raises(Crash):
            compact(ds)
    # A reader right after the crash (before any recovery) sees each record once.
    assert sorted(Dataset(ds.root).read("steps", columns=["step"])["step"]) == list(range(1, 51))
    # The next writer finishes or undoes the compaction: no temporary file, no entry left.
    with locked(ds, timeout=0):
        pass
    assert ds.temp_files() == [] and journal.load(ds.root).entries == []
    assert list(ds.root.glob(f"*/run_id=*/{journal.STAGED_PREFIX}*")) == []
    assert stored_steps(ds) == list(range(1, 51))
    assert len(ds.stored_files("steps")) in (1, 5)  # finished, or as before
    compact(ds)
    assert stored_steps(ds) == list(range(1, 51)) and len(ds.stored_files("steps")) == 1


def test_delete_half_done_hides_the_replaced_files_still_there(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ds, _ = _dataset_of_small_files(tmp_path)

    def delete_two(files: list[Path]) -> None:
        for path in files[:2]:
            path.unlink()
        raise Crash("after 2 of 5 deletions")

    with monkeypatch.context() as patch:
        patch.setattr(journal, "delete_replaced", delete_two)
        with pytest.raises(Crash):
            compact(ds)
    # 3 replaced files on disk beside the staged merged file, which part-* globs skip: a plain
    # reader sees 30 records (none twice); the journal hides the 3 from tierscope's readers.
    assert len(ds.stored_files("steps")) == 3 and len(_plain_steps(ds)) == 30
    assert journal.live_files(ds.root, journal.load(ds.root), ds.root / "steps", ds.stored_files("steps")) == [
        next(ds.root.glob(f"steps/run_id=r/{journal.STAGED_PREFIX}*"))
    ]
    # A reader finds the lock free (its holder died) and finishes the compaction.
    assert stored_steps(ds) == list(range(1, 51))
    assert len(ds.stored_files("steps")) == 1 and _plain_steps(ds) == list(range(1, 51))


def _plain_steps(ds: Dataset) -> list[int]:
    """The steps a reader that knows nothing of the journal sees (a plain polars glob), sorted, repeats kept."""
    files = sorted(ds.root.glob("steps/*/part-*.parquet"))
    if not files:
        return []
    return sorted(pl.scan_parquet(files, hive_partitioning=True).select("step").collect()["step"])


@pytest.mark.parametrize(("name", "call", "after"), STEPS)
def test_a_crash_at_any_step_never_shows_plain_readers_a_record_twice_and_any_command_completes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, call: int, after: bool
) -> None:
    """The old protocol renamed the merged file in before deleting, so a kill
    between the two left every record twice for plain readers until the next writer ran."""
    ds, _ = _dataset_of_small_files(tmp_path)
    with monkeypatch.context() as patch:
        _crash_on(patch, name, call, after)
        with pytest.raises(Crash):
            compact(ds)
    seen = _plain_steps(ds)
    assert len(seen) == len(set(seen))  # never twice, even before any command ran
    # Any command finishes it: here the read-only `doctor` (no --fix), as a user would run it.
    result = CliRunner().invoke(app, ["doctor", "-d", str(ds.root)])
    assert result.exit_code == 0, result.output
    assert _plain_steps(ds) == list(range(1, 51))
    assert journal.load(ds.root).entries == []


def test_readers_running_alongside_compactions_never_see_a_record_twice(tmp_path: Path) -> None:
    ds, log = _dataset_of_small_files(tmp_path)
    seen: list[list[int]] = []
    errors: list[BaseException] = []
    stop = threading.Event()

    def reader() -> None:
        while not stop.is_set():
            try:
                seen.append(stored_steps(ds))
            except BaseException as exc:  # reported below, with the test's assertion
                errors.append(exc)
                return

    thread = threading.Thread(target=reader)
    thread.start()
    try:
        for step in range(51, 71):  # 20 rounds: one new file, then a compaction of the partition
            write_steps(log, [step])
            collect(ds, log)
            compact(ds)
    finally:
        stop.set()
        thread.join()
    assert errors == []
    assert len(seen) > 20
    # Each read: steps 1..k for some k between 50 and 70, each once.
    for steps in seen:
        assert steps == list(range(1, len(steps) + 1)) and 50 <= len(steps) <= 70


def test_a_lost_journal_mid_compaction_loses_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The staged file's footer names what it replaces, so with the journal garbled after the
    deletions (then moved aside by `doctor --fix`) the compaction is still finished."""
    ds, _ = _dataset_of_small_files(tmp_path)
    with monkeypatch.context() as patch:
        _crash_on(patch, "journal.delete_replaced", 1, True)
        with pytest.raises(Crash):
            compact(ds)
    (ds.state_dir / "compactions.json").write_bytes(b"\xff garbage")
    assert _plain_steps(ds) == []  # every replaced file is gone; only the staged file holds the rows
    result = CliRunner().invoke(app, ["doctor", "-d", str(ds.root), "--fix"])
    assert result.exit_code == 0, result.output
    assert (ds.quarantine_dir / "state" / "compactions.json").exists()
    assert _plain_steps(ds) == list(range(1, 51)) and stored_steps(ds) == list(range(1, 51))


def test_compacted_steps_keep_log_order_grouped_by_task_and_the_first_file_s_place(tmp_path: Path) -> None:
    """Two appends of a master and a worker logging in turn: the merged file holds each task's records
    in log order (lines 1, 3 then 2, 4: grouped by task, stably) and is named at the first file's time."""
    from tierscope.dataset.schema import STEP_SCHEMA, conform
    from tierscope.dataset.store import part_stamp

    ds = Dataset(tmp_path / "ds")
    for offsets in ((1, 2), (3, 4)):
        rows = [{"run_id": "r", "role": ["master", "worker"][o % 2 == 0], "task_index": 0, "step": 100 * o,
                 "source": "a.log", "source_offset": o} for o in offsets]  # fmt: skip
        ds.append("steps", conform(pl.DataFrame(rows), STEP_SCHEMA))
    first = ds.files("steps")[0]
    compact(ds)
    (merged,) = ds.files("steps")
    assert pl.read_parquet(merged)["source_offset"].to_list() == [1, 3, 2, 4]
    assert part_stamp(merged) == part_stamp(first)
