"""The demo's report on a phone, in real headless chromium (network off): each run of the runs table is a card
whose answer figures (steady global steps/s with its interval, speedup, price, hours to N) come first and lie
inside the screen, each after its label from the header (English and Japanese); no header row takes room.
The figures are read from the demo's own summary, so a change of the analysis changes the expectation too.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.reports.test_browser import _drawn
from tests.reports.test_render_machines import report_of
from tests.support.reports_cdp import Browser, find_chromium
from tierscope.demo import DemoResult, run_demo
from tierscope.reports.i18n import Catalog
from tierscope.reports.render import render_html

CHROMIUM = find_chromium()
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="chromium not installed (Debian: apt-get install chromium; .ci/run does it)"
)

#: Phone widths in CSS pixels: a small phone, a common one, a large one.
PHONES = (320, 390, 430)

#: Per card of the runs table: the run, the steady rate as shown, the box of every figure (the text of each answer
#: cell, the interval under it included), the label before each cell, and the top of each cell; the page's width
#: and sideways scroll, and every header a reader sees with its lines.
CARDS = r"""(() => {
  const vw = document.documentElement.clientWidth;
  const textBoxes = (el) => {
    const range = document.createRange();
    range.selectNodeContents(el);
    return Array.from(range.getClientRects()).filter((r) => r.width > 0)
      .map((r) => ({left: r.left, right: r.right, top: r.top}));
  };
  const lines = (el) => new Set(textBoxes(el).map((r) => Math.round(r.top))).size;
  // a cell's own text, without the interval under it (null: no such cell)
  const own = (td) => td && Array.from(td.childNodes).filter((n) => n.nodeType === 3).map((n) => n.data)
    .join("").trim();
  const wrap = document.getElementById("runs").parentElement;
  return {
    vw,
    page: document.documentElement.scrollWidth,
    wrap: [wrap.scrollWidth, wrap.clientWidth],
    runsHeader: document.querySelector("#runs thead").getBoundingClientRect().height,
    headers: Array.from(document.querySelectorAll("th")).filter((th) => th.getBoundingClientRect().height > 0)
      .map((th) => [th.textContent, lines(th)]),
    cards: Array.from(document.querySelectorAll("#runs tbody tr")).map((tr) => ({
      run: own(tr.querySelector("td.run")),
      steady: own(tr.querySelector("td.steady")),
      figures: Array.from(tr.querySelectorAll("td.answer")).map((td) => ({text: td.textContent, boxes: textBoxes(td)})),
      labels: Array.from(tr.querySelectorAll("td:not(.run):not(.tier)")).map((td) => [td.dataset.label,
        getComputedStyle(td, "::before").content]),
      answerTops: Array.from(tr.querySelectorAll("td.answer")).map((td) => td.getBoundingClientRect().top),
      otherTops: Array.from(tr.querySelectorAll("td:not(.answer):not(.run):not(.tier)"))
        .map((td) => td.getBoundingClientRect().top),
    })),
  };
})()"""


@pytest.fixture(scope="module")
def demos(tmp_path_factory: pytest.TempPathFactory) -> dict[str, DemoResult]:
    root = tmp_path_factory.mktemp("phone")
    return {lang: run_demo(root / lang, lang) for lang in ("en", "ja")}


@pytest.mark.parametrize("width", PHONES)
def test_each_runs_answer_figures_are_on_a_phones_screen(
    demos: dict[str, DemoResult],
    tmp_path: Path,
    width: int,
    browser: Browser,
) -> None:
    assert CHROMIUM is not None
    for lang, page in _drawn(browser, {lang: demo.report for lang, demo in demos.items()}, width):
        demo = demos[lang]
        shown = page.evaluate(CARDS)
        where = f"{lang} at {width} px"
        vw = shown["vw"]  # the screen less the scroll bar: at most `width`
        assert 0 < vw <= width
        assert shown["page"] <= vw, f"{where}: the page scrolls sideways"
        # nothing of the runs table is hidden to the right of its box
        assert shown["wrap"][0] <= shown["wrap"][1], (where, shown["wrap"])
        # no header block: the runs table draws no header row (each value has its label) and any header
        # shown elsewhere takes a line or two
        assert shown["runsHeader"] == 0, (where, shown["runsHeader"])
        assert [h for h in shown["headers"] if h[1] > 2] == [], (where, shown["headers"])

        # every run of the demo with a steady rate shows it, to 3 decimals, inside the screen
        cards = {card["run"]: card for card in shown["cards"]}
        rates = {
            row["run_id"]: row["steady_global_steps_per_s"]
            for row in demo.summary.iter_rows(named=True)
            if row["steady_global_steps_per_s"] is not None
        }
        assert len(rates) >= 2 and set(rates) <= set(cards), (where, sorted(rates), sorted(cards))
        for run, rate in rates.items():
            card = cards[run]
            assert float(card["steady"].replace(",", "")) == pytest.approx(rate, abs=5e-4), (where, run, card)
            for figure in card["figures"]:
                for box in figure["boxes"]:
                    assert box["left"] >= 0 and box["right"] <= vw + 0.5, (where, run, figure, vw)
            # the answer figures come first, then status, tasks and the secondary columns
            assert max(card["answerTops"]) < min(card["otherTops"]), (where, run, card)
        # each value's label is its column's header, in the report's language
        words = Catalog(lang)
        for card in shown["cards"]:
            labels = dict(card["labels"])
            assert words("col.steady") in labels and words("col.group.speedup") in labels, (where, labels)
            for label, before in card["labels"]:
                assert label and before == f'"{label}"', (where, card["run"], label, before)
        assert page.log.console_errors == [] and page.log.exceptions == [], where
        assert page.log.requests == [demo.report.resolve().as_uri()], "the page requested something besides itself"


def test_runs_named_by_their_machines_read_on_a_small_phone(tmp_path: Path, browser: Browser) -> None:
    # a T4 run, an A100 run and an 8 x A100 run that died of OOM: the machines' names are the longest words a
    # card holds ("1 x a2-highgpu-8g (8 x NVIDIA_TESLA_A100)", 315 px on one line) and they wrap between words
    # in the run's card and in the failed run's, so a 320 px page does not scroll sideways
    assert CHROMIUM is not None
    data = report_of(tmp_path, ("t4", "a100", "a100x8"), failed=("a100x8",))
    reports = {}
    for lang in ("en", "ja"):
        reports[lang] = tmp_path / f"report-{lang}.html"
        reports[lang].write_text(render_html(data, lang), encoding="utf-8")
    for lang, page in _drawn(browser, reports, 320):
        shown = page.evaluate(CARDS)
        assert shown["page"] <= shown["vw"] and shown["wrap"][0] <= shown["wrap"][1], (lang, shown)
        usd = Catalog(lang)("col.usd_1000")
        for card in shown["cards"]:
            assert usd in dict(card["labels"]), (lang, card["labels"])
            for figure in card["figures"]:
                assert all(box["left"] >= 0 and box["right"] <= shown["vw"] + 0.5 for box in figure["boxes"])
