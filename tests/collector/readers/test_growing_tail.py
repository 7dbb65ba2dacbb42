"""A file still being written: the lines it ends in that lines not written yet may complete wait for them.

A cron collect reads a log while its job writes it. Lines that fold with lines after them (a step line and its rate
line, a progress bar and the logging dict after it, the lines of one failure) are left for the next collect (not
stored, the position before them) while the file may grow, and read once the next lines come or the file has not
changed for the settle time; a file that ends in lines complete in themselves is read at once. Each case beside a
near miss that must be read now.
"""

from __future__ import annotations

from pathlib import Path

from tests.support.ingest_helpers import collect, following, frame_of, write_steps
from tierscope.collector.collect import collect_runs
from tierscope.collector.manifest import RunSpec
from tierscope.collector.positions import OffsetStore
from tierscope.dataset.store import Dataset

# tf_cnn_benchmarks, distributed: https://github.com/tensorflow/benchmarks/issues/89 (2017-12-07; ../shared/cases
# case07): the throughput line takes its step from the ``global step`` line just before it.
TFCNN_GLOBAL = "2017-12-07 19:34:21,283 INFO 31 global step 381280\n"
TFCNN_RATE = "2017-12-07 19:34:21,942 INFO 31 47650\timages/sec: 198.1 +/- 0.1 (jitter = 18.9)\t2.359\t0.617\t0.781\n"

# Estimator hooks: https://github.com/tensorflow/models/issues/4090 (cifar10_estimator, 2018; case08): the rate
# line before the loss line is its record's rate; the learning-rate line after it is no hook line.
HOOK_RATE = "INFO:tensorflow:global_step/sec: 12.2695\n"
HOOK_LOSS = "INFO:tensorflow:loss = 2.8192415, step = 201 (8.150 sec)\n"
HOOK_AFTER = "INFO:tensorflow:learning_rate = 0.1, loss = 2.8192415 (8.150 sec)\n"

# Vertex AI stream of a Hugging Face Trainer: https://github.com/GoogleCloudPlatform/vertex-ai-samples/issues/242
# (2022-01-26; case16): the logging dict's loss is the step of the bar drawn before it.
HF_BAR = (
    "ERROR   2022-01-26 14:19:34 +1100       workerpool0-0    31%|###       | 5974/19120 [31:21<59:25,  3.69it/s]\n"
)
HF_SAVED = (
    "ERROR   2022-01-26 14:19:41 +1100       workerpool0-0   "
    "Configuration saved in /tmp/xlm-roberta-large/checkpoint-6000/config.json\n"
)
HF_DICT = (
    "INFO    2022-01-26 14:19:41 +1100       workerpool0-0   "
    "{'loss': 5.3862, 'learning_rate': 1.3723849372384938e-05, 'epoch': 3.14}\n"
)

# kubectl describe of a TFJob: https://github.com/kubeflow/trainer/issues/999 (2019-05-15; case23): the condition's
# lines are one failure, its message the cause.
TFJOB_FAILED = "  Message:               TFJob myjob has failed because 1 Worker replica(s) failed.\n"
TFJOB_REASON = "    Reason:                TFJobFailed\n"
TFJOB_REPLICAS = [
    "  Replica Statuses:\n",
    "    Chief:\n",
    "    Evaluator:\n",
    "      Active:  1\n",
    "    PS:\n",
    "      Active:  4\n",
    "    Worker:\n",
    "      Active:  6\n",
]

# Four Horovod processes printing into one file untagged (case21, 2018-10-30): copies of one report.
RANK_COPIES = [
    "INFO:tensorflow:2018-10-30 10:26:03.272900: loss = 3.5446548, step = 5800 (145.448 sec)\n",
    "INFO:tensorflow:2018-10-30 10:26:03.273053: loss = 3.5446548, step = 5800 (145.448 sec)\n",
    "INFO:tensorflow:2018-10-30 10:26:03.273113: loss = 3.5446548, step = 5800 (145.448 sec)\n",
    "INFO:tensorflow:2018-10-30 10:26:03.273203: loss = 3.5446548, step = 5800 (145.449 sec)\n",
    "INFO:tensorflow:2018-10-30 10:28:28.958103: global_step/sec: 0.686408\n",
    "INFO:tensorflow:2018-10-30 10:28:28.958218: global_step/sec: 0.686408\n",
    "INFO:tensorflow:2018-10-30 10:28:28.958265: global_step/sec: 0.686408\n",
    "INFO:tensorflow:2018-10-30 10:28:28.958430: global_step/sec: 0.686407\n",
]


def _append(path: Path, *lines: str) -> None:
    with path.open("a") as fh:
        fh.writelines(lines)


def test_a_global_step_line_waits_for_its_throughput_line(tmp_path: Path) -> None:
    log, ds = tmp_path / "tfcnn.log", Dataset(tmp_path / "ds")
    following(ds, log)
    _append(log, TFCNN_GLOBAL)
    assert collect(ds, log) == [0]  # left for the next collect: not read, not counted
    assert not ds.files("steps", "r")
    _append(log, TFCNN_RATE)
    assert collect(ds, log) == [2]
    # one record: step 381280 from line 1, local step 47650 and 198.1 images/s from line 2
    steps = frame_of(ds, "steps")
    assert steps.select("source_offset", "step", "local_step", "examples_per_s").rows() == [(2, 381280, 47650, 198.1)]


def test_a_file_ending_in_the_throughput_line_is_read_at_once(tmp_path: Path) -> None:
    log, ds = tmp_path / "tfcnn.log", Dataset(tmp_path / "ds")
    _append(log, TFCNN_GLOBAL, TFCNN_RATE)
    assert collect(ds, log) == [2]
    assert frame_of(ds, "steps")["step"].to_list() == [381280]


def test_a_hook_report_waits_until_a_line_that_is_no_hook_line(tmp_path: Path) -> None:
    log, ds = tmp_path / "hooks.log", Dataset(tmp_path / "ds")
    following(ds, log)
    _append(log, HOOK_RATE)
    assert collect(ds, log) == [0]
    _append(log, HOOK_LOSS)
    assert collect(ds, log) == [0]  # the record: a rate printed after it may still be its own
    _append(log, HOOK_AFTER)
    assert collect(ds, log) == [3]
    # step 201 at the rate stated before it: 12.2695 steps/s, over 8.150 s
    steps = frame_of(ds, "steps")
    assert steps.select("step", "global_steps_per_s", "interval_s").rows() == [(201, 12.2695, 8.15)]


def test_a_bar_waits_for_its_logging_dict_until_the_file_settles(tmp_path: Path) -> None:
    log, ds = tmp_path / "vertex.log", Dataset(tmp_path / "ds")
    following(ds, log)
    _append(log, HF_BAR, HF_SAVED, HF_DICT)
    assert collect(ds, log) == [0]  # the last bar: another dict may still follow it
    assert collect(ds, log, settle_s=0.0) == [3]
    # step 5974 at 3.69 it/s, its loss from the dict two lines on
    steps = frame_of(ds, "steps")
    assert steps.select("step", "global_steps_per_s", "loss").rows() == [(5974, 3.69, 5.3862)]


def test_the_collect_says_which_lines_it_held_back_and_keeps_them_in_the_position(tmp_path: Path) -> None:
    log, ds = tmp_path / "tfcnn.log", Dataset(tmp_path / "ds")
    following(ds, log)
    _append(log, TFCNN_GLOBAL, TFCNN_RATE, TFCNN_GLOBAL)
    spec = [RunSpec(run_id="r", tier="BASIC", files=[log])]
    [counts] = collect_runs(ds, spec).sources  # default settle time, 300 s
    # lines 1-2 read (one record); line 3, a global step line, held: its throughput line may come next
    assert (counts.lines, counts.steps) == (2, 1)
    [note] = counts.notes
    assert "its last line (3) may still be completed by lines not written yet" in note, note
    assert note.endswith("is read once it settles (--settle 300 s), or now with --settle 0"), note
    held = OffsetStore(ds.state_dir).get(log, "r")
    # the position: after line 2 (its bytes), holding 1 line that ends the file as it is
    assert held is not None
    after = len(TFCNN_GLOBAL) + len(TFCNN_RATE)
    assert (held.line, held.offset, held.held_lines, held.size) == (2, after, 1, log.stat().st_size)
    [counts] = collect_runs(ds, spec, settle_s=0.0).sources
    assert (counts.lines, counts.notes) == (1, [])  # read once settled, and nothing said


def test_a_file_ending_in_no_bar_is_read_at_once(tmp_path: Path) -> None:
    log, ds = tmp_path / "vertex.log", Dataset(tmp_path / "ds")
    _append(log, HF_SAVED)  # names a step, states no rate or time: no record, nothing to wait for
    assert collect(ds, log) == [1]


def test_a_failure_block_waits_for_its_next_lines(tmp_path: Path) -> None:
    log, ds = tmp_path / "describe.txt", Dataset(tmp_path / "ds")
    following(ds, log)
    _append(log, TFJOB_FAILED, TFJOB_REASON)
    assert collect(ds, log) == [0]  # a failure line within 6 lines may join the block
    assert collect(ds, log, settle_s=0.0) == [2]
    # one event for the block: the message, the most telling of its two lines
    events = frame_of(ds, "events")
    assert events.select("source_offset", "event", "reason").rows() == [
        (1, "failed", "TFJob myjob has failed because 1 Worker replica(s) failed.")
    ]


def test_a_failure_line_followed_by_more_than_a_block_is_read_at_once(tmp_path: Path) -> None:
    log, ds = tmp_path / "describe.txt", Dataset(tmp_path / "ds")
    _append(log, TFJOB_FAILED, *TFJOB_REPLICAS)  # its last line 8 lines after it: more than BLOCK_LINES (6)
    assert collect(ds, log) == [9]
    assert frame_of(ds, "events")["event"].to_list() == ["failed"]


def test_copies_that_do_not_yet_tell_the_ranks_wait(tmp_path: Path) -> None:
    log, ds = tmp_path / "horovod.log", Dataset(tmp_path / "ds")
    following(ds, log)
    _append(log, *RANK_COPIES[:2])
    assert collect(ds, log) == [0]  # one run of copies: two ranks, or more whose lines are not written yet
    _append(log, *RANK_COPIES[2:])
    assert collect(ds, log, settle_s=0.0) == [8]
    # two runs of four copies tell four ranks: the copies of step 5800 are the records of workers 0-3
    steps = frame_of(ds, "steps").filter(step=5800)
    assert sorted(steps["task_index"].to_list()) == [0, 1, 2, 3]


def test_distinct_steps_are_no_copies_and_are_read_at_once(tmp_path: Path) -> None:
    log, ds = tmp_path / "train.log", Dataset(tmp_path / "ds")
    write_steps(log, [1, 2])
    assert collect(ds, log) == [2]


def test_a_files_first_read_takes_its_open_end_as_it_is(tmp_path: Path) -> None:
    # A log downloaded a moment ago changed as recently as one still being written: its first collect reads every
    # line (the bar, the saved config, the dict: 3 lines), where a followed file would hold the bar back.
    log, ds = tmp_path / "vertex.log", Dataset(tmp_path / "ds")
    _append(log, HF_BAR, HF_SAVED, HF_DICT)
    assert collect(ds, log) == [3]
    # step 5974 at 3.69 it/s with the dict's loss, as a collect of the settled file reads it
    steps = frame_of(ds, "steps")
    assert steps.select("step", "global_steps_per_s", "loss").rows() == [(5974, 3.69, 5.3862)]
    assert OffsetStore(ds.state_dir).get(log, "r").held_lines is None  # type: ignore[union-attr]


def test_a_first_read_holds_a_last_line_without_its_newline_while_the_file_is_fresh(tmp_path: Path) -> None:
    # A live writer's buffered output stops mid-line: taken now, the rest of the line would be read later as a line
    # of its own. So even a first read leaves it (1 line read, no record), and says so; once settled it is read.
    log, ds = tmp_path / "tfcnn.log", Dataset(tmp_path / "ds")
    _append(log, TFCNN_GLOBAL, TFCNN_RATE[:40])
    spec = [RunSpec(run_id="r", tier="BASIC", files=[log])]
    [counts] = collect_runs(ds, spec).sources
    assert (counts.lines, counts.steps) == (1, 0)
    assert any("its last line (2) may still be completed" in n for n in counts.notes), counts.notes
    _append(log, TFCNN_RATE[40:])
    # the first collect stored nothing (a global step line alone is no record): it did not mark the file read, so
    # this one reads both lines
    assert collect(ds, log) == [2]
    # the whole throughput line, with its step from line 1: 381280 at 198.1 images/s
    assert frame_of(ds, "steps").select("step", "examples_per_s").rows() == [(381280, 198.1)]


def test_an_empty_log_is_followed_from_its_first_collect(tmp_path: Path) -> None:
    # cron's first collect finds the job's log just created: its position (0 lines) is kept, so the global step
    # line written next is a followed file's open end and waits for its throughput line.
    log, ds = tmp_path / "tfcnn.log", Dataset(tmp_path / "ds")
    log.touch()
    assert collect(ds, log) == [0]
    state = OffsetStore(ds.state_dir).get(log, "r")
    assert state is not None and (state.offset, state.line, state.whole) == (0, 0, False)
    _append(log, TFCNN_GLOBAL)
    assert collect(ds, log) == [0]
    _append(log, TFCNN_RATE)
    assert collect(ds, log) == [2]
    assert frame_of(ds, "steps")["step"].to_list() == [381280]
