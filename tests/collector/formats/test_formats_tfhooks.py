"""TensorFlow Estimator hook lines, with and without absl/glog headers and launcher tags."""

from __future__ import annotations

from datetime import UTC, datetime

import polars as pl

from tests.support.formats_support import outcome_offsets, parse
from tierscope.collector.formats import LINES_SCHEMA, parse_lines, sniff_format

ESTIMATOR = [
    "INFO:tensorflow:Calling model_fn.",  # 1 skipped
    "INFO:tensorflow:loss = 2.301, step = 1",  # 2 first record: no seconds
    "INFO:tensorflow:global_step/sec: 37.2",  # 3 folded into line 5
    "INFO:tensorflow:examples/sec: 4761.6",  # 4 folded into line 5
    "INFO:tensorflow:loss = 0.734, step = 101 (2.688 sec)",  # 5
    "INFO:tensorflow:Saving checkpoints for 101 into /tmp/model.ckpt.",  # 6 checkpoint_begin event
    "INFO:tensorflow:global_step/sec: 40",  # 7 folded into line 8
    "INFO:tensorflow:step = 201, loss = 0.5 (2.5 sec)",  # 8 reversed order
    "WARNING:tensorflow:It seems that global step has not been increased.",  # 9 skipped
    "INFO:tensorflow:loss = 0.41, step = ",  # 10 reject: no value
    "INFO:tensorflow:loss = 0.41, step = 301 (2.4",  # 11 reject: seconds cut off
    "ERROR:tensorflow:Model diverged with loss = NaN.",  # 12 failed event, no step
]


def test_estimator_records_rates_and_events() -> None:
    got = parse(ESTIMATOR)
    rows = got.steps.select("source_offset", "step", "loss", "interval_s", "global_steps_per_s", "examples_per_s")
    # Line 5 covers steps 1..101: 100 steps in 2.688 s, reported by StepCounterHook as 37.2/s
    # (100 / 2.688 = 37.20); examples/sec 4761.6 = 37.2 steps/s * batch 128.
    assert rows.rows() == [
        (2, 1, 2.301, None, None, None),
        (5, 101, 0.734, 2.688, 37.2, 4761.6),
        (8, 201, 0.5, 2.5, 40.0, None),  # 100 steps / 2.5 s = 40/s
    ]
    assert got.steps.get_column("format").unique().to_list() == ["tf-estimator"]
    assert got.events.select("source_offset", "event", "reason", "step").rows() == [
        (6, "checkpoint_begin", None, 101),  # goodput's checkpoint stalls: the step it names
        (12, "failed", "Model diverged with loss = NaN.", None),
    ]
    assert got.rejects.select("source_offset", "reason").rows() == [
        (10, "'step = ' has no value (line cut off?)"),
        (11, "the '(x sec)' part is cut off"),
    ]
    # 12 lines: 3 records, 2 events, 2 rejects; the other 5 (1, 3, 4, 7, 9) are skipped.
    assert got.skipped == 5
    assert sniff_format(ESTIMATOR) == "tf-estimator"


def test_rate_line_without_a_record_after_it_is_a_step_less_record() -> None:
    # TPUEstimator prints global_step/sec with no step: a record with a null step, kept apart
    # and ordered by its line (position), never a reject and never an invented step.
    got = parse(
        [
            "INFO:tensorflow:loss = 1.0, step = 1",
            "INFO:tensorflow:global_step/sec: 12.5",
            "INFO:tensorflow:examples/sec: 100",
            "INFO:tensorflow:global_step/sec: 12.25",
        ]
    )
    assert got.rejects.height == 0
    rows = got.steps.select("source_offset", "step", "global_steps_per_s", "examples_per_s", "position").rows()
    assert rows == [(1, 1, None, None, None), (2, None, 12.5, 100.0, 2), (4, None, 12.25, None, 4)]


ABSL = [
    # Each message printed twice: Python logging first, then absl with a glog header.
    "INFO:tensorflow:loss = 2.301, step = 1",
    "I0412 08:15:02.339120 139876 basic_session_run_hooks.py:262] loss = 2.301, step = 1",
    "INFO:tensorflow:global_step/sec: 37.2",
    "I0412 08:15:05.027000 139876 basic_session_run_hooks.py:702] global_step/sec: 37.2",
    "I0412 08:15:05.027500 139876 basic_session_run_hooks.py:260] loss = 0.734, step = 101 (2.688 sec)",
    "INFO:tensorflow:loss = 0.734, step = 101 (2.688 sec)",
    "W0412 08:15:06.000000 139876 deprecation.py:50] From train.py:10: some warning",
]


def test_glog_duplicate_pair_is_one_record_with_the_timestamp() -> None:
    got = parse(ABSL, year=2024)
    assert got.steps.select("source_offset", "step", "interval_s", "global_steps_per_s", "timestamp").rows() == [
        (2, 1, None, None, datetime(2024, 4, 12, 8, 15, 2, 339120, tzinfo=UTC)),
        (5, 101, 2.688, 37.2, datetime(2024, 4, 12, 8, 15, 5, 27500, tzinfo=UTC)),
    ]
    # 7 lines, 2 records; the three plain copies, the rate line and the warning are skipped.
    assert got.skipped == 5
    assert got.rejects.height == 0
    assert sniff_format(ABSL) == "tf-estimator"


def test_without_a_year_glog_timestamps_are_null() -> None:
    got = parse(ABSL[:2], year=None)
    assert got.steps.select("step", "timestamp").rows() == [(1, None)]


def test_launcher_tags_give_role_and_task_and_keep_tasks_apart() -> None:
    lines = [
        "[worker-0] INFO:tensorflow:global_step/sec: 10",
        "[worker-1] INFO:tensorflow:global_step/sec: 20",
        "[worker-1] INFO:tensorflow:loss = 0.5, step = 300 (5.0 sec)",
        "[worker-0] INFO:tensorflow:loss = 0.6, step = 200 (10.0 sec)",
        "worker-replica-3: INFO:tensorflow:loss = 0.7, step = 400",
        "[2] INFO:tensorflow:loss = 0.8, step = 500",
    ]
    got = parse(lines)
    # Each rate goes to the next record of its own task, not to the next line.
    assert got.steps.select("source_offset", "role", "task_index", "step", "global_steps_per_s").rows() == [
        (3, "worker", 1, 300, 20.0),
        (4, "worker", 0, 200, 10.0),
        (5, "worker", 3, 400, None),
        (6, "worker", 2, 500, None),
    ]
    assert outcome_offsets(got)["steps"] == [3, 4, 5, 6]


def test_a_cut_off_divergence_line_is_a_reject_with_a_reason() -> None:
    # Found by the fuzz test: it matched the format's mark but no field, and left a reject
    # without a reason.
    got = parse_lines(
        pl.DataFrame({"source_offset": [1], "line": ["A:tensorflow:Model diverged with loss"]}, schema=LINES_SCHEMA)
    )
    assert got.rejects.select("source_offset", "reason").rows() == [
        (1, "a TensorFlow hook line cut off before its value")
    ]


def test_a_report_at_the_moment_after_a_loss_line_is_that_records_rate() -> None:
    # TPUEstimator prints the loss line first, then global_step/sec for the same step, 1.6 ms later:
    # step 488600 is 2.20221 steps/s (100 steps a loop / 45.410 s = 2.2022), one record, not two.
    lines = [
        "I0902 03:33:36.516501 1400 basic_session_run_hooks.py:260] loss = 1.109375, step = 488600 (45.410 sec)",
        "I0902 03:33:36.518121 1400 tpu_estimator.py:2402] global_step/sec: 2.20221",
        "I0902 03:33:36.518576 1400 tpu_estimator.py:2403] examples/sec: 140.942",
        "I0902 03:34:21.925864 1400 tpu_estimator.py:616] Enqueue next (100) batch(es) of data to infeed.",
    ]
    got = parse(lines, year=2021)
    rows = got.steps.select("source_offset", "step", "global_steps_per_s", "examples_per_s").rows()
    assert rows == [(1, 488600, 2.20221, 140.942)]


def test_a_report_long_after_a_loss_line_stays_a_report_of_its_own() -> None:
    # 45 s after the loss line is the next interval's report (its loss line cut off), not this one's.
    lines = [
        "I0902 03:33:36.516501 1400 basic_session_run_hooks.py:260] loss = 1.1, step = 488600 (45.410 sec)",
        "I0902 03:34:21.926121 1400 tpu_estimator.py:2402] global_step/sec: 2.2",
    ]
    rows = parse(lines, year=2021).steps.select("source_offset", "step", "global_steps_per_s").rows()
    assert rows == [(1, 488600, None), (2, None, 2.2)]


def test_a_loss_line_without_its_rate_takes_the_period_its_task_reports() -> None:
    # The excerpt starts at step 5800's loss line (its global_step/sec line cut off). Step 5900's report says
    # 0.686408 steps/s over 145.686 s = 100.0 steps a period, so step 5800's 145.448 s held 100 steps:
    # 100 / 145.448 = 0.687531 steps/s. Step 5900 keeps its own stated rate.
    lines = [
        "INFO:tensorflow:loss = 3.5446548, step = 5800 (145.448 sec)",
        "INFO:tensorflow:global_step/sec: 0.686408",
        "INFO:tensorflow:loss = 3.5169177, step = 5900 (145.686 sec)",
    ]
    rows = parse(lines).steps.select("step", "global_steps_per_s").rows()
    assert [r[0] for r in rows] == [5800, 5900]
    assert abs(rows[0][1] - 100 / 145.448) < 1e-9
    assert rows[1][1] == 0.686408


def test_reports_disagreeing_on_the_period_state_none() -> None:
    # 0.5 x 200 = 100 steps and 0.5 x 260 = 130 steps: no period, so the first loss line gets no rate.
    lines = [
        "INFO:tensorflow:loss = 3.5, step = 5800 (145.448 sec)",
        "INFO:tensorflow:global_step/sec: 0.5",
        "INFO:tensorflow:loss = 3.4, step = 5900 (200 sec)",
        "INFO:tensorflow:global_step/sec: 0.5",
        "INFO:tensorflow:loss = 3.3, step = 6030 (260 sec)",
    ]
    rows = parse(lines).steps.select("step", "global_steps_per_s").rows()
    assert rows == [(5800, None), (5900, 0.5), (6030, 0.5)]
