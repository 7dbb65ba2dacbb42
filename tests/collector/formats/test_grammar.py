"""The grammar of progress statements: lines of tools no family names, near-misses it refuses, and its
reading kept under any envelope and any of the equivalent separators (property tests).

Every line here is written for the test in the shape the named tool prints (the tools' sources are
cited in :mod:`tierscope.collector.formats.vocabulary`); the figures are made up and each expected
value is worked out by hand in a comment."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.formats_support import endings, read
from tierscope.collector.formats.envelopes import ENVELOPES


@pytest.mark.parametrize(
    ("line", "step", "rate"),
    [
        # Megatron-LM: 1000 / 1250.0 ms = 0.8 steps/s
        (" iteration      120/   5000 | consumed samples: 1920 | elapsed time per iteration (ms): 1250.0 |", 120, 0.8),
        # Hugging Face / tqdm bar: the it/s as printed
        (" 42%|████▏     | 840/2000 [04:12<05:48,  3.33it/s]", 840, 3.33),
        # a tqdm bar whose description holds an epoch counter: the bar's own counter is the position
        ("Epoch 1/10: 100%|██████████| 500/500 [00:50<00:00, 10.0it/s, loss=0.3]", 500, 10.0),
        # tqdm's slow form: 1 / 2.5 s/it = 0.4
        ("100%|##########| 300/300 [12:30<00:00,  2.50s/it]", 300, 0.4),
        # Model Garden / Orbit
        ("train | step:   2000 | steps/sec:   12.5 | output: {'loss': 0.25}", 2000, 12.5),
        # detectron2-style meters: a unit-less time is the iteration's seconds, 1 / 0.25 = 4
        ("eta: 1:02:03  iter: 459  total_loss: 0.812  time: 0.2500  data_time: 0.0100  lr: 0.02", 459, 4.0),
        # mmcv: Epoch [2][100/500] is iteration (2 - 1) * 500 + 100 = 600; 1 / 0.5 s = 2
        ("Epoch [2][100/500]\tlr: 1.000e-02, eta: 0:10:00, time: 0.500, data_time: 0.010, loss: 0.7000", 600, 2.0),
        # fairseq: num_updates is the global step, ups the updates per second
        ("| epoch 003:    100 / 900 loss=4.2, wps=10000, ups=1.25, num_updates=1900, wall=1500", 1900, 1.25),
        # nanoGPT: 1000 / 800 ms = 1.25
        ("iter 250: loss 2.1000, time 800.00ms, mfu 20.00%", 250, 1.25),
        # MaxText: seconds is the step's time, 1 / 4 = 0.25
        ("completed step: 7, seconds: 4.000, TFLOP/s/device: 100.0, Tokens/s/device: 2048.0, loss: 9.5", 7, 0.25),
        # DLLogger (FastPitch-like): took is the iteration's time, 1 / 20 = 0.05
        ("epoch    1 | iter  12/100 | loss 3.10 | 5000.00 frames/s | took 20.00 s | lrate 1.00e-04", 12, 0.05),
        # timm: Time: 0.400s is the batch's time, 1 / 0.4 = 2.5; batch 250 of epoch 3 (counted from 0) of 1000 batches
        # is step 3 * 1000 + 250 = 3250
        ("Train: 3 [ 250/1000 ( 25%)]  Loss: 2.5 (2.6)  Time: 0.400s,  320.00/s  (0.410s,  312.20/s)", 3250, 2.5),
        # PaddleSeg: batch_cost is the iteration's seconds, 1 / 0.2 = 5
        ("[TRAIN] epoch: 1, iter: 30/1000, loss: 1.5, lr: 0.01, batch_cost: 0.2000, reader_cost: 0.001", 30, 5.0),
        # DLLogger keyed by (epoch, iteration): 1 / 2.5 s = 0.4
        ("(12, 40) train_iter_time : 2.5", 40, 0.4),
        # Hugging Face Trainer's JSON with quoted numbers (fairseq's epoch summary): quoted values read
        ('{"epoch": 4, "train_loss": "3.2", "train_ups": "0.5", "train_num_updates": "800"}', 800, 0.5),
    ],
)
def test_the_grammar_reads_the_lines_of_tools_no_family_names(line: str, step: int, rate: float) -> None:
    got = read(line)
    assert got.height == 1, got
    assert got["step"][0] == step
    assert got["global_steps_per_s"][0] == pytest.approx(rate)
    assert got["format"][0] == "grammar"


def test_a_rate_of_examples_becomes_steps_where_the_log_states_the_batch() -> None:
    # Horovod's synthetic benchmark: 256.0 img/sec per GPU / 128 images per GPU = 2.0 steps/s
    got = read("Batch size: 128", "Number of GPUs: 8", "Iter #3: 256.0 img/sec per GPU")
    assert got["step"].to_list() == [3]
    assert got["examples_per_s"][0] == 256.0
    assert got["global_steps_per_s"][0] == pytest.approx(2.0)
    assert got["rate_derived"][0] is True
    # A job-wide rate over the global batch: 2048 samples/s / (64 per device x 8 devices) = 4.0
    got = read("--batch_size 64 --num_gpus=8", "step 10: 2048.0 samples/sec")
    assert got["global_steps_per_s"][0] == pytest.approx(4.0)
    # A global batch is no per-device one: 3200 tokens/s per GPU is no rate over "global batch size: 16"
    got = read("global batch size: 16", "step 5: 3200 tokens/sec per GPU")
    assert got["global_steps_per_s"][0] is None
    # No batch stated but a clock: the examples/s stay as logged, no rate is invented (the analysis times the
    # record by its clock)
    got = read("[2025-04-13 23:41:12] Iter #3: 256.0 img/sec per GPU")
    assert got["examples_per_s"][0] == 256.0 and got["global_steps_per_s"][0] is None


def test_a_step_rate_gets_the_examples_per_second_of_the_batch_the_log_states() -> None:
    # Hugging Face Trainer's banner under torchrun on 4 GPUs: 32 per device, 128 in all; a step at 3.6 it/s
    # processes 128 examples: 3.6 x 128 = 460.8 examples/s (the banner's global batch, not the per-device 32)
    got = read(
        "  Instantaneous batch size per device = 32",
        "  Total train batch size (w. parallel, distributed & accumulation) = 128",
        " 40%|####      | 600/1500 [02:56<04:12,  3.60it/s]",
    )
    assert got["step"].to_list() == [600]
    assert got["global_steps_per_s"][0] == pytest.approx(3.6)
    assert got["examples_per_s"][0] == pytest.approx(460.8)
    # a JAX loop's global batch: 2.5 steps/s x 256 = 640 examples/s
    got = read(
        "I1122 10:12:05.118233 140234871 train.py:120] Global batch size 256 (32 per device x 8 devices), 750 steps",
        "I1122 10:13:23.168554 140234871 logging_writer.py:48] [100] steps_per_sec=2.500000, uptime=78.05",
    )
    assert got["examples_per_s"][0] == pytest.approx(640.0)
    # a per-device batch times a stated device count: 2.0 steps/s x 64 x 4 = 512 examples/s
    got = read("--batch_size 64 --num_gpus=4", "step 10: 2.0 steps/sec")
    assert got["examples_per_s"][0] == pytest.approx(512.0)
    # a per-device batch with no device count tells no examples per step: none invented
    got = read("  Instantaneous batch size per device = 32", " 40%|####      | 600/1500 [02:56<04:12,  3.60it/s]")
    assert got["examples_per_s"][0] is None


def test_examples_per_second_alone_beside_timed_step_records_is_no_step_record() -> None:
    # The cifar10_estimator sample's examples/s hook beside the Estimator's own step lines (tensorflow/models
    # issue 4090): its "step = 100" comes after the Estimator's "step = 101". It times no step (no batch size,
    # no time, no rate) and the log has timed step records of its own: it is no step record. The run is the
    # Estimator's 2 records at 101 and 201
    # (and the step-less 12.2695 folded into 201), one segment, no step going back.
    got = read(
        "INFO:tensorflow:Average examples/sec: 2947.37 (3187.28), step = 90",
        "INFO:tensorflow:global_step/sec: 6.63042",
        "INFO:tensorflow:loss = 2.8437786, step = 101 (8.626 sec)",
        "INFO:tensorflow:Average examples/sec: 2967.61 (3163.14), step = 100",
        "INFO:tensorflow:global_step/sec: 12.2695",
        "INFO:tensorflow:loss = 2.8192415, step = 201 (8.150 sec)",
    )
    assert got["step"].to_list() == [101, 201]
    assert got["global_steps_per_s"].to_list() == [6.63042, 12.2695]
    assert got["examples_per_s"].null_count() == 2
    # The same line is a record where the log states the batch (2967.61 / 256 = 11.592 steps/s) ...
    got = read("batch_size: 256", "INFO:tensorflow:Average examples/sec: 2967.61 (3163.14), step = 100")
    assert got["step"].to_list() == [100]
    assert got["global_steps_per_s"][0] == pytest.approx(2967.61 / 256)
    # ... and where examples/s lines are all the log has, they are its records (positions and losses, no rate)
    got = read("step: 2300/ 3305 loss:0.3651 imps:26.6 lr: 0.0343", "step: 2400/ 3305 loss:0.3563 imps:27.3 lr: 0.0312")
    assert got["step"].to_list() == [2300, 2400] and got["global_steps_per_s"].to_list() == [None, None]
    # ... or where its line has a time (glog's header): the analysis times it by its clock
    got = read("I0412 10:00:01.500000 140 hooks.py:42] Average examples/sec: 2967.61 (3163.14), step = 100")
    assert got["step"].to_list() == [100] and got["timestamp"][0] is not None


def test_a_step_less_rate_the_vocabulary_names_job_wide_is_a_record_by_its_line() -> None:
    got = read("INFO global_step/sec: 7.5")
    assert got["step"].to_list() == [None] and got["global_steps_per_s"].to_list() == [7.5]


@pytest.mark.parametrize(
    "line",
    [
        "Batch size: 64",  # a number after a word that is no position
        "max_steps: 1000, warmup_steps = 500, save_steps 250",  # a config dump
        "  learning_rate: 0.001\n",
        "Saving checkpoint at step 6000",  # a position with no measure
        "step 250: train loss 2.0400, val loss 2.0700",  # an evaluation: no measure
        "2021/03/04 10:11:12 started",  # a date
        "[11/01 11:27:04] loading 3.5 it/s",  # a date with its time, not an N/M counter
        "11490434/11490434 [==============================] - 0s 0us/step",  # a download bar in bytes
        "Downloading: 100%|██████████| 3/3 [00:01<00:00,  2.10it/s]",  # tqdm of a download
        "Map: 100%|██████████| 1000/1000 [00:00<00:00, 5000.00 examples/s]",  # tqdm of a data map
        "Evaluating: 100%|██████████| 50/50 [00:05<00:00,  9.80it/s]",  # tqdm of an evaluation
        "Epoch 3 (validation) acc=0.9:  40%|####      | 20/50 [00:02<00:03,  9.00it/s]",
        "{'loss': 5.3862, 'learning_rate': 1.37e-05, 'epoch': 3.14}",  # a logging dict: no step, no time
        " throughput_train : 153.458 seq/s",  # a step-less summary of examples
        "Epoch 3/10",
        "Total params: 1,234,567",
        "(12, 130, 0) val_items_per_sec : 49397.7",  # DLLogger: a validation's key
        "(12,) train_epoch_time : 436.6",  # DLLogger: an epoch's key, no iteration
    ],
)
def test_near_misses_are_never_records(line: str) -> None:
    assert read(line).height == 0


def test_ranks_nobody_labelled_are_tasks_not_copies() -> None:
    # Four processes print each report once, one after another, with their own logger times.
    lines = [
        f"INFO:tensorflow:2018-10-30 10:26:03.27{i}000: loss = 3.5, step = 5800 (145.44{8 + i // 3} sec)"
        for i in range(4)
    ] + [f"INFO:tensorflow:2018-10-30 10:28:28.95{i}000: loss = 3.4, step = 5900 (145.686 sec)" for i in range(4)]
    got = read(*lines).sort("source_offset")
    assert got["task_index"].to_list() == [0, 1, 2, 3, 0, 1, 2, 3]
    assert got["step"].to_list() == [5800] * 4 + [5900] * 4
    # A handler attached twice prints byte-identical copies: one task, copies of one record.
    twice = ["loss = 3.5, step = 5800 (145.448 sec)"] * 2 + ["loss = 3.4, step = 5900 (145.686 sec)"] * 2
    assert read(*twice)["task_index"].to_list() == [None] * 4


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        (["step: 5 | 2.0 steps/s", "Killed"], ("failed", "Killed")),
        # the bar the OS stopped is no part of the cause
        (["100/209 [01:00<01:00,  1.7s/it, loss=0.5]Killed"], ("failed", "Killed")),
        (["step: 5 | 2.0 steps/s", "run.sh: line 6:  3305 Killed    python train.py"], None),
        (["{'train_runtime': 85.4, 'train_samples_per_second': 9.3, 'train_steps_per_second': 1.17}"], None),
        (["`Trainer.fit` stopped: `max_steps=1000` reached."], ("finished", None)),
        (["(12, 40) train_iter_time : 2.5", "() run_time : 442.85"], ("finished", "() run_time : 442.85")),
        (["1\timages/sec: 205.3 +/- 0.0 (jitter = 0.0)\t9.111", "total images/sec: 204.75"], None),
    ],
)
def test_endings(lines: list[str], expected: tuple[str, str | None] | None) -> None:
    got = endings(*lines)
    assert got, got
    if expected is not None:
        event, reason = expected
        assert got[-1][0] == event
        if reason is not None:
            assert got[-1][1] == reason


def test_endings_say_ok_and_failed_by_their_meaning() -> None:
    assert endings("step 9: 2.0 steps/s", "run.sh: line 6:  3305 Killed    python train.py")[-1][0] == "failed"
    assert endings("{'train_runtime': 85.4, 'train_steps_per_second': 1.17}")[-1][0] == "finished"
    assert endings("1\timages/sec: 205.3 +/- 0.0 (jitter = 0.0)\t9.111", "total images/sec: 204.75")[-1][0] == (
        "finished"
    )
    # A warning that speaks of errors or memory is no failure.
    warning = "W tensorflow/core/common_runtime/bfc_allocator.cc:275] Allocator ran out of memory ... not a failure"
    assert endings("step: 5 | 2.0 steps/s", warning, "RuntimeWarning: error in callback, ignored") == []


# ----- properties --------------------------------------------------------------------------------

#: Positions, with what the grammar reads as the step from them (the template's {n}).
_POSITIONS = ["step{k}{n}", "iteration{k}{n}", "iter{k}{n}", "Step{k}{n}", "global_step{k}{n}", "Iteration{k}{n}"]
#: Measures with their value {x} in steps/s, and the converter from x to what is printed.
_MEASURES = [
    ("{v} steps/s", lambda x: x),
    ("steps/sec{k}{v}", lambda x: x),
    ("{v}it/s", lambda x: x),
    ("{v} s/it", lambda x: 1 / x),
    ("{v} ms/step", lambda x: 1000 / x),
    ("elapsed time per iteration (ms){k}{v}", lambda x: 1000 / x),
    ("time per step{k}{v}", lambda x: 1 / x),
]
#: Separators between a word and its number, and between statements: each set is equivalent.
_KEY_SEPS = [": ", ":", "=", " = ", " "]
_FIELD_SEPS = [" | ", ", ", "  ", "\t", " - ", " "]


def _envelope(prefix_example: str, message: str) -> str:
    if "<message>" in prefix_example:
        return prefix_example.replace("<message>", message)
    return prefix_example + message


@settings(max_examples=75, deadline=None)
@given(
    position=st.sampled_from(_POSITIONS),
    measure=st.sampled_from(_MEASURES),
    key=st.sampled_from(_KEY_SEPS),
    key2=st.sampled_from([s for s in _KEY_SEPS if s.strip()]),
    field=st.sampled_from(_FIELD_SEPS),
    step=st.integers(0, 10**9),
    rate=st.sampled_from([0.25, 0.8, 1.0, 2.5, 12.5, 40.0]),
    envelope=st.sampled_from([None, *ENVELOPES]),
)
def test_a_line_reads_the_same_under_any_envelope_and_separators(
    position, measure, key, key2, field, step, rate, envelope
) -> None:
    template, printed = measure
    value = f"{printed(rate):.6g}"
    # A unit-first measure needs a key separator with a mark (`steps/sec 12.5` after a number is ambiguous).
    message = position.format(k=key, n=step) + field + template.format(k=key2, v=value)
    line = message if envelope is None else _envelope(envelope.example, message)
    got = read(line, only="grammar")
    assert got.height == 1, (line, got)
    assert got["step"][0] == step
    # the printed value is rounded to 6 significant digits, so the rate is within 1e-5 of the hand figure
    assert got["global_steps_per_s"][0] == pytest.approx(rate, rel=1e-5)


@settings(max_examples=100, deadline=None)
@given(
    word=st.sampled_from(["Batch size", "batch_size", "max_steps", "num_epochs", "hidden size", "seed", "Epoch"]),
    key=st.sampled_from(_KEY_SEPS),
    n=st.integers(0, 10**6),
    envelope=st.sampled_from([None, *ENVELOPES]),
)
def test_a_config_line_is_never_a_record(word: str, key: str, n: int, envelope) -> None:
    message = f"{word}{key}{n}"
    line = message if envelope is None else _envelope(envelope.example, message)
    assert read(line).height == 0, line


@settings(max_examples=100, deadline=None)
@given(
    y=st.integers(1990, 2030),
    mo=st.integers(1, 12),
    d=st.integers(1, 28),
    h=st.integers(0, 23),
    m=st.integers(0, 59),
    sep=st.sampled_from(["/", "-"]),
)
def test_a_date_is_never_a_record(y: int, mo: int, d: int, h: int, m: int, sep: str) -> None:
    for line in (f"{y}{sep}{mo:02d}{sep}{d:02d} {h:02d}:{m:02d}:00", f"[{mo:02d}/{d:02d} {h:02d}:{m:02d}:00] ready"):
        assert read(line).height == 0, line


def test_a_log_pasted_indented_is_read_as_written() -> None:
    # Every line of the paste starts with the same four spaces: a layer of its own, stripped.
    lines = ["    Epoch 1/2", "    10/10 [==============================] - 2s 200ms/step - loss: 0.5", "    Epoch 2/2"]
    lines.append("    10/10 [==============================] - 2s 250ms/step - loss: 0.4")
    got = read(*lines)
    # steps (epoch - 1) * 10 + 10: 10 and 20; 1000 / 200 = 5, 1000 / 250 = 4
    assert got["step"].to_list() == [10, 20]
    assert got["global_steps_per_s"].to_list() == [5.0, 4.0]
    assert endings(*lines) == [("finished", "Epoch 2/2 finished")]


def test_keras_bars_counting_samples_and_download_bars() -> None:
    lines = [
        "11493376/11490434 [==============================] - 1s 0us/step",  # bytes: past its total, a reject
        "11490434/11490434 [==============================] - 1s 0us/step",  # bytes: a step time of 0, no record
        "Epoch 1/1",
        "60000/60000 [==============================] - 23s 400us/sample - loss: 0.2026",
    ]
    got = read(*lines)
    # one record, no step (samples are counted, the batch is not printed): 1e6 / 400 us = 2500 examples/s
    assert got.select("step", "examples_per_s", "interval_s").rows() == [(None, 2500.0, 23.0)]


def test_a_traceback_ending_the_log_fails_the_run_and_one_followed_by_steps_does_not() -> None:
    bar = " 42%|████▏     | 840/2000 [04:12<05:48,  3.33it/s]"
    frames = ['  File "train.py", line 9, in <module>', "    main()"]
    assert endings(bar + "Traceback (most recent call last):", *frames)[-1] == (
        "failed",
        "Traceback (most recent call last): ending the log (its exception line missing)",
    )
    assert endings(bar, "Traceback (most recent call last):", *frames, bar.replace("840", "841")) == []


# ----- a trainer's logging dicts and tqdm's clock ---------------------------------------------------------

_BAR = "{pct:3d}%|##        | {n}/{m} [{elapsed}<00:10,  1.00it/s]"


def test_a_logging_dict_gives_its_loss_to_the_bar_of_its_step() -> None:
    # Hugging Face's Trainer logs after the bar drew the step: each dict is the loss at the bar before it.
    got = read(
        _BAR.format(pct=10, n=10, m=100, elapsed="00:10"),
        "{'loss': 0.6821, 'grad_norm': 1.23, 'learning_rate': 4.9e-05, 'epoch': 0.1}",
        _BAR.format(pct=10, n=10, m=100, elapsed="00:11") + "\r" + _BAR.format(pct=20, n=20, m=100, elapsed="00:21"),
        "{'loss': 0.5, 'grad_norm': 1.0, 'learning_rate': 4.8e-05, 'epoch': 0.2}",
    )
    assert got["step"].to_list() == [10, 10, 20]
    # step 10's redraw is a copy of its record (the same time, the same loss: the step's last one stated)
    assert got["loss"].to_list() == [0.6821, 0.6821, 0.5]
    # tqdm's elapsed: 00:10 = 10 s, 00:21 = 21 s; the redraw at 00:11 keeps its step's first time, 10 s
    assert got["elapsed_s"].to_list() == [10.0, 10.0, 21.0]


def test_a_logging_dict_before_any_bar_lands_at_its_epoch_over_the_bars_total() -> None:
    # 2 epochs over a bar of 200 steps: 100 steps an epoch; epoch 2.0 is step 200, epoch 1.5 step 150 (no record)
    got = read(
        "  Num Epochs = 2",
        "{'loss': 0.41, 'grad_norm': 0.2, 'learning_rate': 1e-06, 'epoch': 1.5}",
        "{'loss': 0.3, 'grad_norm': 0.1, 'learning_rate': 0.0, 'epoch': 2.0}",
        _BAR.format(pct=100, n=200, m=200, elapsed="1:03:20"),
    )
    assert got["step"].to_list() == [200]
    assert got["loss"].to_list() == [0.3]
    # 1:03:20 = 3600 + 3 x 60 + 20 = 3800 s
    assert got["elapsed_s"].to_list() == [3800.0]
    # No epoch count stated: the dict's step is unknown and it stays unread
    got = read("{'loss': 0.3, 'epoch': 2.0}", _BAR.format(pct=100, n=200, m=200, elapsed="03:20"))
    assert got["loss"].to_list() == [None]


def test_a_logging_dict_alone_is_no_record_and_a_bar_with_its_own_time_keeps_it() -> None:
    assert read("{'loss': 0.6821, 'grad_norm': 1.23, 'learning_rate': 4.9e-05, 'epoch': 0.2}").height == 0
    # a line with an envelope time keeps that clock: the bar's elapsed is not used
    got = read("[2025-04-13 23:41:12] " + _BAR.format(pct=10, n=10, m=100, elapsed="00:10"))
    assert got["elapsed_s"].to_list() == [None] and got["timestamp"][0] is not None
    # a bar's elapsed times its own counter, not a "global step N" printed after it (Lightning's epoch bars)
    got = read("Epoch 2: : 115816it [7:02:37,  4.57it/s, loss=2.1]Epoch 2, global step 400000: 'val/AP' was not in")
    assert got["step"].to_list() == [400000] and got["elapsed_s"].to_list() == [None]


_MEGATRON = " iteration {n:8d}/{m:8d} | consumed samples: {n} | elapsed time per iteration (ms): 1250.0 |"


def test_work_announced_and_not_reached_is_no_ending_unless_the_log_says_why() -> None:
    done = "[after training is done] datetime: 2024-05-01 10:00:00"
    # iteration 150 of 2000 announced, then "training is done": not finished (the run is unknown, not ok)
    assert endings(_MEGATRON.format(n=140, m=2000), _MEGATRON.format(n=150, m=2000), done) == []
    # the work reached: 2000 of 2000
    assert endings(_MEGATRON.format(n=2000, m=2000), done)[-1][0] == "finished"
    # stopped short on purpose, as the log says (Megatron's --exit-interval)
    stopped = "exiting program at iteration 150"
    assert endings(_MEGATRON.format(n=150, m=2000), stopped, done)[-1][0] == "finished"
    # an ending that says why stands whatever the counter: Lightning's max_steps
    assert endings("step 30/1000 | 2.0 steps/s", "`Trainer.fit` stopped: `max_steps=30` reached.")[-1][0] == "finished"
    # a config dump's option names are no reason (Megatron prints exit_interval ... None among its arguments)
    assert endings("  exit_interval ................ None", _MEGATRON.format(n=150, m=2000), done) == []
