"""A message one process printed twice in a row (a logging handler attached twice) is one report, also where it
states no step: TF-Slim and Estimator scripts whose own ``StreamHandler`` sits beside TensorFlow's print every line
twice, so a step-less ``global_step/sec`` line would count twice. Ranks' copies that differ (in decimals, in times)
and two tasks' identical lines stay apart."""

from __future__ import annotations

import polars as pl

from tests.support.formats_support import frame, read_lines
from tierscope.collector.formats.envelopes import split_envelopes
from tierscope.collector.formats.ranks import without_handler_copies

# tensorflow/models issue 2980 ("what is global step and loss?", a comment of 2018): every line twice
_DOUBLED = [
    "INFO:tensorflow:global step 3: loss = 67.3308 (16.534 sec/step)",
    "INFO:tensorflow:global step 3: loss = 67.3308 (16.534 sec/step)",
    "INFO:tensorflow:global step 4: loss = 64.2655 (16.926 sec/step)",
    "INFO:tensorflow:global step 4: loss = 64.2655 (16.926 sec/step)",
    "INFO:tensorflow:Recording summary at step 4.",
    "INFO:tensorflow:Recording summary at step 4.",
    "INFO:tensorflow:global_step/sec: 0.0339311",
    "INFO:tensorflow:global_step/sec: 0.0339311",
    "INFO:tensorflow:global step 5: loss = 62.5264 (20.205 sec/step)",
    "INFO:tensorflow:global step 5: loss = 62.5264 (20.205 sec/step)",
]


def test_a_doubled_handler_gives_each_report_once_the_stepless_rate_too() -> None:
    parsed = read_lines(*_DOUBLED)
    steps = parsed.steps.sort("source_offset")
    # steps 3, 4, 5 once each (lines 1, 3, 9) and the global_step/sec once (line 7): 4 records, not 5
    assert steps.get_column("source_offset").to_list() == [1, 3, 7, 9]
    # 1 / 16.534 sec/step = 0.060481...; the rate line's figure as logged
    assert abs(steps.get_column("local_steps_per_s")[0] - 1 / 16.534) < 1e-12
    assert steps.filter(pl.col("step").is_null()).get_column("global_steps_per_s").to_list() == [0.0339311]
    # the 10 lines: 4 records; the other 6 (3 copies of records, the summary notice twice) skipped
    assert parsed.skipped == 6


def test_copies_that_differ_are_ranks_and_two_tasks_lines_stay_two() -> None:
    # near-miss 1: four untagged Horovod processes' step-less rate lines (horovod/horovod issue 609, 2018-10-30):
    # their times differ (and the last figure), so they are four ranks' reports, none dropped as a copy
    ranks = read_lines(
        "INFO:tensorflow:2018-10-30 10:28:28.958103: global_step/sec: 0.686408",
        "INFO:tensorflow:2018-10-30 10:28:28.958218: global_step/sec: 0.686408",
        "INFO:tensorflow:2018-10-30 10:28:28.958265: global_step/sec: 0.686408",
        "INFO:tensorflow:2018-10-30 10:28:28.958430: global_step/sec: 0.686407",
    )
    assert ranks.steps.height == 4
    # near-miss 2: mpirun's tags name two tasks printing the same text (horovod/horovod issue 1421): the tasks'
    # lines are no copies of one another, so neither is dropped
    tagged = split_envelopes(
        frame(["[1,1]<stdout>:Epoch 0/100, Batch 18/29316", "[1,0]<stdout>:Epoch 0/100, Batch 18/29316"]), 2019
    )[0]
    assert without_handler_copies(tagged).height == 2
