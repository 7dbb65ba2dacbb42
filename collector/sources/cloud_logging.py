"""Training-job log entries from Cloud Logging, read page by page with google-cloud-logging.

- The filter (:func:`build_filter`): ``resource.type`` ``ml_job`` (``cloudml_job`` for
  older jobs), the job ids (quoted), and always an explicit timestamp lower bound, since
  the client otherwise adds "the last 24 hours" silently. Entries come in timestamp order
  (equal timestamps by ``insertId``), 1000 per page, the API's maximum.
- Quota and faults: every HTTP request goes through :class:`QuotaSession`, which waits
  for a client-side rate limit (:class:`~tierscope.collector.ratelimit.SlidingWindowLimiter`, about
  60 ``entries.list`` calls a minute are allowed per project) and retries 429, 500, 503,
  504 and connection errors with google-api-core's exponential back-off with jitter,
  within a bounded total time per request (:class:`RetryPolicy`). Retrying the same
  request (same page token) means a retry costs one request and shifts nothing.
- Errors the user can fix become :class:`CloudLoggingError` with what to do.
- :func:`read_entries` yields the entries in chunks, resuming after a :class:`Cursor`.

The client is the JSON/HTTP transport of ``google.cloud.logging.Client`` (``_use_grpc=False``):
its ``_http`` argument is the one per-request hook the client offers, and the rate limit
must count every request, retries included. ``endpoint`` (or ``TIERSCOPE_LOGGING_ENDPOINT``)
points it at an emulator or test server, with anonymous credentials.
"""

from __future__ import annotations

import http.client
import json
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import requests
from google.api_core import exceptions as gexc
from google.api_core.retry import Retry, if_exception_type
from google.auth import exceptions as auth_exc
from google.auth.transport.requests import AuthorizedSession

from tierscope.collector import jsonvalues
from tierscope.collector.errors import CollectorError
from tierscope.collector.ratelimit import SlidingWindowLimiter
from tierscope.collector.sources.logentries import Entry, format_time

ENDPOINT_ENV = "TIERSCOPE_LOGGING_ENDPOINT"
PROJECT_ENVS = ("GOOGLE_CLOUD_PROJECT", "GCLOUD_PROJECT")
RESOURCE_TYPES = ("ml_job", "cloudml_job")
#: The API's maximum page size.
MAX_PAGE_SIZE = 1000
#: Under the default quota of 60 ``entries.list`` requests a minute per project.
DEFAULT_REQUESTS_PER_MINUTE = 55
VIEWER_ROLE = "roles/logging.viewer"
#: Empty pages in a row after which a read stops with an error: the API may return a few while
#: it searches a long time range, never hundreds (at 55 requests a minute, 200 pages is 4 minutes).
MAX_EMPTY_PAGES = 200
TRANSIENT_STATUSES = frozenset({429, 500, 503, 504})
NO_CREDENTIALS_HELP = "run `gcloud auth application-default login` or set GOOGLE_APPLICATION_CREDENTIALS"


class CloudLoggingError(CollectorError):
    """Cloud Logging could not be read: no credentials, no permission, unknown project,
    bad filter, or faults that outlasted the retries."""


@dataclass(frozen=True)
class RetryPolicy:
    """Back-off for transient errors: the first wait is up to ``initial_s`` seconds, each next
    up to ``multiplier`` times more (capped at ``maximum_s``), each drawn at random below
    that bound (jitter); a request gives up after ``deadline_s`` seconds of retrying."""

    initial_s: float = 1.0
    maximum_s: float = 32.0
    multiplier: float = 2.0
    deadline_s: float = 300.0

    def retry(self, on_error: Callable[[Exception], None] | None = None) -> Retry:
        return Retry(
            # A body cut short (IncompleteRead, a reset mid-body: requests' ChunkedEncodingError) is
            # as transient as a 503: the same request is sent again.
            predicate=if_exception_type(
                _TransientStatus,
                _CutBody,
                requests.ConnectionError,
                requests.Timeout,
                requests.exceptions.ChunkedEncodingError,
                http.client.IncompleteRead,
            ),
            initial=self.initial_s,
            maximum=self.maximum_s,
            multiplier=self.multiplier,
            timeout=self.deadline_s,
            on_error=on_error,
        )


@dataclass
class RequestStats:
    """What the HTTP layer did: ``requests`` sent (retries included), ``retries``, seconds
    ``waited_s`` for the rate limit, and the HTTP ``statuses`` seen, by code."""

    requests: int = 0
    retries: int = 0
    waited_s: float = 0.0
    statuses: dict[int, int] = field(default_factory=dict)


class _TransientStatus(Exception):
    def __init__(self, response: requests.Response) -> None:
        super().__init__(f"HTTP {response.status_code}")
        self.response = response


class _CutBody(Exception):
    """A 2xx response whose JSON body does not parse: cut short on the way."""


def _decode_bounded(response: requests.Response) -> Any:
    """Decode ``response``'s JSON body here, bounded (:func:`~tierscope.collector.jsonvalues.loads_lenient`):
    an entry holding ``1e400`` or nested 100,000 deep becomes a marker its entry is rejected
    for, instead of an exception in the client that stops the whole collect."""
    if not (200 <= response.status_code < 300 and response.content):
        return None
    try:
        doc = jsonvalues.loads_lenient(response.content.decode("utf-8", errors="replace"))
    except json.JSONDecodeError as exc:
        raise _CutBody(f"a response of {len(response.content):,} bytes is not complete JSON ({exc.msg})") from None
    response.json = lambda **_: doc  # type: ignore[method-assign]
    return doc


@dataclass
class PageWatch:
    """The pages of one ``entries.list`` read: a server that hands back a page token it gave
    before, or pages of nothing without end, would keep the collect (and the dataset's lock)
    forever. :meth:`see` raises :class:`CloudLoggingError` naming the filter."""

    filter_: str
    tokens: set[str] = field(default_factory=set)
    empty: int = 0

    def see(self, doc: Any) -> None:
        if not isinstance(doc, dict):
            return
        token = doc.get("nextPageToken")
        if isinstance(token, str) and token in self.tokens:
            raise CloudLoggingError(
                f"Cloud Logging returned the page token {token[:40]!r} a second time; stopped reading "
                f"(what was read is stored). The filter was: {self.filter_}"
            )
        self.empty = self.empty + 1 if not doc.get("entries") else 0
        if self.empty > MAX_EMPTY_PAGES:
            raise CloudLoggingError(
                f"Cloud Logging returned {self.empty} empty pages in a row (more than {MAX_EMPTY_PAGES}); "
                f"stopped reading (what was read is stored): narrow --since/--until. The filter was: {self.filter_}"
            )
        if isinstance(token, str):
            self.tokens.add(token)


class QuotaSession(AuthorizedSession):
    """An authorised ``requests`` session that rate-limits and retries every request.

    When the retries run out on a 429/5xx, the last response is returned as is, so the
    client raises its usual :mod:`google.api_core.exceptions` error with the server's message.
    """

    def __init__(
        self,
        credentials: Any,
        limiter: SlidingWindowLimiter | None = None,
        retry: RetryPolicy | None = None,
        stats: RequestStats | None = None,
    ) -> None:
        super().__init__(credentials)
        self.limiter = limiter
        self.stats = stats if stats is not None else RequestStats()
        self.pages: PageWatch | None = None
        self._retry = (retry or RetryPolicy()).retry(on_error=self._count_retry)

    def _count_retry(self, _exc: Exception) -> None:
        self.stats.retries += 1

    def request(self, method: str, url: str, *args: Any, **kwargs: Any) -> requests.Response:  # type: ignore[override]
        def attempt() -> requests.Response:
            if self.limiter is not None:
                self.stats.waited_s += self.limiter.acquire()
            self.stats.requests += 1
            response = AuthorizedSession.request(self, method, url, *args, **kwargs)
            self.stats.statuses[response.status_code] = self.stats.statuses.get(response.status_code, 0) + 1
            if response.status_code in TRANSIENT_STATUSES:
                raise _TransientStatus(response)
            doc = _decode_bounded(response)
            if self.pages is not None and doc is not None and "/entries:list" in url:
                self.pages.see(doc)
            return response

        try:
            return self._retry(attempt)()
        except gexc.RetryError as exc:
            cause = exc.cause
            if isinstance(cause, _TransientStatus):
                return cause.response
            if isinstance(cause, Exception):
                raise cause from exc
            raise


def _quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def job_filter(job_ids: list[str] | tuple[str, ...]) -> str:
    """The part of the filter naming the jobs: resource types and quoted job ids, sorted.

    Identifies a job filter for the watermark (so ``--job-id b --job-id a`` is the same
    filter as ``--job-id a --job-id b``). Raises :class:`ValueError` if ``job_ids`` is empty.
    """
    if not job_ids:
        raise ValueError("at least one job id is needed")
    types = " OR ".join(f"resource.type={_quote(t)}" for t in RESOURCE_TYPES)
    jobs = " OR ".join(f"resource.labels.job_id={_quote(j)}" for j in sorted(set(job_ids)))
    return f"({types}) AND ({jobs})"


def build_filter(job_ids: list[str] | tuple[str, ...], since: datetime, until: datetime | None = None) -> str:
    """The full ``entries.list`` filter: the jobs, ``timestamp>=since`` and, if given, ``timestamp<until``."""
    parts = [job_filter(job_ids), f"timestamp>={_quote(format_time(since))}"]
    if until is not None:
        parts.append(f"timestamp<{_quote(format_time(until))}")
    return " AND ".join(parts)


def resolve_endpoint(endpoint: str | None) -> str | None:
    """``endpoint``, else ``$TIERSCOPE_LOGGING_ENDPOINT``, else None (the real API)."""
    return endpoint or os.environ.get(ENDPOINT_ENV) or None


@dataclass
class Connection:
    """A google-cloud-logging client bound to ``project``, and its request counters."""

    client: Any
    project: str
    stats: RequestStats
    endpoint: str | None
    session: QuotaSession | None = None


def connect(
    project: str | None = None,
    endpoint: str | None = None,
    requests_per_minute: int | None = DEFAULT_REQUESTS_PER_MINUTE,
    retry: RetryPolicy | None = None,
) -> Connection:
    """A client for ``project`` (default: ``$GOOGLE_CLOUD_PROJECT``, else the ADC project).

    With an ``endpoint`` (or ``$TIERSCOPE_LOGGING_ENDPOINT``) the client talks to it with
    anonymous credentials. ``requests_per_minute=None`` disables the rate limit. Raises
    :class:`CloudLoggingError` when there are no credentials or no project.
    """
    import google.auth
    from google.auth.credentials import AnonymousCredentials

    endpoint = resolve_endpoint(endpoint)
    project = project or next((os.environ[k] for k in PROJECT_ENVS if os.environ.get(k)), None)
    if endpoint:
        credentials: Any = AnonymousCredentials()
    else:
        try:
            credentials, adc_project = google.auth.default(scopes=["https://www.googleapis.com/auth/logging.read"])
        except auth_exc.DefaultCredentialsError:
            raise CloudLoggingError(f"no Google Cloud credentials found: {NO_CREDENTIALS_HELP}") from None
        project = project or adc_project
    if not project:
        raise CloudLoggingError("no Google Cloud project: pass --project or set GOOGLE_CLOUD_PROJECT")
    stats = RequestStats()
    limiter = SlidingWindowLimiter(requests_per_minute) if requests_per_minute else None
    session = QuotaSession(credentials, limiter=limiter, retry=retry, stats=stats)
    options = {"api_endpoint": endpoint} if endpoint else None
    client = reading_client(
        project=project, credentials=credentials, _http=session, _use_grpc=False, client_options=options
    )
    return Connection(client=client, project=project, stats=stats, endpoint=endpoint, session=session)


def reading_client(**kwargs: Any) -> Any:
    """A ``google.cloud.logging.Client(**kwargs)`` whose loggers need no environment detection.

    Turning a listed entry into an object makes a Logger per log name, and a Logger with
    no resource asks the GCE metadata server which machine it runs on (HTTP calls to
    metadata.google.internal: seconds of DNS timeout off Google Cloud, and network access
    in tests). A reader never writes through those loggers, so a fixed ``global``
    resource is right and free.
    """
    from google.cloud.logging import Client, Resource

    reader_resource = Resource(type="global", labels={})

    class ReadingClient(Client):
        def logger(self, name: str, *, labels: Any = None, resource: Any = None) -> Any:
            return super().logger(name, labels=labels, resource=resource or reader_resource)

    return ReadingClient(**kwargs)


def explain(exc: Exception, project: str, filter_: str, stats: RequestStats) -> CloudLoggingError:
    """A :class:`CloudLoggingError` saying what went wrong with ``exc`` and what to do."""
    code = getattr(exc, "code", None)
    message = getattr(exc, "message", None) or str(exc)
    if isinstance(exc, auth_exc.GoogleAuthError | gexc.Unauthorized):
        return CloudLoggingError(
            f"Google Cloud credentials were refused or could not be refreshed ({message}): {NO_CREDENTIALS_HELP}"
        )
    if isinstance(exc, gexc.Forbidden):
        return CloudLoggingError(
            f"permission denied reading the logs of project {project!r} ({message}): the account needs the role "
            f"{VIEWER_ROLE} (Logs Viewer) on that project; also check the project id"
        )
    if isinstance(exc, gexc.NotFound):
        return CloudLoggingError(f"unknown project {project!r} ({message}): check --project or GOOGLE_CLOUD_PROJECT")
    if isinstance(exc, gexc.BadRequest):
        return CloudLoggingError(f"Cloud Logging rejected the request ({message}); the filter was: {filter_}")
    if isinstance(exc, gexc.TooManyRequests | gexc.ServerError) or code in TRANSIENT_STATUSES:
        return CloudLoggingError(
            f"Cloud Logging kept failing ({message}) after {stats.retries} retries; "
            "lower --requests-per-minute or raise --retry-deadline"
        )
    if isinstance(exc, requests.RequestException):
        return CloudLoggingError(f"cannot reach Cloud Logging ({type(exc).__name__}: {exc})")
    return CloudLoggingError(f"reading Cloud Logging failed ({type(exc).__name__}: {message})")


#: What :func:`explain` translates; anything else is a bug and propagates as is.
API_ERRORS = (gexc.GoogleAPIError, auth_exc.GoogleAuthError, requests.RequestException)


@dataclass
class Cursor:
    """Where reading stands: the timestamp of the last entry read (UTC) and the insertIds
    read at exactly that timestamp, which a resumed query starting there skips."""

    timestamp: datetime
    insert_ids: set[str] = field(default_factory=set)

    def advance(self, entries: list[Entry]) -> None:
        """Move past ``entries`` (in timestamp order); entries before the cursor (an overlap
        read again) leave it where it is."""
        for entry in entries:
            if entry.timestamp is None or entry.timestamp < self.timestamp:
                continue
            if entry.timestamp > self.timestamp:
                self.timestamp = entry.timestamp
                self.insert_ids = set()
            if entry.insert_id is not None:
                self.insert_ids.add(entry.insert_id)

    def seen(self, entry: Entry) -> bool:
        return entry.timestamp == self.timestamp and entry.insert_id in self.insert_ids


@dataclass
class Chunk:
    """Up to one page of entries, when the request for them was sent (UTC), and how many
    entries of the page were left out as already read (``skipped_seen``)."""

    entries: list[Entry]
    requested_at: datetime
    skipped_seen: int


def read_entries(
    conn: Connection,
    filter_: str,
    page_size: int = MAX_PAGE_SIZE,
    after: Cursor | None = None,
    now: Callable[[], datetime] | None = None,
) -> Iterator[Chunk]:
    """Yield the entries matching ``filter_`` oldest first, ``page_size`` at a time.

    Entries ``after`` already read (same timestamp and insertId) are left out. The next
    page is requested only when the caller asks for the next chunk, so a caller that
    stores each chunk before asking for more loses nothing when a request fails. Raises
    :class:`CloudLoggingError` (see :func:`explain`).
    """
    from google.cloud.logging import ASCENDING

    clock = now or (lambda: datetime.now(UTC))
    page_size = max(1, min(page_size, MAX_PAGE_SIZE))
    try:
        stream = conn.client.list_entries(
            resource_names=[f"projects/{conn.project}"], filter_=filter_, order_by=ASCENDING, page_size=page_size
        )
        if conn.session is not None:
            conn.session.pages = PageWatch(filter_)
        while True:
            requested_at = clock()
            batch: list[Entry] = []
            skipped = 0
            for item in stream:
                entry = Entry.from_log_entry(item)
                if after is not None and after.seen(entry):
                    skipped += 1
                else:
                    batch.append(entry)
                # Counting skipped entries too keeps chunks on page boundaries: one request per chunk.
                if len(batch) + skipped == page_size:
                    break
            else:
                if batch or skipped:
                    yield Chunk(batch, requested_at, skipped)
                return
            yield Chunk(batch, requested_at, skipped)
    except API_ERRORS as exc:
        raise explain(exc, conn.project, filter_, conn.stats) from exc


def backoff_note(stats: RequestStats) -> str:
    """One line on requests, retries and rate-limit waits, for the summary."""
    return (
        f"{stats.requests} requests to Cloud Logging ({stats.retries} retries, "
        f"{stats.waited_s:.1f} s waiting for the rate limit)"
    )


__all__ = [
    "DEFAULT_REQUESTS_PER_MINUTE",
    "ENDPOINT_ENV",
    "MAX_EMPTY_PAGES",
    "MAX_PAGE_SIZE",
    "Chunk",
    "CloudLoggingError",
    "Connection",
    "Cursor",
    "QuotaSession",
    "RequestStats",
    "RetryPolicy",
    "backoff_note",
    "build_filter",
    "connect",
    "explain",
    "job_filter",
    "read_entries",
    "reading_client",
]
