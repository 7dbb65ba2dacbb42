"""Envelopes: a program's own time at the head of its message inside a logger's header, Hydra's glued bracketed
fields, a bracketed level alone, and a Markdown quote around an indented code block.

Lines quoted from public sources (read 2026-12-07): cloud-annotations/cloud-annotations issue 56 (2019-04-23),
modelscope/FunASR issue 2006 (2024-08-12), saforem2/vault ``imported/0007-MeetingNotes/Venkat/logs/mlprof/
train-deepspeed-thetaGPU.md`` (a run of 2023-01-11), kharelb/ai-science-training-series ``06_parallel_training/
homework_6.md`` (2024-04-02), PaddlePaddle/Paddle PR 56363 (PaddleNLP's trainer, 2023-08)."""

from __future__ import annotations

import polars as pl
import pytest

from tests.support.formats_support import frame, read
from tierscope.collector.formats.base import STAMP
from tierscope.collector.formats.envelopes import split_envelopes


def _split(*lines: str) -> pl.DataFrame:
    body, facts = split_envelopes(frame(list(lines)), year=2026)
    assert facts is not None
    return body.join(facts.select("source_offset", "envelope", "severity"), on="source_offset", how="left")


def test_a_time_at_the_head_of_a_glog_message_is_the_records_time() -> None:
    got = _split(
        "I0423 05:08:16.899667 47836397217664 tf_logging.py:115] 2019-04-23 05:08:16.899646: Step 270: Cross "
        "entropy = 0.012275"
    ).row(0, named=True)
    assert got["line"] == "Step 270: Cross entropy = 0.012275"
    assert got["envelope"] == "glog+message-time"
    # the message's own time, with its year (glog's has none: the 2026 given would be wrong)
    assert str(got[STAMP]) == "2019-04-23 05:08:16.899646+00:00"


def test_a_date_in_a_sentence_is_no_message_time() -> None:
    # near-miss: a date without a time of day, inside the message, stays the message's
    got = _split("I0423 05:08:16.899667 4783 tf_logging.py:115] 2019-04-23 was the day: Step 270").row(0, named=True)
    assert got["line"] == "2019-04-23 was the day: Step 270"
    assert got["envelope"] == "glog"
    assert str(got[STAMP]) == "2026-04-23 05:08:16.899667+00:00"


@pytest.mark.parametrize(
    ("line", "message", "stamp"),
    [
        (
            "[2024-08-12 23:04:07,255][root][INFO] - train, rank: 9, epoch: 0/500",
            "train, rank: 9, epoch: 0/500",
            "2024-08-12 23:04:07.255000+00:00",
        ),
        (
            "[2024-04-02 01:59:46][INFO][trainer:837] - step=5 loss=3.6606 dt=108.1093",
            "step=5 loss=3.6606 dt=108.1093",
            "2024-04-02 01:59:46+00:00",
        ),
        (
            # a quoted log whose code block adds its indent after the quote's space
            ">     [2023-01-11 13:28:19,976][mlprof.trainers.pytorch.trainer][INFO] - [0] [5/10: 0/1875 (0%)] step=33",
            "[0] [5/10: 0/1875 (0%)] step=33",
            "2023-01-11 13:28:19.976000+00:00",
        ),
    ],
)
def test_hydras_glued_fields_are_the_loggers(line: str, message: str, stamp: str) -> None:
    got = _split(line, line).row(0, named=True)
    assert got["line"] == message
    assert got["severity"] == "INFO"
    assert str(got[STAMP]) == stamp


def test_glued_brackets_without_a_level_are_the_message() -> None:
    # near-miss: a time and a name in brackets but no level, nor the `` - `` after them: a message's own brackets
    got = _split("[2024-08-12 23:04:07,255][root] train, rank: 9", "[x]").row(0, named=True)
    assert got["line"] == "[2024-08-12 23:04:07,255][root] train, rank: 9"


def test_a_right_aligned_level_alone_in_brackets_is_an_envelope() -> None:
    # PaddleNLP's ``[    INFO] - `` with the time cut off by the poster: the message is a record of global step 20 at
    # its interval_steps_per_second, 0.760149170183967 steps/s
    line = (
        "[    INFO] - loss: 2.00048828, learning_rate: 2.1e-06, global_step: 20, interval_runtime: 26.3106, "
        "interval_samples_per_second: 6.081193361471736, interval_steps_per_second: 0.760149170183967, epoch: 0.0014"
    )
    got = read(line)
    assert got["step"].to_list() == [20]
    assert got["global_steps_per_s"][0] == pytest.approx(0.760149170183967)
    assert got["interval_s"][0] == pytest.approx(26.3106)


def test_a_bracketed_word_that_is_no_level_stays_the_message() -> None:
    # near-miss: ``[    Train]`` names no level
    got = _split("[    Train] - loss: 2.0, global_step: 20", "[x]").row(0, named=True)
    assert got["line"] == "[    Train] - loss: 2.0, global_step: 20"
