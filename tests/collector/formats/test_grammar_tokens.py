"""A language model's throughput in tokens/s: stored as its examples/s with ``examples_unit`` ``tokens`` (so a
summary prices tokens, not examples), and never divided by a batch the log states in sequences."""

from __future__ import annotations

from tests.support.formats_support import parse


def _read(*lines: str) -> list[tuple[object, ...]]:
    got = parse(list(lines))
    return got.steps.select("step", "global_steps_per_s", "examples_per_s", "examples_unit").rows()


def test_tokens_per_second_are_examples_counted_in_tokens() -> None:
    # nanotron's keys (huggingface/nanotron issue 390, 2025-10-17) and the plain forms: the unit is the words the
    # examples/s measure matched; a stated steps/s stays the rate
    assert _read("step 10 | 5.0 steps/s | tokens/s: 40960", "step 20 | 5.0 steps/s | tokens/s: 40960") == [
        (10, 5.0, 40960.0, "tokens"),
        (20, 5.0, 40960.0, "tokens"),
    ]
    assert _read("iteration 10 | 0.2 s/it | tokens_per_sec: 22.8K", "iteration 20 | 0.2 s/it | tokens_per_sec: 22.8K")[
        0
    ] == (10, 5.0, 22800.0, "tokens")
    # samples are examples: no unit of their own
    assert _read("step 40 | samples/sec: 8.0 | step_time 0.2", "step 50 | samples/sec: 8.0 | step_time 0.2")[0] == (
        40,
        5.0,
        8.0,
        None,
    )


def test_tokens_per_second_over_a_batch_in_sequences_give_no_steps_per_second() -> None:
    # 40,960 tokens/s over a batch of 8 sequences is not 5,120 steps/s (the tokens of a sequence are unknown): the
    # steps/s is left to the clock (here the logger's, 10 steps in 2 s: 5 steps/s in the analysis)
    lines = [
        f"2024-01-01 10:00:{2 * k:02d} INFO step {10 * (k + 1)} | tokens/s: 40960 | batch_size: 8" for k in range(3)
    ]
    assert _read(*lines) == [(10 * (k + 1), None, 40960.0, "tokens") for k in range(3)]


def test_the_spellings_of_tokens_per_second_that_llm_trainers_print() -> None:
    # the key with its number alone, the words spelled out; never a word that only holds the letters (`tokenizer
    # 5`, `stokes 3`): 8 steps/s stated on each line stays the rate. (`tok/s` is not read: OpenNMT's `900/1000 tok/s`
    # counts source and target tokens, and llm.c's lines are timed by their `ms`.)
    for measure in ("tokens/s 65536", "tokens_per_sec 65536", "tokens per second: 65536"):
        assert _read(f"step 10 | 8.0 steps/s | {measure}", f"step 20 | 8.0 steps/s | {measure}")[0] == (
            10,
            8.0,
            65536.0,
            "tokens",
        ), measure
    assert _read("step 10 | 8.0 steps/s | tokenizer 5 | stokes 3", "step 20 | 8.0 steps/s | tokenizer 5")[0] == (
        10,
        8.0,
        None,
        None,
    )


def test_samples_per_second_beside_tokens_per_second_are_the_examples() -> None:
    # the samples a stated batch counts give steps/s (80 samples/s / 8 = 10 steps/s), whichever the line says first;
    # the tokens/s beside them is another unit of the same work. (Two statements of one spelling, `tokens/s 40960 |
    # samples/s 80`, are one measure's: its first is read; left.)
    for order in ("tokens_per_sec: 40960.0 | samples/s: 80.0", "samples/s: 80.0 | tokens_per_sec: 40960.0"):
        lines = [f"step {10 * k} | loss 2.5 | global_batch_size 8 | {order}" for k in (1, 2, 3)]
        assert _read(*lines)[0] == (10, 10.0, 80.0, None), order
