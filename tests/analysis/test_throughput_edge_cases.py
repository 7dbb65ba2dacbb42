"""Hostile inputs to today's rate changes (attack pass): a stall over 10x the other intervals, pieces of mixed runs,
small amounts across a power of ten."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

from tierscope.analysis.batches import interval_figures
from tierscope.analysis.throughput import run_throughput, steady_intervals, steady_samples
from tierscope.dataset.schema import STEP_SCHEMA, conform
from tierscope.decimals import two_decimals


def _master_log(elapsed: list[float]) -> pl.LazyFrame:
    """One master logging every 100 steps (step 100, 200, ...) at the given elapsed_s."""
    rows = [{"step": 100 * (k + 1), "elapsed_s": e, "source_offset": k} for k, e in enumerate(elapsed)]
    frame = pl.DataFrame(rows).with_columns(
        run_id=pl.lit("r"),
        tier=pl.lit("BASIC"),
        format=pl.lit("cloudml"),
        role=pl.lit("master"),
        task_index=pl.lit(0),
        source=pl.lit("a.log"),
    )
    return conform(frame, STEP_SCHEMA).lazy()


def _steady(elapsed: list[float]) -> float:
    return run_throughput(_master_log(elapsed), seed=1)["steady_global_steps_per_s"][0]


def test_a_stall_exactly_ten_times_the_other_intervals_keeps_the_plain_median() -> None:
    # intervals (first one warm-up): 10, 10, 100, 10, 10, 10 s of 100 steps: rates 10, 10, 1, 10, 10, 10;
    # longest 100 <= 10 x 10: plain median 10.0
    assert _steady([5, 15, 25, 35, 135, 145, 155, 165]) == 10.0


def test_a_stall_just_over_ten_times_does_not_become_the_steady_rate() -> None:
    # as above with the stall 101 s: weighted by seconds the stall (0.990 steps/s, 101 of the 151 steady
    # seconds, over half) is the weighted median: 0.990 steady, below the mean 700 / 161 = 4.35. A 1 %
    # longer pause should not move the steady figure tenfold: expected the 100 s case's 10.0.
    assert _steady([5, 15, 25, 35, 136, 146, 156, 166]) == pytest.approx(10.0)


def _mixed_runs() -> pl.LazyFrame:
    """Run "big": 4 workers, intervals of 200 and 3 steps (weighted: 200/3 > 10x in seconds), 400 steps
    of missing lines every 13th record; run "plain": one master every 100 steps in 10 s (unweighted)."""
    rng = np.random.default_rng(3)
    rows = []
    for t in range(4):
        step = 0
        for k in range(80):
            inc = 200 if k % 3 == 0 else 3
            sec = inc / (10 + t + rng.random())
            step += inc + (400 if k % 13 == 5 else 0)
            rows.append(
                {
                    "role": "worker",
                    "task_index": t,
                    "step": step,
                    "interval_s": sec,
                    "global_steps_per_s": inc / sec,
                    "source": "j.log",
                    "source_offset": t * 1000 + k,
                    "run_id": "big",
                }
            )
    for k in range(1, 50):
        rows.append(
            {
                "role": "master",
                "task_index": 0,
                "step": 100 * k,
                "interval_s": 10.0,
                "global_steps_per_s": 10.0 + 0.01 * k,
                "source": "k.log",
                "source_offset": k,
                "run_id": "plain",
            }
        )
    frame = pl.DataFrame(rows).with_columns(tier=pl.lit("STANDARD_1"), format=pl.lit("estimator"))
    return conform(frame, STEP_SCHEMA).lazy()


@pytest.mark.parametrize("max_records", [1, 15, 85])  # pieces of 2, 30, 170 records
def test_pieces_keep_the_weights_of_one_pass_on_mixed_runs(max_records: int) -> None:
    steps = _mixed_runs()
    whole = run_throughput(steps, seed=11)
    figures = interval_figures(steps, seed=11, max_records=max_records)
    assert_frame_equal(figures.throughput, whole)
    one_pass = steady_samples(steady_intervals(steps))
    assert one_pass["plain"].weights is None  # every interval 10 s
    assert one_pass["big"].weights is not None
    np.testing.assert_array_equal(figures.samples["big"].weights, one_pass["big"].weights)
    assert figures.samples["plain"].weights is None
    # plain: 48 steady intervals of 100 steps (the first is its segment's opening), stated rates 10.02 ..
    # 10.49, all within 1.03x of the median step time: 4800 steps / sum(100 / (10 + 0.01 k), k = 2..49) =
    # 4800 / 468.14 s = 10.2531 (the median was (10.25 + 10.26) / 2 = 10.255)
    plain = 4800 / sum(100 / (10 + 0.01 * k) for k in range(2, 50))
    assert plain == pytest.approx(10.2531, abs=1e-4)
    assert whole.filter(pl.col("run_id") == "plain")["steady_global_steps_per_s"][0] == pytest.approx(plain)


def test_two_decimals_keeps_three_significant_digits_across_a_power_of_ten() -> None:
    # 0.000999999 to 3 significant digits is 0.00100 (it printed 0.001000)
    assert two_decimals(0.000999999) == "0.00100"


def test_a_run_whose_records_name_no_tier_reaches_the_summary(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # Records whose run id is their own (a Cloud Logging export's job id, the trainer's structured run_id)
    # and that name no tier: each run's tiers are an empty list, which polars 2's explode drops, so the
    # run was missing from summary and report (and --runs said it does not exist).
    from tierscope.analysis import analyze
    from tierscope.dataset.store import Dataset

    ds = Dataset(tmp_path / "ds")
    rows = [{"run_id": "census_1", "role": "master", "task_index": 0, "step": 100 * k, "elapsed_s": 5.0 * k,
             "source": "le.jsonl", "source_offset": k, "format": "cloudml"} for k in (1, 2, 3)]  # fmt: skip
    ds.append("steps", conform(pl.DataFrame(rows), STEP_SCHEMA))
    summary = analyze(ds).summary
    # 100 steps each 5 s: 20 global steps/s
    assert summary.select("run_id", "records", "steady_global_steps_per_s").rows() == [("census_1", 3, 20.0)]
