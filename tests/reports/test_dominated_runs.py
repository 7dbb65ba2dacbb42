"""Runs far apart on a chart's axis (one with 100x the other's steps and rate) share it on a log scale, so the
smaller run is drawn, not flattened against the axis; runs within 10x (the 2016 demo's) keep linear axes
(tierscope.reports.charts.spans_runs). Checked in the specs and as headless Chromium draws them."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from tests.support.reports_cdp import Browser, Page, find_chromium
from tierscope import Dataset, ReportOptions, analyze, write_report
from tierscope.collector.collect import collect_runs, runs_from_paths
from tierscope.reports import charts
from tierscope.reports.charts import PALETTE
from tierscope.reports.i18n import Catalog
from tierscope.reports.options import analysis_options

CHROMIUM = find_chromium()


def _scale(spec: dict, axis: str) -> str | None:
    return spec["encoding"][axis].get("scale", {}).get("type")


def test_a_run_100x_another_puts_both_axes_of_the_steps_chart_on_a_log_scale() -> None:
    # slow: steps 100 ... 1,000 at about 1 global step/s; fast: 1,000 ... 100,000 at about 100.
    # Extents 1,000 and 100,000 (100x > 10x): log steps. Median rates 1.0 and 100.0 (100x): log rates.
    points = pl.DataFrame(
        {
            "run_id": ["slow"] * 3 + ["fast"] * 3,
            "step": [100, 500, 1000, 1000, 50000, 100000],
            "rate": [0.8, 1.0, 1.2, 80.0, 100.0, 120.0],
        }
    )
    spec = charts.throughput_steps_chart(points, Catalog("en"))
    assert spec is not None
    assert (_scale(spec, "x"), _scale(spec, "y")) == ("log", "log")
    assert spec["encoding"]["x"]["title"] == "Global step, log scale"
    assert spec["encoding"]["y"]["title"] == "Global steps/s (interval), log scale"
    # over time: both ran about 1,000 s (1x): linear time, log rates
    timed = points.with_columns(seconds=pl.Series([100.0, 500.0, 1000.0, 10.0, 500.0, 1000.0]))
    spec = charts.throughput_time_chart(timed, Catalog("ja"))
    assert spec is not None
    assert (_scale(spec, "x"), _scale(spec, "y")) == (None, "log")
    assert spec["encoding"]["y"]["title"] == "グローバルステップ/秒 (区間) (対数目盛)"


def test_the_tasks_of_a_run_100x_another_share_a_log_axis() -> None:
    # median local steps/s: slow 1.0 (its straggler 0.5), fast 100.0: 100x apart
    frame = pl.DataFrame(
        {
            "run_id": ["slow", "slow", "slow", "fast", "fast"],
            "task": ["worker/0", "worker/1", "worker/2", "worker/0", "worker/1"],
            "local_steps_per_s": [1.0, 1.0, 0.5, 100.0, 100.0],
            "straggler": [False, False, True, False, False],
        }
    )
    spec = charts.task_rates_chart(frame, Catalog("en"))
    assert spec is not None and _scale(spec, "x") == "log"
    # the near miss: 1.0 against 9.0 (9x) stays linear from 0
    fast = pl.col("run_id") == "fast"
    near = frame.with_columns(local_steps_per_s=pl.when(fast).then(9.0).otherwise(pl.col("local_steps_per_s")))
    spec = charts.task_rates_chart(near, Catalog("en"))
    assert spec is not None and spec["encoding"]["x"]["scale"] == {"zero": True}


def test_the_demos_runs_within_10x_keep_linear_axes() -> None:
    # the 2016 demo's steady rates 4.640, 18.838, 22.389 (22.389 / 4.640 = 4.8x), every run to step 1,000
    points = pl.DataFrame(
        {"run_id": ["basic", "local", "standard_1"], "step": [1000] * 3, "rate": [4.640, 18.838, 22.389]}
    )
    spec = charts.throughput_steps_chart(points, Catalog("en"))
    assert spec is not None
    assert (_scale(spec, "x"), _scale(spec, "y")) == (None, None)
    assert spec["encoding"]["y"]["title"] == "Global steps/s (interval)"


def _log(path: Path, first: int, every: int, records: int, rates: tuple[float, float]) -> Path:
    """A master's log: ``records`` reports ``every`` steps apart from ``first``, alternately at ``rates``."""
    elapsed, lines = 0.0, []
    for k in range(records):
        rate = rates[k % 2]
        elapsed += every / rate
        lines.append(
            f"Train [master/0], step {first + every * k}:loss:1.0, accuracy:0.5 ({elapsed:.3f} sec) "
            f"{rate:.3f} global_steps/s, {rate:.3f} local_steps/s"
        )
    path.write_text("\n".join(lines) + "\n")
    return path


#: The symbols of the steps chart's points, per fill colour: their x and y in the SVG (px).
POINTS = """(() => {
  const el = document.querySelector("#chart-throughput_steps");
  const found = {};
  for (const p of el.querySelectorAll("svg g.role-mark path[fill]")) {
    const m = /translate\\(([-\\d.]+),([-\\d.]+)\\)/.exec(p.getAttribute("transform") || "");
    if (!m) continue;
    (found[p.getAttribute("fill")] ||= []).push([parseFloat(m[1]), parseFloat(m[2])]);
  }
  return found;
})()"""


@pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed (Debian: apt-get install chromium)")
def test_the_smaller_run_is_drawn_not_flattened_in_chromium(tmp_path: Path, browser: Browser) -> None:
    assert CHROMIUM is not None
    slow = _log(tmp_path / "slow.log", 100, 100, 20, (0.8, 1.2))  # steps 100 ... 2,000
    fast = _log(tmp_path / "fast.log", 1000, 1000, 100, (80.0, 120.0))  # steps 1,000 ... 100,000
    ds = Dataset(tmp_path / "ds")
    collect_runs(ds, runs_from_paths([slow], "slow", None, None) + runs_from_paths([fast], "fast", None, None))
    report = write_report(analyze(ds, analysis_options()), tmp_path / "report.html", ReportOptions(lang="en"))
    page = Page(browser, width=1280, height=800)
    page.load(report.resolve().as_uri())
    assert page.wait_for('document.querySelectorAll("div.chart:not([data-drawn])").length === 0')
    drawn = page.evaluate(POINTS)
    assert page.log.console_errors == [] and page.log.exceptions == []
    # the runs' colours in the report's order (fast, slow): PALETTE[0] and PALETTE[1]
    slow_points = drawn[PALETTE[1]]
    xs, ys = [x for x, _ in slow_points], [y for _, y in slow_points]
    # On linear axes to 100,000 steps and 120 global steps/s over a ~1,200 x 280 px plot, the slow run's steps
    # 100 ... 2,000 would span ~23 px and its 0.8 / 1.2 steps/s ~1 px. On log axes: steps log(2,000 / 100) /
    # log(100,000 / 100) = 0.43 of the width (hundreds of px); rates log(1.2 / 0.8) / log(120 / 0.8) = 0.08 of
    # the 280 px height, ~22 px (Vega's nice ends widen the domain a little: at least 10 px asserted).
    assert max(xs) - min(xs) > 300, xs
    assert max(ys) - min(ys) > 10, ys
