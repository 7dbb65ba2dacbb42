"""Repeats of one configuration: the runs given one ``config`` are one row, its rate the mean of theirs and its
interval Student's t between them (:mod:`tierscope.analysis.configurations`); a run without one is its own."""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path
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


def _dataset(root: Any, runs: dict[str, tuple[str, str | None, float]], hosts: dict[str, str] | None = None) -> Dataset:
    ds = Dataset(root)
    steps = [row for run, (_, _, rate) in runs.items() for row in _rows(run, rate)]
    ds.append("steps", conform(pl.DataFrame(steps), STEP_SCHEMA))
    if "std-d" in runs:
        failed = {"run_id": "std-d", "event": "failed", "reason": "preempted", "source": "/logs/std-d.log"}
        ds.append("events", conform(pl.DataFrame([failed]), EVENT_SCHEMA))
    facts = [{"run_id": run, "tier": tier, "config": config, "date": date(2016, 12, 31), "collected_at": T0,
              "ran_on": (hosts or {}).get(run)} for run, (tier, config, _) in runs.items()]  # fmt: skip
    ds.append("runs", conform(pl.DataFrame(facts), RUN_SCHEMA))
    return ds


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Dataset:
    return _dataset(tmp_path_factory.mktemp("configs") / "ds", RUNS)


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


#: Runs a hostile user gives: a config named like another run's id, one config over other tiers and hosts, and
#: repeats so far apart that a t-interval would go below 0. (tier, config, global steps/s) as in RUNS.
HOSTILE: dict[str, tuple[str, str | None, float]] = {
    "r1": ("BASIC", "r2", 5.0),  # --config r2 given to r1 ...
    "r2": ("STANDARD_1", None, 20.0),  # ... while r2 runs alone
    "mix-a": ("BASIC", "mix", 5.0),
    "mix-b": ("STANDARD_1", "mix", 10.0),
    "mix-c": ("STANDARD_1", "mix", 12.0),
    "mix-d": ("local", "mix", 3.0),  # two laptops: the same tier label, other machines
    "mix-e": ("local", "mix", 4.0),
    "wide-a": ("STANDARD_1", "wide", 1.0),
    "wide-b": ("STANDARD_1", "wide", 1.0),
    "wide-c": ("STANDARD_1", "wide", 30.0),
}


@pytest.fixture(scope="module")
def hostile_ds(tmp_path_factory: pytest.TempPathFactory) -> Dataset:
    return _dataset(tmp_path_factory.mktemp("hostile") / "ds", HOSTILE, {"mix-d": "laptop-1", "mix-e": "laptop-2"})


@pytest.fixture(scope="module")
def hostile(hostile_ds: Dataset) -> pl.DataFrame:
    frame = analyze(hostile_ds).configurations
    assert frame is not None
    return frame


def test_a_config_named_like_a_run_never_takes_that_runs_row(hostile: pl.DataFrame) -> None:
    rows = {r["run_id"]: r for r in hostile.iter_rows(named=True)}
    # r2 keeps its row, alone at its own 20 steps/s; the configuration r2 (r1 alone, 5 steps/s) is marked
    r2, config = rows["r2"], rows["r2 (config)"]
    assert (r2["config_runs"], r2["run_ids"], r2["steady_global_steps_per_s"]) == (1, "r2", pytest.approx(20.0))
    assert (config["config"], config["run_ids"]) == ("r2", "r1")
    assert config["steady_global_steps_per_s"] == pytest.approx(5.0)
    # a configuration of one run is named by the configuration, its run said in its note
    assert config["config_note"] == "its one run: r1"
    assert "r1" not in rows  # a run in a configuration has no row of its own (--each-run lists it)


def test_one_config_on_other_machines_is_one_row_per_machine_configuration(hostile: pl.DataFrame) -> None:
    mix = {r["run_id"]: r for r in hostile.filter(pl.col("config") == "mix").iter_rows(named=True)}
    # BASIC, STANDARD_1, and the local tier on two hosts: 4 machine configurations, one row each
    assert sorted(mix) == ["mix [BASIC]", "mix [STANDARD_1]", "mix [local on laptop-1]", "mix [local on laptop-2]"]
    split = "config mix names runs on 4 different machine configurations; pooled only runs on the same machines"
    assert all(split in r["config_note"] for r in mix.values())
    # STANDARD_1's two runs pooled: mean (10 + 12) / 2 = 11, spread 10-12, s = sqrt((1 + 1) / 1) = 1.414214;
    # the BASIC run (5) and the laptops' (3, 4) are not in it
    std = mix["mix [STANDARD_1]"]
    assert (std["config_runs"], std["run_ids"], std["tier"]) == (2, "mix-b, mix-c", "STANDARD_1")
    assert std["steady_global_steps_per_s"] == pytest.approx(11.0)
    assert (std["run_rate_min"], std["run_rate_max"]) == (pytest.approx(10.0), pytest.approx(12.0))
    # its price is STANDARD_1's own, 10 ML units an hour (analysis/data/ml_units.csv), not a blend with BASIC's 1
    assert std["ml_units_per_hour"] == pytest.approx(10.0)
    assert mix["mix [BASIC]"]["steady_global_steps_per_s"] == pytest.approx(5.0)
    assert mix["mix [BASIC]"]["config_note"].startswith("its one run: mix-a; config mix names runs on 4")
    assert mix["mix [local on laptop-2]"]["steady_global_steps_per_s"] == pytest.approx(4.0)
    # the baseline run (mix-a, BASIC) is named as its row is, and speedups are against its 5 steps/s: r2 20 / 5 = 4
    assert set(hostile["baseline_run_id"]) == {"mix [BASIC]"}
    assert hostile.filter(pl.col("run_id") == "r2")["speedup_vs_baseline"].item() == pytest.approx(4.0)


def test_collect_config_named_like_another_run(tmp_path: Path) -> None:
    import json

    from typer.testing import CliRunner

    from tierscope.cli import app

    # r1 on BASIC at 5 global steps/s given --config r2; r2 on STANDARD_1 at 20 alone: two rows, never one
    for name, rate in (("basic", 5.0), ("standard_1", 20.0)):
        (tmp_path / f"{name}.log").write_text("".join(
            f"Train [master/0], step {s}:loss:2.3, accuracy:0.1 (1.0 sec) {rate} global_steps/s, {rate} local_steps/s\n"
            for s in range(100, 700, 100)
        ))  # fmt: skip
    ds, runner = str(tmp_path / "ds"), CliRunner()
    for args in (["basic.log", "--run-id", "r1", "--tier", "BASIC", "--config", "r2"],
                 ["standard_1.log", "--run-id", "r2", "--tier", "STANDARD_1"]):  # fmt: skip
        got = runner.invoke(app, ["collect", "files", str(tmp_path / args[0]), *args[1:], "--dataset", ds])
        assert got.exit_code == 0, got.output
    shown = runner.invoke(app, ["summary", "--dataset", ds, "--json"])
    rows = {r["run_id"]: r for r in json.loads(shown.stdout)}
    assert sorted(rows) == ["r2", "r2 (config)"]
    assert (rows["r2"]["config_runs"], rows["r2 (config)"]["run_ids"]) == (1, "r1")
    table = runner.invoke(app, ["summary", "--dataset", ds], env={"COLUMNS": "250"})
    assert "configuration r2 (config): its one run: r1" in " ".join(table.stdout.split())


def test_the_report_says_a_split_a_clip_and_a_configurations_one_run(hostile_ds: Dataset) -> None:
    import html

    from tierscope.reports.render import analysis_options, render_html, report_data

    page = html.unescape(render_html(report_data(analyze(hostile_ds, analysis_options())), "en"))
    said = [
        "r2 (config): a configuration of one run, r1.",
        "mix [STANDARD_1]: the config mix names runs on 4 different machine configurations; only runs on the same "
        "machines are pooled, one row each.",
        "wide: the lower bound of its interval between runs is clipped at 0 (a rate is not negative)",
    ]
    for words in said:
        assert words in page


def test_row_names_never_repeat_a_run_id() -> None:
    from tierscope.analysis.configurations import row_names

    facts = [  # run id, tier, hardware, config
        ("r2", "BASIC", None, None), ("r2 (config)", "BASIC", None, None), ("x", "BASIC", None, "r2"),
        ("c1", "CUSTOM", "1 x n1-standard-8", " c "), ("c2", "CUSTOM", "1 x n1-standard-16", "c"),
    ]  # fmt: skip
    summary = pl.DataFrame([dict(zip(("run_id", "tier", "hardware", "config"), f, strict=True)) for f in facts])
    names = dict(row_names(summary).select("run_id", "row").iter_rows())
    # "r2" and "r2 (config)" are runs' ids: the configuration r2 takes the next mark
    assert names["x"] == "r2 (config 2)"
    assert (names["r2"], names["r2 (config)"]) == ("r2", "r2 (config)")
    # " c " is c; one tier on two machine types: the rows name the machines, not the tier alone
    assert (names["c1"], names["c2"]) == ("c [CUSTOM, 1 x n1-standard-8]", "c [CUSTOM, 1 x n1-standard-16]")


def test_an_interval_between_runs_far_apart_is_clipped_at_zero(hostile: pl.DataFrame) -> None:
    # 1, 1, 30: mean 32 / 3 = 10.666667; deviations -9.666667, -9.666667, 19.333333, squares summing to
    # 93.444444 x 2 + 373.777778 = 560.666667, s^2 = 280.333333, s / sqrt(3) = sqrt(93.444444) = 9.666667;
    # half width 4.302653 x 9.666667 = 41.592312: -30.925645 to 52.258979, the lower bound clipped at 0
    mean, _, low, high, clipped = between_runs([1.0, 1.0, 30.0])
    assert (mean, low, high, clipped) == (pytest.approx(10.666667), 0.0, pytest.approx(52.258979), True)
    wide = hostile.filter(pl.col("run_id") == "wide").row(0, named=True)
    assert (wide["steady_ci_low"], wide["steady_ci_high"]) == (0.0, pytest.approx(52.258979))
    assert "its interval's lower bound, -30.9256, clipped at 0 (a rate is not negative)" in wide["config_note"]


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


def test_a_configurations_steady_hours_are_at_its_pooled_rate(dataset: Dataset) -> None:
    from tierscope.analysis import AnalysisOptions

    configs = analyze(dataset, AnalysisOptions(steps=100_000)).configurations
    assert configs is not None
    rows = {r["run_id"]: r for r in configs.iter_rows(named=True)}
    # std's rate is the mean of its rated runs, 11 global steps/s (above); every interval is at the rate, so the
    # steady and the sustained plans agree: 100,000 / 11 / 3600 = 2.525253 h, not the mean of its runs' hours
    # (100,000 / 3600 x (1/10 + 1/12 + 1/11) / 3 = 2.540400 h)
    std = rows["std"]
    assert std["steady_hours_to_target"] == pytest.approx(100_000 / 11 / 3600)
    assert std["hours_to_target"] == pytest.approx(100_000 / 11 / 3600)
    # pair: 21 steps/s -> 1.322751 h
    assert rows["pair"]["steady_hours_to_target"] == pytest.approx(100_000 / 21 / 3600)
