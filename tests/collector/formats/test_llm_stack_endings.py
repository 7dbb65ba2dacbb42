"""Endings of today's large-model trainers: a named step counter that reaches the total it announced (``step
10/10``) finishes the run, whichever format read its record; a wrapper's exception line naming the exception it
wraps (Ray's ``RayTaskError(ValueError)``) ends a traceback. Short real lines, sources beside them."""

from __future__ import annotations

from tests.support.formats_support import endings

#: llm.c's step line (a report of llm.c-derived training rounds, 2026-05-22)
_LLMC = (
    "step   {n:2d}/{m} | loss 9.588612 (+nanz)| norm 6.3099 (+nanz)| lr 8.57e-06 | 2515.33 ms | 40.0% bf16 MFU | "
    "209179 tok/s"
)
#: modded-nanogpt's (KellerJordan/modded-nanogpt records/071825/record.txt)
_NANOGPT = "step:{n}/{m} train_time:{t}ms step_avg:96.53ms"


def test_a_step_counter_that_reaches_its_total_finishes_the_run() -> None:
    # 10 of 10 steps, then llm.c's closing lines: the run did the 10 steps it announced (the file's columns are
    # learned from its lines, so four of them)
    lines = [_LLMC.format(n=n, m=10) for n in (7, 8, 9, 10)] + [
        "val loss 9.483727",
        "total average iteration time: 2505.49 ms",
    ]
    assert endings(*lines) == [("finished", "step 10/10 reached: the steps the run announced are done")]
    # modded-nanogpt's last training step 1750 of 1750, then its validation and memory lines
    lines = [
        _NANOGPT.format(n=n, m=1750, t=t) for n, t in ((1747, 168630), (1748, 168733), (1749, 168834), (1750, 168935))
    ]
    lines += ["step:1750/1750 val_loss:3.2780 train_time:169042ms step_avg:96.60ms", "peak memory allocated: 34460 MiB"]
    assert [event for event, _ in endings(*lines)] == ["finished"]


def test_a_counter_short_of_its_total_or_within_an_epoch_finishes_nothing() -> None:
    # 9 of 10: the log stops before the work is done
    assert endings(*(_LLMC.format(n=n, m=10) for n in (6, 7, 8, 9))) == []
    # YOLOX's iteration counts within its epoch (h2 set: Megvii-BaseDetection/YOLOX issue 830): 1816 of 1816 ends
    # epoch 8 of 40, not the run
    yolox = (
        "2021-10-19 10:54:27 | INFO     | yolox.core.trainer:246 - epoch: 8/40, iter: 1816/1816, mem: 5174Mb, "
        "iter_time: 1.270s, data_time: 0.003s, total_loss: 5.6, lr: 9.843e-03, size: 640, ETA: 1 day, 0:06:01"
    )
    assert endings(yolox) == []
    # a later record (a run given more steps) undoes it: the newest record is the one judged
    assert endings(*(_LLMC.format(n=n, m=10) for n in (8, 9, 10)), _LLMC.format(n=11, m=20)) == []


def test_a_failure_after_the_last_step_still_fails_the_run() -> None:
    lines = [*(_LLMC.format(n=n, m=10) for n in (7, 8, 9, 10)), "Traceback (most recent call last):"]
    lines.append('  File "train.py", line 3, in <module>')
    lines.append("RuntimeError: CUDA error: an illegal memory access was encountered")
    # both are said; a failure is the run's status whatever else is (analysis.summary)
    assert sorted(event for event, _ in endings(*lines)) == ["failed", "finished"]


def test_an_exception_that_names_the_one_it_wraps_ends_a_traceback() -> None:
    # Ray re-raises a remote task's error as RayTaskError(<its class>), the remote frames after it: a verl run's
    # Slurm log of 2026-01-08 (ValueError) and a MindSpeed-RL report (KeyError) quote it so
    bar = "Training Progress:   0%|          | 4/1000 [11:18<45:49:11, 165.61s/it]"
    for wrapped in (
        "ray.exceptions.RayTaskError(ValueError): ray::TaskRunner.run() (pid=1271585, ip=127.0.0.1, "
        "actor_id=6daa7ef5cdf2784446ab9c7901000000, repr=<main_ppo.TaskRunner object at 0x7fc77b5dcf80>)",
        "ray.exceptions.RayTaskError(KeyError): ray::train() (pid=2182, ip=172.16.4.110)",
    ):
        lines = [
            bar,
            "Traceback (most recent call last):",
            '  File "/verl/trainer/main_ppo.py", line 98, in run_ppo',
            "    ray.get(runner.run.remote(config))",
            "    raise value.as_instanceof_cause()",
            wrapped,
            '  File "/verl/trainer/main_ppo.py", line 399, in run',
            "    trainer.fit()",
        ]
        assert endings(*lines) == [("failed", wrapped)]
