"""The formats' memory saved with a file's position (collector/formats/memory.py): what a cron collect that reads a
log in pieces needs to read each piece as one read of the whole log would."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl

from tests.support.ingest_helpers import collect
from tierscope.collector.formats import ParseContext, parse_lines
from tierscope.collector.formats.base import WRITTEN, numbered
from tierscope.collector.formats.memory import KEY, VERSION, recall, remembered
from tierscope.collector.formats.ranks import RankCarry
from tierscope.collector.positions import OffsetStore
from tierscope.collector.small_append import MEMORY_KEY, memory_kept
from tierscope.dataset.store import Dataset

# Keras 3 `model.fit(epochs=2)` then `evaluate`, then a second fit at verbose=2 (keras-team/keras-io
# guides/md/distributed_training_with_tensorflow.md at e8a126a, output blocks as generated; read 2026-12-06;
# ../shared/cases case17). Line 4 is epoch 1's last bar, line 6 epoch 2's, line 7 evaluate's, line 11 the second
# fit's one epoch (no `Epoch 1/1` header: epochs=1 prints none).
KERAS_TWO_FITS = [
    "INFO:tensorflow:Using MirroredStrategy with devices ('/job:localhost/replica:0/task:0/device:CPU:0',)",
    "Number of devices: 1",
    "Epoch 1/2",
    " 1563/1563 ━━━━━━━━━━━━━━━━━━━━ 7s 4ms/step - loss: 0.3830 - sparse_categorical_accuracy: 0.8884",
    "Epoch 2/2",
    " 1563/1563 ━━━━━━━━━━━━━━━━━━━━ 9s 3ms/step - loss: 0.1068 - sparse_categorical_accuracy: 0.9671",
    " 313/313 ━━━━━━━━━━━━━━━━━━━━ 1s 2ms/step - loss: 0.0988 - sparse_categorical_accuracy: 0.9673",
    "",
    "INFO:tensorflow:Using MirroredStrategy with devices ('/job:localhost/replica:0/task:0/device:CPU:0',)",
    "Creating a new model",
    "1563/1563 - 7s - 4ms/step - loss: 0.2275 - sparse_categorical_accuracy: 0.9320",
]


def _write(path: Path, lines: list[str], mode: str = "w") -> None:
    with path.open(mode) as fh:
        fh.write("".join(f"{line}\n" for line in lines))


def _steps(ds: Dataset) -> list[tuple[int, int]]:
    steps = Dataset(ds.root).read("steps").sort("source_offset")
    return list(zip(steps["source_offset"].to_list(), steps["step"].to_list(), strict=True))


def test_a_keras_log_collected_in_two_pieces_keeps_its_epochs(tmp_path: Path) -> None:
    # Read whole: line 4 is epoch 1's bar of 1563 batches, global step 1563; line 6 epoch 2's, 1563 + 1563 = 3126;
    # line 7's 313 batches are evaluate's (another total than its epoch's training bar): no record; line 11 has no
    # `Epoch` line before it since, so it is still epoch 2's count: 3126 (the resume reads as a repeat, not a
    # restart at 1563, which would conflict with line 4's record of step 1563).
    whole = Dataset(tmp_path / "whole")
    log = tmp_path / "fit.log"
    _write(log, KERAS_TWO_FITS)
    collect(whole, log)
    assert _steps(whole) == [(4, 1563), (6, 3126), (11, 3126)]
    # The same file collected after line 9, then after line 11: the second collect starts in epoch 2 (saved with
    # the position), not in epoch 1 of a file it has never seen.
    pieces = Dataset(tmp_path / "pieces")
    log.unlink()
    _write(log, KERAS_TWO_FITS[:9])
    collect(pieces, log)
    _write(log, KERAS_TWO_FITS[9:], mode="a")
    collect(pieces, log)
    assert _steps(pieces) == [(4, 1563), (6, 3126), (11, 3126)]
    assert Dataset(pieces.root).read("rejects").height == 0
    carry = OffsetStore(pieces.state_dir).get(log, "r").carry  # type: ignore[union-attr]
    assert carry is not None and carry[KEY]["version"] == VERSION
    assert carry[KEY]["state"]["keras"] == {"~d": [[None, 2]]}  # the untagged task's epoch: 2


def test_memory_round_trips_through_json() -> None:
    # Every kind a format keeps: a tuple, a set, a dict keyed by None and by a tuple, a non-finite float, a frame
    # (a rank's run's last lines), a format's own class, a context of its own (a LogEntry's messages).
    tail = pl.DataFrame({"source_offset": [7, 8], "line": ["a 1", "a 1"]})
    inner = ParseContext(state={"keras": {"worker/0": 3}}, steps_seen=True)
    context = ParseContext(
        state={
            "grammar-bar-laps": {"": (1563, 2)},
            "grammar-nested-bars": {"": {"rising": {3, 1}, "last": (10, 4, False)}},
            "keras": {None: 2},
            "pairs": {(1, "a"): [1.5, float("inf")]},
            "ranks": RankCarry(4, tail, True, ["a note"]),
            "logentry": inner,
        },
        steps_measured=True,
    )
    saved = json.loads(json.dumps(remembered(context), sort_keys=True))
    again = ParseContext()
    recall(again, saved)
    state = again.state
    assert state["grammar-bar-laps"] == {"": (1563, 2)}
    assert state["grammar-nested-bars"] == {"": {"rising": {1, 3}, "last": (10, 4, False)}}
    assert state["keras"] == {None: 2} and state["pairs"] == {(1, "a"): [1.5, float("inf")]}
    ranks = state["ranks"]
    assert (ranks.k, ranks.noted, ranks.notes) == (4, True, ["a note"]) and ranks.tail.equals(tail)
    assert state["logentry"].state == {"keras": {"worker/0": 3}} and state["logentry"].steps_seen
    assert again.steps_measured


def test_what_cannot_be_saved_is_left_out_and_a_stranger_document_ignored() -> None:
    # A value of no kind it knows (an object) loses its key alone; a batch's own lines (WRITTEN) are never saved.
    context = ParseContext(state={"odd": object(), "grammar-timed": True, WRITTEN: pl.DataFrame({"line": ["x"]})})
    saved = remembered(context)
    assert saved is not None and saved["state"] == {"grammar-timed": True}
    # Another version, or a class name it does not know, leaves a fresh context fresh.
    stranger = {"version": VERSION, "state": {"a": {"~c": "X", "f": {}}}}
    for doc in ({"version": VERSION + 1, "state": {"a": 1}}, stranger):
        fresh = ParseContext()
        recall(fresh, doc)
        assert fresh.state == {}
    assert remembered(ParseContext()) is None  # nothing known: nothing saved


def test_the_small_append_names_the_same_key() -> None:
    assert MEMORY_KEY == KEY


def test_a_2016_append_leaves_the_memory_as_it_was() -> None:
    # The small append's path carries the memory on unchanged (collector/small_append.memory_kept); the chain agrees:
    # 2016 step lines and a checkpoint line parsed on from a context that read the first ones remember the same.
    lines = [
        f"Train [worker/0], step {s}:loss:2.0, accuracy:0.5 ({s / 10:.1f} sec) 10.0 global_steps/s, 10.0 local_steps/s"
        for s in range(1, 9)
    ]
    lines.insert(5, "INFO:root:Saving checkpoint to gs://bucket/job/model.ckpt-5")
    context = ParseContext()
    parse_lines(numbered(lines[:4]), context=context, first="cloudml")
    before = remembered(context)
    later = ParseContext()
    recall(later, json.loads(json.dumps(before)))
    tail = numbered(lines).filter(pl.col("source_offset") > 4)
    parse_lines(tail, context=later, first="cloudml")
    # Before: no ranks, and the layout not asked yet (cloudml read every line) though another format read the steps.
    assert before is not None and before["state"]["ranks"] is False and "layout" not in before["state"]
    assert before["state"]["layout-others-read"] is True and memory_kept(before)
    # After the checkpoint line reached them: the layout decided none (as it does at once where another format read
    # the steps) and MLPerf's memory empty; nothing else moved.
    after = remembered(later)
    assert after is not None and after.pop("digest") != before.pop("digest")  # its content moved, its digest too
    assert after == {**before, "state": {**before["state"], "layout": False, "mlperf": {}}}
    assert memory_kept(after)


# Elastic Horovod tf.keras under a Kubeflow MPIJob, four ranks (horovod/horovod issue 2844, heyfey, 2021-04-18;
# ../shared/cases case20): each rank's one-step bar, then rank 0's fit at verbose=2, one line per epoch.
HOROVOD_EPOCHS = [
    "[0]<stdout>:1/1 [==============================] - 0s 1ms/step - loss: 2.3073 - accuracy: 0.1094",
    "[2]<stdout>:1/1 [==============================] - 0s 1ms/step - loss: 2.3159 - accuracy: 0.1016",
    "[3]<stdout>:1/1 [==============================] - 0s 2ms/step - loss: 2.2980 - accuracy: 0.1172",
    "[1]<stdout>:1/1 [==============================] - 0s 2ms/step - loss: 2.3011 - accuracy: 0.1172",
    "[0]<stdout>:Epoch 1/200",
    "[0]<stdout>:125/125 - 3s - loss: 0.2595 - accuracy: 0.9216",
    "[0]<stdout>:Epoch 2/200",
    "[0]<stdout>:125/125 - 3s - loss: 0.0767 - accuracy: 0.9756",
    "[0]<stdout>:Epoch 3/200",
    "[0]<stdout>:125/125 - 3s - loss: 0.0757 - accuracy: 0.9768",
]


def _in_pieces(tmp_path: Path, lines: list[str], cuts: list[int]) -> Dataset:
    """``lines`` collected after each line number of ``cuts``, then whole."""
    tmp_path.mkdir()
    ds = Dataset(tmp_path / "pieces")
    log = tmp_path / "train.log"
    log.write_text("")
    for start, end in zip([0, *cuts], [*cuts, len(lines)], strict=True):
        _write(log, lines[start:end], mode="a")
        collect(ds, log)
    return ds


def test_an_epoch_line_ending_a_piece_starts_the_next_pieces_epoch(tmp_path: Path) -> None:
    # Whole: lines 1-4 are one step each (rank 0, 2, 3, 1: step 1); each `125/125` line closes epoch E at global step
    # 125 * E: line 6 step 125, line 8 250, line 10 375. A piece ending with `Epoch 1/200` (line 5) and one ending with
    # `Epoch 2/200` (line 7): the bar after each is its epoch's first, its training bar, not another total (1) than
    # the training bar of the epoch before (the `1/1` bars), which would drop it as an evaluation's.
    want = [(1, 1), (2, 1), (3, 1), (4, 1), (6, 125), (8, 250), (10, 375)]
    assert _steps(_in_pieces(tmp_path / "whole", HOROVOD_EPOCHS, [])) == want
    assert _steps(_in_pieces(tmp_path / "cut", HOROVOD_EPOCHS, [5, 7])) == want


def test_an_evaluate_bar_after_a_piece_stays_out_and_the_fit_ends_as_said(tmp_path: Path) -> None:
    # The Keras 3 guide's first fit cut after epoch 2's bar (line 6): the next piece's ` 313/313` bar is evaluate's
    # (313 is not epoch 2's training total, 1563), no record, as in one read. Cut after `Epoch 2/2` (line 5): epoch
    # 2's bar in the next piece finishes the fit, said on line 5 as one read says it.
    for cuts in ([6], [5]):
        ds = _in_pieces(tmp_path / str(cuts[0]), KERAS_TWO_FITS, cuts)
        assert _steps(ds) == [(4, 1563), (6, 3126), (11, 3126)]
        events = Dataset(ds.root).read("events").select("source_offset", "reason").rows()
        assert events == [(5, "Epoch 2/2 finished")]


# A TFJob worker's log, each line timed in Unix seconds (gaocegege/kubeflow-controller docs/get_started.md at
# 1034f59, 2017-12-29; ../shared/cases case22); the '...' is the doc's elision.
WORKER_STEPS = [
    "1514344770.659784: Worker 2: training step 1 done (global step: 0)",
    "1514344770.680242: Worker 2: training step 2 done (global step: 2)",
    "1514344770.693580: Worker 2: training step 3 done (global step: 8)",
    "...",
    "1514344771.224505: Worker 2: training step 52 done (global step: 201)",
]


def test_a_rate_derived_across_pieces_is_the_one_read_derives(tmp_path: Path) -> None:
    # Line 5's rates, from line 3 (the record before it): global (201 - 8) / (71.224505 - 70.693580 s) = 193 /
    # 0.530925 = 363.5165 steps/s; local (52 - 3) / 0.530925 = 92.2918 steps/s. Cut after line 3, the record before
    # is in the piece before (a near miss: a piece holding line 5 alone derived none).
    for name, cuts in (("whole", []), ("cut", [3])):
        ds = _in_pieces(tmp_path / name, WORKER_STEPS, cuts)
        last = Dataset(ds.root).read("steps").sort("source_offset").row(-1, named=True)
        assert last["source_offset"] == 5 and last["rate_derived"] is True
        assert abs(last["global_steps_per_s"] - 193 / 0.530925) < 1e-3
        assert abs(last["local_steps_per_s"] - 49 / 0.530925) < 1e-3


def test_a_memory_edited_by_hand_is_ignored_and_the_collect_reads_on(tmp_path: Path) -> None:
    # The same Keras log in two pieces, its saved memory edited between them: the epoch count a string (a hand's
    # edit the formats would trip on, a TypeError at the next bar). The digest no longer matches, so the memory is
    # ignored: the collect reads on without a traceback and stores the lines appended, decided again from them.
    log = tmp_path / "fit.log"
    _write(log, KERAS_TWO_FITS[:9])
    dataset = Dataset(tmp_path / "ds")
    collect(dataset, log)
    state = tmp_path / "ds" / "state" / "files.json"
    doc = json.loads(state.read_text())
    saved = doc["files"][0]["carry"][KEY]
    assert saved["digest"]  # saved with the digest of its content
    saved["state"] = {key: "abc" for key in saved["state"]}
    state.write_text(json.dumps(doc))
    _write(log, KERAS_TWO_FITS[9:], mode="a")
    collect(dataset, log)
    # lines 4 and 6 from the first piece; line 11 read with no memory of the epochs: a bar of 1563 in epoch 1
    # again, a conflict with line 4's step 1563, kept aside with its line (what a collect with no memory does)
    assert _steps(dataset) == [(4, 1563), (6, 3126)]
    assert Dataset(dataset.root).read("rejects").get_column("source_offset").to_list() == [11]
    edited = {"version": VERSION, "state": {"keras": "abc"}, "steps_measured": True, "digest": saved["digest"]}
    fresh = ParseContext()
    recall(fresh, edited)
    assert fresh.state == {}
