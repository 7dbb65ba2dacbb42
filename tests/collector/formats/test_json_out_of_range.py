"""The JSON formats (structured, logentry-lines, mlperf) hold numbers no record can: a step above
2**63 - 1, a task index above 2**31 - 1, a time outside 1970-9999. Each was a traceback (a frame
that overflowed, a datetime past year 9999) or a year-10000 time; each is now its line's reject
with one reason, and the largest value a record holds is still stored."""

from __future__ import annotations

import json

import polars as pl
import pytest

from tests.support.formats_support import parse
from tierscope.collector.formats.envelopes import task_from_name, task_name_expr

STEP_MAX, STEP_OVER = 2**63 - 1, 2**63
TASK_MAX, TASK_OVER = 2**31 - 1, 2**31


def _structured(**fields: object) -> str:
    return json.dumps({"tierscope": "step", "run_id": "r1", "role": "chief", "task_index": 0, "step": 5} | fields)


def test_a_structured_record_holding_the_largest_values_is_stored() -> None:
    got = parse([_structured(step=STEP_MAX, local_step=STEP_MAX, task_index=TASK_MAX)], only="structured")
    assert got.rejects.height == 0
    assert got.steps.select("step", "local_step", "task_index").rows() == [(STEP_MAX, STEP_MAX, TASK_MAX)]


@pytest.mark.parametrize(
    ("fields", "reason"),
    [
        ({"step": STEP_OVER}, f"field 'step' is {STEP_OVER}, more than {STEP_MAX} (the largest a record holds)"),
        (
            {"local_step": STEP_OVER},
            f"field 'local_step' is {STEP_OVER}, more than {STEP_MAX} (the largest a record holds)",
        ),
        (
            {"task_index": TASK_OVER},
            f"field 'task_index' is {TASK_OVER}, more than {TASK_MAX} (the largest a record holds)",
        ),
        # 1e308 is a whole float: int(1e308) has 309 digits
        ({"step": 1e308}, f"field 'step' is 1e+308, more than {STEP_MAX} (the largest a record holds)"),
    ],
)
def test_a_structured_whole_number_beyond_its_type_is_a_reject(fields: dict[str, object], reason: str) -> None:
    # each raised OverflowError / InvalidOperationError building the steps frame: a traceback
    got = parse([_structured(step=1), _structured(**fields)], only="structured")
    assert got.steps["step"].to_list() == [1]
    assert got.rejects.select("source_offset", "reason").rows() == [(2, reason)]


def test_a_structured_event_step_beyond_int64_is_a_reject() -> None:
    line = json.dumps({"tierscope": "event", "run_id": "r1", "event": "started", "step": STEP_OVER})
    got = parse([line], only="structured")
    assert got.events.height == 0
    assert got.rejects["reason"].to_list() == [
        f"field 'step' is {STEP_OVER}, more than {STEP_MAX} (the largest a record holds)"
    ]


@pytest.mark.parametrize(
    ("stamp", "kept"),
    [
        ("1970-01-01T00:00:00Z", True),
        ("9999-12-31T23:59:59.999999Z", True),  # the last microsecond a timestamp holds
        ("9999-12-31T23:59:59.999999", True),  # no offset: UTC
        # -01:00 puts it at 10000-01-01T00:59:59.999999Z: it was stored as year 10000
        ("9999-12-31T23:59:59.999999-01:00", False),
        ("1969-12-31T23:59:59.999999Z", False),
        ("1970-01-01T00:59:59+01:00", False),  # 1969-12-31T23:59:59Z
        ("0001-01-01T00:00:00+01:00", False),  # year 0 UTC: it was stored too
    ],
)
def test_a_structured_time_outside_1970_9999_is_a_reject(stamp: str, kept: bool) -> None:
    got = parse([_structured(timestamp=stamp)], only="structured")
    assert (got.steps.height, got.rejects.height) == ((1, 0) if kept else (0, 1))
    if not kept:
        assert got.rejects["reason"].to_list() == [
            f"timestamp '{stamp}' is not a time between 1970 and 9999 (Unix seconds)"
        ]


def _mlperf(time_ms: object, step: object = 300, key: str = "throughput") -> str:
    obj = {"namespace": "", "time_ms": time_ms, "event_type": "POINT_IN_TIME", "key": key, "value": 812.4}
    return ":::MLLOG " + json.dumps(obj | {"metadata": {"file": "train.py", "lineno": 90, "step": step}})


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        # year 292278994 (datetime raised ValueError), 1e308 ms (OverflowError: time_t)
        (
            _mlperf(STEP_MAX),
            f"throughput: time_ms {STEP_MAX} / 1000 is not a time between 1970 and 9999 (Unix seconds)",
        ),
        (
            _mlperf(1e308, key="run_start"),
            "run_start: time_ms 1e+308 / 1000 is not a time between 1970 and 9999 (Unix seconds)",
        ),
        # 253,402,300,800,000 ms = 10000-01-01T00:00:00Z
        (
            _mlperf(253_402_300_800_000),
            "throughput: time_ms 253402300800000 / 1000 is not a time between 1970 and 9999 (Unix seconds)",
        ),
        (_mlperf(1700000123456, STEP_OVER), f"throughput: metadata.step {STEP_OVER} is not a whole number >= 0"),
    ],
)
def test_an_mlperf_time_or_step_no_record_holds_is_a_reject(line: str, reason: str) -> None:
    got = parse([_mlperf(1700000123456), line], only="mlperf")
    assert got.steps["step"].to_list() == [300]
    assert got.rejects.select("source_offset", "reason").rows() == [(2, reason)]


def test_mlperf_keeps_the_last_millisecond_and_the_largest_step() -> None:
    # 253,402,300,799,999 ms = 9999-12-31T23:59:59.999Z
    got = parse([_mlperf(253_402_300_799_999, STEP_MAX)], only="mlperf")
    assert got.steps["step"].to_list() == [STEP_MAX]
    assert str(got.steps["timestamp"][0]) == "9999-12-31 23:59:59.999000+00:00"


def test_a_task_name_whose_index_no_task_index_holds_names_no_task() -> None:
    # a LogEntry's master-replica-2147483648 overflowed the Int32 meta frame: a traceback
    assert task_from_name(f"master-replica-{TASK_MAX}") == ("master", TASK_MAX)
    assert task_from_name(f"master-replica-{TASK_OVER}") == (None, None)
    assert task_from_name(f"workerpool1-{TASK_OVER}") == (None, None)
    names = pl.DataFrame({"name": [f"master-replica-{TASK_MAX}", f"master-replica-{TASK_OVER}"]})
    role, index = task_name_expr(pl.col("name"))
    assert names.select(role, index).rows() == [("master", TASK_MAX), (None, None)]  # the same as an expression
    entry = {
        "insertId": "1",
        "logName": "projects/p/logs/master-replica-0",
        "resource": {"type": "ml_job", "labels": {"job_id": "census_1", "task_name": f"master-replica-{TASK_OVER}"}},
        "textPayload": "Train [master/0], step 100:loss:2.314, accuracy:0.183 (21.535 sec) 4.644 global_steps/s, "
        "4.644 local_steps/s",
        "timestamp": "2016-11-10T21:04:03.123Z",
    }
    got = parse([json.dumps(entry)], only="logentry-lines")
    # the message names its own task: master/0, step 100
    assert got.steps.select("role", "task_index", "step").rows() == [("master", 0, 100)]


def test_a_structured_records_pid_is_stored_and_one_no_record_holds_is_dropped_not_the_record() -> None:
    # the trainer writes the process id with each step record: a restart is a new pid to the analysis. A pid that is
    # no whole number >= 0 a record holds only loses the mark: the record's figures stand
    bad = [STEP_OVER, -5, "4242", 4242.5, True, [1]]
    got = parse(
        [_structured(pid=4242), *(_structured(step=6 + i, pid=p) for i, p in enumerate(bad))], only="structured"
    )
    assert got.rejects.height == 0
    assert got.steps.select("step", "pid").rows() == [(5, 4242), *((6 + i, None) for i in range(len(bad)))]
