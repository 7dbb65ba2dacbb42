"""The report says where N of "hours to N steps" comes from: --steps, else the highest global step a run logged
(naming the runs), else the default (tierscope.reports.render.steps_note), in English and Japanese, under the
runs table and beside the price-against-time chart."""

from __future__ import annotations

import html
from pathlib import Path

import pytest

from tierscope import Dataset, analyze, render_report
from tierscope.collector.collect import collect_runs, runs_from_paths
from tierscope.reports.options import ReportOptions, analysis_options


def _dataset(tmp_path: Path) -> Dataset:
    ds = Dataset(tmp_path / "ds")
    for run, last in (("a", 1000), ("b", 1200)):  # a logs steps 100 ... 1,000, b 100 ... 1,200
        log = tmp_path / f"{run}.log"
        log.write_text(
            "".join(
                f"Train [master/0], step {step}:loss:1.0, accuracy:0.5 ({step / 10:.3f} sec) 10.000 global_steps/s, "
                "10.000 local_steps/s\n"
                for step in range(100, last + 1, 100)
            )
        )
        collect_runs(ds, runs_from_paths([log], run, "BASIC", None))
    return ds


@pytest.fixture(scope="module")
def ds(tmp_path_factory: pytest.TempPathFactory) -> Dataset:
    return _dataset(tmp_path_factory.mktemp("steps_n"))


def _text(ds: Dataset, lang: str, steps: int | None = None) -> str:
    page = render_report(analyze(ds, analysis_options(steps=steps)), ReportOptions(lang=lang))
    return html.unescape(page)


def test_n_is_the_highest_step_a_run_logged_and_the_report_names_the_run(ds: Dataset) -> None:
    # b's last step, 1,200, is the highest logged (a's is 1,000)
    page = _text(ds, "en")
    said = (
        "N = 1,200 global steps, the highest global step a run logged (b): the hours to N steps, the price against "
        "time and the best value are for that many steps; `tierscope report --steps N` plans for another N."
    )
    assert page.count(said) == 2  # under the runs table and beside the price-against-time chart
    assert "N = 1,200 グローバルステップ。実行が記録した最大のグローバルステップ (b) です。" in _text(ds, "ja")


def test_n_asked_with_steps_says_so(ds: Dataset) -> None:
    page = _text(ds, "en", steps=5000)
    assert "N = 5,000 global steps, as asked (--steps)" in page
    assert "the highest global step a run logged" not in page
    assert "N = 5,000 グローバルステップ (--steps で指定)。" in _text(ds, "ja", steps=5000)
