"""Space-separated ``key value`` pairs whose key is a unit (``steps/sec 5.0``, ``examples/sec 1234``): the number
after the unit is the measure, and the number before it is the previous key's (``loss 1.0000 steps/sec 5.0``: the
loss is 1.0, the rate 5.0). The lines follow print formats of public training scripts (``... time %.1fs
examples/sec %.0f``; ``step %d, loss=%.2f(%.1f examples/sec %.3f sec/batch``); the values are worked out by hand
in the comments."""

from __future__ import annotations

import pytest

from tests.support.formats_support import parse


def test_a_unit_after_a_metrics_value_takes_the_number_after_it() -> None:
    # ``loss 1.0000 steps/sec 5.0`` twice: 5.0 steps/s each, never the loss' 1.0 (a reader that took the number
    # before the unit reported a fifth of the speed)
    lines = ["step 10 loss 1.0000 steps/sec 5.0", "step 20 loss 0.5000 steps/sec 5.0"]
    steps = parse(lines).steps
    assert steps.get_column("step").to_list() == [10, 20]
    assert steps.get_column("global_steps_per_s").to_list() == [5.0, 5.0]
    assert steps.get_column("loss").to_list() == [1.0, 0.5]


def test_a_unit_after_a_scoped_metric_or_a_learning_rate_takes_the_number_after_it() -> None:
    # ``train_loss 1.0000 it/s 5.0``: 5.0 steps/s; ``lr 0.1 examples/sec 50.0``: 50 examples/s, not 0.1
    assert parse(["step 10 train_loss 1.0000 it/s 5.0"]).steps.get_column("global_steps_per_s").to_list() == [5.0]
    lines = ["step 10 loss 2.3 lr 0.1 examples/sec 50.0 time 0.5s", "step 20 loss 2.2 lr 0.1 examples/sec 52.0"]
    assert parse(lines).steps.get_column("examples_per_s").to_list()[:1] == [50.0]


def test_a_number_before_its_unit_is_still_the_measure() -> None:
    # ``5.0 steps/sec`` after the loss' pair: 5.0 steps/s; ``loss=0.52(1234.5 examples/sec 0.104 sec/batch``:
    # 1234.5 examples/s and 1 / 0.104 = 9.615... steps/s, the 0.104 no examples/s
    assert parse(["step 10 loss 1.0000 5.0 steps/sec"]).steps.get_column("global_steps_per_s").to_list() == [5.0]
    steps = parse(["step 100, loss=0.52(1234.5 examples/sec 0.104 sec/batch"]).steps
    assert steps.get_column("examples_per_s").to_list() == [1234.5]
    assert steps.get_column("global_steps_per_s").to_list() == [pytest.approx(1 / 0.104)]


@pytest.mark.parametrize(
    ("line", "examples_per_s"),
    [
        # the pair ends the line, or the next pair follows (``lr 0.1``, ``at 15:23:01``)
        ("step 10 loss 2.3 images/sec 1234 lr 0.1 sec/step 0.5", 1234.0),
        ("step 10 loss 2.3 samples/sec 1234, sec/step 0.5", 1234.0),
        # a time of day is no rate, nor the number of the unit after it
        ("step 10 loss 2.3 images/sec 15:23:01 sec/step 0.5", None),
        ("step 10 loss 2.3 images/sec 0.5 sec/step", None),
    ],
)
def test_a_units_pair_ends_where_the_next_pair_or_the_line_does(line: str, examples_per_s: float | None) -> None:
    assert parse([line]).steps.get_column("examples_per_s").to_list() == [examples_per_s]


@pytest.mark.parametrize(
    ("line", "column", "value"),
    [
        # the position's number is the position's: 5.0 steps/s and 1234 examples/s, never 10 (a rate that grew
        # with the step) nor a batch size of 32
        ("Iter 10 steps/sec 5.0", "global_steps_per_s", 5.0),
        ("step: 10 steps/sec 5.0 loss 2", "global_steps_per_s", 5.0),
        ("step 10 examples/sec 1234", "examples_per_s", 1234.0),
        ("step 10 batch 32 images/sec 100.5", "examples_per_s", 100.5),
    ],
)
def test_a_unit_after_a_positions_number_takes_the_number_after_it(line: str, column: str, value: float) -> None:
    assert parse([line]).steps.get_column(column).to_list() == [value]
