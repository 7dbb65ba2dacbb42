"""Driving the CLI in tests and reading its tables (they have no borders, kubectl's style)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from typer.testing import CliRunner

from tierscope.cli import app


def collect_and_summarize(log: Path, dataset: Path, run_id: str = "est") -> tuple[dict[str, object], str]:
    """Collect one log file as one run on an ``n1-standard-8`` (``--settle 0``) and summarise it: the run's row of
    ``summary --json`` and the printed summary (200 columns wide). Raises AssertionError if the collect fails."""
    runner = CliRunner()
    args = ["collect", "files", str(log), "-d", str(dataset), "--run-id", run_id, "--machine", "n1-standard-8"]
    done = runner.invoke(app, [*args, "--settle", "0"])
    assert done.exit_code == 0, done.output
    (row,) = json.loads(runner.invoke(app, ["summary", "-d", str(dataset), "--json"]).stdout)
    text = runner.invoke(app, ["summary", "-d", str(dataset)], terminal_width=200).output
    return row, text


def table_row(output: str, first: str) -> list[str]:
    """The cells of the table row whose first cell is ``first`` (columns are two or more spaces apart)."""
    for line in output.splitlines():
        cells = re.split(r"\s{2,}", line.strip())
        if cells and cells[0] == first:
            return cells
    raise AssertionError(f"no row {first!r} in\n{output}")


def wrapped_rows(output: str, headers: list[str]) -> list[list[str]]:
    """The rows of a borderless table whose cells wrap onto several lines, each cell's lines
    joined without whitespace. Columns are cut at the header's positions; a row starts where its
    first cell is not empty."""
    lines = output.splitlines()
    at = next(i for i, line in enumerate(lines) if line.split()[:1] == headers[:1] and headers[-1] in line)
    starts = [lines[at].index(h) for h in headers]
    rows: list[list[str]] = []
    for line in lines[at + 1 :]:
        if not line.strip():
            continue
        parts = ["".join(line[a:b].split()) for a, b in zip(starts, [*starts[1:], None], strict=True)]
        if parts[0] or not rows:
            rows.append(parts)
        else:
            rows[-1] = [cell + more for cell, more in zip(rows[-1], parts, strict=True)]
    return rows
