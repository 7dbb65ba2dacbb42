"""The learned layout: a message a file repeats, its numbers read by how they behave across the repetitions."""

from __future__ import annotations

import json
import re
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

from tests.support import SHARED
from tierscope.cli import app
from tierscope.collector.explain import explain_file
from tierscope.collector.formats import ParseContext, layout, parse_lines, sniff_format
from tierscope.collector.formats.layout import MIN_REPEATS, LearnedLayout
from tierscope.collector.formats.vocabulary import STEP_WORDS
from tierscope.dataset.store import Dataset


def frame(lines: list[str], start: int = 1) -> pl.DataFrame:
    return pl.DataFrame(
        {"source_offset": list(range(start, start + len(lines))), "line": lines},
        schema={"source_offset": pl.Int64, "line": pl.String},
    )


def read(lines: list[str], context: ParseContext | None = None) -> pl.DataFrame:
    steps = parse_lines(frame(lines), context=context or ParseContext(year=2024)).steps
    return steps.filter(pl.col("format") == LearnedLayout.name) if steps.width else steps


def clocked(messages: list[str], seconds: list[int]) -> list[str]:
    return [f"[2024-05-01 10:{s // 60:02d}:{s % 60:02d}] {m}" for m, s in zip(messages, seconds, strict=True)]


# Reports every 100 steps, 50 s apart: 2 steps/s, 0.5 s a step. "it" and the bare third number are no words of
# the vocabulary.
STEP_TIMES = ["0.512", "0.498", "0.503", "0.501", "0.500"]
TIMED = clocked(
    [f"ep 0 | it {100 * (i + 1)} | {t} | loss {2.31 - i / 10:.2f}" for i, t in enumerate(STEP_TIMES)],
    [0, 50, 100, 150, 200],
)


def test_a_slot_that_tracks_the_clock_as_a_time_per_step_times_the_growing_position() -> None:
    steps = read(TIMED)
    assert steps.get_column("step").to_list() == [100, 200, 300, 400, 500]
    # 1 / 0.512 = 1.953125; 1 / 0.5 = 2.0
    rates = steps.get_column("global_steps_per_s").to_list()
    assert rates[0] == pytest.approx(1.953125)
    assert rates[-1] == pytest.approx(2.0)
    assert steps.get_column("loss").to_list() == pytest.approx([2.31, 2.21, 2.11, 2.01, 1.91])


def test_a_slot_near_steps_per_second_is_a_rate() -> None:
    # every 20 steps, 10 s apart: 2 steps/s; the slot prints 1.98 .. 2.02
    rates = ["1.98", "2.02", "2.00", "1.99", "2.01"]
    lines = clocked(
        [f"n={20 * (i + 1)} spd {r} loss {1.0 - i / 10:.1f}" for i, r in enumerate(rates)], [10 * i for i in range(5)]
    )
    steps = read(lines)
    assert steps.get_column("step").to_list() == [20, 40, 60, 80, 100]
    assert steps.get_column("global_steps_per_s").to_list() == pytest.approx([1.98, 2.02, 2.00, 1.99, 2.01])


def test_milliseconds_a_step_are_read_by_the_clock_too() -> None:
    # every 10 steps, 5 s apart: 0.5 s = 500 ms a step; 1000 / 500 = 2 steps/s
    lines = clocked([f"#{10 * (i + 1)} dur {500 + i} loss 0.7" for i in range(5)], [5 * i for i in range(5)])
    steps = read(lines)
    assert steps.get_column("step").to_list() == [10, 20, 30, 40, 50]
    # 1 / 0.5 = 2.0; 1 / 0.504 = 1.98413
    assert steps.get_column("global_steps_per_s").to_list() == pytest.approx(
        [2.0, 1 / 0.501, 1 / 0.502, 1 / 0.503, 1 / 0.504]
    )


def test_a_position_the_vocabulary_lacks_takes_the_measure_the_vocabulary_names() -> None:
    # "Schritt" is no position word; "2.5 it/s" is a rate the vocabulary names
    lines = [f"Schritt {5 * (i + 1)} -- 2.5 it/s" for i in range(MIN_REPEATS)]
    steps = read(lines)
    assert steps.get_column("step").to_list() == [5, 10, 15, 20]
    assert steps.get_column("global_steps_per_s").to_list() == pytest.approx([2.5] * 4)


def test_a_time_with_its_unit_that_grows_is_the_time_since_the_start() -> None:
    # Turi Create's table rows: iteration | loss | elapsed
    lines = ["| Iteration | Loss | Elapsed Time |"] + [
        f"| {i} | 5.{i}0 | {e}s |" for i, e in zip(range(1, 6), ["1.36", "2.22", "3.17", "4.03", "4.97"], strict=True)
    ]
    steps = read(lines)
    assert steps.get_column("step").to_list() == [1, 2, 3, 4, 5]
    assert steps.get_column("elapsed_s").to_list() == pytest.approx([1.36, 2.22, 3.17, 4.03, 4.97])


def test_seconds_over_the_steps_a_line_advances_are_its_interval() -> None:
    # Caffe's parse_log table: 100 iterations in 36.9 s a row
    # (its header names what the columns are: a file that says nothing of training teaches no layout)
    lines = ["#Iters Seconds TrainingLoss LearningRate"] + [
        f"{100 * i}  {60 + 37 * i:.3f}  36.9s/100  0.0001" for i in range(5)
    ]
    steps = read(lines)
    assert steps.get_column("step").to_list() == [0, 100, 200, 300, 400]
    assert steps.get_column("interval_s").to_list() == pytest.approx([36.9] * 5)


def test_an_elapsed_clock_inside_the_message_is_the_time_since_the_start() -> None:
    # BMSG-GAN: 8:37:01.5 = 8 x 3600 + 37 x 60 + 1.5 = 31021.5 s
    clocks = ["8:37:01.5", "8:43:55.0", "8:46:03.0", "8:50:52.0"]
    lines = [f"Elapsed [{c}] batch: {37350 + 500 * i}  d_loss: 0.0  g_loss: 20.{i}" for i, c in enumerate(clocks)]
    steps = read(lines)
    assert steps.get_column("step").to_list() == [37350, 37850, 38350, 38850]
    assert steps.get_column("elapsed_s").to_list()[0] == pytest.approx(31021.5)


def test_a_counter_that_restarts_each_epoch_counts_within_it() -> None:
    # "[ N/4]" restarts after 4: epochs begun x 4 + N; 10 s a line, 1 step a line: 0.1 steps/s vs slot 10.0 s
    positions = [1, 2, 3, 4, 1, 2, 3, 4]
    lines = clocked(
        [f"e{1 + i // 4} [ {n}/4] t {10.0:.1f} loss 0.3" for i, n in enumerate(positions)], [10 * i for i in range(8)]
    )
    steps = read(lines)
    assert steps.get_column("step").to_list() == [1, 2, 3, 4, 5, 6, 7, 8]


def test_the_template_is_carried_to_later_batches() -> None:
    context = ParseContext(year=2024)
    first = parse_lines(frame(TIMED), context=context).steps
    later = clocked(["ep 0 | it 600 | 0.500 | loss 1.81"], [250])
    second = parse_lines(frame(later, start=6), context=context).steps
    assert first.height == 5
    assert second.get_column("step").to_list() == [600]
    assert second.get_column("global_steps_per_s").to_list() == pytest.approx([2.0])


def test_a_broken_slot_is_a_reject_with_its_line_and_reason() -> None:
    lines = [*TIMED, "[2024-05-01 10:04:10] ep 0 | it 600 | nan | loss 1.81"]
    parsed = parse_lines(frame(lines), context=ParseContext(year=2024))
    assert parsed.rejects.get_column("source_offset").to_list() == [6]
    assert "'nan' is no measure" in parsed.rejects.get_column("reason")[0]


NEAR_MISSES = {
    # a config dump: numbers that do not grow
    "config": clocked([f"lr {0.001} batch 64 layers 12 dim 768 n{i}" for i in range(5)], [0, 0, 0, 0, 0]),
    # a dataset listing: file names and sizes
    "listing": clocked([f"train/img_{i:04d}.jpg {1000 + i} 0.{i}" for i in range(6)], [10 * i for i in range(6)]),
    # a download's bar in bytes
    "download": clocked([f"{1024 * (i + 1)}/8192 bytes 2.{i} MB/s" for i in range(6)], [10 * i for i in range(6)]),
    # an evaluation's loop
    "evaluation": clocked([f"eval batch {10 * (i + 1)} 0.5{i} s" for i in range(6)], [5 * i for i in range(6)]),
    # a counter that grows with no measure and no clock
    "no measure": [f"step {i} - loss 104.{i} - moving ave loss 104.{i}" for i in range(8)],
    # a counter that grows with a clock and nothing that tracks it: a position timed by the line clock alone
    "clock only": clocked([f"it {10 * i} l {2.0 - i / 10:.1f}" for i in range(6)], [7 * i for i in range(6)]),
    # a server's requests: an id that grows and milliseconds that are no step's (0.0 .. 12.9 ms a request, while
    # the clock says 1 s from one request to the next)
    "requests": clocked([f"request {i} served in {i % 13}.{i % 10} ms" for i in range(8)], list(range(8))),
    # repeated fewer times than the threshold
    "too few": clocked(
        [f"it {100 * (i + 1)} | {t}" for i, t in enumerate(STEP_TIMES[: MIN_REPEATS - 1])], [0, 50, 100]
    ),
}


@pytest.mark.parametrize("name", list(NEAR_MISSES))
def test_near_misses_are_refused(name: str) -> None:
    assert read(NEAR_MISSES[name]).height == 0


def test_of_interleaved_training_and_evaluation_only_the_training_template_is_read() -> None:
    train = clocked([f"it {100 * (i + 1)} | {t}" for i, t in enumerate(STEP_TIMES)], [0, 50, 100, 150, 200])
    evaluation = clocked([f"val it {20 * (i + 1)} | {t}" for i, t in enumerate(STEP_TIMES)], [1, 51, 101, 151, 201])
    mixed = [line for pair in zip(evaluation, train, strict=True) for line in pair]
    steps = read(mixed)
    # the training lines are the even ones: 2, 4, 6, 8, 10
    assert steps.get_column("source_offset").to_list() == [2, 4, 6, 8, 10]
    assert steps.get_column("step").to_list() == [100, 200, 300, 400, 500]


def test_a_file_the_grammar_reads_is_left_to_the_grammar() -> None:
    lines = [f"iteration {10 * (i + 1)}/ 100 | elapsed time per iteration (ms): 500.0" for i in range(5)]
    steps = parse_lines(frame(lines), context=ParseContext()).steps
    assert set(steps.get_column("format")) == {"grammar"}
    assert sniff_format(lines) == "grammar"


def test_the_sniffed_format_is_the_layout_where_nothing_else_reads(tmp_path: Path) -> None:
    assert sniff_format(TIMED) == LearnedLayout.name


def test_formats_try_says_which_slot_is_the_position_and_which_the_measure(tmp_path: Path) -> None:
    log = tmp_path / "train.log"
    log.write_text("\n".join(TIMED) + "\n")
    shown = explain_file(log, year=2024)
    first = shown.readings[0]
    assert first.outcome == "record"
    assert first.format == LearnedLayout.name
    assert "slot 2 = 100: the position" in (first.why or "")
    assert "grows by 100 each line" in (first.why or "")
    # the clock: 200 s over the 400 steps from the first line to the last = 0.5 s a step; the slot on the lines the
    # clock times (the 2nd to the 5th: 0.498, 0.503, 0.501, 0.500) has the median (0.500 + 0.501) / 2 = 0.5005
    assert "tracks the clock: 0.5005 vs 0.5 s a step" in (first.why or "")


CASES = SHARED / "cases"


@pytest.mark.skipif(not (CASES / "expected.json").is_file(), reason="../shared/cases is not on this machine")
def test_no_shared_case_gets_a_record_from_the_layout() -> None:
    # the 25 cases are read by the families and the grammar; what is left of them repeats no training template
    expected = json.loads((CASES / "expected.json").read_text())
    for name in expected:
        found = sorted((CASES / "inputs").glob(f"{name}.*"))
        for path in found:
            shown = explain_file(path, (1, 1))
            assert shown.verdict.by_format.get(LearnedLayout.name, 0) == 0, path.name


def test_a_collect_that_goes_on_from_an_offset_reads_the_appended_lines_with_the_layout_learned_before(
    tmp_path: Path,
) -> None:
    log = tmp_path / "train.log"
    log.write_text("\n".join(TIMED) + "\n")
    _collect(log, tmp_path / "ds")
    # two lines appended: too few to teach the template again, read with the one the first collect learned
    with log.open("a") as out:
        out.write("\n".join(clocked([f"ep 0 | it {n} | 0.500 | loss 1.8" for n in (600, 700)], [250, 300])) + "\n")
    _collect(log, tmp_path / "ds")
    steps = Dataset(tmp_path / "ds").read("steps").sort("step")
    assert steps.get_column("step").to_list() == [100, 200, 300, 400, 500, 600, 700]
    # 1 / 0.5 = 2.0 steps/s on the appended lines
    assert steps.get_column("global_steps_per_s").to_list()[-2:] == pytest.approx([2.0, 2.0])


def _collect(log: Path, dataset: Path) -> None:
    result = CliRunner().invoke(app, ["collect", "files", str(log), "-d", str(dataset), "--settle", "0"])
    assert result.exit_code == 0, result.output


def test_a_line_of_the_template_that_measures_nothing_is_no_record() -> None:
    # the template is learned from four lines with a rate the vocabulary names; a fifth line with the same words
    # and no rate ("-- 0 it/s" is broken, "-- saving" says another thing) is no record
    lines = [f"Schritt {5 * (i + 1)} -- 2.5 it/s" for i in range(MIN_REPEATS)] + ["Schritt 25 -- saving"]
    steps = read(lines)
    assert steps.get_column("source_offset").to_list() == [1, 2, 3, 4]


def test_a_file_whose_steps_another_format_reads_gets_no_second_series_from_the_layout() -> None:
    # the grammar reads "step N ... time/step 1.00s" (20 steps a line, 20 s apart: 1 step/s); the renderer's
    # "frame N fps 60.0" repeats between them with a growing frame and a steady fps, and is another loop's
    messages, seconds = [], []
    for i in range(6):
        messages += [f"Epoch 1 step {20 * (i + 1)} loss {2.5 - i / 10:.2f} time/step 1.00s",
                     f"env render frame {1200 * (i + 1)} fps 60.0"]  # fmt: skip
        seconds += [20 * i, 20 * i + 10]
    steps = parse_lines(frame(clocked(messages, seconds)), context=ParseContext(year=2024)).steps
    assert steps.get_column("step").to_list() == [20, 40, 60, 80, 100, 120]
    assert set(steps.get_column("format").to_list()) != {LearnedLayout.name}
    assert LearnedLayout.name not in steps.get_column("format").to_list()


def test_a_file_that_says_nothing_of_training_teaches_no_layout() -> None:
    # a heartbeat and a game's frame counter: a growing counter and a measure that tracks the clock (5 s a line,
    # 1 beat a line: "interval=5.0s"; 60 frames a second), but no word of a training step anywhere in the file
    beats = clocked([f"heartbeat seq={i + 1} interval=5.0s" for i in range(8)], [5 * i for i in range(8)])
    frames = clocked([f"frame {60 * (i + 1)} fps 60.0" for i in range(8)], list(range(8)))
    assert read(beats).height == 0
    assert read(frames).height == 0


def test_a_template_naming_training_is_chosen_over_a_busier_one_that_does_not() -> None:
    # "ep 0 | it N | 0.100 | loss L": 100 steps each 10 s = 0.1 s a step; a probe with a growing sequence and an
    # rtt printed twice as often is the larger template, but names nothing a step counts
    messages, seconds = [], []
    for i in range(6):
        messages += [f"ep 0 | it {100 * (i + 1)} | 0.100 | loss {2.5 - i / 10:.2f}",
                     f"health probe {2 * i + 1} rtt 5.0s", f"health probe {2 * i + 2} rtt 5.0s"]  # fmt: skip
        seconds += [10 * i, 10 * i + 2, 10 * i + 7]
    steps = read(clocked(messages, seconds))
    assert steps.get_column("step").to_list() == [100, 200, 300, 400, 500, 600]
    # 1 / 0.100 = 10 steps/s
    assert steps.get_column("global_steps_per_s").to_list() == pytest.approx([10.0] * 6)


def test_numbers_spread_over_their_range_are_no_measure_even_with_a_median_near_the_clock() -> None:
    # one step a line every 0.5 s (2 steps/s, 0.5 s a step); the third number is spread evenly over 0.05..0.95 (IQR
    # 0.45 against a median of 0.5: wider than half the median), so it is no step time
    noise = [0.05, 0.95, 0.5, 0.25, 0.75, 0.15, 0.85, 0.35, 0.65, 0.45] * 2
    lines = [
        f"[2024-05-01 10:00:{i // 2:02d}.{5 * (i % 2)}00] train step {i + 1} value {v}" for i, v in enumerate(noise)
    ]
    assert read(lines).height == 0


def test_digits_glued_after_a_letter_belong_to_the_word() -> None:
    # "w1075", "a100": names, not slots; the step and the rate are the lines' other numbers
    lines = clocked(
        [f"node a100 w1075 step {10 * (i + 1)} dur 0.50 loss 1.0" for i in range(5)], [5 * i for i in range(5)]
    )
    steps = read(lines)
    assert steps.get_column("step").to_list() == [10, 20, 30, 40, 50]


def test_the_words_that_say_training_are_the_vocabularys() -> None:
    # the vocabulary's words for a step (one at a time: "iterations", "updates"; a range: "minibatches") and those of
    # its phrases of a position, a metric and examples ("global_step", "accuracy", "instances" of "X instances/sec")
    # say training; a game's "frame", a server's "request" and a unit ("sec" of "examples/sec: X") do not
    for word in ("iterations", "updates", "minibatches", "global_step", "accuracy", "instances", "loss", "epoch"):
        assert re.search(layout._TRAINING_WORD, f"at {word} 5"), word
    for word in ("frame", "request", "sec", "trial"):
        assert not re.search(layout._TRAINING_WORD, f"at {word} 5"), word
    # a step word added to the vocabulary counts here too: every spelling of its STEP_WORDS is one
    for word in ("it", "its", "iter", "iters", "iteration", "batch", "batches", "update", "minibatch", "steps"):
        assert re.fullmatch(STEP_WORDS, word) and re.search(layout._TRAINING_WORD, word), word


def test_lines_appended_after_a_collect_are_checked_against_the_clock_as_the_head_was(tmp_path: Path) -> None:
    log = tmp_path / "train.log"
    log.write_text("\n".join(TIMED) + "\n")
    _collect(log, tmp_path / "ds")
    # an inference loop of the same wording appended: "it" grows by 100 a line 2 s apart (10 s over 500 steps: 0.02 s
    # a step by the clock) while its slot says 0.500 s a step, 25 times the clock's (beyond the factor of 2): as in the
    # head, a step time the clock contradicts is no step's, so the six lines give no record
    messages = [f"ep 0 | it {600 + 100 * i} | 0.500 | loss 1.8" for i in range(6)]
    with log.open("a") as out:
        out.write("\n".join(clocked(messages, [300 + 2 * i for i in range(6)])) + "\n")
    _collect(log, tmp_path / "ds")
    assert Dataset(tmp_path / "ds").read("steps").sort("step").get_column("step").to_list() == [100, 200, 300, 400, 500]
    # the same six lines 50 s apart (0.5 s a step, as the slot says) are the run's steps 600 .. 1100
    log.write_text("\n".join(TIMED) + "\n")
    _collect(log, tmp_path / "ds2")
    with log.open("a") as out:
        out.write("\n".join(clocked(messages, [250 + 50 * i for i in range(6)])) + "\n")
    _collect(log, tmp_path / "ds2")
    assert Dataset(tmp_path / "ds2").read("steps").get_column("step").max() == 1100
