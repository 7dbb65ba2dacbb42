"""A fake Cloud Billing Catalog API: the REST API v1's ``GET /v1/services`` and
``GET /v1/services/{id}/skus``, in a thread.

For tests that drive the real google-cloud-billing client (REST transport) through an endpoint
override::

    with FakeCatalogServer({"C7E2-9256-1C43": skus}, page_limit=2) as server:
        server.burst(429, after_pages=1)       # the second page's request fails once first
        ... tierscope prices update --endpoint server.url ...
        server.requests[0].path                # what the client asked

What it implements: the services list (``services``: id -> display name) and each service's SKUs,
both paged with ``pageSize`` (at most 5000, the API's bound, and at most ``page_limit`` here so a
short list still spans pages) and ``pageToken`` / ``nextPageToken`` (opaque; a token of another
list is a 400). An unknown service's SKUs are a 404. ``startTime`` / ``endTime`` ask for a time range
of pricing, checked as the API checks it (both or neither, none in the future, one calendar month of
America/Los_Angeles); a SKU then lists the version in effect at the start (dated at the start) and each
change within the range (a SKU's history: :data:`TIMELINE`); without a range, its latest version, dated
an hour ago ("within the last 12 hours"). Errors use Google's JSON error body, so the
client raises the usual ``google.api_core`` exceptions.

Faults (thread-safe, settable while running): :meth:`burst` (the next ``count`` requests once
``after_pages`` pages were served answer ``status``), :meth:`fail_always` (every request answers
``status`` until :meth:`heal`), :meth:`cut_bodies` (the next answers send half their body under
the full Content-Length and close: the client sees IncompleteRead; ``after_pages`` as for bursts),
``repeat_token`` (every page names the same next token, forever), ``endless_tokens`` (after the
last page, every page names a fresh next token: empty pages without end), ``mangle`` (a function that edits each
answer's JSON before it is sent: fields of the wrong type or value in a body that arrives whole).

Records: ``requests`` (every :class:`CatalogRequest`), ``pages_served``.
"""

from __future__ import annotations

import base64
import copy
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import parse_qs, urlsplit
from zoneinfo import ZoneInfo

from tests.support.fake_google_api import ApiError, LocalJsonServer, error_body

MAX_PAGE_SIZE = 5000
#: The time zone whose calendar month bounds a request's time range (the API's rule).
CATALOG_TZ = ZoneInfo("America/Los_Angeles")
#: A SKU's price history, oldest first: (effective time, units, nanos). Kept under this key of a SKU
#: dict (and never served); without it a SKU's one pricingInfo holds from its effectiveTime on.
TIMELINE = "_timeline"


@dataclass
class CatalogRequest:
    """One GET as received (``path`` without the query, the query's ``params``) and its ``status``."""

    number: int
    path: str
    params: dict[str, str]
    status: int = 200


@dataclass
class _Burst:
    status: int
    remaining: int
    after_pages: int


class FakeCatalogServer(LocalJsonServer):
    """See the module docstring. ``skus`` maps a service id to its SKUs (the API's JSON form);
    ``services`` maps service ids to display names (default: each id of ``skus`` is Vertex AI's)."""

    thread_name = "fake-catalog"

    def __init__(
        self,
        skus: Mapping[str, Sequence[dict[str, Any]]],
        services: Mapping[str, str] | None = None,
        *,
        page_limit: int = MAX_PAGE_SIZE,
    ) -> None:
        super().__init__()
        self.skus = {sid: list(items) for sid, items in skus.items()}
        self.services = dict(services) if services is not None else dict.fromkeys(self.skus, "Vertex AI")
        self.page_limit = page_limit
        self.requests: list[CatalogRequest] = []
        self.repeat_token = False
        self.endless_tokens = False
        self.mangle: Callable[[dict[str, Any]], None] | None = None
        self._bursts: list[_Burst] = []
        self._always: tuple[int, str] | None = None
        self._lock = threading.RLock()

    # -- faults -------------------------------------------------------------------------------

    def burst(self, status: int, count: int = 1, after_pages: int | None = None) -> None:
        """The next ``count`` requests once ``after_pages`` pages were served (default: now) answer ``status``."""
        with self._lock:
            self._bursts.append(_Burst(status, count, self.pages_served if after_pages is None else after_pages))

    def fail_always(self, status: int, message: str = "injected permanent fault") -> None:
        """Answer every request with ``status`` until :meth:`heal`."""
        with self._lock:
            self._always = (status, message)

    def heal(self) -> None:
        """Stop failing: forget :meth:`fail_always` and pending bursts."""
        with self._lock:
            self._always = None
            self._bursts.clear()

    @property
    def statuses(self) -> list[int]:
        return [r.status for r in self.requests]

    # -- the API ------------------------------------------------------------------------------

    def answer(self, method: str, target: str, body: bytes) -> tuple[int, dict[str, Any]]:
        """Answer one request for ``target`` (path and query): ``(HTTP status, JSON body)``."""
        parts = urlsplit(target)
        params = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        with self._lock:
            record = CatalogRequest(len(self.requests) + 1, parts.path, params)
            self.requests.append(record)
            try:
                if method != "GET":
                    raise ApiError(404, f"no such method {method} {parts.path}")
                self._faults()
                status, payload = 200, self._route(parts.path, params)
                if self.mangle is not None:
                    self.mangle(payload)
                self.pages_served += 1
            except ApiError as exc:
                status, payload = exc.status, error_body(exc.status, exc.message)
            record.status = status
        return status, payload

    def _faults(self) -> None:
        if self._always is not None:
            raise ApiError(*self._always)
        for burst in self._bursts:
            if burst.remaining > 0 and self.pages_served >= burst.after_pages:
                burst.remaining -= 1
                raise ApiError(burst.status, f"injected fault ({burst.remaining} more to come)")

    def _route(self, path: str, params: dict[str, str]) -> dict[str, Any]:
        if path == "/v1/services":
            items = [
                {
                    "name": f"services/{sid}",
                    "serviceId": sid,
                    "displayName": name,
                    "businessEntityName": "businessEntities/GCP",
                }
                for sid, name in self.services.items()
            ]
            return self._page("services", path, items, params)
        head, _, tail = path.removeprefix("/v1/services/").partition("/")
        if path.startswith("/v1/services/") and tail == "skus":
            if head not in self.skus:
                raise ApiError(404, f"Service services/{head} not found.")
            if params.get("currencyCode", "USD") != "USD":
                raise ApiError(400, "only USD is served here")
            span = _span(params)
            return self._page("skus", path, [_priced(sku, span) for sku in self.skus[head]], params)
        raise ApiError(404, f"no such method {path}")

    def _page(self, key: str, path: str, items: list[dict[str, Any]], params: dict[str, str]) -> dict[str, Any]:
        try:
            size = int(params.get("pageSize") or MAX_PAGE_SIZE)
        except ValueError:
            raise ApiError(400, "pageSize is not a number") from None
        if not 0 < size <= MAX_PAGE_SIZE:
            raise ApiError(400, f"pageSize must be between 1 and {MAX_PAGE_SIZE}")
        size = min(size, self.page_limit)
        offset = _read_token(params["pageToken"], path) if params.get("pageToken") else 0
        end = min(offset + size, len(items))
        answer: dict[str, Any] = {key: items[offset:end]}
        if self.repeat_token:
            answer["nextPageToken"] = _make_token(path, 0)
        elif end < len(items):
            answer["nextPageToken"] = _make_token(path, end)
        elif self.endless_tokens:
            answer["nextPageToken"] = _make_token(path, max(offset, len(items)) + 1)
        return answer


def _time(text: str) -> datetime:
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC)
    except ValueError:
        raise ApiError(400, f"Invalid timestamp {text!r}.") from None


def _span(params: dict[str, str]) -> tuple[datetime, datetime] | None:
    """The request's time range, checked as the API checks it; None: the latest pricing."""
    if "startTime" not in params and "endTime" not in params:
        return None
    if "startTime" not in params or "endTime" not in params:
        raise ApiError(400, "Both start_time and end_time are needed for a time range.")
    start, end = _time(params["startTime"]), _time(params["endTime"])
    if end > datetime.now(UTC):
        raise ApiError(400, "Timestamps in the future are not allowed.")
    first, last = start.astimezone(CATALOG_TZ), (end - timedelta(microseconds=1)).astimezone(CATALOG_TZ)
    if not start < end or (first.year, first.month) != (last.year, last.month):
        raise ApiError(400, "The time range has to be within a single calendar month in America/Los_Angeles timezone.")
    return start, end


def _rfc3339(when: datetime) -> str:
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def _priced(sku: dict[str, Any], span: tuple[datetime, datetime] | None) -> dict[str, Any]:
    """``sku`` as served for ``span``: its pricing versions in the range (the one in effect at its start
    dated at the start, then each change within it), or its latest version dated an hour ago."""
    served = copy.deepcopy({k: v for k, v in sku.items() if k != TIMELINE})
    template = served["pricingInfo"][0]
    if TIMELINE in sku:
        timeline = sku[TIMELINE]
    else:
        price = template["pricingExpression"]["tieredRates"][0]["unitPrice"]
        timeline = [(template["effectiveTime"], int(price["units"]), price["nanos"])]
    versions = sorted((_time(effective), units, nanos) for effective, units, nanos in timeline)
    if span is None:
        chosen = [(datetime.now(UTC) - timedelta(hours=1), *versions[-1][1:])]
    else:
        start, end = span
        before = [v for v in versions if v[0] <= start][-1:]
        chosen = [(start, *v[1:]) for v in before] + [v for v in versions if start < v[0] < end]
    infos = []
    for effective, units, nanos in chosen:
        info = copy.deepcopy(template)
        info["effectiveTime"] = _rfc3339(effective)
        info["pricingExpression"]["tieredRates"][0]["unitPrice"].update(units=str(units), nanos=nanos)
        infos.append(info)
    served["pricingInfo"] = infos
    return served


def _make_token(path: str, offset: int) -> str:
    return base64.urlsafe_b64encode(f"{path}|{offset}".encode()).decode()


def _read_token(token: str, path: str) -> int:
    try:
        where, offset = base64.urlsafe_b64decode(token.encode()).decode().split("|")
        if where != path:
            raise ValueError
        return int(offset)
    except ValueError:
        raise ApiError(400, "Invalid page token.") from None


__all__ = ["CatalogRequest", "FakeCatalogServer"]
