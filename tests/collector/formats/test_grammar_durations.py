"""Reports that state a duration (an epoch's, a report's) rather than a rate, and their near-misses.

Lines are short real lines quoted from public logs (sources in each comment); expected values are worked out by
hand in the comments."""

from __future__ import annotations

import polars as pl
import pytest

from tests.support.formats_support import endings, read, read_lines
from tierscope.collector.formats import ParseContext, parse_lines
from tierscope.collector.formats.layout import LearnedLayout


def test_an_epoch_duration_said_as_a_sentence_is_the_epochs_record() -> None:
    # TensorFlow's DCGAN tutorial print, as quoted in a blog post's MegEngine run (public code index, 2020):
    # each line one epoch's record, its interval the epoch's seconds; no steps per epoch, so no steps/s
    got = read(
        "Time for epoch 1 is 8.129057168960571 sec",
        "Time for epoch 2 is 7.941509008407593 sec",
        "Time for epoch 3 is 7.948836326599121 sec",
    )
    assert got.height == 3
    assert got["interval_s"].to_list() == pytest.approx([8.129057168960571, 7.941509008407593, 7.948836326599121])
    assert got["global_steps_per_s"].null_count() == 3
    # a README's example run of a CNN+DBNN trainer: 'is:' before the seconds; its metrics on the next line
    got = read(
        "Training time for epoch 1 is: 3.46 seconds",
        "Epoch 1: Train error rate = 0.0724, Test accuracy = 0.9997",
        "Training time for epoch 2 is: 3.25 seconds",
        "Epoch 2: Train error rate = 0.0722, Test accuracy = 0.9997",
    )
    assert got["interval_s"].to_list() == pytest.approx([3.46, 3.25])


def test_an_epoch_said_with_a_dash_before_its_number_states_its_duration() -> None:
    # gensim's epoch end (a Word2Vec run of 2018-07-23): 'EPOCH - 1 : ... took 7.4s, 316942 effective words/s':
    # the epoch's record, 7.4 s; the progress line states a percent, no position, and the whole run's summary names
    # no epoch: neither is a record
    got = read(
        "EPOCH 1 - PROGRESS: at 10.05% examples, 323531 words/s, in_qsize 5, out_qsize 0",
        "EPOCH - 1 : training on 2383499 raw words (2339197 effective words) took 7.4s, 316942 effective words/s",
        "EPOCH - 2 : training on 2383499 raw words (2339585 effective words) took 7.3s, 321625 effective words/s",
        "training on a 11917495 raw words (11696602 effective words) took 37.1s, 315628 effective words/s",
    )
    assert got["interval_s"].to_list() == pytest.approx([7.4, 7.3])


def test_a_duration_written_as_a_clock_after_the_word_duration_is_seconds() -> None:
    # the 'burst' tool's README (cifar10 example, 2021-02-18): the iteration's time 0:08:47.014887 =
    # 8 x 60 + 47.014887 = 527.014887 s; as a time that says no unit of work over one iteration, 1 / 527.01 steps/s
    got = read("Iteration   0, avg train_loss = 1.360, avg test_loss = 1.034,1 epoch duration: 0:08:47.014887")
    assert got["step"].to_list() == [0]
    assert got["global_steps_per_s"][0] == pytest.approx(1 / 527.014887)


@pytest.mark.parametrize(
    "line",
    [
        # a time of day after a bare 'Time:' is no duration
        "Epoch: 2, Time: 14:22:05",
        # an estimate of the time still to go (AllenNLP, after its 'Epoch duration' line)
        "Estimated training time remaining: 0:25:54",
        # a data-loading time said as a sentence is other work's
        "Loading time for epoch 1 is 3.2 sec",
        # the batch size is no duration
        "Batch size: 64",
        # an evaluation's duration
        "Validation time for epoch 1 is 2.5 sec",
    ],
)
def test_near_misses_of_durations_are_never_records(line: str) -> None:
    assert read(line).height == 0


def test_keras_epoch_lines_indented_by_a_notebook_export_still_count_the_epochs() -> None:
    # tf.keras fit verbose=2 in a notebook's Markdown export (4 spaces before each output line; batch_size=100 on
    # MNIST): epoch 2's 600 steps end at step (2 - 1) x 600 + 600 = 1200, its interval the epoch's 2 s
    got = read(
        "    Epoch 1/15",
        "    600/600 - 3s - loss: 0.6248 - accuracy: 0.8444 - val_loss: 0.3618 - val_accuracy: 0.9064",
        "    Epoch 2/15",
        "    600/600 - 2s - loss: 0.3463 - accuracy: 0.9055 - val_loss: 0.3080 - val_accuracy: 0.9159",
    )
    assert got["step"].to_list() == [600, 1200]
    assert got["interval_s"].to_list() == [3.0, 2.0]


def _layout_steps(lines: list[str]) -> pl.DataFrame:
    parsed = parse_lines(
        pl.DataFrame({"source_offset": list(range(1, len(lines) + 1)), "line": lines}), context=ParseContext(year=2024)
    ).steps
    return parsed.filter(pl.col("format") == LearnedLayout.name)


SEQ2SEQ = [
    # the PyTorch seq2seq tutorial's trainIters, as quoted in star-whale/starwhale's example/nmt README: the time since
    # the start as minutes and seconds, the time still to go in '(- ...)', the iteration and its percent, the loss
    # (a template that names no training word is learned only where the file's head says training)
    "start to train...",
    "0m 22s (- 3m 21s) (1000 10%) 5.2330",
    "0m 44s (- 2m 57s) (2000 20%) 4.8755",
    "1m 6s (- 2m 35s) (3000 30%) 4.6942",
    "1m 29s (- 2m 13s) (4000 40%) 4.5593",
    "1m 49s (- 1m 49s) (5000 50%) 4.5472",
]


def test_a_time_since_the_start_in_minutes_and_seconds_is_cumulative() -> None:
    # one record per line at its iteration; 1m 6s = 66 s since the start (never the 2m 35s still to go)
    got = _layout_steps(SEQ2SEQ)
    assert got["step"].to_list() == [1000, 2000, 3000, 4000, 5000]
    assert got["elapsed_s"].to_list() == [22.0, 44.0, 66.0, 89.0, 109.0]
    # the same pasted as comments (a seq2seq model's main_simplified.py output): the '#' is text, no number
    got = _layout_steps([f"# {line}" for line in SEQ2SEQ])
    assert got["elapsed_s"].to_list() == [22.0, 44.0, 66.0, 89.0, 109.0]


def test_a_time_still_to_go_alone_is_no_time_since_the_start() -> None:
    # the same lines with only the time still to go: it shrinks, so it is no clock of the run
    assert _layout_steps([SEQ2SEQ[0]] + [line.split(" (", 1)[1] for line in SEQ2SEQ[1:]]).height == 0


ESPNET1 = [
    # espnet/espnet's tutorial (ESPnet1 on Chainer's PrintReport), 'Logging': the row that validated fills the
    # validation cells the other rows leave blank; elapsed_time only grows
    "epoch       iteration   main/loss   main/loss_ctc  main/loss_att  validation/main/loss  validation/m"
    "ain/loss_ctc  validation/main/loss_att  main/acc    validation/main/acc  elapsed_time  eps",
    "6           89700       63.7861     83.8041        43.768                                           "
    "                                        0.731425                         136184        1e-08",
    "6           89800       71.5186     93.9897        49.0475                                          "
    "                                        0.72843                          136320        1e-08",
    "6           89900       72.1616     94.3773        49.9459                                          "
    "                                        0.730052                         136473        1e-08",
    "7           90000       64.2985     84.4583        44.1386        72.506                94.9823     "
    "              50.0296                   0.740617    0.72476              137936        1e-08",
    "7           90100       81.6931     106.74         56.6462                                          "
    "                                        0.733486                         138049        1e-08",
]


def test_a_table_column_its_header_names_elapsed_time_is_the_time_since_the_start() -> None:
    # each row an iteration (the epoch column beside it is no step); elapsed_time read at its column in every row,
    # the validating row's too: 136184 ... 138049 s; the rate is the difference: 100 / (136320 - 136184) = 0.735
    got = _layout_steps(ESPNET1)
    assert got["step"].to_list() == [89700, 89800, 89900, 90000, 90100]
    assert got["elapsed_s"].to_list() == [136184.0, 136320.0, 136473.0, 137936.0, 138049.0]


def test_an_epoch_column_is_no_step_and_a_time_column_that_does_not_grow_is_no_clock() -> None:
    # Chainer's train_mnist.py PrintReport (a blog post of 2017-04-24): the position column is the epoch: an
    # epoch-level table states no steps: the layout learns none; the grammar reads each row (its header's
    # statements) as an epoch's record, with no step and no steps/s from epochs/s
    header = "epoch       main/loss   validation/main/loss  main/accuracy  validation/main/accuracy  elapsed_time"
    rows = [
        f"{e:<12}0.0729073   0.0773182             0.976699       0.976                     {10.3 * e:.4f}"
        for e in range(1, 6)
    ]
    assert _layout_steps([header, *rows]).height == 0
    epochs = parse_lines(
        pl.DataFrame({"source_offset": list(range(1, 7)), "line": [header, *rows]}), context=ParseContext(year=2024)
    ).steps
    assert epochs.height == 5
    assert epochs["step"].null_count() == epochs["global_steps_per_s"].null_count() == 5
    # an iteration table whose 'time' column does not grow is no time since the start (nor, unnamed, a step time)
    header = "iteration   main/loss   time"
    rows = [f"{100 * i:<12}0.5{i}        0.25{i % 2}" for i in range(1, 6)]
    assert _layout_steps(["training", header, *rows]).height == 0


def test_keras_verbose2_lines_without_a_step_counter_are_the_epochs_records() -> None:
    # Keras 2.2 fit verbose=2 (a fraud-detection notebook's README, 'Train on 363923 samples'): ' - 3s - loss: ...'
    # states the epoch's seconds and no step count (nor the batch): one record per epoch with its interval, no step
    # and no steps/s; 'Epoch 2/2' reached with its line ends the work fit was given
    parsed = read_lines(
        "Train on 363923 samples, validate on 90981 samples",
        "Epoch 1/2",
        " - 3s - loss: 0.0641 - acc: 0.9771 - val_loss: 0.0152 - val_acc: 0.9977",
        "Epoch 2/2",
        " - 2s - loss: 0.0130 - acc: 0.9972 - val_loss: 0.0070 - val_acc: 0.9995",
    )
    got = parsed.steps
    assert got["interval_s"].to_list() == [3.0, 2.0]
    assert got["step"].null_count() == 2 and got["global_steps_per_s"].null_count() == 2
    assert parsed.rejects.height == 0
    assert endings(
        "Epoch 1/2",
        " - 3s - loss: 0.0641 - acc: 0.9771",
        "Epoch 2/2",
        " - 2s - loss: 0.0130 - acc: 0.9972",
    ) == [("finished", "Epoch 2/2 finished")]


def test_a_time_with_its_unit_in_parentheses_is_the_steps_seconds() -> None:
    # FastMaskRCNN's TF1 loop (CharlesShang/FastMaskRCNN issue 172, 2017-11-08): 'time:1.722(sec)' is the
    # iteration's seconds, 1 / 1.722 = 0.5807 steps/s; the second line is the same statement, 1 / 1.701 = 0.5879
    got = read(
        "iter 144: image-id:0254212, time:1.722(sec), regular_loss: 0.248765, total-loss 0.5882(0.0360, 0.5233,"
        " 0.000000, 0.0289, 0.0000), instances: 3, batch:(16|85, 0|11, 0|0)",
        "iter 145: image-id:0254213, time:1.701(sec), regular_loss: 0.248765",
    )
    assert got["step"].to_list() == [144, 145]
    assert got["global_steps_per_s"].to_list() == pytest.approx([0.5807, 0.5879], abs=1e-4)
    # milliseconds in parentheses: 12 ms -> 1000 / 12 = 83.33 steps/s
    got = read("iter 144: time:12(ms), loss 0.2", "iter 145: time:10(ms), loss 0.2")
    assert got["global_steps_per_s"].to_list() == pytest.approx([83.333, 100.0], abs=1e-3)


def test_a_time_whose_parentheses_name_another_unit_is_no_steps_seconds() -> None:
    # near-miss: seconds per epoch (an epoch's time, no step's) and a closing parenthesis that is not the unit's
    assert read("iter 144: time:1.722(s/epoch), loss 0.2", "iter 145: time:1.701(s/epoch), loss 0.2").height == 0
    assert read("iter 144: time:1.722(sec left), loss 0.2", "iter 145: time:1.701(sec left), loss 0.2").height == 0
