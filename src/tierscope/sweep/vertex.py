"""The sweep's launcher on Vertex AI: each configuration a ``CustomJob``, through google-cloud-aiplatform.

:class:`VertexLauncher` implements :class:`tierscope.sweep.launchers.Launcher` with the v1 ``JobServiceClient``
(``google.cloud.aiplatform_v1``: the generated client alone, not the high-level SDK) over its REST transport,
so the same code path talks to Vertex AI and to a local server (``api_endpoint``, anonymous credentials).

- Jobs are found by their labels (:func:`tierscope.sweep.launchers.labels`) with the list filter
  ``labels.KEY="VALUE"``, which ``ListCustomJobsRequest.filter`` documents ("``labels.keyA=valueA``").
- A refusal the user must act on (a quota, an invalid spec, an accelerator the region lacks) is
  :class:`~tierscope.sweep.launchers.SubmitRefused` carrying the API's message: HTTP 400 (``INVALID_ARGUMENT``,
  ``FAILED_PRECONDITION``) and the 429 whose message names a resource quota. Vertex AI answers a quota
  it cannot grant with 429 ``RESOURCE_EXHAUSTED`` "The following quota metrics exceed quota limits:
  aiplatform.googleapis.com/custom_model_training_nvidia_l4_gpus" (GoogleCloudPlatform/stable-diffusion-on-gcp
  issue 12, 2023-12-03; google-deepmind/xmanager issue 29, 2022-08-03), the same status as its rate limit on
  requests, so the message tells the two apart.
- Other 429s, 503s and answers lost on the way are retried with google-api-core's exponential back-off.
  A ``create`` is not idempotent (the API takes no request id): before sending it again, the launcher
  looks for the job by its labels, since the first attempt may have created it before its answer was lost.
- Job states (``google.cloud.aiplatform.v1.JobState``) map to :data:`tierscope.sweep.launchers.JobStateName`
  by :data:`STATES`; a failed job's reason is ``CustomJob.error.message``.

The client is an optional extra (``pip install 'tierscope[vertex]'``), imported when a launcher is made.
"""

from __future__ import annotations

import importlib
import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta
from typing import TYPE_CHECKING, Any, TypeVar

from tierscope.collector.sources.cloud_logging import DEFAULT_REQUESTS_PER_MINUTE, NO_CREDENTIALS_HELP
from tierscope.sweep.errors import SweepError
from tierscope.sweep.launchers import (
    CONFIG_LABEL,
    SWEEP_LABEL,
    JobState,
    JobStateName,
    SubmitRefused,
    labels,
)

INSTALL_HINT = "pip install 'tierscope[vertex]'"
#: Points the launcher at another server (a local one: ``python -m tests.support.fake_vertex_server``).
ENDPOINT_ENV = "TIERSCOPE_VERTEX_ENDPOINT"

#: Vertex AI job state -> the sweep's. A job being cancelled is still running until it ends; a paused
#: one waits like a queued one; an expired one never ran to its end.
STATES: dict[str, JobStateName] = {
    "JOB_STATE_UNSPECIFIED": "queued",
    "JOB_STATE_QUEUED": "queued",
    "JOB_STATE_PENDING": "provisioning",
    "JOB_STATE_RUNNING": "running",
    "JOB_STATE_SUCCEEDED": "succeeded",
    "JOB_STATE_FAILED": "failed",
    "JOB_STATE_CANCELLING": "running",
    "JOB_STATE_CANCELLED": "cancelled",
    "JOB_STATE_PAUSED": "queued",
    "JOB_STATE_EXPIRED": "failed",
    "JOB_STATE_UPDATING": "running",
    "JOB_STATE_PARTIALLY_SUCCEEDED": "failed",
}

#: A 429 whose message says a resource quota cannot be granted (Vertex AI's own wording, and legacy AI
#: Platform's "Quota failure for project P. The request for 2 K80 accelerators exceeds the allowed maximum
#: of ...", GoogleCloudPlatform/training-data-analyst issue 2284, 2023-04-01): waiting seconds will not help.
_QUOTA_REFUSAL = re.compile(r"exceed quota limits|exceeds the allowed maximum|Quota failure", re.IGNORECASE)

#: Back-off on 429 and 503: the first wait up to 1 s, doubling up to 30 s, giving up after 5 minutes.
RETRY_INITIAL_S = 1.0
RETRY_MAXIMUM_S = 30.0
RETRY_DEADLINE_S = 300.0
#: Seconds one request may take.
REQUEST_TIMEOUT_S = 60.0

T = TypeVar("T")

if TYPE_CHECKING:
    from tierscope.collector.manifest import RunSpec
    from tierscope.collector.sources.cloud_logging import RetryPolicy
    from tierscope.dataset.store import Dataset


def is_quota_refusal(exc: BaseException) -> bool:
    """Whether ``exc`` (a 429) refuses a resource quota rather than limiting the request rate."""
    return _QUOTA_REFUSAL.search(getattr(exc, "message", None) or str(exc)) is not None


def is_transient(exc: BaseException) -> bool:
    """Worth sending the same request again: a 503, a 429 that limits the request rate, or an answer lost on
    the way (a connection reset, a body cut short)."""
    import http.client

    import requests
    from google.api_core import exceptions as gexc

    lost = (requests.ConnectionError, requests.Timeout, requests.exceptions.ChunkedEncodingError)
    if isinstance(exc, (gexc.ServiceUnavailable, http.client.IncompleteRead, *lost)):
        return True
    return isinstance(exc, gexc.TooManyRequests) and not is_quota_refusal(exc)


def default_retry() -> Any:
    """google-api-core's exponential back-off with jitter on :func:`is_transient` errors."""
    from google.api_core.retry import Retry

    return Retry(
        predicate=is_transient,
        initial=RETRY_INITIAL_S,
        maximum=RETRY_MAXIMUM_S,
        multiplier=2.0,
        timeout=RETRY_DEADLINE_S,
    )


def _aiplatform() -> Any:
    try:
        return importlib.import_module("google.cloud.aiplatform_v1")
    except ImportError:
        raise SweepError(
            f"running a sweep on Vertex AI needs the google-cloud-aiplatform client: {INSTALL_HINT}"
        ) from None


def label_filter(sweep_id: str, configuration: str) -> str:
    """The list filter that finds the jobs of ``configuration`` in ``sweep_id``."""
    wanted = labels(sweep_id, configuration)
    return f'labels.{SWEEP_LABEL}="{wanted[SWEEP_LABEL]}" AND labels.{CONFIG_LABEL}="{wanted[CONFIG_LABEL]}"'


def _time(value: Any) -> datetime | None:
    """A proto timestamp as proto-plus gives it (a datetime with nanoseconds, or None when unset) as a plain
    UTC datetime, to the microsecond."""
    if not isinstance(value, datetime) or value.timestamp() <= 0:
        return None
    utc = value.astimezone(UTC)
    return datetime(*utc.timetuple()[:6], utc.microsecond, tzinfo=UTC)


def api_message(exc: Any) -> str:
    """The API's own message in an error from the REST transport, on one line: the ``message`` of Google's
    JSON error body, without the ``POST https://...: `` google-api-core puts before it."""
    response = getattr(exc, "response", None)
    try:
        message = response.json()["error"]["message"]  # type: ignore[union-attr]
    except Exception:  # not a JSON error body: the exception's own text
        message = re.sub(r"^[A-Z]+ \S+: ", "", str(getattr(exc, "message", None) or exc))
    return " ".join(str(message).split())


class VertexLauncher:
    """Submits, finds, watches and cancels a sweep's CustomJobs in ``project``'s ``region``.

    Also the sweep's :class:`~tierscope.sweep.launchers.JobLogs` (:meth:`collect`, through ``logs``, by default
    :class:`CloudLoggingJobLogs` of the same project).

    ``staging_bucket`` (``gs://BUCKET[/PREFIX]``; None: none, enough to follow and cancel jobs): each job's
    ``baseOutputDirectory`` is ``STAGING/SWEEP_ID/CONFIG_LABEL`` unless the job body sets one (Vertex AI
    derives ``AIP_MODEL_DIR`` and the other output locations from it). ``credentials``: google-auth
    credentials (default: application-default credentials; anonymous with ``api_endpoint``). ``api_endpoint``:
    ``host:port`` or ``http://host:port`` of a local server (default: ``$TIERSCOPE_VERTEX_ENDPOINT``, else the
    region's endpoint, ``REGION-aiplatform.googleapis.com``, https://cloud.google.com/vertex-ai/docs/reference/rest,
    read 2026-12-06). ``retry``: a google-api-core ``Retry`` for 429/503 (default :func:`default_retry`).
    ``logs``: how :meth:`collect` collects a job (default: :class:`CloudLoggingJobLogs` of ``project``).

    Raises :class:`~tierscope.sweep.errors.SweepError` when the client is not installed, the bucket is not a
    ``gs://`` path, or there are no credentials.
    """

    #: The launcher's name in a sweep's ledger.
    name = "vertex"

    def __init__(
        self,
        project: str,
        region: str,
        staging_bucket: str | None,
        credentials: Any = None,
        api_endpoint: str | None = None,
        *,
        retry: Any = None,
        logs: CloudLoggingJobLogs | None = None,
    ) -> None:
        if staging_bucket is not None and (not staging_bucket.startswith("gs://") or staging_bucket == "gs://"):
            raise SweepError(f"staging bucket {staging_bucket!r} is not a Cloud Storage path; give gs://BUCKET")
        if not project or not region:
            raise SweepError("a sweep on Vertex AI needs a project and a region (the plan's `project` and `region`)")
        self.project = project
        self.region = region
        self.staging_bucket = None if staging_bucket is None else staging_bucket.rstrip("/")
        self.parent = f"projects/{project}/locations/{region}"
        self.logs = logs if logs is not None else CloudLoggingJobLogs(project=project)
        self._types = _aiplatform()
        self._retry = retry if retry is not None else default_retry()
        self._client = self._make_client(credentials, api_endpoint or os.environ.get(ENDPOINT_ENV) or None)

    def _make_client(self, credentials: Any, api_endpoint: str | None) -> Any:
        from google.auth import exceptions as auth_exc

        if api_endpoint is not None and credentials is None:
            from google.auth.credentials import AnonymousCredentials

            credentials = AnonymousCredentials()
        endpoint = api_endpoint or f"{self.region}-aiplatform.googleapis.com"
        try:
            return self._types.JobServiceClient(
                credentials=credentials, transport="rest", client_options={"api_endpoint": endpoint}
            )
        except auth_exc.DefaultCredentialsError:
            raise SweepError(f"no Google Cloud credentials for Vertex AI: {NO_CREDENTIALS_HELP}") from None

    @property
    def where(self) -> str:
        """Where the jobs live, for the sweep's ledger: ``projects/P/locations/R``."""
        return self.parent

    # -- calls --------------------------------------------------------------------------------------

    def _call(self, what: str, call: Callable[[], T]) -> T:
        """``call()`` with the retry; errors the sweep cannot go on from become one-line SweepErrors."""
        from google.api_core import exceptions as gexc
        from google.auth import exceptions as auth_exc

        try:
            return self._retry(call)()
        except gexc.RetryError as exc:
            raise SweepError(
                f"Vertex AI kept refusing to {what} for {getattr(self._retry, 'timeout', None) or 0:g} s "
                f"({api_message(exc.cause)}); "
                "run the sweep again later, it resumes where it stopped"
            ) from None
        except (gexc.Forbidden, gexc.Unauthorized) as exc:  # PermissionDenied, Unauthenticated: their subclasses
            raise SweepError(
                f"Vertex AI refused to {what} in project {self.project} ({api_message(exc)}): the credentials need "
                "roles/aiplatform.user on the project"
            ) from None
        except auth_exc.GoogleAuthError as exc:
            raise SweepError(f"no usable Google Cloud credentials to {what} ({exc}): {NO_CREDENTIALS_HELP}") from None

    def find(self, sweep_id: str, configuration: str) -> str | None:
        """The resource name of the newest job of ``configuration`` in ``sweep_id``, or None."""
        request = self._types.ListCustomJobsRequest(parent=self.parent, filter=label_filter(sweep_id, configuration))

        def newest() -> str | None:
            jobs = list(self._client.list_custom_jobs(request=request, retry=None, timeout=REQUEST_TIMEOUT_S))
            if not jobs:
                return None
            return max(
                jobs, key=lambda job: (_time(job.create_time) or datetime.min.replace(tzinfo=UTC), job.name)
            ).name

        return self._call("list jobs", newest)

    def submit(self, sweep_id: str, configuration: str, job: dict[str, Any]) -> str:
        """Create ``job`` (a CustomJob body in the REST API's JSON form, as ``trainer.spec.vertex_job``
        builds it) labelled with the sweep and configuration; returns its resource name
        (``projects/P/locations/R/customJobs/ID``). Raises :class:`SubmitRefused` with the API's message."""
        from google.api_core import exceptions as gexc

        custom_job = self._custom_job(sweep_id, configuration, job)
        attempts = 0

        def create() -> str:
            nonlocal attempts
            attempts += 1
            if attempts > 1:
                earlier = self.find(sweep_id, configuration)
                if earlier is not None:
                    return earlier
            made = self._client.create_custom_job(
                parent=self.parent, custom_job=custom_job, retry=None, timeout=REQUEST_TIMEOUT_S
            )
            return str(made.name)

        try:
            return self._call(f"create the job of {configuration}", create)
        except gexc.NotFound as exc:
            raise SweepError(
                f"Vertex AI has no location {self.parent} ({api_message(exc)}): check the plan's project and region"
            ) from None
        except (gexc.BadRequest, gexc.TooManyRequests) as exc:
            raise SubmitRefused(api_message(exc)) from None

    def _custom_job(self, sweep_id: str, configuration: str, job: dict[str, Any]) -> Any:
        body = json.loads(json.dumps(job))  # a deep copy: the caller's dict stays as it was
        if not isinstance(body, dict) or not isinstance(body.get("jobSpec"), dict):
            raise SweepError(f"the job of {configuration} is not a CustomJob body (it has no jobSpec)")
        body["labels"] = {**(body.get("labels") or {}), **labels(sweep_id, configuration)}
        body.setdefault("displayName", f"{sweep_id}-{configuration}")
        wanted = labels(sweep_id, configuration)
        if self.staging_bucket is not None:
            body["jobSpec"].setdefault(
                "baseOutputDirectory",
                {"outputUriPrefix": f"{self.staging_bucket}/{wanted[SWEEP_LABEL]}/{wanted[CONFIG_LABEL]}"},
            )
        try:
            return self._types.CustomJob.from_json(json.dumps(body))
        except Exception as exc:  # json_format.ParseError: a field the API does not know, a wrong type
            raise SweepError(
                f"the job of {configuration} is not a valid CustomJob body: {' '.join(str(exc).split())}"
            ) from None

    def _get(self, job_id: str) -> Any:
        from google.api_core import exceptions as gexc

        try:
            return self._call(
                f"read job {job_id}",
                lambda: self._client.get_custom_job(name=job_id, retry=None, timeout=REQUEST_TIMEOUT_S),
            )
        except gexc.NotFound:
            raise SweepError(f"Vertex AI has no job {job_id} (deleted?)") from None

    def labels_of(self, job_id: str) -> dict[str, str]:
        return dict(self._get(job_id).labels)

    def state(self, job_id: str) -> JobState:
        """The job's state; a failed job's reason is the API's error message."""
        job = self._get(job_id)
        name = self._types.JobState(job.state).name
        state = STATES.get(name, "queued")
        message = job.error.message if job.error is not None else ""
        reason = message or None
        if state == "failed" and reason is None:
            reason = f"Vertex AI ended the job in state {name}"
        return JobState(state=state, reason=reason, start_time=_time(job.start_time), end_time=_time(job.end_time))

    def collect(self, dataset: Dataset, job_id: str, run: RunSpec) -> None:
        """The finished job's logs into ``dataset`` as ``run`` (:class:`CloudLoggingJobLogs`)."""
        self.logs.collect(dataset, job_id, run)

    def cancel(self, job_id: str) -> None:
        """Ask Vertex AI to cancel the job (it goes through CANCELLING to CANCELLED); a job that already
        ended is left as it is."""
        from google.api_core import exceptions as gexc

        try:
            self._call(
                f"cancel job {job_id}",
                lambda: self._client.cancel_custom_job(name=job_id, retry=None, timeout=REQUEST_TIMEOUT_S),
            )
        except gexc.BadRequest as exc:  # FAILED_PRECONDITION: the job is no longer running
            if not self.state(job_id).final:
                raise SweepError(f"Vertex AI would not cancel job {job_id}: {api_message(exc)}") from None
        except gexc.NotFound:
            raise SweepError(f"Vertex AI has no job {job_id} to cancel") from None


def from_plan(plan: Any) -> VertexLauncher:
    """The launcher of a sweep plan (its ``project``, ``region`` and ``staging_bucket``). Raises
    :class:`~tierscope.sweep.errors.SweepError` naming the key the plan lacks."""
    where = getattr(plan, "path", "the plan")
    for key in ("project", "staging_bucket"):
        if not getattr(plan, key, None):
            raise SweepError(f"{where}: a sweep on Vertex AI needs `{key}` (or run it with --local)")
    return VertexLauncher(plan.project, plan.region, plan.staging_bucket)


def from_ledger(ledger: Any) -> VertexLauncher:
    """The launcher that follows and cancels the jobs of a sweep's ledger (its ``where``:
    ``projects/P/locations/R``)."""
    found = re.fullmatch(r"projects/([^/]+)/locations/([^/]+)", str(getattr(ledger, "where", None) or ""))
    if found is None:
        raise SweepError(f"the ledger of sweep {getattr(ledger, 'sweep_id', '?')} does not say where its jobs live")
    return VertexLauncher(found[1], found[2], None)


@dataclass(frozen=True)
class CloudLoggingJobLogs:
    """How a finished Vertex AI job's logs get into the dataset (:class:`~tierscope.sweep.launchers.JobLogs`):
    its Cloud Logging entries (resource ``ml_job``, the job's number as ``job_id``) through the collector's
    :func:`~tierscope.collector.cloud.collect_cloud`, as the sweep's run.

    ``project``: the job's project (default: the collector's, ``$GOOGLE_CLOUD_PROJECT`` or the credentials');
    ``endpoint``: a local Cloud Logging server (default ``$TIERSCOPE_LOGGING_ENDPOINT``); ``retry`` and
    ``requests_per_minute`` as :class:`~tierscope.collector.cloud.CloudOptions` takes them. Entries are read
    from the day before the run's date (a job logs nothing before it starts), else over the collector's
    default look-back. Idempotent: the collector resumes from its watermark and stores no record twice.
    """

    project: str | None = None
    endpoint: str | None = None
    retry: RetryPolicy | None = None
    requests_per_minute: int | None = DEFAULT_REQUESTS_PER_MINUTE

    def collect(self, dataset: Dataset, job_id: str, run: RunSpec) -> None:
        from tierscope.collector.cloud import CloudOptions, collect_cloud

        number = job_id.rsplit("/", 1)[-1]
        since = None if run.date is None else datetime.combine(run.date - timedelta(days=1), time.min, UTC)
        options = CloudOptions(
            project=self.project,
            endpoint=self.endpoint,
            since=since,
            tier=run.tier,
            requests_per_minute=self.requests_per_minute,
            retry=self.retry,
        )
        collect_cloud(dataset, [number], options, run=run)


__all__ = [
    "ENDPOINT_ENV",
    "INSTALL_HINT",
    "STATES",
    "CloudLoggingJobLogs",
    "VertexLauncher",
    "api_message",
    "default_retry",
    "from_ledger",
    "from_plan",
    "is_quota_refusal",
    "label_filter",
]
