"""A log written as UTF-16 with its byte-order mark: Windows PowerShell 5.1's redirection (``python train.py >
train.log``) writes UTF-16LE ("In Windows PowerShell 5.1 ... the redirection operators use Unicode (UTF-16LE)
encoding", Microsoft Learn, about_Redirection, PowerShell 5.1, read 2026-12-07). Read byte by byte as UTF-8, every
other byte is a NUL and no line reads (19 lines "with no metric" and "is it a step log?"); the mark says how its
text is written, so it is read as that text, whole (as a gzip file is: its byte offsets are not the text's)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tierscope.cli import app
from tierscope.dataset.store import Dataset

runner = CliRunner()

# Estimator's hook lines (tensorflow basic_session_run_hooks.py's ``loss = %s, step = %s (%.3f sec)``) under
# Python logging's default ``INFO:tensorflow:`` header: steps 100..500, 20 s apart each
LINES = ["INFO:tensorflow:loss = 0.5, step = 100"] + [
    f"INFO:tensorflow:loss = 0.5, step = {step} (20.000 sec)" for step in range(200, 501, 100)
]


def _collect(log: Path, ds: Path) -> str:
    done = runner.invoke(app, ["collect", "files", str(log), "-d", str(ds), "--settle", "0"])
    assert done.exit_code == 0, done.output
    return done.output


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be"])
def test_a_utf16_log_with_its_mark_reads_as_its_text(tmp_path: Path, encoding: str) -> None:
    log = tmp_path / "train.log"
    log.write_bytes("\ufeff".encode(encoding) + "\r\n".join(LINES).encode(encoding) + "\r\n".encode(encoding))
    _collect(log, tmp_path / "ds")
    steps = Dataset(tmp_path / "ds").read("steps").sort("source_offset")
    # five lines, five records, numbered 1..5 as the text's lines
    assert steps["step"].to_list() == [100, 200, 300, 400, 500]
    assert steps["source_offset"].to_list() == [1, 2, 3, 4, 5]
    (row,) = json.loads(runner.invoke(app, ["summary", "-d", str(tmp_path / "ds"), "--json"]).stdout)
    # 100 steps every 20 s: 5 global steps/s
    assert row["steady_global_steps_per_s"] == pytest.approx(5.0)


def test_a_utf16_log_grown_is_read_again_whole_and_stores_only_its_new_lines(tmp_path: Path) -> None:
    log = tmp_path / "train.log"
    encode = lambda lines: "\ufeff".encode("utf-16-le") + "".join(f"{x}\n" for x in lines).encode("utf-16-le")  # noqa: E731
    log.write_bytes(encode(LINES[:3]))
    _collect(log, tmp_path / "ds")
    log.write_bytes(encode(LINES))
    _collect(log, tmp_path / "ds")
    # steps 100..300 from the first collect, 400 and 500 from the second: each once
    steps = Dataset(tmp_path / "ds").read("steps").sort("source_offset")
    assert steps["step"].to_list() == [100, 200, 300, 400, 500]


def test_a_utf8_log_naming_the_mark_is_read_as_utf8(tmp_path: Path) -> None:
    # near miss: the characters 'ÿþ' written in UTF-8 are the bytes C3 BF C3 BE, no UTF-16 mark (FF FE)
    log = tmp_path / "train.log"
    log.write_text("ÿþ\n" + "\n".join(LINES) + "\n", encoding="utf-8")
    _collect(log, tmp_path / "ds")
    steps = Dataset(tmp_path / "ds").read("steps").sort("source_offset")
    assert steps["source_offset"].to_list() == [2, 3, 4, 5, 6]
