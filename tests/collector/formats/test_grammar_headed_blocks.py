"""A report printed as a block under a header that says its position is read from its first occurrence; a block
whose header says no position, or names an evaluation or a summary, or that measures nothing, is not.

The reports are quoted from real logs (source and date beside each); each expected value is worked out by hand."""

from __future__ import annotations

import pytest

from tests.support.formats_support import read

# Mozilla TTS's trainer (Tacotron2), quoted in github.com/mozilla/TTS/issues/460 (2020-07-13)
_TTS = [
    "   --> STEP: 309/390 -- GLOBAL_STEP: 91150",
    "     | > decoder_loss: 0.20866  (0.19815)",
    "     | > postnet_loss: 0.17622  (0.16908)",
    "     | > loss: 0.38516",
    "     | > align_error: 0.43465  (0.49214)",
    "     | > step_time: 3.02",
    "     | > loader_time: 0.01",
    "     | > lr: 0.00010",
    "",
    "   --> STEP: 334/390 -- GLOBAL_STEP: 91175",
    "     | > decoder_loss: 0.20624  (0.19872)",
    "     | > postnet_loss: 0.17365  (0.16941)",
    "     | > loss: 0.38027",
    "     | > align_error: 0.43522  (0.48506)",
    "     | > step_time: 1.67",
    "     | > loader_time: 0.01",
    "     | > lr: 0.00010",
    " ! Run is kept in /home/andre/projects/tts-output/ljspeech-July-08-2020_11+18AM-3366328",
]

# rsl_rl's OnPolicyRunner report, quoted in github.com/isaac-sim/IsaacLab/issues/5084 (read 2026-12-06)
_RSL_RL = [
    "################################################################################",
    "                            Learning iteration 1/10                              ",
    "",
    "                            Total steps: 512 ",
    "                       Steps per second: 1581 ",
    "                        Collection time: 0.102s ",
    "                          Learning time: 0.060s ",
    "                        Mean value loss: 19.6685",
    "                            Mean reward: -4.08",
    "--------------------------------------------------------------------------------",
    "                         Iteration time: 0.16s",
]


def test_two_blocks_under_their_step_headers_are_two_records() -> None:
    got = read(*_TTS)
    # the header's global step; each at its header's line (2 and 10)
    assert got.get_column("step").to_list() == [91150, 91175]
    assert got.get_column("source_offset").to_list() == [1, 10]
    # step_time 3.02 s -> 1 / 3.02 = 0.33113 steps/s; 1.67 s -> 0.59880
    assert got.get_column("global_steps_per_s").to_list() == pytest.approx([1 / 3.02, 1 / 1.67])


def test_one_block_under_its_iteration_banner_is_one_record() -> None:
    got = read(*_RSL_RL)
    assert got.get_column("step").to_list() == [1]
    # Iteration time 0.16 s -> 6.25 iterations/s (the learning iteration is the step)
    assert got["global_steps_per_s"][0] == pytest.approx(6.25)


@pytest.mark.parametrize(
    "lines",
    [
        # a config dump (detectron2's ``Running with full config:``, quoted in
        # github.com/Unity-Technologies/Indoor-Pet-Detection/issues/10, 2020-04): no header states a position and
        # nothing measures
        [
            "SOLVER:",
            "  BASE_LR: 0.02",
            "  CHECKPOINT_PERIOD: 5000",
            "  MAX_ITER: 90000",
            "  STEPS:",
            "  - 60000",
            "  - 80000",
            "  WARMUP_ITERS: 1000",
        ],
        # a position header over figures that measure nothing (no time, no rate)
        ["step 500", "  loss: 0.41", "  lr: 0.0001", "  grad_norm: 1.2"],
        # an evaluation's block: its header names it
        ["Evaluation at step 500", "  eval_loss: 0.52", "  eval_runtime: 12.5", "  eval_time: 12.5s"],
        # a summary at the end: its header names it
        ["Final results at step 1000", "  total time: 300.0s", "  time per step: 0.30s", "  loss: 0.2"],
        # settings under a position: its header names them, or is a key of a YAML dump itself
        ["Config for step 5:", "  step_time: 3.0", "  batch_size: 32", "  max_steps: 1000", "Loading data..."],
        ["step: 5", "lr: 0.1", "batch_size: 32", "time: 3", "warmup_steps: 100"],
    ],
)
def test_blocks_that_are_no_step_report_are_not_read(lines: list[str]) -> None:
    assert read(*lines).height == 0


def test_a_progress_bar_heads_no_block() -> None:
    # finetune's (TF1) tqdm bar before Keras-like figures, as in
    # github.com/IndicoDataSolutions/finetune/issues/339 (2019-07-29): the bar's drawings are records of their own,
    # each its counter and its rate, never a header over the lines after it
    got = read(
        "Epoch 1/3:  10%|#         | 10/100 [00:05<00:45,  2.00it/s]",
        "loss: 0.52",
        "time: 5.0",
        "Epoch 1/3:  20%|##        | 20/100 [00:10<00:40,  2.00it/s]",
    )
    assert got.get_column("step").to_list() == [10, 20]


def test_an_indented_block_ends_at_its_first_line_that_is_not_indented() -> None:
    # a block's figures under ``--> STEP: 1/10`` (indented, as Mozilla TTS prints them), then a line of the log's
    # own at the margin that states a time: not the block's; without it the block has one figure, too few
    got = read("   --> STEP: 1/10 -- GLOBAL_STEP: 100", "     | > loss: 0.5", "step_time: 2.0")
    assert got.height == 0
