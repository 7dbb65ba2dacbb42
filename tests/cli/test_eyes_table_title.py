"""A terminal table's title is one line when the terminal has room for it, whatever the table's width."""

from __future__ import annotations

import io

from rich.console import Console

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
