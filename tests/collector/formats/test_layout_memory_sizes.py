"""A learned layout whose step line states the memory it holds in bytes (``GB used``) is a training step's, not a
download's bar; a bar that counts bytes is still refused, whatever memory it also states."""

from __future__ import annotations

import polars as pl
import pytest

from tests.support.formats_support import frame
from tierscope.collector.formats import ParseContext, parse_lines
from tierscope.collector.formats.layout import LearnedLayout

# Quoted from tinygrad/tinygrad PR 13803 (chenyuxyz, 2025-12-22): the MLPerf llama3 8B trainer, DP=8, one line a step:
# the step, its seconds, the loss, the learning rate, the device memory in use, the FLOPS.
TINYGRAD = [
    "    3 7.34 s run, 11.8750 loss, 0.000000000002 LR, 1454.57 GB used, 236258.78 GFLOPS",
    "    4 4.32 s run, 11.8750 loss, 0.000000000002 LR, 1454.57 GB used, 401488.40 GFLOPS",
    "    5 4.36 s run, 11.9375 loss, 0.000000000003 LR, 1454.57 GB used, 398116.13 GFLOPS",
    "    6 4.32 s run, 11.8750 loss, 0.000000000003 LR, 1454.57 GB used, 401878.60 GFLOPS",
    "    7 4.34 s run, 11.8750 loss, 0.000000000004 LR, 1454.57 GB used, 399822.57 GFLOPS",
]


def read(lines: list[str]) -> pl.DataFrame:
    steps = parse_lines(frame(lines), context=ParseContext()).steps
    return steps.filter(pl.col("format") == LearnedLayout.name) if steps.width else steps


def test_a_step_line_stating_memory_used_is_read() -> None:
    steps = read(TINYGRAD)
    assert steps.get_column("step").to_list() == [3, 4, 5, 6, 7]
    # each line's time is its one step's: 1 / 7.34 = 0.136240, 1 / 4.32 = 0.231481, 1 / 4.36 = 0.229358
    assert steps.get_column("global_steps_per_s").to_list()[:3] == pytest.approx([1 / 7.34, 1 / 4.32, 1 / 4.36])


@pytest.mark.parametrize(
    "lines",
    [
        # a download's bar counting bytes, with the memory it uses beside: the count and the speed are bytes moved
        [f"{1024 * (i + 1)}/8192 MB 2.{i} MB/s, 30.1 GB used" for i in range(6)],
        # an extraction's bar whose size after the number is no memory's
        [f"{i + 1} 1.{i} s, {100 * (i + 1)} GB done" for i in range(6)],
    ],
)
def test_bytes_counted_beside_a_memory_size_are_still_refused(lines: list[str]) -> None:
    assert read(lines).height == 0
