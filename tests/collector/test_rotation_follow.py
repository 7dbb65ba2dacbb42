"""Finding a log's rotated copies since the last collect: the predecessor, the copies after it, the gaps."""

from __future__ import annotations

import gzip
import os
import shutil
from pathlib import Path

from tierscope.collector.offsets import FileState, snapshot
from tierscope.collector.rotation import follow, rotated_copies


def lines(first: int, last: int) -> bytes:
    return b"".join(b"line %d\n" % i for i in range(first, last + 1))


def read_state(path: Path) -> FileState:
    """The state a collect saves after reading ``path`` to its end."""
    data = path.read_bytes()
    with path.open("rb") as raw:
        return snapshot(raw, path, "r", len(data), data.count(b"\n"), False)


def compress(path: Path) -> Path:
    target = path.with_name(path.name + ".gz")
    with path.open("rb") as src, gzip.open(target, "wb") as dst:
        shutil.copyfileobj(src, dst)
    path.unlink()
    return target


def test_numbered_copies_newest_first_then_dated(tmp_path: Path) -> None:
    for name in ("app.log", "app.log.2.gz", "app.log.10", "app.log.1", "app.logger", "app.log.bak", "app.log-20240101"):
        (tmp_path / name).write_bytes(b"x\n")
    assert [p.name for p in rotated_copies(tmp_path / "app.log")] == [
        "app.log.1",
        "app.log.2.gz",
        "app.log.10",
        "app.log-20240101",
    ]


def test_two_rotations_give_the_middle_copy(tmp_path: Path) -> None:
    log = tmp_path / "app.log"
    log.write_bytes(lines(1, 100))
    prev = read_state(log)
    with log.open("ab") as fh:
        fh.write(lines(101, 150))
    log.rename(tmp_path / "app.log.1")
    log.write_bytes(lines(151, 200))
    (tmp_path / "app.log.1").rename(tmp_path / "app.log.2")
    log.rename(tmp_path / "app.log.1")
    log.write_bytes(lines(201, 250))
    chain = follow(log, prev)
    assert chain.predecessor == tmp_path / "app.log.2"
    assert chain.between == [tmp_path / "app.log.1"]
    assert chain.missing == []


def test_a_compressed_predecessor_in_an_olddir(tmp_path: Path) -> None:
    log, old = tmp_path / "app.log", tmp_path / "old"
    old.mkdir()
    log.write_bytes(lines(1, 10))
    prev = read_state(log)
    with log.open("ab") as fh:
        fh.write(lines(11, 20))
    log.rename(old / "app.log.1")
    compressed = compress(old / "app.log.1")
    log.write_bytes(lines(21, 30))
    chain = follow(log, prev, [old])
    assert chain.predecessor == compressed
    assert chain.between == [] and chain.missing == []
    assert follow(log, prev).predecessor is None  # without the olddir: not found, and said


def test_a_copy_deleted_in_between_is_named(tmp_path: Path) -> None:
    log = tmp_path / "app.log"
    log.write_bytes(lines(1, 10))
    prev = read_state(log)
    log.rename(tmp_path / "app.log.3")
    (tmp_path / "app.log.1").write_bytes(lines(21, 30))
    log.write_bytes(lines(31, 40))
    chain = follow(log, prev)
    assert chain.predecessor == tmp_path / "app.log.3"
    assert chain.between == [tmp_path / "app.log.1"]
    assert chain.missing == ["app.log.2 rotated away before it was read: its lines were not collected"]


def test_a_predecessor_gone_is_said_and_later_copies_are_read(tmp_path: Path) -> None:
    log = tmp_path / "app.log"
    log.write_bytes(lines(1, 10))
    prev = read_state(log)
    (tmp_path / "app.log.1").write_bytes(lines(21, 30))
    os.utime(tmp_path / "app.log.1", ns=(prev.mtime_ns + 10**9, prev.mtime_ns + 10**9))
    log.unlink()
    log.write_bytes(lines(31, 40))
    chain = follow(log, prev)
    assert chain.predecessor is None
    assert chain.between == [tmp_path / "app.log.1"]
    assert chain.missing == [
        f"app.log was rotated away or replaced, and the file read last time (to line 10) is not among app.log's "
        f"rotations in {tmp_path}: any lines written to it after line 10 were not collected"
    ]
