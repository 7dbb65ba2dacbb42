"""What the trainer writes and the collector reads: the one place both sides take it from.

The reference trainer (:mod:`tierscope.trainer`) writes a run directory and a structured step
log; the collector (:mod:`tierscope.collector`) reads them back. The names and rules they must
agree on live here, and only here. This module imports nothing but the standard library:
every TensorFlow task imports it, and must not pay for polars or the format modules.

A run directory written by ``tierscope train local``::

    run.json               RUN_FILE: a JSON object, :class:`RunDoc`
    launcher.jsonl         the job's own events (JSON_LOG_SUFFIX)
    model/                 MODEL_DIR: the training state's checkpoints (a restarted run resumes from them)
    chief-0.jsonl ...      one step log per task: JSON_LOG_SUFFIX, or TEXT_LOG_SUFFIX for text logs
    stderr/chief-0.txt     each task's stderr, in a sub-folder: the collector reads only the
                           directory's own files, so TensorFlow's chatter never reaches it
"""

from __future__ import annotations

import re
from typing import Any, TypedDict

#: The key that marks a structured log object as tierscope's; its value is ``"step"`` or ``"event"``.
KIND_KEY = "tierscope"

#: A run event's name (the ``event`` field of an ``"event"`` object; a text log's lines that say the
#: same, such as Estimator's ``Saving checkpoints for N``, become the same events). What goodput
#: (:mod:`tierscope.analysis.goodput`) reads them for is in brackets.
STARTED = "started"  # a process (or the job) started [the clock's origin]
INITIALIZED = "initialized"  # set-up done: data loaded, model built, checkpoint restored [initialisation]
FIRST_STEP = "first_step"  # the first training step ended; ``step`` its global step [program start-up]
CHECKPOINT_BEGIN = "checkpoint_begin"  # a checkpoint save began; ``step``: the step it saves
CHECKPOINT_END = "checkpoint_end"  # ... and ended [checkpoint stalls]
EVAL_BEGIN = "eval_begin"  # an evaluation began
EVAL_END = "eval_end"  # ... and ended [evaluation stalls]; ``detail``: its metrics
RESTORED = "restored"  # training resumed from a checkpoint; ``step``: the step restored [wasted progress]
FINISHED = "finished"  # a process (or the job) ended well [the lifetime's end]
FAILED = "failed"  # ... or not; ``reason`` says why
#: the speed a log's closing summary states over the whole run (warm-up and pauses in), never a steady rate;
#: ``detail``: JSON {"global_steps_per_s": x} and/or {"examples_per_s": y} [a run's mean where no record measures one]
WHOLE_RUN_RATE = "whole_run_rate"
#: Every event name, in the order of a run.
EVENTS = (STARTED, INITIALIZED, FIRST_STEP, CHECKPOINT_BEGIN, CHECKPOINT_END, EVAL_BEGIN, EVAL_END, RESTORED,
          FINISHED, FAILED, WHOLE_RUN_RATE)  # fmt: skip

#: The run directory's description of the run (see :class:`RunDoc`).
RUN_FILE = "run.json"
#: The run directory's sub-folder of checkpoints (read only by the trainer).
MODEL_DIR = "model"
#: Suffix of a step log in tierscope's structured JSON (one object per line).
JSON_LOG_SUFFIX = ".jsonl"
#: Suffix of a step log in the 2016 text format (and of a task that logs nothing).
TEXT_LOG_SUFFIX = ".log"


class RunDoc(TypedDict, total=False):
    """The fields of ``run.json``. The collector reads ``run_id``, ``tier`` and ``host`` (each
    may be absent: the run is then named after its directory, its tier left unknown); the rest
    is there for a person reading the run later."""

    run_id: str
    tier: str  # a local run's tier is LOCAL_PREFIX + the tier it emulates
    host: str  # where it ran, e.g. "box (local, 2 CPUs)"
    topology: dict[str, int]  # replicas per role: {"chief": 1, "worker": 2, "ps": 1}
    strategy: str  # "single", "mirrored" or "ps"
    config: dict[str, Any]  # the trainer's settings
    command: str | None  # the launcher's command line
    task_command: str  # every task's command line
    cluster: dict[str, list[str]]  # TF_CONFIG's cluster
    started_at: str  # ISO 8601 UTC (of the first attempt, when --resume started the run again)
    attempts: int  # how many times the run was started (--resume adds one)
    ended_at: str | None
    wall_s: float  # seconds from the first task's start to the last one's end
    status: str  # "running", "finished", "failed", "timeout", "interrupted"
    reason: str | None  # why it did not finish
    exit_codes: dict[str, int | None]  # by "role-index"; negative: killed by that signal
    pids: dict[str, int]
    stopped_by_launcher: list[str]  # tasks the launcher ended rather than ending on their own


#: The tier label of a run on one's own machine (the 2016 experiment's laptop).
LOCAL_TIER = "local"
#: Prefix of the tier label of a cluster run on this machine: ``local-STANDARD_1`` emulates STANDARD_1.
LOCAL_PREFIX = LOCAL_TIER + "-"
#: THE rule, as a regular expression both :mod:`re` and polars' ``str.contains`` accept: a tier
#: ``local`` or ``local-<anything>``, any case. Such a run is not the cloud tier: it is not
#: priced and not a point of the tiers' scaling curve.
LOCAL_TIER_PATTERN = rf"(?i)^{re.escape(LOCAL_TIER)}(?:-|$)"
_LOCAL = re.compile(LOCAL_TIER_PATTERN)


def is_local_tier(tier: str | None) -> bool:
    """True if ``tier`` labels a run on one's own hardware (:data:`LOCAL_TIER_PATTERN`); False for None."""
    return tier is not None and _LOCAL.search(tier) is not None


def local_tier(tier: str) -> str:
    """The label of ``tier`` emulated on this machine: ``BASIC`` -> ``local-BASIC``."""
    return f"{LOCAL_PREFIX}{tier}"
