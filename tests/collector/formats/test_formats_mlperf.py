"""MLPerf ``:::MLLOG`` lines."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from tests.support.formats_support import frame, parse
from tierscope.collector.formats import ParseContext, parse_lines, sniff_format
from tierscope.dataset.schema import STEP_SCHEMA, conform

T0 = 1_700_000_000_000  # 2023-11-14 22:13:20 UTC


def mllog(key: str, value: object = None, ms: int = T0, event: str = "POINT_IN_TIME", **meta: object) -> str:
    obj = {"namespace": "", "time_ms": ms, "event_type": event, "key": key, "value": value}
    obj["metadata"] = {"file": "train.py", "lineno": 90, **meta}
    return ":::MLLOG " + json.dumps(obj)


MLPERF = [
    mllog("submission_benchmark", "resnet"),  # 1 skipped
    mllog("run_start", None, T0, "INTERVAL_START"),  # 2 started
    mllog("epoch_start", None, T0 + 1000, "INTERVAL_START", epoch_num=1),  # 3 skipped
    mllog("throughput", 812.4, T0 + 12_500, step=300),  # 4 record
    mllog("eval_accuracy", 0.7591, T0 + 20_000, step=300, epoch_num=1),  # 5 evaluator record
    mllog("eval_accuracy", 0.76, T0 + 21_000, epoch_num=2),  # 6 skipped: no step
    mllog("throughput", 820.0, T0 + 25_000),  # 7 reject: no step
    ':::MLLOG {"key": "throughput", "value": 8',  # 8 reject: cut off
    mllog("run_stop", None, T0 + 30_000, "INTERVAL_END", status="aborted"),  # 9 failed
]


def test_mlperf_records_and_events() -> None:
    got = parse(MLPERF)
    # Line 4: 12.5 s after run_start; line 5: 20 s.
    assert got.steps.select(
        "source_offset", "role", "step", "examples_per_s", "eval_accuracy", "elapsed_s", "timestamp"
    ).rows() == [
        (4, None, 300, 812.4, None, 12.5, datetime(2023, 11, 14, 22, 13, 32, 500000, tzinfo=UTC)),
        (5, "evaluator", 300, None, 0.7591, 20.0, datetime(2023, 11, 14, 22, 13, 40, tzinfo=UTC)),
    ]
    assert got.events.select("source_offset", "event", "reason").rows() == [
        (2, "started", None),
        (9, "failed", "MLPerf run_stop status: aborted"),
    ]
    assert got.rejects.get_column("source_offset").to_list() == [7, 8]
    assert got.rejects.get_column("reason")[0] == "throughput without metadata.step: no step to store it at"
    assert got.rejects.get_column("reason")[1].startswith("not valid JSON after ':::MLLOG'")
    assert got.skipped == 3  # lines 1, 3, 6
    assert sniff_format(MLPERF) == "mlperf"


def test_run_start_carries_to_the_next_batch() -> None:
    context = ParseContext()
    parse_lines(frame(MLPERF[:2]), context=context)
    got = parse_lines(frame([mllog("throughput", 800.0, T0 + 4_000, step=100)], first=10), context=context)
    assert conform(got.steps, STEP_SCHEMA).select("step", "elapsed_s").rows() == [(100, 4.0)]


def test_successful_run_stop_is_finished() -> None:
    got = parse([mllog("run_stop", None, T0, "INTERVAL_END", status="success")])
    assert got.events.select("event", "reason").rows() == [("finished", None)]
