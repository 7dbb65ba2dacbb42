"""Repeats of one configuration: the runs given one ``config`` are one row, its rate the mean of theirs and its
interval Student's t between them (:mod:`tierscope.analysis.configurations`); a run without one is its own."""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Any

import polars as pl
import pytest

from tierscope.analysis import analyze
from tierscope.analysis.configurations import CI_BETWEEN_RUNS, between_runs, configurations
from tierscope.analysis.summary import CI_WITHIN_RUN
from tierscope.dataset.schema import EVENT_SCHEMA, RUN_SCHEMA, STEP_SCHEMA, conform
from tierscope.dataset.store import Dataset

T0 = datetime(2016, 12, 31, 12, 0, tzinfo=UTC)

#: run -> (tier, config, global steps/s). Every run logs steps 100, 200, ..., 600 at that constant rate, so each
#: steady interval is 100 steps in 100 / rate seconds and any steady estimator gives the rate itself.
RUNS: dict[str, tuple[str, str | None, float]] = {
    "basic": ("BASIC", None, 5.0),
    "std-a": ("STANDARD_1", "std", 10.0),
    "std-b": ("STANDARD_1", "std", 12.0),
    "std-c": ("STANDARD_1", "std", 11.0),
    "std-d": ("STANDARD_1", "std", 30.0),  # failed: evidence, left out of the configuration's rate
    "pair-a": ("STANDARD_1", "pair", 20.0),
    "pair-b": ("STANDARD_1", "pair", 22.0),
    "other": ("STANDARD_1", None, 11.5),  # another job on the same tier: not a repeat of std
}


def _rows(run: str, rate: float) -> list[dict[str, Any]]:
    return [
        {"run_id": run, "role": "master", "task_index": 0, "step": 100 * i, "elapsed_s": 100 * i / rate,
         "source": f"/logs/{run}.log", "source_offset": i, "format": "structured"}
        for i in range(1, 7)
    ]  # fmt: skip


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Dataset:
    ds = Dataset(tmp_path_factory.mktemp("configs") / "ds")
    steps = [row for run, (_, _, rate) in RUNS.items() for row in _rows(run, rate)]
    ds.append("steps", conform(pl.DataFrame(steps), STEP_SCHEMA))
    failed = {"run_id": "std-d", "event": "failed", "reason": "preempted", "source": "/logs/std-d.log"}
    ds.append("events", conform(pl.DataFrame([failed]), EVENT_SCHEMA))
    facts = [{"run_id": run, "tier": tier, "config": config, "date": date(2016, 12, 31), "collected_at": T0}
             for run, (tier, config, _) in RUNS.items()]  # fmt: skip
    ds.append("runs", conform(pl.DataFrame(facts), RUN_SCHEMA))
    return ds


def test_between_runs_is_students_t_over_the_runs_rates() -> None:
    # 10, 12, 11: mean 11; s = sqrt((1 + 1 + 0) / 2) = 1; t(0.975, 2 df) = 4.302653 (scipy.stats.t.ppf; tables:
    # 4.303); half width 4.302653 x 1 / sqrt(3) = 2.484138: 8.515862 to 13.484138
    mean, sd, low, high, clipped = between_runs([10.0, 12.0, 11.0])
    assert not clipped
    assert (mean, sd) == (pytest.approx(11.0), pytest.approx(1.0))
    assert low == pytest.approx(8.515862, abs=1e-6)
    assert high == pytest.approx(13.484138, abs=1e-6)
    # two runs: their mean and s = sqrt((1 + 1) / 1) = 1.414214, no interval (t with 1 degree of freedom is 12.7)
    assert between_runs([20.0, 22.0]) == (21.0, pytest.approx(1.414214, abs=1e-6), None, None, False)
    assert between_runs([7.0]) == (7.0, None, None, None, False)
    with pytest.raises(ValueError, match="no steady rates"):
        between_runs([])


def test_three_runs_of_one_configuration_are_one_row_with_a_between_run_interval(dataset: Dataset) -> None:
    analysis = analyze(dataset)
    assert analysis.configurations is not None
    rows = {r["run_id"]: r for r in analysis.configurations.iter_rows(named=True)}
    # std-a..d are one row; basic and other (no config) each their own; pair one row
    assert sorted(rows) == ["basic", "other", "pair", "std"]
    std = rows["std"]
    assert (std["config"], std["config_runs"], std["rated_runs"]) == ("std", 4, 3)
    assert std["run_ids"] == "std-a, std-b, std-c, std-d"
    # the failed std-d (30 steps/s) is left out: mean(10, 12, 11) = 11 with the t-interval above
    assert std["steady_global_steps_per_s"] == pytest.approx(11.0)
    assert (std["steady_ci_low"], std["steady_ci_high"]) == (
        pytest.approx(8.515862, abs=1e-6),
        pytest.approx(13.484138, abs=1e-6),
    )
    assert std["ci_scope"] == CI_BETWEEN_RUNS
    assert (std["run_rate_sd"], std["run_rate_min"], std["run_rate_max"]) == (pytest.approx(1.0), 10.0, 12.0)
    # no run logged an end: unknown, the best evidence of its runs (std-d's "failed" is not the configuration's)
    assert std["status"] == "unknown"
    assert "std-d (failed)" in std["config_note"]
    # speedup and price use the configuration's rate: 11 / 5 (basic) = 2.2; 2016's ML units (analysis/data/
    # ml_units.csv): BASIC 1, STANDARD_1 10 an hour: 11 x 3600 / 10 = 3,960 steps per ML unit-hour, and
    # efficiency per ML unit 2.2 / (10 / 1) = 0.22; the tier table's 5 training tasks of STANDARD_1 against
    # BASIC's 1: efficiency per task 2.2 / 5 = 0.44
    assert std["speedup_vs_baseline"] == pytest.approx(2.2)
    assert std["baseline_run_id"] == "basic"
    assert std["speedup_ci_low"] is None  # no bootstrap holds a ratio of between-run means
    assert std["ml_units_per_hour"] == pytest.approx(10.0)
    assert std["steps_per_ml_unit_hour"] == pytest.approx(3960.0)
    assert std["scaling_efficiency_units"] == pytest.approx(0.22)
    assert std["scaling_efficiency_tasks"] == pytest.approx(0.44)
    # two runs: mean 21, spread 20-22, no interval, and the note says why
    pair = rows["pair"]
    assert pair["steady_global_steps_per_s"] == pytest.approx(21.0)
    assert (pair["steady_ci_low"], pair["ci_scope"]) == (None, None)
    assert (pair["run_rate_min"], pair["run_rate_max"]) == (pytest.approx(20.0), pytest.approx(22.0))
    assert "an interval between runs needs 3" in pair["config_note"]
    # a run of its own keeps its row: its own rate and its interval within the run (constant intervals: 11.5-11.5)
    other = rows["other"]
    assert (other["config_runs"], other["steady_global_steps_per_s"]) == (1, pytest.approx(11.5))
    assert other["ci_scope"] == CI_WITHIN_RUN
    assert other["speedup_vs_baseline"] == pytest.approx(11.5 / 5.0)


def test_runs_without_a_config_are_not_grouped_by_tier(dataset: Dataset) -> None:
    # "other" and std-a share the tier STANDARD_1 but no config: two jobs on one tier are not repeats
    frame = configurations(analyze(dataset).summary)
    assert frame.filter(pl.col("tier") == "STANDARD_1").height == 3  # std, pair, other
    # with no configuration of several runs the frame is the summary's rows, one each
    alone = configurations(analyze(dataset).summary.filter(pl.col("config").is_null()))
    assert alone["run_id"].to_list() == ["basic", "other"]
    assert alone["config_runs"].to_list() == [1, 1]


def test_summary_shows_a_configuration_as_one_row_and_each_run_with_each_run(dataset: Dataset) -> None:
    import json

    from typer.testing import CliRunner

    from tierscope.cli import app

    runner = CliRunner()
    shown = runner.invoke(app, ["summary", "--dataset", str(dataset.root), "--json"])
    assert shown.exit_code == 0, shown.output
    rows = {r["run_id"]: r for r in json.loads(shown.stdout)}
    assert sorted(rows) == ["basic", "other", "pair", "std"]
    assert (rows["std"]["ci_scope"], rows["other"]["ci_scope"]) == ("between-runs", "within-run")
    assert rows["std"]["steady_ci_low"] == pytest.approx(8.515862, abs=1e-6)
    table = runner.invoke(app, ["summary", "--dataset", str(dataset.root), "--wide"], env={"COLUMNS": "250"})
    assert "configuration std: 4 runs (std-a, std-b, std-c, std-d), one row" in table.stdout
    assert "left out of its rate: std-d (failed)" in table.stdout
    assert "is between its runs: Student's t over their steady rates" in table.stdout
    assert "is within that run" in table.stdout  # basic and other are runs of their own
    each = runner.invoke(app, ["summary", "--dataset", str(dataset.root), "--json", "--each-run"])
    runs = {r["run_id"]: r for r in json.loads(each.stdout)}
    assert sorted(runs) == sorted(RUNS)
    assert (runs["std-a"]["config"], runs["std-a"]["ci_scope"]) == ("std", "within-run")


@pytest.mark.parametrize(
    ("lang", "said"),
    [
        ("en", ["std: 4 runs (std-a, std-b, std-c, std-d) in one row", "between a configuration's runs",
                "std: left out of its rate: std-d.", "is within that run", "8.516–13.484"]),
        ("ja", ["std：実行 4 件（std-a, std-b, std-c, std-d）を 1 行に集約", "構成の実行間の 95% 区間",
                "std：レートから除外した実行：std-d。", "その実行内のもの", "8.516〜13.484"]),
    ],
)  # fmt: skip
def test_the_report_shows_a_configuration_as_one_row_with_its_spread(
    dataset: Dataset, lang: str, said: list[str]
) -> None:
    import html
    import re

    from tierscope.reports.render import analysis_options, render_html, report_data

    data = report_data(analyze(dataset, analysis_options()))
    page = html.unescape(render_html(data, lang))
    table = page[page.index('<table id="runs">') : page.index("</table>", page.index('<table id="runs">'))]
    names = re.findall(r'<td class="text run">([^<]+)<', table)
    assert names == ["basic", "other", "pair", "std"]  # std-a..d and pair-a, pair-b each one row
    for words in said:
        assert words in page


def test_one_name_on_other_machines_is_said_not_corrected(dataset: Dataset) -> None:
    summary = analyze(dataset).summary
    moved = summary.with_columns(
        tier=pl.when(pl.col("run_id") == "std-a").then(pl.lit("BASIC")).otherwise("tier"),
        hardware=pl.lit(None, pl.String),
    )
    std = configurations(moved).filter(pl.col("run_id") == "std").row(0, named=True)
    assert std["config_note"].startswith("its runs name different tiers or machines (BASIC, STANDARD_1)")
    assert std["steady_global_steps_per_s"] == pytest.approx(11.0)  # still pooled as the user said


def test_recommend_plans_with_a_configuration_at_its_mean_rate(dataset: Dataset) -> None:
    from tierscope.analysis import AnalysisOptions
    from tierscope.analysis.forecast import recommend

    chosen = recommend(analyze(dataset, AnalysisOptions(price_date=date(2019, 12, 1))), 100_000, deadline_h=3)
    rows = {r["candidate"]: r for r in chosen.candidates.to_dicts()}
    # std's repeats are one candidate at 11 global steps/s: 100,000 / 11 / 3600 = 2.5253 h (no start-up: every
    # interval at the rate); the failed std-d stays evidence, never a candidate
    assert {"std", "pair", "other", "basic", "std-d"} <= set(rows) and not {"std-a", "pair-a"} & set(rows)
    assert rows["std"]["hours"] == pytest.approx(100_000 / 11 / 3600)
    assert rows["std-d"]["basis"] == "failed (evidence)"
