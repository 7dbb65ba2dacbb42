"""Statements of older and non-language-model stacks: a unit-less ``Time X`` column, a time whose key states the
steps it covers, char-rnn's ``time/batch``, and the endings of a Lua interpreter and of a job CLI's one-word
``exitCode``; with the near-misses of each refused.

The lines are short real lines or written in their shape, read from public issue threads and notes on 2026-12-06:
facebookarchive/fb.resnet.torch issue 17 and soumith/imagenet-multiGPU.torch issue 23 (Torch7's ImageNet trainers),
pytorch/examples issue 267 (its ImageNet example), NVIDIA-Merlin/HugeCTR issue 186, billzorn/mtg-rnn issue 1 (char-rnn,
Torch7), a Paperspace job transcript of char-rnn-tensorflow in the public code index, jcjohnson/torch-rnn issue 211.
Each expected value is worked out in a comment."""

from __future__ import annotations

import pytest

from tests.support.formats_support import endings, read

STEP = " | Epoch: [1][2/5005]    Time 0.400  Data 0.002  Err 7.0478  top1 100.000  top5  99.609\t"


@pytest.mark.parametrize(
    ("line", "step", "rate"),
    [
        # fb.resnet.torch: a Time column with two spaces before the next key: 1 / 0.400 s = 2.5 steps/s; the
        # position is iteration 2 of epoch 1
        (STEP, 2, 2.5),
        # imagenet-multiGPU.torch: the next column is "Err": 1 / 0.425 = 2.35294
        ("Epoch: [6][4563/10000]  Time 0.425 Err 6.8380 Top1-%: 0.39 LR 1e-02 DataLoadingTime 0.006", None, 1 / 0.425),
        # PyTorch's ImageNet example: the time and its running mean in parentheses; the current one counts,
        # 1 / 0.544 = 1.83824 (not 1 / 0.634)
        (
            "Epoch: [0][19950/20019] Time 0.544 (0.634)      Data 0.001 (0.111)      Loss 4.1225 (5.4584)",
            19950,
            1 / 0.544,
        ),
        # ... tab-separated
        ("Epoch: [0][200/5005]\tTime 0.550 (12.315)\tData 0.001 (11.761)\tLoss 6.7401 (6.8409)", 200, 1 / 0.55),
        # HugeCTR: a time over the 1000 iterations its key states: 1000 / 5.0 s = 200 steps/s at iteration 3000
        ("[02d07h54m43s][HUGECTR][INFO]: Iter: 3000 Time(1000 iters): 5.000000s Loss: 0.133510", 3000, 200.0),
        # char-rnn (Torch7): time/batch with its unit: 1 / 2.5 s = 0.4 steps/s at 997 of 12000
        (
            "997/12000 (epoch 4.154), train_loss = 0.55129399, grad/param norm = 1.9592e-01, time/batch = 2.5000s",
            997,
            0.4,
        ),
        # char-rnn-tensorflow: time/batch without a unit, seconds: 1 / 0.025 = 40 steps/s
        ("98/100 (epoch 49), train_loss = 3.239, time/batch = 0.025", 98, 40.0),
    ],
)
def test_step_times_of_columns_spans_and_batches(line: str, step: int | None, rate: float) -> None:
    got = read(line)
    assert got.height == 1, got
    if step is not None:
        assert got["step"][0] == step
    assert got["global_steps_per_s"][0] == pytest.approx(rate)


@pytest.mark.parametrize(
    "line",
    [
        # a run's total time, one space after a word: no column of its own
        "Epoch 3 finished  Total Time 3600 Loss 0.5",
        # an epoch's summary: "Time" is followed by a word, not by a number
        "End of epoch 2 / 25 \t Time Taken: 47.914\t",
        # an evaluation's time over the iterations it ran: no training step
        "[02d07h54m51s][HUGECTR][INFO]: Eval Time for 681 iters: 6.449376s",
        # a time of day in a column is no duration
        "step 5/10  Time 12:30:01  Loss 0.5",
        # Composer's batch counter under the time/ namespace, with a colon: no step time
        "[batch=5/5]: Train time/batch: 4",
    ],
)
def test_near_misses_of_time_columns_are_no_step_records(line: str) -> None:
    got = read(line)
    assert got.height == 0 or got["global_steps_per_s"].null_count() == got.height, got


@pytest.mark.parametrize(
    ("lines", "reason"),
    [
        # LuaJIT's uncaught error: the interpreter's line names it; its stack traceback follows
        (
            [
                "/usr/local/bin/luajit: /usr/local/share/lua/5.1/threads/threads.lua:255: out of range",
                "stack traceback:",
                "        [C]: in function 'error'",
            ],
            "/usr/local/bin/luajit: /usr/local/share/lua/5.1/threads/threads.lua:255: out of range",
        ),
        # plain Lua, Torch7's cutorch running out of memory
        (
            ["/home/u/torch/install/bin/lua: File.lua:351: cuda runtime error (2) : out of memory", "stack traceback:"],
            "/home/u/torch/install/bin/lua: File.lua:351: cuda runtime error (2) : out of memory",
        ),
        # LuaJIT's panic: no traceback at all
        (
            ["PANIC: unprotected error in call to Lua API (not enough memory)"],
            "PANIC: unprotected error in call to Lua API (not enough memory)",
        ),
        # a job CLI's one-word exit code (Paperspace's "Job Stopped, exitCode N")
        (["Job Stopped, exitCode 1"], "Job Stopped, exitCode 1"),
    ],
)
def test_a_lua_error_or_a_non_zero_exitcode_after_steps_fails_the_run(lines: list[str], reason: str) -> None:
    assert endings(STEP, *lines) == [("failed", reason)]


def test_a_lua_error_that_steps_follow_is_a_run_started_again() -> None:
    error = "/usr/local/bin/luajit: train.lua:99: bad argument #2 to '?' (out of range)"
    assert endings(STEP, error, "stack traceback:", STEP.replace("[2/5005]", "[3/5005]")) == []


def test_a_zero_exitcode_finishes_the_run_and_lua_words_in_messages_fail_nothing() -> None:
    assert endings(STEP, "Job Stopped, exitCode 0") == [("finished", "Job Stopped, exitCode 0")]
    # a Lua script's name in a message, a word "traceback" in prose: no ending
    assert endings(STEP, "=> Loading model from lua: models/resnet.lua", "printing the stack traceback: off") == []
