"""The grammar reads a number whole or not at all: thousands separators, decimal commas, broken rates."""

from __future__ import annotations

import pytest

from tests.support.formats_support import read_lines


@pytest.mark.parametrize(
    ("line", "step", "rate"),
    [
        ("Step 12,500/100,000 | loss 2.1 | 3.2 it/s", 12500, 3.2),  # thousands in groups of three
        ("step 2,300, 2.5 it/s", 2300, 2.5),
        ("step 2900: 1_000 steps/s", 2900, 1000.0),  # Python's digit grouping
        ("iteration 7/ 10 | samples/s: 1,234.5 | elapsed time per iteration (ms): 250.0", 7, 4.0),  # 1000 / 250
    ],
)
def test_a_grouped_number_is_read_whole(line: str, step: int, rate: float) -> None:
    got = read_lines(line).steps
    assert got["step"].to_list() == [step]
    assert got["global_steps_per_s"].to_list() == [rate]


def test_three_grouped_steps_are_three_records() -> None:
    lines = [f"Step 12,{n}00/100,000 | loss 2.1 | 3.2 it/s" for n in (5, 6, 7)]
    assert read_lines(*lines).steps["step"].to_list() == [12500, 12600, 12700]


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("step 2200, 2,5 it/s", "'2,5' is ambiguous"),  # a decimal comma or a list: no figure is safe
        ("step 2500, 0x10 it/s", "'0x10' is not a number"),
        ("step 700, 0 it/s", "'0' is not a finite number > 0"),  # a rate of 0 would cost infinity
        ("step 800, -2.5 it/s", "'-2.5' is not a finite number > 0"),
        ("step 200, nan it/s", "'nan' is not a finite number > 0"),
        ("step 300, NAN it/s", "'NAN' is not a finite number > 0"),
        ("step 600, Infinity it/s", "'Infinity' is not a finite number > 0"),
        ("step 3100, +inf steps/s", "'+inf' is not a finite number > 0"),
        ("step 1400, time: -1.0, loss 2.1", "'-1.0' is not a finite time > 0"),
    ],
)
def test_a_broken_figure_is_a_reject_with_its_reason(line: str, reason: str) -> None:
    got = read_lines(line)
    assert got.steps.height == 0
    assert got.rejects["source_offset"].to_list() == [1]
    assert reason in got.rejects["reason"][0]


@pytest.mark.parametrize(
    "line",
    [
        "Estimated time per step: 0.5 seconds (warmup)",  # a time per step, no position: 0 of 0.5 is none
        "val loss 2.1 step 100 2.0 it/s",  # an evaluation's statement
        "eval: step 100 | 2.0 it/s",
        "step 12,5000, 2.0 it/s",  # neither 12 nor 125000: no position
    ],
)
def test_no_position_or_an_evaluation_is_no_record(line: str) -> None:
    got = read_lines(line)
    assert got.steps.height == 0 and got.rejects.height == 0
