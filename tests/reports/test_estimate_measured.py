"""A sweep's run: the report shows the sweep's estimate (a run fact) beside the measured cost (USD/hour times the
run's lifetime), labelled in English and Japanese; a run no sweep made shows no such table."""

from __future__ import annotations

import re
from datetime import date
from pathlib import Path

import pytest

from tierscope import AnalysisOptions, Dataset, analyze
from tierscope.collector.collect import collect_runs
from tierscope.collector.manifest import RunSpec
from tierscope.reports.options import ReportOptions
from tierscope.reports.render import analysis_options, render_report

#: Ten 2016-format lines, 100 global steps 30 s apart: the last at 300 s on the task's clock.
LINES = "".join(
    f"Train [master/0], step {i * 100}: loss: 0.5, accuracy: 0.9 ({i * 30.0:.3f} sec) 3.333 global steps/s, "
    "3.333 local steps/s\n"
    for i in range(1, 11)
)


def _analysis(tmp_path: Path, estimate: float | None) -> object:
    log = tmp_path / "basic.log"
    log.write_text(LINES, encoding="utf-8")
    dataset = Dataset(tmp_path / "ds")
    run = RunSpec(run_id="BASIC", tier="BASIC", files=[log], date=date(2018, 6, 1), run_id_given=True,
                  config="BASIC", estimate_usd=estimate)  # fmt: skip
    assert not collect_runs(dataset, [run], settle_s=0.0).errors
    return analyze(dataset, analysis_options(AnalysisOptions(region="us")))


def _table(html: str) -> str:
    found = re.search(r'<table id="estimate-measured">.*?</table>', html, re.S)
    assert found is not None
    return re.sub(r"\s+", " ", found.group(0))


def test_the_estimate_stands_beside_the_measured_cost(tmp_path: Path) -> None:
    analysis = _analysis(tmp_path, 0.0817)
    row = analysis.summary.row(0, named=True)  # type: ignore[attr-defined]
    # BASIC on 2018-06-01: 0.5661 ML units/hour x $0.49 per ML unit-hour in the US = $0.277389/hour
    assert row["usd_per_hour"] == pytest.approx(0.277389)
    # its lifetime on the task's clock: 0 s to the last line's 300 s
    assert row["lifetime_s"] == pytest.approx(300.0)
    # measured: 0.277389 x 300 / 3600 = 0.02311575; the estimate is the run fact as the sweep stored it
    assert row["measured_usd"] == pytest.approx(0.02311575)
    assert row["estimate_usd"] == pytest.approx(0.0817)
    english = _table(render_report(analysis, ReportOptions(lang="en")))
    assert "<th>Estimated before it ran (USD)</th><th>Measured (USD)</th>" in english
    assert '">0.0817</td>' in english and '">0.0231</td>' in english  # three significant digits
    japanese = _table(render_report(analysis, ReportOptions(lang="ja")))
    assert "<th>実行前の見積もり (米ドル)</th><th>実測 (米ドル)</th>" in japanese
    assert '">0.0817</td>' in japanese and '">0.0231</td>' in japanese


def test_a_run_no_sweep_made_has_no_estimate_table(tmp_path: Path) -> None:
    analysis = _analysis(tmp_path, None)
    assert analysis.summary.row(0, named=True)["measured_usd"] == pytest.approx(0.02311575)  # type: ignore[attr-defined]
    assert 'id="estimate-measured"' not in render_report(analysis, ReportOptions(lang="en"))
