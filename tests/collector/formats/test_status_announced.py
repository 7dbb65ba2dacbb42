"""What a record announced (``iteration 150/ 2000``) judges a bare ending (``Training finished``): the
record's own text (its colours stripped, its last ``\\r`` drawing), and what an earlier collect read."""

from __future__ import annotations

from pathlib import Path

import polars as pl
from typer.testing import CliRunner

from tests.support.formats_support import endings as read_endings
from tierscope.cli import app
from tierscope.dataset.store import Dataset

DONE = "Training finished"
MEGATRON = " iteration {n}/ 2000 | consumed samples: {n} | elapsed time per iteration (ms): 250.0 |"


def endings(lines: list[str]) -> list[str]:
    """The ``finished``/``failed`` events of ``lines`` parsed as one file."""
    return [event for event, _ in read_endings(*lines)]


def _bar(n: int) -> str:
    return f" {n // 10:3d}%|{'#' * (n // 100):<10}| {n}/1000 [00:{n // 100:02d}<00:10, 100.00it/s]"


def test_a_bar_redrawn_on_one_line_is_judged_by_its_last_drawing() -> None:
    # 100/1000 ... 1000/1000 joined by \r: the record is the last drawing, 1000 of 1000 (reached): ok
    redrawn = "\r".join(_bar(n) for n in range(100, 1001, 100))
    assert endings([redrawn, DONE]) == ["finished"]
    # the same drawings on lines of their own read the same
    assert endings([*(_bar(n) for n in range(100, 1001, 100)), DONE]) == ["finished"]
    # and the last drawing at 500 of 1000 is short, whatever the first said: no end
    assert endings(["\r".join(_bar(n) for n in (1000, 500)), DONE]) == []


def test_a_coloured_record_announces_work_as_a_plain_one_does() -> None:
    # \x1b[32m before "iteration": 150 of 2000 is short all the same, so "Training finished" is no end
    coloured = [f"\x1b[32m{MEGATRON.format(n=n).strip()}\x1b[0m" for n in (140, 150)]
    assert endings([*coloured, DONE]) == []
    # at 2000 of 2000 the work is reached: ok
    assert endings([f"\x1b[32m{MEGATRON.format(n=2000).strip()}\x1b[0m", DONE]) == ["finished"]


def _collect(log: Path, dataset: Path) -> None:
    result = CliRunner().invoke(app, ["collect", "files", str(log), "-d", str(dataset), "--settle", "0"])
    assert result.exit_code == 0, result.output


def _finished(dataset: Path) -> int:
    events = Dataset(dataset).read("events")
    return events.filter(pl.col("event") == "finished").height if events.height else 0


def test_a_bare_ending_appended_after_a_collect_is_judged_by_the_records_it_read(tmp_path: Path) -> None:
    log = tmp_path / "meg.log"
    log.write_text("".join(MEGATRON.format(n=n) + "\n" for n in range(10, 151, 10)))
    _collect(log, tmp_path / "ds")
    with log.open("a") as out:
        out.write(DONE + "\n")
    _collect(log, tmp_path / "ds")
    # the newest record read by the first collect is 150 of 2000 (short): the ending appended is none,
    # as when the final file is collected in one go
    _collect(log, tmp_path / "once")
    assert (_finished(tmp_path / "ds"), _finished(tmp_path / "once")) == (0, 0)


def test_an_appended_ending_after_the_work_announced_is_reached_is_the_end(tmp_path: Path) -> None:
    log = tmp_path / "meg.log"
    log.write_text("".join(MEGATRON.format(n=n) + "\n" for n in (1990, 2000)))
    _collect(log, tmp_path / "ds")
    with log.open("a") as out:
        out.write(DONE + "\n")
    _collect(log, tmp_path / "ds")
    # 2000 of 2000 reached before the collect stopped: the first collect already ends the run there (the counter
    # reached its total), and the ending appended is kept as a second word of the same end
    assert _finished(tmp_path / "ds") == 2


def test_a_stop_on_purpose_read_by_an_earlier_collect_still_explains_a_bare_ending(tmp_path: Path) -> None:
    log = tmp_path / "meg.log"
    log.write_text(MEGATRON.format(n=150) + "\nexiting program at iteration 150\n")
    _collect(log, tmp_path / "ds")
    with log.open("a") as out:
        out.write(DONE + "\n")
    _collect(log, tmp_path / "ds")
    # short of 2000, but the log said why it stopped (Megatron's --exit-interval): the ending counts
    assert _finished(tmp_path / "ds") == 1
