"""Launcher, platform and logger layers of today's trainers read as envelopes; a name column no rule names
learnt per file; endings that launchers print. Each layer: the message left byte for byte, the record read the
same as without it; near-misses refused."""

from __future__ import annotations

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.collector.formats.test_envelopes import read
from tests.support.formats_support import frame, parse
from tierscope.collector.formats.envelopes import learn_names, split_envelopes

MSG = "iter 120: loss 3.4117, time 562.11ms"


@pytest.mark.parametrize(
    "line",
    [
        "[Epoch 10/250][Iter 2040/2068][lr 0.001000][Loss: obj 8.60 || time: 0.93]",  # the message's own fields
        "Tue is the day the job ran: 3 steps",  # a weekday is no ctime date
        "(pid file written to /tmp/x.pid) step 3",  # no Ray prefix
        "[Rank 0 of 8] step 3",  # DeepSpeed's field is exactly 'Rank N'
        "08/01/2025 was the day",  # a date with no logger fields after it
        "rank0: step 3",  # torchrun's tag is bracketed
        "Dec 6 was a good day[1]: step 3",  # a month and a bracket are no syslog header
        "Training: 2021-07-03 00:09:37-05:00 step 3",  # a zone's offset, no Python logging milliseconds
        "20-05-22 17:42:09 step 3",  # a two-digit year with no level after it
        "stdout_log: /tmp/run.log step 3",  # a key named after a stream, no harness label
        "redirect stdout: step 3",  # the label opens the line or it is none
    ],
)
def test_near_misses_keep_their_text(line: str) -> None:
    got = read(line)
    assert got["line"] == line and got.get("envelope") is None


# --- a record reads the same behind any of these layers --------------------------------------

_LAYERS = [
    "Tue Sep  8 09:24:{s:02d} 2020[{i}]<stdout>:",
    "[1,mpirank:{i},algo-1]<stdout>:",
    "[rank{i}]: ",
    "[default{i}]:",
    "[trainer{i}|0]:",
    "(RayTrainWorker pid=4{i}, ip=10.0.0.{i}) ",
    "[INFO|trainer.py:1145] 2021-05-20 20:16:{s:02d},037 >> ",
    "08/01/2025 23:27:{s:02d} - INFO - __main__ - ",
    "[08/27/2018 06:07:{s:02d} INFO 140026571642688] ",
    "[2022-03-11 02:06:{s:02d},985] [INFO] [logging.py:69:log_dist] [Rank 0] ",
    "Dec  6 10:00:{s:02d} gpu-node-3 python3[4{i}]: ",
    "2023-05-03T14:25:{s:02d}.123Z\t",
    "node{i}-gpu: ",  # a name column no rule names, learnt from the file
    "Training: 2021-07-03 00:09:{s:02d},089-",  # a word, Python logging's time and '-' (arcface_torch)
    "20-05-22 17:42:{s:02d}.481 - INFO: ",  # a two-digit year before the level (BasicSR)
    "stdout: [2022-12-20 08:26:{s:02d},101] [INFO] [timer.py:197:stop] ",  # a harness's stream label, then a logger
]
_RECORDS = [
    "iter {n}: loss {loss:.4f}, time {ms:.2f}ms",
    "Iter #{n}: {x:.1f} img/sec per GPU",
    "global step {n}: loss = {loss:.4f} ({sec:.3f} sec/step)",
]


def _reading(lines: list[str]) -> list[tuple[object, ...]]:
    steps = parse(lines).steps
    cols = [c for c in ("step", "loss", "global_steps_per_s", "examples_per_s") if c in steps.columns]
    return steps.select(cols).rows()


@settings(max_examples=30, deadline=None)
@given(
    layer=st.sampled_from(_LAYERS),
    record=st.sampled_from(_RECORDS),
    first=st.integers(1, 10_000),
    index=st.integers(0, 7),
    loss=st.floats(0.01, 9.0),
    ms=st.floats(10.0, 900.0),
)
def test_a_record_reads_the_same_behind_each_layer(
    layer: str, record: str, first: int, index: int, loss: float, ms: float
) -> None:
    # four records, so a learnt name column opens enough lines of the file to be its layout
    bare = [record.format(n=first + k, loss=loss, ms=ms, x=1000 / ms, sec=ms / 1000) for k in range(4)]
    wrapped = [layer.format(i=index, s=k) + text for k, text in enumerate(bare)]
    assert _reading(wrapped) == _reading(bare) and _reading(bare)


# --- a test harness's stream label -------------------------------------------------------------------


def test_a_harness_stream_label_is_stripped_and_the_logger_time_behind_it_read() -> None:
    # deepspeedai/DeepSpeed issue 2629 (2022-12-20): DeepSpeed 0.7.7's timer lines re-printed by accelerate's
    # execute_subprocess_async with 'stdout: ' before them; without the label's layer the logger's time was
    # never read, and the lines had no clock.
    lines = [
        "stdout: [2022-12-20 08:26:26,101] [INFO] [timer.py:197:stop] 0/17, "
        "RunningAvgSamplesPerSec=158.31157878546472, CurrSamplesPerSec=159.628891629629, MemAllocated=1.75GB",
        "stdout: [2022-12-20 08:26:26,325] [INFO] [timer.py:197:stop] 0/18, "
        "RunningAvgSamplesPerSec=157.41495682912333, CurrSamplesPerSec=145.0889530760849, MemAllocated=1.75GB",
        "stdout: [2022-12-20 08:26:26,531] [INFO] [timer.py:197:stop] 0/19, "
        "RunningAvgSamplesPerSec=157.4379014217289, CurrSamplesPerSec=157.80592669930536, MemAllocated=1.75GB",
    ]
    got = parse(lines).steps
    # steps 17-19 (the counter that moves; three lines tell it from the epoch's 0) at the logger's times, UTC
    assert got.get_column("step").to_list() == [17, 18, 19]
    assert [t.isoformat() for t in got.get_column("timestamp").to_list()] == [
        "2022-12-20T08:26:26.101000+00:00",
        "2022-12-20T08:26:26.325000+00:00",
        "2022-12-20T08:26:26.531000+00:00",
    ]
    # huggingface/accelerate issue 2084 (2023-10-26): the harness labels the child's stderr the same way; the
    # label says nothing of the task (one process writes both streams)
    row = read("stderr: [2023-10-26 10:00:01,000] [INFO] [comm.py:637:init_distributed] cdb=None")
    assert row["line"] == "cdb=None" and row["envelope"] == "stream-label+bracketed-time+bracketed-fields"
    assert row["role"] is None and row["task_index"] is None


# --- a name column no rule names -----------------------------------------------------------------


def test_a_name_column_repeated_on_every_line_is_learnt_and_tells_the_hosts_apart() -> None:
    lines = [
        "x1000c0s6b0n0: iter 10: loss 3.1000, time 500.00ms",
        "x1000c0s7b0n0: iter 10: loss 3.2000, time 510.00ms",
        "x1000c0s6b0n0: iter 20: loss 3.0000, time 500.00ms",
        "x1000c0s7b0n0: iter 20: loss 3.1000, time 510.00ms",
    ]
    got = parse(lines).steps
    # two hosts, two records each; 500 ms a step is 2 steps/s, 510 ms 1.96
    assert got.height == 4
    rows = sorted(got.select("step", "global_steps_per_s").rows())
    assert [r[0] for r in rows] == [10, 10, 20, 20]
    assert [r[1] for r in rows] == pytest.approx([1000 / 510, 2.0, 1000 / 510, 2.0])
    body, _ = split_envelopes(frame(lines), 2024)
    assert body.get_column("tag").to_list() == ["x1000c0s6b0n0", "x1000c0s7b0n0"] * 2


@pytest.mark.parametrize(
    "lines",
    [
        ["loss: 1.0", "loss: 0.9", "loss: 0.8", "loss: 0.7"],  # a word, no name
        ["step_1: ok", "step_2: ok", "step_3: ok", "step_4: ok"],  # a different first word on each line
        ["Epoch 1: 10%", "Epoch 1: 20%", "Epoch 1: 30%", "Epoch 1: 40%"],  # a phrase, no name
        ["0: a", "0: b", "1: c", "1: d"],  # srun's rank numbers: a named rule's
        ["node1: a", "b", "c", "d"],  # one line in four is no layout
    ],
)
def test_columns_that_are_messages_are_no_names(lines: list[str]) -> None:
    assert learn_names(frame(lines)) == ()


# --- endings launchers and platforms print ----------------------------------------------------------

STEP = "iter 120: loss 3.4117, time 562.11ms"


@pytest.mark.parametrize(
    ("line", "event"),
    [
        ("Process finished with exit code -1", "failed"),
        ("Process finished with exit code 137 (interrupted by signal 9: SIGKILL)", "failed"),
        ("  exitcode  : -9 (pid: 907695)", "failed"),
        ("[2024-01-03 10:00:00,000] [ERROR] [launch.py:321:sigkill_handler] Killing subprocess 1", None),
        ("[ERROR] [launch.py:321:sigkill_handler] ['python', 'train.py'] exits with return code = -9", "failed"),
        ("torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ", "failed"),
        ("[rank0]:[E606 09:09:08.164985384 ProcessGroupNCCL.cpp:757] [Rank 0] Watchdog caught collective "
         "operation timeout: WorkNCCL(SeqNum=1, OpType=ALLGATHER) ran for 600004 milliseconds", "failed"),
        ("**Killed**", "failed"),
        ("2022-09-21 13:21:05,188 sagemaker-training-toolkit INFO     Reporting training SUCCESS", "finished"),
        ("2022-09-21 13:21:05,188 sagemaker-training-toolkit ERROR    Reporting training FAILURE", "failed"),
        ("2020-05-24 21:14:22 Completed - Training job completed", "finished"),
        ("slurmstepd: error: *** JOB 42221 ON clr1247 CANCELLED AT 2022-04-14T16:20:46 DUE TO TIME LIMIT ***",
         "failed"),
        ("slurmstepd: error: Detected 1 oom_kill event in StepId=12347.batch", "failed"),
        ("[2023-05-01 10:00:00,000] [INFO] [launch.py:350:main] Process 649291 exits successfully.", "finished"),
        ("2024-06-16 22:33:09,844 SUCC cli.py:63 -- Job 'rayjob-pytorch-mnist-l6ccc' succeeded", "finished"),
        ("2024-06-16 22:33:09,844 ERR cli.py:63 -- Job 'rayjob-pytorch-mnist-l6ccc' failed", "failed"),
        # near-misses: an elastic job's worker leaving, a warning, a code zero
        ("Process 3 exit with status code 134.", None),
        ("NCCL WARN Call to connect returned Connection refused, retrying", None),
        ("Process finished with exit code 0", "finished"),
    ],
)  # fmt: skip
def test_endings_after_a_step(line: str, event: str | None) -> None:
    got = parse([STEP, line]).events
    assert got.get_column("event").to_list() == ([event] if event else [])


def test_a_collective_timeout_that_steps_follow_was_recovered_from() -> None:
    lines = [
        STEP,
        "[rank0]:[E606 09:09:08.1 ProcessGroupNCCL.cpp:757] Watchdog caught collective operation timeout",
        STEP,
    ]
    assert parse(lines).events.height == 0


_BAR = "  3%|▎         | 9/352 [40:55<25:10:16, 264.19s/it]"


def test_a_traceback_glued_to_a_bar_whose_frames_end_the_log_fails_the_run() -> None:
    lines = [
        f"{_BAR}[rank1]: Traceback (most recent call last):",
        '[rank1]:   File "/app/train.py", line 23, in <module>',
        "[rank1]:     launch()",
    ]
    got = parse(lines)
    assert got.steps.get_column("step").to_list() == [9]
    assert got.events.select("event", "source_offset").rows() == [("failed", 3)]
    # the same frames with a record after them: the log went on
    assert parse([*lines, "  3%|▎         | 10/352 [41:20<25:10:16, 264.10s/it]"]).events.height == 0


def test_a_bar_refreshed_at_one_position_is_one_process_not_two_ranks() -> None:
    lines = []
    for n in (30497, 30498, 30499):
        for loss in ("0.00492", "0.0195"):
            lines.append(f"Steps:  38%|███▊      | {n}/80000 [5:49:06<14:40:17,  1.07s/it, loss={loss}, lr=1e-6]")
    got = parse(lines).steps
    assert set(got.get_column("role").drop_nulls().to_list()) == set()
    assert sorted(set(got.get_column("step").to_list())) == [30497, 30498, 30499]


def test_batch_facts_behind_a_rank_tag_give_the_step_rate() -> None:
    # 600 images/s per GPU over a per-GPU batch of 32 on 8 GPUs: 600 * 8 / (32 * 8) = 18.75 steps/s
    lines = ["[1,0]<stdout>:Batch size: 32", "[1,0]<stdout>:Number of GPUs: 8"]
    lines += [f"[1,0]<stdout>:Iter #{n}: 600.0 img/sec per GPU" for n in range(3)]
    got = parse(lines).steps
    assert got.get_column("global_steps_per_s").to_list() == pytest.approx([18.75] * 3)


def test_series_frame_helper_keeps_line_numbers() -> None:
    assert frame(["a", "b"]).get_column("source_offset").to_list() == [1, 2]
    assert isinstance(frame(["a"]), pl.DataFrame)


# --- a batch without the newer layers is read by the smaller regex, with the same result ------------------


@settings(max_examples=200, deadline=None)
@given(layer=st.sampled_from(_LAYERS), inner=st.sampled_from(["", *_LAYERS]), index=st.integers(0, 9))
def test_a_line_the_smaller_regex_reads_otherwise_passes_the_newer_gate(layer: str, inner: str, index: int) -> None:
    from tierscope.collector.formats import envelopes

    line = layer.format(i=index, s=index) + inner.format(i=index, s=index) + MSG
    series = pl.Series([line])
    full = series.str.extract(envelopes._ENVELOPE, 1).item()
    older = series.str.extract(envelopes._ENVELOPE_OLDER, 1).item()
    if full != older:
        assert series.str.contains(envelopes._NEWER_GATE).item()


# --- a leading number and a colon: a rank or a position -----------------------------------------------


def test_a_leading_number_that_grows_line_by_line_is_a_position_not_a_rank() -> None:
    lines = [
        "Loaded: 0.000041 seconds",
        "1: 695.312500, 695.312500 avg, 0.000000 rate, 3.214000 seconds, 64 images",
        "Loaded: 0.000040 seconds",
        "2: 690.100000, 694.791000 avg, 0.000000 rate, 3.198000 seconds, 128 images",
        "3: 688.000000, 694.112000 avg, 0.000000 rate, 3.201000 seconds, 192 images",
    ]
    body, facts = split_envelopes(frame(lines), 2024)
    # 1, 2, 3 never repeat: no rank, the line is left whole for the grammar
    assert body.get_column("line").to_list() == lines
    assert body.get_column("tag").null_count() == len(lines)
    assert facts is None or facts.filter(pl.col("envelope").str.contains("rank")).height == 0


def test_a_leading_number_that_repeats_among_few_values_is_still_a_rank() -> None:
    lines = [
        "0: step 10, loss 2.5, 0.50 sec/step",
        "1: step 10, loss 2.6, 0.52 sec/step",
        "0: step 20, loss 2.4, 0.50 sec/step",
        "1: step 20, loss 2.5, 0.52 sec/step",
    ]
    body, _ = split_envelopes(frame(lines), 2024)
    # two values over four lines: srun's ranks 0 and 1, stripped
    assert body.get_column("tag").to_list() == ["worker/0", "worker/1"] * 2
    assert body.get_column("line").to_list()[0] == "step 10, loss 2.5, 0.50 sec/step"


def test_what_a_file_head_says_of_its_leading_numbers_holds_for_its_later_batches() -> None:
    state: dict[str, object] = {}
    head = [f"{i}: 690.0, 694.0 avg, 0.001 rate, 3.2 seconds, {64 * i} images" for i in range(1, 5)]
    split_envelopes(frame(head), 2024, state=state)
    # a later batch that happens to hold one number twice (a restart) is still read as positions
    later, _ = split_envelopes(frame(["1: 700.0, 700.0 avg", "1: 700.0, 700.0 avg"]), 2024, state=state)
    assert later.get_column("tag").null_count() == 2
