"""Examples per second named by a word with the unit in parentheses after it: ``Speed (samples/sec) 43672.9658``.

DGL's examples print their throughput so (dmlc/dgl ``examples/pytorch/graphsage``: ``Epoch {:05d} | Step {:05d} |
Loss {:.4f} | Train Acc {:.4f} | Speed (samples/sec) {:.4f} | GPU {:.1f} MB``); the lines below are quoted from a
run's log in SijingYu/GraphSAGE_MultiGPU ``loss.md`` (read 2026-12-07) or written in the same shape."""

from __future__ import annotations

import pytest

from tests.support.formats_support import parse

DGL = [
    "Epoch 00000 | Step 00000 | Loss 6.1411 | Train Acc 0.0160 | Speed (samples/sec) nan | GPU 296.2 MB",
    "Epoch 00000 | Step 00020 | Loss 2.6650 | Train Acc 0.3400 | Speed (samples/sec) 43672.9658 | GPU 401.2 MB",
    "Epoch Time(s): 8.7072",
]


def test_a_unit_in_parentheses_after_its_word_is_examples_per_second() -> None:
    got = parse(DGL)
    # step 20 states 43672.9658 samples/s, kept as logged (no batch stated, no clock: no steps/s); its loss 2.6650
    assert got.steps.select("source_offset", "step", "examples_per_s", "loss", "global_steps_per_s").rows() == [
        (2, 20, 43672.9658, 2.665, None)
    ]
    # DGL's first report averages no interval yet: its 'nan' is no rate, a reject at its own line, never a crash
    assert got.rejects.select("source_offset").to_series().to_list() == [1]


def test_the_unit_in_parentheses_may_be_followed_by_a_colon_and_say_tokens_per_device() -> None:
    got = parse(
        [
            "step 10 | loss 1.0 | throughput (tokens/s/gpu): 515.0",
            "step 20 | loss 0.9 | throughput (tokens/s/gpu): 520.0",
        ]
    )
    # 515.0 and 520.0 tokens/s as logged, counted in tokens
    assert got.steps.select("step", "examples_per_s", "examples_unit").rows() == [
        (10, 515.0, "tokens"),
        (20, 520.0, "tokens"),
    ]


@pytest.mark.parametrize(
    "line",
    [
        "Batch size (samples) 64 step 10",  # a count of examples, no time
        "step 10 files (images/s) 12/20 done",  # the number after it is a counter's, not a rate
    ],
)
def test_near_misses_are_no_examples_per_second(line: str) -> None:
    assert parse([line]).steps.height == 0
