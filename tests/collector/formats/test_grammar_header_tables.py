"""Reports printed as rows of bare numbers under a header row that names their columns.

Real lines: Chainer's ``PrintReport`` from ``python ./train_mnist.py --gpu 0`` (chainer examples/mnist, quoted in a
public blog post "Chainerの環境構築", 2017-04-24) and fastai's ``Learner`` table from a ULMFiT language-model run
(``python -m ulmfit lm ...``, n-waves/multifit run notes, fastai 1.x, 2019). Each expected value is worked out in a
comment."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from tierscope.collector.explain import explain_file
from tierscope.collector.formats import ParseContext, Parsed, parse_lines
from tierscope.collector.formats.columns import STATE_KEY

CHAINER = [
    "GPU: 0",
    "# unit: 1000",
    "# Minibatch-size: 100",
    "# epoch: 20",
    "",
    "epoch       main/loss   validation/main/loss  main/accuracy  validation/main/accuracy  elapsed_time",
    "1           0.189677    0.105867              0.9419         0.9665                    13.5156",
    "2           0.0729073   0.0773182             0.976699       0.976                     23.7467",
    "3           0.0482483   0.0632961             0.984265       0.9794                    34.0212",
    "4           0.0349474   0.081715              0.988465       0.9762                    44.3018",
]

FASTAI = [
    "Training lm from random weights",
    "epoch     train_loss  valid_loss  accuracy  time",
    "0         4.346260    4.408598    0.370535  1:12:49",
    "1         4.253693    4.355113    0.372354  1:12:40",
    "2         4.190918    4.288729    0.383211  1:12:15",
    "Total time: 12:04:47",
]


def _frame(lines: list[str]) -> pl.DataFrame:
    return pl.DataFrame(
        {"source_offset": list(range(1, len(lines) + 1)), "line": lines},
        schema={"source_offset": pl.Int64, "line": pl.String},
    )


def parse(lines: list[str], context: ParseContext | None = None) -> Parsed:
    return parse_lines(_frame(lines), context=context or ParseContext(year=2024))


def test_each_row_under_a_header_is_an_epochs_record_with_the_seconds_since_the_start() -> None:
    steps = parse(CHAINER).steps.sort("source_offset")
    # the four rows (lines 7-10); the header names epoch (a position) and elapsed_time (seconds since the start)
    assert steps["source_offset"].to_list() == [7, 8, 9, 10]
    assert steps["elapsed_s"].to_list() == pytest.approx([13.5156, 23.7467, 34.0212, 44.3018])
    # main/loss is the training loss; validation/main/loss is not taken for it
    assert steps["loss"].to_list() == pytest.approx([0.189677, 0.0729073, 0.0482483, 0.0349474])
    # an epoch-level log states no step: no step number, no steps/s
    assert steps["step"].null_count() == 4
    assert steps["global_steps_per_s"].null_count() == 4


def test_a_clock_in_a_time_column_is_each_rows_duration() -> None:
    steps = parse(FASTAI).steps.sort("source_offset")
    assert steps["source_offset"].to_list() == [3, 4, 5]
    # 1:12:49 = 3600 + 12 x 60 + 49 = 4369 s; 1:12:40 = 4360; 1:12:15 = 4335 (each epoch's own time)
    assert steps["interval_s"].to_list() == pytest.approx([4369.0, 4360.0, 4335.0])
    assert steps["loss"].to_list() == pytest.approx([4.346260, 4.253693, 4.190918])


def test_rows_in_a_later_batch_are_read_under_the_header_of_an_earlier_one() -> None:
    context = ParseContext(year=2024)
    first = parse_lines(_frame(CHAINER[:7]), context=context)
    assert first.steps["source_offset"].to_list() == [7]
    assert STATE_KEY in context.state
    later = _frame(CHAINER[7:]).with_columns(pl.col("source_offset") + 7)
    got = parse_lines(later, context=context)
    # lines 8-10, under the header of line 6 carried in the context
    assert got.steps.sort("source_offset")["source_offset"].to_list() == [8, 9, 10]


@pytest.mark.parametrize(
    "lines",
    [
        # a header that names no position: a listing's columns, then its rows
        ["name      size     mtime", "12        4096     1700000000", "13        8192     1700000100"],
        # a row under no header
        ["4         0.136361    4.190885    0.398423  1:12:23"],
        # rows with fewer cells than the header names
        ["epoch     train_loss  valid_loss  accuracy  time", "0         4.346260    4.408598"],
        # a header whose position column holds no whole number
        ["epoch     train_loss  valid_loss  accuracy  time", "0.5       4.346260    4.408598    0.370535  1:12:49"],
    ],
)
def test_near_misses_are_no_records(lines: list[str]) -> None:
    assert parse(lines).steps.height == 0


def test_formats_try_shows_a_row_as_the_statements_its_header_makes(tmp_path: Path) -> None:
    log = tmp_path / "fastai.log"
    log.write_text("\n".join(FASTAI) + "\n")
    row = explain_file(log, (3, 3)).readings[0]
    assert row.outcome == "record" and row.why is not None
    # 1:12:49 is 4369 s under the header's "time"
    assert row.why.startswith("a row of a table under a header row naming its columns, read as 'epoch: 0 | ")
    assert "time: 4369.0s" in row.why


#: Chainer's PrintReport at a terminal's width: the header's last name cut after ``elapsed_``, ``time`` on the next
#: line, then the row (chainer/chainer issue 7591, 2019-06-24, read 2026-12-07; the columns shortened here to five).
WRAPPED = [
    "epoch       iteration   main/loss   validation/main/loss  elapsed_",
    "time",
    "1           356         31.2785     26.5542               114.618 ",
]


def test_a_header_the_terminal_wrapped_mid_name_reads_its_row_whole() -> None:
    got = parse(WRAPPED).steps
    # ``elapsed_`` + ``time`` is ``elapsed_time``: the row at iteration 356 with 114.618 s since the start, loss 31.2785
    assert got["step"].to_list() == [356]
    assert got["elapsed_s"].to_list() == pytest.approx([114.618])
    assert got["loss"].to_list() == pytest.approx([31.2785])


def test_a_header_followed_by_a_word_but_not_cut_stays_as_it_is() -> None:
    # near-miss: the header's last name is whole (``main/acc``, no joiner): the word on the next line is no part of
    # it, the header names no time, and the row measures nothing
    got = parse([WRAPPED[0].replace("elapsed_", "main/acc"), "time", WRAPPED[2]]).steps
    assert got.height == 0
