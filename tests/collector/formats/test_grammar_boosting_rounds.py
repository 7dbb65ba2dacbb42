"""A gradient-boosting round is the unit of work a boosted model's training counts: its step. XGBoost's
``boosting round N, T sec elapsed`` and its watchlist's ``[N]\\t<set>-<metric>:<value>`` state the round; a round,
a tournament's or a federated one, that says neither is no position.

The lines are quoted from real logs (source and date beside each); each expected value is worked out by hand."""

from __future__ import annotations

import pytest

from tests.support.formats_support import read
from tierscope.collector.formats.statements import statements

# XGBoost 0.x's CLI, a regression run quoted in github.com/dmlc/xgboost/issues/240 (2015-04-14): each round's
# announcement, the pruner's line and the watchlist's bare ``[N]`` (no set in the watchlist)
_XGB_CLI = [
    "351071x162 matrix with 42382165 entries is loaded from part-xgboost-reg-train.buffer",
    "boosting round 0, 1 sec elapsed",
    "tree prunning end, 1 roots, 46 extra nodes, 92 pruned nodes ,max_depth=7",
    "[0]",
    "boosting round 1, 2 sec elapsed",
    "tree prunning end, 1 roots, 74 extra nodes, 72 pruned nodes ,max_depth=7",
    "[1]",
    "boosting round 2, 3 sec elapsed",
]


def test_each_boosting_round_is_a_step_timed_by_its_elapsed_seconds() -> None:
    got = read(*_XGB_CLI)
    # rounds 0, 1, 2: three records, the last one too (alone at the file's end it was lost when only the
    # repeated group of lines gave the round its position)
    assert got.get_column("step").to_list() == [0, 1, 2]
    # "2 sec elapsed" at round 1: the seconds since the start
    assert got.filter(step=1)["elapsed_s"][0] == pytest.approx(2.0)


def test_a_watchlist_line_states_its_round_and_its_training_log_loss() -> None:
    # XGBoost4J-Spark's tracker output (github.com/dmlc/xgboost/issues/7962, 2022-06-01), the message after its loggers
    line = "[15]\ttrain-logloss:0.00502646757155188\teval-logloss:0.51746790368885076"
    got = statements(line)
    assert got["step"][0] == "15"
    # the first set's log loss, as printed
    assert got["loss"][0] == pytest.approx(0.00502646757155188)
    assert not got["evaluation"][0]
    # a round whose first set is a held-out one reads as that evaluation (an XGBoost run quoted in
    # github.com/dmlc/xgboost/issues/1692, 2016: ``[50]\ttest-error:0.027193\ttrain-error:0.010229``)
    held = statements("[50]\ttest-error:0.027193\ttrain-error:0.010229")
    assert held["step"][0] == "50" and held["evaluation"][0]


def test_a_timed_watchlist_line_under_a_logger_is_a_record() -> None:
    # the tracker's own Python logger's time is the round's clock (no other figure times it)
    got = read(
        "2022-06-01 10:06:44,668 INFO [15]\ttrain-logloss:0.00502646757155188\teval-logloss:0.51746790368885076",
        "2022-06-01 10:06:44,669 INFO [16]\ttrain-logloss:0.00399465675411890\teval-logloss:0.54199004011757967",
    )
    assert got.get_column("step").to_list() == [15, 16]


@pytest.mark.parametrize(
    "line",
    [
        # a round of something else: no word says boosting, no bracketed round opens a set's figures
        "Round 3 of the tournament: 5 sec elapsed",
        "round 7, 8 sec elapsed",
        # a bracketed number before a plain sentence, a rank tag's shape
        "[15] train loss 0.5 took 2 sec elapsed",
    ],
)
def test_other_rounds_are_no_position(line: str) -> None:
    got = statements(line)
    assert got["step"][0] is None


# Quoted from dmlc/xgboost issue 5888 (VigneshN1997, 2020-07-14): the XGBoost 1.1 CLI with tree_method=gpu_hist and no
# set to evaluate prints each round alone after its tracker's time of day.
_XGB_CLI_ROUNDS = ["[21:32:09] [0]", "[21:32:23] [1]", "[21:32:36] [2]", "[21:32:49] [3]"]


def test_a_round_alone_is_a_step_timed_by_its_time_of_day() -> None:
    got = read(*_XGB_CLI_ROUNDS)
    assert got.get_column("step").to_list() == [0, 1, 2, 3]
    # the seconds between the readings: 21:32:23 - 21:32:09 = 14 s, then 13 s and 13 s; the first has no reading before
    assert got.get_column("interval_s").to_list() == [None, 14.0, 13.0, 13.0]


def test_a_round_with_its_figures_after_its_time_of_day_is_a_step_too() -> None:
    # (a set's log loss is its loss; an RMSE is no loss the grammar names)
    got = read("[21:32:09] [0]\ttrain-logloss:0.51", "[21:32:23] [1]\ttrain-logloss:0.48")
    assert got.get_column("step").to_list() == [0, 1]
    assert got.get_column("loss").to_list() == pytest.approx([0.51, 0.48])
    assert got.get_column("interval_s").to_list() == [None, 14.0]


@pytest.mark.parametrize(
    "lines",
    [
        # XGBoost's other lines under its time of day (dmlc/xgboost issue 2165, 2017-04-10)
        ["[11:52:41] amalgamation/../src/tree/updater_prune.cc:74: tree pruning end, 1 roots, 28 extra nodes"],
        # a held-out set's figures first: the round's evaluation
        ["[21:32:09] [0]\ttest-error:0.11", "[21:32:23] [1]\ttest-error:0.10"],
        # a bracketed number alone with no time of day before it (a rank tag, a list's index)
        ["[0]", "[1]", "[2]"],
        # a time of day and a number in prose
        ["[21:32:09] [0] items queued", "[21:32:23] [1] items queued"],
    ],
)
def test_lines_that_are_no_round(lines: list[str]) -> None:
    assert read(*lines).height == 0


def test_lightgbms_native_logger_numbers_its_iteration_after_the_word_finished() -> None:
    # LightGBM's CLI in 2016 (lightgbm-org/LightGBM issue 39, 2016-10-27), its last three iterations: the
    # metric lines state the iteration and no time, the elapsed line both
    got = read(
        "[LightGBM] [Info] Iteration:998, training's auc: 1.000000",
        "[LightGBM] [Info] 2.432232 seconds elapsed, finished 998 iteration",
        "[LightGBM] [Info] cannot find more split with gain = -inf , current #leaves=16",
        "[LightGBM] [Info] Iteration:999, training's auc: 1.000000",
        "[LightGBM] [Info] 2.434642 seconds elapsed, finished 999 iteration",
        "[LightGBM] [Info] Iteration:1000, training's auc: 1.000000",
        "[LightGBM] [Info] 2.436162 seconds elapsed, finished 1000 iteration",
    )
    timed = got.filter(got["elapsed_s"].is_not_null())
    # one record an iteration, at the seconds since the start it states: 998 at 2.432232 s, 1000 at 2.436162 s
    assert timed.get_column("step").to_list() == [998, 999, 1000]
    assert timed.filter(step=1000)["elapsed_s"][0] == pytest.approx(2.436162)


def test_a_count_of_iterations_finished_in_prose_numbers_none() -> None:
    # near miss: the word before the count is no ``finished``; the count says how many, not which
    assert statements("ran 3 iterations in 2.5 seconds elapsed")["step"][0] is None


@pytest.mark.parametrize(
    ("total", "seconds"),
    [
        # CatBoost's verbose line (catboost/catboost's console output, a run quoted in its issue threads, 2019-2024):
        # 3 h 44 min 55 s = 3 * 3600 + 44 * 60 + 55 = 13,495 s
        ("3h 44m 55s", 13495.0),
        ("1m 2s", 62.0),  # 60 + 2
        ("45.4s", 45.4),
        ("57.6ms", 0.0576),  # 57.6 / 1000
    ],
)
def test_catboosts_total_in_unit_parts_is_the_time_since_the_start(total: str, seconds: float) -> None:
    line = f"996:\tlearn: 0.5575971\ttest: 0.5925376\tbest: 0.5925361 (994)\ttotal: {total}\tremaining: 40.6s"
    got = statements(line)
    assert got["step"][0] == "996"
    assert got["elapsed_s"][0] == pytest.approx(seconds)


def test_a_total_without_catboosts_remaining_is_no_time() -> None:
    # near miss: pytracking's ``Loss/total: 3.41968`` (a loss's part), and a total of examples
    assert statements("[train: 35, 50 / 1000] FPS: 4.0 (7.9)  ,  Loss/total: 3.41968")["elapsed_s"][0] is None
    assert statements("step 10 total: 512 examples")["elapsed_s"][0] is None
