"""Digests checked once across readers (tierscope.dataset.verified): a file is hashed again whenever
it may have changed, and doctor hashes every file whatever the cache says."""

from __future__ import annotations

import os
from pathlib import Path
from typing import BinaryIO

import polars as pl
import pytest

from tests.support.ingest_helpers import collect, write_steps
from tierscope.dataset import doctor, store, verified
from tierscope.dataset.errors import DatasetCorruptError
from tierscope.dataset.store import Dataset


def _hashes(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The files each later digest check hashes, in order."""
    seen: list[Path] = []
    check = store.check_digest

    def counting(path: Path, handle: BinaryIO) -> str | None:
        seen.append(path)
        return check(path, handle)

    monkeypatch.setattr(store, "check_digest", counting)
    return seen


def _dataset(tmp_path: Path) -> tuple[Dataset, Path]:
    ds = Dataset(tmp_path / "ds")
    log = tmp_path / "a.log"
    write_steps(log, range(1, 301))
    collect(ds, log)
    (part,) = ds.files("steps")
    return ds, part


def test_a_verified_file_is_not_hashed_again_by_the_next_reader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ds, _ = _dataset(tmp_path)
    monkeypatch.setattr(verified, "RACY_S", -1e9)  # the file counts as old enough to be noted
    truth = Dataset(ds.root).read("steps")  # hashes it and notes it
    assert (ds.root / "state" / verified.CACHE_NAME).is_file()
    seen = _hashes(monkeypatch)
    again = Dataset(ds.root).read("steps")  # a new reader: another command
    assert seen == [] and again.equals(truth)


def test_a_rewritten_file_with_the_same_name_size_and_mtime_is_verified_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ds, part = _dataset(tmp_path)
    monkeypatch.setattr(verified, "RACY_S", -1e9)
    Dataset(ds.root).read("steps")
    before = part.stat()
    data = bytearray(part.read_bytes())
    data[len(data) // 2] ^= 0xFF  # same size; its mtime set back below: only its ctime tells
    part.write_bytes(bytes(data))
    os.utime(part, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert part.stat().st_mtime_ns == before.st_mtime_ns and part.stat().st_size == before.st_size
    seen = _hashes(monkeypatch)
    with pytest.raises(DatasetCorruptError, match="bytes changed"):
        Dataset(ds.root).read("steps")
    assert seen == [part]
    assert [p.path for p in doctor.check(Dataset(ds.root)).problems] == [part]


def test_a_file_put_in_place_under_the_same_name_is_verified_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ds, part = _dataset(tmp_path)
    monkeypatch.setattr(verified, "RACY_S", -1e9)
    Dataset(ds.root).read("steps")
    data = bytearray(part.read_bytes())
    data[-100] ^= 0x01
    other = part.with_name("other.bin")
    other.write_bytes(bytes(data))
    os.replace(other, part)  # a new inode
    with pytest.raises(DatasetCorruptError):
        Dataset(ds.root).read("steps")


def test_a_file_changed_just_before_its_hash_is_not_noted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The default margin: a file collected a moment ago is hashed by every reader until it is
    older than RACY_S (a write within one tick of the file system's clock would keep its stamp)."""
    ds, part = _dataset(tmp_path)
    Dataset(ds.root).read("steps")
    seen = _hashes(monkeypatch)
    Dataset(ds.root).read("steps")
    assert seen == [part]


def test_compacted_away_files_leave_the_cache_and_an_unreadable_cache_is_ignored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ds, part = _dataset(tmp_path)
    monkeypatch.setattr(verified, "RACY_S", -1e9)
    Dataset(ds.root).read("steps")
    cache = ds.root / "state" / verified.CACHE_NAME
    assert part.relative_to(ds.root).as_posix() in cache.read_text()
    moved = part.with_name(part.name.replace("part-", "part-0"))
    os.replace(part, moved)  # as if a compaction had replaced it
    Dataset(ds.root).read("steps")
    assert part.name not in cache.read_text() and moved.name in cache.read_text()
    cache.write_bytes(b"\xff not json")
    seen = _hashes(monkeypatch)
    Dataset(ds.root).read("steps")
    assert seen == [moved] and moved.name in cache.read_text()  # hashed, and the cache rewritten


def _silently_damaged(ds: Dataset, part: Path) -> pl.DataFrame:
    """Flip one bit of ``part`` where the file still decodes (to other values) and note the damaged
    file's stamp in the cache, as if its bits had rotted in place: the file's true rows."""
    truth = Dataset(ds.root).read("steps")
    original = part.read_bytes()
    for at in range(4, len(original) - 8):
        data = bytearray(original)
        data[at] ^= 0x01
        part.write_bytes(bytes(data))
        cache = verified.VerifiedFiles(ds.root)
        cache.note(part, part.stat(), 2**62)
        cache.save()
        try:
            if not Dataset(ds.root).read("steps").equals(truth):
                return truth
        except DatasetCorruptError:
            continue
    raise AssertionError("no bit of the file flips to other values that still decode")


def test_a_file_doctor_finds_corrupt_is_no_longer_vouched_for_by_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Damage the cache cannot see (a bit flipped under an unchanged stamp) reads as wrong values
    while the cache vouches for the file; doctor finds it, and from then on readers hash the file
    again and refuse it, rather than go on reading what doctor called corrupt."""
    ds, part = _dataset(tmp_path)
    monkeypatch.setattr(verified, "RACY_S", -1e9)
    _silently_damaged(ds, part)
    assert [p.path for p in doctor.check(Dataset(ds.root)).problems] == [part]
    with pytest.raises(DatasetCorruptError, match="bytes changed"):
        Dataset(ds.root).read("steps")
