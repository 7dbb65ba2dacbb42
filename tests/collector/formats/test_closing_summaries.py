"""A log's closing summary of the whole run's speed is a ``whole_run_rate`` event with its figures as JSON, never a
step record; an evaluation's rates, a loss, a rate per device and a value that is no number are not read."""

from __future__ import annotations

import json

import polars as pl
import pytest

from tierscope.collector.formats import parse_lines
from tierscope.contract import WHOLE_RUN_RATE


def lines(*texts: str) -> pl.DataFrame:
    return pl.DataFrame({"source_offset": list(range(1, len(texts) + 1)), "line": list(texts)},
                        schema={"source_offset": pl.Int64, "line": pl.String})  # fmt: skip


def stated(*texts: str) -> list[dict[str, float]]:
    """The figures of each whole-run event of ``texts``, in line order; asserts no step record was made."""
    got = parse_lines(lines(*texts))
    assert got.steps.height == 0
    if got.events.height == 0:
        return []
    events = got.events.filter(pl.col("event") == WHOLE_RUN_RATE).sort("source_offset")
    return [json.loads(d) for d in events["detail"]]


# Real closing lines, each with the figures a hand reads off it.
REAL = [
    # Hugging Face Trainer's closing dict, xinyuwei-david/david-share Multimodal-Models/SFT-Phi-4-mm/readme.md (read
    # 2026-12-07): its bar ends 1170/1170 [1:20:35], 1170 steps / 4835.1682 s = 0.24198 -> the printed 0.242 steps/s
    (
        "{'train_runtime': 4835.1682, 'train_samples_per_second': 31.023, 'train_steps_per_second': 0.242, "
        "'train_loss': 0.44810804087891537, 'epoch': 2.99}",
        {"global_steps_per_s": 0.242, "examples_per_s": 31.023},
    ),
    # its log_metrics form, a README of a ru-gpts fine-tune quoting it (stored GitHub index, read 2026-12-07):
    # 3595 samples x 3 epochs / 1557.44 s (0:25:57.44) = 6.925 samples/s, batch 1: 6.925 steps/s
    ("  train_samples_per_second =      6.925", {"examples_per_s": 6.925}),
    ("  train_steps_per_second   =      6.925", {"global_steps_per_s": 6.925}),
    # ... behind PaddleNLP's logger envelope (a PaddleNLP pretraining log quoted in a README, read 2026-12-07)
    ("[    INFO] -   train_steps_per_second   =     4.6305", {"global_steps_per_s": 4.6305}),
    # detectron2's IterationTimer, a tutorial's log of 2020-01-29 (a Jekyll post "Detectron2 - How to use Instance
    # Image Segmentation for Building Recognition", read 2026-12-07): 1 / 0.6804 s = 1.46972 steps/s (997 iterations
    # / 678 s, its whole seconds, = 1.47050, 0.05 % apart)
    (
        "[01/29 06:25:28 d2.engine.hooks]: Overall training speed: 997 iterations in 0:11:18 (0.6804 s / it)",
        {"global_steps_per_s": 1 / 0.6804},
    ),
    # tf_cnn_benchmarks' total, tensorflow/benchmarks PR 63 (2017-10-05): images/s alone (no steps/s: the batch
    # is on another line)
    ("total images/sec: 138.95", {"examples_per_s": 138.95}),
    # Horovod's pytorch synthetic benchmark, horovod/horovod issue 712 (2018-12-19): job-wide, 4 x 108.2 = 432.8
    ("Total img/sec on 4 GPU(s): 432.8 +-4.9 ", {"examples_per_s": 432.8}),
]


@pytest.mark.parametrize(("line", "figures"), REAL, ids=[f"real{i}" for i in range(len(REAL))])
def test_a_closing_summary_states_the_whole_runs_rate(line: str, figures: dict[str, float]) -> None:
    (got,) = stated(line)
    assert got.keys() == figures.keys()
    assert all(got[k] == pytest.approx(v, rel=1e-12) for k, v in figures.items())


NEAR_MISSES = [
    # an evaluation's rates (the same ru-gpts README's ***** eval metrics *****): not the training's
    "  eval_samples_per_second =     38.734",
    "  eval_steps_per_second   =     38.734",
    # the summary's loss and runtime: no rate
    "  train_loss               =     1.8419",
    "  train_runtime            = 0:25:57.44",
    # a rate per device (horovod issue 712, the line before the total): not the job's
    "Img/sec per GPU: 108.2 +-1.2",
    # a step's logging dict that carries the runtime so far (Unsloth's, quoted in unslothai/unsloth PR 4547)
    "{'loss': '14.88', 'grad_norm': '1.2', 'train_runtime': '110.7', 'train_tokens_per_second': '2583'}",
    # constructed: a config dump's key with no number, and a figure that is no speed
    "{'train_steps_per_second': None, 'train_samples_per_second': None}",
    "total images/sec: nan",
    "total images/sec: 0.00",
]


@pytest.mark.parametrize("line", NEAR_MISSES, ids=[f"miss{i}" for i in range(len(NEAR_MISSES))])
def test_what_is_no_whole_run_rate_is_not_read_as_one(line: str) -> None:
    assert stated(line) == []


def test_a_summary_dict_is_both_the_runs_end_and_its_rate() -> None:
    got = parse_lines(lines(REAL[0][0]))
    # the Trainer's dict finishes the run (status) and states its rate: two events on line 1
    assert sorted(got.events["event"].to_list()) == ["finished", WHOLE_RUN_RATE]
    assert got.skipped == 0
