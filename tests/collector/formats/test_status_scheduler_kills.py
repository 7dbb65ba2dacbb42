"""Endings a scheduler, a controller or the shell print: Slurm's memory limit enforced, a trial's state moved from
running to an error, the shell's "Killed" closing a paste's inline code.

Lines quoted from public threads (read 2026-12-07): coqui-ai/STT issue 2238 (2022-06-10), GokuMohandas/Made-With-ML
issue 271 (Ray Tune, 2024-10-10), OpenNMT/OpenNMT-py issue 1824 (2020-07-04)."""

from __future__ import annotations

import pytest

from tests.support.formats_support import endings, parse

STEP = "Epoch 0 |   Training | Elapsed Time: 0:00:15 | Steps: 93 | Loss: 24.580695"


def test_slurms_memory_limit_is_the_cause_beside_its_cancel() -> None:
    got = endings(
        STEP,
        "slurmstepd: error: Job 7518 exceeded memory limit (626359956 > 512000000), being killed",
        "slurmstepd: error: Exceeded job memory limit",
        "slurmstepd: error: *** JOB 7518 ON xantipa CANCELLED AT 2022-06-10T17:11:35 ***",
    )
    # one event (the lines lie together); its reason the most telling line, the limit enforced
    assert got == [
        ("failed", "slurmstepd: error: Job 7518 exceeded memory limit (626359956 > 512000000), being killed")
    ]


def test_slurms_memory_limit_of_a_step_named_by_its_id_is_a_failure() -> None:
    # Slurm 20.11 on prints the step as %ps (src/plugins/jobacct_gather/common/common_jag.c: ``error("%ps exceeded
    # memory limit (%"PRIu64" > %"PRIu64"), being killed", ...)``): ``StepId=1234.0``; the virtual memory limit is
    # enforced in the same words with ``virtual`` before them
    for line in (
        "slurmstepd: error: StepId=1234.0 exceeded memory limit (2097152 > 1048576), being killed",
        "slurmstepd: error: StepId=1234.0 exceeded virtual memory limit (2097152 > 1048576), being killed",
    ):
        assert endings(STEP, line) == [("failed", line)]


def test_a_sentence_about_a_memory_limit_and_being_killed_is_no_failure() -> None:
    # near-miss: the two phrases in a program's own sentence, no Slurm figures (usage > limit) between them
    line = "2024-03-01 10:01:00,000 - INFO - we have not exceeded memory limit yet, being killed would be bad"
    assert endings(STEP, line) == []


def test_a_memory_limit_exceeded_at_some_point_is_no_failure() -> None:
    # near-miss: Slurm's warning after a step that lived on
    assert endings(STEP, "slurmstepd: error: Exceeded step memory limit at some point.") == []


def test_a_trial_moved_from_running_to_error_fails_the_run() -> None:
    line = (
        "2024-10-10 16:42:48,845\tDEBUG tune_controller.py:735 -- Setting status for trial TorchTrainer_ccdf1_00000 "
        "from RUNNING to ERROR"
    )
    got = endings(line)
    assert [e for e, _ in got] == ["failed"]


@pytest.mark.parametrize(
    "line",
    [
        # near-misses: a trial's normal end, and its start
        "2024-10-10 16:43:48,845\tDEBUG tune_controller.py:735 -- Setting status for trial T_00000 from RUNNING to "
        "TERMINATED",
        "2024-10-10 16:41:58,845\tDEBUG tune_controller.py:735 -- Setting status for trial T_00000 from PENDING to "
        "RUNNING",
    ],
)
def test_a_trials_normal_moves_are_no_ending(line: str) -> None:
    assert endings(line) == []


def test_killed_closing_inline_code_fails_the_run() -> None:
    lines = [
        "`[2020-07-04 15:41:57,821 INFO] Step 85700/300000; acc:  69.58; loss: 141.93; lr: 0.00100; 503 tok/s;  "
        "69798 sec",
        "run.sh: line 66: 777016 Killed`",
    ]
    assert endings(*lines) == [("failed", "run.sh: line 66: 777016 Killed`")]


def test_killed_inside_a_sentence_in_backticks_is_no_ending() -> None:
    # near-miss: the word in a sentence's inline code, text after it
    assert endings(STEP, "the process was `Killed` by me on purpose") == []


def test_every_redraw_before_the_one_a_cancel_is_glued_to_is_a_record() -> None:
    # a Slurm job's stderr (owencqueen/PolymerGNN ``formal/model_comparisons/SOAP/out_tg/SOAP_42.e``, 2022-04-14): the
    # bar's redraws on one line, Slurm's cancel glued to the last
    cancel = "slurmstepd: error: *** JOB 42221 ON clr1247 CANCELLED AT 2022-04-14T16:20:46 DUE TO TIME LIMIT ***"
    line = (
        "  0%|          | 0/50 [00:00<?, ?it/s]\r  2%|▏         | 1/50 [10:31<8:35:20, 631.04s/it]"
        "\r  4%|▍         | 2/50 [21:02<8:25:01, 631.29s/it]" + cancel
    )
    got = parse([line])
    # 0/50 times nothing; 1 at 631.04 s/it = 0.0015847 steps/s is a record; the redraw the cancel is glued to (2) is
    # the run's failure, not a record
    assert got.steps.select("step", "global_steps_per_s").rows() == [(1, pytest.approx(1 / 631.04))]
    assert got.events.select("event", "reason").rows() == [("failed", cancel)]
