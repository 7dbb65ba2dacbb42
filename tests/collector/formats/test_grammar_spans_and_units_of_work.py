"""The grammar's statements that cover more than one step or count in other units: a range of steps as the
position, a time over N steps, a step time written as a clock, a position in thousands of examples, a bare time
that the file's clock shows is the interval since the previous report, and an epoch-level log; with the
near-misses of each refused.

Every line is written for the test in the shape of the kind it stands for (the kinds are those of CNTK's SGD,
ESPnet2's trainer, Marian, StyleGAN, llama.cpp's finetune and Lasagne's examples); the figures are made up and
each expected value is worked out by hand in a comment."""

from __future__ import annotations

import pytest

from tests.support.formats_support import read, read_lines
from tierscope.collector.formats.grammar import explain_line


@pytest.mark.parametrize(
    ("line", "step", "rate"),
    [
        # a range of 10 minibatches (11..20) whose bare time covers the range: step 20, 10 / 0.02 s = 500 steps/s
        (
            "Epoch[3 of 10]-Minibatch[  11-  20, 5.00%]: ce = 2.0 * 100; time = 0.0200s; samplesPerSecond = 5000.0",
            20,
            500.0,
        ),
        # a range glued to its word (101..200 batches); train_time is one batch's whole time (iter_time is the
        # wait for data, a part of it): step 200, 1 / 0.010 s = 100 steps/s, not 100 x 100
        ("2epoch:train:101-200batch: iter_time=0.002, forward_time=0.004, loss=1.5, train_time=0.010", 200, 100.0),
        # a bare time over the 50 iterations the line names: 50 / 40 s = 1.25 steps/s
        ("Train step 300, Loss: 0.5, Elapsed time: 40.0s(50 iters) Margin: 0.4", 300, 1.25),
        # ... said with "for": 100 / 12.5 s = 8 steps/s
        ("step 200 | loss 0.4 | time 12.5s for 100 steps", 200, 8.0),
        # a step time written as a clock: 00:01:40 = 100 s, 1 / 100 = 0.01 steps/s; the eta is no measure
        ("train_opt_callback: iter=    12 sample=13/500 loss=2.5 dt=00:01:40 eta=01:00:00 |---->", 12, 0.01),
        # ... with hours and fractions: 1:02:03.5 = 3600 + 120 + 3.5 = 3723.5 s
        ("iter 7 loss 1.0 dt=1:02:03.5", 7, 1 / 3723.5),
        # a message's leading counter and a bare seconds statement: iteration 4 in 800 s, 1 / 800 = 0.00125 steps/s
        ("4: 285.33, 289.84 avg, 0.000100 rate, 800.0 seconds, 256 images", 4, 0.00125),
    ],
)
def test_a_time_covers_what_its_statement_covers(line: str, step: int, rate: float) -> None:
    got = read(line)
    assert got.height == 1, got
    assert got["step"][0] == step
    assert got["global_steps_per_s"][0] == pytest.approx(rate)


def test_a_position_in_thousands_of_examples_is_a_step_over_the_stated_batch() -> None:
    got = read("tick 2     kimg 12.8     lod 0.00  minibatch 64   time 20m 00s   sec/tick 600.0  sec/kimg 100.00")
    assert got.height == 1
    # 12.8 kimg = 12800 examples / 64 per step = step 200
    assert got["step"][0] == 200
    # sec/kimg 100 -> 1000 / 100 = 10 examples/s; over the batch of 64: 10 / 64 = 0.15625 steps/s
    assert got["examples_per_s"][0] == pytest.approx(10.0)
    assert got["global_steps_per_s"][0] == pytest.approx(0.15625)
    # sec/tick is the report's interval; the bare "time 58s" of the run's clock is no step time beside it
    assert got["interval_s"][0] == pytest.approx(600.0)
    first = read("tick 0     kimg 0.6      lod 0.00  minibatch 64   time 58s       sec/tick 57.0   sec/kimg 95.00")
    # 600 / 64 = 9.375 -> step 9; 1000 / 95 / 64 = 0.16447 steps/s (not 1 / 58 = 0.017)
    assert first["step"][0] == 9
    assert first["global_steps_per_s"][0] == pytest.approx(1000 / 95 / 64)


def test_a_bare_time_the_clock_shows_is_the_report_interval() -> None:
    # reports every 1000 updates whose "Time" is what the clock advanced since the previous report (100 s):
    # the time since the previous report, not one update's (which would be 1 / 100 = 0.01 steps/s)
    got = read(
        "[2024-01-01 10:00:00] Ep. 1 : Up. 1000 : Sen. 20,000 : Cost 3.00 : Time 100.00s : 500.00 words/s",
        "[2024-01-01 10:01:40] Ep. 1 : Up. 2000 : Sen. 40,000 : Cost 2.90 : Time 100.00s : 500.00 words/s",
        "[2024-01-01 10:03:20] Ep. 1 : Up. 3000 : Sen. 60,000 : Cost 2.80 : Time 100.00s : 500.00 words/s",
    )
    assert got["step"].to_list() == [1000, 2000, 3000]
    assert got["interval_s"].to_list() == [100.0, 100.0, 100.0]
    # no stated step rate: the analysis divides 1000 updates by 100 s = 10 steps/s
    assert got["global_steps_per_s"].null_count() == 3
    # a bare time that is not the clock's interval stays the step's: 1 / 0.5 s = 2 steps/s
    got = read(
        "[2024-01-01 10:00:00] step 100 loss 2.0 time 0.50s",
        "[2024-01-01 10:01:40] step 200 loss 1.9 time 0.50s",
    )
    assert got["global_steps_per_s"].to_list() == [2.0, 2.0]
    assert got["interval_s"].null_count() == 2


def test_an_epoch_level_log_has_its_epochs_as_records() -> None:
    got = read(
        "Starting training...",
        "Epoch 1 of 10 took 50.000s",
        "  training loss:\t\t2.000000",
        "  validation loss:\t\t2.100000",
        "Epoch 2 of 10 took 52.000s",
        "  training loss:\t\t1.900000",
    )
    # two epochs, each with its duration since the previous; no step and no steps/s (the steps of an epoch unknown)
    assert got.height == 2
    assert got["interval_s"].to_list() == [50.0, 52.0]
    assert got["step"].null_count() == 2
    assert got["global_steps_per_s"].null_count() == 2
    # beside step records an epoch's duration is its summary, no record: only the two steps
    got = read("step 10 loss 2.0 time 0.50s", "step 20 loss 1.9 time 0.50s", "Epoch 1 of 10 took 50.000s")
    assert got["step"].to_list() == [10, 20]


@pytest.mark.parametrize(
    "line",
    [
        # a range with no measure: a config's or a plan's
        "training on batches 1-500 of the first shard",
        # a date is no range (its first number is larger), and a time of day no clock duration
        "batch 2021-03-04 took 3.0s",
        "Minibatch[ 280- 271]: time = 0.5s",
        # an eta written as a clock is the time still to go, no step time
        "iter=    12 sample=13/500 loss=2.5 eta=00:01:40",
        # thousands of examples with no batch on the line: no step
        "tick 1     kimg 6.1      sec/kimg 107.73",
        # a download's bar over a range of shards: no position word
        "Downloading shards 1-4 took 3.0s",
        # a time with no position (a loader's)
        "Loaded: 0.000042 seconds",
        # a config dump of a batch size and a time limit
        "--batch-size 64 --steps 1000-2000 --time 30s",
    ],
)
def test_near_misses_are_no_records(line: str) -> None:
    parsed = read_lines(line)
    assert parsed.steps.height == 0, parsed.steps
    assert parsed.rejects.height == 0, parsed.rejects


def test_a_clock_duration_that_is_none_is_a_reject() -> None:
    # 99 minutes is no clock's minutes: the line looks like a record, and is a reject with its reason
    parsed = read_lines("iter=    12 loss=2.5 dt=00:99:00")
    assert parsed.steps.height == 0
    assert "is not a duration" in parsed.rejects["reason"][0]


def test_the_reading_of_a_range_says_what_its_time_covers() -> None:
    said = explain_line("Epoch[3 of 10]-Minibatch[  11-  20, 5.00%]: time = 0.0200s")
    assert "position 'batch A-B (a range)' = 20" in said
    assert "its time covers 10 steps" in said
    said = explain_line("Epoch 1 of 10 took 50.000s")
    assert "epoch 1 with its duration" in said
