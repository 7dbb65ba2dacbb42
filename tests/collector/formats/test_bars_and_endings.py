"""Progress bars in the shapes real copies keep them (no glyphs, Ultralytics' own bar, carriage returns written
out as text), the evaluation bars and lines beside them that are no training step, and the lines that end a run:
a count of epochs done, a signal's word glued to a bar. Lines are written for the test in the shapes the tools
print (YOLOv5, Ultralytics 8.3, Lightning, mmengine, MLX-LM under a launcher's tag, SageMaker's CloudWatch tail);
the figures are made up and each expected value is worked out by hand in a comment."""

from __future__ import annotations

import pytest

from tests.support.formats_support import parse

COLUMNS = ("source_offset", "step", "global_steps_per_s", "elapsed_s")


def steps(lines: list[str]) -> list[tuple]:
    return parse(lines).steps.select(COLUMNS).rows()


def events(lines: list[str]) -> list[tuple[str, str]]:
    return parse(lines).events.select("event", "reason").rows()


#: A YOLOv5 epoch as Colab's plain text keeps it: the bar's glyphs dropped, the validation bar after it.
YOLO_PLAIN = [
    "     Epoch   gpu_mem       box       obj       cls    labels  img_size",
    "     7/299     3.10G   0.05000   0.02000   0.01000        20       640: 100% 40/40 [01:20<00:00,  2.00s/it]",
    "               Class     Images     Labels          P          R     mAP@.5 mAP@.5:.95: 100% 4/4 [00:04<00:00,"
    "  1.00s/it]",
    "                 all        100        200        0.5        0.5        0.5        0.3",
    "     8/299     3.10G   0.04000   0.02000   0.01000        20       640: 100% 40/40 [01:00<00:00,  1.50s/it]",
    "               Class     Images     Labels          P          R     mAP@.5 mAP@.5:.95: 100% 4/4 [00:04<00:00,"
    "  1.00s/it]",
]


def test_a_bar_without_its_glyphs_is_counted_within_its_epoch_and_its_validation_bar_is_no_record() -> None:
    # The bar's own counter 40/40 is the position, its description's 7/299 the epoch; the epoch advances while the
    # position stays (a finished bar each epoch), so the step is epoch x 40 + 40: 7 x 40 + 40 = 320, 8 x 40 + 40 = 360.
    # Rates 1 / 2.00 s = 0.5 and 1 / 1.50 s = 0.6667; elapsed is the bar's clock, 01:20 = 80 s on the file's first
    # epoch; epoch 8's bar is drawn anew, its 01:00 the lap's clock (it went back from 80 s: no restart): none.
    # The 'Class Images ... mAP@.5' bars (4/4) are the validation's: no record.
    assert steps(YOLO_PLAIN) == [(2, 320, 0.5, 80.0), (5, 360, 1 / 1.5, None)]


#: Ultralytics 8.3's own bar: no brackets, the rate then the elapsed seconds (and the remaining after '<').
ULTRALYTICS = [
    "      Epoch    GPU_mem   box_loss   cls_loss   dfl_loss  Instances       Size",
    "       1/2      2.61G      1.000      2.000      1.000      16     640: 44% ━━━━━╸────── 4/9 6.5it/s 0.6s<0.8s",
    "       1/2      2.61G      1.000      2.000      1.000      16     640: 100% ━━━━━━━━━━━━ 9/9 9.0it/s 1.0s",
    "                 Class     Images  Instances      Box(P          R      mAP50  mAP50-95): 100% ━━━━━━━━━━━━ 2/2"
    " 5.0it/s 0.4s",
    "                   all         40        120      0.697       0.46      0.525      0.334",
    "2 epochs completed in 0.001 hours.",
]


def test_ultralytics_bars_their_clock_and_the_count_of_epochs_done() -> None:
    # Positions 4 and 9 of the bar (one epoch shown: printed as they are), rates as printed, elapsed 0.6 s and 1.0 s.
    # The 'Box(P R mAP50 ...)' bar is the validation's; 'N epochs completed in X hours.' is the trainer's end.
    assert steps(ULTRALYTICS) == [(2, 4, 6.5, 0.6), (3, 9, 9.0, 1.0)]
    assert events(ULTRALYTICS) == [("finished", "2 epochs completed in 0.001 hours.")]


def test_ultralytics_elapsed_in_minutes_and_seconds() -> None:
    # Past a minute Ultralytics prints m:ss: 1:05 = 65 s
    line = "  3/10  2.61G  1.0  2.0  1.0  16  640: 100% ━━━━━━━━━━━━ 650/650 10.0it/s 1:05"
    assert steps([line]) == [(1, 650, 10.0, 65.0)]


def test_carriage_returns_written_out_as_text_part_a_lines_drawings() -> None:
    # CloudWatch's '#015' (and its escaped erase-line '#033[K') and a JSON string's '\r' between drawings of a bar:
    # each drawing is a statement of its own (positions 8 and 9; rates 9.2 and 11.6 as printed).
    bar = "  5/5  2.61G  0.25  0.49  0.81  13  640: {p}% ━━━━━━━━━━━━ {n}/9 {r}it/s 0.8s"
    eight, nine = bar.format(p=89, n=8, r=9.2), bar.format(p=100, n=9, r=11.6)
    for escaped in ("#015#033[K", "\\r"):
        assert steps([eight + escaped + nine]) == [(1, 8, 9.2, 0.8), (1, 9, 11.6, 0.8)]
    # One drawing and a Windows path's '\r' ('C:\runs'): nothing is split, the line is read whole (position 9).
    assert steps(["C:\\runs\\exp  100%|##########| 9/9 [00:01<00:00, 9.00it/s]"]) == [(1, 9, 9.0, 1.0)]


def test_a_keras_bar_whose_returns_were_written_out_as_text() -> None:
    # The epoch's updates joined by '#015': only its final update is a record, step (2 - 1) x 10 + 10 = 20 at
    # 1000 / 200 ms = 5 steps/s; no piece is a reject.
    got = parse(
        [
            "Epoch 2/2",
            " 1/10 [==>...........................] - ETA: 3s - loss: 0.4000#015"
            "10/10 [==============================] - 2s 200ms/step - loss: 0.2000",
        ]
    )
    assert got.steps.select("step", "global_steps_per_s").rows() == [(20, 5.0)]
    assert got.rejects.height == 0


@pytest.mark.parametrize(
    "line",
    [
        # an evaluation after a bracketed tag no envelope rule strips (a workflow launcher's run/step/task)
        "[1761840227122170/train_model/4 (pid 79246)] Iter 100: Val loss 0.922, Val took 2.440s",
        # mmengine's iteration-based runner evaluating, and testing
        "Iter(val) [17/17]    aAcc: 86.3900  mIoU: 51.1200  data_time: 0.0052  time: 0.4238",
        "Iter(test) [11/11]    aAcc: 95.8700  mIoU: 66.4600  data_time: 0.1341  time: 0.1852",
        # Lightning's validation bar without its glyphs
        "Validation DataLoader 0: 100% 20/20 [00:00<00:00, 51.85it/s]",
        # a detector's validation bar, tqdm's and Ultralytics'
        "  Class  Images  Instances  Box(P  R  mAP50  mAP50-95): 100%|##########| 34/34 [00:01<00:00, 19.23it/s]",
        "  Class  Images  Instances  Box(P  R  mAP50  mAP50-95): 50% ━━━━━━────── 1/2 2.8it/s 0.1s<0.4s",
    ],
)
def test_evaluation_statements_and_bars_are_no_records(line: str) -> None:
    assert steps([line]) == []


def test_the_same_lines_of_training_stay_records() -> None:
    # the training beside them: 1 / 0.5780 s and 1.293 it/s as printed
    assert steps(
        [
            "Iter(train) [2900/3000]  lr: 9.3518e-03  eta: 0:00:57  time: 0.5780  data_time: 0.0083  loss: 0.0365",
            "[1761840227122170/train_model/4 (pid 79246)] Iter 10: Train loss 2.198, It/sec 1.293",
        ]
    ) == [(1, 2900, 1 / 0.578, None), (2, 10, 1.293, None)]


STEP = "step 100 | loss 2.0 | 0.50 s/it"


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        # YOLOv5's and Ultralytics' end of training; fairseq's; TensorFlow examples'
        ("300 epochs completed in 8.675 hours.", "300 epochs completed in 8.675 hours."),
        ("done training in 1234.5 seconds", "done training in 1234.5 seconds"),
        ("Optimization Finished!", "Optimization Finished!"),
        # the training time printed once the loop is left (detectron2, DeiT)
        ("Total training time: 0:12:03 (0:00:05 on hooks)", "Total training time: 0:12:03 (0:00:05 on hooks)"),
        ("Training time 1 day, 2:03:04", "Training time 1 day, 2:03:04"),
        # ... in seconds with their unit: litgpt's, quoted from Lightning-AI/litgpt issue 1110 (2024-03-13)
        ("Training time: 583.36s", "Training time: 583.36s"),
        ("Total training time: 7200 seconds", "Total training time: 7200 seconds"),
        # many training scripts' last word
        ("Finished training at step 1000", "Finished training at step 1000"),
        # a workflow's task that finished its work
        ("Task finished successfully.", "Task finished successfully."),
    ],
)
def test_completion_summaries_finish_the_run(line: str, reason: str) -> None:
    assert events([STEP, line]) == [("finished", reason)]


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("Bus error (core dumped)", "Bus error (core dumped)"),
        ("Aborted (core dumped)", "Aborted (core dumped)"),
        ("Floating point exception (core dumped)", "Floating point exception (core dumped)"),
        (
            "terminate called after throwing an instance of 'c10::Error'",
            "terminate called after throwing an instance of 'c10::Error'",
        ),
    ],
)
def test_a_process_a_signal_ended_fails_the_run(line: str, reason: str) -> None:
    assert events([STEP, line]) == [("failed", reason)]


@pytest.mark.parametrize("glued", ["Segmentation fault (core dumped)", "Bus error"])
def test_a_signals_word_glued_to_the_bar_it_stopped_is_the_failure_not_a_record(glued: str) -> None:
    bar = "Epoch 3: 20%|██        | 11/56 [00:02<00:08,  5.02it/s]"
    got = parse(["Epoch 3: 18%|█▊        | 10/56 [00:02<00:09,  4.90it/s]", bar + glued])
    # the first bar is a record (position 10); the stopped one is the failure, with the signal's word as its reason
    assert got.steps.select("source_offset", "step").rows() == [(1, 10)]
    assert got.events.select("source_offset", "event", "reason").rows() == [(2, "failed", glued)]


def test_a_launchers_report_glued_to_a_loading_bar_is_the_cause_without_the_bar() -> None:
    # torchrun's report written while a (non-training) loading bar's line was open: the cause is the report, without
    # the bar and the logger's 'ERROR:name:' header
    line = (
        "Loading checkpoint shards:  57% 4/7 [00:40<00:29,  9.96s/it]ERROR:torch.distributed.elastic.multiprocessing"
        ".api:failed (exitcode: -9) local_rank: 0 (pid: 31631) of binary: /usr/bin/python3"
    )
    cause = "failed (exitcode: -9) local_rank: 0 (pid: 31631) of binary: /usr/bin/python3"
    assert events([line]) == [("failed", cause)]


@pytest.mark.parametrize(
    "line",
    [
        # words that merely mention an end or a signal
        "Aborted!",
        "Epoch 3: Bus error rate 0.1",
        "The training time budget is 2 hours",
        # a time per step or per epoch, and a time with more said after it, are no end of the training
        "Training time per step: 0.52s",
        "Epoch training time: 583.36s",
        "Training time: 583.36s so far, 2 epochs to go",
        "100 epochs completed so far, 50 to go",
    ],
)
def test_near_misses_of_endings_end_nothing(line: str) -> None:
    assert events([STEP, line]) == []


def test_a_bar_without_a_description_after_an_evaluations_banner_is_the_evaluations() -> None:
    # Hugging Face's Trainer: the training bar (total 300), its evaluation's banner, the evaluation's bar (total 51,
    # no description), then the training bar again. The evaluation's bar is no record; the training bar's positions
    # 100 and 101 are (rates 8.00 and 8.10 as printed). The drawings joined by '#015' (a leading one dropped).
    lines = [
        "#015 33%|███▎      | 100/300 [00:12<00:25,  8.00it/s]",
        "***** Running Evaluation *****",
        "  Num examples = 408",
        "#015  0%|          | 0/51 [00:00<?, ?it/s]#015 18%|█▊        | 9/51 [00:00<00:00, 80.14it/s]",
        "#015100%|██████████| 51/51 [00:00<00:00, 72.39it/s]",
        "#015 34%|███▎      | 101/300 [00:13<00:25,  8.10it/s]",
    ]
    assert [(o, s, r) for o, s, r, _ in steps(lines)] == [(1, 100, 8.0), (6, 101, 8.1)]
    # an excerpt that starts at the banner: the first bar after it is the evaluation's, the other the training's
    assert [(o, s, r) for o, s, r, _ in steps(lines[1:])] == [(5, 101, 8.1)]
    # a banner glued to the training bar's line begins after that bar: the bar is a record
    glued = lines[0] + "[2022-03-25 16:41:50,060] [    INFO] - ***** Running Evaluation *****"
    assert [(o, s, r) for o, s, r, _ in steps([glued, *lines[3:]])] == [(1, 100, 8.0), (4, 101, 8.1)]
    # without the banner nothing says the 51-step bar is an evaluation: it is read as a bar like any other
    assert [s for _, s, _, _ in steps([lines[0], *lines[3:]])] == [100, 9, 51, 101]


def test_a_bar_drawn_anew_each_epoch_without_its_epoch_counts_its_laps() -> None:
    # A training loop drawing a new bar each epoch, the epoch said on other lines only: positions 50 and 100 of the
    # first bar, then 50 and 100 of the second: steps 50, 100, then 1 x 100 + 50 = 150 and 1 x 100 + 100 = 200.
    # The 100/100 redrawn (its postfix updated) is the same step: no new lap.
    lines = [
        "Epoch[1] Learning rate is 5e-05",
        "#015 50%|█████     | 50/100 [00:20<00:20,  2.40it/s]#015100%|██████████| 100/100 [00:40<00:00,  2.46it/s]",
        "#015100%|██████████| 100/100 [00:40<00:00,  2.46it/s, loss=1.7]",
        "Epoch[2] Learning rate is 5e-05",
        "#015 50%|█████     | 50/100 [00:20<00:20,  2.45it/s]#015100%|██████████| 100/100 [00:40<00:00,  2.49it/s]",
    ]
    assert sorted({s for _, s, _, _ in steps(lines)}) == [50, 100, 150, 200]
