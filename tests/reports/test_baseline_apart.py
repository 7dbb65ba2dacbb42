"""The report says why a run has no speedup where its work seems another job's (analysis/comparable.py): a note under
the runs table, a word in its speedup cell and, where that run is the fastest, a sentence in the headline, in English
and in Japanese; with ``--baseline`` the note says how the compared runs differ. Checked in headless Chromium."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from tests.analysis.test_comparable import _dataset
from tests.support.reports_cdp import Browser, Page, find_chromium
from tierscope import AnalysisOptions, ReportOptions, analyze, write_report
from tierscope.analysis.comparable import APART_SCHEMA
from tierscope.reports.headline import fastest, headline
from tierscope.reports.i18n import Catalog
from tierscope.reports.options import analysis_options
from tierscope.reports.render import apart_notes, report_data

CHROMIUM = find_chromium()

#: What the page shows of its runs table, its notes and its headline.
SHOWN = """({
  cells: Object.fromEntries(Array.from(document.querySelectorAll("#runs tbody tr")).map((tr) =>
    [tr.querySelector("td.run").textContent, tr.querySelector("td.speedup").innerText.replace(/\\s+/g, " ").trim()])),
  notes: Array.from(document.querySelectorAll("#tiers p.note")).map((p) => p.innerText),
  headline: Array.from(document.querySelectorAll("#headline p")).map((p) => p.innerText),
})"""

# The 2016 demo's BASIC log (read as cloudml: 4.640 global steps/s, the baseline, first by run id) and a Keras log
# (read as keras: 2 / (0.261 + 0.265 s) = 3.802 steps/s, tests/analysis/test_comparable.py): another job's work.
KEPT_EN = (
    "keras: not compared with the baseline basic (no speedup or scaling efficiency): its records were read as keras, "
    "the baseline's as cloudml; another job's work, it seems (--baseline basic compares them)."
)
KEPT_JA = (
    "keras: 基準 basic とは比べていません (高速化率・スケーリング効率なし): "
    "記録を読んだ形式が keras で、基準は cloudml。別のジョブの処理と思われます (--baseline basic で比べられます)。"
)


def _analysis(root: Path, baseline: str | None = None):
    return analyze(_dataset(root, "basic", "keras"), analysis_options(AnalysisOptions(baseline=baseline), steps=3600))


def test_the_runs_kept_apart_are_said_under_the_table_in_each_language(tmp_path: Path) -> None:
    data = report_data(_analysis(tmp_path))
    assert data.apart is not None
    assert data.apart.to_dicts() == [
        {"run_id": "keras", "baseline_run_id": "basic", "named": False, "formats": "keras",
         "baseline_formats": "cloudml", "examples_unit": None, "baseline_examples_unit": None},
    ]  # fmt: skip
    assert apart_notes(data.apart, Catalog("en")) == [KEPT_EN]
    assert apart_notes(data.apart, Catalog("ja")) == [KEPT_JA]


def test_a_named_baseline_says_how_the_runs_differ_and_marks_no_cell(tmp_path: Path) -> None:
    # near-miss: with --baseline basic the Keras run is compared (3.802 / 4.640 = 0.82x): no dash to explain, only
    # how the two differ
    data = report_data(_analysis(tmp_path, baseline="basic"))
    assert apart_notes(data.apart, Catalog("en")) == [
        "keras: compared with basic as --baseline asks, though its records were read as keras, the baseline's as "
        "cloudml."
    ]
    assert apart_notes(data.apart, Catalog("ja")) == [
        "keras: --baseline の指定どおり basic と比べていますが、記録を読んだ形式が keras で、基準は cloudml。"
    ]


def test_runs_of_one_job_have_no_such_note(tmp_path: Path) -> None:
    # near-miss: the laptop and BASIC ran one job (both read as cloudml): compared, nothing to say
    data = report_data(analyze(_dataset(tmp_path, "basic", "local"), analysis_options(AnalysisOptions(), steps=3600)))
    assert data.apart is not None and data.apart.height == 0
    assert apart_notes(data.apart, Catalog("en")) == []


@pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed (Debian: apt-get install chromium)")
def test_the_report_shows_why_in_its_table_its_notes_and_its_headline(tmp_path: Path, browser: Browser) -> None:
    assert CHROMIUM is not None
    analysis = _analysis(tmp_path)
    for lang, kept, cell in (("en", KEPT_EN, "– another job's"), ("ja", KEPT_JA, "– 別のジョブ")):
        report = write_report(analysis, tmp_path / f"report-{lang}.html", ReportOptions(lang=lang))
        page = Page(browser)
        page.load(report.resolve().as_uri())
        shown = page.evaluate(SHOWN)
        # basic, the baseline, 1.00x itself; keras a dash, and the word that says why
        assert shown["cells"]["basic"].startswith("1.00"), shown
        assert shown["cells"]["keras"] == cell, shown
        assert kept in shown["notes"], shown["notes"]
        # the answer ranks the baseline's job only: basic is the fastest, keras named as left out
        assert shown["headline"][0].startswith("Fastest: basic" if lang == "en" else "最速"), shown["headline"]
        assert "keras" not in shown["headline"][0], shown["headline"]
        assert "(keras)" in shown["headline"][-1], shown["headline"]
        assert page.log.console_errors == [] and page.log.exceptions == []


def _keras_outruns_basic() -> tuple[pl.DataFrame, pl.DataFrame]:
    """A summary where keras at 5.00 global steps/s outruns basic at 4.64 (the baseline), and the runs kept apart:
    keras, read as keras where the baseline was read as cloudml (another job's work)."""
    summary = pl.DataFrame(
        {"run_id": ["basic", "keras"], "status": ["finished", "finished"], "tier": ["BASIC", None],
         "hardware": [None, None], "steady_global_steps_per_s": [4.64, 5.0], "speedup_vs_baseline": [1.0, None],
         "baseline_run_id": ["basic", None], "speedup_basis": ["steps/s", None], "examples_unit": [None, None],
         "usd_per_1000_steps": [None, None], "steps_per_ml_unit_hour": [None, None], "ml_units_per_hour": [None, None],
         "usd_per_hour": [None, None], "price_rows": [None, None]},
        schema_overrides={"tier": pl.String, "hardware": pl.String, "baseline_run_id": pl.String,
                          "speedup_basis": pl.String, "examples_unit": pl.String, "speedup_vs_baseline": pl.Float64,
                          "usd_per_1000_steps": pl.Float64, "steps_per_ml_unit_hour": pl.Float64,
                          "ml_units_per_hour": pl.Float64, "usd_per_hour": pl.Float64, "price_rows": pl.String},
    )  # fmt: skip
    apart = pl.DataFrame(
        [{"run_id": "keras", "baseline_run_id": "basic", "named": False, "formats": "keras",
          "baseline_formats": "cloudml", "examples_unit": None, "baseline_examples_unit": None}],
        schema=APART_SCHEMA,
    )  # fmt: skip
    return summary, apart


def test_the_headline_says_why_the_fastest_run_has_no_speedup() -> None:
    # keras at 5.00 global steps/s outruns basic at 4.64, but is another job's work: no "1.08x the baseline"
    summary, apart = _keras_outruns_basic()
    assert fastest(summary, Catalog("en"), apart) == (
        "Fastest: keras at 5.00 global steps/s. keras is not compared with the baseline basic: its records were read "
        "as keras, the baseline's as cloudml."
    )
    assert fastest(summary, Catalog("ja"), apart).endswith(
        "keras は基準 basic と比べていません: 記録を読んだ形式が keras で、基準は cloudml。"
    )
    # near-miss: without the runs kept apart (an older analysis), the sentence as before
    assert fastest(summary, Catalog("en")) == "Fastest: keras at 5.00 global steps/s."


def test_the_answer_ranks_the_baseline_job_only_and_names_the_runs_left_out() -> None:
    # keras at 5.00 global steps/s outruns basic at 4.64, but its steps are another job's work: the answer's
    # fastest is basic (the one run of the baseline's job), and keras is named as left out, in each language
    summary, apart = _keras_outruns_basic()
    en = headline(summary, None, 3600, Catalog("en"), apart=apart)
    assert en[0] == "Fastest: basic (BASIC) at 4.64 global steps/s.", en
    assert en[-1] == (
        "1 run of another job (keras) is left out of this answer: its steps are not the baseline basic's work (see "
        "the note under the runs table)."
    ), en
    ja = headline(summary, None, 3600, Catalog("ja"), apart=apart)
    assert ja[-1].startswith("別のジョブの実行 1 件 (keras) はこの答えから除いています"), ja
    # near-miss: with --baseline naming them (named: compared as asked) nothing is left out, keras is the fastest
    named = apart.with_columns(pl.lit(True).alias("named"))
    assert headline(summary, None, 3600, Catalog("en"), apart=named)[0].startswith("Fastest: keras"), named
