"""Interval figures a batch of runs at a time: the batches, and the same figures as one pass."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

from tierscope.analysis import series as charts
from tierscope.analysis.batches import interval_figures, record_counts, run_batches
from tierscope.analysis.tasks import task_throughput
from tierscope.analysis.throughput import collect_intervals, run_throughput, steady_intervals, steady_samples
from tierscope.dataset.schema import STEP_SCHEMA, conform
from tierscope.dataset.store import Dataset


def test_runs_are_grouped_in_id_order_up_to_the_record_budget(dataset_2016: Dataset) -> None:
    counts = record_counts(dataset_2016.scan("steps"))
    # records per run, in id order: basic 10, local 10, standard_1 9 (1 master + 8 worker lines)
    assert run_batches(counts, 20) == [["basic", "local"], ["standard_1"]]  # 10 + 10 = 20 fits; + 9 does not
    assert run_batches(counts, 19) == [["basic"], ["local", "standard_1"]]  # 10 + 10 > 19; 10 + 9 = 19 fits
    assert run_batches(counts, 5) == [["basic"], ["local"], ["standard_1"]]  # a run above the budget goes alone
    assert run_batches(counts.filter(pl.lit(False)), 5) == []


def restarted_runs() -> pl.LazyFrame:
    """Three runs of two workers each, logging every 100 steps for 5 s (20 steps/s) after an 8 s start-up,
    with a preemption in run "b" (its worker 0 restarts from step 500 with a new clock) and every
    record of run "c" logged twice (a copy to merge)."""
    rows = []
    for run in ("a", "b", "c"):
        for task in (0, 1):
            elapsed = 8.0
            for k in range(1, 13):
                step = 100 * k if not (run == "b" and task == 0 and k > 6) else 100 * k - 200
                if run == "b" and task == 0 and k == 7:
                    elapsed = 8.0  # a new process
                row = {"run_id": run, "task_index": task, "step": step, "local_step": 50 * k, "elapsed_s": elapsed}
                rows += [{**row, "source": f"{run}-{task}.log", "source_offset": k}] * (2 if run == "c" else 1)
                elapsed += 5.0 + 0.1 * task + 0.01 * k  # distinct rates, so medians and draws depend on the runs' data
    frame = pl.DataFrame(rows).with_columns(tier=pl.lit("BASIC"), role=pl.lit("worker"), format=pl.lit("cloudml"))
    return conform(frame, STEP_SCHEMA).lazy()


@pytest.mark.parametrize("max_records", [1, 48, 10**9])  # every run alone; "a" + "b" then "c"; all at once
def test_batched_figures_are_those_of_one_pass(max_records: int) -> None:
    steps = restarted_runs()
    figures = interval_figures(steps, seed=7, max_records=max_records)
    assert_frame_equal(figures.throughput, run_throughput(steps, seed=7))
    assert_frame_equal(figures.tasks, task_throughput(steps))
    whole = steady_samples(steady_intervals(steps))
    assert figures.samples.keys() == whole.keys() == {"a", "b", "c"}
    for run, values in whole.items():
        np.testing.assert_array_equal(figures.samples[run], values)  # same values in the same order (bootstrap)
    rows = {r["run_id"]: r for r in figures.throughput.to_dicts()}
    # b's worker 0 restarts: 2 segments; c's 48 rows hold 24 records logged twice
    assert (rows["b"]["restarts"], rows["c"]["duplicates"], rows["c"]["records"]) == (1, 24, 48)


def test_visit_sees_each_batch_once(dataset_2016: Dataset) -> None:
    seen: list[list[str]] = []
    interval_figures(dataset_2016.scan("steps"), visit=lambda b: seen.append(sorted(set(b["run_id"]))), max_records=19)
    assert seen == [["basic"], ["local", "standard_1"]]


def test_chart_series_gathered_per_batch_are_those_of_one_pass() -> None:
    steps = restarted_runs()
    runs = charts.charted_runs(record_counts(steps), max_runs=2)  # c (48 records), then a (24; ties by id)
    series = charts.ChartSeries(runs)
    interval_figures(steps, extra=charts.INTERVAL_VIEW, visit=series.add, max_records=1)
    whole = charts.charted_intervals(collect_intervals(steps, extra=charts.INTERVAL_VIEW), runs)
    expected = charts.throughput_series(charts.steady_rates(whole), runs.height)
    for got, want in zip(series.frames(), expected, strict=True):
        assert set(got["run_id"]) == {"a", "c"}
        assert_frame_equal(got, want)
