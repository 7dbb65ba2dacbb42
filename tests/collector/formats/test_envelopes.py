"""Envelopes: each platform's, launcher's and logger's wrapping read into role, task and time,
the message left byte for byte; newest-first files read in time order."""

from __future__ import annotations

from datetime import UTC, datetime

import polars as pl
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from tests.support.formats_support import frame, parse
from tierscope.collector.formats.envelopes import split_envelopes, strip_envelopes

MSG = "global step 52335: loss = 6.2518 (0.464 sec/step)"


def read(line: str, year: int | None = 2024) -> dict[str, object]:
    body, facts = split_envelopes(frame([line]), year)
    row = body.row(0, named=True)
    if facts is not None and facts.height:
        row |= facts.drop("source_offset").row(0, named=True)
    return row


@pytest.mark.parametrize(
    ("line", "role", "index", "when", "envelope"),
    [
        # Cloud console copy: severity letter, label before and (after two spaces) after the message.
        (f"I  worker-replica-3 {MSG}  worker-replica-3", "worker", 3, None, "console"),
        (f"E 2021-03-23T10:34:36.455868005Z master-replica-0 {MSG} master-replica-0 ", "master", 0,
         datetime(2021, 3, 23, 10, 34, 36, 455868, tzinfo=UTC), "console"),
        (f"I  workerpool1-2 {MSG}  workerpool1-2", "worker", 2, None, "console"),
        # gcloud stream-logs: 17:09:57 at +0100 is 16:09:57 UTC.
        (f"INFO\t2018-02-06 17:09:57 +0100\tmaster-replica-0\t\t{MSG}", "master", 0,
         datetime(2018, 2, 6, 16, 9, 57, tzinfo=UTC), "stream-logs"),
        (f"ray-training  | [1] {MSG}", "worker", 1, None, "compose+rank"),
        (f"[1,0]<stdout>:{MSG}", "worker", 0, None, "rank"),
        (f"[0] {MSG}", "worker", 0, None, "rank"),
        (f"[worker-2] {MSG}", "worker", 2, None, "launcher"),
        (f"worker-replica-0: {MSG}", "worker", 0, None, "replica"),
        (f"[pod/mnist-chief-0/tensorflow] {MSG}", "chief", 0, None, "pod"),
        (f"I0412 08:15:02.339120 139876 hooks.py:260] {MSG}", None, None,
         datetime(2024, 4, 12, 8, 15, 2, 339120, tzinfo=UTC), "glog"),
        (f"2017-12-07 19:24:42,741 INFO {MSG}", None, None, datetime(2017, 12, 7, 19, 24, 42, 741000, tzinfo=UTC),
         "python-logging"),
        (f"2019-05-01 12:00:00.123456: I tensorflow/core/x.cc:142] {MSG}", None, None,
         datetime(2019, 5, 1, 12, 0, 0, 123456, tzinfo=UTC), "tf-cpp"),
        (f"[0807 10:55:08 @base.py:210] {MSG}", None, None,
         datetime(2024, 8, 7, 10, 55, 8, tzinfo=UTC), "tensorpack-logger"),
        # Today's launchers and loggers.
        # mpirun --timestamp-output: C's ctime glued to the rank tag.
        (f"Tue Sep  8 09:24:20 2020[0]<stdout>:{MSG}", "worker", 0, datetime(2020, 9, 8, 9, 24, 20, tzinfo=UTC),
         "ctime+rank"),
        # SageMaker's MPI launch.
        (f"[1,mpirank:3,algo-1]<stdout>:{MSG}", "worker", 3, None, "rank"),
        # torchrun (PyTorch >= 2.3) on a rank's error output; and --tee / torchx.
        (f"[rank2]: {MSG}", "worker", 2, None, "rank"),
        (f"[default1]:{MSG}", "worker", 1, None, "torchrun-tee"),
        (f"[trainer0|0]:{MSG}", "worker", 0, None, "torchrun-tee"),
        # Ray's actor prefix, and its deduplication note at the line's end.
        (f"(RayTrainWorker pid=1193, ip=10.244.4.193) {MSG} [repeated 35x across cluster]", None, None, None,
         "ray"),
        (f"(pid=31681) {MSG}", None, None, None, "ray"),
        # Hugging Face's logger, the examples' month-first one, SageMaker algorithms' header.
        (f"[INFO|trainer.py:1145] 2021-05-20 20:16:39,037 >> {MSG}", None, None,
         datetime(2021, 5, 20, 20, 16, 39, 37000, tzinfo=UTC), "hf-logging"),
        (f"08/01/2025 23:27:31 - INFO - libs.unet - {MSG}", None, None,
         datetime(2025, 8, 1, 23, 27, 31, tzinfo=UTC), "month-first-time"),
        (f"[08/27/2018 06:07:55 INFO 140026571642688] {MSG}", None, None,
         datetime(2018, 8, 27, 6, 7, 55, tzinfo=UTC), "month-first-time"),
        # PyTorch's C++ header behind torchrun's rank tag: month 6 not zero-padded, the year from --year.
        (f"[rank0]:[E606 09:09:08.164985364 ProcessGroupNCCL.cpp:757] {MSG}", "worker", 0,
         datetime(2024, 6, 6, 9, 9, 8, 164985, tzinfo=UTC), "rank+c10"),
        # syslog / journald: the time (the year from --year) and the program's pid; CloudWatch's zoned time.
        (f"Dec  6 10:00:01 gpu-node-3 python3[4242]: {MSG}", None, None,
         datetime(2024, 12, 6, 10, 0, 1, tzinfo=UTC), "syslog"),
        (f"2024-12-06T10:00:01+0100 gpu-node-3 python3[4242]: {MSG}", None, None,
         datetime(2024, 12, 6, 9, 0, 1, tzinfo=UTC), "syslog"),
        (f"2023-05-03T14:25:39.123Z\t{MSG}", None, None, datetime(2023, 5, 3, 14, 25, 39, 123000, tzinfo=UTC),
         "zoned-time"),
        # DeepSpeed's fields after the time: level, source, rank (the rank names no task).
        (f"[2022-03-11 02:06:58,985] [INFO] [logging.py:69:log_dist] [Rank 0] {MSG}", None, None,
         datetime(2022, 3, 11, 2, 6, 58, 985000, tzinfo=UTC), "bracketed-time+bracketed-fields"),
        # A glog header inside a console copy: the glog time, with the console's year.
        (f"E 2021-03-23T10:34:36.455868005Z master-replica-0 I0323 10:34:36.455145 1401 m.py:651] {MSG} "
         "master-replica-0 ", "master", 0, datetime(2021, 3, 23, 10, 34, 36, 455145, tzinfo=UTC), "console+glog"),
    ],
)  # fmt: skip
def test_each_envelope_gives_role_task_time_and_the_bare_message(
    line: str, role: str | None, index: int | None, when: datetime | None, envelope: str
) -> None:
    got = read(line)
    assert got["line"] == MSG
    assert (got.get("role"), got.get("task_index"), got.get("timestamp"), got.get("envelope")) == (
        role,
        index,
        when,
        envelope,
    )


@pytest.mark.parametrize(
    "line",
    [
        MSG,
        "I think the loss is fine",  # a sentence starting with "I " is no console copy
        "  undefined",  # the console's artefact: left alone (no format reads it)
        "Train [master/0], step 1 (0.1 sec) 1.0 global steps/s, 1.0 local steps/s",
        "100%|#####|5000/5000[51:14<00:00, 0.66it/s]",
    ],
)
def test_lines_without_an_envelope_are_left_alone(line: str) -> None:
    got = read(line)
    assert got["line"] == line and got.get("envelope") is None


# Messages a program may print: anything without a line break (a trailing space is the
# console's separator, so the console cases use messages that do not end in one).
_text = st.text(st.characters(blacklist_categories=("Cc", "Cs"), blacklist_characters="\n\r"), max_size=80)
_wrappers = st.sampled_from(
    [
        "I  worker-replica-{i} {m}  worker-replica-{i}",
        "E 2021-03-23T10:34:36.455868005Z master-replica-{i} {m} master-replica-{i} ",
        "INFO\t2018-02-06 17:09:57 +0100\tworker-replica-{i}\t\t{m}",
        "ray-training  | [{i}] {m}",
        "[1,{i}]<stdout>:{m}",
        "[worker-{i}] {m}",
        "[pod/job-worker-{i}/tensorflow] {m}",
        "I0412 08:15:02.339120 139876 hooks.py:260] {m}",
        "2017-12-07 19:24:42,741 INFO {m}",
        "[0807 10:55:08 @base.py:210] {m}",
    ]
)


@settings(max_examples=300, deadline=None)
@given(message=_text, wrapper=_wrappers, index=st.integers(0, 99))
def test_stripping_keeps_the_message_byte_for_byte(message: str, wrapper: str, index: int) -> None:
    if wrapper.startswith(("I  ", "E ")) and message != message.rstrip(" "):
        message = message.rstrip(" ") + "."
    # a message that opens with a launcher's tag itself (``[abc0]:``) is a line with an envelope, not this case
    assume(strip_envelopes(pl.Series("line", [message])).to_list() == [message])
    line = wrapper.format(i=index, m=message)
    assert strip_envelopes(pl.Series("line", [line])).to_list() == [message]
    body, _ = split_envelopes(frame([line]), 2024)
    assert body.get_column("line").to_list() == [message]


# --- newest first --------------------------------------------------------------------------

_ESTIMATOR = st.lists(
    st.tuples(st.integers(1, 500), st.floats(0.5, 90.0), st.floats(0.01, 9.0)), min_size=3, max_size=8
)


def _estimator_log(rows: list[tuple[int, float, float]], timed: bool) -> list[str]:
    """An Estimator log, each record preceded by its rate line (order matters: the rate folds
    into the record after it), steps rising, optionally behind glog headers one second apart."""
    lines, step = [], 0
    for n, (gain, rate, loss) in enumerate(rows):
        step += gain
        head = f"I0412 08:{n // 60:02d}:{n % 60:02d}.000000 1 hooks.py:260] " if timed else "INFO:tensorflow:"
        lines += [f"{head}global_step/sec: {rate:.4f}", f"{head}loss = {loss:.4f}, step = {step} (1.0 sec)"]
    lines += ["Traceback (most recent call last):", '  File "t.py", line 1', "RuntimeError: worker lost"]
    return lines


def _records(lines: list[str]) -> tuple[list[tuple[object, ...]], list[tuple[object, ...]]]:
    got = parse(lines)
    steps = got.steps.select("step", "loss", "global_steps_per_s", "timestamp").sort("step").rows()
    events = got.events.select("event", "reason", "step").sort("event", "reason").rows()
    return steps, events


@settings(max_examples=25, deadline=None)
@given(rows=_ESTIMATOR, timed=st.booleans())
def test_reversing_a_files_lines_gives_the_same_records_and_status(
    rows: list[tuple[int, float, float]], timed: bool
) -> None:
    lines = _estimator_log(rows, timed)
    forward = _records(lines)
    assert len(forward[0]) == len(rows) and forward[1][0][:2] == ("failed", "RuntimeError: worker lost")
    assert _records(lines[::-1]) == forward


def test_a_newest_first_copy_keeps_its_own_line_numbers() -> None:
    lines = _estimator_log([(100, 10.0, 1.0), (100, 20.0, 0.5), (100, 30.0, 0.25)], timed=True)[:6][::-1]
    got = parse(lines)
    # Reversed, line 1 is step 300's loss line and line 2 its rate line: 30 steps/s goes with step 300.
    assert got.steps.select("source_offset", "step", "global_steps_per_s").sort("source_offset").rows() == [
        (1, 300, 30.0),
        (3, 200, 20.0),
        (5, 100, 10.0),
    ]


def test_a_json_member_line_is_its_unquoted_message_and_a_task_name_member_names_the_task() -> None:
    # A pretty-printed Cloud Logging LogEntry pasted as text: the message is what the program printed
    # ('\"' is a quote in JSON), the status reads it as any line; task_name and logName name the entry's
    # task (master-replica-0 is the master, index 0); a message cut off before its closing quote is read too.
    lines = [
        "{",
        '  "jsonPayload": {',
        '    "message": "Module raised an exception: \\"x\\" not found",',
        '    "levelname": "ERROR"',
        "  },",
        '  "resource": {"type": "ml_job"},',
        '      "task_name": "master-replica-0",',
        '  "logName": "projects/p/logs/worker-replica-2"',
        '    "message": "Quota failure for project p. The request for 2 K80',
        "}",
    ]
    body, facts = split_envelopes(frame(lines), None)
    assert body.get_column("line").to_list()[2] == 'Module raised an exception: "x" not found'
    assert body.get_column("line").to_list()[8] == "Quota failure for project p. The request for 2 K80"
    assert facts is not None
    named = facts.filter(pl.col("role").is_not_null()).select("source_offset", "role", "task_index").rows()
    assert named == [(7, "master", 0), (8, "worker", 2)]
    events = parse(lines).events
    assert events.get_column("reason").to_list()[0].startswith("Module raised an exception")
