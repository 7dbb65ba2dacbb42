"""A batch's time under its abbreviated key with the unit in parentheses: ``btime(ms)``.

VISSL's log hook prints ``iter: N; ...; btime(ms): T`` (facebookresearch/vissl ``vissl/hooks/log_hooks.py``; the
line below is a run's quoted in facebookresearch/vissl issue 480, 2021-12-02): the batch's milliseconds."""

from __future__ import annotations

import pytest

from tests.support.formats_support import parse

VISSL = (
    "INFO 2021-12-02 18:52:20,806 log_hooks.py: 277: Rank: 0; [ep: 0] iter: 57; lr: 0.71785; loss: 2.94718; "
    "btime(ms): 192; eta: 0:00:08; peak_mem(M): 4176;"
)


def test_btime_in_ms_is_the_steps_time() -> None:
    steps = parse([VISSL]).steps
    assert steps["step"].to_list() == [57]
    # 192 ms a batch: 1000 / 192 = 5.2083 steps/s
    assert steps["global_steps_per_s"].to_list() == pytest.approx([1000 / 192])
    assert steps["loss"].to_list() == pytest.approx([2.94718])


@pytest.mark.parametrize(
    "line",
    [
        # a memory figure with its unit in parentheses is no time
        "iter: 57; loss: 2.94718; peak_mem(M): 4176;",
        # a word merely ending in "btime" is not the key
        "iter: 57; loss: 2.94718; subtime(ms): 192;",
    ],
)
def test_near_misses_are_no_step_times(line: str) -> None:
    assert parse([line]).steps.height == 0
