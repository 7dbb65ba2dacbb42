"""The grammar on pytracking's LTR trainer, which the visual trackers built on it print (OSTrack, LightFC, RTS):
``[train: E, i / M] FPS: mean (last)  ,  DataTime: ...  ,  ForwardTime: ...  ,  TotalTime: T  ,  Loss/total: ...``.

The lines are quoted from public issue threads (read 2026-12-07): LiYunfengLYF/LightFC issue 2 (a run of
2024-01-31) and visionml/pytracking issue 359 (RTS, epoch 35 after a restart). Each expected value is worked out in
a comment."""

from __future__ import annotations

import pytest

from tests.support.formats_support import read

#: LightFC issue 2: its TotalTime is the epoch's seconds so far over its batches (a batch's mean time), after the
#: parts DataTime and ForwardTime.
LIGHTFC = (
    "[train: 1, 250 / 937] FPS: 0.9 (1.1)  ,  DataTime: 0.130 (0.010)  ,  ForwardTime: 0.914  ,  TotalTime: 1.054  ,"
    "  Loss/total: 47.37096  ,  Loss/giou: 0.99994  ,  Loss/l1: 0.22025  ,  Loss/location: 44.26983  ,  mean_IoU: "
    "0.00006"
)
#: pytracking issue 359: FPS (frames, a tracker's examples, per second) is the only figure of speed.
RTS = (
    "[train: 35, 50 / 1000] FPS: 4.0 (7.9)  ,  Loss/total: 3.41968  ,  Loss/segm: 1.38611  ,  Stats/acc: 0.81421  ,"
    "  Stats/clf_acc: 0.82711"
)


def test_total_time_after_its_parts_is_the_batch_time() -> None:
    got = read(LIGHTFC)
    assert got["step"].to_list() == [250]
    # 1 / 1.054 s = 0.948767 batches/s; FPS's first number, the epoch's mean, is examples/s as logged
    assert got["global_steps_per_s"][0] == pytest.approx(1 / 1.054)
    assert got["examples_per_s"][0] == pytest.approx(0.9)


def test_fps_alone_is_examples_per_second_and_no_step_rate() -> None:
    # a record of step 50 whose only speed is 4.0 frames/s: no batch size, so no steps/s
    got = read(RTS)
    assert got["step"].to_list() == [50]
    assert got["examples_per_s"][0] == pytest.approx(4.0)
    assert got["global_steps_per_s"][0] is None


@pytest.mark.parametrize(
    "line",
    [
        # a TotalTime with no part of the batch before it is a run's, no batch's (CNTK's range time is another rule)
        "[train: 1, 250 / 937] TotalTime: 3600  ,  Loss/total: 47.37096",
        # a renderer's frame rate, in lower case without a colon: no frames of training
        "[train: 1, 250 / 937] frame 100 fps 60  ,  Loss/total: 47.37096",
    ],
)
def test_near_misses_state_no_speed(line: str) -> None:
    # no speed read: with no logger's time before it either, the line is no record at all
    assert read(line).height == 0
