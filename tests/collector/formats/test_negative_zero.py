"""A figure printed ``-0`` is a negative one (a negative measure rounded to no decimals, or no steps over a clock that
went back): refused wherever a negative figure is, never stored as -0.0. Where a rate of 0 is a broken measure (the
grammar's ``0 it/s``) ``-0`` is one too; where 0 is a measured stall (TensorFlow's hooks, Cloud ML Engine's line,
an event file's scalar) 0 stays a record and ``-0`` is refused with the negatives. Lines are written for the test in
the shapes the tools print."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from tests.collector.readers.test_eventfiles import collect, estimator_events, write_events
from tests.support.formats_support import parse
from tierscope.collector.formats.vocabulary import stated_rate
from tierscope.dataset.store import Dataset

CLOUDML = "Train [master/0], step 100:loss:2.314, accuracy:0.183 (21.535 sec) {g} global_steps/s, 4.644 local_steps/s"


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        # the grammar: a rate of 0 would cost infinity, and -0 is no better
        ("step 700, -0 it/s", "X steps/s: '-0' is not a finite number > 0"),
        ("step 700, -0.0 it/s", "X steps/s: '-0.0' is not a finite number > 0"),
        # TensorFlow's StepCounterHook: 0 steps in a time that went back prints -0 (%g of -0.0)
        ("INFO:tensorflow:global_step/sec: -0", "global_step/sec '-0' is not a finite number >= 0"),
        ("INFO:tensorflow:examples/sec: -0", "examples/sec '-0' is not a finite number >= 0"),
        ("INFO:tensorflow:loss = 0.5, step = 100 (-0 sec)", "seconds '-0' is not a finite number >= 0"),
        (CLOUDML.format(g="-0"), "global_steps/s '-0' is not a finite number >= 0"),
    ],
)
def test_a_negative_zero_is_a_reject(line: str, reason: str) -> None:
    got = parse([line])
    assert got.steps.height == 0
    assert got.rejects.get_column("reason").to_list() == [reason]


def test_a_zero_where_it_is_a_stall_stays_a_record() -> None:
    # TensorFlow's hooks and Cloud ML Engine's line: 0 steps/s is a stall measured, stored as +0.0
    got = parse(["INFO:tensorflow:global_step/sec: 0"]).steps.get_column("global_steps_per_s").to_list()
    assert got == [0.0] and str(got[0]) == "0.0"
    got = parse([CLOUDML.format(g="0")]).steps.select("step", "global_steps_per_s").rows()
    assert got == [(100, 0.0)]


def test_an_event_files_negative_zero_rate_is_a_reject(tmp_path: Path) -> None:
    # three intervals of Estimator's pair (rate then loss at steps 100, 200, 300); the second rate -0.0 (event 4)
    log = tmp_path / "job" / "events.out.tfevents.5.h"
    events = estimator_events([10.0, -0.0, 0.0])
    write_events(log, events)
    ds = Dataset(tmp_path / "ds")
    collect(ds, log)
    reasons = Dataset(ds.root).read("rejects").get_column("reason").to_list()
    assert reasons == ["event 4: global_step/sec -0.0 at step 200 is not a finite number >= 0"]
    # step 300's 0.0 is a stall stored as 0.0; step 200 keeps its loss
    rates = Dataset(ds.root).read("steps").sort("step").select("step", "global_steps_per_s").rows()
    assert rates == [(100, 10.0), (200, None), (300, 0.0)]


def test_a_stated_rate_of_negative_zero_is_no_rate() -> None:
    # the vocabulary's one conversion of a printed rate (the grammar's, a declared format's, the hooks'): 2.5 steps/s
    # stays 2.5, a stall of +0 stays 0.0, and -0 (1 / -0.0 is -inf) is refused like -1: both null, never -0.0
    got = pl.select(stated_rate(pl.Series([2.5, 0.0, -0.0, -1.0]))).to_series().to_list()
    assert got[:2] == [2.5, 0.0] and str(got[1]) == "0.0"
    assert got[2:] == [None, None]
    # with the multiplier (a rate per minute x 1/60): 120/min is 2.0 steps/s, -0/min still null
    got = pl.select(stated_rate(pl.Series([120.0, -0.0]), 1 / 60)).to_series().to_list()
    assert got == [2.0, None]
