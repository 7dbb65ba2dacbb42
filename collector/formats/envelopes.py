"""Envelopes: what a platform, a launcher or a logger wraps around a training program's message.

Stripped once, before the format chain, so no format spells them again. Each envelope gives
some of a line's role, task index, timestamp and severity, and leaves the message itself byte
for byte (what the program printed). Three layers, outermost first; each is optional:

1. The platform's copy of the line (at most one):

   - ``compose``: docker-compose's ``service  | `` (the service name tells lines apart,
     it is no role).
   - ``stream-logs``: ``gcloud ... jobs stream-logs`` columns, tab-separated:
     ``INFO<TAB>2019-05-01 12:00:00 -0700<TAB>master-replica-0<TAB>TRIAL<TAB>message``.
   - ``console``: a copy from the Cloud Logging console: a severity letter, an optional
     RFC 3339 time, the replica label before the message and, repeated, after it
     (``I  worker-replica-3 global step 52335: ...  worker-replica-3``).

2. A launcher's task tag: ``[1] ``, ``[1,0]<stdout>:`` (mpirun, Horovod: a bare rank is a
   ``worker``), ``[worker-2] ``, ``worker-replica-0: ``, ``[pod/mnist-worker-0/tensorflow] ``
   (``kubectl logs --prefix``), pdsh's host column naming a pod's role and index
   (``actor-multi-node-worker-0: ``), ``0: `` (``srun --label``).

3. A logger's header: glog/absl ``I0412 08:15:02.339120 139876 hooks.py:260] ``, Python
   logging's ``2017-12-07 19:24:42,741 INFO ``, TensorFlow C++'s ``2019-05-01
   12:00:00.123456: I tensorflow/core/...cc:142] ``, tensorpack's ``[0807 10:55:08 @base.py:210] ``.
   Times without a zone are UTC (cloud machines log in UTC); glog and tensorpack print no
   year: it comes from :attr:`ParseContext.year` (``--year``, else the file's modification
   year), and without one the timestamp is null. A year turning over inside one log is not
   detected.

0. A JSON member pasted from a log entry, one per line (a pretty-printed Cloud Logging LogEntry or
   an API error body in an issue or a document): ``"message": "..."`` (also ``textPayload``, ``msg``)
   is the program's message, JSON-unquoted (its closing quote may be cut off); ``"task_name":
   "master-replica-0"`` (the entry's ``resource.labels.task_name``) and ``"logName":
   "projects/P/logs/master-replica-0"`` name the entry's task. The message then has its own layers.

Task names, wherever they appear (a console label, a stream-logs column, a Cloud Logging
``task_name``, a pod name), are read by :func:`task_from_name`: ``master-replica-0`` is the
master, ``worker-replica-3`` worker 3, Vertex AI ``workerpool1-2`` worker 2 (pool 0 is the
chief, 1 the workers, 2 the parameter servers, 3 the evaluators), a TFJob pod
``mnist-worker-1`` worker 1.

Severity is read but never decides anything: the platforms label a process's stderr copy of
an INFO line ``ERROR`` (see :mod:`tierscope.collector.formats.status` for what fails a run).

Many TensorFlow setups print each message twice, once through Python logging
(``INFO:tensorflow:loss = ...``) and once through absl with a glog header. Two neighbouring
lines of the same task with the same message, one with a logger time and one without, are
one message: the copy without a time is dropped (counted as skipped).

Cost: one anchored ``contains`` per line when no line has an envelope (plain cloudml logs).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

import polars as pl

from tierscope.collector.formats.base import STAMP, TAG, numbered
from tierscope.collector.formats.vocabulary import ANSI, WHOLE_MAX
from tierscope.dataset.schema import POOL_ROLES, ROLES

_ROLE = "|".join(ROLES)


#: A task name as platforms write it: replica, worker pool or Kubernetes pod (``<job>-<role>-N``).
_TASK_NAME = rf"(?:(?:{_ROLE})-replica-\d+|workerpool[0-3]-\d+|[a-z0-9][-a-z0-9.]*?-(?:{_ROLE})-\d+)"
_REPLICA = re.compile(rf"^(?P<role>{_ROLE})-replica-(?P<index>\d+)$")
_POOL = re.compile(r"^workerpool(?P<pool>[0-3])-(?P<index>\d+)$")
_POD = re.compile(rf"^[a-z0-9][-a-z0-9.]*?-(?P<role>{_ROLE})-(?P<index>\d+)$")

_RFC3339 = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)"
_SEVERITY_WORD = "DEFAULT|DEBUG|INFO|NOTICE|WARNING|WARN|ERROR|CRITICAL|ALERT|EMERGENCY|FATAL"

# Layer 1. Each alternative captures its own groups; the message follows.
_COMPOSE = r"(?P<c_svc>[A-Za-z0-9][\w.-]*) +\| "
_STREAM = (
    rf"(?P<t_sev>{_SEVERITY_WORD})\t"
    r"(?P<t_ts>\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d+)?(?: ?(?:[+-]\d\d:?\d\d|Z|UTC))?)\t"
    r"(?P<t_task>[^\t]*)\t[^\t]*\t"
)
#: The same columns after a terminal turned the tabs into spaces: the task must then be a task name.
_STREAM_SPACED = (
    rf"(?P<u_sev>{_SEVERITY_WORD}) {{2,}}"
    r"(?P<u_ts>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:[.,]\d+)?(?: ?(?:[+-]\d\d:?\d\d|Z|UTC))?) {2,}"
    rf"(?P<u_task>{_TASK_NAME}) {{2,}}"
)
_CONSOLE = (
    rf"(?P<k_sev>[DIWECNA*!])(?:  (?:(?P<k_ts>{_RFC3339}) )?| (?P<k_ts2>{_RFC3339}) )"
    rf"(?:(?P<k_task>{_TASK_NAME}) )?"
)
#: ``mpirun --timestamp-output``'s C ``ctime`` date (``Tue Sep  8 09:24:20 2020``), glued to the rank tag after it.
_CTIME = (
    r"(?P<w_ts>(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [ \d]\d "
    r"\d\d:\d\d:\d\d \d{4}) ?"
)
#: A launcher's process in parentheses before its line: Ray's ``(RayTrainWorker pid=364, ip=10.0.0.218) ``,
#: ``(pid=31681) `` (older Ray), ``(MapBatches(tokenize) pid=4600, ip=10.0.166.0) ``; SkyPilot's, in Ray's style, with
#: the node's rank on multi-node clusters: ``(head, rank=0, pid=17894) ``, ``(worker1, rank=1, pid=15406,
#: ip=10.164.0.57) ``, ``(setup pid=8665) ``, a single node's ``(task, pid=17499) `` and, older, ``(mnist-tpu-node
#: pid=28961) `` (the Cloud TPU page of SkyPilot's docs and its executor's log-prefix comments, skypilot-org/skypilot,
#: 2025; its Go executor puts the ip before the pid). A node's rank is its worker index.
_RAY = (
    r"\((?:(?P<ray>[A-Za-z_][\w.()<>-]*),? )?(?:rank=(?P<ray_rank>\d+), )?(?:ip=[\d.]+, )?"
    r"pid=(?P<ray_pid>\d+)(?:, ip=[\d.]+)?\) "
)
_MONTH = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
#: syslog / journald (``journalctl``'s short and short-iso outputs): ``Dec  6 10:00:01 host python3[4242]: ``;
#: the program and its pid tell the lines apart.
_SYSLOG = (
    rf"(?P<j_ts>{_MONTH} [ \d]\d \d\d:\d\d:\d\d|\d{{4}}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d)) "
    r"[\w.-]+ (?P<j_prog>[\w./-]+)\[(?P<j_pid>\d+)\]: "
)
#: A time with its zone before the message, a tab or a space after it (CloudWatch's and ``aws logs tail``'s
#: ``2023-05-03T14:25:39.123Z``, ``...+00:00``).
_ZONED_TIME = r"(?P<o_ts>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d))[\t ]"
#: log4j's layout as Apache Spark's default ``log4j.properties`` sets it (``%d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n``): a
#: two-digit year, the level and the logger's class (``$`` in a nested class's name). A JVM process relays the lines
#: of the Python process it runs through it, their own logger's header inside (XGBoost4J-Spark's tracker: ``22/06/01
#: 10:06:44 ERROR RabitTracker$TrackerProcessLogger: 2022-06-01 10:06:44,668 INFO [15]\ttrain-logloss:...``,
#: dmlc/xgboost issue 7962, 2022-06-01): the relay's level is its own (it logs the child's output as ERROR), its
#: time the platform's.
_LOG4J = rf"(?P<y_ts>\d\d/\d\d/\d\d \d\d:\d\d:\d\d) (?P<y_sev>{_SEVERITY_WORD}) [A-Za-z_$][\w$.]*: "
_PLATFORM = rf"(?:{_COMPOSE}|{_STREAM}|{_STREAM_SPACED}|{_CONSOLE}|{_CTIME}|{_RAY}|{_SYSLOG}|{_ZONED_TIME}|{_LOG4J})"

# Layer 2.
#: SageMaker's MPI launch: ``[1,mpirank:0,algo-1]<stdout>:``.
_MPIRANK = r"\[(?:\d+,)?mpirank:(?P<midx>\d+)(?:,[^\]\s]*)?\]<std(?:out|err)>:"
#: torchrun (PyTorch >= 2.3) on each line of a rank's error output: ``[rank0]:`` (one space may follow).
_TORCH_RANK = r"\[rank(?P<kidx>\d+)\]: ?"
#: torchrun --tee / torchx: ``[default0]:``, ``[trainer0|0]:`` (the worker group's role name, a rank).
_TEE = r"\[[a-z][a-z_]*?(?P<eidx>\d+)(?:\|\d+)?\]:"
#: ``srun --label``'s rank (``0: ``). The same text opens Darknet's iteration lines (``1: 695.3, 695.3 avg, ...``):
#: which one a file has is learnt from its head (:func:`numbers_are_ranks`).
_SRUN = r"(?P<sidx>\d+): "
#: A host column before each line (pdsh, which DeepSpeed's multi-node launcher runs: ``host: ``) whose host is a pod
#: that names its role and index (a Kubernetes job's ``actor-multi-node-worker-0: ``, T9K DeepSpeedJob guide, run of
#: 2023-06-21) or a hostfile's bare ``worker-1: `` (stas00/ml-engineering's guide to emulating nodes, 2022-09-08).
_POD_HOST = rf"(?:[a-z0-9][-a-z0-9.]*?-)?(?P<hrole>{_ROLE})-(?P<hidx>\d+): "
_LAUNCHER = (
    rf"(?:\[(?:(?P<brole>{_ROLE})[-_])?(?:\d+,)?(?P<bidx>\d+)\](?:<std(?:out|err)>:| )"
    rf"|{_MPIRANK}|{_TORCH_RANK}|{_TEE}"
    rf"|\[pod/(?P<pod>{_TASK_NAME})(?:/[^\]\s]*)?\] "
    rf"|(?P<rrole>{_ROLE})-replica-(?P<ridx>\d+): "
    rf"|{_POD_HOST}"
    rf"|{_SRUN})"
)

# Layer 3.
_GLOG = r"(?P<g_sev>[IWEF])(?P<g_md>\d{4}) (?P<g_hms>\d\d:\d\d:\d\d\.\d{6}) +\d+ [^\]\s]+:\d+\] "
_TFCPP = r"(?P<x_ts>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6}): (?P<x_sev>[IWEF]) [^\]\s]+:\d+\] "
#: An ISO-like time, its date apart by ``-`` or ``/`` (PaddlePaddle's loggers print ``2025/09/24 12:13:19``).
_ISO_TIME = r"\d{4}(?:-\d\d-\d\d|/\d\d/\d\d)[ T]\d\d:\d\d:\d\d(?:[.,]\d{1,9})?"
#: The same with a two-digit year (``%y-%m-%d``: BasicSR's ``20-05-22 17:42:09.481 - INFO: ``, open-mmlab/mmagic
#: issue 82, 2020-05-22; XPixelGroup/BasicSR issue 204, 2019-08-09), read only before a severity word.
_SHORT_YEAR_TIME = r"\d\d-\d\d-\d\d \d\d:\d\d:\d\d(?:[.,]\d{1,9})?"
#: Python logging's ``%(asctime)s %(levelname)s `` (the comma and milliseconds of its default time).
_PYLOG = rf"(?P<p_ts>\d{{4}}-\d\d-\d\d \d\d:\d\d:\d\d,\d{{3}}) (?P<p_sev>{_SEVERITY_WORD}) "
#: Other layouts that open with the time and name the level, fields apart by `` - ``, `` | `` or spaces:
#: ``%(asctime)s - %(name)s - %(levelname)s - `` (the default of many tools), ``time | LEVEL | name | ``,
#: a padded ``time   LEVEL  ``; loguru's ``time | LEVEL | name:function:line - `` (its source location stripped
#: with the name: YOLOX in open-mmlab/mmdetection issue 5993, 2021-08-31); the logger's name may also open the layout
#: in brackets (torchtitan's
#: ``[titan] 2025-06-16 22:30:50,322 - root - INFO - ``, pytorch/torchtitan PR 1287, 2025-06-16). The
#: separator after the level is one space after its mark (the message's own leading spaces stay its own).
_PYLOG_FIELDS = (
    rf"(?:\[[A-Za-z][\w.-]{{0,39}}\] )?(?P<f_ts>{_ISO_TIME}|{_SHORT_YEAR_TIME})(?:\s*[-|]\s*|\s+)"
    rf"(?:[\w.]+(?:\s*[-|]\s*|\s+))?\[?(?P<f_sev>{_SEVERITY_WORD})\]?"
    r"(?:\s*\|\s*[\w.]+(?::[\w<>]+:\d+)?)?(?:\s*[-|:] | +|\t)"
)
#: A time alone before the message (``2023-03-22 09:30:39 iter 2920: ...``), also NVIDIA DLLogger's
#: ``DLL 2021-06-14 23:08:53.659718 - ``.
_PLAIN_TIME = rf"(?:DLL )?(?P<s_ts>{_ISO_TIME})(?: - |: | )"
#: A word and a colon that a logger's format puts before Python logging's time, the message glued to it by ``-``
#: (arcface_torch's ``Training: 2021-07-03 00:09:37,089-Speed 1473.00 samples/sec ...``, deepinsight/insightface
#: issues 1624 and 1996). The comma's milliseconds are Python logging's, which prints no zone: the ``-`` is no offset.
_WORD_TIME = r"[A-Z][A-Za-z]*: (?P<l_ts>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})-"
#: ``LEVEL:logger:`` with the time after it (a formatter that puts ``%(asctime)s`` after the logger name).
_PYLOG_NAMED = rf"(?P<q_sev>DEBUG|INFO|WARNING|ERROR|CRITICAL):[\w.]+:(?P<q_ts>{_ISO_TIME}):? "
#: A time alone in brackets (Megatron's ``[2025-04-13 23:41:12] ``), or with the month and day only and the
#: logger's name (detectron2's ``[11/01 11:27:04 d2.utils.events]: ``; its formatter puts ``WARNING`` or ``ERROR``
#: before a warning's or an error's: detectron2/utils/logger.py ``_ColorfulFormatter``). The full time may also take
#: the logger's name,
#: then its file and line in parentheses and the level (Swin Transformer's ``[%(asctime)s %(name)s] (%(filename)s
#: %(lineno)d): %(levelname)s ``, ``[2024-07-27 03:37:34 vssm1_high_tiny_gradacc2] (main.py 295): INFO ``, quoted in
#: MzeroMiko/VMamba issue 273, 2024-07-27).
_BRACKET_TIME = (
    rf"\s*\[(?P<b_ts>{_ISO_TIME})(?: [\w.-]+)?\]:? (?:\([\w.<>-]+ \d+\): (?P<b_sev>{_SEVERITY_WORD}) )?"
    rf"|(?:(?P<d_sev>WARNING|ERROR|CRITICAL) )?\[(?P<d_md>\d\d/\d\d) (?P<d_hms>\d\d:\d\d:\d\d) [\w.]+\]:? "
)
#: A time in brackets glued to more bracketed fields, one of them the level, then `` - ``: Hydra's job logging
#: (``[%(asctime)s][%(name)s][%(levelname)s] - %(message)s``, the default of every Hydra app: FunASR's ``[2024-08-12
#: 23:04:07,255][root][INFO] - train, rank: 9, ...``, modelscope/FunASR issue 2006; mlprof's ``[2023-01-11
#: 13:28:19,976][mlprof.trainers.pytorch.trainer][INFO] - [0] [5/10: ...``, saforem2/vault, 2023-01-11) and the
#: level before the name and line (ezpz's ``[2024-04-02 01:59:46][INFO][trainer:837] - step=5 ...``,
#: kharelb/ai-science-training-series homework 6, 2024-04-02).
_GLUED_FIELDS = rf"\[(?P<hy_ts>{_ISO_TIME})\](?:\[[^\]\s]+\])?\[(?P<hy_sev>{_SEVERITY_WORD})\](?:\[[^\]\s]+\])? - "
_TENSORPACK = r"\[(?P<n_md>\d{4}) (?P<n_hms>\d\d:\d\d:\d\d) @[^\]\s]+\] "
#: Hugging Face's logger: ``[INFO|trainer.py:1145] 2021-05-20 20:16:39,037 >> ``.
_HF = rf"\[(?P<h_sev>{_SEVERITY_WORD})\|[^\]\s|]+:\d+\] (?P<h_ts>{_ISO_TIME}) >> ?"
#: A month-first date (``%m/%d/%Y``): the examples' ``08/01/2025 23:27:31 - INFO - name - `` and SageMaker's
#: built-in algorithms' ``[08/27/2018 06:07:55 INFO 140026571642688] ``.
_US_TIME = r"\d\d/\d\d/\d{4} \d\d:\d\d:\d\d"
_US_LOGGER = (
    rf"(?P<v_ts>{_US_TIME}) - (?P<v_sev>{_SEVERITY_WORD}) - [\w.]+ - "
    rf"|\[(?P<a_ts>{_US_TIME}) (?P<a_sev>{_SEVERITY_WORD}) \d+\] "
)
#: PyTorch's C++ (c10) header, glog's in brackets: ``[E606 09:09:08.164985364 ProcessGroupNCCL.cpp:757] ``
#: (month not zero-padded), also without the time (``[W reducer.cpp:1389] ``).
_C10 = r"\[(?P<e_sev>[IWEF])(?:(?P<e_md>\d{3,4}) (?P<e_hms>\d\d:\d\d:\d\d\.\d+))? [^\]\s]+:\d+\] ?"
_LOGGER = (
    rf"(?:{_GLOG}|{_TFCPP}|{_PYLOG}|{_PYLOG_FIELDS}|{_PYLOG_NAMED}|{_GLUED_FIELDS}|{_BRACKET_TIME}|{_TENSORPACK}|{_HF}"
    rf"|{_US_LOGGER}"
    rf"|{_C10}|{_WORD_TIME}|{_PLAIN_TIME})"
)

# Layer 4: bracketed fields a logger puts after its time, in this order, each optional: the level, the
# source's ``file:line(:function)``, the rank that logged (DeepSpeed's ``[INFO] [logging.py:69:log_dist]
# [Rank 0] ``, also ``[INFO ] `` and PaddleNLP's right-aligned ``[    INFO] - ``, PaddlePaddle/PaddleNLP issue
# 4949). The rank names no task: the same process prints its other lines without it (DeepSpeed's timer lines),
# and one process read as two tasks would split its records.
#: After the source location, icefall's ``(rank/world)`` (its ``setup_logger`` puts the rank in the format, so every
#: line of a process carries it: k2-fsa/icefall issues 1382, 2023-11-12, and 1463, 2024-01-14): the worker's index.
#: Before the level, the process id and thread name (or process name) Python logging's ``%(process)d`` and
#: ``%(threadName)s`` print (``[42292] [MainThread] ``, ``[10904] [ThreadPoolExecutor-2_0] ``); after it, the
#: logger's name and line in parentheses (``(ignite.engine.engine.SupervisedTrainer:272) - ``): MONAI Label's
#: ``[%(asctime)s] [%(process)s] [%(threadName)s] [%(levelname)s] (%(name)s:%(lineno)d) - `` (Project-MONAI/
#: MONAILabel PR 1333, 2023-04-08; discourse.slicer.org topic 30689, 2023-09-13). Only around a bracketed level: a
#: message's own ``(file.py:12)`` or ``[Eval]`` stays its own.
_THREAD = r"(?:MainThread|MainProcess|(?:Thread|ThreadPoolExecutor|Dummy|(?:Spawn|Fork|ForkServer)?Process)-[\d_]+)"
_SOURCE_LOCATION = r"\([\w.<>]+(?::[\w.<>]+)?:\d+\) (?:- )?"
_BRACKET_FIELDS = (
    rf"(?:(?:\[\d+\] )?(?:\[{_THREAD}\] )?\[ *(?P<z_sev>{_SEVERITY_WORD}) ?\]:? (?:- )?(?:{_SOURCE_LOCATION})?)?"
    r"(?:\[[\w./<>-]+\.\w+:\d+(?::[\w.<>]+)?\] (?:\((?P<z_of>\d+)/\d+\) )?)?"
    r"(?:\[Rank (?P<z_rank>\d+)\] )?"
)

# Layer 0: one JSON member a line. The message's value runs to the line's end, its closing quote and
# comma optional (a paste cut off inside it); a task name is the last path part of its value.
_JSON_MESSAGE = r'^\s*"(?:message|textPayload|msg)"\s*:\s*"(.*?)(?:"\s*,?)?\s*$'
_JSON_TASK = r'^\s*"(?:task_name|logName)"\s*:\s*"(?:[^"]*/)?([^"/]+)"\s*,?\s*$'
_JSON_GATE = r'^\s*"(?:message|textPayload|msg|task_name|logName)"\s*:'

# The prefix alone, not the message: a capturing regex is slow on every byte it scans.
#: A paste's Markdown quoting (``> `` before every line of an issue's quoted log).
#: A code block inside the quote adds its indent: four spaces (or a tab) after the quote's own space (a log quoted
#: as ``>     [2023-01-11 13:28:19,976][mlprof...][INFO] - ...``, saforem2/vault, 2023-01-11).
_QUOTE = r"(?P<quote>> ?(?: {4}|\t)?)"
#: A test harness's label of the stream a child process wrote the line to: Accelerate's and Transformers'
#: ``execute_subprocess_async`` (what ``accelerate test`` runs) re-print each line of the launched job as
#: ``stdout: `` or ``stderr: `` (huggingface/accelerate issues 1942, 2023-09-07, and 2084, 2023-10-26;
#: deepspeedai/DeepSpeed issue 2629, 2022-12-20). The same process writes both streams: it names no task.
_STREAM_LABEL = r"(?P<stream>std(?:out|err): )"
#: A time the program printed at the head of its own message, inside a logger's header (TensorFlow's image retraining
#: script prints ``'%s: Step %d: Cross entropy = %f' % (datetime.now(), ...)`` through tf.logging, which absl re-logs
#: with glog's header: ``I0423 05:08:16.899667 47836397217664 tf_logging.py:115] 2019-04-23 05:08:16.899646: Step 270:
#: Cross entropy = 0.012275``, cloud-annotations/cloud-annotations issue 56, 2019-04-23). A layer of its own: the
#: record's time, with the year glog leaves out, and the same time as the Python logging copy of the line, whose
#: ``INFO:tensorflow:`` header the same time follows.
_MESSAGE_TIME = rf"(?:(?P<i_ts>{_ISO_TIME})(?: - |: | ))?"
_ENVELOPE = (
    rf"^(?P<prefix>{_QUOTE}?{_STREAM_LABEL}?(?:{_PLATFORM})?(?:{_LAUNCHER})?(?:{_LOGGER})?{_BRACKET_FIELDS}"
    rf"{_MESSAGE_TIME})"
)


def _never(pattern: str) -> str:
    """``pattern``'s named groups, matching nothing (the frame keeps its columns, the regex its speed)."""
    return "".join(f"(?P<{name}>[a&&b])" for name in re.findall(r"\(\?P<(\w+)>", pattern))


#: The layers of today's launchers and loggers. A capturing regex slows with each group it holds, so a batch
#: none of whose lines may have one is read without them (:data:`_NEWER_GATE`).
_NEWER = (
    _LOG4J,
    _CTIME,
    _RAY,
    _SYSLOG,
    _ZONED_TIME,
    _MPIRANK,
    _TORCH_RANK,
    _TEE,
    _POD_HOST,
    _HF,
    _US_LOGGER,
    _C10,
    _BRACKET_FIELDS,
)


#: A cheap test whether a line may have one of the :data:`_NEWER` layers (anchored, as :data:`_GATE`): a line
#: without one is read by the smaller regex, with the same result.
_NEWER_GATE = (
    rf"^(?:\(|\[(?:rank\d|[a-z][a-z_]*\d+(?:\|\d+)?\]:|(?:\d+,)?mpirank| *(?:{_SEVERITY_WORD})[| \]]|[IWEF][\d ]"
    rf"|\d\d/|Rank \d)|(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) |\d\d/\d\d/\d{{4}} |\d\d/\d\d/\d\d \d|{_MONTH} [ \d]\d \d"
    r"|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d)[\t ]"
    rf"|(?:[a-z0-9][-a-z0-9.]*?-)?(?:{_ROLE})-\d+: )"
    rf"|\] \[ *(?:{_SEVERITY_WORD}) ?\]:? |\]:\[|\] \[Rank \d|\] \[[\w./<>-]+\.\w+:\d+(?::[\w.<>]+)?\] "
    rf"|\d (?:{_SEVERITY_WORD}) \[[\w./<>-]+\.\w+:\d+(?::[\w.<>]+)?\] "
)


def _without_newer(envelope: str) -> str:
    """``envelope`` without the :data:`_NEWER` layers (alternatives of their layer; the bracketed fields
    follow the logger). Their groups are missing from what it extracts: :func:`split_envelopes` adds them."""
    for layer in _NEWER:
        envelope = envelope.replace(layer if layer == _BRACKET_FIELDS else f"|{layer}", "")
    return envelope


#: The same without the time-alone layer (its group kept, matching nothing): for files read with formats
#: the user declared, whose patterns capture a leading time themselves.
# A time alone before the message, plain or with its zone, is the declared pattern's to capture.
_ENVELOPE_DECLARED = (
    _ENVELOPE.replace(_PLAIN_TIME, _never(_PLAIN_TIME))
    .replace(_ZONED_TIME, _never(_ZONED_TIME))
    .replace(_MESSAGE_TIME, f"(?:{_never(_MESSAGE_TIME)})?")
)
_ENVELOPE_OLDER = _without_newer(_ENVELOPE)
_ENVELOPE_DECLARED_OLDER = _without_newer(_ENVELOPE_DECLARED)
#: Every group the envelope regex names.
_GROUPS = tuple(dict.fromkeys(re.findall(r"\(\?P<(\w+)>", _ENVELOPE)))

#: A cheap test for "this line may have an envelope": anchored, so most lines fail on their first byte.
_GATE = (
    rf"^(?:[DIWECNA*!] [ \d]|(?:{_SEVERITY_WORD})(?:\t|  +\d)|[A-Za-z0-9][\w.-]* +\| |\[|(?:{_ROLE})-replica-\d|\d+: "
    rf"|(?:[a-z0-9][-a-z0-9.]*?-)?(?:{_ROLE})-\d+: "
    r"|[IWEF]\d{4} \d|\d{4}[-/]\d\d[-/]\d\d[ T]\d|\d\d-\d\d-\d\d \d\d:|[A-Z][A-Za-z]*: \d{4}-"
    r"|\s+\[\d{4}[-/]|> |>$|DLL \d|std(?:out|err): "
    r"|(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) [A-Z][a-z]{2} [ \d]\d |\d\d/\d\d/\d{4} |\d\d/\d\d/\d\d \d\d:"
    r"|\((?:[A-Za-z_][\w.()<>-]*,? )?(?:rank=\d+, )?(?:ip=[\d.]+, )?pid="
    r"|(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [ \d]\d \d"
    r"|(?:DEBUG|INFO|WARNING|ERROR|CRITICAL):[\w.]+:\d{4}-|(?:WARNING|ERROR|CRITICAL) \[\d\d/)"
)

#: Python logging's ``LEVEL:logger:`` header, ignored when comparing the two copies of a message.
_PY_HEADER = r"^(?:DEBUG|INFO|WARNING|ERROR|CRITICAL):[\w.]+:"


@dataclass(frozen=True)
class EnvelopeInfo:
    """One row of ``tierscope formats`` for an envelope."""

    name: str
    example: str
    meaning: str


#: Every envelope, outermost first, with one example each.
ENVELOPES: tuple[EnvelopeInfo, ...] = (
    EnvelopeInfo(
        "name",
        "x1000c0s6b0n0: ",
        "a name column no rule names (pdsh's host, a process manager's), learnt from a file's first lines: "
        "tells its lines apart",
    ),
    EnvelopeInfo(
        "json-member",
        '  "message": "',
        "a JSON member a line (a pasted LogEntry or API error): the message unquoted; task_name or logName its task",
    ),
    EnvelopeInfo("quote", "> ", "a paste's Markdown quoting: stripped, says nothing"),
    EnvelopeInfo(
        "stream-label",
        "stdout: ",
        "a test harness's label of the child's stream (accelerate test): stripped, names no task",
    ),
    EnvelopeInfo("compose", "ray-training  | ", "docker-compose's service name: tells the services' lines apart"),
    EnvelopeInfo(
        "stream-logs",
        "INFO\t2019-05-01 12:00:00 -0700\tmaster-replica-0\t\t",
        "gcloud stream-logs columns: severity, the record's time, its role and task index",
    ),
    EnvelopeInfo(
        "console",
        "I  worker-replica-3 <message>  worker-replica-3",
        "a Cloud console copy: severity, optional time, the replica label before and after the message",
    ),
    EnvelopeInfo(
        "ctime", "Tue Sep  8 09:24:20 2020", "mpirun --timestamp-output's date (before its rank tag): the record's time"
    ),
    EnvelopeInfo(
        "ray",
        "(RayTrainWorker pid=1193, ip=10.244.4.193) ",
        "Ray's actor and process, SkyPilot's node ((head, rank=0, pid=17894) ): tells its lines apart; a rank is a "
        "worker's index",
    ),
    EnvelopeInfo(
        "syslog", "Dec  6 10:00:01 gpu-node-3 python3[4242]: ", "syslog/journald: the time, the program and its pid"
    ),
    EnvelopeInfo("zoned-time", "2023-05-03T14:25:39.123Z ", "a time with its zone (CloudWatch): the record's time"),
    EnvelopeInfo(
        "log4j",
        "22/06/01 10:06:44 ERROR RabitTracker$TrackerProcessLogger: ",
        "log4j's layout as Spark sets it: the record's UTC time where no logger inside names one; its level is the "
        "relay's",
    ),
    EnvelopeInfo("launcher", "[worker-2] ", "the record's role and task index, when the record does not name its own"),
    EnvelopeInfo("replica", "worker-replica-0: ", "the record's role and task index (Cloud ML Engine, TFJob)"),
    EnvelopeInfo(
        "pod-host",
        "actor-multi-node-worker-0: ",
        "pdsh's host column (DeepSpeed's multi-node launcher) naming a pod's or host's role and index: the record's",
    ),
    EnvelopeInfo(
        "rank",
        "[1] ",
        "task index of a worker (mpirun, Horovod; also [1,0]<stdout>:, SageMaker's [1,mpirank:0,algo-1]<stdout>:, "
        "torchrun's [rank0]: and srun's '0: ')",
    ),
    EnvelopeInfo("torchrun-tee", "[default0]:", "torchrun --tee / torchx's role and rank ([trainer0|0]:): a worker"),
    EnvelopeInfo("pod", "[pod/mnist-worker-1/tensorflow] ", "kubectl logs --prefix: role and index from the pod name"),
    EnvelopeInfo(
        "glog",
        "I0412 08:15:02.339120 139876 basic_session_run_hooks.py:260] ",
        "the record's UTC timestamp; the year from --year or the file's modification time",
    ),
    EnvelopeInfo("python-logging", "2017-12-07 19:24:42,741 INFO ", "the record's timestamp (UTC)"),
    EnvelopeInfo(
        "python-logging-fields",
        "2020-05-08 18:44:23,494 - mmdet - INFO - ",
        "the record's timestamp (UTC); also 'time | LEVEL | name | ' and a name before or after the level",
    ),
    EnvelopeInfo(
        "python-logging-named",
        "INFO:tensorflow:2018-10-30 10:26:03.272900: ",
        "the record's timestamp (UTC), after the level and logger name",
    ),
    EnvelopeInfo("bracketed-time", "[2025-04-13 23:41:12] ", "the record's timestamp (UTC)"),
    EnvelopeInfo(
        "hydra-logging",
        "[2024-08-12 23:04:07,255][root][INFO] - ",
        "Hydra's job logging, its time and level glued in brackets with the logger's name: the record's time (UTC)",
    ),
    EnvelopeInfo(
        "time", "DLL 2021-06-14 23:08:53.659718 - ", "a time alone (also after 'DLL '): the record's timestamp (UTC)"
    ),
    EnvelopeInfo(
        "word-time",
        "Training: 2021-07-03 00:09:37,089-",
        "a word and a colon, then Python logging's time glued to the message by '-': the record's timestamp (UTC)",
    ),
    EnvelopeInfo(
        "bracketed-month-time",
        "[11/01 11:27:04 d2.utils.events]: ",
        "the record's UTC timestamp (month/day); the year as for glog",
    ),
    EnvelopeInfo(
        "tf-cpp",
        "2019-05-01 12:00:00.123456: I tensorflow/core/platform/cpu_feature_guard.cc:142] ",
        "the record's timestamp (UTC)",
    ),
    EnvelopeInfo(
        "tensorpack-logger", "[0807 10:55:08 @base.py:210] ", "the record's UTC timestamp; the year as for glog"
    ),
    EnvelopeInfo("hf-logging", "[INFO|trainer.py:1145] 2021-05-20 20:16:39,037 >> ", "the record's timestamp (UTC)"),
    EnvelopeInfo(
        "month-first-time",
        "08/01/2025 23:27:31 - INFO - __main__ - ",
        "the record's timestamp (UTC); also SageMaker algorithms' [08/27/2018 06:07:55 INFO 1400265] ",
    ),
    EnvelopeInfo(
        "c10",
        "[E606 09:09:08.164985364 ProcessGroupNCCL.cpp:757] ",
        "PyTorch's C++ header: the record's UTC timestamp; the year as for glog",
    ),
    EnvelopeInfo(
        "bracketed-fields",
        "[INFO] [logging.py:69:log_dist] [Rank 0] ",
        "a logger's level, source and rank in brackets after its time (DeepSpeed): stripped, the level kept",
    ),
    EnvelopeInfo(
        "message-time",
        "2019-04-23 05:08:16.899646: ",
        "a time the program printed at its message's head, after a logger's header: the record's timestamp (UTC)",
    ),
)

#: Per-line facts from the envelopes, joined onto records by ``source_offset``; ``envelope``
#: names the envelopes read (``console+glog``).
ENVELOPE_SCHEMA: dict[str, pl.DataType] = {
    "source_offset": pl.Int64(),
    "role": pl.String(),
    "task_index": pl.Int32(),
    "timestamp": pl.Datetime("us", "UTC"),
    "severity": pl.String(),
    "envelope": pl.String(),
}


def task_from_name(task_name: str | None) -> tuple[str | None, int | None]:
    """``(role, task_index)`` from a task name, or ``(None, None)`` if it is not one.

    ``master-replica-0`` -> ``("master", 0)``, ``worker-replica-3`` -> ``("worker", 3)``;
    Vertex AI ``workerpool0-0`` -> ``("chief", 0)``, ``workerpool1-2`` -> ``("worker", 2)``,
    ``workerpool2-1`` -> ``("ps", 1)``, ``workerpool3-0`` -> ``("evaluator", 0)``; a TFJob
    pod ``mnist-chief-0`` -> ``("chief", 0)``.
    """
    if not task_name:
        return None, None
    found: tuple[str, str] | None = None
    if m := _REPLICA.match(task_name):
        found = m["role"], m["index"]
    elif m := _POOL.match(task_name):
        found = POOL_ROLES[int(m["pool"])], m["index"]
    elif m := _POD.match(task_name):
        found = m["role"], m["index"]
    # an index no task_index (Int32) holds names no task: it would overflow the frame
    if found is None or int(found[1]) > WHOLE_MAX["task"]:
        return None, None
    return found[0], int(found[1])


def task_name_expr(name: pl.Expr) -> tuple[pl.Expr, pl.Expr]:
    """:func:`task_from_name` as polars expressions over a String column: ``(role, task_index)``."""
    replica = name.str.extract_groups(rf"^(?P<r>{_ROLE})-replica-(?P<i>\d+)$")
    pool = name.str.extract_groups(r"^workerpool(?P<p>[0-3])-(?P<i>\d+)$")
    pod = name.str.extract_groups(rf"^[a-z0-9][-a-z0-9.]*?-(?P<r>{_ROLE})-(?P<i>\d+)$")
    pool_role = pool.struct.field("p").replace_strict(
        {str(i): r for i, r in enumerate(POOL_ROLES)}, default=None, return_dtype=pl.String
    )
    role = pl.coalesce(replica.struct.field("r"), pool_role, pod.struct.field("r"))
    index = pl.coalesce(replica.struct.field("i"), pool.struct.field("i"), pod.struct.field("i"))
    index = index.cast(pl.Int32, strict=False)
    # as task_from_name: an index no Int32 holds names no task (neither its role)
    return pl.when(index.is_not_null()).then(role), index


def _utc(text: pl.Expr, fmt: str, zoned: bool = False) -> pl.Expr:
    if zoned:
        return text.str.to_datetime(fmt, time_unit="us", strict=False).dt.convert_time_zone("UTC")
    return text.str.to_datetime(fmt, time_unit="us", time_zone="UTC", strict=False)


def _iso(text: pl.Expr) -> pl.Expr:
    """An ISO-like time without a zone (``2020-05-08 18:44:23,494``, ``...T...``, no fraction) as UTC."""
    clean = text.str.replace(",", ".", literal=True).str.replace("T", " ", literal=True).str.replace_all("/", "-")
    # a two-digit year (``20-05-22``) is of this century; ``%Y`` would read it as the year 20
    short = clean.str.contains(r"^\d\d-")
    return pl.coalesce(
        pl.when(short).then(pl.coalesce(_utc(clean, "%y-%m-%d %H:%M:%S%.f"), _utc(clean, "%y-%m-%d %H:%M:%S"))),
        pl.when(~short).then(pl.coalesce(_utc(clean, "%Y-%m-%d %H:%M:%S%.f"), _utc(clean, "%Y-%m-%d %H:%M:%S"))),
    )


def _timestamp(year: int | None, newer: bool = True) -> pl.Expr:
    """The line's time: the logger's if it printed one, else the platform's. A logger header
    without a year (glog, tensorpack) takes the platform's year, else ``year``. ``newer``: whether the
    :data:`_NEWER` layers may have been read (their times are parsed only then)."""
    stream = pl.coalesce("t_ts", "u_ts").str.replace(",", ".", literal=True).str.replace("T", " ", literal=True)
    stream_zoned = stream.str.contains(r"[+-]\d\d:?\d\d$|Z$")
    console = pl.coalesce("k_ts", "k_ts2")
    platform = pl.coalesce(
        pl.when(stream_zoned).then(_utc(stream, "%Y-%m-%d %H:%M:%S%.f %z", True)),
        pl.when(~stream_zoned).then(_utc(stream, "%Y-%m-%d %H:%M:%S%.f")),
        _utc(console.str.strip_suffix("Z"), "%Y-%m-%dT%H:%M:%S%.f"),
        _utc(console, "%Y-%m-%dT%H:%M:%S%.f%:z", True),
    )
    the_year = pl.coalesce(platform.dt.year(), pl.lit(year, dtype=pl.Int32))

    def no_year(md: str, hms: str, fmt: str) -> pl.Expr:
        return _utc(pl.format("{}{} {}", the_year, pl.col(md), pl.col(hms)), fmt)

    newer_times = []
    if newer:
        # c10's month is not zero-padded (``E606``): padded to glog's four digits
        c10 = pl.format("{}{} {}", the_year, pl.col("e_md").str.zfill(4), pl.col("e_hms"))
        newer_times = [
            _utc(c10, "%Y%m%d %H:%M:%S%.f"),
            _iso(pl.col("h_ts")),
            _utc(pl.coalesce("v_ts", "a_ts"), "%m/%d/%Y %H:%M:%S"),
        ]
    return pl.coalesce(
        # the program's own time, inside its logger's: the line's, with its year
        _iso(pl.col("i_ts")),
        no_year("g_md", "g_hms", "%Y%m%d %H:%M:%S%.f"),
        *newer_times,
        _utc(pl.col("x_ts"), "%Y-%m-%d %H:%M:%S%.f"),
        _iso(pl.col("p_ts")),
        _iso(pl.col("f_ts")),
        _iso(pl.col("q_ts")),
        _iso(pl.col("b_ts")),
        _iso(pl.col("hy_ts")),
        _iso(pl.col("s_ts")),
        _iso(pl.col("l_ts")),
        no_year("n_md", "n_hms", "%Y%m%d %H:%M:%S"),
        _utc(pl.format("{}/{} {}", the_year, pl.col("d_md"), pl.col("d_hms")), "%Y/%m/%d %H:%M:%S"),
        platform,
        # mpirun's, syslog's and CloudWatch's times are the platform's: a logger's own time inside them wins
        *(
            [
                _ctime(pl.col("w_ts")),
                _syslog_time(pl.col("j_ts"), the_year),
                _zoned(pl.col("o_ts")),
                _utc(pl.col("y_ts"), "%y/%m/%d %H:%M:%S"),
            ]
            if newer
            else []
        ),
    )


def _syslog_time(text: pl.Expr, year: pl.Expr) -> pl.Expr:
    """syslog's ``Dec  6 10:00:01`` (the year as for glog) or journald's ISO time with its zone, as UTC."""
    iso = text.str.contains(r"^\d{4}-")
    return pl.coalesce(
        pl.when(~iso).then(_utc(pl.format("{} {}", year, text.str.replace_all(" +", " ")), "%Y %b %d %H:%M:%S")),
        pl.when(iso).then(_zoned(text)),
    )


def _zoned(text: pl.Expr) -> pl.Expr:
    """An RFC 3339 time (``Z``, ``+00:00`` or ``+0000``) as UTC."""
    clean = text.str.replace(r"Z$", "+00:00").str.replace(r"([+-]\d\d)(\d\d)$", "${1}:${2}")
    return _utc(clean, "%Y-%m-%dT%H:%M:%S%.f%:z", True)


def _ctime(text: pl.Expr) -> pl.Expr:
    """C's ``ctime`` (``Tue Sep  8 09:24:20 2020``) as UTC; the weekday is dropped (it says nothing the date
    does not, and a wrong one would void the date)."""
    return _utc(text.str.slice(4).str.replace_all(" +", " "), "%b %d %H:%M:%S %Y")


def _without_trailing_label(body: pl.Expr, label: pl.Expr) -> pl.Expr:
    """``body`` without the console's repeat of ``label`` at its end (one or two spaces before it,
    one optional space after it)."""
    stripped = body.str.strip_suffix(" ")
    for sep in ("  ", " "):
        tail = pl.concat_str(pl.lit(sep), label)
        stripped = (
            pl.when(label.is_not_null() & stripped.str.ends_with(tail))
            .then(stripped.str.slice(0, stripped.str.len_chars() - tail.str.len_chars()))
            .otherwise(stripped)
        )
    return pl.when(label.is_not_null()).then(stripped).otherwise(body)


def _envelope_name() -> pl.Expr:
    """The envelopes a line had, outermost first, joined by ``+`` (``compose+rank``); null for none."""
    present = lambda col: pl.col(col).is_not_null()  # noqa: E731
    parts = [
        ("name", present("_name")),
        ("json-member", pl.col("_json")),
        ("quote", present("quote")),
        ("stream-label", present("stream")),
        ("compose", present("c_svc")),
        ("stream-logs", present("t_sev") | present("u_sev")),
        ("console", present("k_sev")),
        ("ctime", present("w_ts")),
        ("ray", present("ray_pid")),
        ("syslog", present("j_pid")),
        ("zoned-time", present("o_ts")),
        ("log4j", present("y_ts")),
        ("launcher", present("brole")),
        ("rank", (present("bidx") & ~present("brole")) | present("sidx") | present("midx") | present("kidx")),
        ("torchrun-tee", present("eidx")),
        ("pod", present("pod")),
        ("replica", present("rrole")),
        ("pod-host", present("hrole")),
        ("glog", present("g_md")),
        ("tf-cpp", present("x_ts")),
        ("python-logging", present("p_ts")),
        ("python-logging-fields", present("f_ts")),
        ("python-logging-named", present("q_ts")),
        ("bracketed-time", present("b_ts")),
        ("hydra-logging", present("hy_ts")),
        ("bracketed-month-time", present("d_md")),
        ("time", present("s_ts")),
        ("word-time", present("l_ts")),
        ("tensorpack-logger", present("n_md")),
        ("hf-logging", present("h_ts")),
        ("month-first-time", present("v_ts") | present("a_ts")),
        ("c10", present("e_sev")),
        ("bracketed-fields", present("z_sev") | present("z_rank") | present("z_of")),
        ("message-time", present("i_ts")),
    ]
    joined = pl.concat_list([pl.when(hit).then(pl.lit(name)) for name, hit in parts]).list.drop_nulls().list.join("+")
    return pl.when(joined != "").then(joined)


#: Ray's note at the end of a line it deduplicated across the cluster: no part of the message.
_RAY_REPEATS = r" \[repeated \d+x across cluster\]$"


def _without_ray_repeats(body: pl.Expr) -> pl.Expr:
    """``body`` without Ray's ``[repeated 35x across cluster]`` where a Ray prefix was read."""
    return pl.when(pl.col("ray_pid").is_not_null()).then(body.str.replace(_RAY_REPEATS, "")).otherwise(body)


def _body() -> pl.Expr:
    """The message after the envelope's prefix (null where there is none)."""
    return pl.col("line").str.slice(pl.col("prefix").str.len_chars()).alias("body")


#: The first non-blank lines of a file a prefix no rule names is learnt from.
LEARN_LINES = 200
#: The share of those lines that must open with the prefix's column for it to be the file's layout.
LEARN_SHARE = 0.9
#: A column no rule names: a host, pod or process name (letters, digits, ``._-/@``, at least one digit and one
#: other character, so no word of a message), then ``: `` (pdsh, ``srun`` with host names) or `` | `` (process
#: managers). At most :data:`_NAME_MAX_CHARS` characters: the pattern takes the whole run of name characters
#: (neither ``:`` nor a space is one, so a match's name is that run, whatever its length) and a longer one is
#: dropped after. Bounded in the pattern (``{0,62}``), the regex of 62 copies of Unicode's ``\w`` took ~20 ms
#: of CPU to compile, in every collect.
_NAME_COLUMN = r"^([A-Za-z0-9][\w.@/-]*)(?::| +\|) "
_NAME_MAX_CHARS = 63
_A_NAME = r"\d"
_NOT_A_NAME = r"^\d+$"
#: The state key of the learnt layout (a tuple of names, or ``()`` when the file has none).
_LEARNT = "envelope-names"
#: The state key of whether a file's leading ``N: `` is a rank (:func:`numbers_are_ranks`).
_LEARNT_RANKS = "envelope-srun-ranks"


def numbers_are_ranks(numbers: pl.Series) -> bool:
    """Whether the leading ``N: `` numbers of a file's head (in line order, null where a line has none) are
    ranks (``srun --label``) rather than positions (Darknet's iteration ``N:``). A few ranks print many lines
    each: ranks when the head's numbers take at most half as many values as the lines that open with one (each
    value repeats on average). A number that grows line by line never repeats: a position, left in the
    message. A head with no such number says nothing: ranks, as the named rule reads them."""
    said = numbers.drop_nulls().head(LEARN_LINES)
    if said.len() == 0:
        return True
    return 2 * said.n_unique() <= said.len()


def _without_srun(envelope: str) -> str:
    """``envelope`` whose ``N: `` rank alternative matches nothing (its group kept)."""
    return envelope.replace(f"|{_SRUN}", f"|{_never(_SRUN)}")


def learn_names(lines: pl.DataFrame) -> tuple[str, ...]:
    """The names a file's head opens its lines with, a layout no rule names (pdsh's host column
    ``x1000c0s6b0n0: ``, a process manager's ``0|bash run  | ``): learnt when at least :data:`LEARN_SHARE` of
    its first :data:`LEARN_LINES` non-blank lines open with one of a few names that no named envelope reads,
    each name opening two lines or more (a message's own first word, different on each line, is no name).
    ``()`` when there is none."""
    line = pl.col("line")
    head = lines.filter(line.str.strip_chars() != "").head(LEARN_LINES)
    if head.height < INDENT_LINES:
        return ()
    name = line.str.extract(_NAME_COLUMN, 1)
    names = head.select(
        pl.when(~line.str.contains(_GATE) & (name.str.len_chars() <= _NAME_MAX_CHARS)).then(name).alias("name")
    ).get_column("name")
    said = names.drop_nulls()
    counts = said.value_counts()
    if said.len() < LEARN_SHARE * head.height or counts.get_column("count").min() < 2:  # type: ignore[operator]
        return ()
    distinct = counts.get_column("name")
    if not distinct.str.contains(_A_NAME).all() or distinct.str.contains(_NOT_A_NAME).any():
        return ()
    return tuple(sorted(distinct.to_list()))


def _without_names(lines: pl.DataFrame, names: tuple[str, ...]) -> pl.DataFrame:
    """``lines`` with ``_name`` (the learnt name a line opens with, else null) and ``line`` without it."""
    if not names:
        return lines.with_columns(pl.lit(None, dtype=pl.String).alias("_name"))
    any_name = "|".join(re.escape(n) for n in names)
    line = pl.col("line")
    column = line.str.extract(rf"^((?:{any_name})(?::| +\|) )", 1)
    return lines.with_columns(
        line.str.extract(rf"^({any_name})(?::| +\|) ", 1).alias("_name"),
        pl.when(column.is_not_null()).then(line.str.slice(column.str.len_chars())).otherwise(line).alias("line"),
    )


def split_envelopes(
    lines: pl.DataFrame, year: int | None, time_alone: bool = True, state: dict[str, object] | None = None
) -> tuple[pl.DataFrame, pl.DataFrame | None]:
    """``lines`` with envelopes stripped and :data:`~tierscope.collector.formats.base.TAG` and
    :data:`~tierscope.collector.formats.base.STAMP` columns, and the envelopes' facts.

    ``time_alone``: whether a time alone before the message (no level, no brackets) is an envelope; off
    for a file read with declared formats, whose patterns may capture it. ``state``: a file's parse state;
    the names its lines open with (:func:`learn_names`) are learnt from its first batch and kept there
    (without it, from ``lines``). A learnt name is the outermost layer: it tells the lines apart (their tag).
    Returns ``(lines, facts)``: ``lines`` keeps ``source_offset`` and ``line`` (now the bare
    message), adds ``tag`` (``"worker/2"``, a compose service, or null) and ``stamp`` (the
    envelope's timestamp, the one in ``facts``) and lacks the dropped duplicate copies;
    ``facts`` has :data:`ENVELOPE_SCHEMA` for the lines that had an envelope, or is None when
    none had (then ``lines`` is the input plus a null ``tag`` and ``stamp``).
    """
    lines = _without_common_indent(_without_terminal_codes(lines))
    if state is None:
        names = learn_names(lines)
    else:
        if _LEARNT not in state:
            state[_LEARNT] = learn_names(lines)
        names = state[_LEARNT]  # type: ignore[assignment]
    lines = _json_members(_without_names(lines, names))
    gated = lines.get_column("line").str.contains(_GATE) | lines.get_column("_json")
    if not gated.any() and not names:
        return lines.drop("_json", "_j_role", "_j_index", "_name").with_columns(
            pl.lit(None, dtype=pl.String).alias(TAG), pl.lit(None, dtype=ENVELOPE_SCHEMA["timestamp"]).alias(STAMP)
        ), None
    newer = bool(lines.filter(gated).get_column("line").str.contains(_NEWER_GATE).any())
    if time_alone:
        envelope = _ENVELOPE if newer else _ENVELOPE_OLDER
    else:
        envelope = _ENVELOPE_DECLARED if newer else _ENVELOPE_DECLARED_OLDER
    got = (
        lines.with_columns(gated.alias("_gated"))
        .with_columns(pl.when(pl.col("_gated")).then(pl.col("line").str.extract_groups(envelope)).alias("_p"))
        .unnest("_p")
        .with_columns(_body())
    )
    if got.get_column("sidx").is_not_null().any():
        if state is None:
            ranks = numbers_are_ranks(got.get_column("sidx"))
        else:
            if _LEARNT_RANKS not in state:
                state[_LEARNT_RANKS] = numbers_are_ranks(got.get_column("sidx"))
            ranks = bool(state[_LEARNT_RANKS])
        if not ranks:
            got = (
                lines.with_columns(gated.alias("_gated"))
                .with_columns(
                    pl.when(pl.col("_gated"))
                    .then(pl.col("line").str.extract_groups(_without_srun(envelope)))
                    .alias("_p")
                )
                .unnest("_p")
                .with_columns(_body())
            )
    got = got.with_columns(pl.lit(None, dtype=pl.String).alias(g) for g in _GROUPS if g not in got.columns)
    label = pl.coalesce("k_task", "t_task", "u_task", "pod")
    label_role, label_index = task_name_expr(label)
    bare_rank = pl.any_horizontal(
        pl.col(c).is_not_null() for c in ("bidx", "sidx", "midx", "kidx", "eidx", "ray_rank", "z_of")
    )
    role = pl.coalesce("brole", "rrole", "hrole", pl.when(bare_rank).then(pl.lit("worker")), label_role, "_j_role")
    index = pl.coalesce(
        pl.coalesce("bidx", "ridx", "hidx", "sidx", "midx", "kidx", "eidx", "ray_rank", "z_of").cast(
            pl.Int32, strict=False
        ),
        pl.when(pl.col("brole").is_null() & pl.col("rrole").is_null() & pl.col("hrole").is_null() & ~bare_rank).then(
            pl.coalesce(label_index, "_j_index")
        ),
    )
    # The console repeats the replica label after the message: it belongs to the envelope.
    body = _without_trailing_label(pl.col("body"), pl.col("k_task"))
    body = _without_ray_repeats(body) if newer else body
    severity = pl.coalesce(
        "b_sev",
        "d_sev",
        "g_sev",
        "x_sev",
        "p_sev",
        "f_sev",
        "q_sev",
        "hy_sev",
        "h_sev",
        "v_sev",
        "a_sev",
        "e_sev",
        "z_sev",
        "t_sev",
        "u_sev",
        "k_sev",
        "y_sev",
    )
    got = got.with_columns(
        role.alias("role"),
        index.alias("task_index"),
        _timestamp(year, newer).alias("timestamp"),
        severity.alias("severity"),
        _envelope_name().alias("envelope"),
        pl.coalesce(
            "g_md",
            "x_ts",
            "p_ts",
            "f_ts",
            "q_ts",
            "b_ts",
            "s_ts",
            "i_ts",
            "hy_ts",
            "l_ts",
            "d_md",
            "n_md",
            "h_ts",
            "v_ts",
            "a_ts",
            "e_md",
        )
        .is_not_null()
        .alias("_logged"),
        pl.coalesce(body, "line").alias("line"),
    ).with_columns(
        pl.coalesce(
            pl.format("{}/{}", "role", "task_index"),
            pl.format("{}/", "role"),
            "c_svc",
            # a Ray process is told apart by its actor and pid (it names no role)
            pl.when(pl.col("ray_pid").is_not_null()).then(
                pl.format("{} pid={}", pl.col("ray").fill_null("ray"), "ray_pid")
            ),
            pl.when(pl.col("j_pid").is_not_null()).then(pl.format("{}[{}]", "j_prog", "j_pid")),
            "_name",
        ).alias(TAG)
    )
    if got.get_column("_logged").any():
        got = _drop_plain_copies(got)
    facts = got.filter(pl.col("envelope").is_not_null()).select(list(ENVELOPE_SCHEMA))
    return got.select("source_offset", "line", TAG, pl.col("timestamp").alias(STAMP)), facts


def _json_members(lines: pl.DataFrame) -> pl.DataFrame:
    """``lines`` with each JSON member line (layer 0) read: ``line`` its message unquoted, ``_json``
    whether it was one, ``_j_role`` and ``_j_index`` the task it names."""
    line = pl.col("line")
    nothing = (
        pl.lit(False).alias("_json"),
        pl.lit(None, dtype=pl.String).alias("_j_role"),
        pl.lit(None, dtype=pl.Int32).alias("_j_index"),
    )
    # nearly every file: no line starts like a JSON member, and nothing more is read; the gate holds a quote, so a
    # batch without one (most logs: a search for one byte) is not searched with it (~40 ns a line)
    column = lines.get_column("line")
    if not column.str.contains('"', literal=True).any() or not column.str.contains(_JSON_GATE).any():
        return lines.with_columns(*nothing)
    message = line.str.extract(_JSON_MESSAGE, 1)
    task = line.str.extract(_JSON_TASK, 1)
    role, index = task_name_expr(task)
    got = lines.with_columns(_m=message, _t=task).with_columns(
        _j_role=role.cast(pl.String), _j_index=index.cast(pl.Int32)
    )
    got = got.with_columns(
        _json=pl.col("_m").is_not_null() | pl.col("_j_role").is_not_null(),
        line=pl.when(pl.col("_m").is_not_null())
        .then(pl.col("_m").map_elements(_unquoted, return_dtype=pl.String))
        .otherwise(line),
    )
    return got.drop("_m", "_t")


def _unquoted(text: str) -> str:
    """A JSON string's content without its escapes; as it stands where they are broken (a paste cut
    off after a backslash)."""
    try:
        return str(json.loads(f'"{text}"'))
    except json.JSONDecodeError:
        return text


def _without_terminal_codes(lines: pl.DataFrame) -> pl.DataFrame:
    """``lines`` without a terminal's colour and cursor codes and backspaces (:data:`ANSI`): the outermost layer
    of a log its logger coloured for a terminal (PaddleNLP's ``ESC[32m[2022-08-31 14:25:49,741] [    INFO]ESC[0m -
    loss: ...``), around the logger's own envelope, which is read only without it. They draw; they say nothing."""
    column = lines.get_column("line")
    # nearly every file: no escape or backspace at all, and nothing more is read
    if not column.str.contains(r"[\x1b\x08]").any():
        return lines
    return lines.with_columns(pl.col("line").str.replace_all(ANSI, ""))


#: The fewest non-blank lines a batch must have for an indentation they all share to be a paste's.
INDENT_LINES = 3


def _without_common_indent(lines: pl.DataFrame) -> pl.DataFrame:
    """``lines`` without the leading spaces every non-blank line of them has (a log pasted into a document
    as an indented block): the outermost layer, no rule names it, its column repeats on every line. A batch
    of fewer than :data:`INDENT_LINES` such lines is left alone (one indented line is the line's own)."""
    line = pl.col("line")
    # nearly every file: its first line is not indented, and nothing more is read
    head = lines.get_column("line").head(1)
    if lines.height < INDENT_LINES or not (head.str.starts_with(" ").any() or head.str.strip_chars().eq("").any()):
        return lines
    filled = lines.filter(line.str.strip_chars() != "")
    if filled.height < INDENT_LINES or not filled.get_column("line").str.starts_with(" ").all():
        return lines
    indent = int(filled.select(line.str.len_chars() - line.str.strip_chars_start(" ").str.len_chars()).min().item())
    return lines.with_columns(
        pl.when(line.str.strip_chars() != "").then(line.str.slice(indent)).otherwise(line).alias("line")
    )


def strip_envelopes(messages: pl.Series) -> pl.Series:
    """Each of ``messages`` without its envelopes (the bare message, same length and order)."""
    frame = numbered(messages)
    gated = frame.get_column("line").str.contains(_GATE)
    if not gated.any():
        return messages
    got = (
        frame.with_columns(pl.col("line").str.extract_groups(_ENVELOPE).alias("_p")).unnest("_p").with_columns(_body())
    )
    body = _without_ray_repeats(_without_trailing_label(pl.col("body"), pl.col("k_task")))
    return got.select(pl.when(gated).then(pl.coalesce(body, "line")).otherwise("line").alias(messages.name))[
        messages.name
    ]


def _drop_plain_copies(frame: pl.DataFrame) -> pl.DataFrame:
    """Drop a line without a logger time whose neighbour (same tag) has one and the same message."""
    norm = pl.col("line").str.replace(_PY_HEADER, "")

    def twin(shift: int) -> pl.Expr:
        return (
            (pl.col("_norm") == pl.col("_norm").shift(shift))
            & pl.col(TAG).eq_missing(pl.col(TAG).shift(shift))
            & pl.col("_logged").shift(shift)
            & ~pl.col("_logged")
        ).fill_null(False)

    return frame.with_columns(norm.alias("_norm")).filter(~(twin(1) | twin(-1))).drop("_norm")
