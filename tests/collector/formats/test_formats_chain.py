"""The format chain: sniffing, mixed files, cloudml Eval blocks, tracebacks, batches, gzip."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from tests.collector.formats.test_formats_keras import KERAS2, KERAS3
from tests.collector.formats.test_formats_mlperf import MLPERF
from tests.collector.formats.test_formats_tfhooks import ABSL, ESTIMATOR
from tests.support.formats_support import outcome_offsets, parse
from tierscope.collector.collect import collect_file
from tierscope.collector.formats import UnknownFormatError, sniff_format
from tierscope.collector.manifest import RunSpec
from tierscope.collector.reading import ReadOptions
from tierscope.dataset.store import Dataset

CLOUDML = [
    "INFO:root:Train [master/0], step 100:loss:2.346, accuracy:0.133 (6.247 sec) 16.009 global_steps/s, "
    "16.009 local_steps/s",  # 1
    "Eval, step 100:",  # 2 evaluator record
    "- on train set 0.41, 0.88",  # 3 part of it
    "-- on eval set 0.52, 0.85",  # 4 part of it
    "Eval, step 200:",  # 5 reject: no result lines
    "INFO:root:Train [master/0], step 200:loss:2.125, accuracy:0.327 (15.281 sec) 11.069 global_steps/s, "
    "11.069 local_steps/s",  # 6
    "-- on eval set 0.5, 0.86",  # 7 reject: no Eval line before it
]


def test_cloudml_eval_blocks() -> None:
    got = parse(CLOUDML)
    assert got.steps.select(
        "source_offset", "role", "step", "loss", "accuracy", "eval_loss", "eval_accuracy"
    ).rows() == [
        (1, "master", 100, 2.346, 0.133, None, None),
        (2, "evaluator", 100, 0.41, 0.88, 0.52, 0.85),
        (6, "master", 200, 2.125, 0.327, None, None),
    ]
    assert got.rejects.select("source_offset", "reason").rows() == [
        (5, "an 'Eval, step N:' line not followed by its '- on train set' and '-- on eval set' lines"),
        (7, "an '- on train/eval set' line without its 'Eval, step N:' line"),
    ]
    assert got.skipped == 2  # the block's two result lines


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        (CLOUDML, "cloudml"),
        (ESTIMATOR, "tf-estimator"),
        (ABSL, "tf-estimator"),
        (KERAS2, "keras"),
        (KERAS3, "keras"),
        (MLPERF, "mlperf"),
        (['{"tierscope": "step", "step": 1}'], "structured"),
        (["ERROR: gcloud crashed (BadStatusCodeError):"], "gcloud"),
        (["nothing to see", ""], None),
    ],
)
def test_sniffing_picks_the_parser(lines: list[str], expected: str | None) -> None:
    assert sniff_format(lines) == expected


def test_mixed_file_is_read_line_by_line_whatever_sniffing_says() -> None:
    lines = [
        "Train [worker/1], step 10:loss:2.0, accuracy:0.1 (1.0 sec) 10.0 global_steps/s, 5.0 local_steps/s",  # 1
        "INFO:tensorflow:loss = 1.5, step = 20 (2.0 sec)",  # 2
        "Epoch 1/1",  # 3
        "10/10 [==============================] - 1s 100ms/step - loss: 1.2",  # 4
        "Train [worker/1], step 30:loss:1.0, accuracy:0.3 (3.0 sec) 10.0 global_steps/s, 5.0 local_steps/s",  # 5
    ]
    for first in (None, "cloudml", "tf-estimator", "keras"):
        got = parse(lines, first=first)
        assert got.steps.select("source_offset", "format", "step").rows() == [
            (1, "cloudml", 10),
            (2, "tf-estimator", 20),
            (4, "keras", 10),
            (5, "cloudml", 30),
        ]
        # "Epoch 1/1" is no record: with its finished bar it says the run did the one epoch it announced
        assert got.events.select("source_offset", "event").rows() == [(3, "finished")]
        assert got.skipped == 0


def test_format_override_reads_with_that_format_alone() -> None:
    lines = ["INFO:tensorflow:loss = 1.5, step = 20 (2.0 sec)", "Epoch 1/1"]
    got = parse(lines, only="cloudml")
    assert got.steps.height == 0 and got.skipped == 2
    with pytest.raises(UnknownFormatError, match="known formats: structured"):
        parse(lines, only="nope")


TRACEBACK = [
    "Traceback (most recent call last):",  # 1 before any step: skipped, no event
    '  File "train.py", line 3, in <module>',
    "ImportError: warm-up check failed",
    "INFO:tensorflow:loss = 1.5, step = 20 (2.0 sec)",  # 4 record
    "Traceback (most recent call last):",  # 5
    '  File "train.py", line 9, in <module>',
    "    raise KeyError('x')",
    "KeyError: 'x'",  # 8 not the last exception of the chain
    "",
    "During handling of the above exception, another exception occurred:",
    "",
    "Traceback (most recent call last):",
    '  File "train.py", line 11, in <module>',
    "tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor",  # 14 event
    "INFO:tensorflow:Saving checkpoints for 20 into /tmp/model.ckpt.",  # 15 checkpoint_begin event
]


def test_traceback_after_a_step_marks_the_run_failed() -> None:
    got = parse(TRACEBACK)
    assert got.events.select("source_offset", "event", "reason", "step").rows() == [
        (
            14,
            "failed",
            "tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor",
            20,
        ),
        (15, "checkpoint_begin", None, 20),
    ]
    assert outcome_offsets(got) == {"steps": [4], "events": [14, 15], "rejects": []}
    assert got.skipped == len(TRACEBACK) - 3


def test_skipped_reject_and_failed_are_told_apart() -> None:
    lines = [
        "INFO:tensorflow:Saving checkpoints for 0 into /tmp/model.ckpt.",  # checkpoint_begin event
        "WARNING:tensorflow:From train.py:1: deprecated",  # skipped
        "INFO:tensorflow:loss = 0.73, step = 1.5e",  # reject: broken number
        "ERROR: gcloud crashed (BadStatusCodeError):",  # failed event
    ]
    got = parse(lines)
    assert got.skipped == 1
    assert got.rejects.select("source_offset", "reason").rows() == [(3, "step '1.5e' is not a whole number >= 0")]
    assert got.events.select("source_offset", "event", "reason").rows() == [
        (1, "checkpoint_begin", None),
        (4, "failed", "gcloud crashed (BadStatusCodeError)"),
    ]


def test_a_milestone_step_no_64_bit_integer_holds_is_a_reject() -> None:
    # Its step once became null in the cast and was then filled with the step record's before
    # it (100): a restore of step 10**23 stored silently as a restore of step 100.
    lines = [
        "INFO:tensorflow:loss = 0.73, step = 100",
        "INFO:tensorflow:Restoring parameters from /tmp/model.ckpt-100000000000000000000000",
        "INFO:tensorflow:Saving checkpoints for 9223372036854775807 into /tmp/model.ckpt.",  # 2**63 - 1 fits
    ]
    got = parse(lines)
    assert got.rejects.select("source_offset", "reason").rows() == [
        (2, "restored at step 100000000000000000000000: a step larger than a 64-bit integer holds")
    ]
    assert got.events.select("source_offset", "event", "step").rows() == [(3, "checkpoint_begin", 2**63 - 1)]


def _collect(tmp_path: Path, name: str, text: str, batch_bytes: int, compress: bool = False) -> Dataset:
    path = tmp_path / name
    path.write_bytes(gzip.compress(text.encode()) if compress else text.encode())
    dataset = Dataset(tmp_path / "ds")
    counts = collect_file(
        dataset,
        path,
        RunSpec(run_id="r", tier="BASIC", files=[path]),
        # a job that has ended: its last lines (a failure) are read now, not left for lines that may still come
        ReadOptions(batch_bytes=batch_bytes, settle_s=0.0),
    )
    assert counts.lines == text.count("\n")
    return dataset


@pytest.mark.parametrize("compress", [False, True])
@pytest.mark.parametrize("batch_bytes", [40, 64 * 1024 * 1024])
def test_blocks_across_batch_boundaries_and_gzip(tmp_path: Path, batch_bytes: int, compress: bool) -> None:
    # Tiny batches cut every block (Eval block, rate line + record, traceback) somewhere.
    text = "\n".join([*CLOUDML[:4], *ESTIMATOR[2:5], *TRACEBACK[4:]]) + "\n"
    dataset = _collect(tmp_path, "job.log.gz" if compress else "job.log", text, batch_bytes, compress)
    # Lines: 1-4 the cloudml record and Eval block, 5-7 the rate lines and their record,
    # 8-17 the chained traceback, 18 a checkpoint line (an event: a checkpoint stall).
    steps = dataset.read("steps").sort("source_offset")
    assert steps.select(
        "source_offset", "role", "step", "eval_loss", "global_steps_per_s", "examples_per_s"
    ).rows() == [
        (1, "master", 100, None, 16.009, None),
        (2, "evaluator", 100, 0.52, None, None),
        (7, None, 101, None, 37.2, 4761.6),
    ]
    events = dataset.read("events").sort("source_offset")
    assert events.select("source_offset", "event", "step").rows() == [(17, "failed", 101), (18, "checkpoint_begin", 20)]
    assert dataset.read("rejects").height == 0
    assert events.get_column("reason")[0].startswith("tensorflow.python.framework.errors_impl.ResourceExhaustedError")


def _train_line(k: int) -> str:
    return (
        f"Train [master/0], step {100 * k}:loss:2.3, accuracy:0.1 ({3.0 + k:.3f} sec) "
        "22.1 global_steps/s, 22.1 local_steps/s"
    )


@pytest.mark.parametrize("before_cut", [0, 1, 2, 3])  # the Eval head this many lines before the look-ahead's first line
def test_an_eval_block_cut_by_the_look_ahead_is_read_whole_in_the_next_batch(before_cut: int) -> None:
    """30 lines, then 10 more in a second batch, an Eval block (3 lines) placed across the first
    batch's look-ahead cut (its 16 last lines start at line 15). Whatever the cut, the batches give
    what one pass gives: 37 train records + 1 evaluator record, no reject. Before, a head decided
    in the first batch left its result lines from line 15 on to the second, where they were
    rejects "without its 'Eval, step N:' line": two for a block at lines 14-16, one at 13-15.
    """
    import polars as pl

    from tierscope.collector.formats import LOOKAHEAD_LINES, ParseContext, parse_lines

    lines = [_train_line(k) for k in range(1, 41)]
    head = 30 - LOOKAHEAD_LINES - before_cut  # 0-based: 14 is the look-ahead's first line (line 15)
    lines[head : head + 3] = ["Eval, step 1000:", "- on train set 0.41, 0.88", "-- on eval set 0.52, 0.85"]

    def frame(part: list[str], first: int) -> pl.DataFrame:
        return pl.DataFrame({"source_offset": range(first, first + len(part)), "line": part},
                            schema={"source_offset": pl.Int64, "line": pl.String})  # fmt: skip

    def run(frame: pl.DataFrame, final: bool) -> object:
        return parse_lines(frame, context=ParseContext(year=2016), first="cloudml", final=final)

    one = run(frame(lines, 1), True)
    first = run(frame(lines[:30], 1), False)
    second = run(pl.concat([first.pending, frame(lines[30:], 31)]), True)
    assert (one.steps.height, one.rejects.height) == (38, 0)
    assert (first.steps.height + second.steps.height, first.rejects.height + second.rejects.height) == (38, 0)
    evals = pl.concat([first.steps, second.steps], how="diagonal_relaxed").filter(pl.col("role") == "evaluator")
    assert evals.select("source_offset", "step", "eval_loss").rows() == [(head + 1, 1000, 0.52)]
