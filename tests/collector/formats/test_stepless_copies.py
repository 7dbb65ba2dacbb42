"""A step-less report printed twice by one process (a logging handler attached twice) is one report.

TF-slim's loop, every line doubled (tensorflow/models issue 5817, a run of 2018-11, read 2026-12-07)."""

from __future__ import annotations

from tests.support.formats_support import frame, read
from tierscope.collector.formats import ParseContext, parse_lines

RATE = "INFO:tensorflow:global_step/sec: 0.841667"
STEP = "INFO:tensorflow:global step 187: loss = 0.5761 (1.184 sec/step)"


def test_byte_identical_neighbours_are_one_stepless_report() -> None:
    got = read(STEP, STEP, RATE, RATE).sort("source_offset")
    # the two rate lines (3 and 4) are one report: both take the first copy's position, 3, so the dataset's key
    # (task, step, position) keeps one row; the step records keep their own step (187) and no position
    stepless = got.filter(got["step"].is_null())
    assert stepless["source_offset"].to_list() == [3, 4]
    assert stepless["position"].to_list() == [3, 3]
    assert got.filter(got["step"].is_not_null())["position"].to_list() == [None, None]


def test_a_run_of_copies_cut_by_a_batch_goes_on_in_the_next() -> None:
    # the first copy ends one batch (line 2), the second opens the next (line 3): still the first's position
    context = ParseContext(year=2024)
    first = parse_lines(frame([STEP, RATE]), context=context)
    second = parse_lines(frame([RATE, STEP.replace("187", "188")], first=3), context=context)
    assert first.steps.filter(first.steps["step"].is_null())["position"].to_list() == [2]
    assert second.steps.filter(second.steps["step"].is_null())["position"].to_list() == [2]


def test_two_reports_of_one_rate_are_two_reports() -> None:
    # near-miss: the same rate twice with a step line between (two intervals that ran alike), or with different
    # times (glog's header), is two reports: each keeps its own line as its position
    got = read(RATE, STEP, RATE).sort("source_offset")
    assert got.filter(got["step"].is_null())["position"].to_list() == [1, 3]
    timed = [
        "I1105 10:00:01.000000 1 basic_session_run_hooks.py:692] global_step/sec: 0.841667",
        "I1105 10:01:01.000000 1 basic_session_run_hooks.py:692] global_step/sec: 0.841667",
    ]
    assert read(*timed).sort("source_offset")["position"].to_list() == [1, 2]
