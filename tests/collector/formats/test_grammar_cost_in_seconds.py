"""What a step report says it cost in seconds (``Cost 17.76s``) is a time that says no unit of work; a ``cost`` with no
unit is a loss. And a level in brackets with a colon after it (``[INFO]: ``) is the envelope's."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from tests.support.formats_support import parse

# Quoted from ShiqiYu/OpenGait issue 89 (HiAleeYang, 2022-10-12): OpenGait's msg_manager line every log_iter iterations.
OPENGAIT = (
    "[2022-10-12 12:41:33] [INFO]: Iteration 32700, Cost 17.76s, triplet_loss=0.1912, triplet_hard_loss=0.9691,"
    " triplet_loss_num=1641.7500, triplet_mean_dist=6.7157"
)


def test_a_cost_in_seconds_is_a_bare_time() -> None:
    steps = parse([OPENGAIT]).steps
    assert steps.get_column("step").to_list() == [32700]
    # nothing says what the 17.76 s cover: one step's time, as any bare time (1 / 17.76 = 0.0563063)
    assert steps.get_column("global_steps_per_s").to_list() == pytest.approx([1 / 17.76])
    assert steps.get_column("loss").to_list() == pytest.approx([0.1912])
    assert steps.get_column("timestamp").to_list() == [datetime(2022, 10, 12, 12, 41, 33, tzinfo=UTC)]


def test_opengait_reports_over_the_logger_clock_are_intervals() -> None:
    # three reports 100 iterations and 18 s apart by the logger's clock (printed to the second), each costing 17.76 s:
    # the cost is the interval since the previous report, no step's time (the analysis makes 100 / 17.76 of it)
    second = OPENGAIT.replace("12:41:33", "12:41:51").replace("Iteration 32700", "Iteration 32800")
    third = OPENGAIT.replace("12:41:33", "12:42:09").replace("Iteration 32700", "Iteration 32900")
    steps = parse([OPENGAIT, second, third]).steps
    assert steps.get_column("interval_s").to_list() == pytest.approx([17.76, 17.76, 17.76])
    assert steps.get_column("global_steps_per_s").is_null().all()


@pytest.mark.parametrize(
    "line",
    [
        # the TensorFlow tutorials' loss: "cost" with no unit
        "Epoch: 0001 cost= 1.234567890",
        "Iteration 32700, Cost 17.76, triplet_loss=0.1912",
        # a cost in money, not seconds
        "Iteration 32700, Cost $17.76, triplet_loss=0.1912",
    ],
)
def test_a_cost_without_seconds_is_no_time(line: str) -> None:
    assert parse([line]).steps.height == 0
