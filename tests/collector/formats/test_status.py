"""Run status from what platforms print: failed and finished events with their cause; false alarms stay quiet."""

from __future__ import annotations

import pytest

from tests.support.formats_support import parse

STEP = "INFO:tensorflow:loss = 0.5, step = 100 (2.0 sec)"


def events(lines: list[str]) -> list[tuple[str, str]]:
    got = parse(lines)
    return got.events.select("event", "reason").rows()


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        (
            "The replica master 0 exited with a non-zero status of 1. Termination reason: Error.",
            "The replica master 0 exited with a non-zero status of 1. Termination reason: Error.",
        ),
        (
            "The replica worker 1 ran out-of-memory and exited with a non-zero status of 247.",
            "The replica worker 1 ran out-of-memory and exited with a non-zero status of 247.",
        ),
        ("Job failed.", "Job failed."),
        ("state: FAILED", "state: FAILED"),
        ('  "state": "JOB_STATE_FAILED",', '"state": "JOB_STATE_FAILED",'),
        (
            "Command '['python3', '-m', 'trainer.task']' returned non-zero exit status 1",
            "Command '['python3', '-m', 'trainer.task']' returned non-zero exit status 1",
        ),
        ("trainer exited with code 137", "trainer exited with code 137"),
        ("ERROR:tensorflow:Model diverged with loss = NaN.", "Model diverged with loss = NaN."),
        (
            "ResourceExhaustedError (see above for traceback): OOM when allocating tensor with shape[64,256]",
            "ResourceExhaustedError (see above for traceback): OOM when allocating tensor with shape[64,256]",
        ),
        ("Killed", "Killed"),
        # No step after it: the lost worker ends the run; the cause without the logger's header.
        (
            "INFO:tensorflow:ShutdownHook: lame workers found: HeartbeatManager(/job:worker/replica:0/task:0)",
            "ShutdownHook: lame workers found: HeartbeatManager(/job:worker/replica:0/task:0)",
        ),
        ("      Reason:       OOMKilled", "Reason:       OOMKilled"),
        ("RESOURCE_EXHAUSTED: Quota failure for project p.", "RESOURCE_EXHAUSTED: Quota failure for project p."),
    ],
)
def test_failure_lines_fail_the_run_with_their_cause(line: str, reason: str) -> None:
    assert events([line]) == [("failed", reason)]


def test_an_api_error_body_is_one_failure_named_by_its_message_even_cut_off() -> None:
    body = [
        "ERROR: (gcloud.ai-platform.jobs.submit.training) RESOURCE_EXHAUSTED: Quota failure for project p.",
        "{",
        '  "error": {',
        '    "code": 429,',
        '    "message": "Quota failure for project p. The request for 80 K80 accelerators exceeds the allowed maximum',
    ]
    # The gcloud line is its own format's event; the body's lines are one event named by the message.
    assert events(body) == [
        ("failed", "(gcloud.ai-platform.jobs.submit.training) RESOURCE_EXHAUSTED: Quota failure for project p."),
        ("failed", "Quota failure for project p. The request for 80 K80 accelerators exceeds the allowed maximum"),
    ]
    whole = [
        *body[1:4],
        '    "message": "Quota exceeded for quota metric cpus.",',
        '    "status": "RESOURCE_EXHAUSTED"',
    ]
    assert events(whole) == [("failed", "Quota exceeded for quota metric cpus.")]


def test_a_tfjobs_failed_condition_in_kubectl_describe() -> None:
    describe = [
        "  Conditions:",
        "    Last Transition Time:  2019-05-15T10:00:00Z",
        "    Message:               TFJob myjob has failed because 1 Worker replica(s) failed.",
        "    Reason:                TFJobFailed",
        "    Status:                True",
        "    Type:                  Failed",
    ]
    assert events(describe) == [("failed", "TFJob myjob has failed because 1 Worker replica(s) failed.")]


PREEMPTED = (
    "INFO:tensorflow:An error was raised. This may be due to a preemption in a connected worker or parameter "
    "server. The current session will be closed and a new session will be created. Error: OS Error"
)
LAME = "INFO:tensorflow:ShutdownHook: lame workers found: HeartbeatManager(/job:worker/replica:0/task:0/device:CPU:0)"


@pytest.mark.parametrize("line", [PREEMPTED, LAME])
def test_preemption_fails_a_run_only_when_no_step_follows(line: str) -> None:
    assert [e for e, _ in events([STEP, line])] == ["failed"]
    # TensorFlow opened a new session and training went on: not a failure.
    assert events([STEP, line, "INFO:tensorflow:loss = 0.4, step = 200 (2.0 sec)"]) == []


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("Job completed successfully.", "Job completed successfully."),
        ("ray-training exited with code 0", "ray-training exited with code 0"),
        ("Training ends @ 1514344771.224552", "Training ends @ 1514344771.224552"),
        ("    Message:               TFJob myjob successfully completed.", "TFJob myjob successfully completed."),
    ],
)
def test_completion_lines_finish_the_run(line: str, reason: str) -> None:
    assert events([STEP, line]) == [("finished", reason)]


@pytest.mark.parametrize(
    "lines",
    [
        # AI Platform's stderr copy of an INFO line, severity ERROR, as the console shows it.
        [
            "I 2021-03-23T10:34:36.455145835Z master-replica-0 Step 20900 per-step time 11.124s master-replica-0 ",
            "E 2021-03-23T10:34:36.455868005Z master-replica-0 I0323 10:34:36.455145 1 m.py:651] Step 20900 "
            "per-step time 11.124s master-replica-0 ",
        ],
        ["ERROR\t2019-05-01 12:00:00 -0700\tmaster-replica-0\t\tINFO:tensorflow:loss = 0.5, step = 100"],
        # TensorFlow's allocator says itself that this is not a failure.
        [
            "W0412 08:15:02.339120 1 bfc_allocator.cc:239] Allocator (GPU_0_bfc) ran out of memory trying to allocate "
            "2.26GiB. The caller indicates that this is not a failure, but may mean that there could be performance "
            "gains if more memory were available.",
        ],
        # A worker reporting a lost stream, severity I, is no job failure.
        [
            "I  worker-replica-1 Error reported to Coordinator: <class 'UnavailableError'>, Stream removed  "
            "worker-replica-1"
        ],
        ["Module completed; cleaning up.", "Finished training it 150/150 of epoch 0, 465.18 ms/it"],
    ],
)
def test_false_alarms_fail_nothing(lines: list[str]) -> None:
    assert events(lines) == []


def test_one_cause_printed_on_neighbouring_lines_is_one_event_named_by_its_most_telling_line() -> None:
    lines = [
        "E  Command '['python3', '-m', 'object_detection.train']' returned non-zero exit status 1",
        "I  Module completed; cleaning up.",
        "E  The replica master 0 exited with a non-zero status of 1. Termination reason: Error. ",
    ]
    assert events(lines) == [
        ("failed", "The replica master 0 exited with a non-zero status of 1. Termination reason: Error.")
    ]


# --- a run the user stopped by hand ------------------------------------------------------------------------

INTERRUPTED = "interrupted by the user (Ctrl-C) before the run finished"
STEP2 = "INFO:tensorflow:loss = 0.4, step = 200 (2.0 sec)"


@pytest.mark.parametrize("line", ["^C", "  ^C  ", "^C^C", "Generating samples ...^C"])
def test_a_ctrl_c_ending_the_log_fails_the_run_as_interrupted(line: str) -> None:
    assert events([STEP, line]) == [("failed", INTERRUPTED)]


def test_a_ctrl_c_that_steps_follow_did_not_end_the_run() -> None:
    assert events([STEP, "^C", STEP2]) == []


@pytest.mark.parametrize(
    "line",
    [
        "^Clip gradients at 1.0",  # a message that opens with a caret and a capital
        "match lines with the regex ^Conv2D",
        "press ^C to stop the run",  # advice, no echo of a Ctrl-C
    ],
)
def test_a_caret_c_inside_a_message_fails_nothing(line: str) -> None:
    assert events([STEP, line]) == []


@pytest.mark.parametrize("first", ["Traceback (most recent call last):", "^CTraceback (most recent call last):"])
def test_a_keyboard_interrupt_traceback_fails_the_run_as_interrupted(first: str) -> None:
    lines = [STEP, first, '  File "train.py", line 10, in <module>', "    time.sleep(1)", "KeyboardInterrupt"]
    reasons = [r for e, r in events(lines) if e == "failed"]
    assert f"{INTERRUPTED} (KeyboardInterrupt)" in reasons
