"""Kinds of today's large-model and distributed training logs read by their statements: a logger's name in
brackets before its layout, DeepSpeed's timer alone, a block of metric lines under one position line (Composer,
OLMo), a step's dict that carries the runtime so far. Each test quotes short lines of the kind (the source named
beside them) and asserts values worked out by hand in its comments."""

from __future__ import annotations

import pytest

from tests.support.formats_support import endings, frame, parse
from tierscope.collector.formats.envelopes import split_envelopes


def test_a_loggers_name_in_brackets_before_its_layout_is_an_envelope_layer() -> None:
    # torchtitan's formatter, as quoted in pytorch/torchtitan PR 3393 (2026-05-18): the steps' times are the
    # envelope's, 16:04:46.338 and 16:04:47.456, so the clock gives 1 / 1.118 s = 0.894 steps/s.
    lines = [
        "[rank0]:[titan] 2026-05-18 16:04:46,338 - root - INFO - step: 14  loss:  3.24405  tps: 7,282  mfu: 0.17%",
        "[rank0]:[titan] 2026-05-18 16:04:47,456 - root - INFO - step: 15  loss:  3.10680  tps: 7,334  mfu: 0.17%",
    ]
    body, _ = split_envelopes(frame(lines), 2024)
    assert body.get_column("line")[0].startswith("step: 14  loss:")
    steps = parse(lines).steps
    assert steps.get_column("step").to_list() == [14, 15]
    times = steps.get_column("timestamp").to_list()
    assert (times[1] - times[0]).total_seconds() == 1.118
    # the tokens/s of one device is kept as logged, never read as steps/s
    assert steps.get_column("examples_per_s").to_list() == [7282.0, 7334.0]


def test_a_bracketed_word_alone_is_no_logger_name() -> None:
    # ``[titan]`` is a layer only before a time-first layout; a message's own bracket stays the message's
    body, _ = split_envelopes(frame(["[titan] step: 3 loss 2.0"]), 2024)
    assert body.get_column("line")[0] == "[titan] step: 3 loss 2.0"


def test_deepspeeds_timer_alone_counts_its_steps_in_the_total_of_its_counter() -> None:
    # DeepSpeed's timer with no engine line beside it (deepspeedai/DeepSpeed issue 697, 2021-01-26): ``0/130`` is
    # epoch 0, step 130: 130, 140, 150.
    lines = [
        "[2021-01-26 21:57:06,613] [INFO] [timer.py:166:stop] 0/130, SamplesPerSec=36.813475069881996",
        "[2021-01-26 21:57:09,089] [INFO] [timer.py:166:stop] 0/140, SamplesPerSec=37.47199109015046",
        "[2021-01-26 21:57:12,203] [INFO] [timer.py:166:stop] 0/150, SamplesPerSec=37.547663000349296",
    ]
    assert parse(lines).steps.get_column("step").to_list() == [130, 140, 150]
    # a progress counter keeps its total: 10/200, 20/200, 30/200 are steps 10, 20, 30
    bar = [f"{n}/200, SamplesPerSec=36.8" for n in (10, 20, 30)]
    assert parse(bar).steps.get_column("step").to_list() == [10, 20, 30]
    # two lines, or one, say it as well: the timer's wording is its epoch and its step (see
    # tests/collector/formats/test_grammar_epochs_and_keys.py); 130, 140
    assert parse(lines[:2]).steps.get_column("step").to_list() == [130, 140]


def test_a_block_of_metric_lines_under_a_position_line_is_one_record() -> None:
    # Composer's console logger (an AMD ROCm blog's MPT-30B run on 2 nodes, 2024-09-30): the step is the header's,
    # 5; the job's batches_per_sec 0.0027 is the step rate, never the device's share 0.0002 (= 0.0027 / 16).
    lines = [
        "[epoch=1][batch=5/5]:",
        "         Train time/batch: 4",
        "         Train loss/train/total: 8.4213",
        "         Train throughput/batches_per_sec: 0.0027",
        "         Train throughput/samples_per_sec: 2.7330",
        "         Train throughput/device/batches_per_sec: 0.0002",
        "         Train time/train: 0.5249",
    ]
    steps = parse(lines).steps
    assert steps.select("step", "global_steps_per_s").rows() == [(5, 0.0027)]
    # OLMo's block (allenai/OLMo issue 692, 2024-08-06) states a device's batches/s alone: a batch a step each
    olmo = [
        "2024-08-06 10:00:05.520 intern-studio-160750:0  olmo.train:908  INFO    [step=2/739328,epoch=0]",
        "    train/CrossEntropyLoss=1.7872662283480167e-06",
        "    throughput/device/tokens_per_second=26,668",
        "    throughput/device/batches_per_second=0.0254",
    ]
    assert parse(olmo).steps.select("step", "global_steps_per_s").rows() == [(2, 0.0254)]


def test_a_block_header_without_a_measure_under_it_is_no_record() -> None:
    # Composer's first batch has no throughput yet (a Slurm MPT walkthrough, srun's ``0: `` before each line);
    # ``time/train`` is hours since the start (its SpeedMonitor's default unit), not a step time: batch 1 at
    # 0.0037 h = 13.32 s since the start, no step rate
    lines = [
        "0: [batch=1/300000000]:",
        "0:       Train time/batch: 0",
        "0:       Train loss/train/total: 12.0000",
        "0:       Train time/train: 0.0037",
    ]
    got = parse(lines).steps
    assert got.select("step", "elapsed_s", "global_steps_per_s").rows() == [(1, pytest.approx(13.32), None)]
    # a measure after the block has ended (a line that is not indented) is not the block's
    after = ["[batch=3/10]:", "\t Train loss/train/total: 2.0", "throughput/batches_per_sec: 0.5"]
    assert parse(after).steps.height == 0


def test_a_steps_logging_dict_with_the_runtime_so_far_is_no_ending() -> None:
    # Unsloth logs the runtime so far in each step's dict (unslothai/unsloth PR 4547): no summary, no ending;
    # the Trainer's closing summary (as in the Unsloth SFT run of the first collection) still ends the run
    step = "{'loss': '14.88', 'grad_norm': '2.578', 'train_runtime': '110.7', 'train_tokens_per_second': '2583'}"
    assert [e for e, _ in endings(step)] == []
    summary = "{'train_runtime': 85.4591, 'train_samples_per_second': 11.702, 'train_steps_per_second': 1.17}"
    assert [e for e, _ in endings(summary)] == ["finished"]
    # ``log_metrics``' block after training: ``  train_runtime            = 0:00:21.98``
    assert [e for e, _ in endings("  train_runtime            = 0:00:21.98")] == ["finished"]


def test_an_iteration_beside_a_step_is_a_micro_batch_of_the_optimizers_step() -> None:
    # litgpt's pretraining lines (Lightning-AI/litgpt issue 689): two iterations a step (iter 76 -> 80 is
    # step 38 -> 40), so each step is one record, its first line, at 1 / (2 x its iteration's time):
    # step 39: 1000 / (2 x 214.40) = 2.332 steps/s; step 40: 1000 / (2 x 215.31) = 2.322.
    lines = [
        "iter 76 step 38: loss 10.8259, iter time: 197.87ms",
        "iter 77 step 39: loss 10.8259, iter time: 214.40ms (optimizer.step)",
        "iter 78 step 39: loss 10.8259, iter time: 198.00ms",
        "iter 79 step 40: loss 10.8259, iter time: 215.31ms (optimizer.step)",
        "iter 80 step 40: loss 10.8259, iter time: 197.59ms",
    ]
    steps = parse(lines).steps.select("step", "global_steps_per_s")
    assert steps.get_column("step").to_list() == [38, 39, 40]
    assert [round(r, 3) for r in steps.get_column("global_steps_per_s").to_list()] == [2.527, 2.332, 2.322]
    # an iteration alone stays the position (nanoGPT's ``iter 120: loss ..., time 562.11ms``)
    alone = parse(["iter 120: loss 3.4117, time 562.11ms", "iter 121: loss 3.4, time 562.00ms"]).steps
    assert alone.get_column("step").to_list() == [120, 121]
