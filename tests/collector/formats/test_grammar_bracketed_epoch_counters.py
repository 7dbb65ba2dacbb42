"""An epoch stated with its total in brackets right before the step's counter (``[30/300][210/2859]``): the first
counter is the epoch, the second the step within it; and a unit-less ``time X (avg)`` column before a two-word key."""

from __future__ import annotations

import polars as pl
import pytest

from tests.support.formats_support import parse

# Quoted from MzeroMiko/VMamba issue 273 (ydhongHIT, 2024-07-27): Swin Transformer's main.py logger, tab-separated.
SWIN = [
    "[2024-07-27 03:37:34 vssm1_high_tiny_gradacc2] (main.py 295): INFO Train: [30/300][210/2859]\teta 0:25:26 lr"
    " 0.000872\t wd 0.0500\ttime 0.4205 (0.5761)\tdata time 0.0010 (0.1443)\tmodel time 0.4195 (0.4317)\tloss 1.9993"
    " (1.9758)\tgrad_norm 2.1558 (2.5588)\tloss_scale 32768.0000 (32768.0000)\tmem 16138MB",
    "[2024-07-27 03:37:39 vssm1_high_tiny_gradacc2] (main.py 295): INFO Train: [30/300][220/2859]\teta 0:25:03 lr"
    " 0.000872\t wd 0.0500\ttime 0.4248 (0.5696)\tdata time 0.0007 (0.1378)\tmodel time 0.4241 (0.4318)\tloss 2.1316"
    " (1.9774)\tgrad_norm 2.5530 (2.5997)\tloss_scale 32768.0000 (32768.0000)\tmem 16138MB",
]


def test_the_first_of_two_bracketed_counters_is_the_epoch_counted_from_zero() -> None:
    steps = parse(SWIN).steps
    # epoch 30 of a 2859-iteration epoch, counted from 0 as range(epochs) prints it: 30 * 2859 + 210 = 85980
    assert steps.get_column("step").to_list() == [85980, 85990]
    # the iteration's own time, its running mean in parentheses: 1 / 0.4205 = 2.378121, 1 / 0.4248 = 2.354049
    assert steps.get_column("global_steps_per_s").to_list() == pytest.approx([1 / 0.4205, 1 / 0.4248])
    assert steps.get_column("loss").to_list() == pytest.approx([1.9993, 2.1316])


def test_an_epoch_counted_from_zero_gives_whole_steps_from_zero() -> None:
    # PyTorch's DCGAN example's layout, a time added: epoch 0 of 25, iterations 0 and 50 of 782; then epoch 1
    lines = [
        "[0/25][0/782]  time 0.50  Loss_D: 1.2",
        "[0/25][50/782]  time 0.50  Loss_D: 1.1",
        "[1/25][0/782]  time 0.50  Loss_D: 1.0",
    ]
    # 0 * 782 + 0 = 0, 0 * 782 + 50 = 50, 1 * 782 + 0 = 782
    assert parse(lines).steps.get_column("step").to_list() == [0, 50, 782]


@pytest.mark.parametrize(
    "line",
    [
        # one counter, then a bracket that is no counter: the counter alone is the position, no epoch
        "Train: [210/2859][lr 0.1]\ttime 0.4205 (0.5761)\tloss 1.99 (1.97)",
        # a counter in words before the brackets: the bracketed number is the epoch only right before the counter
        "Train: [30/300] batch 210/2859\ttime 0.4205 (0.5761)\tloss 1.99 (1.97)",
    ],
)
def test_near_misses_keep_the_counter_they_state(line: str) -> None:
    step = parse([line]).steps.get_column("step").to_list()
    assert step and step[0] == 210


def test_a_time_column_followed_by_words_and_no_number_is_no_step_time() -> None:
    # near miss: "time 3" then two words and no value: prose, not a column of figures
    assert parse(["Train: [1/10][5/100]\ttime 3 hours left"]).steps.height == 0


def test_a_step_time_column_followed_by_a_two_word_key() -> None:
    steps = parse(["Train: [0/10][5/100]\ttime 0.25 (0.30)\tdata time 0.01 (0.02)\tloss 1.5 (1.6)"]).steps
    # 0 * 100 + 5 = 5; 1 / 0.25 = 4.0
    assert steps.select("step", "global_steps_per_s").rows() == [(5, 4.0)]
    assert steps.filter(pl.col("step") == 5).height == 1
