"""The 2016 experiment's figures, checked against hand calculations on the real logs."""

from __future__ import annotations

from datetime import date

import pytest

from tierscope import AnalysisOptions, Dataset, analyze
from tierscope.analysis.summary import BaselineError


@pytest.fixture(scope="module")
def rows(dataset_2016: Dataset) -> dict[str, dict]:
    return {r["run_id"]: r for r in analyze(dataset_2016).summary.to_dicts()}


#: The steady rates by hand (global steps/s), each the steps of the intervals kept over their time (the
#: logged interval rates; step times within 1.25x of the run's median either way are kept whole).
#: local.log: the first interval (16.009) is warm-up; of the other nine, 100 steps each, the slow 100 -> 200
#: (11.069: 9.034 s) is 1.70x the median step time (5.304 s per 100 steps, at 18.853) and left out as a stall;
#: the other eight lie within 0.985x-1.024x: 800 / (100/18.411 + 100/18.910 + 100/18.719 + 100/18.853 +
#: 100/18.825 + 100/18.903 + 100/18.968 + 100/19.135) = 800 / 42.4667 s = 18.838.
LOCAL = 800 / sum(100 / r for r in (18.411, 18.910, 18.719, 18.853, 18.825, 18.903, 18.968, 19.135))
#: basic.log: the first interval (4.644) is warm-up; the nine others, 100 steps each, lie within 0.972x-1.073x
#: of the median step time (at 4.731): 900 / (100/4.734 + 100/4.448 + ... + 100/4.731) = 900 / 193.98 s = 4.640.
BASIC = 900 / sum(100 / r for r in (4.734, 4.448, 4.682, 4.738, 4.410, 4.808, 4.767, 4.480, 4.731))
#: standard_1.log: the first line of each task is warm-up (worker/0 17.814, worker/3 64.662, worker/1 22.698,
#: master/0 15.904, worker/2 27.428); left: worker/0 900 steps at 21.919, worker/3 200 at 23.218, 100 at
#: 22.570 and 400 at 23.045; step times within 0.98x-1.04x of their median: 1600 / (41.0603 + 8.6140 + 4.4307
#: + 17.3573 s) = 1600 / 71.4623 s = 22.389. Never summed across tasks.
STANDARD_1 = 1600 / (900 / 21.919 + 200 / 23.218 + 100 / 22.570 + 400 / 23.045)


def test_steady_state_rates_match_hand_calculation(rows: dict[str, dict]) -> None:
    # Warm-up rule (tierscope.analysis.throughput): each task segment's first interval, plus the intervals right
    # after it below half the run's median. Checked by hand on all three logs, the second part removes
    # nothing: local's second interval 11.069 is 0.587 of its median 18.853 (> 0.5, so it stays past warm-up,
    # where the stall bound leaves it out); basic's lowest, 4.410, is 0.93 of 4.731; standard_1's, 21.919, 0.96
    # of 22.8075. Each figure was the median of the interval rates before (18.853, 4.731, 22.8075).
    assert rows["local"]["steady_global_steps_per_s"] == pytest.approx(LOCAL, rel=1e-12)
    assert rows["local"]["steady_global_steps_per_s"] == pytest.approx(18.8384, abs=1e-4)
    assert rows["basic"]["steady_global_steps_per_s"] == pytest.approx(BASIC, rel=1e-12)
    assert rows["basic"]["steady_global_steps_per_s"] == pytest.approx(4.6396, abs=1e-4)
    assert rows["standard_1"]["steady_global_steps_per_s"] == pytest.approx(STANDARD_1, rel=1e-12)
    assert rows["standard_1"]["steady_global_steps_per_s"] == pytest.approx(22.3894, abs=1e-4)
    # what was left out: local's one stall; none elsewhere
    assert [rows[k]["steady_stalls"] for k in ("local", "basic", "standard_1")] == [1, 0, 0]
    assert [rows[k]["steady_intervals"] for k in ("local", "basic", "standard_1")] == [9, 9, 4]
    # the author read them as about 18-19, 4-5 and 22-23
    assert 18 <= rows["local"]["steady_global_steps_per_s"] <= 19
    assert 4 <= rows["basic"]["steady_global_steps_per_s"] <= 5
    assert 22 <= rows["standard_1"]["steady_global_steps_per_s"] <= 23


def test_mean_rates_pool_step_and_time_deltas_within_tasks(rows: dict[str, dict]) -> None:
    # local: (1000 - 100) / (57.748 - 6.247) = 900 / 51.501
    assert rows["local"]["mean_global_steps_per_s"] == pytest.approx(900 / 51.501)
    # basic: 900 / (215.516 - 21.535)
    assert rows["basic"]["mean_global_steps_per_s"] == pytest.approx(900 / 193.981)
    # standard_1: worker/3 200 -> 900 over 3.093 -> 33.495 s, worker/0 100 -> 1000 over 5.613 -> 46.673 s;
    # the other tasks logged once. (700 + 900) / (30.402 + 41.060)
    assert rows["standard_1"]["mean_global_steps_per_s"] == pytest.approx(1600 / 71.462)


def test_speedup_units_and_cost_efficiency(rows: dict[str, dict]) -> None:
    assert {r["baseline_run_id"] for r in rows.values()} == {"basic"}
    assert rows["standard_1"]["speedup_vs_baseline"] == pytest.approx(STANDARD_1 / BASIC)  # 22.389 / 4.640 = 4.83
    assert rows["local"]["speedup_vs_baseline"] == pytest.approx(LOCAL / BASIC)  # 18.838 / 4.640 = 4.06
    assert rows["basic"]["ml_units_per_hour"] == 1
    assert rows["standard_1"]["ml_units_per_hour"] == 10
    assert rows["premium_1"]["ml_units_per_hour"] == 75
    assert rows["local"]["ml_units_per_hour"] is None  # own hardware
    # steps per ML unit-hour = steady rate x 3600 / units
    assert rows["basic"]["steps_per_ml_unit_hour"] == pytest.approx(BASIC * 3600)  # 16,702.7
    assert rows["standard_1"]["steps_per_ml_unit_hour"] == pytest.approx(STANDARD_1 * 3600 / 10)  # 8,060.2
    # 5 training tasks (master + workers 0-3) against BASIC's 1; 10 ML units against 1
    assert rows["standard_1"]["tasks"] == 5
    assert rows["standard_1"]["scaling_efficiency_tasks"] == pytest.approx(STANDARD_1 / BASIC / 5)  # 0.965
    assert rows["standard_1"]["scaling_efficiency_units"] == pytest.approx(STANDARD_1 / BASIC / 10)  # 0.483
    # the 2016 beta quotes ML units only, no dollar price
    assert rows["standard_1"]["usd_per_1000_steps"] is None


def test_premium_1_failed_with_the_gcloud_and_quota_cause(rows: dict[str, dict]) -> None:
    premium = rows["premium_1"]
    assert premium["status"] == "failed"
    assert premium["records"] == 0
    assert premium["failure_reason"] == "gcloud crashed (BadStatusCodeError)"
    assert "quota" in premium["note"]
    assert premium["speedup_vs_baseline"] is None
    # The hand-copied 2016 logs end with a step line: nothing says the runs finished.
    assert {r["status"] for k, r in rows.items() if k != "premium_1"} == {"unknown"}
    assert [rows[k]["records"] for k in ("local", "basic", "standard_1")] == [10, 10, 9]


def test_baseline_option_and_its_errors(dataset_2016: Dataset) -> None:
    frame = analyze(dataset_2016, AnalysisOptions(baseline="local")).summary
    standard = frame.filter(frame["run_id"] == "standard_1").row(0, named=True)
    assert standard["speedup_vs_baseline"] == pytest.approx(
        STANDARD_1 / LOCAL
    )  # 22.389 / 18.838 = 1.19: "barely faster"
    with pytest.raises(BaselineError, match="not in the dataset"):
        analyze(dataset_2016, AnalysisOptions(baseline="nope"))
    with pytest.raises(BaselineError, match="no steady-state rate"):
        analyze(dataset_2016, AnalysisOptions(baseline="premium_1"))


def test_price_date_picks_the_newest_row_on_or_before_it(tmp_path, dataset_2016: Dataset) -> None:
    # The bundled runs carry their 2016 date; --price-date only fills runs without one,
    # so the 2016 units stay whatever date is asked.
    frame = analyze(dataset_2016, AnalysisOptions(price_date=date(2019, 12, 1))).summary
    assert frame.filter(frame["run_id"] == "standard_1")["ml_units_per_hour"][0] == 10


def test_without_a_basic_run_the_smallest_run_is_the_baseline(tmp_path) -> None:
    # Two local clusters, no BASIC run: the 1-task run is the baseline.
    # small: intervals 10, 10 (first excluded) -> 10; big: 30, 30 -> 30; speedup 30 / 10 = 3.
    from tierscope.collector.collect import collect_runs, runs_from_paths

    for name, tasks, rate in (("small", 1, 10.0), ("big", 3, 30.0)):
        lines = [
            f"Train [worker/{t}], step {s}:loss:1.0, accuracy:0.5 ({s / rate:.3f} sec) {rate} global_steps/s, "
            f"{rate / tasks} local_steps/s"
            for t in range(tasks)
            for s in (100, 200, 300)
        ]
        (tmp_path / f"{name}.log").write_text("\n".join(lines) + "\n")
    ds = Dataset(tmp_path / "ds")
    for name in ("small", "big"):
        collect_runs(ds, runs_from_paths([tmp_path / f"{name}.log"], name, "local-CUSTOM", None))
    rows = {r["run_id"]: r for r in analyze(ds).summary.to_dicts()}
    assert rows["big"]["baseline_run_id"] == "small"
    assert rows["big"]["speedup_vs_baseline"] == pytest.approx(3.0)
    assert rows["big"]["ml_units_per_hour"] is None  # a local cluster is not priced
