"""Which run the speedup is against when none is asked for (:func:`tierscope.analysis.summary.pick_baseline`)."""

from __future__ import annotations

import polars as pl

from tierscope.analysis.summary import pick_baseline


def _runs(*rows: tuple[str, str | None, int, float | None, float | None]) -> pl.DataFrame:
    return pl.DataFrame(
        [
            {"run_id": r, "tier": t, "tasks": n, "usd_per_hour": usd, "steady_global_steps_per_s": rate}
            for r, t, n, usd, rate in rows
        ],
        schema={
            "run_id": pl.String,
            "tier": pl.String,
            "tasks": pl.Int64,
            "usd_per_hour": pl.Float64,
            "steady_global_steps_per_s": pl.Float64,
        },
    )


def test_without_a_basic_run_the_cheapest_an_hour_is_the_baseline_whatever_its_name() -> None:
    # an A100 machine (a2-highgpu-1g, 3.67 USD/h) and a T4 one (n1-standard-8 + T4, 0.38 + 0.35 = 0.73 USD/h),
    # one task each: the T4 is what paying more is measured from, though "a100" sorts first by name
    runs = _runs(("a100", None, 1, 3.67339, 5.0), ("t4", None, 1, 0.73, 0.8))
    assert pick_baseline(runs, None)["run_id"].item() == "t4"


def test_a_priced_run_comes_before_an_unpriced_one_then_the_fewest_tasks() -> None:
    # the laptop has no price: the priced runs are compared first; among the unpriced, the fewest tasks
    runs = _runs(("laptop", None, 1, None, 18.8), ("pod", None, 4, 14.7, 60.0), ("pair", None, 2, 7.3, 30.0))
    assert pick_baseline(runs, None)["run_id"].item() == "pair"
    unpriced = _runs(("big", None, 4, None, 60.0), ("small", None, 2, None, 30.0))
    assert pick_baseline(unpriced, None)["run_id"].item() == "small"


def test_a_basic_run_and_an_unmeasured_one() -> None:
    # BASIC first even when another run is cheaper; a run without a steady rate is never the baseline
    runs = _runs(("basic", "BASIC", 1, 0.49, 4.6), ("cheap", None, 1, 0.1, None), ("t4", None, 1, 0.3, 0.8))
    assert pick_baseline(runs, None)["run_id"].item() == "basic"
    assert pick_baseline(runs.filter(pl.col("run_id") != "basic"), None)["run_id"].item() == "t4"
