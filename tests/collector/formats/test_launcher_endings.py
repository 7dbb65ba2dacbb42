"""Endings of launchers and platforms as their users paste them: each kind read in two sources' words, its
near-misses refused. Lines are quoted from public issue threads (cited beside each); the expected event is the
line's own verdict: ``failed`` with the line as cause, or ``finished``."""

from __future__ import annotations

import pytest

from tests.support.formats_support import endings, parse
from tierscope.collector.formats.status import INTERRUPTED

#: A step record before an ending, in a shape every build reads (TensorFlow's hook).
STEP = "INFO:tensorflow:loss = 0.5, step = 100 (2.0 sec)"


@pytest.mark.parametrize(
    ("lines", "reason"),
    [
        # Open MPI's report (horovod/horovod#1421, 2019; mlcommons/storage#391, 2026): the most telling line of the
        # block is the one saying a process exited non-zero, not the 'terminated normally' preamble
        (
            [
                "Primary job  terminated normally, but 1 process returned",
                "a non-zero exit code. Per user-direction, the job has been aborted.",
                "mpirun detected that one or more processes exited with non-zero status, thus causing",
                "the job to be terminated. The first process to do so was:",
                "  Exit code:    1",
            ],
            "mpirun detected that one or more processes exited with non-zero status, thus causing",
        ),
        # Horovod's own error under Determined (determined-ai/determined#3275, 2021)
        (
            [
                "RuntimeError: Horovod detected that one or more processes exited with non-zero status, thus causing "
                "the job to be terminated. The first process to do so was:",
            ],
            "RuntimeError: Horovod detected that one or more processes exited with non-zero status, thus causing "
            "the job to be terminated. The first process to do so was:",
        ),
        # Vertex AI names replicas by worker pool (GoogleCloudPlatform/vertex-ai-samples PR 1504, 2023)
        (
            ["The replica workerpool0-0 exited with a non-zero status of 1. Termination reason: Error."],
            "The replica workerpool0-0 exited with a non-zero status of 1. Termination reason: Error.",
        ),
        # SageMaker's SDK on a failed job (aws/amazon-sagemaker-examples#1740, 2023; aws/sagemaker-python-sdk#1225)
        (
            [
                "UnexpectedStatusException: Error for Training job rf-scikit-2023-09-28-07-37-56-820: Failed. "
                "Reason: AlgorithmError: framework error: "
            ],
            "UnexpectedStatusException: Error for Training job rf-scikit-2023-09-28-07-37-56-820: Failed. "
            "Reason: AlgorithmError: framework error:",
        ),
        (
            ["ErrorMessage: ExecuteUserScriptError:"],
            "ErrorMessage: ExecuteUserScriptError:",
        ),
        # Ray Tune's status block at the experiment's end (ray-project/ray PR 23475, 2022)
        (["Number of trials: 1/1 (1 ERROR)", "Number of errored trials: 1"], "Number of errored trials: 1"),
        (
            ["ray.tune.error.TuneError: ('Trials did not complete', [A3C_A3C_four_way_train-v0_ff741_00000])"],
            "ray.tune.error.TuneError: ('Trials did not complete', [A3C_A3C_four_way_train-v0_ff741_00000])",
        ),
    ],
)
def test_a_launchers_report_of_a_failed_process_fails_the_run_with_its_cause(lines: list[str], reason: str) -> None:
    assert endings(STEP, *lines) == [("failed", reason)]


@pytest.mark.parametrize(
    "line",
    [
        # Intellindust-AI-Lab/DEIM#96 (2025) and LayneH/GreenMIM#6 (2022) quote the engines' NaN stop
        "Loss is nan, stopping training",
        "loss is nan, stopping training!",
        # kubeflow/katib#1112 (2020): kubectl get pods, the master's container restarted with back-off
        "pytorchjob-example-lmfrjh5l-master-0         0/2     CrashLoopBackOff   14         11m",
    ],
)
def test_a_nan_stop_and_a_crash_looping_pod_fail_the_run(line: str) -> None:
    assert endings(STEP, line) == [("failed", line.strip())]


def test_ray_tunes_failed_trial_task_fails_the_run_unless_a_step_follows_its_retry() -> None:
    # ultralytics/ultralytics#18551 (2025): the tune controller's error for a trial's task; Tune may retry it
    line = "2025-01-06 15:36:23,758\tERROR tune_controller.py:1331 -- Trial task failed for trial _tune_94bfe_00002"
    assert [e for e, _ in endings(STEP, line)] == ["failed"]
    assert endings(STEP, line, "INFO:tensorflow:loss = 0.4, step = 200 (2.0 sec)") == []


@pytest.mark.parametrize(
    "lines",
    [
        # Keras 3 (keras-team/keras#20323, 2024) and Keras 2's zero-padded epoch (zzh8829/yolov3-tf2#187, 2020)
        ["Epoch 8: early stopping", "Restoring model weights from the end of the best epoch: 6."],
        ["Epoch 00046: early stopping"],
        # Lightning's EarlyStopping callback, verbose
        [
            "Monitored metric val_loss did not improve in the last 3 records. Best score: 0.412. "
            "Signaling Trainer to stop."
        ],
    ],
)
def test_early_stopping_finishes_the_run(lines: list[str]) -> None:
    # the run stopped on purpose: its work is done, though fewer epochs than announced ran
    assert [e for e, _ in endings("Epoch 8/50", STEP, *lines)] == ["finished"]


def test_word_language_models_end_of_training_finishes_the_run_nan_losses_or_not() -> None:
    # pypi-data nlpia2 checkpoint_notes/model_RNN_RELU_epochs_5.md: every loss nan, the run still ends its 5 epochs
    lines = [
        "| epoch   5 |  2800/ 2983 batches | lr 0.3125 | ms/batch 11.43 | loss   nan | ppl      nan",
        "| End of training | test loss   nan | test ppl      nan",
    ]
    assert endings(*lines) == [("finished", "| End of training | test loss   nan | test ppl      nan")]


@pytest.mark.parametrize(
    "lines",
    [
        # fairseq recovers from an OOM by skipping the batch (facebookresearch/fairseq#103, 2018; ray PR 5755, 2019)
        [
            "(pid=3959, ip=172.31.41.219) | WARNING: ran out of memory with exception: CUDA out of memory. Tried to "
            "allocate 1.50 GiB (GPU 0; 15.75 GiB total capacity; 11.71 GiB already allocated; 584.94 MiB free);",
            "(pid=3959, ip=172.31.41.219)  Skipping batch",
        ],
        ["| WARNING: ran out of memory on GPU #2, skipping batch"],
        # a retry said on the line
        ["CUDA out of memory, retrying with a smaller batch"],
        # padded exit code 0 and early stopping's settings are no failure
        ["  Exit code:    0", "early_stopping_patience = 5"],
        # a bare word inside a message is no Ctrl-C
        ["KeyboardInterrupt handler installed"],
    ],
)
def test_recovered_or_warned_out_of_memory_and_settings_fail_nothing(lines: list[str]) -> None:
    assert [e for e, _ in endings(STEP, *lines) if e == "failed"] == []


def test_a_keyboard_interrupt_whose_traceback_start_is_out_of_view_fails_the_run_as_interrupted() -> None:
    # k2-fsa/icefall#1084: DataLoader workers' tracebacks interleaved after Ctrl-C, their starts above the excerpt
    lines = [
        STEP,
        '  File "/home/anaconda3/envs/k2/lib/python3.8/threading.py", line 1027, in _wait_for_tstate_lock',
        "    elif lock.acquire(block, timeout):",
        "KeyboardInterrupt",
    ]
    assert endings(*lines) == [("failed", INTERRUPTED)]


#: The program died at start-up (a module missing): no step record at all.
STARTUP = [
    "Loading model...",
    "Traceback (most recent call last):",
    '  File "train.py", line 3, in <module>',
    "    import torch",
    "ModuleNotFoundError: No module named 'torch'",
]


def test_a_log_that_dies_before_its_first_step_fails_with_its_last_exception() -> None:
    # one earlier traceback the program went on from (a warning's stack) is not the cause: the last one is
    warned = ["Traceback (most recent call last):", '  File "a.py", line 1, in <module>', "ImportError: optional"]
    got = parse([*warned, *STARTUP])
    assert got.steps.height == 0
    assert got.events.select("event", "reason", "step").rows() == [
        ("failed", "ModuleNotFoundError: No module named 'torch'", None)
    ]


def test_a_traceback_before_the_first_step_or_before_a_finish_fails_nothing() -> None:
    # steps after it: the program went on; a finish after it: the program said it completed
    assert endings(*STARTUP, STEP) == []
    assert endings(*STARTUP, "Job completed successfully.") == [("finished", "Job completed successfully.")]


def test_a_traceback_python_says_it_ignored_fails_nothing() -> None:
    # Python's unraisable-exception report at interpreter exit after the work is done (k2-fsa/icefall#1084 shows
    # the header): the run stays finished
    lines = [
        STEP,
        "Training completed.",
        "Exception ignored in: <function _MultiProcessingDataLoaderIter.__del__ at 0x7f15d63cfee0>",
        "Traceback (most recent call last):",
        '  File "/usr/lib/python3.8/site-packages/torch/utils/data/dataloader.py", line 1466, in __del__',
        "AttributeError: '_MultiProcessingDataLoaderIter' object has no attribute '_shutdown'",
    ]
    assert endings(*lines) == [("finished", "Training completed.")]


@pytest.mark.parametrize(
    "after",
    [
        # a test runner's summary after a test's captured error, pip's install after a retried download, a README's
        # prose after a quoted traceback, a program that logged its error and went on: the traceback ends nothing
        ["tests/test_io.py::test_recover PASSED", "3 passed in 0.42s"],
        ["Successfully installed torch-2.1.0"],
        ["```", "Then install torch and run the script again."],
        ["2024-01-01 12:00:00,000 - INFO - retrying...", "2024-01-01 12:00:10,000 - INFO - epoch 2 ok"],
    ],
)
def test_a_traceback_the_log_goes_on_after_fails_no_log_without_steps(after: list[str]) -> None:
    assert endings(*STARTUP, *after) == []


def test_a_traceback_followed_only_by_its_error_report_still_ends_the_log() -> None:
    # the exception line, then blank lines, a fence and the shell's report of the exit: the log ends there
    lines = [*STARTUP, "", "```", "ERROR: process exited with code 1"]
    assert ("failed", "ModuleNotFoundError: No module named 'torch'") in endings(*lines)


@pytest.mark.parametrize(
    "line",
    [
        "  Exit code:    1",  # a pip build's report of a failed subprocess, the install going on
        "2024-01-01 12:00:00,000 - INFO - ExecuteUserScriptError is raised when the script fails; see the docs",
        "WARNING - Loss is nan, stopping training is NOT enabled (nan_guard=off)",
    ],
)
def test_a_failure_line_with_steps_after_it_is_recovered(line: str) -> None:
    # each fails a run that ends on it; a step record after it shows the run went on
    assert [e for e, _ in endings(STEP, line)] == ["failed"]
    assert endings(STEP, line, "INFO:tensorflow:loss = 0.4, step = 200 (2.0 sec)") == []


def test_an_exit_code_of_zero_padded_as_open_mpi_prints_it_finishes_the_run() -> None:
    assert endings(STEP, "  Exit code:    0") == [("finished", "Exit code:    0")]
