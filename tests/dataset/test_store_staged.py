"""Staged appends (a batch written under temporary names, committed later on another thread)
and the writer's encodings: each record stored once, visible only once committed, in log order."""

from __future__ import annotations

import errno
import threading
import time
from pathlib import Path

import polars as pl
import pyarrow.parquet as pq
import pytest

import tierscope.dataset.store as store
from tests.support.ingest_helpers import collect, stored_steps, write_steps
from tierscope.dataset.store import Dataset, Staged


def steps(numbers: range) -> pl.DataFrame:
    """Step records of run r1, task 0, one per step in ``numbers`` (elapsed = step / 10 s)."""
    return pl.DataFrame(
        {"run_id": "r1", "role": "worker", "task_index": 0, "step": list(numbers), "source": "a.log"}
    ).with_columns(elapsed_s=pl.col("step") / 10, source_offset=pl.col("step"))


def test_staged_files_are_invisible_until_committed_and_then_in_the_order_written(tmp_path: Path) -> None:
    ds = Dataset(tmp_path)
    first, second = Staged(), Staged()
    assert ds.append("steps", steps(range(1, 11)), first).stored == 10
    # Steps 11-20 lie beyond the staged 1-10: nothing to read back, no wait for the commit.
    assert ds.append("steps", steps(range(11, 21)), second).stored == 10
    assert ds.files("steps") == [] and len(ds.temp_files()) == 2
    ds.commit_staged(first)
    ds.commit_staged(second)
    assert Dataset(tmp_path).read("steps")["step"].to_list() == list(range(1, 21))  # log order, no sort
    assert ds.temp_files() == []


def test_an_overlapping_append_waits_for_the_staged_commit_and_skips_what_it_holds(tmp_path: Path) -> None:
    ds = Dataset(tmp_path)
    first = Staged()
    ds.append("steps", steps(range(1, 11)), first)
    committer = threading.Timer(0.3, ds.commit_staged, [first])
    committer.start()
    started = time.monotonic()
    # Steps 5-15 meet the staged 1-10: the append waits for that commit, then reads 5-10 back.
    got = ds.append("steps", steps(range(5, 16)))
    committer.join()
    assert time.monotonic() - started >= 0.25
    assert (got.stored, got.duplicates) == (5, 6)  # 11-15 new; 5..10 are 6 held
    assert stored_steps(ds) == list(range(1, 16))


def test_an_overlapping_append_into_its_own_staged_files_commits_them_first(tmp_path: Path) -> None:
    ds = Dataset(tmp_path)
    own = Staged()
    ds.append("steps", steps(range(1, 11)), own)
    got = ds.append("steps", steps(range(5, 13)), own)  # nobody else would commit 1-10: no deadlock
    assert (got.stored, got.duplicates) == (2, 6)
    ds.commit_staged(own)
    assert stored_steps(ds) == list(range(1, 13))


def test_discarded_staged_files_leave_nothing(tmp_path: Path) -> None:
    ds = Dataset(tmp_path)
    staged = Staged()
    ds.append("steps", steps(range(1, 11)), staged)
    ds.discard_staged(staged)
    assert ds.temp_files() == [] and ds.files("steps") == []
    assert ds.append("steps", steps(range(1, 11))).stored == 10  # nothing waits for the discarded


def test_a_failed_commit_stores_no_later_batch_and_the_next_collect_resumes_after_the_stored_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "a.log"
    write_steps(log, range(1, 2001))  # about 100 bytes a line: about 20 batches of 10 kB
    ds = Dataset(tmp_path / "ds")
    real = store.commit
    data_commits = 0

    def fail_the_third(tmp: Path, final: Path) -> None:
        nonlocal data_commits
        if final.suffix == ".parquet":
            data_commits += 1
            if data_commits == 3:
                raise OSError(errno.ENOSPC, "No space left on device", str(tmp))
        real(tmp, final)

    with monkeypatch.context() as patch:
        patch.setattr(store, "commit", fail_the_third)
        with pytest.raises(OSError, match="No space"):
            collect(ds, log, batch_bytes=10_000)
    held = stored_steps(ds)
    # Two whole batches were committed, none after the failed third, though later ones were
    # written meanwhile; nothing temporary is left.
    assert len(ds.files("steps")) == 2 and held == list(range(1, len(held) + 1)) and 0 < len(held) < 2000
    assert ds.temp_files() == []
    # The offset follows the stored records: the next collect reads exactly the rest.
    assert collect(ds, log) == [2000 - len(held)]
    assert stored_steps(ds) == list(range(1, 2001))


def test_a_failed_write_writes_no_later_batch_though_one_was_queued_behind_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "a.log"
    write_steps(log, range(1, 2001))  # about 20 batches of 10 kB
    ds = Dataset(tmp_path / "ds")
    real = store.write_temp
    writes = 0

    def fail_the_third(
        frame: pl.DataFrame, final: Path, metadata: dict[bytes, bytes] | None = None
    ) -> tuple[Path, Path]:
        nonlocal writes
        writes += 1
        if writes == 3:
            time.sleep(0.2)  # the caller parses and queues the fourth batch meanwhile
            raise OSError(errno.ENOSPC, "No space left on device", str(final))
        return real(frame, final, metadata)

    with monkeypatch.context() as patch:
        patch.setattr(store, "write_temp", fail_the_third)
        with pytest.raises(OSError, match="No space"):
            collect(ds, log, batch_bytes=10_000)
    # The third write failed and the fourth, queued behind it, was never written: two batches stored.
    assert writes == 3
    held = stored_steps(ds)
    assert len(ds.files("steps")) == 2 and held == list(range(1, len(held) + 1))
    assert ds.temp_files() == []
    assert collect(ds, log) == [2000 - len(held)]
    assert stored_steps(ds) == list(range(1, 2001))


def test_writer_encodings_keep_the_schema_and_every_value(tmp_path: Path) -> None:
    ds = Dataset(tmp_path)
    frame = steps(range(1, 50_001)).with_columns(loss=(pl.col("step") % 7) / 3, ts=pl.lit(None))
    ds.append("steps", frame)
    (path,) = ds.files("steps")
    meta = pq.ParquetFile(path).metadata
    encodings = {meta.schema.column(i).name: meta.row_group(0).column(i).encodings for i in range(meta.num_columns)}
    # Repeating floats and text by dictionary; growing integers plain (every reader reads both).
    assert "RLE_DICTIONARY" in encodings["loss"] and "RLE_DICTIONARY" in encodings["role"]
    assert set(encodings["step"]) <= {"PLAIN", "RLE"} and set(encodings["source_offset"]) <= {"PLAIN", "RLE"}
    back = Dataset(tmp_path).read("steps")
    assert back.schema == pl.Schema(store.TABLES["steps"].schema)
    assert back["step"].to_list() == list(range(1, 50_001))
    # Bit for bit what was given (7 distinct losses, 50,000 distinct elapsed times).
    assert back["loss"].to_list() == frame["loss"].to_list() and back["loss"].n_unique() == 7
    assert back["elapsed_s"].to_list() == frame["elapsed_s"].to_list()
