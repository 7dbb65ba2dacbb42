"""A fake Vertex AI JobService (REST API v1, CustomJobs only) that runs each job's replicas as local
processes and writes their output to a :class:`~tests.support.fake_logging_server.FakeLoggingServer`.

For tests that drive the real google-cloud-aiplatform client (``JobServiceClient``, REST transport)
through an endpoint override, and for users trying a sweep offline::

    with FakeLoggingServer(project="test-project") as logs, FakeVertexServer(logs, workdir=tmp) as vertex:
        vertex.refuse_quota("NVIDIA_TESLA_V100")     # a job asking for V100s is refused with 429
        vertex.burst(429); vertex.burst(503)          # the next two requests fail once each
        ... JobServiceClient(transport="rest", client_options={"api_endpoint": vertex.url}, ...) ...

    python -m tests.support.fake_vertex_server        # both servers, until Ctrl-C (docs/sweep-offline.md)

What it implements, in the shapes of https://cloud.google.com/vertex-ai/docs/reference/rest/v1/projects.locations.customJobs
(read 2026-12-06) and of the generated client's REST transport (google-cloud-aiplatform 2.7.0):

- ``POST /v1/projects/P/locations/R/customJobs`` (create), ``GET .../customJobs/ID`` (get),
  ``GET .../customJobs?filter=&pageSize=&pageToken=`` (list; the filter language of
  :func:`~tests.support.fake_logging_server.compile_filter` over ``labels.KEY``, ``displayName``/``display_name``
  and ``state``), ``POST .../customJobs/ID:cancel``. Answers use enum names, or numbers when the request
  says ``$alt=json;enum-encoding=int`` (as the generated client's does). Errors use Google's JSON error body.
- Checks on create, each a 400 ``INVALID_ARGUMENT`` in Vertex AI's "List of found errors" form
  (prefect-archive/prefect-gcp issue 175, 2023-04-24): a display name, at least one worker pool, pool 0 of one
  replica, every used pool with a machine type and a container image, accelerator type and count together
  (Vertex AI's own message), label keys and values as ``CustomJob.labels`` allows them.
- Quota: :meth:`refuse_quota` makes a job asking for a machine type or accelerator a 429 ``RESOURCE_EXHAUSTED``
  with Vertex AI's message, "The following quota metrics exceed quota limits: aiplatform.googleapis.com/METRIC"
  (GoogleCloudPlatform/stable-diffusion-on-gcp issue 12, 2023-12-03; google-deepmind/xmanager issue 29,
  2022-08-03). The metric is named as those messages name it (``custom_model_training_nvidia_l4_gpus``,
  ``custom_model_training_tpu_v2``, ``custom_model_training_c2_cpus``, ``custom_model_training_cpus`` for N1/E2:
  GoogleCloudPlatform/training-data-analyst issue 2457, 2023-10-15).
- A job's life, as "Understand the training service" describes it
  (https://cloud.google.com/vertex-ai/docs/training/understanding-training-service, read 2026-12-06):
  ``JOB_STATE_QUEUED`` for ``queued_s``, ``JOB_STATE_PENDING`` for ``pending_s`` (replicas start), then
  ``JOB_STATE_RUNNING`` once all run. The job succeeds when the primary replica (``workerpool0-0``) exits 0,
  and the other replicas are then shut down; it fails when a replica exits otherwise, with "The replica
  workerpool1-0 exited with a non-zero status of 1. Termination reason: Error."; a cancelled job goes
  through ``JOB_STATE_CANCELLING`` to ``JOB_STATE_CANCELLED`` with ``error.code`` 1 (the client's
  ``cancel_custom_job`` docstring). The final state is set once every replica's output is in the logs.
- Replicas: pool ``p`` replica ``i`` runs ``containerSpec.command`` + ``args``, or, without a command,
  the image's entry point from ``images`` (default: every image is ``trainer/Dockerfile``'s,
  ``python -m tierscope.trainer.task``), with ``containerSpec.env`` and the variables Vertex AI sets
  (https://cloud.google.com/vertex-ai/docs/training/distributed-training, read 2026-12-06):
  ``CLUSTER_SPEC`` (``{"cluster": {"workerpool0": [...], ...}, "environment": "cloud", "task": {"type":
  "workerpool1", "index": 0}}``) and ``TF_CONFIG`` (the same cluster under TensorFlow's names ``chief``,
  ``worker``, ``ps``, ``evaluator``), hosts ``localhost:PORT``; ``AIP_MODEL_DIR``, ``AIP_CHECKPOINT_DIR``,
  ``AIP_TENSORBOARD_LOG_DIR`` under ``baseOutputDirectory`` when the job has one
  (https://cloud.google.com/vertex-ai/docs/training/code-requirements, read 2026-12-06). Each replica's
  stdout and stderr are kept in ``workdir/JOB_ID/workerpool0-0.log`` and ``.../stderr/workerpool0-0.txt``.
- Logs, as Vertex AI writes a custom job's: resource ``ml_job`` with labels ``job_id`` (the job's number),
  ``task_name`` (``workerpool0-0``) and ``project_id``; log name ``projects/P/logs/workerpool0-0``. A stdout
  line that is a JSON object becomes ``jsonPayload`` with Cloud Logging's special fields taken out
  (``severity``, ``logging.googleapis.com/labels`` -> ``labels``, ``.../sourceLocation``, ``.../trace``,
  ``.../spanId``, ``.../trace_sampled``, ``.../insertId``:
  https://cloud.google.com/logging/docs/structured-logging, read 2026-12-06); any other line becomes
  ``jsonPayload.message`` with ``attrs.tag`` the task name (the layout of /work/shared/cases case04,
  tensorflow/tfx issue 5141). Every stdout entry is also copied once at severity ``ERROR`` (as
  :func:`~tests.support.fake_logging_server.error_copy` does; the collector keeps one); stderr lines are
  ``ERROR`` entries (GoogleCloudPlatform/vertex-ai-samples issue 242, 2022-01-26, and case16).

Faults (thread-safe): :meth:`burst` (the next ``count`` requests answer ``status``), ``denied_projects``
(403). Records: ``requests`` (every :class:`VertexRequest`), ``jobs`` (the served CustomJob dicts by id).
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import itertools
import json
import os
import re
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from tests.support.fake_google_api import ApiError, LocalJsonServer, error_body
from tests.support.fake_logging_server import FakeLoggingServer, FilterError, compile_filter, parse_time, rfc3339
from tierscope.trainer.launch import Task, free_ports, start_task, stop_tasks

#: The entry point of every image unless ``images`` says otherwise: trainer/Dockerfile's.
TRAINER_ENTRYPOINT = (sys.executable, "-m", "tierscope.trainer.task")
#: Worker pool index -> TensorFlow role (the distributed-training page's order).
POOL_ROLES = ("chief", "worker", "ps", "evaluator")
#: ``google.cloud.aiplatform.v1.JobState`` numbers (job_state.proto).
JOB_STATES = (
    "JOB_STATE_UNSPECIFIED",
    "JOB_STATE_QUEUED",
    "JOB_STATE_PENDING",
    "JOB_STATE_RUNNING",
    "JOB_STATE_SUCCEEDED",
    "JOB_STATE_FAILED",
    "JOB_STATE_CANCELLING",
    "JOB_STATE_CANCELLED",
    "JOB_STATE_PAUSED",
    "JOB_STATE_EXPIRED",
    "JOB_STATE_UPDATING",
    "JOB_STATE_PARTIALLY_SUCCEEDED",
)
FINAL = frozenset({"JOB_STATE_SUCCEEDED", "JOB_STATE_FAILED", "JOB_STATE_CANCELLED"})
#: ``CustomJob.labels``: keys and values of lowercase letters, digits, ``_`` and ``-``, at most 64 long.
_LABEL = re.compile(r"^[a-z0-9_-]{0,64}$")
#: Special fields of a structured log line and the LogEntry field each becomes (None: dropped).
SPECIAL_FIELDS = {
    "severity": "severity",
    "logging.googleapis.com/labels": "labels",
    "logging.googleapis.com/sourceLocation": "sourceLocation",
    "logging.googleapis.com/trace": "trace",
    "logging.googleapis.com/spanId": "spanId",
    "logging.googleapis.com/trace_sampled": "traceSampled",
    "logging.googleapis.com/insertId": "insertId",
}
_ROUTE = re.compile(
    r"^/v1/projects/(?P<project>[^/]+)/locations/(?P<region>[^/]+)/customJobs(?:/(?P<id>[^/:]+))?(?::(?P<verb>\w+))?$"
)
#: Google's wording of a per-minute request limit (GoogleCloudPlatform/python-docs-samples issue 3482, 2020-04-23,
#: for Cloud KMS); the metric and limit names here are illustrative.
RATE_LIMIT_MESSAGE = (
    "Quota exceeded for quota metric 'Resource management (CRUD) requests' and limit 'Resource management (CRUD) "
    "requests per minute per region' of service 'aiplatform.googleapis.com' for consumer 'project_number:{number}'."
)
#: Vertex AI's refusal of a resource quota, at create (HTTP 429) or when the job would start (a FAILED job, code 8:
#: GoogleCloudPlatform/vertex-ai-samples issue 700, 2022-06-30).
#: A 503 UNAVAILABLE's message (illustrative words).
UNAVAILABLE_MESSAGE = "The service is currently unavailable."
#: A cancelled job's ``error.message`` (the code, 1, is the API's; these words are ours).
CANCELLED_MESSAGE = "The job was cancelled."
QUOTA_MESSAGE = "The following quota metrics exceed quota limits: aiplatform.googleapis.com/{metric}"


@dataclass
class VertexRequest:
    """One request as received (``method``, ``path``, ``params``) and the ``status`` answered."""

    number: int
    method: str
    path: str
    params: dict[str, str]
    status: int = 200


@dataclass
class _Job:
    id: str
    doc: dict[str, Any]
    cancel: threading.Event = field(default_factory=threading.Event)
    tasks: list[Task] = field(default_factory=list)
    thread: threading.Thread | None = None
    #: The quota message the job fails with instead of starting.
    refused: str | None = None


def quota_metric(resource: str) -> str:
    """The quota metric a machine type or accelerator counts against, as Vertex AI's refusals name it:
    ``NVIDIA_TESLA_V100`` -> ``custom_model_training_nvidia_v100_gpus``, ``TPU_V2`` -> ``custom_model_training_tpu_v2``,
    ``c2-standard-4`` -> ``custom_model_training_c2_cpus``, ``n1-standard-4`` -> ``custom_model_training_cpus``."""
    name = resource.lower()
    if name.startswith("tpu_"):
        return f"custom_model_training_{name}"
    if name.startswith("nvidia_"):
        return f"custom_model_training_{name.replace('_tesla', '')}_gpus"
    family = name.split("-", 1)[0]
    return "custom_model_training_cpus" if family in ("n1", "e2") else f"custom_model_training_{family}_cpus"


def _now() -> str:
    return rfc3339(datetime.now(UTC))


def _enum_name(value: Any, names: Sequence[str] | None = None) -> Any:
    """An enum as the request sent it (a name, or its number under ``enum-encoding=int``) as its name."""
    if isinstance(value, int) and names is not None and 0 <= value < len(names):
        return names[value]
    if isinstance(value, int):
        try:
            from google.cloud.aiplatform_v1.types import AcceleratorType

            return AcceleratorType(value).name
        except (ImportError, ValueError):
            return value
    return value


class FakeVertexServer(LocalJsonServer):
    """See the module docstring. ``logging``: where replicas' output goes (None: nowhere); ``workdir``: where
    their output files go (default: a new temporary directory); ``port``: 0 for any free one."""

    thread_name = "fake-vertex"

    def __init__(
        self,
        logging: FakeLoggingServer | None = None,
        project: str = "test-project",
        region: str = "us-central1",
        *,
        workdir: Path | None = None,
        queued_s: float = 0.3,
        pending_s: float = 0.3,
        images: Mapping[str, Sequence[str]] | None = None,
        denied_projects: Iterable[str] = (),
        error_copies: bool = True,
        grace_s: float = 5.0,
        port: int = 0,
    ) -> None:
        super().__init__()
        self.logging = logging
        self.project = project
        self.region = region
        self.workdir = Path(workdir) if workdir is not None else Path(tempfile.mkdtemp(prefix="fake-vertex-"))
        self.queued_s = queued_s
        self.pending_s = pending_s
        self.images = dict(images or {})
        self.denied_projects = set(denied_projects)
        self.error_copies = error_copies
        self.grace_s = grace_s
        self.port = port
        self.requests: list[VertexRequest] = []
        self.jobs: dict[str, _Job] = {}
        self.quota: dict[str, tuple[str, str]] = {}  # resource -> (metric, "create" or "start")
        self._bursts: list[list[int]] = []  # [status, remaining]
        self._project_number = int(hashlib.sha256(project.encode()).hexdigest()[:8], 16)
        self._ids = itertools.count(self._project_number * 1_000_000_000)
        self._lock = threading.RLock()

    # -- set-up and faults -----------------------------------------------------------------------

    def refuse_quota(self, resource: str, metric: str | None = None, *, at: str = "create") -> None:
        """Refuse, with Vertex AI's quota message, any job whose pools ask for ``resource`` (a machine type
        such as ``a2-highgpu-1g`` or an accelerator such as ``NVIDIA_TESLA_V100``): ``at="create"`` answers the
        create with 429 ``RESOURCE_EXHAUSTED``; ``at="start"`` accepts the job, which then fails instead of
        starting (``error.code`` 8)."""
        if at not in ("create", "start"):
            raise ValueError(f"at must be 'create' or 'start', not {at!r}")
        with self._lock:
            self.quota[resource] = (metric or quota_metric(resource), at)

    def burst(self, status: int, count: int = 1) -> None:
        """The next ``count`` requests answer ``status``: 429 with Google's per-minute request limit message
        (:data:`RATE_LIMIT_MESSAGE`), 503 UNAVAILABLE, ..."""
        with self._lock:
            self._bursts.append([status, count])

    @property
    def statuses(self) -> list[int]:
        return [r.status for r in self.requests]

    # -- lifecycle --------------------------------------------------------------------------------

    def stop(self) -> None:
        """Stop serving and stop every replica still running (their jobs end CANCELLED)."""
        super().stop()
        for job in list(self.jobs.values()):
            job.cancel.set()
        for job in list(self.jobs.values()):
            if job.thread is not None:
                job.thread.join(timeout=self.grace_s + 10)

    def wait(self, job_id: str, timeout: float = 120.0) -> dict[str, Any]:
        """Block until job ``job_id`` (its number or resource name) ends; its CustomJob dict."""
        job = self.jobs[job_id.rsplit("/", 1)[-1]]
        if job.thread is not None:
            job.thread.join(timeout)
        with self._lock:
            if job.doc["state"] not in FINAL:
                raise TimeoutError(f"job {job.id} still {job.doc['state']} after {timeout:g} s")
            return copy.deepcopy(job.doc)

    # -- the API ----------------------------------------------------------------------------------

    def answer(self, method: str, target: str, body: bytes) -> tuple[int, dict[str, Any]]:
        parts = urlsplit(target)
        params = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        with self._lock:
            record = VertexRequest(len(self.requests) + 1, method, unquote(parts.path), params)
            self.requests.append(record)
        try:
            status, payload = 200, self._route(method, record.path, params, body)
            if params.get("$alt", "").endswith("enum-encoding=int"):
                payload = _states_as_numbers(payload)
            self.pages_served += 1
        except ApiError as exc:
            status, payload = exc.status, error_body(exc.status, exc.message)
        record.status = status
        return status, payload

    def _route(self, method: str, path: str, params: dict[str, str], body: bytes) -> dict[str, Any]:
        with self._lock:
            for burst in self._bursts:
                if burst[1] > 0:
                    burst[1] -= 1
                    if burst[0] == 429:
                        raise ApiError(429, RATE_LIMIT_MESSAGE.format(number=self._project_number))
                    if burst[0] == 503:
                        raise ApiError(503, UNAVAILABLE_MESSAGE)
                    raise ApiError(burst[0], f"injected fault ({burst[1]} more to come)")
        found = _ROUTE.match(path)
        if found is None:
            raise ApiError(404, f"no such method {method} {path}")
        project, region, job_id, verb = found["project"], found["region"], found["id"], found["verb"]
        if project in self.denied_projects:
            raise ApiError(
                403,
                f"Permission denied on resource '//aiplatform.googleapis.com/projects/{project}/locations/{region}' "
                "(or it may not exist).",
            )
        if (project, region) != (self.project, self.region):
            raise ApiError(404, f"Location projects/{project}/locations/{region} is not served here")
        if method == "POST" and job_id is None and verb is None:
            try:
                request = json.loads(body or b"{}")
            except json.JSONDecodeError:
                raise ApiError(400, "request body is not JSON") from None
            return self._create(request)
        if method == "GET" and job_id is None:
            return self._list(params)
        if job_id is not None and job_id not in self.jobs:
            raise ApiError(
                404, f"The CustomJob does not exist: projects/{project}/locations/{region}/customJobs/{job_id}"
            )
        if method == "GET" and job_id is not None and verb is None:
            with self._lock:
                return copy.deepcopy(self.jobs[job_id].doc)
        if method == "POST" and job_id is not None and verb == "cancel":
            return self._cancel(self.jobs[job_id])
        raise ApiError(404, f"no such method {method} {path}")

    def _create(self, request: dict[str, Any]) -> dict[str, Any]:
        job = _normalised(request)
        errors = _check(job)
        if errors:
            listed = "".join(f"{i}.Field: {name}; Message: {message}\t" for i, (name, message) in enumerate(errors, 1))
            raise ApiError(400, f"List of found errors:\t{listed}")
        with self._lock:
            refused = self._refused(job)
            if refused is not None and refused[1] == "create":
                raise ApiError(429, QUOTA_MESSAGE.format(metric=refused[0]))
            number = str(next(self._ids))
            now = _now()
            doc = {
                **{k: v for k, v in job.items() if k in ("displayName", "jobSpec", "labels", "encryptionSpec")},
                "name": f"projects/{self.project}/locations/{self.region}/customJobs/{number}",
                "state": "JOB_STATE_QUEUED",
                "createTime": now,
                "updateTime": now,
            }
            entry = _Job(number, doc, refused=None if refused is None else QUOTA_MESSAGE.format(metric=refused[0]))
            self.jobs[number] = entry
            entry.thread = threading.Thread(
                target=self._run, args=(entry,), name=f"fake-vertex-job-{number}", daemon=True
            )
            entry.thread.start()
            return copy.deepcopy(doc)

    def _refused(self, job: dict[str, Any]) -> tuple[str, str] | None:
        for spec in job["jobSpec"]["workerPoolSpecs"]:
            machine = (spec or {}).get("machineSpec") or {}
            for resource in (machine.get("acceleratorType"), machine.get("machineType")):
                if resource in self.quota:
                    return self.quota[resource]
        return None

    def _list(self, params: dict[str, str]) -> dict[str, Any]:
        try:
            predicate = compile_filter(params.get("filter") or "")
        except FilterError as exc:
            raise ApiError(400, f"Invalid filter: {exc}") from None
        try:
            size = int(params.get("pageSize") or 100)
            offset = int(params.get("pageToken") or 0)
        except ValueError:
            raise ApiError(400, "pageSize and pageToken must be numbers here") from None
        with self._lock:
            docs = [copy.deepcopy(j.doc) for j in self.jobs.values()]
        matching = [
            d for d in docs if predicate({**d, "display_name": d.get("displayName")}, parse_time(d["createTime"]))
        ]
        page = matching[offset : offset + size]
        answer: dict[str, Any] = {"customJobs": page} if page else {}
        if offset + size < len(matching):
            answer["nextPageToken"] = str(offset + size)
        return answer

    def _cancel(self, job: _Job) -> dict[str, Any]:
        with self._lock:
            if job.doc["state"] in FINAL:
                raise ApiError(400, f"Cannot cancel job {job.doc['name']} in state {job.doc['state']}.")
            job.cancel.set()
        return {}

    # -- running a job ----------------------------------------------------------------------------

    def _set(self, job: _Job, state: str, **fields: Any) -> None:
        with self._lock:
            now = _now()
            job.doc.update(state=state, updateTime=now, **fields)

    def _sleep(self, job: _Job, seconds: float) -> bool:
        """Wait ``seconds``; True when the job was cancelled meanwhile."""
        return job.cancel.wait(seconds)

    def _run(self, job: _Job) -> None:
        out = self.workdir / job.id
        tail = _Tail(self, job, out)
        try:
            if self._sleep(job, self.queued_s):
                return self._cancelled(job)
            if job.refused is not None:
                return self._set(job, "JOB_STATE_FAILED", endTime=_now(), error={"code": 8, "message": job.refused})
            self._set(job, "JOB_STATE_PENDING")
            if self._sleep(job, self.pending_s):
                return self._cancelled(job)
            try:
                job.tasks = self._start_replicas(job, out)
            except OSError as exc:
                return self._set(job, "JOB_STATE_FAILED", endTime=_now(), error={"code": 3, "message": str(exc)})
            self._set(job, "JOB_STATE_RUNNING", startTime=_now())
            outcome = self._watch(job, tail)
            stop_tasks(job.tasks, self.grace_s)
            tail.drain()
            if outcome is None:
                return self._cancelled(job)
            state, error = outcome
            self._set(job, state, endTime=_now(), **({"error": error} if error else {}))
        finally:
            stop_tasks(job.tasks, self.grace_s)

    def _cancelled(self, job: _Job) -> None:
        if job.doc["state"] != "JOB_STATE_CANCELLING":
            self._set(job, "JOB_STATE_CANCELLING")
        stop_tasks(job.tasks, self.grace_s)
        self._set(job, "JOB_STATE_CANCELLED", endTime=_now(), error={"code": 1, "message": CANCELLED_MESSAGE})

    def _watch(self, job: _Job, tail: _Tail) -> tuple[str, dict[str, Any] | None] | None:
        """Until the job ends: (state, error) or None when cancelled."""
        primary = job.tasks[0]
        while True:
            tail.poll()
            if job.cancel.is_set():
                self._set(job, "JOB_STATE_CANCELLING")
                return None
            failed = [t for t in job.tasks if t.poll() not in (None, 0)]
            if failed:
                task = failed[0]
                code = task.exit_code or 0
                how = f"{code}" if code > 0 else f"{128 - code}"  # a signal as a container reports it
                message = (
                    f"The replica {task.role}-{task.index} exited with a non-zero status of {how}. "
                    "Termination reason: Error."
                )
                return "JOB_STATE_FAILED", {"code": 3, "message": message}
            if primary.poll() == 0:
                return "JOB_STATE_SUCCEEDED", None
            time.sleep(0.1)

    def _start_replicas(self, job: _Job, out: Path) -> list[Task]:
        pools = job.doc["jobSpec"]["workerPoolSpecs"]
        counts = [int(p.get("replicaCount") or 0) if p else 0 for p in pools]
        ports = iter(free_ports(sum(counts)))
        cluster = {f"workerpool{p}": [f"localhost:{next(ports)}" for _ in range(n)] for p, n in enumerate(counts) if n}
        tf_cluster = {POOL_ROLES[int(name[-1])]: hosts for name, hosts in cluster.items()}
        base = (job.doc["jobSpec"].get("baseOutputDirectory") or {}).get("outputUriPrefix")
        tasks = []
        for p, n in enumerate(counts):
            container = (pools[p].get("containerSpec") or {}) if n else {}
            command = [
                *(container.get("command") or self.images.get(container.get("imageUri", ""), TRAINER_ENTRYPOINT))
            ]
            command += [str(a) for a in container.get("args") or []]
            for i in range(n):
                env = {k: v for k, v in os.environ.items() if k not in ("TF_CONFIG", "CLUSTER_SPEC")}
                env.update({e["name"]: e.get("value", "") for e in container.get("env") or []})
                task = {"type": f"workerpool{p}", "index": i}
                env["CLUSTER_SPEC"] = json.dumps({"cluster": cluster, "environment": "cloud", "task": task})
                env["TF_CONFIG"] = json.dumps(
                    {"cluster": tf_cluster, "environment": "cloud", "task": {"type": POOL_ROLES[p], "index": i}}
                )
                if base:
                    prefix = base.rstrip("/")
                    env |= {
                        "AIP_MODEL_DIR": f"{prefix}/model/",
                        "AIP_CHECKPOINT_DIR": f"{prefix}/checkpoints/",
                        "AIP_TENSORBOARD_LOG_DIR": f"{prefix}/logs/",
                    }
                env["PYTHONUNBUFFERED"] = "1"
                tasks.append(start_task(f"workerpool{p}", i, command, env, out, ".log"))
        return tasks


class _Tail:
    """Ships each replica's new complete lines (stdout ``out/TASK.log``, stderr ``out/stderr/TASK.txt``) to the
    logging server as Vertex AI's log entries."""

    def __init__(self, server: FakeVertexServer, job: _Job, out: Path) -> None:
        self.server = server
        self.job = job
        self.out = out
        self.offsets: dict[Path, int] = {}
        self.serial = itertools.count()

    def poll(self, final: bool = False) -> None:
        for task in self.job.tasks:
            name = f"{task.role}-{task.index}"
            for path, stream in ((task.log_path, "stdout"), (task.stderr_path, "stderr")):
                lines = self._new_lines(path, final)
                if lines and self.server.logging is not None:
                    self.server.logging.add_entries(
                        entry for line in lines for entry in self._entries(name, stream, line)
                    )

    def drain(self) -> None:
        self.poll(final=True)

    def _new_lines(self, path: Path, final: bool) -> list[str]:
        try:
            with open(path, "rb") as f:
                f.seek(self.offsets.get(path, 0))
                data = f.read()
        except FileNotFoundError:
            return []
        end = len(data) if final else data.rfind(b"\n") + 1
        self.offsets[path] = self.offsets.get(path, 0) + end
        return [line for line in data[:end].decode("utf-8", errors="replace").splitlines() if line.strip()]

    def _entries(self, task_name: str, stream: str, line: str) -> list[dict[str, Any]]:
        project = self.server.project
        serial = next(self.serial)
        entry: dict[str, Any] = {
            "insertId": hashlib.sha1(f"{self.job.id}/{task_name}/{stream}/{serial}".encode()).hexdigest()[:16],
            "logName": f"projects/{project}/logs/{task_name}",
            "resource": {
                "type": "ml_job",
                "labels": {"job_id": self.job.id, "task_name": task_name, "project_id": project},
            },
            "timestamp": _now(),
            "severity": "INFO" if stream == "stdout" else "ERROR",
        }
        entry["receiveTimestamp"] = entry["timestamp"]
        try:
            payload = json.loads(line)
        except json.JSONDecodeError:
            payload = None
        if isinstance(payload, dict):
            for key, target in SPECIAL_FIELDS.items():
                if key in payload:
                    entry[target] = payload.pop(key)
            entry["jsonPayload"] = payload
        else:
            entry["jsonPayload"] = {"message": line, "attrs": {"tag": task_name}}
        entries = [entry]
        if stream == "stdout" and self.server.error_copies:
            twin = copy.deepcopy(entry)
            twin["severity"] = "ERROR"
            twin["insertId"] = hashlib.sha1(f"error-copy/{entry['insertId']}".encode()).hexdigest()[:16]
            entries.append(twin)
        return entries


def _normalised(request: dict[str, Any]) -> dict[str, Any]:
    """The job as sent, with enum numbers made names and int64 counts (sent as strings) made strings alike."""
    job = copy.deepcopy(request)
    for pool in (job.get("jobSpec") or {}).get("workerPoolSpecs") or []:
        machine = (pool or {}).get("machineSpec")
        if machine and "acceleratorType" in machine:
            machine["acceleratorType"] = _enum_name(machine["acceleratorType"])
        if pool and "replicaCount" in pool:
            pool["replicaCount"] = str(pool["replicaCount"])
    return job


def _check(job: dict[str, Any]) -> list[tuple[str, str]]:
    errors: list[tuple[str, str]] = []
    if not job.get("displayName"):
        errors.append(("display_name", "Required field is not set."))
    pools = (job.get("jobSpec") or {}).get("workerPoolSpecs") or []
    if not pools or not pools[0]:
        errors.append(("job_spec.worker_pool_specs", "The first worker pool must be specified."))
    for p, pool in enumerate(pools):
        if not pool:
            continue  # an empty placeholder pool
        where = f"job_spec.worker_pool_specs[{p}]"
        try:
            replicas = int(pool.get("replicaCount") or 0)
        except (TypeError, ValueError):
            errors.append((f"{where}.replica_count", f"Invalid value {pool.get('replicaCount')!r}."))
            continue
        if p == 0 and replicas != 1:
            errors.append((f"{where}.replica_count", "The primary worker pool must have exactly one replica."))
        machine = pool.get("machineSpec") or {}
        if not machine.get("machineType"):
            errors.append((f"{where}.machine_spec.machine_type", "Required field is not set."))
        if bool(machine.get("acceleratorType")) != bool(machine.get("acceleratorCount")):
            errors.append(
                (
                    f"{where}.machine_spec.accelerator_type",
                    "Both `accelerator_type` and `accelerator_count` should be specified or none.",
                )
            )
        if not (pool.get("containerSpec") or {}).get("imageUri"):
            errors.append((f"{where}.container_spec.image_uri", "Required field is not set."))
    for key, value in (job.get("labels") or {}).items():
        if not key or not _LABEL.match(key) or not _LABEL.match(str(value)):
            errors.append(
                (
                    "labels",
                    f"Label {key}={value} is invalid: keys and values may hold lowercase letters, digits, _ and -.",
                )
            )
    return errors


def _states_as_numbers(payload: dict[str, Any]) -> dict[str, Any]:
    def fix(doc: dict[str, Any]) -> dict[str, Any]:
        if doc.get("state") in JOB_STATES:
            doc = {**doc, "state": JOB_STATES.index(doc["state"])}
        return doc

    if "customJobs" in payload:
        return {**payload, "customJobs": [fix(d) for d in payload["customJobs"]]}
    return fix(payload)


# --- one command for a user: both servers ---------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m tests.support.fake_vertex_server``: a Vertex AI JobService and a Cloud Logging server
    on 127.0.0.1 until Ctrl-C; prints the settings that point tierscope at them."""
    p = argparse.ArgumentParser(prog="python -m tests.support.fake_vertex_server", description=main.__doc__)
    p.add_argument("--project", default="test-project")
    p.add_argument("--region", default="us-central1")
    p.add_argument("--vertex-port", type=int, default=8780)
    p.add_argument("--logging-port", type=int, default=8781)
    p.add_argument("--workdir", type=Path, default=None, help="replicas' output files (default: a temporary directory)")
    p.add_argument("--refuse-quota", action="append", default=[], metavar="RESOURCE",
                   help="refuse jobs asking for this machine type or accelerator (repeatable)")  # fmt: skip
    args = p.parse_args(argv)
    logs = FakeLoggingServer(project=args.project)
    logs.port = args.logging_port
    vertex = FakeVertexServer(
        logs, args.project, args.region, workdir=args.workdir, port=args.vertex_port, queued_s=2.0, pending_s=2.0
    )
    for resource in args.refuse_quota:
        vertex.refuse_quota(resource)
    signal.signal(signal.SIGTERM, _interrupt)  # `kill` stops both as Ctrl-C does
    with logs, vertex:
        print(f"Vertex AI JobService: {vertex.url}  (project {args.project}, region {args.region})")
        print(f"Cloud Logging:        {logs.url}")
        print(f"replicas' output:     {vertex.workdir}")
        print("point tierscope at them:")
        print(f"  export TIERSCOPE_VERTEX_ENDPOINT={vertex.url} TIERSCOPE_LOGGING_ENDPOINT={logs.url}")
        print(f"  export GOOGLE_CLOUD_PROJECT={args.project}")
        print("Ctrl-C stops both.", flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            print("stopping", file=sys.stderr)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


if __name__ == "__main__":
    main()


__all__ = ["FakeVertexServer", "VertexRequest", "quota_metric"]
