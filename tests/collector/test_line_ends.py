"""Lines ended by a carriage return alone are lines: 99 of 100 records were silently unread."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from tests.support.ingest_helpers import step_line, stored_steps, write_steps
from tierscope.cli import app
from tierscope.dataset.store import Dataset

runner = CliRunner()


def test_cr_only_lines_are_read_as_lines(tmp_path: Path) -> None:
    log = tmp_path / "mac.log"
    log.write_bytes("".join(step_line(s).replace("\n", "\r") for s in range(1, 101)).encode())
    ds = tmp_path / "ds"
    argv = ["collect", "files", str(log), "-d", str(ds), "--run-id", "r", "--settle", "0"]
    done = runner.invoke(app, argv)
    assert done.exit_code == 0, done.output
    assert stored_steps(Dataset(ds)) == list(range(1, 101))
    assert "read 100 lines: stored 100 step records" in " ".join(done.output.split())
    with log.open("ab") as fh:  # grown: read from where the last collect stopped, by the same line ends
        fh.write("".join(step_line(s).replace("\n", "\r") for s in range(101, 111)).encode())
    again = runner.invoke(app, argv)
    assert "read 10 lines: stored 10 step records" in " ".join(again.output.split())
    assert stored_steps(Dataset(ds)) == list(range(1, 111))


def test_a_carriage_return_inside_newline_ended_lines_is_no_line_end(tmp_path: Path) -> None:
    log = tmp_path / "app.log"
    write_steps(log, range(1, 11), "w")
    with log.open("a") as fh:  # a terminal redraw, then its line's end
        fh.write("loading\rloading.\rloading..\n")
    ds = tmp_path / "ds"
    done = runner.invoke(app, ["collect", "files", str(log), "-d", str(ds), "--run-id", "r", "--settle", "0"])
    assert done.exit_code == 0, done.output
    assert "read 11 lines" in " ".join(done.output.split())
    assert stored_steps(Dataset(ds)) == list(range(1, 11))
