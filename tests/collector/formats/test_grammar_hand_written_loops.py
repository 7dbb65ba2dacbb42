"""The grammar on the prints of hand-written training loops: a time named only ``time`` that is the run's clock.

Every line is quoted from a public log (the source in each test's comment); hand calculations in the comments.
"""

from __future__ import annotations

import pytest

from tests.support.formats_support import read

# carpedm20/DCGAN-tensorflow issue 276 (SHANKARMB, 2018-04-03): 4 batches an epoch, ``time`` printed as
# ``time.time() - start_time``
DCGAN_ACROSS_EPOCHS = (
    "Epoch: [ 2/200] [   0/   4] time: 101.3380, d_loss: 66.68623352, g_loss: 0.00000000",
    "Epoch: [ 2/200] [   1/   4] time: 111.8188, d_loss: 76.59110260, g_loss: 0.00000000",
    "Epoch: [ 2/200] [   2/   4] time: 122.4962, d_loss: 61.84632874, g_loss: 0.00000000",
    "Epoch: [ 2/200] [   3/   4] time: 133.3623, d_loss: 92.15061951, g_loss: 0.00000000",
    "Epoch: [ 3/200] [   0/   4] time: 143.7579, d_loss: 77.85248566, g_loss: 0.00000000",
)

# carpedm20/DCGAN-tensorflow issue 175 (BLCKPSTV, 2017-05-22): the older print, no epoch total, one epoch's lines
DCGAN_ONE_EPOCH = (
    "Epoch: [14] [ 398/1093] time: 18566.6816, d_loss: 1.38566971, g_loss: 0.67304140",
    "Epoch: [14] [ 399/1093] time: 18567.8129, d_loss: 1.37350225, g_loss: 0.67038035",
    "Epoch: [14] [ 400/1093] time: 18568.9801, d_loss: 1.39440918, g_loss: 0.64606953",
    "Epoch: [14] [ 401/1093] time: 18570.1211, d_loss: 1.36048722, g_loss: 0.66855788",
)

# MouseLand/cellpose issue 450 (JunMa11, 2022-02-22): ``Time`` is the training's time so far, printed every
# 5 then 10 epochs
CELLPOSE = (
    "2022-02-18 00:38:30,706 [INFO] Epoch 5, Time 4981.4s, Loss 0.5731, LR 0.1111",
    "2022-02-18 01:46:44,126 [INFO] Epoch 10, Time 9074.8s, Loss 0.5035, LR 0.2000",
    "2022-02-18 07:02:39,069 [INFO] Epoch 20, Time 28029.8s, Loss 0.4754, LR 0.2000",
    "2022-02-18 09:17:43,068 [INFO] Epoch 30, Time 36133.8s, Loss 0.4614, LR 0.2000",
)


def test_a_time_that_grows_from_step_zero_with_the_steps_is_the_runs_clock() -> None:
    # Steps 2 x 4 + 0 = 8 .. 3 x 4 + 0 = 12. Since step 0 the first reading gives 101.3380 / 8 = 12.67 s a step;
    # the readings grow by (143.7579 - 101.3380) / (12 - 8) = 10.60 s a step: within a factor of two, a clock.
    # Read as step times they would make 1 / 101.3 = 0.0099 steps/s of a loop doing 1 / 10.6 = 0.094.
    got = read(*DCGAN_ACROSS_EPOCHS)
    assert got["step"].to_list() == [8, 9, 10, 11, 12]
    assert got["elapsed_s"].to_list() == pytest.approx([101.3380, 111.8188, 122.4962, 133.3623, 143.7579])
    assert got["global_steps_per_s"].to_list() == [None] * 5


def test_one_epochs_clock_is_told_by_the_steps_its_counter_counts_over_the_run() -> None:
    # Epoch 14 of 1093 batches, batch 398: step 14 x 1093 + 398 = 15700 of the run (epochs from 0), so
    # 18566.6816 / 15700 = 1.183 s a step since the start; the readings grow by (18570.1211 - 18566.6816) / 3 =
    # 1.147 s a step: a clock (0.8722 steps/s), not steps of 18567 s each.
    got = read(*DCGAN_ONE_EPOCH)
    assert got["elapsed_s"].to_list() == pytest.approx([18566.6816, 18567.8129, 18568.9801, 18570.1211])
    assert got["global_steps_per_s"].to_list() == [None] * 4


def test_an_epoch_records_clock_gives_each_epoch_the_time_since_the_previous_reading() -> None:
    # 4981.4 s / 5 epochs = 996 s an epoch since the start; growth (36133.8 - 4981.4) / 25 = 1246 s an epoch:
    # a clock. Epoch 10's record covers 9074.8 - 4981.4 = 4093.4 s (the logger's clock agrees: 00:38:30.706 to
    # 01:46:44.126 is 4093.42 s); epoch 20's 28029.8 - 9074.8 = 18955.0 s; the first has no earlier reading.
    got = read(*CELLPOSE)
    assert got["elapsed_s"].to_list() == pytest.approx([4981.4, 9074.8, 28029.8, 36133.8])
    assert got["interval_s"].to_list()[0] is None
    assert got["interval_s"].to_list()[1:] == pytest.approx([4093.4, 18955.0, 8104.0])


def test_a_step_time_that_drifts_up_stays_a_step_time() -> None:
    # WenmuZhou/PSENet.pytorch issue 15 (wuxiaolianggit, 2019-07-19): ``time`` rises at every report
    # (9.0540 .. 13.2902) but since step 0 the first reading gives 9.0540 / 270 = 0.034 s a step against a growth of
    # (13.2902 - 9.0540) / 40 = 0.106 s a step: more than a factor of two apart, no clock.
    lines = [
        f"2019-07-19 02:41:{s} INFO      train.py: [0/600], [{n}/2174], step: {n}, {r} samples/sec, "
        f"batch_loss: 1.0000, batch_loss_c: 1.0000, batch_loss_s: 1.0000, time:{t}, lr:0.0001"
        for s, n, r, t in (
            ("13", 270, "4.418", "9.0540"),
            ("23", 280, "4.098", "9.7616"),
            ("33", 290, "3.949", "10.1288"),
            ("44", 300, "3.925", "10.1909"),
            ("57", 310, "3.010", "13.2902"),
        )
    ]
    got = read(*lines)
    assert got["elapsed_s"].to_list() == [None] * 5
    # ... and each reading is what the logger's clock advanced over the report's 10 steps (02:41:13 -> :23 is 10 s
    # against 9.7616, :23 -> :33 10 s against 10.1288, :33 -> :44 11 s against 10.1909, :44 -> :57 13 s against
    # 13.2902), nearer that than the 1.0 to 1.3 s a step: the seconds since the previous report (10 steps in 9.76 s),
    # no step time of 1 / 9.0540
    assert got["interval_s"].to_list() == pytest.approx([9.0540, 9.7616, 10.1288, 10.1909, 13.2902])
    assert got["global_steps_per_s"].to_list() == [None] * 5
    # SeanNaren/deepspeech.pytorch issue 127 (Sunnydreamrain): a batch time that repeats (0.538, 0.538) is no
    # clock, which never reads the same twice
    got = read(
        "Epoch: [11][5/48]\tTime 0.538 (1.200)\tData 0.002 (0.004)\tLoss 4.2020 (36.8092)\t",
        "Epoch: [11][6/48]\tTime 0.538 (1.198)\tData 0.002 (0.004)\tLoss 10.1045 (36.7536)\t",
        "Epoch: [11][7/48]\tTime 0.663 (1.197)\tData 0.002 (0.004)\tLoss 10.0306 (36.6980)\t",
        "Epoch: [11][8/48]\tTime 0.664 (1.196)\tData 0.002 (0.004)\tLoss 12.3729 (36.6476)\t",
    )
    assert got["elapsed_s"].to_list() == [None] * 4
    assert got["global_steps_per_s"][0] == pytest.approx(1 / 0.538)


def test_three_readings_are_too_few_to_tell_a_clock() -> None:
    # DCGAN_ONE_EPOCH's first three lines: two rises may be a step time drifting as well as a clock
    got = read(*DCGAN_ONE_EPOCH[:3])
    assert got["elapsed_s"].to_list() == [None] * 3
    assert got["global_steps_per_s"][0] == pytest.approx(1 / 18566.6816)
