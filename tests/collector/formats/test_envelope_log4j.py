"""log4j's layout as Apache Spark sets it (``yy/MM/dd HH:mm:ss LEVEL Class: ``) is an envelope: a JVM relays the
lines of the Python process it runs through it, their own logger's header inside. The lines are quoted from a real
log (source and date beside them); each expected value is worked out by hand."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from tests.collector.formats.test_envelopes import read as envelope
from tests.support.formats_support import read

# XGBoost4J-Spark's Rabit tracker relaying its Python logger through log4j (github.com/dmlc/xgboost/issues/7962,
# 2022-06-01): rounds 15 and 16 of the watchlist, the tab after the round a run of spaces in the copy
_RELAYED = [
    "22/06/01 10:06:44 ERROR RabitTracker$TrackerProcessLogger: 2022-06-01 10:06:44,668 INFO [15]    "
    "train-logloss:0.00502646757155188  eval-logloss:0.51746790368885076",
    "22/06/01 10:06:44 ERROR RabitTracker$TrackerProcessLogger: 2022-06-01 10:06:44,669 INFO [16]    "
    "train-logloss:0.00399465675411890  eval-logloss:0.54199004011757967",
]


def test_the_relay_and_the_logger_inside_it_are_both_stripped() -> None:
    got = envelope(_RELAYED[0])
    assert got["line"] == "[15]    train-logloss:0.00502646757155188  eval-logloss:0.51746790368885076"
    assert got["envelope"] == "log4j+python-logging"
    # the Python logger's time (to the millisecond) wins over the relay's (to the second)
    assert got["timestamp"] == datetime(2022, 6, 1, 10, 6, 44, 668000, tzinfo=UTC)
    # the inner logger's level is the line's; the relay's ERROR is how it logs a child's output
    assert got["severity"] == "INFO"


def test_a_spark_line_alone_takes_the_relay_time() -> None:
    # Spark's own line (the layout of its conf/log4j.properties.template), no logger inside: 22/06/01 is 2022-06-01
    got = envelope("22/06/01 10:06:40 INFO SparkContext: Running Spark version 3.0.1")
    assert got["line"] == "Running Spark version 3.0.1"
    assert got["timestamp"] == datetime(2022, 6, 1, 10, 6, 40, tzinfo=UTC)
    assert got["severity"] == "INFO"


def test_relayed_boosting_rounds_are_records_timed_by_the_inner_logger() -> None:
    got = read(*_RELAYED)
    # rounds 15 and 16, 1 ms apart by the inner logger's time
    assert got.get_column("step").to_list() == [15, 16]
    assert got.get_column("loss").to_list() == pytest.approx([0.00502646757155188, 0.00399465675411890])


@pytest.mark.parametrize(
    "line",
    [
        # a date in a message with no level and class after it
        "22/06/01 10:06:44 was when the job began: step 3",
        # a class with no colon after it is no log4j layout
        "22/06/01 10:06:44 INFO step 3 loss 0.5",
    ],
)
def test_near_misses_keep_their_text(line: str) -> None:
    got = envelope(line)
    assert got["line"] == line


def test_a_round_with_one_space_after_it_is_no_boosting_round() -> None:
    # the tab (or a paste's run of spaces) after the round is XGBoost's; ``[15] train-x:1`` with one space is a
    # rank tag's shape before a message: no position read from it
    from tierscope.collector.formats.statements import statements

    assert statements("[15] train-logloss:0.005")["step"][0] is None
