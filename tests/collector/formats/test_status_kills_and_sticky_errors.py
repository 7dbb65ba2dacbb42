"""Endings read from words a run's last lines say: the shell's "Killed" in the system's language, a trainer's
logger reporting the exception that stopped its loop, a CUDA error that leaves the device unusable; and their
near-misses. Lines quoted from public logs (source in each comment)."""

from __future__ import annotations

import pytest

from tests.support.formats_support import parse

STEP = "iter 120: loss 3.4117, time 562.11ms"


@pytest.mark.parametrize(
    ("line", "event"),
    [
        # DreamerV3 on a zh_CN desktop, the last line (danijar/dreamerv3 issue 203, 2025-12-05): bash's zh_CN "Killed"
        ("已杀死", "failed"),
        # bash's zh_TW and ja translations of the same word (bash po/zh_TW.po, po/ja.po)
        ("已砍掉", "failed"),
        ("強制終了", "failed"),
        # bash's job-control report of the same kill, in a script (line, process id, word, command)
        ("./train.sh: 行 3: 12345 已杀死               python train.py", "failed"),
        # detectron2's train loop, its logger's ERROR before the bracketed time (facebookresearch/detectron2 issue
        # 838, 2020-02-10)
        ("ERROR [02/10 22:55:41 d2.engine.train_loop]: Exception during training:", "failed"),
        # DeepSpeed-Chat's step 3 (deepspeedai/DeepSpeed issue 4945, 2024-01-12)
        ("RuntimeError: CUDA error: an illegal memory access was encountered", "failed"),
        # PBS's MOM past the walltime the job asked for, in the job's error file (esmf-org's test logs, quoted by
        # find_string 2026-12-07: ``=>> PBS: job killed: walltime 3611 exceeded limit 3600``)
        ("=>> PBS: job killed: walltime 3611 exceeded limit 3600", "failed"),
        # LSF's job report (a bsub job's output file, quoted by find_string 2026-12-07)
        ("TERM_MEMLIMIT: job killed after reaching LSF memory usage limit.", "failed"),
        ("Successfully completed.", "finished"),
        # near-misses: a script that looks for the scheduler's words, the report's words inside a sentence
        ("        if 'PBS: job killed: walltime' in line:", None),
        ("if grep -q TERM_MEMLIMIT: job killed; then resubmit; fi", None),
        ("Epoch 3 successfully completed.", None),
        # near-misses: the word inside a sentence, a warning's text, a CUDA error the program may go on from
        ("进程已杀死了吗？请检查", None),
        # ... and the words at a sentence's end: the everyday "force quit" of a usage hint, a notice about timeouts
        ("使い方: 学習を止めるには Ctrl+C で強制終了", None),
        ("提示: 训练完成. 超时的任务将被 已杀死", None),
        ("WARNING [02/10 22:55:41 d2.engine.train_loop]: Exception during training will be logged", None),
        ("CUDA error: out of memory (retrying with a smaller batch)", None),
    ],
)
def test_endings_after_a_step(line: str, event: str | None) -> None:
    got = parse([STEP, line]).events
    assert got.get_column("event").to_list() == ([event] if event else [])


def test_a_sticky_cuda_error_that_steps_follow_was_a_restart() -> None:
    lines = [STEP, "RuntimeError: CUDA error: an illegal memory access was encountered", STEP]
    assert parse(lines).events.height == 0


def test_detectron2s_error_prefix_is_its_envelope() -> None:
    # the logger's level and bracketed month-day time are the envelope: the message is left, its time read
    # (02/10 22:55:41 in the file's year)
    got = parse(["ERROR [02/10 22:55:41 d2.engine.train_loop]: Exception during training:"]).events
    assert got.get_column("reason").to_list() == ["Exception during training:"]
