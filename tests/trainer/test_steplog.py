"""The step log read back by the collector's own parsers (json -> structured, text -> cloudml)."""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime

import polars as pl

from tierscope.collector.formats import parse_lines
from tierscope.collector.formats.base import LINES_SCHEMA
from tierscope.trainer.steplog import Identity, IntervalMeter, StepLog

WHO = Identity(run_id="r1", tier="STANDARD_1", role="worker", task_index=3)
STEP = dict(
    step=200, local_step=40, loss=0.52, accuracy=0.91, elapsed_s=3.2,
    global_steps_per_s=31.0, local_steps_per_s=15.5, batch_size=100,
)  # fmt: skip


def lines_frame(text: str) -> pl.DataFrame:
    lines = text.splitlines()
    return pl.DataFrame({"source_offset": range(1, len(lines) + 1), "line": lines}, schema=LINES_SCHEMA)


def test_json_record_round_trip() -> None:
    stream = io.StringIO()
    log = StepLog(WHO, "json", stream)
    log.event("started", detail={"strategy": "ps"})
    log.step(**STEP)
    log.event("failed", reason="boom", step=200)
    log.close()
    ours = [json.loads(line) for line in stream.getvalue().splitlines() if '"tierscope"' in line]
    labels = {"python_logger": "tierscope", "run_id": "r1", "tier": "STANDARD_1"}
    assert ours[1]["logging.googleapis.com/labels"] == labels
    assert ours[1]["severity"] == "INFO" and ours[2]["severity"] == "ERROR"
    assert ours[1]["examples_per_s"] == 1550.0  # 15.5 local steps/s x 100 examples
    parsed = parse_lines(lines_frame(stream.getvalue()))
    assert parsed.rejects.height == 0
    step = parsed.steps.row(0, named=True)
    assert {k: step[k] for k in ("run_id", "tier", "role", "task_index", "step", "local_step")} == {
        "run_id": "r1", "tier": "STANDARD_1", "role": "worker", "task_index": 3, "step": 200, "local_step": 40,
    }  # fmt: skip
    assert (step["loss"], step["accuracy"], step["elapsed_s"]) == (0.52, 0.91, 3.2)
    assert (step["global_steps_per_s"], step["local_steps_per_s"], step["examples_per_s"]) == (31.0, 15.5, 1550.0)
    assert step["format"] == "structured"
    age = datetime.now(UTC) - step["timestamp"]
    assert 0 <= age.total_seconds() < 60  # the timestamp StructuredLogHandler would drop is there, in UTC
    events = parsed.events.sort("source_offset").to_dicts()
    assert [(e["event"], e["reason"], e["step"]) for e in events] == [("started", None, None), ("failed", "boom", 200)]
    assert json.loads(events[0]["detail"]) == {"strategy": "ps"}


def test_text_record_is_the_2016_line() -> None:
    stream = io.StringIO()
    log = StepLog(WHO, "text", stream)
    log.event("started")
    log.step(**STEP)
    log.close()
    lines = stream.getvalue().splitlines()
    assert lines[1] == (
        "INFO:tierscope:Train [worker/3], step 200:loss:0.520, accuracy:0.910 (3.200 sec) "
        "31.000 global_steps/s, 15.500 local_steps/s"
    )
    parsed = parse_lines(lines_frame(stream.getvalue()))
    assert parsed.skipped == 1  # the started line carries no metric
    row = parsed.steps.row(0, named=True)
    assert (row["role"], row["task_index"], row["step"], row["loss"], row["format"]) == (
        "worker",
        3,
        200,
        0.52,
        "cloudml",
    )


def test_off_writes_nothing() -> None:
    stream = io.StringIO()
    log = StepLog(WHO, "off", stream)
    log.event("started")
    log.step(**STEP)
    assert stream.getvalue() == ""


def test_interval_meter_rates() -> None:
    meter = IntervalMeter(start=10.0)
    # First interval from the start: 100 global, 50 local steps in 4 s -> 25 and 12.5 per s.
    assert meter.mark(100, 50, now=14.0) == (4.0, 25.0, 12.5)
    # Next: 300 - 100 = 200 global, 60 - 50 = 10 local steps in 2 s -> 100 and 5 per s.
    assert meter.mark(300, 60, now=16.0) == (6.0, 100.0, 5.0)
