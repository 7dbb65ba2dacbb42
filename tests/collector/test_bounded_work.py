"""A compressed bomb is refused in seconds, named; a collect stops at its time limit with what it read kept.

A 4.2 MB gzip of 4 GiB of newlines needed about 3.6 h to collect, holding the dataset's lock, and a
supervisor killing it made the next collect start it again from byte 0. Here a smaller bomb, 256 MiB of
newlines (260 KB compressed: 1,000 times), meets the default limit of 100 times, at least 64 MiB.
"""

from __future__ import annotations

import gzip
import time
from pathlib import Path

from typer.testing import CliRunner

from tests.support.ingest_helpers import step_line, stored_steps, write_steps
from tierscope.cli import app
from tierscope.collector.limits import Deadline
from tierscope.dataset.store import Dataset

runner = CliRunner()


def test_a_gzip_bomb_is_one_reject_naming_it_and_is_not_read_again(tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.log.gz"
    with gzip.open(bomb, "wb", compresslevel=9) as fh:
        for _ in range(256):
            fh.write(b"\n" * (1 << 20))
    size = bomb.stat().st_size
    ds = tmp_path / "ds"
    argv = ["collect", "files", str(bomb), "-d", str(ds), "--run-id", "r", "--settle", "0"]
    started = time.monotonic()
    done = runner.invoke(app, argv)
    took = time.monotonic() - started
    assert done.exit_code == 0, done.output
    assert took < 30  # the measure stops at the limit: 64 MiB decompressed, not 256 MiB
    limit = max(100 * size, 64 * 1024**2)  # 100 x ~261 KB = ~26 MB: below the 64 MiB floor
    reason = (
        f"{bomb} decompresses to more than {limit:,} bytes (100 times its {size:,} bytes, at least 64 MiB, "
        "at most 20 GiB): not read (a compressed bomb?); if it is a real log, decompress it and collect the "
        "text, or raise --max-expand"
    )
    rejects = Dataset(ds).read("rejects")
    assert rejects.select("source", "reason").rows() == [(str(bomb), reason)]
    assert "kept aside 1 rejected line" in done.output
    again = runner.invoke(app, argv)
    assert "unchanged" in again.output  # marked read: not measured, nor refused, again


def test_a_compressed_log_within_the_limit_is_read(tmp_path: Path) -> None:
    log = tmp_path / "app.log.gz"
    with gzip.open(log, "wt") as fh:
        fh.writelines(step_line(s) for s in range(1, 101))
    ds = tmp_path / "ds"
    done = runner.invoke(app, ["collect", "files", str(log), "-d", str(ds), "--run-id", "r", "--settle", "0"])
    assert done.exit_code == 0, done.output
    assert stored_steps(Dataset(ds)) == list(range(1, 101))


def test_max_seconds_stops_at_a_safe_point_and_the_next_collect_goes_on(tmp_path: Path) -> None:
    logs = [tmp_path / f"part{i}.log" for i in range(3)]
    for i, log in enumerate(logs):
        write_steps(log, range(i * 1000 + 1, i * 1000 + 1001), "w")
    ds = tmp_path / "ds"
    argv = ["collect", "files", *map(str, logs), "-d", str(ds), "--run-id", "r", "--settle", "0"]
    # 0 s: the limit has passed before the first file; nothing is read, the lock is let go at once
    done = runner.invoke(app, [*argv, "--max-seconds", "0", "-q"])
    assert done.exit_code == 0, done.output
    assert "note: stopped by --max-seconds 0: files not read yet are read next time" in done.stderr
    assert not (ds / "steps").exists()
    done = runner.invoke(app, argv)  # no limit: everything, each line once
    assert stored_steps(Dataset(ds)) == list(range(1, 3001))


def test_a_read_stopped_mid_file_goes_on_from_its_offset(tmp_path: Path) -> None:
    from tierscope.collector.collect import collect_runs
    from tierscope.collector.manifest import RunSpec

    log = tmp_path / "app.log"
    write_steps(log, range(1, 20_001), "w")  # 1.6 MB: some 400 batches of 4 KB
    ds = Dataset(tmp_path / "ds")
    spec = RunSpec(run_id="r", tier="BASIC", files=[log])
    result = collect_runs(ds, [spec], settle_s=0, batch_bytes=4096, max_seconds=0.5)
    notes = [n for s in result.sources for n in s.notes]
    first = stored_steps(ds)
    assert first == list(range(1, len(first) + 1))  # a prefix of the file, each once
    if len(first) < 20_000:
        assert any(n.startswith("stopped after line ") and "the next collect goes on from there" in n for n in notes)
    collect_runs(ds, [spec], settle_s=0)
    assert stored_steps(ds) == list(range(1, 20_001))


class _AfterChecks(Deadline):
    """A deadline that passes at its ``checks``-th look: a time limit scaled to batches, not seconds."""

    def __init__(self, checks: int) -> None:
        super().__init__(None)
        self.left = checks

    def passed(self) -> bool:
        self.left -= 1
        return self.left < 0


def test_a_gzip_stopped_by_its_time_limit_goes_on_from_its_lines_done(tmp_path: Path) -> None:
    from tierscope.collector.collect import collect_file
    from tierscope.collector.manifest import RunSpec
    from tierscope.collector.reading import ReadOptions
    from tierscope.collector.sink import dataset_lock

    log = tmp_path / "app.log.gz"
    with gzip.open(log, "wt") as fh:
        fh.writelines(step_line(s) for s in range(1, 5_001))  # 5,000 lines of ~107 bytes: ~130 batches of 4 KB
    ds = Dataset(tmp_path / "ds")
    spec = RunSpec(run_id="r", tier="BASIC", files=[log])
    read, notes = [], []
    for _ in range(200):  # each collect may look at its deadline 40 times: some 40 batches
        options = ReadOptions(settle_s=0, batch_bytes=4096, deadline=_AfterChecks(40))
        with dataset_lock(ds):
            counts = collect_file(ds, log, spec, options)
        read.append(counts.lines)
        notes.append(counts.notes)
        if not any(n.startswith("stopped after line") for n in counts.notes):
            break
    # Every line read once over the collects: each went on where the one before stopped (before
    # the look-ahead it held back), none started again from line 1.
    assert len(read) >= 3
    assert sum(read) == 5_000
    assert stored_steps(Dataset(ds.root)) == list(range(1, 5_001))
    stopped_at = int(notes[0][-1].split()[3].replace(",", ""))
    assert any(n.startswith("resumed: read from line ") for n in notes[1])
    assert notes[0][-1].endswith(
        "the next collect decompresses the lines done again, without reading them, and goes on from there"
    )
    assert read[0] == stopped_at  # the first read counts its lines done, not the look-ahead read next time
    # Then it is read whole: the next collect finds it unchanged.
    with dataset_lock(ds):
        assert collect_file(ds, log, spec, ReadOptions(settle_s=0)).notes == ["unchanged"]
