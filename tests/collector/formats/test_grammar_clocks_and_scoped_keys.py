"""Kinds of statement the grammar reads by their shape: a logger's time as the clock of a line that states a
position, measures whose key carries a scope (``interval_``, ``avg_``) or its unit in parentheses, a position
key naming its total (``"global_step/max_steps": "1200/3936"``), a metric writer's ``[N] key=value``, a logging
dict stating its own step, and a file's hosts printing every line with no tag.

The lines are written for the test in the shape each tool prints (sources cited in the vocabulary and the
envelope table); the figures are made up and each expected value is worked out in a comment."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.formats_support import frame, parse
from tierscope.analysis import analyze
from tierscope.collector.collect import collect_file
from tierscope.collector.formats.envelopes import ENVELOPES
from tierscope.collector.formats.grammar import CLOCKED_DICT, LOGGER_TIMED, explain_line
from tierscope.collector.formats.ranks import rank_count
from tierscope.collector.manifest import RunSpec
from tierscope.collector.reading import ReadOptions
from tierscope.dataset.store import Dataset


def _one(line: str) -> dict[str, object]:
    steps = parse([line]).steps
    assert steps.height == 1, (line, steps)
    return steps.row(0, named=True)


def test_a_slashed_bracketed_time_is_the_clock_of_a_line_of_examples_per_second() -> None:
    # PaddleOCR's logger: the time in brackets with its date apart by slashes (PaddleOCR issue 16562)
    line = (
        "[2025/09/24 12:13:19] ppocr INFO: epoch: [3/500], global_step: 500, lr: 0.005000, loss: 0.609742, "
        "avg_reader_cost: 1.81036 s, avg_batch_cost: 2.0 s, avg_samples: 16.0, ips: 8.0 samples/s, eta: 2 days"
    )
    got = _one(line)
    assert got["timestamp"] == datetime(2025, 9, 24, 12, 13, 19, tzinfo=UTC)
    assert got["step"] == 500
    # avg_batch_cost is the step's seconds: 1 / 2.0 = 0.5 steps/s; ips stays as logged
    assert got["global_steps_per_s"] == pytest.approx(0.5)
    assert got["examples_per_s"] == pytest.approx(8.0)


def test_a_bracketed_logger_name_before_python_logging_fields_is_stripped_and_its_time_kept() -> None:
    # torchtitan through torchrun --tee (pytorch/torchtitan PR 1287): rank tag, [name], time - logger - LEVEL -
    got = _one(
        "[rank0]:[titan] 2025-06-16 22:30:50,322 - root - INFO - step: 200  loss:  6.1384  "
        "memory: 49.66GiB(52.28%)  tps: 5,856  tflops: 339.16  mfu: 34.29%"
    )
    assert got["timestamp"] == datetime(2025, 6, 16, 22, 30, 50, 322000, tzinfo=UTC)
    assert (got["role"], got["task_index"], got["step"]) == ("worker", 0, 200)
    # tokens/s with a thousands separator: 5,856 = 5856, kept as examples/s (no batch stated: the clock times it)
    assert got["examples_per_s"] == 5856.0
    assert got["global_steps_per_s"] is None


def test_interval_figures_of_a_trainer_are_its_rate_and_interval() -> None:
    # PaddleNLP's Trainer under its ``[time] [    INFO] - `` layout (PaddleNLP issue 4949); the `` - loss:``
    # after the level is the logger's separator, not a Keras bar's
    got = _one(
        "[2023-02-23 09:46:28,399] [    INFO] - loss: 10.84414062, learning_rate: 4e-07, global_step: 40, "
        "interval_runtime: 1.0883, interval_samples_per_second: 18.378, interval_steps_per_second: 18.378, "
        "epoch: 0.0"
    )
    assert got["format"] == "grammar"
    assert got["timestamp"] == datetime(2023, 2, 23, 9, 46, 28, 399000, tzinfo=UTC)
    assert (got["step"], got["global_steps_per_s"]) == (40, 18.378)
    assert (got["interval_s"], got["examples_per_s"], got["loss"]) == (1.0883, 18.378, 10.84414062)


@pytest.mark.parametrize(
    ("line", "step", "rate"),
    [
        # ms-swift's logging.jsonl: the position a quoted N/M under a key naming both, the unit in the key
        (
            '{"loss": 0.228, "learning_rate": 7.877e-05, "train_speed(iter/s)": 0.077917, "epoch": 0.91, '
            '"global_step/max_steps": "1200/3936", "elapsed_time": "4h 16m 28s", "remaining_time": "9h 44m 46s"}',
            1200,
            0.077917,
        ),
        # a step time with its unit in the key: 1 / 12.5 s = 0.08 steps/s
        ('{"step/total": "30/100", "time(s/it)": 12.5, "loss": 1.0}', 30, 0.08),
        # ... in milliseconds: 1000 / 250 ms = 4 steps/s
        ("iter/max_iter: 7/90, batch_time(ms/iter): 250, loss: 2.0", 7, 4.0),
        # Paddle's averaged batch cost: 1 / 0.25 s = 4
        ("epoch: [1/10], global_step: 10, avg_batch_cost: 0.25 s, ips: 64.0 samples/s", 10, 4.0),
        # clu's LoggingWriter through absl, a step in brackets opening key=value metrics (google/flax issue 3364);
        # at a line's very start ``[400] `` is a launcher's rank tag (mpirun's ``[1] ``)
        (
            "I1002 21:38:13.425730 139917864867392 logging_writer.py:35] [400] steps_per_second=1.583725, "
            "train_accuracy=0.37, train_loss=3.2199",
            400,
            1.583725,
        ),
    ],
)
def test_scoped_keys_keys_with_units_and_keyed_counters(line: str, step: int, rate: float) -> None:
    got = _one(line)
    assert got["step"] == step
    assert got["global_steps_per_s"] == pytest.approx(rate)


def test_a_duration_in_hours_or_a_clock_is_no_count_of_seconds() -> None:
    # "4h 16m 28s" is not 4 s: no elapsed seconds, so this line (a position and no other measure) is no record
    assert parse(['{"global_step/max_steps": "1200/3936", "elapsed_time": "4h 16m 28s"}']).steps.height == 0
    # "1:02:03" after the word elapsed is a clock of the time since the start, 1 h 2 min 3 s = 3723 s, never 1 s
    assert parse(["step: 5, elapsed: 1:02:03"]).steps["elapsed_s"].to_list() == [3723.0]
    # seconds stay seconds: 1234.5 s since the start
    assert _one("step: 5, elapsed: 1234.5s")["elapsed_s"] == 1234.5


@pytest.mark.parametrize(
    "line",
    [
        # an evaluation's figures under the same keys are no training step (ms-swift's eval lines)
        '{"eval_loss": 0.3, "eval_runtime": 136.97, "eval_steps_per_second": 0.234, '
        '"global_step/max_steps": "1000/3936"}',
        # a bracketed number opening no key=value run is no position, nor an epoch's after its word
        "I1002 21:38:13.425730 1399 logging_writer.py:35] [400] hello world 2.0 it/s",
        "Epoch [2] loss=0.5 it/s=2.0",
        # an epoch's averages with no position
        "avg_batch_cost: 0.25 s, ips: 64.0 samples/s",
    ],
)
def test_near_misses_of_the_new_kinds_are_no_records(line: str) -> None:
    assert parse([line]).steps.height == 0, line


def test_a_logging_dict_stating_its_step_is_a_record_under_a_loggers_time() -> None:
    # Hugging Face's TFTrainer through its logger (huggingface/transformers PR 9613)
    lines = [
        "[INFO|trainer_tf.py:398] 2021-01-15 10:28:50,371 >> {'loss': 0.6347228, 'epoch': 0.087, 'step': 10}",
        "[INFO|trainer_tf.py:398] 2021-01-15 10:28:56,791 >> {'loss': 0.604829, 'epoch': 0.174, 'step': 20}",
    ]
    steps = parse(lines).steps
    assert steps["step"].to_list() == [10, 20]
    assert steps["loss"].to_list() == [0.6347228, 0.604829]
    # the clock times them: 10 steps in 56.791 - 50.371 = 6.42 s
    stamps = steps["timestamp"].to_list()
    assert (stamps[1] - stamps[0]).total_seconds() == pytest.approx(6.42)
    # without a time it states no clock: no record (the grammar's near-miss)
    assert parse(["{'loss': 0.63, 'epoch': 0.08, 'step': 10}"]).steps.height == 0
    assert CLOCKED_DICT in explain_line("{'loss': 0.63, 'epoch': 0.08, 'step': 10}")


def test_a_position_and_its_loss_under_a_loggers_time_is_a_record_timed_by_that_clock() -> None:
    # CommonLoopUtils' metric writer through absl ([N] key=value, google/CommonLoopUtils clu/metric_writers/
    # logging_writer.py) and a script's own Python logging line: a step and its loss, no measure; the logger's
    # time is the clock. absl: 50 steps in 13:23.168554 - 13:03.221372 = 19.947182 s
    absl = [
        "I1122 10:13:03.221372 140234871 logging_writer.py:48] [50] learning_rate=4.6667e-05, loss=0.63332",
        "I1122 10:13:23.168554 140234871 logging_writer.py:48] [100] learning_rate=4.6667e-05, loss=0.57300",
    ]
    steps = parse(absl).steps
    assert steps["step"].to_list() == [50, 100]
    assert steps["loss"].to_list() == [0.63332, 0.573]
    stamps = steps["timestamp"].to_list()
    assert (stamps[1] - stamps[0]).total_seconds() == pytest.approx(19.947182)
    plain = ["2024-01-01 12:00:00,000 - INFO - step 100 loss 0.5", "2024-01-01 12:00:10,000 - INFO - step 200 loss 0.4"]
    assert parse(plain).steps["step"].to_list() == [100, 200]
    assert LOGGER_TIMED in explain_line("step 100 loss 0.5")
    # without a logger's time it states no clock: no record
    assert parse(["step 100 loss 0.5", "step 200 loss 0.4"]).steps.height == 0


def test_a_loss_line_under_a_loggers_time_is_no_record_where_the_file_times_its_steps() -> None:
    # DLLogger prints one metric a line (NVIDIA DeepLearningExamples' Tacotron2): the step's time on its own line
    # is its record (1 / 3.348415 s = 0.298649 steps/s); the loss line before it at the same step is no second
    # record timed by the clock
    lines = [
        "DLL 2020-05-28 03:32:54.425004 - (6001, 129) train_loss : 0.2885781526565552",
        "DLL 2020-05-28 03:32:56.505289 - (6001, 129) train_iter_time : 3.348415082989959",
    ]
    steps = parse(lines).steps
    assert steps["step"].to_list() == [129]
    assert steps["global_steps_per_s"].to_list() == [pytest.approx(1 / 3.348415082989959)]


@pytest.mark.parametrize(
    "message",
    [
        "step 250: train loss 2.04, val loss 2.07",  # an evaluation beside the training loss (nanoGPT)
        "Evaluating at step 500: eval_loss 0.3",
        "Saving checkpoint at step 6000, loss 0.3",
        "Epoch 3 loss 0.5",  # an epoch is no position
        "test iteration 10 loss 0.5",
        "best loss 0.25 at step 300",
        "Early stopping at epoch 5, step 500, best loss 0.2",
        "iteration 100 loss scale 1024",  # the loss scale is no loss
        "served batch 5: loss 0.31",  # serving
        "probe step 5: packet loss 0.0",  # a network monitor
        "step 300 dev loss 0.7",  # a dev set's evaluation, named after the position
        "node a100 step 10 dur 0.50 loss 1.0",  # an unnamed number: a measure for the learned layout, not the clock
    ],
)
def test_near_misses_of_a_position_and_its_loss_stay_no_records_under_a_loggers_time(message: str) -> None:
    lines = [f"2024-01-01 12:00:0{i},000 - INFO - {message}" for i in range(3)]
    assert parse(lines).steps.height == 0


@pytest.mark.parametrize(
    "message",
    [
        "step {n} | generator loss 0.7 | discriminator loss 0.6",  # a GAN's two losses ("generat" after the step)
        "step {n} | loss 2.31 | load balancing loss 0.01",  # a mixture of experts' auxiliary loss
        "step {n} | loss 2.31 | lr 3e-4 | grad_norm 1.2",  # metrics each named by its key
    ],
)
def test_words_after_the_position_do_not_refuse_a_position_and_its_loss(message: str) -> None:
    # the refusing words are the statement's subject, before its first number: 3 lines 10 s apart, 3 records
    lines = [f"2024-01-01 12:00:{10 * i:02d},000 - INFO - " + message.format(n=100 * (i + 1)) for i in range(3)]
    assert parse(lines).steps["step"].to_list() == [100, 200, 300]


def _hosts_log(copies_last: int) -> list[str]:
    # absl's header with each host's thread id; the hosts' figures differ in their last digits
    def copies(step: int, hms: str, n: int) -> list[str]:
        return [
            f"I1002 {hms}.42{5 + h}730 1399178648{h}7392 logging_writer.py:35] [{step}] "
            f"steps_per_second=1.58{h}7, train_loss=3.2198"
            for h in range(n)
        ]

    return copies(400, "21:38:13", 4) + copies(500, "21:39:09", copies_last)


def test_hosts_printing_every_line_untagged_are_tasks_not_steps(tmp_path: Path) -> None:
    # 4 hosts at step 400, then 2 of them at step 500 where the excerpt stops: 4 ranks (the last run is cut),
    # 4 + 2 = 6 records, never 6 steps of one task
    lines = _hosts_log(2)
    assert rank_count(parse_envelopes(lines)) == 4
    log = tmp_path / "train.log"
    log.write_text("\n".join(lines) + "\n")
    ds = Dataset(tmp_path / "ds")
    collect_file(ds, log, RunSpec(run_id="r", tier="BASIC", files=[log]), ReadOptions(settle_s=0.0, year=2023))
    steps = ds.read("steps")
    assert steps.height == 6
    per_task = steps.group_by("task_index").agg(pl.col("step").sort()).sort("task_index")
    assert per_task["step"].to_list() == [[400, 500], [400, 500], [400], [400]]


def test_two_runs_of_copies_not_at_the_heads_end_teach_no_ranks() -> None:
    # 4 copies, then 2, then a line of its own: the 2 are not cut by the head's end, so the sizes disagree
    lines = [*_hosts_log(2), "I1002 21:40:00.000000 139917864867392 logging_writer.py:35] done at 600"]
    assert rank_count(parse_envelopes(lines)) is None


def parse_envelopes(lines: list[str]) -> pl.DataFrame:
    from tierscope.collector.formats.envelopes import split_envelopes

    return split_envelopes(frame(lines), 2023)[0]


# ----- properties --------------------------------------------------------------------------------

_KINDS = [
    # (message template with {n} the step and {v} the printed figure, printed figure from steps/s x)
    ("global_step: {n}, interval_runtime: 1.5, interval_steps_per_second: {v}", lambda x: x),
    ('{{"train_speed(iter/s)": {v}, "global_step/max_steps": "{n}/{n}"}}', lambda x: x),
    ("step: {n}, avg_batch_cost: {v} s", lambda x: 1 / x),
    ("I1002 21:38:13.425730 139917864867392 logging_writer.py:35] [{n}] steps_per_second={v}, loss=0.5", lambda x: x),
]


@settings(max_examples=60, deadline=None)
@given(
    kind=st.sampled_from(_KINDS),
    step=st.integers(1, 10**7),
    rate=st.sampled_from([0.25, 0.8, 2.5, 12.5]),
    envelope=st.sampled_from([None, *ENVELOPES]),
)
def test_the_new_kinds_read_the_same_under_any_envelope(kind, step: int, rate: float, envelope) -> None:
    template, printed = kind
    message = template.format(n=step, v=f"{printed(rate):.6g}")
    if envelope is None:
        line = message
    elif "<message>" in envelope.example:
        line = envelope.example.replace("<message>", message)
    else:
        line = envelope.example + message
    got = parse([line], only="grammar").steps
    assert got.height == 1, (line, got)
    assert got["step"][0] == step
    assert got["global_steps_per_s"][0] == pytest.approx(rate, rel=1e-5)


def test_the_envelopes_time_is_the_clock_of_records_that_state_examples_per_second(tmp_path: Path) -> None:
    # torchtitan's lines state tokens/s and no batch in tokens: only the logger's time times their steps.
    # Steps 200, 210, ..., 250 every 14.000 s: 50 steps in 70 s = 0.714285... global steps/s
    lines = [
        f"[rank0]:[titan] 2025-06-16 22:{30 + (14 * i) // 60:02d}:{(14 * i) % 60:02d},000 - root - INFO - "
        f"step: {200 + 10 * i}  loss:  6.{i}  tps: 5,8{i}6  mfu: 34.29%"
        for i in range(6)
    ]
    log = tmp_path / "train.log"
    log.write_text("\n".join(lines) + "\n")
    ds = Dataset(tmp_path / "ds")
    collect_file(ds, log, RunSpec(run_id="r", tier="BASIC", files=[log]), ReadOptions(settle_s=0.0))
    row = analyze(ds).summary.row(0, named=True)
    assert row["steady_global_steps_per_s"] == pytest.approx(50 / 70)
