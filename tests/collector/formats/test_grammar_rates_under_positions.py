"""A report of two lines, its position on one and its rate on the next: Chainer's ProgressBar redraws ``     91300
iter, 7 epoch / 20 epochs`` and then ``   0.71428 iters/sec. Estimated time to finish: ...``. The rate line, stating no
position, takes the position of the line right before it where that line names one and measures nothing."""

from __future__ import annotations

import pytest

from tests.support.formats_support import parse

# Quoted from espnet/espnet PR 1717 (sw005320, 2020-03-23): an ESPnet1 run's Chainer ProgressBar, as pasted.
ESPNET1 = [
    "     total [#################.................................] 35.54%",
    "this epoch [#####.............................................] 10.84%",
    "     91300 iter, 7 epoch / 20 epochs",
    "   0.71428 iters/sec. Estimated time to finish: 2 days, 16:23:34.613215.",
]
# A Chainer tutorial notebook's output of train_mnist with ProgressBar (search corpus id 30505976343): the first
# report's rate is ``inf`` (no span yet), no figure.
TUTORIAL = [
    "         total [..................................................]  0.64%",
    "    this epoch [######............................................] 12.80%",
    "           100 iter, 0 epoch / 20 epochs",
    "           inf iters/sec. Estimated time to finish: 0:00:00.",
    "         total [..................................................]  1.28%",
    "    this epoch [############......................................] 25.60%",
    "           200 iter, 0 epoch / 20 epochs",
    "        125.61 iters/sec. Estimated time to finish: 0:02:02.799182.",
]


def test_a_progress_bar_s_rate_takes_the_iteration_above_it() -> None:
    steps = parse(ESPNET1).steps
    assert steps.get_column("step").to_list() == [91300]
    assert steps.get_column("global_steps_per_s").to_list() == pytest.approx([0.71428])


def test_an_infinite_first_rate_is_no_figure() -> None:
    parsed = parse(TUTORIAL)
    assert parsed.steps.get_column("step").to_list() == [200]
    assert parsed.steps.get_column("global_steps_per_s").to_list() == pytest.approx([125.61])


@pytest.mark.parametrize(
    "lines",
    [
        # the position line alone measures nothing
        ["     91300 iter, 7 epoch / 20 epochs"],
        # a rate under a line of other work
        ["Evaluating step 100", "   12.5 iters/sec"],
        # a rate under a summary of the run, and a time (no rate said) under a position
        ["Final results at step 1000", "   12.5 iters/sec"],
        ["step 1000", "  time per step: 0.08s"],
        # a rate under prose with numbers and no position
        ["We ran 20 epochs on 4 GPUs", "   0.71428 iters/sec. Estimated time to finish: 0:00:10."],
    ],
)
def test_rates_with_no_position_above_them(lines: list[str]) -> None:
    assert parse(lines).steps.height == 0
