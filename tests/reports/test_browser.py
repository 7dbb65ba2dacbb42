"""The report in a real browser: headless chromium, network off, driven over the DevTools
protocol (see ``reports_cdp.py``). Each chart must draw SVG marks, the page must request
nothing but itself, log no console error, throw nothing, open no dialog, and show hostile
names as text in tables and charts. Screenshots land in ``$TIERSCOPE_SCREENSHOTS`` when set.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import ROOT
from tests.support.reports_cdp import Browser, Page, find_chromium
from tests.support.reports_fixtures import BIDI_RUN, EVIL_FAILED, EVIL_REASON, TARGET_LOSS, hostile_dataset
from tierscope import AnalysisOptions, ReportOptions, analyze, write_report
from tierscope.reports.options import analysis_options
from tierscope.text import printable

CHROMIUM = find_chromium()
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="chromium not installed (Debian: apt-get install chromium; .ci/run does it)"
)

CHARTS = ["throughput_steps", "throughput_time", "loss_time", "speedup", "goodput", "cost_time", "target", "tasks",
          "scaling"]  # fmt: skip
#: The charts and the SVG mark items each must draw at least: the goodput bar a rect per part of
#: each run's lifetime its log shows (two runs: productive and start-up at least, 4); the loss chart a line per run
#: (2), a point per record (30 + 5 x 30), the target's rule (1) and a diamond where each run reached it (2): 185;
#: the time-to-target chart a bar per run and its price label: 4.
NEW_MARKS = {"goodput": 4, "loss_time": 185, "target": 4}
#: The widest screen (CSS px) on which the runs table reads as cards (the template's phone breakpoint).
PHONE = 600
#: How the hostile BASIC run is shown: escaped (a right-to-left override reorders nothing).
SHOWN_RUN = printable(BIDI_RUN)

#: Per chart: its id, whether vega-embed finished, how many SVG mark items it drew, and every SVG text.
INSPECT = """Array.from(document.querySelectorAll("div.chart")).map((el) => ({
  id: el.id,
  drawn: el.getAttribute("data-drawn") === "true",
  error: el.getAttribute("data-error"),
  marks: el.querySelectorAll("svg g.role-mark > path, svg g.role-mark > text, svg g.role-mark > g").length,
  items: el.querySelectorAll("svg g.role-mark path, svg g.role-mark text, svg g.role-mark line").length,
  texts: Array.from(el.querySelectorAll("svg text")).map((t) => t.textContent),
}))"""


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("browser")
    options = analysis_options(AnalysisOptions(target_loss=TARGET_LOSS), steps=3600)
    analysis = analyze(hostile_dataset(root / "ds", evil_run=BIDI_RUN), options)
    return {
        lang: write_report(analysis, root / f"report-{lang}.html", ReportOptions(lang=lang)) for lang in ("en", "ja")
    }


def test_report_draws_every_chart_offline_without_errors(
    reports: dict[str, Path], tmp_path: Path, browser: Browser
) -> None:
    assert CHROMIUM is not None
    keep = os.environ.get("TIERSCOPE_SCREENSHOTS")
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
        drawn = {c["id"].removeprefix("chart-"): c["items"] for c in charts}
        for name, least in NEW_MARKS.items():
            assert drawn[name] >= least, f"{lang} {name}: {drawn[name]} SVG mark items, expected {least}+"
        # the time-to-target bar is labelled with its price: 400 s x 1 ML unit/h, 100 s x 10 (see the fixture)
        target = next(c for c in charts if c["id"] == "chart-target")
        units = "ML unit-h" if lang == "en" else "ML ユニット時間"
        assert {f"0.111 {units}", f"0.278 {units}"} <= set(target["texts"]), target["texts"]
        # hostile names: text in the tables, text inside the charts, never elements
        cells = page.evaluate('Array.from(document.querySelectorAll("td")).map((td) => td.textContent)')
        assert {SHOWN_RUN, EVIL_FAILED, EVIL_REASON} <= set(cells)
        texts = {text for chart in charts for text in chart["texts"]}
        assert SHOWN_RUN in texts  # the point labels of the price and scaling charts
        # no control or bidirectional character reached a chart's text (labels, legends, axes)
        assert not [t for t in texts if any(c in t for c in "\u202e\u2066\x1b")]
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


#: A JavaScript function of an element: the words of Latin script in it that are broken across lines (a path may
#: wrap after a / or -; Japanese breaks between any characters), pasted into the page scripts below.
BROKEN_WORDS = r"""  const brokenWords = (el) => {
    const broken = [];
    const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      // words of Latin script (Japanese breaks between any characters); a path may wrap after a / or -
      const re = /[!-,.0-~]+/g;
      let m;
      while ((m = re.exec(node.data))) {
        const range = document.createRange();
        range.setStart(node, m.index);
        range.setEnd(node, m.index + m[0].length);
        const rects = Array.from(range.getClientRects()).filter((r) => r.width > 0);
        const width = rects.reduce((w, r) => w + r.width, 0);
        const tops = new Set(rects.map((r) => Math.round(r.top))).size;
        if (tops > 1 && width < el.clientWidth) broken.push(m[0]);
      }
    }
    return broken;
  };
"""

#: Layout facts of the page as drawn: sideways overflow of the runs table and the page, the lines each
#: header, tier cell and provenance word takes, chart widths against their element, and overlapping
#: labels (point labels of a chart, visible labels of one axis).
LAYOUT = r"""(() => {
  const lines = (node) => {
    const range = document.createRange();
    range.selectNodeContents(node);
    return new Set(Array.from(range.getClientRects()).filter((r) => r.width > 0).map((r) => Math.round(r.top))).size;
  };
%BROKEN_WORDS%  const overlaps = (boxes) => {
    const hits = [];
    for (let i = 0; i < boxes.length; i++)
      for (let j = i + 1; j < boxes.length; j++) {
        const a = boxes[i].box, b = boxes[j].box;
        if (a.left < b.right - 0.5 && b.left < a.right - 0.5 && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5)
          hits.push([boxes[i].text, boxes[j].text]);
      }
    return hits;
  };
  const visible = (t) => getComputedStyle(t).opacity !== "0" && t.getAttribute("opacity") !== "0" && t.textContent;
  const table = document.getElementById("runs");
  const wrap = table.parentElement;
  return {
    table: [table.scrollWidth, table.clientWidth, wrap.scrollWidth, wrap.clientWidth],
    page: [document.documentElement.scrollWidth, document.documentElement.clientWidth],
    // a header's own words (the interval's small second line, span.ci, is its own line)
    headers: Array.from(document.querySelectorAll("#runs th")).map((th) => [th.firstChild.data, lines(th.firstChild)]),
    tiers: Array.from(document.querySelectorAll("td.tier")).map((td) => [td.textContent, lines(td)]),
    provenance: Array.from(document.querySelectorAll("#provenance dd")).flatMap(brokenWords),
    charts: Array.from(document.querySelectorAll("div.chart")).map((el) => {
      const svg = el.querySelector("svg");
      const labels = Array.from(el.querySelectorAll("g.role-mark text")).filter(visible)
        .map((t) => ({text: t.textContent, box: t.getBoundingClientRect()}));
      const axes = Array.from(el.querySelectorAll("g.role-axis")).map((axis) =>
        overlaps(Array.from(axis.querySelectorAll("g.role-axis-label text")).filter(visible)
          .map((t) => ({text: t.textContent, box: t.getBoundingClientRect()}))));
      return {id: el.id, width: svg.getBoundingClientRect().width, box: el.clientWidth,
              labels: overlaps(labels), axes: axes.flat(), right: svg.getBoundingClientRect().right};
    }),
  };
})()""".replace("%BROKEN_WORDS%", BROKEN_WORDS)


def _drawn(browser: Browser, reports: dict[str, Path], width: int) -> Iterator[tuple[str, Page]]:
    """Each report in a tab ``width`` px wide (800 high), once every chart is drawn: (language, page)."""
    for lang, report in reports.items():
        page = Page(browser, width=width, height=800)
        page.load(report.resolve().as_uri())
        assert page.wait_for('document.querySelectorAll("div.chart:not([data-drawn])").length === 0'), lang
        yield lang, page


@pytest.mark.parametrize("width", [1280, 1024])
def test_report_reads_on_a_laptop_screen(
    reports: dict[str, Path], tmp_path: Path, width: int, browser: Browser
) -> None:
    assert CHROMIUM is not None
    keep = os.environ.get("TIERSCOPE_SCREENSHOTS")
    for lang, page in _drawn(browser, reports, width):
        layout = page.evaluate(LAYOUT)
        where = f"{lang} at {width} px"
        shot = page.screenshot(tmp_path / f"layout-{lang}-{width}.png")
        if keep:
            Path(keep).mkdir(parents=True, exist_ok=True)
            shutil.copy(shot, Path(keep) / shot.name)
        # no sideways scrolling: the table, its wrapper and the page are as wide as they show
        table_scroll, table_client, wrap_scroll, wrap_client = layout["table"]
        assert table_scroll == table_client and wrap_scroll == wrap_client, (where, layout["table"])
        assert layout["page"][0] == layout["page"][1], (where, layout["page"])
        # tier names on one line (never STANDARD / _1)
        assert layout["tiers"] and all(n == 1 for _, n in layout["tiers"]), (where, layout["tiers"])
        # headers wrap at words and phrases: at most 4 lines, and at least 3 characters a line on average
        # (a Japanese header squeezed to one character per line has as many lines as characters)
        squeezed = [(text, n) for text, n in layout["headers"] if n > 4 or n > max(1, len(text) / 3)]
        assert squeezed == [], (where, squeezed)
        assert layout["provenance"] == [], f"{where}: words broken across lines: {layout['provenance']}"
        for chart in layout["charts"]:
            # the chart follows the page: as wide as its element (within the 5 px Vega keeps) and inside it
            assert abs(chart["width"] - chart["box"]) <= 5, (where, chart["id"], chart["width"], chart["box"])
            assert chart["labels"] == [], f"{where} {chart['id']}: point labels overlap {chart['labels']}"
            assert chart["axes"] == [], f"{where} {chart['id']}: axis labels touch {chart['axes']}"
        assert page.log.console_errors == [] and page.log.exceptions == [], where


def _png_size(path: Path) -> tuple[int, int]:
    """Width and height from a PNG's IHDR chunk (bytes 16-24)."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", path
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


#: The screenshots docs/screenshots.py draws, (width, height) in px: a laptop, a smaller one, a phone's long page.
SHOTS = ((1280, 800), (1024, 800), (390, 1800))


def test_the_readme_screenshots_are_regenerated_from_the_demo(tmp_path: Path) -> None:
    import subprocess
    import sys

    root = ROOT
    doc = (root / "docs" / "report.md").read_text()
    assert "](docs/report-1280.png)" in (root / "README.md").read_text()
    for width, height in SHOTS:
        committed = root / "docs" / f"report-{width}.png"
        assert f"](report-{width}.png)" in doc
        assert _png_size(committed) == (width, height) and committed.stat().st_size < 250_000  # small in the repo
    done = subprocess.run(
        [sys.executable, str(root / "docs" / "screenshots.py"), "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    for width, height in SHOTS:
        shot = tmp_path / f"report-{width}.png"
        # the top of the report: more than a blank page (a blank 1280 x 800 PNG is a few kB)
        assert _png_size(shot) == (width, height) and shot.stat().st_size > 40_000


#: What a reader on any screen needs, measured in the page as drawn: the page never scrolls sideways; no
#: title (h1-h3, a chart's) is cut or reaches past the screen; the runs table stays inside the screen (wider than a
#: phone it may scroll in its own box with the run column pinned; on a phone its runs are cards, nothing hidden
#: to the right); every bar of the bar charts
#: keeps its run's label; no word of the failed runs or the provenance broken across lines (a path may wrap
#: after a /); no chart's legend names a run the chart does not draw.
SCREEN = r"""(() => {
  const vw = document.documentElement.clientWidth;
%BROKEN_WORDS%  const titles = Array.from(document.querySelectorAll("h1, h2, h3, .chart-title")).filter((el) => {
    const box = el.getBoundingClientRect();
    return el.scrollWidth > el.clientWidth + 1 || box.left < -0.5 || box.right > vw + 0.5;
  }).map((el) => el.textContent);
  const wrap = document.getElementById("runs").parentElement;
  const wrapBox = wrap.getBoundingClientRect();
  wrap.scrollLeft = wrap.scrollWidth;  // scrolled to its far end, the run column must still be at the left
  const runCell = document.querySelector("#runs td.run").getBoundingClientRect();
  const pinned = Math.abs(runCell.left - wrapBox.left) < 1.5;
  wrap.scrollLeft = 0;
  const values = (spec) => {
    const found = [];
    const walk = (node) => {
      if (Array.isArray(node)) node.forEach(walk);
      else if (node && typeof node === "object") {
        if (Array.isArray(node.values)) node.values.forEach((v) => v && v.run_id !== undefined && found.push(v.run_id));
        Object.values(node).forEach(walk);
      }
    };
    walk(spec);
    return Array.from(new Set(found));
  };
  const visible = (t) => getComputedStyle(t).opacity !== "0" && t.getAttribute("opacity") !== "0" && t.textContent;
  const bars = {};
  const legends = {};
  for (const chart of charts) {
    const el = document.getElementById(chart.id);
    const runs = values(chart.spec);
    const labels = Array.from(el.querySelectorAll("g.role-axis-label text")).filter(visible).map((t) => t.textContent);
    const shows = (l, r) => l === r || (l.endsWith("…") && r.startsWith(l.slice(0, -1)));
    if (["chart-speedup", "chart-goodput", "chart-target"].includes(chart.id))
      bars[chart.id] = runs.filter((r) => !labels.some((l) => shows(l, r)));
    const named = Array.from(el.querySelectorAll("g.role-legend")).filter((g) =>
      g.querySelector(".role-legend-title text") && g.querySelector(".role-legend-title text").textContent === "%RUN%")
      .flatMap((g) => Array.from(g.querySelectorAll(".role-legend-label text")).map((t) => t.textContent));
    legends[chart.id] = named.filter((l) => !runs.some((r) => shows(l, r)));
  }
  return {
    page: [document.documentElement.scrollWidth, vw],
    titles,
    table: [wrapBox.left, wrapBox.right, vw],
    pinned,
    hidden: wrap.scrollWidth - wrap.clientWidth,
    bars,
    legends,
    // the cause and the note (a run id, one long token, may break anywhere in its narrow column)
    failed: Array.from(document.querySelectorAll("#failed td:not(.run)")).flatMap(brokenWords),
    provenance: Array.from(document.querySelectorAll("#provenance dd")).flatMap(brokenWords),
  };
})()""".replace("%BROKEN_WORDS%", BROKEN_WORDS)


@pytest.mark.parametrize("width", [390, 768, 1280, 1920])
def test_report_reads_on_a_phone_a_tablet_a_laptop_and_a_wide_screen(
    reports: dict[str, Path],
    tmp_path: Path,
    width: int,
    browser: Browser,
) -> None:
    assert CHROMIUM is not None
    keep = os.environ.get("TIERSCOPE_SCREENSHOTS")
    for lang, page in _drawn(browser, reports, width):
        run_title = "Run" if lang == "en" else json.loads((ROOT / "reports/i18n/ja.json").read_text())["chart.run"]
        screen = page.evaluate(SCREEN.replace("%RUN%", run_title))
        where = f"{lang} at {width} px"
        shot = page.screenshot(tmp_path / f"screen-{lang}-{width}.png")
        if keep:
            Path(keep).mkdir(parents=True, exist_ok=True)
            shutil.copy(shot, Path(keep) / shot.name)
        assert screen["page"][0] <= screen["page"][1], f"{where}: the page scrolls sideways {screen['page']}"
        assert screen["titles"] == [], f"{where}: titles cut or off the screen: {screen['titles']}"
        left, right, viewport = screen["table"]
        assert left >= 0 and right <= viewport + 0.5, f"{where}: the runs table's box leaves the screen"
        assert screen["pinned"], f"{where}: the run column scrolled away with the table"
        if width <= PHONE:
            assert screen["hidden"] <= 0, f"{where}: the runs table hides {screen['hidden']} px to the right"
        lost = {chart: runs for chart, runs in screen["bars"].items() if runs}
        assert lost == {}, f"{where}: bars lost their labels: {lost}"
        assert len(screen["bars"]) == 3, screen["bars"]
        assert all(extra == [] for extra in screen["legends"].values()), f"{where}: legends {screen['legends']}"
        assert screen["failed"] == [], f"{where}: failed-run words broken: {screen['failed']}"
        assert screen["provenance"] == [], f"{where}: provenance words broken: {screen['provenance']}"
        assert page.log.console_errors == [] and page.log.exceptions == [], where
