"""Amdahl/USL fits, predictions, the time/price frontier and the recommendation."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from typer.testing import CliRunner

from tests.analysis.test_summary_2016 import BASIC, LOCAL, STANDARD_1
from tierscope.analysis import AnalysisOptions, analyze
from tierscope.analysis.forecast import predict, recommend, scaling
from tierscope.analysis.plan import RecommendError, choose
from tierscope.analysis.scaling import fit_model, usl
from tierscope.cli import app
from tierscope.dataset.schema import RUN_SCHEMA, STEP_SCHEMA, conform
from tierscope.dataset.store import Dataset

LAM, SIGMA, KAPPA = 10.0, 0.04, 0.0015  # peak at sqrt(0.96 / 0.0015) = 25.3 tasks
SIZES = (1, 2, 4, 8, 12, 16)
NOW = date(2019, 12, 1)  # prices: Nov 2019 rows, USD 0.49 per ML unit-hour

# the 2016 Amdahl fit, by hand: two points (1 task, 4.6396) and (5 tasks, 22.3894) fix it exactly (the steady
# rates of tests/analysis/test_summary_2016.py): lambda = 4.6396, sigma = (5 x 4.6396 / 22.3894 - 1) / 4 =
# (23.1982 / 22.3894 - 1) / 4 = 0.0090305
SIGMA_2016 = (5 * BASIC / STANDARD_1 - 1) / 4
X20_2016 = 20 * BASIC / (1 + 19 * SIGMA_2016)  # 92.793 / 1.171580 = 79.2031 global steps/s (was 80.42)
#: The plans' sustained rates (tierscope.analysis.sustained): basic's lead ran 215.516 s from its start
#: (elapsed_s), made 1000 steps (its first record's 100 at the steady rate plus 9 steady intervals of
#: 193.981 s) and paid no start-up (its first steady record, step 200 at 42.658 s, is 0.449 s ahead of
#: 200 / 4.6396 = 43.107 s: clipped at 0): 4.6396 x (193.981 + 100 / 4.6396) / 215.516 = 4.6400.
SUSTAINED_BASIC = BASIC * (193.981 + 100 / BASIC) / 215.516
#: standard_1's lead, the master, logged once, step 700 at 45.261 s: its start-up 45.261 - 700 / 22.3894 =
#: 13.996 s is paid once; the rest, its 700 steps and the workers' 300 more, at the steady rate: sustained
#: = steady, and the hours to N are (13.996 + N / 22.3894) / 3600.
STARTUP_STANDARD_1 = 45.261 - 700 / STANDARD_1


@pytest.fixture(scope="module")
def usl_dataset(tmp_path_factory: pytest.TempPathFactory) -> Dataset:
    """Runs of 1..16 tasks whose logged global rates follow the USL with 5 % noise (seeded)."""
    rng = np.random.default_rng(7)
    dataset = Dataset(tmp_path_factory.mktemp("usl") / "ds")
    rows, runs = [], []
    for n in SIZES:
        run = f"custom_{n:02d}"
        runs.append({"run_id": run, "tier": "CUSTOM", "collected_at": datetime.now(UTC)})
        for task in range(n):
            role, index = ("master", 0) if task == 0 else ("worker", task - 1)
            elapsed, step = 0.0, 0
            for _ in range(8):  # the first is warm-up: 7 steady intervals per task
                rate = usl(n, LAM, SIGMA, KAPPA) * (1 + 0.05 * rng.standard_normal())
                step += 100
                elapsed += 100 / rate
                rows.append({"run_id": run, "tier": "CUSTOM", "role": role, "task_index": index, "step": step,
                             "elapsed_s": elapsed, "global_steps_per_s": rate, "source": f"{run}.log",
                             "source_offset": len(rows) + 1, "format": "cloudml"})  # fmt: skip
    dataset.append("steps", conform(pl.DataFrame(rows), STEP_SCHEMA))
    dataset.append("runs", pl.DataFrame(runs).pipe(conform, RUN_SCHEMA))
    return dataset


def test_usl_fit_recovers_sigma_kappa_and_covers_the_prediction(usl_dataset: Dataset) -> None:
    fitted, predicted = predict(analyze(usl_dataset), 20)
    params = {r["parameter"]: r for r in fitted.table.filter(pl.col("model") == "usl").to_dicts()}
    assert params["sigma"]["status"] == "fitted" and params["sigma"]["sizes"] == 6
    assert params["sigma"]["ci_low"] <= SIGMA <= params["sigma"]["ci_high"]
    assert params["kappa"]["ci_low"] <= KAPPA <= params["kappa"]["ci_high"]
    assert params["lambda"]["ci_low"] <= LAM <= params["lambda"]["ci_high"]
    usl20 = predicted.filter(pl.col("model") == "usl").row(0, named=True)
    truth = usl(20, LAM, SIGMA, KAPPA)  # 200 / (1 + 0.76 + 0.57) = 85.84
    assert usl20["ci_low"] <= truth <= usl20["ci_high"]
    assert usl20["global_steps_per_s"] == pytest.approx(truth, rel=0.05)
    # the intervals are informative, not the whole line
    assert params["kappa"]["ci_high"] - params["kappa"]["ci_low"] < KAPPA


def test_2016_data_supports_amdahl_exactly_and_not_the_usl(dataset_2016: Dataset) -> None:
    fitted, predicted = predict(analyze(dataset_2016), 20)
    assert fitted.points["run_id"].to_list() == ["basic", "standard_1"]  # the laptop is other hardware
    amdahl = {r["parameter"]: r for r in fitted.table.filter(pl.col("model") == "amdahl").to_dicts()}
    assert amdahl["lambda"]["estimate"] == pytest.approx(BASIC)
    assert amdahl["sigma"]["estimate"] == pytest.approx(SIGMA_2016)
    assert (
        amdahl["sigma"]["status"] == "exactly determined" and "nothing checks the model" in amdahl["sigma"]["message"]
    )
    usl_row = fitted.table.filter(pl.col("model") == "usl").row(0, named=True)
    assert usl_row["status"] == "insufficient" and usl_row["estimate"] is None
    assert "at least 3 different task counts; the data has 2 (runs of 1 and 5 tasks)" in usl_row["message"]
    by_model = {r["model"]: r for r in predicted.to_dicts()}
    assert by_model["amdahl"]["global_steps_per_s"] == pytest.approx(X20_2016)
    # no interval can hold the model's error (nothing to leave out); the noise alone is kept apart
    assert by_model["amdahl"]["ci_low"] is None and by_model["amdahl"]["ci_high"] is None
    assert by_model["amdahl"]["noise_ci_low"] < X20_2016 < by_model["amdahl"]["noise_ci_high"]
    assert by_model["usl"]["global_steps_per_s"] is None
    # BASIC's one task is a `standard` machine, STANDARD_1's master and 4 workers `complex_model_s`
    # (src/tierscope/data/tiers.csv): the caveat says the axis mixes them
    mix = "a fit over different machines per task (1 task on standard and 5 tasks on complex_model_s)"
    assert mix in by_model["amdahl"]["caveat"]


def test_a_fit_over_one_machine_type_says_no_mix() -> None:
    from tierscope.analysis.scaling import mixed_machines

    points = pl.DataFrame({"tier": ["STANDARD_1", "STANDARD_1"], "tasks": [5, 5]})
    assert mixed_machines(points) is None
    # a tier the tier table does not know: its machines are unknown, so nothing is claimed
    assert mixed_machines(pl.DataFrame({"tier": ["BASIC", "CUSTOM"], "tasks": [1, 4]})) is None
    assert mixed_machines(pl.DataFrame({"tier": ["BASIC", "STANDARD_1"], "tasks": [1, 5]})) == (
        "1 task on standard and 5 tasks on complex_model_s"
    )


def test_a_mix_of_stored_machines_is_named_and_so_is_a_mix_within_one_run() -> None:
    from tierscope.analysis.scaling import mixed_machines

    # CUSTOM runs say their machines in their topology (a manifest's machine_types), not their tier
    one = json.dumps({"master": {"machine_type": "standard", "count": 1}})
    four = json.dumps({"master": {"machine_type": "large_model", "count": 1},
                       "worker": {"machine_type": "complex_model_s", "count": 3}})  # fmt: skip
    points = pl.DataFrame({"run_id": ["c1", "c4"], "tier": ["CUSTOM", "CUSTOM"], "tasks": [1, 4]})
    runs = pl.DataFrame({"run_id": ["c1", "c4"], "topology": [one, four]})
    assert mixed_machines(points, runs) == "1 task on standard and 4 tasks on complex_model_s + large_model"
    assert mixed_machines(points) is None  # without their stored machines, CUSTOM says nothing


def test_a_prediction_priced_on_stale_rows_says_so_as_the_runs_do(dataset_2016: Dataset) -> None:
    # Priced on 2026-12-07, every legacy row is the 2019-11-01 one: 2026-12-07 - 2019-11-01 = 2593 days > 180.
    # PREMIUM_1's 33.7829 ML units/h are that table's (the 2016 beta's 75 is the README's): its note says so,
    # as basic's and standard_1's do; the predicted row had none, so the stale note left it out.
    analysis = analyze(dataset_2016, AnalysisOptions(price_date=date(2026, 12, 7)))
    rows = {r["candidate"]: r for r in recommend(analysis, 1_000_000, deadline_h=24).candidates.to_dicts()}
    said = "ML units from the 2019-11-01 table and USD per ML unit-hour from the 2019-11-01 row, 2593 days before"
    for name in ("basic", "standard_1", "PREMIUM_1"):
        assert said in rows[name]["price_note"], name
    assert rows["PREMIUM_1"]["ml_units_per_hour"] == pytest.approx(33.7829)
    # on 2019-12-01 the rows are 30 days old: no note, the prediction's nor the runs'
    fresh = recommend(analyze(dataset_2016, AnalysisOptions(price_date=NOW)), 1_000_000, deadline_h=24)
    assert fresh.candidates.filter(pl.col("basis") != "failed (evidence)")["price_note"].null_count() == 3


def test_frontier_and_recommendation_on_2016_with_2019_prices(dataset_2016: Dataset) -> None:
    analysis = analyze(dataset_2016, AnalysisOptions(price_date=NOW))
    chosen = recommend(analysis, 1_000_000, deadline_h=24)
    rows = {r["candidate"]: r for r in chosen.candidates.to_dicts()}
    # standard_1: (13.996 + 1e6 / 22.3894) / 3600 = 12.4105 h (sustained = steady, start-up paid once);
    # 4.0571 ML units/h x USD 0.49 = 1.98798 USD/h -> USD 24.672
    hours = (STARTUP_STANDARD_1 + 1e6 / STANDARD_1) / 3600
    assert rows["standard_1"]["hours"] == pytest.approx(hours)
    assert rows["standard_1"]["usd"] == pytest.approx(hours * 4.0571 * 0.49)
    assert (rows["standard_1"]["rate_basis"], rows["standard_1"]["steady_hours"]) == ("sustained", pytest.approx(hours))
    # basic: no start-up, 1e6 / 4.6400 s = 59.8655 h (59.8706 h at the steady 4.6396 beside it)
    assert rows["basic"]["hours"] == pytest.approx(1e6 / SUSTAINED_BASIC / 3600)
    assert rows["basic"]["steady_hours"] == pytest.approx(1e6 / BASIC / 3600)
    # PREMIUM_1 nobody measured: Amdahl at its 20 training tasks, priced at 33.7829 units/h
    assert rows["PREMIUM_1"]["basis"] == "predicted (amdahl)"
    assert rows["PREMIUM_1"]["hours"] == pytest.approx(1e6 / X20_2016 / 3600)  # 3.507 h
    assert rows["PREMIUM_1"]["usd"] == pytest.approx(1e6 / X20_2016 / 3600 * 33.7829 * 0.49)  # 58.06
    # planned on its predicted steady rate x the measured runs' median sustained / steady, at most 1: standard_1's
    # 1.0 and basic's 4.6400 / 4.6396 = 1.000086 have the median 1.000043, so x 1: the same hours, one basis
    assert (rows["PREMIUM_1"]["rate_basis"], rows["PREMIUM_1"]["steady_global_steps_per_s"]) == (
        "sustained",
        pytest.approx(X20_2016),
    )
    assert "local" not in rows  # own hardware: no price, never a candidate
    assert chosen.choice["candidate"] == "standard_1"  # cheapest of those within 24 h (standard_1, PREMIUM_1)
    assert "standard_1 (measured)" in chosen.reason
    fast = recommend(analysis, 1_000_000, deadline_h=6)
    assert fast.choice["candidate"] == "PREMIUM_1" and "predicted (amdahl)" in fast.reason
    within = recommend(analysis, 1_000_000, budget_usd=30)
    assert within.choice["candidate"] == "standard_1"  # fastest at most USD 30 (PREMIUM_1 costs 57)
    none = recommend(analysis, 1_000_000, budget_usd=10)
    assert none.choice is None and "no measured or predicted configuration" in none.reason
    with pytest.raises(RecommendError, match="exactly one"):
        choose(chosen.candidates, None, None)
    with pytest.raises(RecommendError, match="no candidate has a price"):
        recommend(analyze(dataset_2016, AnalysisOptions(price_date=date(2016, 12, 31))), 1000, deadline_h=1)


def test_recommend_with_one_measured_tier_and_no_model(dataset_2016: Dataset) -> None:
    # One task count fits no model: the frontier holds the measured run alone (no predicted row, so no
    # extrapolation or caveat column to concatenate); it was a ColumnNotFoundError traceback.
    analysis = analyze(dataset_2016, AnalysisOptions(price_date=NOW, runs=("basic",)))
    chosen = recommend(analysis, 1_000_000, deadline_h=100)
    assert chosen.candidates["candidate"].to_list() == ["basic"]
    row = chosen.choice
    # no start-up (step 200 at 42.658 s is ahead of 200 / 4.6396 = 43.107 s), then 1e6 at the sustained 4.6400:
    # 215,516 s / 3600 = 59.8655 h; x 0.3878 ML units/h x USD 0.49 = USD 11.376
    assert row["hours"] == pytest.approx(1e6 / SUSTAINED_BASIC / 3600)
    assert row["hours"] == pytest.approx(59.8655, abs=1e-4)
    assert row["usd"] == pytest.approx(59.8655 * 0.3878 * 0.49, rel=1e-5)
    assert row["extrapolation"] is None and row["caveat"] is None
    result = runner.invoke(app, ["recommend", "-d", str(dataset_2016.root), "--runs", "basic", "--steps", "1000000",
                                 "--deadline", "100h", "--price-date", "2019-12-01"])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "basic (measured) is the cheapest" in result.output and "USD 11.38" in result.output


def test_one_task_count_is_said_in_words(dataset_2016: Dataset) -> None:
    # basic alone: one task count, 1 (it read "the data has 1 (1)")
    fitted, _ = predict(analyze(dataset_2016, AnalysisOptions(runs=("basic",))), 20)
    messages = set(fitted.table["message"].to_list())
    assert (
        "Amdahl's law needs runs of at least 2 different task counts; the data has 1 (runs of 1 task): not fitted"
        in (messages)
    )


def test_recommend_sentence_keeps_an_amount_under_half_a_cent(dataset_2016: Dataset) -> None:
    # 100 steps on basic: 100 / 4.6400 = 21.5516 s / 3600 = 0.0059866 h (no start-up),
    # x 0.3878 ML units/h x USD 0.49 = USD 0.0011376: the sentence said "USD 0.00" (the table 0.00114)
    result = runner.invoke(app, ["recommend", "-d", str(dataset_2016.root), "--runs", "basic", "--steps", "100",
                                 "--deadline", "1h", "--price-date", "2019-12-01"])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "within 1h: 0.00599 h, USD 0.00114" in " ".join(result.output.split())  # the deadline as given


def test_scaling_reports_the_2016_measured_points(dataset_2016: Dataset) -> None:
    points = scaling(analyze(dataset_2016)).points
    assert points["tasks"].to_list() == [1, 5]
    assert points["steady_global_steps_per_s"].to_list() == pytest.approx([BASIC, STANDARD_1])


runner = CliRunner()


@pytest.fixture(scope="module")
def cli_dataset(tmp_path_factory: pytest.TempPathFactory, bundled_manifest: Path) -> Path:
    ds = tmp_path_factory.mktemp("cli") / "ds"
    result = runner.invoke(app, ["collect", "files", "--manifest", str(bundled_manifest), "-d", str(ds)])
    assert result.exit_code == 0, result.output
    return ds


def test_predict_and_recommend_commands(cli_dataset: Path) -> None:
    result = runner.invoke(app, ["predict", "-d", str(cli_dataset), "--tasks", "20", "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    amdahl = next(p for p in doc["predictions"] if p["model"] == "amdahl")
    assert amdahl["global_steps_per_s"] == pytest.approx(X20_2016)
    text = runner.invoke(app, ["predict", "-d", str(cli_dataset), "--tasks", "20"])
    assert "USL needs runs of at least 3" in text.output and "79.20" in text.output
    args = ["recommend", "-d", str(cli_dataset), "--steps", "1000000", "--price-date", "2019-12-01"]
    result = runner.invoke(app, [*args, "--deadline", "6h", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["choice"]["candidate"] == "PREMIUM_1"
    result = runner.invoke(app, [*args, "--deadline", "1440m"])
    assert "standard_1 (measured) is the cheapest measured run" in result.output
    # USD 100: measured runs are chosen first (docs/machines-and-prices.md), so standard_1 (1e6 / 22.389 steps/s
    # = 12.41 h, 12.41 h x 4.0571 ML units/h x USD 0.49 = 24.67) is chosen over PREMIUM_1, predicted at
    # 1e6 / 79.2031 / 3600 = 3.51 h x 33.7829 x 0.49 = USD 58.06: faster and within 100, named as passed over
    result = runner.invoke(app, [*args, "--budget", "100"], env={"COLUMNS": "400"})
    assert result.exit_code == 0, result.output
    assert (
        "standard_1 (measured) is the fastest measured run that can reach 1,000,000 steps for at most USD 100.00: "
        "12.41 h, USD 24.67; PREMIUM_1 (predicted (amdahl), exactly determined) would be faster, 3.51 h, "
        "USD 58.06, but it is a prediction: measure it to be sure"
    ) in result.output
    # 1440 min: PREMIUM_1 meets it too but costs 58.06 > 24.67: no cheaper prediction was passed over
    assert "would be" not in runner.invoke(app, [*args, "--deadline", "1440m"]).output
    assert runner.invoke(app, [*args, "--deadline", "soon"]).exit_code == 2
    assert runner.invoke(app, [*args]).exit_code == 2  # neither deadline nor budget
    bad = runner.invoke(app, ["recommend", "-d", str(cli_dataset), "--steps", "10", "--budget", "5",
                              "--price-date", "2016-12-31"])  # fmt: skip
    assert bad.exit_code == 1 and "no candidate has a price" in bad.output


def test_summary_json_keeps_old_keys_and_gains_the_new_figures(cli_dataset: Path) -> None:
    result = runner.invoke(app, ["summary", "-d", str(cli_dataset), "--json", "--steps", "100000"])
    assert result.exit_code == 0, result.output
    runs = {r["run_id"]: r for r in json.loads(result.output)}
    standard = runs["standard_1"]
    assert standard["steady_global_steps_per_s"] == pytest.approx(STANDARD_1)
    assert standard["speedup_vs_baseline"] == pytest.approx(STANDARD_1 / BASIC)
    assert standard["steady_ci_low"] <= STANDARD_1 <= standard["steady_ci_high"]
    assert standard["speedup_ci_low"] <= STANDARD_1 / BASIC <= standard["speedup_ci_high"]
    assert standard["training_mode"] == "async" and standard["restarts"] == 0 and standard["stragglers"] == 0
    # (13.996 + 100000 / 22.3894) / 3600 = 1.2446 h, on the sustained rate (here equal to the steady one)
    assert standard["hours_to_target"] == pytest.approx((STARTUP_STANDARD_1 + 100000 / STANDARD_1) / 3600)
    assert standard["sustained_global_steps_per_s"] == pytest.approx(STANDARD_1)
    assert (standard["plan_basis"], standard["steady_hours_to_target"]) == ("sustained", standard["hours_to_target"])
    assert runs["local"]["startup_s"] == pytest.approx(15.281 - 200 / LOCAL)  # 4.664 s


def test_bounded_lstsq_is_scipys_result_inside_the_bounds_and_the_exact_minimum_outside() -> None:
    """bounded_lstsq replaces scipy's lsq_linear in the fits (1000 draws per model). Inside the bounds it
    is lsq_linear's x to the bit (the unbounded lstsq, which lsq_linear returns as is). Outside them it is
    the exact bounded minimum, checked by its optimality conditions (the gradient A'(Ax - b) is 0 in a free
    parameter, >= 0 in one at its bound), where lsq_linear's iterative solve stops within its tolerance of
    it (tol=1e-10 on the cost's relative change, so its x may sit further off): a residual no larger than
    lsq_linear's (to 1e-12 of it, rounding) and an x within 1e-6 of lsq_linear's relative to x's largest
    entry (seen: up to 4.5e-8, lsq_linear leaving a parameter a hair inside its bound of 0). USL designs
    like _solve's: columns 1, N-1, N(N-1) over N/X."""
    from scipy.optimize import lsq_linear

    from tierscope.analysis.scaling import bounded_lstsq

    rng = np.random.default_rng(3)
    tasks = np.array([1.0, 2.0, 4.0, 8.0, 12.0])
    lower = [1e-12, 0.0, 0.0]
    inside = outside = 0
    for _ in range(200):
        # kappa drawn around 0: about half the draws want a negative one (outside the bounds)
        rates = usl(tasks, 10.0, 0.05, rng.normal(0.0, 0.002)) * rng.normal(1.0, 0.03, tasks.size)
        y = tasks / rates
        design = np.column_stack([np.ones_like(tasks), tasks - 1, tasks * (tasks - 1)]) / y[:, None]
        ones = np.ones_like(y)
        expected = lsq_linear(design, ones, bounds=(lower, np.inf)).x
        got = bounded_lstsq(design, ones, lower)
        free = np.linalg.lstsq(design, ones, rcond=-1)[0]
        if np.all(free >= lower):
            inside += 1
            assert got.tobytes() == expected.tobytes()
            continue
        outside += 1
        assert np.all(got >= lower)
        gradient = design.T @ (design @ got - ones)
        at_bound = got == lower
        scale = np.abs(design).max() ** 2 * np.abs(got).max()
        assert np.all(np.abs(gradient[~at_bound]) <= 1e-9 * scale) and np.all(gradient[at_bound] >= -1e-9 * scale)
        cost_got, cost_scipy = np.sum((design @ got - ones) ** 2), np.sum((design @ expected - ones) ** 2)
        assert cost_got <= cost_scipy * (1 + 1e-12)
        assert np.max(np.abs(got - expected)) <= 1e-6 * np.max(np.abs(expected))
    assert inside > 20 and outside > 20  # both paths were taken


def test_a_deadline_is_stated_as_a_user_gives_one() -> None:
    from tierscope.analysis.plan import _as_given

    # 1 s = 1/3600 h = 0.000277777... -> 3 significant digits; hours >= 0.1 lose trailing zeros
    assert [_as_given(h) for h in (1 / 3600, 1.0, 1.5, 24.0, 2 + 1 / 3, 1234.5)] == [
        "0.000278", "1", "1.5", "24", "2.33", "1,234.5",
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("rates", "status"),
    [
        # A new user's two runs: 1 T4 at 2.494 global steps/s, 2 T4s at 9.847 (4.92 a task, 1.97x the one task's:
        # over the 10 % margin). Amdahl's sigma >= 0 caps 2 tasks at 2 x 2.494 = 4.99; its bounded fit passed
        # through neither point (4.11 at 1, 8.21 at 2) and was called exactly determined. Now: does not hold.
        ((2.494, 9.847), "does not hold"),
        # 2 tasks at 5.3 against 1 at 2.5: 2.65 a task, 1.06x the one task's (within 10 %): noise, fitted
        ((2.5, 5.3), "exactly determined"),
    ],
    ids=["faster than linear", "within the margin"],
)
def test_runs_faster_than_linear_are_no_amdahl_fit(rates: tuple[float, float], status: str) -> None:
    points = pl.DataFrame(
        {"run_id": ["one", "two"], "tasks": [1, 2], "steady_global_steps_per_s": list(rates)},
        schema={"run_id": pl.String, "tasks": pl.UInt32, "steady_global_steps_per_s": pl.Float64},
    )
    fit = fit_model("amdahl", points, {"one": np.full(5, rates[0]), "two": np.full(5, rates[1])})
    assert fit.status == status
    if status == "does not hold":
        assert "grow faster than their tasks (2.494 at 1, 9.847 at 2)" in fit.message
        assert fit.predict(4) == (None, None, None)


def test_a_run_of_another_job_is_no_size_in_the_fit(tmp_path: Path) -> None:
    # Two runs on T4s, read by different formats (TF-slim's step lines, one T4; TF Estimator's, four T4s): the
    # summary keeps the second apart from the baseline (another job's work). A fit over both had 1 and 4 T4s, two
    # sizes, and predicted 8 T4s from another job's rate; without it one size remains: insufficient, and the
    # left-out run is named.
    slim = tmp_path / "slim.log"
    slim.write_text("".join(f"INFO:tensorflow:global step {s}: loss = 2.3000 (0.500 sec/step)\n" for s in range(1, 60)))
    est = tmp_path / "est.log"
    est.write_text(
        "".join(
            f"INFO:tensorflow:global_step/sec: 4\nINFO:tensorflow:loss = 1.0, step = {s} (25.000 sec)\n"
            for s in range(100, 3000, 100)
        )
    )
    ds = str(tmp_path / "ds")
    for log, run, gpus in ((slim, "one", 1), (est, "four", 4)):
        machine = "n1-standard-8" if gpus == 1 else "n1-standard-16"
        args = ["collect", "files", str(log), "-d", ds, "--run-id", run, "-q", "--machine", machine]
        done = CliRunner().invoke(app, [*args, "--accelerator", f"NVIDIA_TESLA_T4:{gpus}"])
        assert done.exit_code == 0, done.output
    fits = scaling(analyze(Dataset(Path(ds))))
    assert set(fits.table["status"].to_list()) == {"insufficient"}
    assert any(s.startswith("four is not in the fit: another job's work") for s in fits.left_out)
