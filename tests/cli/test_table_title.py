"""A terminal table's title: one line when the terminal has room for it, whatever the table's width,
and saying what it means when no run has a steady rate (no baseline)."""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console
from typer.testing import CliRunner

from tests.collector.formats.test_formats_try_tfcnn import CASE07
from tierscope.cli import app
from tierscope.cli.tables import Column, Grid, print_table


def test_a_narrow_tables_title_is_not_wrapped_at_the_tables_width() -> None:
    title = "tierscope summary (global steps/s; speedup against -)"  # 54 characters
    grid = Grid([Column("run", "name"), Column("tasks")], title=title)
    grid.add("c07", "1")  # a table 3 + 2 + 5 = 10 columns wide
    out = io.StringIO()
    print_table(grid, console=Console(file=out, width=80))
    lines = out.getvalue().splitlines()
    # It came out as "tierscope summary", "(global steps/s;", "speedup against -)" over the table.
    assert lines[0] == title
    assert [line.split() for line in lines[1:]] == [["run", "tasks"], ["c07", "1"]]


def test_summary_without_a_measured_run_says_why_no_speedup(tmp_path: Path) -> None:
    log = tmp_path / "case07.log"
    log.write_text(CASE07, encoding="utf-8")
    runner = CliRunner()
    ds = str(tmp_path / "ds")
    assert runner.invoke(app, ["collect", "files", str(log), "-d", ds, "--run-id", "c07", "--quiet"]).exit_code == 0
    result = runner.invoke(app, ["summary", "-d", ds], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    # case07 prints images/sec only: no steady rate, so no baseline; the title said "speedup against -".
    assert "tierscope summary (global steps/s; no run has a steady rate: no speedup)" in result.output
