"""Where the report shows a run's steady rate it says what the rate rests on and what a job would take at it:
a steady rate from the log's clock (its printed rate set aside) is said under the table and marked in its cell;
the hours to N at the steady-state rate stand under the sustained ones, and beside them in the answer; a run
without a price is named alone as the fastest, with what would give it a price. English and Japanese."""

from __future__ import annotations

import re
import shutil
from datetime import date

import polars as pl
import pytest

from tests.analysis.test_printed_rate_against_clock import _fairseq
from tests.analysis.test_sustained_plans import _dataset
from tierscope.analysis import AnalysisOptions, analyze
from tierscope.collector.collect import collect_runs, runs_from_paths
from tierscope.dataset.store import Dataset
from tierscope.reports.charts import cost_time_chart
from tierscope.reports.headline import headline, no_price
from tierscope.reports.i18n import Catalog
from tierscope.reports.render import ReportData, analysis_options, render_html, report_data


def _text(html: str) -> str:
    """The page's words before its scripts, tags dropped and spaces collapsed."""
    body = html.split("<body>", 1)[1].split("<script>", 1)[0]
    return " ".join(re.sub(r"<[^>]+>", " ", body).replace("&#39;", "'").split())


@pytest.fixture(scope="module")
def fairseq(tmp_path_factory: pytest.TempPathFactory) -> ReportData:
    """fairseq's ``ups=0.04`` (an average since the epoch began) beside 400 updates every 113 s by its
    ``wall=``: collected with no tier and no machines."""
    root = tmp_path_factory.mktemp("fairseq")
    log = root / "train.log"
    log.write_text("".join(_fairseq(2000 + 400 * i, 600 + 113 * i, "0.04") for i in range(4)), encoding="utf-8")
    collect_runs(Dataset(root / "ds"), runs_from_paths([log], "r", None, None))
    return report_data(analyze(Dataset(root / "ds"), analysis_options(AnalysisOptions(), steps=10000)))


def test_a_steady_rate_from_the_clock_is_said_where_the_rate_is_shown(fairseq: ReportData) -> None:
    # Each steady interval: 400 updates in 113 s by the clock = 3.5398/s, against a printed 0.04 (0.035-0.045
    # as printed): outside the printed rounding, so the clock's rate is the steady rate, 3.540 in the table.
    en = _text(render_html(fairseq, "en"))
    assert "3.540 3.540–3.540 from the log's clock" in en  # the steady cell: rate, interval, what it rests on
    assert (
        "r: steady-state rate from the log's clock: the log printed 0.04 global steps/s, its clock gives 3.54 over "
        "the same intervals (outside what the printed figure's rounding allows); the printed figure is set aside."
    ) in en
    ja = _text(render_html(fairseq, "ja"))
    assert "3.540 3.540〜3.540 ログの時刻による" in ja
    assert (
        "r: 定常状態の速度はログの時刻から求めました。ログに出力された 0.04 グローバルステップ/秒は、同じ区間を"
        "時刻で測った 3.54 と食い違うため使っていません (出力値の丸めでは説明できない差)。"
    ) in ja


def test_a_run_with_no_price_is_named_alone_with_what_would_price_it(fairseq: ReportData) -> None:
    # the run names no tier and no machines: "Fastest: r (–)" said nothing; now its rate, then how to price it
    table = fairseq.configurations
    assert headline(table, fairseq.costs, fairseq.steps, Catalog("en")) == [
        "Fastest: r at 3.54 global steps/s.",
        "No price is known: no run says what it ran on. Give it when you collect the run's logs (--machine, with "
        "--accelerator for its GPUs, or --tpu for a TPU slice; --tier for a legacy scale tier), and each run is "
        "priced from dated price rows.",
    ]
    ja = headline(table, fairseq.costs, fairseq.steps, Catalog("ja"))
    assert ja[0] == "最速: r、3.54 グローバルステップ/秒。" and "--machine" in ja[1] and "--tpu" in ja[1]
    assert "(–)" not in _text(render_html(fairseq, "en")).split("Runs and what they ran on")[0]


def test_runs_on_known_machines_without_a_price_row_are_told_to_give_rows() -> None:
    # a STANDARD_1 run the price table has no row for on its date; a local run is priced by nothing
    rated = {"steady_global_steps_per_s": [2.0], "usd_per_hour": [None], "ml_units_per_hour": [None]}
    cloud = pl.DataFrame(
        {**rated, "tier": ["STANDARD_1"], "hardware": [None]}, schema_overrides={"hardware": pl.String}
    )
    local = pl.DataFrame({**rated, "tier": ["local"], "hardware": [None]}, schema_overrides={"hardware": pl.String})
    priced = cloud.with_columns(ml_units_per_hour=pl.lit(10.0))
    en = Catalog("en")
    assert no_price(cloud, en) == (
        "No price is known for what these runs ran on, on their dates: give price rows of your own with --prices FILE."
    )
    assert no_price(local, en) is not None and no_price(local, en).startswith("No price is known: no run says")
    assert no_price(priced, en) is None


@pytest.fixture(scope="module")
def paused(tmp_path_factory: pytest.TempPathFactory) -> ReportData:
    """The checkpointing log of tests/analysis/test_sustained_plans.py twice, as BASIC (ckpt) and STANDARD_1
    (big), priced on 2016-06-01 (ML units only: the table shows the hours to N)."""
    root = tmp_path_factory.mktemp("paused")
    ds = _dataset(root)
    shutil.copy(root / "ckpt.log", root / "big.log")
    collect_runs(Dataset(ds), runs_from_paths([root / "big.log"], "big", "STANDARD_1", None))
    options = AnalysisOptions(price_date=date(2016, 6, 1))
    return report_data(analyze(Dataset(ds), analysis_options(options, steps=100000)))


def test_the_steady_hours_stand_under_the_sustained_ones(paused: ReportData) -> None:
    # Each run: 10 global steps/s steady (the 2x checkpoint intervals left out as stalls), sustained
    # 10 x 510 / 610 = 8.3607 (its 5100 steps over its 610 s), no start-up. To 100,000 steps:
    # 100,000 / 8.3607 / 3600 = 3.3224 h sustained (3.32), 100,000 / 10 / 3600 = 2.7778 h steady (2.78).
    html = render_html(paused, "en")
    assert html.count('3.32<span class="ci steady-hours">steady: 2.78</span>') == 2
    assert 'Hours to 100,000 steps<span class="ci">at the sustained rate; at the steady-state rate below</span>' in html
    ja = render_html(paused, "ja")
    assert ja.count('3.32<span class="ci steady-hours">定常: 2.78</span>') == 2
    assert "持続レートによる (下段は定常状態の速度による)" in ja


def test_the_answer_and_the_price_chart_give_both_times(paused: ReportData) -> None:
    # Best value, in ML unit-hours on 2016 prices: BASIC 1 unit x 3.3224 h = 3.32 unit-hours, STANDARD_1 10 x
    # 3.3224 = 33.2: BASIC, its 3.3 h to 100,000 steps with 2.8 h at the steady-state rate beside it.
    table = paused.configurations
    en = headline(table, paused.costs, paused.steps, Catalog("en"))
    assert en[2] == (
        "Best value (lowest price × time): ckpt (BASIC) does 100,000 steps in 3.3 h (2.8 h at its steady-state "
        "rate) for 3.32 ML unit-hours."
    )
    ja = headline(table, paused.costs, paused.steps, Catalog("ja"))
    assert "100,000 ステップを 3.3 時間 (定常状態の速度なら 2.8 時間)、3.32 ML ユニット時間で実行します。" in ja[2]
    # the chart's points carry both times (hours: 3.322 sustained, 2.778 steady) for the tooltip
    spec = cost_time_chart(paused.costs, Catalog("en"), paused.steps)
    assert spec is not None
    points = next(layer for layer in spec["layer"] if layer["mark"]["type"] == "point")["data"]["values"]
    assert {(p["run_id"], p["time"], p["steady_time"]) for p in points} == {
        ("big", 3.322, 2.778),
        ("ckpt", 3.322, 2.778),
    }
    assert "Time to 100,000 steps at the steady-state rate (h)" in str(spec)
