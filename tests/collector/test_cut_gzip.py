"""A gzip log still being written (its compressed stream cut at its end) is held, as a text file's unfinished
last line is: the collect says so in one line, exits well, collects the other files, and reads it once it is
whole. One cut and left so for the settle time is an error naming it, as before."""

from __future__ import annotations

import gzip
import os
import time
from pathlib import Path

from typer.testing import CliRunner

from tests.support.ingest_helpers import step_line, stored_steps, write_steps
from tierscope.cli import app
from tierscope.dataset.store import Dataset

runner = CliRunner()


def _cut_gzip(path: Path, steps: range) -> bytes:
    """Write ``steps``' lines to ``path`` gzipped, cut at half the compressed bytes; return the whole stream."""
    whole = gzip.compress("".join(step_line(s) for s in steps).encode())
    path.write_bytes(whole[: len(whole) // 2])
    return whole


def _collect(tmp_path: Path, *files: Path, settle: str = "300") -> tuple[int, str]:
    args = ["collect", "files", *map(str, files), "-d", str(tmp_path / "ds"), "--run-id", "r", "--settle", settle]
    result = runner.invoke(app, args)
    return result.exit_code, " ".join(result.output.split())


def test_a_gzip_still_being_written_is_held_and_read_once_whole(tmp_path: Path) -> None:
    live, other = tmp_path / "live.log.gz", tmp_path / "other.log"
    whole = _cut_gzip(live, range(1, 2001))
    write_steps(other, range(5001, 5011))
    code, said = _collect(tmp_path, live, other)
    assert code == 0, said
    assert "the file ends before its compressed stream does" in said
    assert "it is read again once it is whole" in said
    # the other file's 10 steps are stored; of the cut gzip, at most what came before the cut, none past it
    stored = stored_steps(Dataset(tmp_path / "ds"))
    assert [s for s in stored if s > 5000] == list(range(5001, 5011))
    assert all(s < 2001 for s in stored if s < 5000)
    live.write_bytes(whole)  # the writer closes it
    code, said = _collect(tmp_path, live, other)
    assert code == 0, said
    # now every one of its 2,000 steps, once each, beside the other file's 10
    assert stored_steps(Dataset(tmp_path / "ds")) == [*range(1, 2001), *range(5001, 5011)]


def test_a_gzip_cut_and_left_so_is_an_error_naming_it(tmp_path: Path) -> None:
    live, other = tmp_path / "live.log.gz", tmp_path / "other.log"
    _cut_gzip(live, range(1, 2001))
    write_steps(other, range(1, 11))
    old = time.time() - 600  # unchanged for 10 minutes, twice the settle time
    os.utime(live, (old, old))
    code, said = _collect(tmp_path, live, other)
    assert code == 1
    assert f"cannot read {live}" in said and "the compressed file is cut off" in said and "zcat" in said
    assert stored_steps(Dataset(tmp_path / "ds")) == list(range(1, 11))
