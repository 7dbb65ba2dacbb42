"""A time of day a message states for itself, with no date: the clock of the lines that state it.

torch_xla's test utilities end each step line with ``Time=`` and ``datetime.now()`` as ``%H:%M:%S``
(pytorch/xla ``test/test_utils.py``, ``print_training_update``); a MetricLogger behind a time-only formatter
opens each line with ``[%H:%M:%S.%f]``. With no logger's time around them, those readings are what times the
steps: the seconds between two of a task's readings are the time between its reports. Lines quoted from real
logs where a source is given; the others are written in the same shape with made-up figures."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.support.formats_support import parse
from tierscope.analysis import analyze
from tierscope.collector.collect import collect_file
from tierscope.collector.formats.grammar import EXAMPLES_ALONE, STATED_CLOCK, explain_line
from tierscope.collector.formats.vocabulary import TIME_OF_DAY
from tierscope.collector.manifest import RunSpec
from tierscope.collector.reading import ReadOptions
from tierscope.dataset.store import Dataset

# Quoted from pytorch/xla PR 4324 (2022-12, a TPU run's output pasted in a comment): three of eight devices'
# lines at step 500, then three devices' at step 520. Each device names itself (``xla:1/0``: the ordinal after the
# slash), so each is a task (collector/formats/named_ranks.py): devices 0, 7, 3 at step 500, then 6, 1, 0.
XLA = [
    "| Training Device=xla:1/0 Epoch=1 Step=500 Loss=0.00223 Rate=553.79 GlobalRate=349.32 Time=01:53:18",
    "| Training Device=xla:0/7 Epoch=1 Step=500 Loss=0.00223 Rate=553.80 GlobalRate=352.39 Time=01:53:18",
    "| Training Device=xla:0/3 Epoch=1 Step=500 Loss=0.00223 Rate=553.71 GlobalRate=354.44 Time=01:53:18",
    "| Training Device=xla:0/6 Epoch=1 Step=520 Loss=0.00213 Rate=557.70 GlobalRate=359.37 Time=01:53:23",
    "| Training Device=xla:0/1 Epoch=1 Step=520 Loss=0.00213 Rate=557.46 GlobalRate=357.55 Time=01:53:23",
    "| Training Device=xla:1/0 Epoch=1 Step=520 Loss=0.00213 Rate=557.28 GlobalRate=354.43 Time=01:53:23",
]


def _intervals(lines: list[str]) -> dict[int, set[float | None]]:
    steps = parse(lines).steps
    got: dict[int, set[float | None]] = {}
    for row in steps.iter_rows(named=True):
        got.setdefault(row["step"], set()).add(row["interval_s"])
    return got


def test_a_keyed_time_of_day_times_the_steps_between_two_readings() -> None:
    # device 0 read step 520 at 01:53:23, step 500 at 01:53:18: 5 s since its previous report; devices 6 and 1
    # report first at step 520, and every device's first reading has no interval
    assert _intervals(XLA) == {500: {None}, 520: {5.0, None}}


def test_the_time_of_day_keeps_the_records_of_examples_per_second_it_times() -> None:
    # Rate= is examples/s with no batch stated: the lines' own clock times them, so neither step is dropped as
    # another hook's figure (the first reading has no interval yet, and stays a record too)
    steps = parse(XLA).steps
    assert sorted(set(steps["step"].to_list())) == [500, 520]
    assert steps.filter(steps["step"] == 500)["examples_per_s"].to_list()[0] == pytest.approx(553.79)


def test_a_day_turning_over_between_two_readings_adds_a_day() -> None:
    # 23:59:58 then 00:00:03: 3 - 86398 = -86395 s, more than half a day back: + 86400 = 5 s
    lines = [
        "| Training Device=xla:0/0 Epoch=3 Step=100 Loss=0.1 Rate=500.00 GlobalRate=500.00 Time=23:59:58",
        "| Training Device=xla:0/0 Epoch=3 Step=120 Loss=0.1 Rate=500.00 GlobalRate=500.00 Time=00:00:03",
    ]
    assert _intervals(lines) == {100: {None}, 120: {5.0}}


def test_a_bracketed_time_of_day_at_the_head_of_a_message_is_its_clock() -> None:
    # Quoted from Alpha-VLLM/LLaMA2-Accessory issue 48 (2023): MAE's MetricLogger behind a time-only formatter.
    # 03:30:45.570149 - 03:29:59.478134 = 46.092015 s for the 10 iterations from 10 to 20
    lines = [
        "[03:29:59.478134] Epoch: [1]  [10/1504]  lr: 0.000025  closs: 1.0340 (1.0370)  time: 4.6849  data: 0.1147"
        "  max mem: 51710",
        "[03:30:45.570149] Epoch: [1]  [20/1504]  lr: 0.000025  closs: 1.0340 (1.0384)  time: 4.5919  data: 0.0002"
        "  max mem: 51710",
    ]
    got = _intervals(lines)
    assert got[10] == {None}
    (interval,) = got[20]
    assert interval == pytest.approx(46.092015)


def test_durations_under_a_time_key_are_no_clock() -> None:
    # near miss: a time written as a clock that falls between reports (00:00:05, then 00:00:04) is each report's
    # duration, not a time of day: no interval is read from it
    lines = [
        "step 10 loss 0.50 examples/s 100.0 time=00:00:05",
        "step 20 loss 0.40 examples/s 101.0 time=00:00:04",
        "step 30 loss 0.30 examples/s 102.0 time=00:00:06",
    ]
    assert _intervals(lines) == {10: {None}, 20: {None}, 30: {None}}


def test_a_logger_time_wins_over_a_time_of_day_the_message_states() -> None:
    # near miss: with a logger's time around the line, that time is its clock (the analysis derives rates from it);
    # the message's own reading adds no interval
    lines = [
        "2024-03-01 10:00:00,000 - root - INFO - step 10 loss 0.5 examples/s 100.0 Time=01:00:00",
        "2024-03-01 10:00:05,000 - root - INFO - step 20 loss 0.4 examples/s 100.0 Time=01:00:05",
    ]
    assert _intervals(lines) == {10: {None}, 20: {None}}


@pytest.mark.parametrize(
    "text",
    [
        "Epoch: [0] Total time: 01:52:18",  # a word before the key: a duration
        "Time left: 01:00:00",  # the key is qualified after it
        "eta: 01:02:03",  # the time still to go
        "time: 1:52:18",  # one digit of hours: a duration's
        "time: 25:01:02",  # no hour of a day
        "epoch time: 00:01:02",  # an epoch's duration
    ],
)
def test_near_misses_are_no_time_of_day(text: str) -> None:
    assert re.search(TIME_OF_DAY, text) is None


def test_a_file_timed_by_its_stated_time_of_day_has_a_steady_rate(tmp_path: Path) -> None:
    # Steps 500, 520, 540, 560 read at 01:53:18, :23, :28, :33 by each of three devices (three tasks: 12 records):
    # 20 steps every 5 s = 4.0 global steps/s
    lines = [
        f"| Training Device=xla:0/{d} Epoch=1 Step={500 + 20 * i} Loss=0.002{i} Rate=55{i}.00 GlobalRate=35{i}.00 "
        f"Time=01:53:{18 + 5 * i}"
        for i in range(4)
        for d in range(3)
    ]
    log = tmp_path / "train.log"
    log.write_text("\n".join(lines) + "\n")
    ds = Dataset(tmp_path / "ds")
    collect_file(ds, log, RunSpec(run_id="r", tier="BASIC", files=[log]), ReadOptions(settle_s=0.0))
    row = analyze(ds).summary.row(0, named=True)
    assert row["records"] == 12
    assert row["steady_global_steps_per_s"] == pytest.approx(4.0)


def test_formats_try_says_the_time_of_day_is_the_lines_clock() -> None:
    said = explain_line(XLA[3])
    assert f"{STATED_CLOCK}: 01:53:23" in said
    # ... and not that its examples/s are another hook's figure
    assert EXAMPLES_ALONE not in said
