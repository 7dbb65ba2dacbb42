"""Readers beside a busy compaction, damaged bytes, lost records after --fix."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from tests.support.ingest_helpers import collect, stored_steps, write_steps
from tierscope.analysis import AnalysisOptions, analyze
from tierscope.cli import app
from tierscope.dataset import doctor, journal
from tierscope.dataset.errors import DatasetCorruptError
from tierscope.dataset.store import Dataset, named_digest

runner = CliRunner()

# Appends one new step file to each of two runs, then compacts, over and over, until told to stop.
COMPACTOR = """
import sys, time
from pathlib import Path
import polars as pl
from tierscope.dataset.compact import compact
from tierscope.dataset.store import Dataset
ds, stop = Dataset(sys.argv[1]), Path(sys.argv[2])
step, rounds = 1000, 0
while not stop.exists():
    for run in ("a", "b"):
        ds.append("steps", pl.DataFrame({"run_id": [run], "tier": ["BASIC"], "role": ["worker"], "task_index": [0],
            "step": [step], "elapsed_s": [step / 10], "interval_s": [0.1], "global_steps_per_s": [10.0]}))
    step += 1
    compact(ds, lock_timeout=10)
    rounds += 1
print(rounds, flush=True)
"""


def test_summary_50_times_while_compact_runs_in_a_loop_never_fails(tmp_path: Path) -> None:
    """Item 2: `summary` died with FileNotFoundError in 6 of 19 runs while a compaction deleted
    the files it had listed. Readers now pin the files they list and list again if one is gone."""
    ds = Dataset(tmp_path / "ds")
    for run in ("a", "b"):
        log = tmp_path / f"{run}.log"
        for start in range(1, 200, 50):  # 4 files per run to start with
            write_steps(log, range(start, start + 50))
            collect(ds, log, run_id=run)
    script = tmp_path / "compactor.py"
    script.write_text(COMPACTOR)
    stop = tmp_path / "stop"
    proc = subprocess.Popen(
        [sys.executable, str(script), str(ds.root), str(stop)], stdout=subprocess.PIPE, text=True, env=dict(os.environ)
    )
    failures: list[str] = []
    # no bound on the readers' time (the machine's load sets it, not the code); a bound on the wait
    # for the compactor only, so a compactor that never runs fails the test instead of hanging it
    up_by = time.monotonic() + 300
    try:
        while len(list(ds.root.glob("steps/run_id=a/part-*"))) > 1 or not journal.load(ds.root).generation:
            assert time.monotonic() < up_by, "the compactor never compacted within 300 s"
            time.sleep(0.02)  # the compactor is up and has compacted once
        for _ in range(50):
            try:  # the library behind `tierscope summary`, a fresh Dataset each time as each command has
                frame = analyze(Dataset(ds.root), AnalysisOptions()).summary
                assert frame["run_id"].to_list() == ["a", "b"]
            except Exception as exc:  # counted, and shown below
                failures.append(f"{type(exc).__name__}: {exc}")
    finally:
        stop.touch()
        out, _ = proc.communicate(timeout=300)
    rounds = int(out.strip())
    assert failures == []
    # The compactor really raced the readers: it merged new files all along.
    assert rounds >= 10, rounds


def _one_file_dataset(tmp_path: Path) -> tuple[Dataset, Path, pl.DataFrame]:
    ds = Dataset(tmp_path / "ds")
    log = tmp_path / "a.log"
    write_steps(log, range(1, 301))
    collect(ds, log)
    (part,) = ds.files("steps")
    return ds, part, Dataset(ds.root).read("steps")


def test_100_flipped_bytes_are_each_named_or_harmless_never_silently_wrong(tmp_path: Path) -> None:
    """Item 3: 16 flipped bytes silently changed the values in 258 of 398 positions and
    `doctor` said healthy. Every data file now carries the SHA-256 of its bytes in its name
    (checked by every reader) and CRC checksums in its pages (checked by `doctor`)."""
    ds, part, truth = _one_file_dataset(tmp_path)
    original = part.read_bytes()
    assert named_digest(part) is not None
    named = harmless = 0
    for i in range(100):
        position = i * (len(original) - 1) // 99  # first byte to last, evenly
        damaged = bytearray(original)
        damaged[position] ^= 0xFF
        part.write_bytes(bytes(damaged))
        try:
            frame = Dataset(ds.root).read("steps")
        except DatasetCorruptError as exc:
            message = str(exc)
            assert str(part) in message and "tierscope doctor" in message and "--fix" in message
            assert "\n" not in message
            named += 1
        else:
            assert frame.equals(truth), f"flip at byte {position} changed the values silently"
            harmless += 1
        report = doctor.check(Dataset(ds.root))
        assert [p.path for p in report.problems] == [part], position
    part.write_bytes(original)
    assert named == 100 and harmless == 0  # the digest covers every byte
    assert Dataset(ds.root).read("steps").equals(truth)


def test_pages_carry_checksums_that_doctor_verifies(tmp_path: Path) -> None:
    """A file without a digest in its name (written before digests) still has its pages checked."""
    ds, part, _ = _one_file_dataset(tmp_path)
    # pyarrow writes a page's CRC in its header: a flip inside the data makes verification fail.
    legacy = part.with_name("part-20260101T000000Z-0123456789ab.parquet")
    part.rename(legacy)
    meta = pq.read_metadata(legacy)
    column = meta.row_group(0).column(meta.schema.names.index("loss"))
    start = column.data_page_offset
    damaged = bytearray(legacy.read_bytes())
    damaged[start + column.total_compressed_size - 5] ^= 0x01  # inside the last data page of `loss`
    legacy.write_bytes(bytes(damaged))
    (problem,) = doctor.check(Dataset(ds.root)).problems
    assert problem.path == legacy and "damaged data pages" in problem.problem


def _many_files_dataset(tmp_path: Path) -> tuple[Dataset, Path]:
    """20,000 step lines of one log read in batches: several step files of run r."""
    ds = Dataset(tmp_path / "ds")
    log = tmp_path / "a.log"
    write_steps(log, range(1, 20_001))
    collect(ds, log, batch_bytes=500_000)
    assert len(ds.files("steps")) >= 4
    return ds, log


@pytest.mark.parametrize("damage", ["truncated", "flipped"])
def test_doctor_fix_rewinds_the_offsets_so_the_next_collect_restores_every_record(tmp_path: Path, damage: str) -> None:
    """Item 8: after quarantining a truncated file the run showed 15,000 of 20,000 records and
    the next collect read nothing, since the offsets said those lines were read."""
    ds, log = _many_files_dataset(tmp_path)
    victim = ds.files("steps")[1]
    held = pq.read_metadata(victim).num_rows
    data = victim.read_bytes()
    if damage == "truncated":
        victim.write_bytes(data[:-40])  # footer cut off: the sources it held are unknown
    else:
        flipped = bytearray(data)
        flipped[len(data) // 2] ^= 0xFF  # pages damaged, footer intact: it lists its source
        victim.write_bytes(bytes(flipped))
    result = runner.invoke(app, ["doctor", "-d", str(ds.root), "--fix"])
    assert result.exit_code == 0, result.output
    what = "every source" if damage == "truncated" else str(log)
    assert f"note: {victim} held records of run 'r': the next collect reads {what} of run 'r' again" in result.output
    assert len(stored_steps(ds)) == 20_000 - held
    again = runner.invoke(app, ["collect", "files", str(log), "-d", str(ds.root), "--run-id", "r"])
    assert again.exit_code == 0, again.output
    # Read again whole: exactly the quarantined file's records are new, the rest are duplicates.
    assert f"read 20000 lines: stored {held} step records" in again.output.replace(",", "")
    assert stored_steps(ds) == list(range(1, 20_001))
    assert not (ds.state_dir / "rewinds.json").exists()
    quiet = runner.invoke(app, ["collect", "files", str(log), "-d", str(ds.root), "--run-id", "r"])
    assert "read 0 lines" in quiet.output.replace(",", "")


@pytest.mark.parametrize("kind", ["fifo", "directory"])
def test_a_state_document_that_is_no_regular_file_is_moved_aside_not_waited_on(tmp_path: Path, kind: str) -> None:
    """``state/files.json`` replaced by a FIFO (reading it waited for a writer forever, in the
    nothing-new check and in the full collect alike) or a directory (a traceback): it is a
    corrupt state document like one that does not parse, moved to quarantine with a notice, and
    the file is read again from its start: 3 steps, all already stored, so 0 new and 3 duplicates."""
    import threading

    from tierscope.collector.collect import collect_runs
    from tierscope.collector.manifest import RunSpec
    from tierscope.collector.unchanged import collect_unchanged

    log = tmp_path / "a.log"
    write_steps(log, [100, 200, 300])
    ds = Dataset(tmp_path / "ds")
    collect(ds, log)
    state = ds.state_dir / "files.json"
    state.unlink()
    if kind == "fifo":
        os.mkfifo(state)
    else:
        state.mkdir()
    runs = [RunSpec(run_id="r", tier="BASIC", files=[log])]
    answers: list[object] = []

    def both() -> None:
        answers.append(collect_unchanged(ds.root, runs))
        answers.append(collect_runs(ds, runs))

    worker = threading.Thread(target=both, daemon=True)
    worker.start()
    worker.join(timeout=120)
    assert len(answers) == 2 and answers[0] is None  # not blocked; the full path taken
    [counts] = answers[1].sources  # type: ignore[attr-defined]
    assert (counts.lines, counts.steps, counts.duplicates) == (3, 0, 3)
    assert [n for n in ds.notices if "files.json is not a regular file" in n and "quarantine" in n]
    assert state.is_file() and stored_steps(ds) == [100, 200, 300]
