"""The grammar on the statements of vision, speech and generative-image trainers: each kind read from short real
lines (quoted from public issues, the source in each test's comment), with its near-misses refused. Each expected
value is worked out by hand in a comment."""

from __future__ import annotations

import pytest

from tests.support.formats_support import read


def test_a_counter_after_an_epoch_with_its_total_is_the_step_within_the_epoch() -> None:
    # DINO's MetricLogger (facebookresearch/dino issue 69, 2021-06-08): 'Epoch: [0/100]' is the epoch, [2240/2502]
    # the iteration; the first epoch shown is 0, so the steps are 0 x 2502 + 2240 = 2240 and 2250; 'time:' is the
    # seconds per iteration: 1 / 0.618063 = 1.61796
    got = read(
        "Epoch: [0/100]  [2240/2502]  eta: 0:02:44  loss: 5.385776 (7.546279)  lr: 0.000089 (0.000045)  "
        "wd: 0.040071 (0.040024)  time: 0.618063  data: 0.000170  max mem: 13871",
        "Epoch: [0/100]  [2250/2502]  eta: 0:02:38  loss: 5.450140 (7.536839)  lr: 0.000090 (0.000045)  "
        "wd: 0.040071 (0.040024)  time: 0.612473  data: 0.000167  max mem: 13871",
    )
    assert got["step"].to_list() == [2240, 2250]
    assert got["global_steps_per_s"][0] == pytest.approx(1 / 0.618063)


def test_a_bare_counter_after_an_epoch_counter_counts_within_the_epoch() -> None:
    # MONAI's SwinUNETR trainer (Project-MONAI/research-contributions issue 306, 2023-09-19): 'Epoch 31/300' then
    # the batch '200/1000'; the batch goes back when the epoch advances, so it counts within the epoch; the first
    # epoch shown is 31 (not 1), so epochs count from 0: 31 x 1000 + 200 = 31200, 31400, then 32 x 1000 + 0 = 32000
    got = read(
        "Epoch 31/300 200/1000 loss: 0.2830 time 1.49s",
        "Epoch 31/300 400/1000 loss: 0.2741 time 1.32s",
        "Epoch 32/300 0/1000 loss: 0.2807 time 3.87s",
    )
    assert got["step"].to_list() == [31200, 31400, 32000]


def test_an_epoch_counter_alone_is_still_the_lines_counter() -> None:
    # near-miss: with no second counter, the epoch's own N/M reads as before (a counter): step 3
    got = read("Epoch 3/10 loss: 0.5 time 12.0s")
    assert got["step"].to_list() == [3]
