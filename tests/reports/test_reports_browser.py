"""The report in a real browser: headless chromium, network off, driven over the DevTools
protocol (see ``reports_cdp.py``). Each chart must draw SVG marks, the page must request
nothing but itself, log no console error, throw nothing, open no dialog, and show hostile
names as text in tables and charts. Screenshots land in ``$TIERSCOPE_SCREENSHOTS`` when set.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.support.reports_cdp import Browser, Page, find_chromium
from tests.support.reports_fixtures import EVIL_FAILED, EVIL_REASON, EVIL_RUN, hostile_dataset
from tierscope.analysis import analyze
from tierscope.reports.render import ReportOptions, analysis_options, write_report

CHROMIUM = find_chromium()
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="chromium not installed (Debian: apt-get install chromium; .ci/run does it)"
)

CHARTS = ["throughput_steps", "throughput_time", "speedup", "goodput", "cost_time", "tasks", "scaling"]

#: Per chart: its id, whether vega-embed finished, how many SVG mark items it drew, and every SVG text.
INSPECT = """Array.from(document.querySelectorAll("div.chart")).map((el) => ({
  id: el.id,
  drawn: el.getAttribute("data-drawn") === "true",
  error: el.getAttribute("data-error"),
  marks: el.querySelectorAll("svg g.role-mark > path, svg g.role-mark > text, svg g.role-mark > g").length,
  texts: Array.from(el.querySelectorAll("svg text")).map((t) => t.textContent),
}))"""


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("browser")
    analysis = analyze(hostile_dataset(root / "ds"), analysis_options(steps=3600))
    return {
        lang: write_report(analysis, root / f"report-{lang}.html", ReportOptions(lang=lang)) for lang in ("en", "ja")
    }


def test_report_draws_every_chart_offline_without_errors(reports: dict[str, Path], tmp_path: Path) -> None:
    assert CHROMIUM is not None
    keep = os.environ.get("TIERSCOPE_SCREENSHOTS")
    with Browser(CHROMIUM, tmp_path / "profile") as browser:
        for lang, report in reports.items():
            page = Page(browser)
            url = report.resolve().as_uri()
            page.load(url)
            assert page.wait_for('document.querySelectorAll("div.chart:not([data-drawn])").length === 0'), lang
            charts = page.evaluate(INSPECT)
            assert [c["id"] for c in charts] == [f"chart-{name}" for name in CHARTS]
            for chart in charts:
                assert chart["drawn"] and chart["error"] is None, chart
                assert chart["marks"] > 0, f"{lang} {chart['id']} drew no SVG marks"
            # hostile names: text in the tables, text inside the charts, never elements
            cells = page.evaluate('Array.from(document.querySelectorAll("td")).map((td) => td.textContent)')
            assert {EVIL_RUN, EVIL_FAILED, EVIL_REASON} <= set(cells)
            texts = {text for chart in charts for text in chart["texts"]}
            assert EVIL_RUN in texts  # the point labels of the price and scaling charts
            assert page.evaluate('document.querySelectorAll("img, iframe, object, embed").length') == 0
            assert page.evaluate('document.querySelectorAll("script").length') == 2
            shot = page.screenshot(tmp_path / f"report-{lang}.png")
            assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 50_000
            if keep:
                Path(keep).mkdir(parents=True, exist_ok=True)
                shutil.copy(shot, Path(keep) / shot.name)
            assert page.log.requests == [url], "the page requested something besides itself"
            assert page.log.console_errors == [] and page.log.exceptions == []
            assert page.log.dialogs == [], "a hostile name ran as script"
