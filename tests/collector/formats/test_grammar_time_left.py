"""A bare time beside the time still to go is the run's clock, not a step's time.

ParlAI's training loop reports ``[ time:Ts total_exs:N epochs:E time_left:Ts ] {..., 'num_updates': U, ...}``; the
lines below are quoted from facebookresearch/ParlAI PR 1895 (2019-08-06). mmcv's logger, whose ``time`` is the
iteration's seconds beside an ``eta``, is the near-miss (open-mmlab/mmdetection issue 4090, a run of 2020-11-11)."""

from __future__ import annotations

import pytest

from tests.support.formats_support import read

PARLAI = (
    "[ time:2.0s total_exs:3616 epochs:0.4 time_left:24.0s ] {'exs': 3616, 'lr': 1, 'num_updates': 113, 'gnorm': "
    "1.328, 'clip': 1.0, 'loss': 122.7, 'token_acc': 0.5689, 'nll_loss': 1.109, 'ppl': 3.031}",
    "[ time:4.0s total_exs:7360 epochs:0.82 time_left:21.0s ] {'exs': 3744, 'lr': 1, 'num_updates': 230, 'gnorm': "
    "1.19, 'clip': 1.0, 'loss': 107.5, 'token_acc': 0.6095, 'nll_loss': 0.9184, 'ppl': 2.505}",
)


def test_time_beside_time_left_is_the_clock_since_the_start() -> None:
    got = read(*PARLAI)
    assert got["step"].to_list() == [113, 230]
    # 2.0 s and 4.0 s since the start, not a step of 2 s (0.5 steps/s); no rate is stated on either line
    assert got["elapsed_s"].to_list() == pytest.approx([2.0, 4.0])
    assert got["global_steps_per_s"].to_list() == [None, None]


def test_time_beside_an_eta_stays_the_iterations_time() -> None:
    # mmcv: ``time: 0.387`` is the iteration's seconds, 1 / 0.387 = 2.583979 steps/s, whatever its ``eta`` says
    got = read(
        "2020-11-11 18:20:40,841 - mmdet - INFO - Epoch [1][1050/29317]\tlr: 2.000e-02, eta: 1 day, 18:57:37, time: "
        "0.387, data_time: 0.008, memory: 3946, loss_rpn_cls: 0.1105, loss_rpn_bbox: 0.0975, loss_cls: 0.4957, acc: "
        "91.4482, loss_bbox: 0.2994, loss: 1.0031"
    )
    assert got["global_steps_per_s"][0] == pytest.approx(1 / 0.387)
    assert got["elapsed_s"][0] is None
