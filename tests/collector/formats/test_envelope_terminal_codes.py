"""A terminal's colour codes around a logger's envelope: the outermost layer, stripped before the envelope is read."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.support.formats_support import parse
from tierscope.collector.explain import explain_file

ESC = "\x1b"
# Quoted from LemonNoel/PaddleNLP examples/benchmark/fewclue/results/a9/cmnli.base.ft.b @ 12ebe6ef (run of
# 2022-08-31): PaddleNLP's Trainer colours its logger's time and level green, then resets, and resets again at the end.
PADDLENLP = [
    f"{ESC}[32m[2022-08-31 14:25:42,867] [    INFO]{ESC}[0m -   Num examples = 391783{ESC}[0m",
    f"{ESC}[32m[2022-08-31 14:25:49,741] [    INFO]{ESC}[0m - loss: 1.21554871, learning_rate: 2.9999019928128062e-05,"
    " global_step: 10, interval_runtime: 6.8718, interval_samples_per_second: 9.313, interval_steps_per_second: 1.455,"
    f" epoch: 0.0016{ESC}[0m",
    f"{ESC}[32m[2022-08-31 14:25:55,321] [    INFO]{ESC}[0m - loss: 1.12669315, learning_rate: 2.9998039856256126e-05,"
    " global_step: 20, interval_runtime: 5.5807, interval_samples_per_second: 11.468, interval_steps_per_second: 1.792,"
    f" epoch: 0.0033{ESC}[0m",
]


def test_coloured_logger_lines_read_as_the_same_lines_uncoloured() -> None:
    steps = parse(PADDLENLP).steps
    # the config line (Num examples) is no record; global steps 10 and 20 with their stated interval rates
    assert steps.get_column("source_offset").to_list() == [2, 3]
    assert steps.get_column("step").to_list() == [10, 20]
    assert steps.get_column("global_steps_per_s").to_list() == pytest.approx([1.455, 1.792])
    # the logger's time, read once the colour around it is gone: 14:25:49,741
    assert steps.get_column("timestamp")[0] == datetime(2022, 8, 31, 14, 25, 49, 741000, tzinfo=UTC)
    plain = parse([line.replace(f"{ESC}[32m", "").replace(f"{ESC}[0m", "") for line in PADDLENLP]).steps
    assert plain.select("step", "global_steps_per_s", "timestamp").equals(
        steps.select("step", "global_steps_per_s", "timestamp")
    )


def test_a_coloured_line_that_states_no_measure_is_still_no_record() -> None:
    # near miss: the colour layer goes, and what is left is a position with no measure (a checkpoint's step)
    lines = [
        f"{ESC}[32m[2022-08-31 14:26:40,140] [    INFO]{ESC}[0m - Saving model checkpoint at global_step: {s}"
        for s in (100, 200, 300)
    ]
    assert parse(lines).steps.height == 0


def test_formats_try_shows_the_envelope_and_the_line_without_the_colour(tmp_path: Path) -> None:
    log = tmp_path / "train.log"
    log.write_text("\n".join(PADDLENLP) + "\n")
    reading = explain_file(log).readings[1]
    assert reading.envelope == "[2022-08-31 14:25:49,741] [    INFO] - "
    assert reading.text.startswith("[2022-08-31 14:25:49,741] [    INFO] - loss: 1.21554871,")
    assert ESC not in reading.text
