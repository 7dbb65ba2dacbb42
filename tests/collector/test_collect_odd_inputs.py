"""Odd inputs to ``tierscope collect files``: each is one line on stderr and exit 1, never a traceback."""

from __future__ import annotations

import gzip
import os
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tierscope.cli import app

runner = CliRunner()
RECORD = "Train [master/0], step 100:loss:2.3, accuracy:0.2 (21.5 sec) 4.644 global_steps/s, 4.644 local_steps/s\n"


def _last_error(output: str) -> str:
    """The one ``error:`` line of ``output`` (the counts table may come before or after it)."""
    assert "Traceback" not in output, output
    errors = [line for line in output.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1, output
    return errors[0]


def test_a_file_name_that_is_not_utf8_is_named_with_its_bytes_escaped(tmp_path: Path) -> None:
    name = os.fsdecode(b"na\xffme.log")
    try:
        (tmp_path / name).write_text(RECORD)
    except (UnicodeEncodeError, OSError):
        pytest.skip("the file system does not take non-UTF-8 names")
    result = runner.invoke(app, ["collect", "files", str(tmp_path / name), "-d", str(tmp_path / "ds")])
    assert result.exit_code == 1  # was UnicodeEncodeError from polars
    assert (
        _last_error(result.output)
        == f"error: cannot read {tmp_path}/na\\xffme.log: its name is not valid UTF-8; rename it"
    )


def test_a_device_or_fifo_is_not_a_regular_file_not_a_missing_one(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.log"
    os.mkfifo(fifo)
    for path in (fifo, Path("/dev/null")):
        result = runner.invoke(app, ["collect", "files", str(path), "-d", str(tmp_path / "ds")])
        assert result.exit_code == 1
        # was "cannot read /dev/null: no such file"
        assert _last_error(result.output) == f"error: cannot read {path}: not a regular file"


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("[1]", "run.json holds a JSON list, not an object; fix it or delete it"),
        (
            "{bad",
            "run.json is not valid JSON (Expecting property name enclosed in double quotes: line 1 column 2 (char 1)); "
            "fix it or delete it (the run is then named after its directory)",
        ),
    ],
)
def test_a_broken_run_json_is_one_line(tmp_path: Path, content: str, expected: str) -> None:
    run_dir = tmp_path / "run1"
    run_dir.mkdir()
    (run_dir / "chief-0.log").write_text(RECORD)
    (run_dir / "run.json").write_text(content)
    result = runner.invoke(app, ["collect", "files", str(run_dir), "-d", str(tmp_path / "ds")])
    assert result.exit_code == 1  # was JSONDecodeError / AttributeError
    assert _last_error(result.output) == f"error: {run_dir}/{expected}"


def test_a_cut_off_gzip_says_what_to_do(tmp_path: Path) -> None:
    whole = gzip.compress(RECORD.encode() * 200)
    cut = tmp_path / "cut.log.gz"
    cut.write_bytes(whole[: len(whole) - 10])  # the end-of-stream marker and CRC are gone
    # unchanged past the settle time (300 s): cut for good, no gzip still being written (test_cut_gzip.py)
    os.utime(cut, (time.time() - 600, time.time() - 600))
    result = runner.invoke(app, ["collect", "files", str(cut), "-d", str(tmp_path / "ds")])
    assert result.exit_code == 1
    # was "cannot read cut.log.gz after byte 0: Compressed file ended ..." with nothing to do about it
    assert _last_error(result.output) == (
        f"error: cannot read {cut} after line 0: the compressed file is cut off (Compressed file ended before "
        f"the end-of-stream marker was reached); collect it once it is complete, or recover what it holds with "
        f"`zcat {cut} > recovered.log`"
    )
