"""Honest predictions: an exactly determined fit says so everywhere, its prediction has no
interval that pretends to hold the model's error, a fitted one's interval includes leave-one-out,
and an extrapolation beyond 2x the largest measured task count is said in recommend's first line."""

from __future__ import annotations

import json
from datetime import date

import numpy as np
import polars as pl
import pytest
from typer.testing import CliRunner

from tests.analysis.test_summary_2016 import BASIC, STANDARD_1
from tierscope.analysis import AnalysisOptions, analyze
from tierscope.analysis.forecast import predict, recommend, unmeasured
from tierscope.analysis.scaling import (
    DOES_NOT_HOLD,
    EXACT,
    FITTED,
    best_fit,
    fit_model,
    fit_scaling,
    prediction_caveat,
    predictions,
    usl,
)
from tierscope.cli import app
from tierscope.dataset.store import Dataset
from tierscope.reports.frames import scaling_model
from tierscope.reports.headline import would_have
from tierscope.reports.i18n import Catalog
from tierscope.reports.render import analysis_options, render_html, report_data

# The 2016 Amdahl fit by hand (as tests/analysis/test_scaling.py): lambda = 4.6396,
# sigma = (5 x 4.6396 / 22.3894 - 1) / 4 = 0.0090305; at PREMIUM_1's 20 tasks 92.793 / 1.171580 = 79.20.
SIGMA_2016 = (5 * BASIC / STANDARD_1 - 1) / 4
X20_2016 = 20 * BASIC / (1 + 19 * SIGMA_2016)
runner = CliRunner()


def test_exactly_determined_prediction_refuses_an_interval_and_says_why(dataset_2016: Dataset) -> None:
    _, predicted = predict(analyze(dataset_2016), 20)
    amdahl = predicted.filter(pl.col("model") == "amdahl").row(0, named=True)
    assert amdahl["status"] == EXACT
    assert amdahl["global_steps_per_s"] == pytest.approx(X20_2016)
    assert amdahl["ci_low"] is None and amdahl["ci_high"] is None
    assert "exactly determined by two runs" in amdahl["message"]
    assert "leaving a task count out leaves too few to refit" in amdahl["message"]
    # 20 tasks / the largest measured 5 = 4.0x: beyond 2x
    assert amdahl["extrapolation"] == pytest.approx(4.0)
    assert amdahl["caveat"].startswith("an unchecked extrapolation: 20 training tasks, 4.0x the largest measured (5)")
    # within 2x (8 / 5 = 1.6x) it is still unchecked, but no extrapolation
    _, near = predict(analyze(dataset_2016), 8)
    caveat = near.filter(pl.col("model") == "amdahl")["caveat"][0]
    assert caveat.startswith("an unchecked prediction: Amdahl's law is exactly determined by two runs")


def _points(sizes: list[int], rates: list[float]) -> tuple[pl.DataFrame, dict[str, np.ndarray]]:
    runs = [f"r{n}" for n in sizes]
    points = pl.DataFrame(
        {"run_id": runs, "tasks": sizes, "steady_global_steps_per_s": rates},
        schema={"run_id": pl.String, "tasks": pl.UInt32, "steady_global_steps_per_s": pl.Float64},
    )
    # every run's intervals identical: the bootstrap has no noise, so any width is the model's error
    return points, {r: np.full(5, x) for r, x in zip(runs, rates, strict=True)}


def test_fitted_interval_includes_the_leave_one_out_refits() -> None:
    # Three runs that Amdahl cannot pass through: 1 task 10/s, 2 tasks 20/s (perfect), 4 tasks 20/s (flat).
    # Leave out 4: lambda 10, sigma 0 -> X(8) = 80. Leave out 1: from (2, 20) and (4, 20),
    # N/X = (1 + s (N - 1)) / l: 0.1 = (1 + s) / l, 0.2 = (1 + 3 s) / l -> s = 1, l = 20 -> X(8) = 160 / 8 = 20.
    points, samples = _points([1, 2, 4], [10.0, 20.0, 20.0])
    fit = fit_model("amdahl", points, samples)
    assert fit.status == FITTED
    noise_low, noise_high = fit.noise_interval(8)
    assert noise_high - noise_low == pytest.approx(0.0, abs=1e-9)  # no noise at all
    point, low, high = fit.predict(8)
    assert low <= 20.0 + 1e-6 and high >= 80.0 - 1e-6 and low <= point <= high
    assert "leave-one-out" in fit.message
    # 8 tasks is 2.0x the largest measured (4): not beyond; 9 is
    assert prediction_caveat(fit, 8) is None
    assert prediction_caveat(fit, 9).startswith("an extrapolation: 9 training tasks, 2.2x the largest measured (4)")


def test_recommend_first_line_says_the_choice_rests_on_an_unchecked_extrapolation(dataset_2016: Dataset) -> None:
    analysis = analyze(dataset_2016, AnalysisOptions(price_date=date(2019, 12, 1)))
    fast = recommend(analysis, 1_000_000, deadline_h=6)  # only PREMIUM_1 (predicted, 3.45 h) meets 6 h
    assert fast.choice["candidate"] == "PREMIUM_1" and fast.choice["status"] == EXACT
    assert fast.caveat.startswith("Caveat: the choice rests on an unchecked extrapolation: 20 training tasks, 4.0x")
    assert "exactly determined by two runs" in fast.caveat
    measured = recommend(analysis, 1_000_000, deadline_h=24)  # standard_1, measured: nothing to caveat
    assert measured.caveat is None


def test_predict_and_recommend_commands_say_it(dataset_2016: Dataset) -> None:
    ds = str(dataset_2016.root)
    text = runner.invoke(app, ["predict", "-d", ds, "--tasks", "20"]).output
    assert "exactly determined by two runs" in text and "no 95 % interval" in text
    args = ["recommend", "-d", ds, "--steps", "1000000", "--price-date", "2019-12-01", "--deadline", "6h"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    first = result.output.splitlines()[0]
    assert first.startswith("Caveat: the choice rests on an unchecked extrapolation")
    doc = json.loads(runner.invoke(app, [*args, "--json"]).output)
    assert doc["caveat"].startswith("Caveat: the choice rests on an unchecked extrapolation")
    assert doc["choice"]["status"] == EXACT


def test_report_answers_what_premium_1_would_have_done(dataset_2016: Dataset) -> None:
    analysis = analyze(dataset_2016, analysis_options())
    rows = unmeasured(analysis).to_dicts()
    assert [(r["run_id"], r["tasks"], r["fit_status"], r["settling_tasks"]) for r in rows] == [
        ("premium_1", 20, EXACT, 10)  # PREMIUM_1: 1 master + 19 workers; sqrt(5 x 20) = 10
    ]
    assert rows[0]["global_steps_per_s"] == pytest.approx(X20_2016)
    en = would_have(unmeasured(analysis), Catalog("en"))
    assert en[0].startswith("What premium_1 (PREMIUM_1) would have done: it was never measured.")
    assert "exactly determined by two runs (1 and 5 training tasks), predicts 79.2 global steps/s" in en[0]
    assert "unchecked extrapolation, 4.0× the largest measured task count (5)" in en[0]
    assert en[1].startswith("One more measured tier would settle it: a run of PREMIUM_1 itself")
    assert "about 10 training tasks" in en[1]
    html = render_html(report_data(analysis), "en")
    assert "What premium_1 (PREMIUM_1) would have done" in html and "exactly determined by two runs" in html
    ja = render_html(report_data(analysis), "ja")
    assert "検証されていない外挿" in ja and "もう 1 つティアを測定すれば決着します" in ja


def test_the_demo_summary_carries_the_caveat(tmp_path) -> None:
    result = runner.invoke(app, ["demo", "--out", str(tmp_path), "--lang", "en"])
    assert result.exit_code == 0, result.output
    assert "What premium_1 (PREMIUM_1) would have done" in result.output
    assert "exactly determined by two runs" in result.output and "unchecked extrapolation" in result.output


def test_a_refit_at_its_bound_leaves_no_interval_where_it_explodes_and_the_band_stays_sane() -> None:
    # Three tiers: 1 task 10/s, 2 tasks 20/s, 4 tasks 8/s (a slowdown). Main Amdahl fit, by hand: rows
    # [1, N - 1] / (N / X) = [10, 0], [10, 10], [2, 6] against 1; normal equations [[204, 112], [112, 136]]
    # (a, b) = (22, 16): a = 1200 / 15200, b = 800 / 15200 -> lambda = 12.667, sigma = b / a = 2/3.
    # Leave out 4: lambda 10, sigma 0 (X = 10 N). Leave out 2: (1, 10), (4, 8): 1/lambda = 0.1,
    # sigma / lambda = 0.4 / 3 -> sigma = 4/3. Leave out 1: (2, 20), (4, 8) imply 1/lambda = -0.1: bounded,
    # 1/lambda sits at 1e-12 and the refit predicts ~1e12 global steps/s at 1 task (the old band's top);
    # with 1/lambda = 0 the best b minimises (1 - 10 b)^2 + (1 - 6 b)^2: b = 32 / 272 -> X(2) = 2 / b = 17.
    points, samples = _points([1, 2, 4], [10.0, 20.0, 8.0])
    fit = fit_model("amdahl", points, samples)
    assert fit.status == FITTED
    assert fit.params["lam"] == pytest.approx(15200 / 1200) and fit.params["sigma"] == pytest.approx(2 / 3)
    assert fit.left_out[0, 0] > 1e9  # the refit without the 1-task run, at its bound
    assert usl(2, *fit.left_out[0]) == pytest.approx(17.0, rel=1e-6)  # 2 / (32 / 272)
    # The sane ceiling at 1 task: 1000 x 1 x the fastest per-task rate, max(10/1, 20/2, 8/4) = 10 -> 10,000.
    assert fit.sane_ceiling(1) == pytest.approx(10_000.0)
    assert fit.predict(1) == (pytest.approx(15200 / 1200), None, None)
    assert "no interval at 1 training task: a leave-one-out refit" in prediction_caveat(fit, 1)
    # At 2 tasks every refit is sane: low min(15.2, 20, 20 / (1 + 4/3) = 60/7, 17) = 8.571, high 20.
    point, low, high = fit.predict(2)
    assert (point, low, high) == (pytest.approx(15.2), pytest.approx(60 / 7), pytest.approx(20.0))
    assert prediction_caveat(fit, 2) is None
    # The chart's band: no point above the leave-4-out refit's linear 10 N, 200 at 20 tasks (it was ~1e12).
    band = scaling_model([fit], 20)
    assert band["high"].max() == pytest.approx(200.0)
    assert band.filter(pl.col("tasks") == 1)["high"].to_list() == [None]


def test_a_model_the_runs_fall_off_faster_than_does_not_hold_and_predicts_nothing() -> None:
    # Runs of 2, 4 and 8 tasks at 20, 8 and 5 global steps/s: throughput falls as tasks are added. Amdahl's
    # N / X = (1 + sigma (N - 1)) / lambda is 0.1, 0.5, 1.6: a line in N - 1 with slope ~0.25 and intercept
    # ~ -0.18 < 0, i.e. 1/lambda < 0, which the bound 1/lambda >= 1e-12 s turns into lambda ~ 1e12: the fit
    # said ~1e12 global steps/s at one task. The fastest per-task rate is 20 / 2 = 10, so the ceiling at one
    # task is 1000 x 10 = 10,000: far below lambda, and the model does not hold.
    points, samples = _points([2, 4, 8], [20.0, 8.0, 5.0])
    fits = fit_scaling(points, samples)
    assert [f.status for f in fits] == [DOES_NOT_HOLD, DOES_NOT_HOLD]
    assert not any(f.fitted for f in fits) and best_fit(fits) is None
    assert fits[0].message.startswith("Amdahl's law does not hold for these runs: their global steps/s (20 at 2, 8")
    table = predictions(fits, [1, 16])
    assert table["global_steps_per_s"].to_list() == [None] * 4 and table["caveat"].to_list() == [None] * 4


def test_predict_words_a_fitted_prediction_without_its_interval_without_the_fits_interval_sentence() -> None:
    # The fixture above: at 1 task the point is 15200 / 1200 = 12.67 with no interval (a refit explodes).
    from tierscope.cli.analysis import prediction_lines

    points, samples = _points([1, 2, 4], [10.0, 20.0, 8.0])
    row = predictions([fit_model("amdahl", points, samples)], [1]).row(0, named=True)
    lines = prediction_lines(row, 1)
    assert lines[0].startswith("amdahl: 12.67 global steps/s at 1 task (no 95 % interval: see the caveat;")
    assert lines[1].startswith("  Caveat: no interval at 1 training task")
    assert len(lines) == 2  # "the interval holds ... every leave-one-out refit" would speak of none given


def test_a_serial_fraction_above_one_does_not_hold() -> None:
    # 1 task 10 global steps/s, 2 tasks 0.7: N/X = (1 + s (N - 1)) / l: 1/10 = 1/l -> l = 10; 2/0.7 = (1 + s)/10
    # -> s = 20/0.7 - 1 = 27.57: two tasks slower than one, which Amdahl's law (0 <= s <= 1) cannot describe.
    # It was "fitted" with sigma 27.6 and predicted at 20 tasks.
    points, samples = _points([1, 2], [10.0, 0.7])
    fit = fit_model("amdahl", points, samples)
    assert fit.status == "does not hold"
    assert "serial fraction σ = 27.6 is above 1" in fit.message


def test_an_exact_fit_over_runs_that_disagree_at_one_task_count_says_so() -> None:
    # Two runs at 1 task (0.947 and 31.6 global steps/s: case15's and case05's, unrelated models) and two at 5
    # (12.35 and 363.5): two task counts for two parameters, but four points the curve cannot all pass through.
    # The widest ratio at one task count: 363.5 / 12.35 = 29.43; 31.6 / 0.947 = 33.37 -> 33.4x.
    runs = ["a1", "b1", "a5", "b5"]
    rates = [0.947, 31.6, 12.35, 363.5]
    points = pl.DataFrame(
        {"run_id": runs, "tasks": [1, 1, 5, 5], "steady_global_steps_per_s": rates},
        schema={"run_id": pl.String, "tasks": pl.UInt32, "steady_global_steps_per_s": pl.Float64},
    )
    fit = fit_model("amdahl", points, {r: np.full(5, x) for r, x in zip(runs, rates, strict=True)})
    assert fit.status == "exactly determined"
    assert "passes through the points" not in fit.message
    assert "the curve passes between the runs of each task count, which differ by up to 33.4x" in fit.message
