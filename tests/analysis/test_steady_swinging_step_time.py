"""A step time that swings with its batch's input is the run's pace, not a stall: where a fifth or more of a
run's steady intervals run slower than the stall bound's start, every one counts whole (the bootstrap's rule,
the reference path and the SQL twin alike). Values worked by hand in the comments."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.analysis.test_throughput import steps_frame
from tierscope.analysis.bootstrap import kept_shares, recurring, steady_rate
from tierscope.analysis.steady_sql import steady_state_query
from tierscope.analysis.throughput import run_throughput

# Torch7's fb.resnet.torch, one line a step (facebookarchive/fb.resnet.torch issue 17, 2016-02-29):
#  | Epoch: [1][1/5005]    Time 21.933  Data 10.801  Err 7.0894  top1 100.000  top5 100.000
#  | Epoch: [1][2/5005]    Time 0.426  Data 0.002  Err 7.0478  top1 100.000  top5  99.609
#  | Epoch: [1][3/5005]    Time 1.147  Data 0.000  Err 7.0691  top1  99.609  top5  99.609
# ... steps 2-11 taking these seconds each:
FB_RESNET = [0.426, 1.147, 0.543, 0.375, 1.369, 0.453, 1.204, 0.520, 0.347, 0.451]
# dcgan.torch's generator/discriminator steps (soumith/dcgan.torch issue 9), steps 230-237 past warm-up:
#  Epoch: [2][     230 /      237]	 Time: 0.132  DataTime: 0.030    Err_G: 2.2131  Err_D: 0.4938
#  Epoch: [2][     236 /      237]	 Time: 0.413  DataTime: 0.312    Err_G: 2.0466  Err_D: 0.4028
DCGAN = [0.132, 0.184, 0.133, 0.128, 0.254, 0.222, 0.413, 0.128]


def test_swinging_step_times_count_whole() -> None:
    # fb.resnet: median step time (0.451 + 0.520) / 2 = 0.4855 s; 1.147, 1.369, 1.204 are 2.36-2.82x it (past the
    # bound's 1.5x), 3 of 10 >= a fifth: the slowness recurs, all kept: 10 steps in 6.835 s = 1.463 steps/s
    # (the fast steps alone gave 2.25).
    rates = 1 / np.array(FB_RESNET)
    assert recurring(rates, 1 / 0.4855)
    assert steady_rate(rates) == pytest.approx(10 / 6.835)
    assert kept_shares(rates).tolist() == [1.0] * 10
    # dcgan: median (0.133 + 0.184) / 2 = 0.1585 s; 0.222, 0.254, 0.413 are 1.40x, 1.60x, 2.61x (3 of 8 past
    # 1.25x): all kept, 8 steps in 1.594 s = 5.019 steps/s (the hand reading of the whole epoch, 237 steps in
    # 47.914 s, is 4.946).
    assert steady_rate(1 / np.array(DCGAN)) == pytest.approx(8 / 1.594)


def test_a_rare_stall_is_still_left_out() -> None:
    # Nine steady intervals of 1.0-1.05 s and one of 10 s (a checkpoint): 1 of 10 is under a fifth, the stall is
    # left out: 9 steps in 9.2 s = 0.978 steps/s (with it, 10 / 19.2 = 0.52).
    times = np.array([1.0, 1.05, 1.0, 1.02, 1.03, 10.0, 1.0, 1.05, 1.02, 1.03])
    assert not recurring(1 / times, 1 / 1.025)
    assert steady_rate(1 / times) == pytest.approx(9 / 9.2)


def test_the_reference_path_and_the_sql_twin_read_a_swinging_run_alike(tmp_path: Path) -> None:
    # fb.resnet's records, each stating its step's time (interval_s): step 1 (21.933 s, data loading) opens the
    # segment; its steps 2-11 are the intervals: 1.463 steps/s on both paths.
    rows = [{"step": 1, "interval_s": 21.933}] + [
        {"step": k, "interval_s": t} for k, t in enumerate(FB_RESNET, start=2)
    ]
    steps = steps_frame(rows)
    assert run_throughput(steps)["steady_global_steps_per_s"][0] == pytest.approx(10 / 6.835)
    duckdb = pytest.importorskip("duckdb", reason="duckdb is a test dependency (pip install '.[test]')")
    steps.collect().write_parquet(tmp_path / "steps.parquet")
    query = steady_state_query(f"read_parquet('{tmp_path / 'steps.parquet'}')", "duckdb")
    assert [rate for _, rate, _ in duckdb.sql(query).fetchall()] == pytest.approx([10 / 6.835])
