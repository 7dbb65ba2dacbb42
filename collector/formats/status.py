"""Run status from what platforms and launchers actually print: ``failed`` and ``finished`` events,
and the milestones goodput reads (:data:`MILESTONES`: checkpoint saves, evaluations, restores).

Read from the bare message (after :mod:`~tierscope.collector.formats.envelopes`), tried after
every chain like tracebacks. What fails a run, with the line's cause as the event's reason:

- a replica exiting with a non-zero status (``The replica master 0 exited with a non-zero
  status of 1``), a command that returned a non-zero exit status, a container that exited
  with a non-zero code, ``Job failed.``, a job state ``FAILED`` / ``CANCELLED``, a TFJob's
  failed condition in ``kubectl describe`` output;
- NaN divergence (``Model diverged with loss = NaN``), out-of-memory (``OOM when
  allocating``, ``OOMKilled``, ``CUDA out of memory``) and kills (``Killed``, ``SIGKILL``);
- a user's Ctrl-C (``^C`` echoed by the terminal): :data:`INTERRUPTED`, unless a step record follows;
- torchrun's elastic agent shutting its workers down (``Received 1 death signal``, ``Sending process N closing
  signal SIGTERM``), unless a step record follows (an elastic restart);
- quota refusals at submission: ``RESOURCE_EXHAUSTED``, ``Quota exceeded``, also inside an
  API error's JSON body, even one cut off after its ``"message"``;
- preemption and lost workers (``lame workers found``, a session closed after a preemption):
  these fail a run only when no step record follows them, because TensorFlow recovers from
  them by opening a new session.

What finishes one (the run is ``ok`` once no failure is seen; a run with records and neither is
``unknown``): ``completed successfully``, an exit code or status 0, ``JOB_STATE_SUCCEEDED``, a
TFJob's succeeded condition, ``Training ends``, early stopping (``Epoch 8: early stopping``), and an Estimator
export (``SavedModel written to``) that no step record follows. An out-of-memory the program warns of, or says it
skips or retries, is no failure.

Milestones (:mod:`tierscope.analysis.goodput` classifies stalls and values wasted progress by them),
each line its own event, ``step`` the global step it names (else, in :func:`tierscope.collector.formats.parse_lines`,
the last step record's before it):

- ``checkpoint_begin``: Estimator's ``Saving checkpoints for N into ...``, TF-slim's ``Saving checkpoint
  to path ...``, Keras' ``Epoch 00001: saving model to ...``; ``checkpoint_end``: Estimator's (TF 1.14
  on) ``Calling checkpoint listeners after saving checkpoint N...``;
- ``eval_begin`` / ``eval_end``: Estimator's ``Starting evaluation at <time>`` / ``Finished evaluation at <time>``;
- ``restored``: ``Restoring parameters from .../model.ckpt-N`` (not inside an evaluation, which
  restores the checkpoint it evaluates), tensorpack's ``Start training with global_step=N`` (N > 0).

A closing summary of the whole run's speed (Hugging Face's ``train_steps_per_second``, detectron2's ``Overall training
speed``, a benchmark's ``total images/sec``) is also a ``whole_run_rate`` event
(:mod:`~tierscope.collector.formats.closing`), whether or not its line ends the run.

Severity is never a cause: Vertex AI and AI Platform label a process's stderr copy of an
INFO line ``ERROR``. Lines of one cause that sit within :data:`BLOCK_LINES` lines of each
other (a JSON error body, a ``kubectl describe`` condition, a replica's exit and the job's)
are one event, whose reason is the most telling of its lines.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import ClassVar, NamedTuple

import polars as pl

from tierscope.collector.formats.base import (
    LOOKAHEAD_LINES,
    TAG,
    AlwaysTried,
    ParseContext,
    Parsed,
    empty_parsed,
    reject_frame,
)
from tierscope.collector.formats.closing import GATE as CLOSING_GATE
from tierscope.collector.formats.closing import whole_run_rates
from tierscope.collector.formats.collectives import C10_HEADER, COLLECTIVE_ENDINGS
from tierscope.collector.formats.vocabulary import ANSI, EPOCH, NOT_UNIX_TIME, not_unix_time, unix_time
from tierscope.contract import CHECKPOINT_BEGIN, CHECKPOINT_END, EVAL_BEGIN, EVAL_END, RESTORED, STARTED

#: The cause of a run the user stopped by hand (``^C``, a ``KeyboardInterrupt``): failed, as a run that did not
#: finish the work it announced, whoever stopped it.
INTERRUPTED = "interrupted by the user (Ctrl-C) before the run finished"


class Marker(NamedTuple):
    """A kind of status line: ``event`` (``failed``/``finished``), a regex whose ``reason``
    group (if any) is the cause, how telling its reason is (higher wins within a block), and
    whether a step record after it undoes it (``recoverable``: TensorFlow recovers from the
    failure; an export in mid-run is not the end)."""

    event: str
    pattern: str
    rank: int
    recoverable: bool = False
    #: a plain "training is done" that says no why: no ending where the work announced is not reached
    bare: bool = False
    #: the cause in words, where the line's own text says too little (``^C``)
    says: str | None = None


#: Milestone lines: ``(event, regex)``, a ``step`` group (if any) the global step the line names, an
#: ``at`` group (if any) the time it names in Unix seconds (the event's own time, before any prefix's).
MILESTONES: tuple[tuple[str, str], ...] = (
    # TensorFlow's mnist_replica.py (Kubeflow's dist-mnist): print("Training begins @ %f" % time.time()),
    # before its session waits for the others: the process's start, seconds before its first step.
    (STARTED, r"^Training begins @ (?P<at>\d+(?:\.\d+)?)\s*$"),
    (CHECKPOINT_BEGIN, r"\bSaving checkpoints for (?P<step>\d+) into\b"),
    (CHECKPOINT_BEGIN, r"\bSaving checkpoint to path\b|\bEpoch \d+: (?:.*, )?saving model to\b"),
    (CHECKPOINT_END, r"\bCalling checkpoint listeners after saving checkpoint (?P<step>\d+)\b"),
    (EVAL_BEGIN, r"\bStarting evaluation at \d{4}-\d\d-\d\d"),
    (EVAL_END, r"\bFinished evaluation at \d{4}-\d\d-\d\d"),
    (RESTORED, r"\bRestoring parameters from \S*?-(?P<step>\d+)\s*$"),
    (RESTORED, r"\bStart training with global_step=(?P<step>[1-9]\d*)\b"),
)

MARKERS: tuple[Marker, ...] = (
    # AI Platform's ``master 0`` / ``worker 2``, Vertex AI's worker pools ``workerpool0-0``
    Marker(
        "failed",
        r"The replica (?:\w+ \d+|workerpool\d+-\d+) (?:ran out-of-memory and )?exited with a non-zero status of \d+",
        5,
    ),
    Marker("failed", r"^(?:The )?(?:[Tt]raining )?[Jj]ob failed\b", 4),
    Marker("failed", r"\bJOB_STATE_(?:FAILED|CANCELLED)\b|^\s*state:\s*(?:FAILED|CANCELLED)\s*$", 4),
    Marker("failed", r"(?i)\bjob state:?\s*(?:FAILED|CANCELLED)\b", 4),
    Marker("failed", r"Message:\s+(?P<reason>TFJob \S+ has failed\b.*?)\s*$", 5),
    Marker("failed", r"Reason:\s+TFJobFailed\b", 2),
    Marker("failed", r"returned non-zero exit status [1-9]\d*", 3),
    # a non-zero code, a signal's negative one included (``Process finished with exit code -1``, torchrun's
    # ``exitcode  : -9``, DeepSpeed's ``exits with return code = -9``)
    Marker("failed", r"\bexited with (?:exit )?code -?[1-9]\d*\b|\bfinished with exit code -?[1-9]\d*\b", 3),
    # (padded in Open MPI's report: ``Exit code:    1``; one word as Paperspace's job CLI prints it: ``Job Stopped,
    # exitCode 1``)
    # (a build's or a tool's exit code mid-log, steps after it: recovered, as are the two below)
    Marker(
        "failed", r"(?i)\bexit ?(?:status|code):?\s+-?[1-9]\d*\b|\bexitcode\s*:\s*-?[1-9]\d*\b", 3, recoverable=True
    ),
    # Open MPI's and Horovod's report that a process of the job exited non-zero (the job is then aborted)
    Marker("failed", r"\b(?:mpirun|Horovod) detected that one or more processes exited with non-zero status\b", 4),
    Marker("failed", r"\bPrimary job\s+terminated normally, but \d+ process(?:es)? returned\b", 3),
    Marker("failed", r"\bexits? with return code\s*=?\s*-?[1-9]\d*\b", 3),
    # torchrun's report that a worker failed (its exception line, not the frame that raised it): its root cause is
    # the worker's own exception, when logged
    Marker("failed", r"\bChildFailedError:", 2),
    # a process group's ending (NCCL's watchdog, Gloo's timeout: collectives.py); an elastic restart (a step after
    # it) recovers
    *(Marker("failed", e.pattern, e.rank, recoverable=True) for e in COLLECTIVE_ENDINGS),
    # torchrun's elastic agent shutting its workers down: on a death signal it was sent (``Received 1 death signal,
    # shutting down workers`` then ``... closing signal SIGHUP``: modelscope/ms-swift issue 64, 2023-09-10), or after
    # one worker failed, the others' closing signal (``Sending process 1513407 closing signal SIGTERM`` behind PyTorch
    # 2.4's glog header: hiyouga/LlamaFactory issue 6590, 2025-01-09). The agent signals only processes still
    # running, which a finished run has none of; an elastic restart (a step after it) recovers.
    Marker("failed", r"\bReceived \d+ death signal, shutting down workers\b", 3, recoverable=True),
    Marker("failed", r"\bSending process \d+ closing signal SIG[A-Z]+\b", 2, recoverable=True),
    # Slurm: the scheduler cancelled the job or step (time limit, preemption, by hand), or its OOM killer struck
    Marker("failed", r"\*\*\* (?:JOB|STEP) \S+ ON \S+ CANCELLED\b", 3),
    # ... its memory limit's enforcement, the cause the cancel beside it ends with (``slurmstepd: error: Job 7518
    # exceeded memory limit (626359956 > 512000000), being killed``, coqui-ai/STT issue 2238, 2022-06-10); Slurm's
    # ``Exceeded step memory limit at some point.`` is a warning the step lives on after: no kill, no failure. Its
    # figures (usage > limit) make it Slurm's, not a sentence with the two phrases; a virtual memory limit is
    # enforced in the same words (src/plugins/jobacct_gather/common/common_jag.c, ``%ps exceeded memory limit``)
    Marker("failed", r"\bexceeded (?:virtual )?memory limit \(\d+ > \d+\), being killed\b", 4),
    Marker("failed", r"\bDetected \d+ oom[_-]kill events?\b", 4),
    # PBS (OpenPBS, Torque): the MOM killed the job past a limit it asked for (``=>> PBS: job killed: walltime 3611
    # exceeded limit 3600`` in the job's error file, ESMF's test logs; ``mem``/``vmem`` past theirs)
    Marker("failed", r"(?:^|=>> )PBS: job killed: \w+ \S+ exceeded limit\b", 4),
    # LSF: the job report's reason for a kill, a limit or a person (``TERM_MEMLIMIT: job killed after reaching LSF
    # memory usage limit.`` then ``Exited with exit code 137.``; TERM_RUNLIMIT, TERM_OWNER, TERM_ADMIN alike)
    Marker("failed", r"^TERM_[A-Z_]+: job killed\b", 4),
    # Ray's job client: the job's end state
    Marker("failed", r"\bJob '[^']+' failed\b", 3),
    # a controller logging a job's or a trial's state moving from running to failed: Ray Tune's ``Setting status for
    # trial TorchTrainer_ccdf1_00000 from RUNNING to ERROR`` (GokuMohandas/Made-With-ML issue 271, 2024-10-10). A trial
    # Tune retries runs again (a step after it recovers); ``from RUNNING to TERMINATED`` is its normal end
    Marker("failed", r"(?i:\b(?:status|state)\b).*?\bfrom RUNNING to (?:ERROR|FAILED)\b", 3, recoverable=True),
    # SageMaker: the training toolkit's verdict in the job, the SDK's job state
    Marker("failed", r"\bReporting training FAILURE\b|^(?:\S+ \S+ )?Failed - Training job failed\b", 3),
    # the SDK's error for a job that ended Failed (``UnexpectedStatusException: Error for Training job X: Failed.
    # Reason: AlgorithmError: ...``), the training toolkit's error for the user's script
    Marker(
        "failed",
        r"\bError for (?:Training|Processing|HyperParameterTuning) job \S+: Failed\b|\bExecuteUserScriptError\b",
        4,
        recoverable=True,
    ),
    # Ray Tune: a trial's task failed (Tune may retry it: a step after it shows it did), trials that ended in error
    Marker("failed", r"\bTrial task failed for trial\b|\bRayTaskError\b", 3, recoverable=True),
    Marker("failed", r"\bNumber of errored trials: [1-9]\d*\b|\bTrials did not complete\b", 4),
    Marker("failed", r"\bSegmentation fault\b|exited on signal \d+|\bBackoffLimitExceeded\b", 3),
    # The shell's word for a process a signal ended (alone, in a job-control report, glued after a bar's end): a
    # bus error, an abort (``terminate called after throwing ...``), a floating-point or illegal instruction trap
    Marker(
        "failed",
        r"\bBus error\b(?: \(core dumped\))?\s*$|\b(?:Aborted|Floating point exception|Illegal instruction)"
        r" \(core dumped\)\s*$|^terminate called after throwing an instance of\b",
        3,
    ),
    Marker("failed", r"(?i)\bterminating due to preemption\b", 2, recoverable=True),
    Marker("failed", r"Model diverged with loss = NaN", 4),
    # CNTK's stop on a NaN loss (``EXCEPTION occurred: The training criterion is not a number (NAN). Stop``,
    # microsoft/CNTK issue 406, 2016-04-27)
    Marker("failed", r"\bThe training criterion is not a number \(NAN\)", 4),
    # DETR's, DeiT's and MAE's engines (``print("Loss is {}, stopping training".format(loss_value)); sys.exit(1)``)
    Marker("failed", r"(?i)\bloss is (?:nan|-?inf)\b,? stopping training\b", 4, recoverable=True),
    # Kubernetes: the pod's container keeps failing and is restarted with back-off (it may yet start: a step after)
    Marker("failed", r"\bCrashLoopBackOff\b", 3, recoverable=True),
    Marker("failed", r"OOM when allocating|\bOOMKilled\b|CUDA out of memory", 4),
    # The shell's word for a process the OS killed: alone, glued to the end of a progress bar, or in a
    # job-control report (``line 6:  3305 Killed   cmd``).
    # (also inside a paste's emphasis: ``**Killed**``, or closing its inline code: ``run.sh: line 66: 777016 Killed` ``,
    # OpenNMT/OpenNMT-py issue 1824, 2020-07-04)
    Marker("failed", r"\bKilled[\s*_`]*$|(?:^|\s)\d+ Killed\s|\bSIGKILL\b|killed by signal 9", 3),
    # ... in the shell's language: bash's translations of its "Killed" (po/zh_CN.po ``已杀死``, po/zh_TW.po ``已砍掉``,
    # po/ja.po ``強制終了``), alone on its line (DreamerV3's run ending in ``已杀死``, danijar/dreamerv3 issue 203,
    # 2025-12-05) or after the process id of a job-control report; never at the end of a sentence (``強制終了`` is
    # also the everyday "force quit": ``Ctrl+C で強制終了``), and these scripts put no space between words
    Marker("failed", r"^[\s*_]*(?:已杀死|已砍掉|強制終了)[\s*_]*$|(?:^|\s)\d+ +(?:已杀死|已砍掉|強制終了)\s", 3),
    # A trainer's logger reporting the exception that ended its loop, before the traceback it re-raises (detectron2's
    # ``logger.exception("Exception during training:")`` in engine/train_loop.py: ``ERROR [02/10 22:55:41
    # d2.engine.train_loop]: Exception during training:``, facebookresearch/detectron2 issue 838, 2020-02-10)
    Marker("failed", r"^Exception during training:?\s*$", 3, recoverable=True),
    # A CUDA error that leaves the device's context unusable: every later call fails the same, so the process ends
    # (``RuntimeError: CUDA error: an illegal memory access was encountered``, deepspeedai/DeepSpeed issue 4945,
    # 2024-01-12; ``device-side assert triggered``, ``misaligned address``, ``unspecified launch failure``)
    Marker(
        "failed",
        r"\bCUDA error: (?:an illegal memory access was encountered|device-side assert triggered|misaligned address"
        r"|unspecified launch failure)\b",
        4,
        recoverable=True,
    ),
    # Lua's interpreter ending on an error nothing caught (Torch7's ``th`` runs LuaJIT): ``/usr/local/bin/luajit:
    # <file>:<line>: <message>`` (or ``lua: ...``) then its ``stack traceback:``, and LuaJIT's ``PANIC: unprotected
    # error in call to Lua API (not enough memory)`` (quoted in soumith/imagenet-multiGPU.torch issue 23,
    # billzorn/mtg-rnn issue 1, jcjohnson/torch-rnn issue 211). A step record after it is a run started again.
    Marker("failed", r"\bPANIC: unprotected error in call to Lua API\b", 4, recoverable=True),
    Marker("failed", r"^(?:\S*/)?(?:luajit|lua(?:5\.\d)?|qlua): \S", 3, recoverable=True),
    Marker("failed", r"^stack traceback:\s*$", 2, recoverable=True),
    # A terminal's echo of Ctrl-C (alone, glued before the traceback it caused, or after a bar): the user
    # stopped the run before it finished its work. A step record after it shows the run went on.
    Marker(
        "failed",
        r"^\s*\^C(?:\s*$|\^C|Traceback\b)|\^C\s*$",
        3,
        recoverable=True,
        says=INTERRUPTED,
    ),
    # The exception line of a Ctrl-C whose traceback's start is out of view (cut off, or interleaved by processes)
    Marker("failed", r"^KeyboardInterrupt\s*$", 3, recoverable=True, says=INTERRUPTED),
    Marker("failed", r"\"message\":\s*\"(?P<reason>[^\"]*(?i:quota|exceeds the allowed)[^\"]*)", 5),
    Marker("failed", r"(?i)\bquota (?:exceeded|failure)\b", 4),
    Marker("failed", r"\bRESOURCE_EXHAUSTED\b", 3),
    Marker("failed", r"lame workers found", 2, recoverable=True),
    # Hydra's report that the job's task function raised (then it exits 1; the exception follows on the next lines:
    # ``Error executing job with overrides: []`` then ``Error in call to target ...`` and ``TypeError(...)``, a
    # Lightning + Hydra run committed as PLBFischer/walk-jump-fork ``e``, 2025-03-05; facebookresearch/hydra
    # ``hydra/_internal/utils.py``). A Hydra multirun's job fails the run as well.
    Marker("failed", r"^Error executing job with overrides: \[", 3),
    # AI Platform's runner (/runcloudml.py) reporting that the user's module failed.
    Marker("failed", r"\bModule raised an exception\b", 4),
    Marker("failed", r"(?:due to a|after a) preemption|\bwas preempted\b|preempted by", 2, recoverable=True),
    Marker(
        "finished", r"(?i)\bcompleted successfully\b|\b(?:task|job|run|training) (?:has )?finished successfully\b", 4
    ),
    # the epochs run, said once the loop is left (YOLOv5's and Ultralytics' trainers, early stopping too); fairseq's
    # end of train.py
    Marker(
        "finished", r"^\d+ epochs? completed in \d+(?:\.\d+)? hours\b|\bdone training in \d+(?:\.\d+)? seconds\b", 3
    ),
    # LSF's job report of a job that ended with exit code 0, on its own line above ``Resource usage summary:``
    Marker("finished", r"^Successfully completed\.\s*$", 3),
    Marker("finished", r"(?i)\bexited with (?:exit )?code 0\b|\bexit (?:status|code):?\s+0\b|\bexitCode:? 0\b", 3),
    # Early stopping ended the run on purpose: Keras' ``Epoch 8: early stopping`` (``Epoch 00046:`` in Keras 2),
    # Lightning's ``... Signaling Trainer to stop.``
    Marker(
        "finished", r"(?i)^Epoch \d+: early stopping\s*$|\bearly stopping triggered\b|\bSignaling Trainer to stop\b", 3
    ),
    # DeepSpeed's launcher for each process it started; Ray's job client
    Marker("finished", r"\bProcess \d+ exits successfully\b|\bJob '[^']+' succeeded\b", 3),
    Marker(
        "finished",
        r"\bReporting training SUCCESS\b|\bReceived 0 from exiting process\b"
        r"|^(?:\S+ \S+ )?Completed - Training job completed\b",
        4,
    ),
    Marker("finished", r"\bJOB_STATE_SUCCEEDED\b|^\s*state:\s*SUCCEEDED\s*$", 4),
    Marker("finished", r"Message:\s+(?P<reason>TFJob \S+ successfully completed\.?)|Reason:\s+TFJobSucceeded\b", 4),
    Marker("finished", r"^Training (?:ends|finished|completed|complete|done)\b", 2, bare=True),
    # TensorFlow's examples' ``Optimization Finished!``; the training time printed once the loop is left
    # (detectron2's ``Total training time: 0:12:03``, DeiT's and torchvision's ``Training time 1 day, 2:03:04``),
    # also in seconds with their unit (litgpt's finetune and pretrain scripts: ``Training time: 583.36s`` after the
    # last iteration, Lightning-AI/litgpt issue 1110, 2024-03-13)
    Marker(
        "finished",
        r"(?i)\boptimization finished\b|^(?:total )?training time\s*:?\s*"
        r"(?:(?:\d+ days?, )?\d+:\d\d:\d\d\b|\d+(?:\.\d+)?\s*(?:s|sec|secs|seconds)\s*$)",
        2,
        bare=True,
    ),
    Marker(
        "finished",
        r"(?i)\b(?:finished|done) training(?:\s*[.!]?\s*$| at step\b)"
        r"|(?i)\btraining (?:is )?(?:finished|completed|done)\b"
        # PyTorch's word_language_model: ``| End of training | test loss   5.21 | test ppl   183.53``
        r"|^\|?\s*End of training\b",
        2,
        bare=True,
    ),
    # Estimator's last line of train(); Hugging Face Trainer's summary after its last step.
    # PyTorch Lightning's end of fit: the epochs or steps it was given are done.
    Marker("finished", r"`?Trainer\.fit`? stopped: `?max_(?:epochs|steps)=\d+`? reached", 3),
    # NVIDIA DLLogger's run summary: metrics keyed by the empty step (), logged after the training loop.
    Marker("finished", r"^\(\)\s+\w+\s*:\s*\S", 1),
    # A benchmark's summary after its last step (tf_cnn_benchmarks, Horovod's synthetic benchmark).
    Marker("finished", r"(?i)^\s*total (?:images|img|examples|samples)/sec\b", 2),
    # The Trainer's summary opens with ``train_runtime`` or states its rates of the whole run beside it
    # (``{'train_runtime': 85.4, 'train_samples_per_second': ...}``, ``train_runtime = 0:00:21.98`` of
    # ``log_metrics``); a step's logging dict that carries the runtime so far is no summary (Unsloth's
    # ``{'loss': '14.88', ..., 'train_runtime': '110.7', 'train_tokens_per_second': '2583'}``, quoted in
    # unslothai/unsloth PR 4547).
    Marker(
        "finished",
        r"\bLoss for final step\b|\{\s*['\"]train_runtime['\"]\s*:|^\s*train_runtime\s*="
        r"|\btrain_runtime['\"]?\s*[:=][^{}]*\btrain_(?:samples|steps)_per_second\b",
        3,
    ),
    # Estimator's export after the last evaluation; an export in mid-run is followed by steps,
    # and a later failure still wins.
    Marker("finished", r"\bSavedModel written to\b", 1, recoverable=True),
)

#: Lines of one cause at most this far apart are one event.
BLOCK_LINES = 6

#: ``detail`` of a failure TensorFlow may recover from; :func:`drop_recovered` reads it.
RECOVERABLE_DETAIL = json.dumps({"recoverable": True})

#: Python logging's ``LEVEL:logger:`` header (``INFO:tensorflow:``) or a glog one that a bar's line kept (``W0109
#: 19:38:21.682000 1513405 /path/api.py:897] ``, its envelope unread behind the bar), no part of a cause.
_LOGGER_HEADER = (
    r"^(?:(?:DEBUG|INFO|WARNING|ERROR|CRITICAL):[\w.]+:|[IWEF]\d{4} \d\d:\d\d:\d\d\.\d+ +\d+ [^\]\s]+:\d+\] )"
)
#: A progress bar the cause was glued to (stderr written while the bar's line was open: ``...| 4/7 [00:40<00:29,
#: 9.96s/it]ERROR:...failed (exitcode: -9)``, ``11/56 [00:02<00:08,  5.02it/s]Segmentation fault``), no part of it.
_GLUED_BAR = r"^.*\d+/\d+\s*\[[^\]]*\]\s*(\S)"
# The TF allocator's warning says itself that it is not a failure; an out-of-memory the program warns of, or says it
# recovers from (fairseq's ``| WARNING: ran out of memory with exception: CUDA out of memory ...`` before `` Skipping
# batch``, ``out of memory, retrying``), is no end either: a failure it cannot recover from comes as its own line.
NOT_A_FAILURE = r"not a failure|(?i:\bWARNING\b.*\bout of memory\b|\bout of memory\b.*\b(?:skipping|retrying)\b)"


def _any_of(patterns: Iterable[str]) -> str:
    """One regex for a line that any of ``patterns`` matches, their named groups unnamed (a name may stand once)."""
    return re.sub(r"\(\?P<\w+>", "(?:", "|".join(f"(?:{p})" for p in patterns))


_ANY = _any_of(m.pattern for m in MARKERS)
#: A failure's line (what a block of one cause is made of, its reason the most telling line's).
FAILURE_LINE = _any_of(m.pattern for m in MARKERS if m.event == "failed")
#: A line of an error's report, what may follow a traceback that ends a log: one of the words errors are reported in
#: (an exception, an exit, a signal, a kill, an abort, a fault, a panic), TensorFlow's trace of the graph node that
#: raised it (``NotFoundError: Graph execution error:`` then ``Detected at node StatefulPartitionedCall defined at
#: (most recent call last):``, its frames, ``[[{{node StatefulPartitionedCall}}]]``: googlecolab/colabtools issue
#: 5124, tensorflow/tensorflow issue 88960). Never a failure line of :data:`MARKERS` that says no such word: after
#: the traceback, ``OOM when allocating tensor ...`` is the log going on to say what failed, and it is the cause.
ERROR_REPORT = (
    r"(?i:error|exception|traceback|interrupt|exit|kill|abort|fail|fault|core dumped|signal|panic)|"
    r"^Detected at node |\{\{node "
)
_ANY_MILESTONE = _any_of(pattern for _, pattern in MILESTONES)
_EITHER = f"{_ANY}|{_ANY_MILESTONE}"


class RunStatus(AlwaysTried):
    name: ClassVar[str] = "status"
    example: ClassVar[str] = "The replica master 0 exited with a non-zero status of 1. Termination reason: Error."
    meaning: ClassVar[str] = (
        "no step: the run failed (exit status, job state, divergence, OOM, quota, preemption with no step after) "
        "or finished (completed successfully, exit code 0); a closing summary's whole-run rate; tried after every "
        "format (also with --log-format)"
    )

    def undecided_from(self, lines: pl.DataFrame) -> int | None:
        """The first failure line of the block the batch's last lines end in (its last failure line at most
        :data:`BLOCK_LINES` lines before the batch's end), looked for among the batch's last lines: a failure line
        still to come within that distance joins the block, and may be its most telling cause."""
        tail = lines.tail(LOOKAHEAD_LINES)
        line = pl.col("line")
        hits = tail.filter(line.str.contains(FAILURE_LINE) & ~line.str.contains(NOT_A_FAILURE))
        hits = hits.get_column("source_offset")
        if hits.len() == 0 or int(tail.get_column("source_offset")[-1]) - int(hits[-1]) > BLOCK_LINES:
            return None
        at = hits.len() - 1
        while at > 0 and int(hits[at]) - int(hits[at - 1]) <= BLOCK_LINES:
            at -= 1
        return int(hits[at])

    def parse(self, lines: pl.DataFrame, context: ParseContext) -> Parsed:
        # One pass over every line that reached here (nearly all of a file); the rest only for batches with a hit.
        if not lines.select(pl.col("line").str.contains(f"{_EITHER}|{CLOSING_GATE}").any()).item():
            return empty_parsed(lines)
        milestones, too_big, lines = _milestones(lines, self.name)
        # a closing summary's rate is the run's, not an end: its line is read for both (HF's dict finishes a run)
        rates = whole_run_rates(lines, self.name)
        parsed = self._status(lines)
        if rates.height:
            parsed.events = pl.concat([parsed.events, rates], how="diagonal_relaxed").sort("source_offset")
            parsed.rest = parsed.rest.filter(~pl.col("source_offset").is_in(rates["source_offset"].implode()))
        if milestones.height:
            parsed.events = pl.concat([parsed.events, milestones], how="diagonal_relaxed").sort("source_offset")
        if too_big.height:
            parsed.rejects = pl.concat([parsed.rejects, too_big], how="diagonal_relaxed").sort("source_offset")
        return parsed

    def _status(self, lines: pl.DataFrame) -> Parsed:
        line = pl.col("line")
        hit = line.str.contains(_ANY) & ~line.str.contains(NOT_A_FAILURE)
        if not lines.select(hit.any()).item():
            return empty_parsed(lines)
        marked = lines.with_columns(_hit=hit)
        ours = marked.filter(pl.col("_hit")).drop("_hit")
        rest = marked.filter(~pl.col("_hit")).drop("_hit")
        which = pl.coalesce(
            [pl.when(line.str.contains(m.pattern)).then(pl.lit(i, dtype=pl.Int32)) for i, m in enumerate(MARKERS)]
        )
        reasons = [
            line.str.extract(m.pattern, 1) if "(?P<reason>" in m.pattern else pl.lit(m.says, dtype=pl.String)
            for m in MARKERS
        ]
        found = ours.with_columns(_m=which).with_columns(
            event=pl.col("_m").replace_strict({i: m.event for i, m in enumerate(MARKERS)}, return_dtype=pl.String),
            _rank=pl.col("_m").replace_strict({i: m.rank for i, m in enumerate(MARKERS)}, return_dtype=pl.Int32),
            _recoverable=pl.col("_m").replace_strict(
                {i: m.recoverable for i, m in enumerate(MARKERS)}, return_dtype=pl.Boolean
            ),
            # the cause in the program's words: without Python logging's ``INFO:tensorflow:`` header
            reason=pl.coalesce(
                pl.coalesce([pl.when(pl.col("_m") == i).then(r) for i, r in enumerate(reasons)]),
                line.str.strip_chars()
                .str.replace(_GLUED_BAR, "$1")
                .str.replace(_LOGGER_HEADER, "")
                .str.replace(C10_HEADER, ""),
            ),
        )
        # One event per block: same event and tag, lines at most BLOCK_LINES apart.
        gap = pl.col("source_offset") - pl.col("source_offset").shift(1).over(TAG, "event")
        blocks = found.sort("source_offset").with_columns(
            _block=(gap.is_null() | (gap > BLOCK_LINES)).cast(pl.Int32).cum_sum().over(TAG, "event")
        )
        events = (
            blocks.sort("_rank", "source_offset", descending=[True, False])
            .group_by(TAG, "event", "_block", maintain_order=True)
            .agg(
                pl.col("source_offset").min(),
                pl.col("reason").first(),
                pl.col("_recoverable").all(),
            )
            .select(
                "source_offset",
                "event",
                "reason",
                pl.when(pl.col("_recoverable")).then(pl.lit(RECOVERABLE_DETAIL)).alias("detail"),
                pl.lit(self.name).alias("format"),
            )
            .sort("source_offset")
        )
        return Parsed(steps=pl.DataFrame(), events=events, rejects=pl.DataFrame(), rest=rest)


def _milestones(lines: pl.DataFrame, fmt: str) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """``(milestone events, rejects, the other lines)``: one event per :data:`MILESTONES` line,
    with its step and time; a line naming a step no 64-bit integer holds is a reject (its step is
    not replaced by an earlier record's), and so is one naming a time outside
    :data:`~tierscope.collector.formats.vocabulary.UNIX_TIME_RANGE`."""
    line = pl.col("line")
    hit = line.str.contains(_ANY_MILESTONE)
    if not lines.select(hit.any()).item():
        return pl.DataFrame(), pl.DataFrame(), lines
    ours, rest = lines.filter(hit), lines.filter(~hit)
    which = pl.coalesce(
        [
            pl.when(line.str.contains(pattern)).then(pl.lit(i, dtype=pl.Int32))
            for i, (_, pattern) in enumerate(MILESTONES)
        ]
    )
    named = [line.str.extract(pattern, 1) if "(?P<step>" in pattern else None for _, pattern in MILESTONES]
    found = ours.with_columns(_m=which).with_columns(
        event=pl.col("_m").replace_strict({i: e for i, (e, _) in enumerate(MILESTONES)}, return_dtype=pl.String),
        _named=pl.coalesce([pl.when(pl.col("_m") == i).then(x) for i, x in enumerate(named) if x is not None]),
    )
    stamped = [
        (i, line.str.extract_groups(p).struct.field("at")) for i, (_, p) in enumerate(MILESTONES) if "(?P<at>" in p
    ]
    found = found.with_columns(
        step=pl.col("_named").cast(pl.Int64, strict=False),
        _at=pl.coalesce([pl.when(pl.col("_m") == i).then(x) for i, x in stamped]),
    ).with_columns(timestamp=unix_time("_at"))
    # A restore inside an evaluation (after its begin line, before its end) loads the checkpoint it evaluates.
    state = pl.when(pl.col("event") == EVAL_BEGIN).then(True).when(pl.col("event") == EVAL_END).then(False)
    by = [TAG] if TAG in found.columns else []
    in_eval = state.shift(1).forward_fill().fill_null(False)
    found = found.sort("source_offset").with_columns(_in_eval=in_eval.over(by) if by else in_eval)
    found = found.filter(~((pl.col("event") == RESTORED) & pl.col("_in_eval")))
    too_big = pl.col("_named").is_not_null() & pl.col("step").is_null()
    # a time no timestamp holds is no start: the event is not stored without its time
    no_time = not_unix_time(pl.col("_at"))
    reason = (
        pl.when(too_big)
        .then(pl.format("{} at step {}: a step larger than a 64-bit integer holds", pl.col("event"), pl.col("_named")))
        .when(no_time)
        .then(pl.format(f"{{}} time '{{}}' {NOT_UNIX_TIME}", pl.col("event"), pl.col("_at")))
    )
    too_big = too_big | no_time
    rejects = reject_frame(found.filter(too_big), reason, fmt)
    events = found.filter(~too_big).select("source_offset", "event", "step", "timestamp", pl.lit(fmt).alias("format"))
    return events, rejects, rest


def milestone_steps(events: pl.DataFrame, steps: pl.DataFrame) -> pl.DataFrame:
    """``events`` with a milestone's missing step taken from the last step record before its line."""
    if events.height == 0 or "step" not in events.columns or steps.height == 0 or "step" not in steps.columns:
        return events
    blank = pl.col("step").is_null() & pl.col("event").is_in([e for e, _ in MILESTONES])
    if not events.select(blank.any()).item():
        return events
    last = (
        steps.filter(pl.col("step").is_not_null())
        .select("source_offset", pl.col("step").alias("_last"))
        .sort("source_offset")
    )
    filled = (
        events.with_row_index("_row").sort("source_offset").join_asof(last, on="source_offset", strategy="backward")
    )
    return (
        filled.with_columns(step=pl.when(blank).then(pl.col("_last")).otherwise(pl.col("step")))
        .sort("_row")
        .drop("_row", "_last")
    )


def drop_interrupts_after_finishing(events: pl.DataFrame) -> pl.DataFrame:
    """``events`` without the user's Ctrl-C (:data:`INTERRUPTED`) that a ``finished`` event comes before (an earlier
    line): the work was done, the user stopped what ran after it (a script waiting on its last upload, a notebook
    cell left running). Hugging Face's ``Training completed. Do not forget to share your model ...`` then a
    ``KeyboardInterrupt`` reads ok."""
    if events.height == 0 or "reason" not in events.columns:
        return events
    finished = events.filter(pl.col("event") == "finished").get_column("source_offset").min()
    if finished is None:
        return events
    # a frame whose every reason is missing holds them as nulls of no type (the trainer's JSON events)
    reason = pl.col("reason").cast(pl.String)
    interrupt = (pl.col("event") == "failed") & reason.str.starts_with(INTERRUPTED).fill_null(False)
    return events.filter(~(interrupt & (pl.col("source_offset") > finished)))


def drop_recovered(events: pl.DataFrame, steps: pl.DataFrame) -> pl.DataFrame:
    """``events`` without the recoverable ones (failures TensorFlow recovers from, a mid-run
    export) that a step record follows (a later line)."""
    if events.height == 0 or "detail" not in events.columns:
        return events
    recoverable = pl.col("detail").eq_missing(pl.lit(RECOVERABLE_DETAIL))
    if not events.select(recoverable.any()).item():
        return events
    last_step = steps.get_column("source_offset").max() if steps.height else None
    if last_step is None:
        return events
    return events.filter(~(recoverable & (pl.col("source_offset") < last_step)))


#: Work a record announces as ``N/M``: Megatron's ``iteration  150/ 2000``, ``step 30/1000``, a tqdm bar's
#: ``NN%|...| 840/2000`` (not an epoch's ``Epoch [E][N/M]`` or ``Epoch 5/5``, whose M is one epoch's or the epochs).
ANNOUNCED = (
    r"(?i:\b(?:iteration|iter|step|update|batch)s?)['\"]?\s*[:=#]?\s*\[?\s*(?P<n>\d+)\s*/\s*(?P<m>\d+)\b"
    r"|\d{1,3}%\|[^|]*\|\s*(?P<bn>\d+)/(?P<bm>\d+)"
)
#: The training steps a named counter announces, ``N/M`` after its word (llm.c's ``step   10/10 |``, modded-nanogpt's
#: ``step:1750/1750 train_time:...``, Megatron's ``iteration      100/     100 |``): not a batch's (often one epoch's),
#: a bar's (tqdm draws one per epoch) nor an epoch's (Keras's reader judges its last bar).
_WORK_COUNTER = r"(?i:\b(?:iteration|iter|step|update)s?)['\"]?\s*[:=#]?\s*\[?\s*(?P<n>\d+)\s*/\s*(?P<m>\d+)\b"
#: The reason of the ending :func:`work_done` finds.
WORK_DONE = "the steps the run announced are done"


def work_done(events: pl.DataFrame, steps: pl.DataFrame, body: pl.DataFrame) -> pl.DataFrame:
    """``events`` with a ``finished`` event where the batch's newest step record reached the total its named counter
    announced (``step 10/10``, ``step:1750/1750``): the run did the steps it was given, whichever format read the
    record. Not where its line states an epoch (``epoch: 8/40, iter: 1816/1816`` ends an epoch, not the run), nor
    where the batch already says its end (``Training finished``: one ending, the log's own). The event is
    recoverable (:data:`RECOVERABLE_DETAIL`): a failure after it still wins.

    ``body``: the batch's messages (``source_offset``, ``line``)."""
    if not steps.height or not body.height or "source_offset" not in steps.columns:
        return events
    if events.height and "event" in events.columns and events.select((pl.col("event") == "finished").any()).item():
        return events  # the log says its end itself
    newest = steps.get_column("source_offset").max()
    line = body.filter(pl.col("source_offset") == newest).select(
        pl.col("line").cast(pl.String).str.replace_all(ANSI, "")
    )
    if not line.height:
        return events
    text = line.item(0, 0) or ""
    said = re.search(_WORK_COUNTER, text)
    if said is None or int(said["n"]) != int(said["m"]) or int(said["m"]) == 0 or re.search(EPOCH, text):
        return events
    done = pl.DataFrame(
        {
            "source_offset": [newest],
            "event": ["finished"],
            "reason": [f"step {said['n']}/{said['m']} reached: {WORK_DONE}"],
            "detail": [RECOVERABLE_DETAIL],
            "format": ["status"],
        },
        schema={
            "source_offset": pl.Int64,
            "event": pl.String,
            "reason": pl.String,
            "detail": pl.String,
            "format": pl.String,
        },
    )
    return pl.concat([events, done], how="diagonal_relaxed") if events.width else done


#: A log's own word that training stopped early on purpose (its messages, not the option names a config dump
#: prints): Megatron's ``exiting program at iteration N`` / ``after N minutes`` (``--exit-interval``,
#: ``--exit-duration-in-mins``), early stopping, a step budget reached.
STOPPED_ON_PURPOSE = (
    r"(?i)\bexiting program\b|\bearly stopping (?:triggered|at|after)\b|\bstopp(?:ed|ing) early\b"
    r"|\bstopping criteri(?:on|a) (?:met|reached)\b|\bmax_?(?:steps|epochs|iters?|iterations)\b[^\n]*\breached\b"
)


#: Where :func:`drop_unreached_endings` keeps, in ``ParseContext.state``, what it knows of a file so far.
WORK = "status-work"
#: Where :func:`tierscope.collector.formats.parse_lines` keeps the step of the newest step record read so far
#: (a traceback after it fails the run at that step).
LAST_STEP = "status-last-step"


def carried_work(context: ParseContext) -> dict[str, bool | int] | None:
    """What the status checks know after the lines parsed so far with ``context``, to be saved with the file's
    position: ``short`` (the newest record announced work it had not reached) and ``why`` (a line said the run
    stopped on purpose), of :func:`drop_unreached_endings`; ``steps`` (a step record came: a traceback after it
    fails the run, :attr:`ParseContext.steps_seen`) and ``step`` (the newest record's step, where it has one: the
    step that traceback fails at). None where nothing is known (a file's start)."""
    known: dict[str, bool | int] = {k: bool(v) for k, v in context.state.get(WORK, {}).items()}
    known["steps"] = context.steps_seen
    if (step := context.state.get(LAST_STEP)) is not None:
        known["step"] = int(step)
    return known if any(v is not False for v in known.values()) else None


def resume_work(context: ParseContext, carried: dict[str, bool | int] | None) -> None:
    """Start ``context`` from what an earlier collect's :func:`carried_work` saved, for a read that goes on
    where that collect stopped: a bare ending or a traceback appended since is judged by the records read then."""
    if carried:
        context.state[WORK] = {"short": bool(carried.get("short")), "why": bool(carried.get("why"))}
        context.steps_seen = context.steps_seen or bool(carried.get("steps"))
        step = carried.get("step")
        if isinstance(step, int) and not isinstance(step, bool):
            context.state[LAST_STEP] = step


def _bare_reason() -> str:
    return "|".join(f"(?:{m.pattern})" for m in MARKERS if m.bare).replace("(?P<reason>", "(?:")


def drop_unreached_endings(
    events: pl.DataFrame,
    steps: pl.DataFrame,
    body: pl.DataFrame,
    context: ParseContext,
    said: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """``events`` without a bare ``finished`` (:attr:`Marker.bare`: ``training is done``, no why) where the
    log's last step record before it announced work it had not reached (``iteration 150/ 2000``: 150 < 2000),
    unless the log says it stopped on purpose (:data:`STOPPED_ON_PURPOSE`). Such a run is ``unknown``, not ``ok``.

    ``body``: the batch's messages (``source_offset``, ``line``), for what the records and lines say. What
    the last record announced and whether a line said why carry over to later batches in ``context``. ``said``:
    the lines of ``body`` that may say why (:attr:`~tierscope.collector.formats.base.Parsed.said`), None: all."""
    known = context.state.setdefault(WORK, {"short": False, "why": False})
    searched = body if said is None else said
    if searched.height:
        known["why"] = (
            known["why"]
            or searched.select(pl.col("line").cast(pl.String).str.contains(STOPPED_ON_PURPOSE).any()).item()
        )
    earlier = known["short"]
    if steps.height and body.height:
        # only the newest record carries over: its line alone is read here (every record's line
        # cost 0.6 CPU-s on a 2,000,000-line log), every record's only where a bare ending is judged
        offset = steps.select(pl.col("source_offset").max())
        newest = _announced(offset, body.filter(pl.col("source_offset") == offset.item()))
        if newest.height:
            known["short"] = bool(newest.get_column("_short")[-1])
    if events.height == 0 or "reason" not in events.columns or known["why"]:
        return events
    bare = (pl.col("event") == "finished") & pl.col("reason").cast(pl.String).str.contains(_bare_reason()).fill_null(
        False
    )
    if not events.select(bare.any()).item():
        return events
    # each bare ending judged by the last record before it (in this batch, else the earlier batches')
    judged = events.with_row_index("_e").sort("source_offset")
    last = _announced(steps, body) if steps.height and body.height else None
    if last is not None and last.height:
        judged = judged.join_asof(last, on="source_offset", strategy="backward", check_sortedness=False)
    else:
        judged = judged.with_columns(pl.lit(None, dtype=pl.Boolean).alias("_short"))
    judged = judged.sort("_e").with_columns(pl.col("_short").fill_null(earlier))
    return judged.filter(~(bare & pl.col("_short"))).drop("_e", "_short")


def _announced(steps: pl.DataFrame, body: pl.DataFrame) -> pl.DataFrame:
    """``source_offset`` and ``_short`` (True: the record's line announces N/M with N < M) of each step record."""
    said = steps.select("source_offset").join(body.select("source_offset", "line"), on="source_offset", how="left")
    # the text the record is of: without colours (``\x1b[32miteration``: no word boundary after the ``m``),
    # and of a bar redrawn with ``\r`` on one line, its last drawing that announces work (the record's)
    text = pl.col("line").str.replace_all(ANSI, "")
    text = (
        pl.when(text.str.contains("\r", literal=True))
        .then(text.str.split("\r").list.eval(pl.element().filter(pl.element().str.contains(ANNOUNCED))).list.last())
        .otherwise(text)
    )
    groups = text.str.extract_groups(ANNOUNCED)
    n = pl.coalesce(groups.struct.field("n"), groups.struct.field("bn")).cast(pl.Int64, strict=False)
    m = pl.coalesce(groups.struct.field("m"), groups.struct.field("bm")).cast(pl.Int64, strict=False)
    return said.select("source_offset", (n < m).fill_null(False).alias("_short")).sort("source_offset")
