"""The Cloud Billing Catalog API, read with google-cloud-billing's ``CloudCatalogClient``.

Its REST transport (HTTP/JSON through ``requests``), not gRPC: the same client either way, but
REST is what a local test server can speak, and it needs no gRPC channel. Credentials are the
application-default ones; the public catalog needs no billing role. ``endpoint`` (or
``$TIERSCOPE_CATALOG_ENDPOINT``) points the client at a test server, with anonymous credentials.

Every request (the first page and each next one) is retried on 429, 500, 503 and 504, a refused
or reset connection and a body cut short, with google-api-core's exponential back-off with jitter
within :attr:`RetryPolicy.deadline_s`. What a user can fix becomes a one-line :class:`CatalogError`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from tierscope.analysis.errors import AnalysisError
from tierscope.analysis.sku_prices import VERTEX_AI_DISPLAY_NAME, VERTEX_AI_SERVICE_ID

ENDPOINT_ENV = "TIERSCOPE_CATALOG_ENDPOINT"
SCOPES = ("https://www.googleapis.com/auth/cloud-billing.readonly",)
NO_CREDENTIALS_HELP = (
    "run `gcloud auth application-default login` or set GOOGLE_APPLICATION_CREDENTIALS "
    "(reading the public catalog needs no billing role)"
)
#: The catalog's largest page: fewer requests (and fewer chances of a 429) per update.
PAGE_SIZE = 5000
#: The most pages one listing may take (Vertex AI's SKUs fill a few at PAGE_SIZE), and the most empty
#: pages in a row: past either, an API handing out fresh page tokens without end is stopped.
MAX_PAGES = 1000
MAX_EMPTY_PAGES = 50
#: A request for the pricing of a time range may span one calendar month of this time zone (the API's rule).
CATALOG_TZ = ZoneInfo("America/Los_Angeles")
#: The end of a range is kept this far before now: the API refuses a time in its future, and clocks differ.
CLOCK_MARGIN = timedelta(minutes=5)

Span = tuple[datetime, datetime]


class CatalogError(AnalysisError):
    """The Cloud Billing Catalog could not be read: no credentials, refused, no such service, or
    faults that outlasted the retries."""


@dataclass(frozen=True)
class RetryPolicy:
    """Back-off for transient errors: the first wait up to ``initial_s`` seconds, each next up to
    ``multiplier`` times more (at most ``maximum_s``), drawn at random below that bound; a request
    gives up after ``deadline_s`` seconds of retrying."""

    initial_s: float = 1.0
    maximum_s: float = 16.0
    multiplier: float = 2.0
    deadline_s: float = 120.0


@dataclass
class Reading:
    """A client and what its reads met: ``retries`` (failed attempts of a retried kind) and those
    ``faults`` by name."""

    client: Any
    endpoint: str | None
    policy: RetryPolicy
    retries: int = 0
    faults: dict[str, int] = field(default_factory=dict)

    def retry(self) -> Any:
        """A google-api-core ``Retry`` for one request, counting into :attr:`retries`."""
        import requests
        from google.api_core import exceptions as gexc
        from google.api_core.retry import Retry, if_exception_type
        from google.protobuf.json_format import ParseError

        transient = if_exception_type(
            gexc.TooManyRequests,
            gexc.InternalServerError,
            gexc.ServiceUnavailable,
            gexc.GatewayTimeout,
            requests.ConnectionError,
            requests.Timeout,
            requests.exceptions.ChunkedEncodingError,
        )

        def seen(exc: Exception) -> None:
            self.retries += 1
            name = type(exc).__name__
            self.faults[name] = self.faults.get(name, 0) + 1

        return Retry(
            # A body cut short: requests' ChunkedEncodingError (IncompleteRead), or, when the cut
            # falls where the length still matches, JSON that does not parse (ParseError).
            predicate=lambda exc: transient(exc) or (isinstance(exc, ParseError) and cut_short(exc)),
            initial=self.policy.initial_s,
            maximum=self.policy.maximum_s,
            multiplier=self.policy.multiplier,
            timeout=self.policy.deadline_s,
            on_error=seen,
        )


def cut_short(exc: BaseException) -> bool:
    """A protobuf ``ParseError`` of a body that is not JSON (cut short: worth asking again), not of JSON whose
    fields are of the wrong type or value (``units: 1.5``: the same answer would come again)."""
    text = str(exc)
    return text.startswith("Failed to load JSON") and "duplicate key" not in text


def resolve_endpoint(endpoint: str | None) -> str | None:
    """``endpoint``, else ``$TIERSCOPE_CATALOG_ENDPOINT``, else None (the real API)."""
    return endpoint or os.environ.get(ENDPOINT_ENV) or None


def connect(endpoint: str | None = None, policy: RetryPolicy | None = None) -> Reading:
    """A ``CloudCatalogClient`` on the REST transport. Raises :class:`CatalogError` when there
    are no application-default credentials (none are needed with an ``endpoint``)."""
    import google.auth
    from google.api_core.client_options import ClientOptions
    from google.auth import exceptions as auth_exc
    from google.auth.credentials import AnonymousCredentials
    from google.cloud.billing_v1 import CloudCatalogClient

    endpoint = resolve_endpoint(endpoint)
    if endpoint:
        credentials: Any = AnonymousCredentials()
    else:
        try:
            credentials, _ = google.auth.default(scopes=list(SCOPES))
        except auth_exc.DefaultCredentialsError as exc:
            why = " ".join(str(exc).split())
            raise CatalogError(f"no Google Cloud credentials found ({why}): {NO_CREDENTIALS_HELP}") from None
    options = ClientOptions(api_endpoint=endpoint) if endpoint else None
    client = CloudCatalogClient(credentials=credentials, transport="rest", client_options=options)
    return Reading(client=client, endpoint=endpoint, policy=policy or RetryPolicy())


def find_service(reading: Reading, display_name: str = VERTEX_AI_DISPLAY_NAME) -> tuple[str, int]:
    """The service id of the catalog's service named ``display_name``, and how many services were
    listed. Raises :class:`CatalogError` when none is (or the API fails, :func:`explain`)."""
    listed = 0
    try:
        for page in _pages(reading.client.list_services(request={"page_size": PAGE_SIZE}, retry=reading.retry())):
            for service in page.services:
                listed += 1
                if service.display_name == display_name:
                    return service.service_id, listed
    except _api_errors() as exc:
        raise explain(exc, reading, "listing the catalog's services") from exc
    raise CatalogError(
        f"the Cloud Billing Catalog lists no service named {display_name!r} ({listed:,} services read): "
        f"pass --service-id (Vertex AI's is {VERTEX_AI_SERVICE_ID}; `gcloud billing services list` shows them)"
    )


def month_spans(now: datetime, months: int) -> list[Span | None]:
    """The time ranges that read ``months`` calendar months of pricing up to ``now`` (aware), oldest
    first: one a month (the API's rule, :data:`CATALOG_TZ`), the current one ending
    :data:`CLOCK_MARGIN` before ``now``. ``[None]`` (the latest pricing alone) for ``months`` 0.

    2 months on 2026-12-06 12:00 UTC: [2026-11-01 00:00 PDT, 2026-12-01 00:00 PST) and
    [2026-12-01 00:00 PST, 2026-12-06 11:55 UTC).
    """
    if months <= 0:
        return [None]
    local = now.astimezone(CATALOG_TZ)
    year, month = local.year, local.month
    starts = []
    for _ in range(months):
        starts.append(datetime(year, month, 1, tzinfo=CATALOG_TZ))
        year, month = (year, month - 1) if month > 1 else (year - 1, 12)
    starts.reverse()
    last = now - CLOCK_MARGIN
    spans: list[Span | None] = []
    for start, following in zip(starts, [*starts[1:], last], strict=True):
        end = min(following, last)
        if end > start:
            spans.append((start, end))
    return spans or [None]


def read_skus(reading: Reading, service_id: str, span: Span | None = None) -> Iterator[dict[str, Any]]:
    """Each SKU of ``service_id``, priced in USD, in its JSON form (camelCase keys, ``units`` as a
    string), with its pricing versions in ``span`` (one calendar month at most, :func:`month_spans`;
    None: the latest pricing): page after page, each page retried as a whole. Raises :class:`CatalogError`."""
    from google.cloud.billing_v1 import Sku

    request: dict[str, Any] = {"parent": f"services/{service_id}", "currency_code": "USD", "page_size": PAGE_SIZE}
    if span is not None:
        request["start_time"], request["end_time"] = span
    try:
        for page in _pages(reading.client.list_skus(request=request, retry=reading.retry())):
            for sku in page.skus:
                yield Sku.to_dict(sku, preserving_proto_field_name=False)
    except _api_errors() as exc:
        raise explain(exc, reading, f"reading the SKUs of service {service_id}", service_id) from exc


def _pages(pager: Any) -> Iterator[Any]:
    """``pager``'s pages; a next-page token handed out twice (the same page again, forever), more than
    :data:`MAX_PAGES` pages or :data:`MAX_EMPTY_PAGES` empty ones in a row stop it with a :class:`CatalogError`."""
    seen: set[str] = set()
    empty = 0
    for number, page in enumerate(pager.pages, start=1):
        yield page
        token = page.next_page_token
        empty = empty + 1 if not (list(getattr(page, "skus", ())) or list(getattr(page, "services", ()))) else 0
        if token and (number >= MAX_PAGES or empty >= MAX_EMPTY_PAGES):
            said = f"{number:,} pages" if number >= MAX_PAGES else f"{empty} empty pages in a row"
            raise CatalogError(
                f"the Cloud Billing Catalog API kept handing out next pages ({said}, each with a new page token); "
                "stopped reading (nothing was written): try again later"
            )
        if token in seen:
            raise CatalogError(
                f"the Cloud Billing Catalog API returned the page token {token[:40]!r} a second time; "
                "stopped reading (nothing was written): try again later"
            )
        if token:
            seen.add(token)


def _api_errors() -> tuple[type[BaseException], ...]:
    import requests
    from google.api_core import exceptions as gexc
    from google.auth import exceptions as auth_exc
    from google.protobuf.json_format import ParseError

    return (gexc.GoogleAPIError, auth_exc.GoogleAuthError, requests.RequestException, ParseError)


def explain(exc: BaseException, reading: Reading, what: str, service_id: str | None = None) -> CatalogError:
    """A one-line :class:`CatalogError`: what failed while doing ``what``, and what to do."""
    import requests
    from google.api_core import exceptions as gexc
    from google.auth import exceptions as auth_exc
    from google.protobuf.json_format import ParseError

    if isinstance(exc, gexc.RetryError) and exc.cause is not None:
        exc = exc.cause
    message = " ".join(str(getattr(exc, "message", None) or exc).split())
    # api-core puts the request before the server's words ("GET http://...?pageSize=5000: ..."): the URL
    # is ours and long, the words are the server's.
    message = re.sub(r"^(?:GET|POST) \S+: ", "", message)
    where = f" at {reading.endpoint}" if reading.endpoint else ""
    if isinstance(exc, auth_exc.GoogleAuthError | gexc.Unauthorized):
        return CatalogError(
            f"Google Cloud credentials were refused or could not be refreshed while {what} ({message}): "
            f"{NO_CREDENTIALS_HELP}"
        )
    if isinstance(exc, gexc.Forbidden):
        return CatalogError(
            f"the Cloud Billing Catalog API refused {what} ({message}): enable the Cloud Billing API "
            "(`gcloud services enable cloudbilling.googleapis.com`) in the credentials' quota project, or set "
            "one with `gcloud auth application-default set-quota-project PROJECT`; no billing role is needed"
        )
    if isinstance(exc, gexc.NotFound) and service_id is not None:
        return CatalogError(
            f"the Cloud Billing Catalog has no service {service_id!r} ({message}): check --service-id, or leave "
            f"it out to look up {VERTEX_AI_DISPLAY_NAME!r} by name"
        )
    # Every failed attempt was counted, the last one (not retried: the deadline came) included.
    failed = reading.retries
    tries = f"after {failed} failed attempt{'' if failed == 1 else 's'} within {reading.policy.deadline_s:g} s"
    if isinstance(exc, gexc.TooManyRequests | gexc.ServerError):
        return CatalogError(
            f"the Cloud Billing Catalog API{where} kept failing while {what} ({exc.code} {message}) {tries}: "
            "nothing was written; try again later, or raise --retry-deadline"
        )
    if isinstance(exc, ParseError) and not cut_short(exc):
        return CatalogError(
            f"the Cloud Billing Catalog API{where} answered with a body that is JSON but not SKUs as the API "
            f"defines them while {what} ({message}): not a network fault; nothing was written: try again later, "
            "or check the endpoint"
        )
    if isinstance(exc, gexc.ClientError):
        return CatalogError(
            f"the Cloud Billing Catalog API{where} refused the request while {what} ({exc.code} {message}): "
            "nothing was written; check --service-id and --months, or try again later"
        )
    if isinstance(exc, requests.exceptions.ChunkedEncodingError | ParseError):
        return CatalogError(
            f"the Cloud Billing Catalog API's answers{where} kept arriving cut short while {what} {tries}: "
            "nothing was written; check the network (a proxy?) and try again"
        )
    if isinstance(exc, requests.RequestException):
        return CatalogError(
            f"cannot reach the Cloud Billing Catalog API{where} while {what} ({type(exc).__name__}) {tries}: "
            "nothing was written; check the network (or the endpoint) and try again"
        )
    return CatalogError(f"reading the Cloud Billing Catalog failed while {what} ({type(exc).__name__}: {message})")
