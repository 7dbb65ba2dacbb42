"""A fake Cloud Logging server: the REST API v2 ``POST /v2/entries:list``, in a thread.

For tests and benchmarks that drive the real google-cloud-logging client (HTTP/JSON
transport) through an endpoint override::

    entries = job_entries(25_000, job_id="job_1")
    with FakeLoggingServer(entries, project="test-project") as server:
        server.burst(429, count=3, after_pages=5)      # pages 6's request fails 3 times first
        ... collect with endpoint=server.url ...
        server.requests[0].filter                      # what the client sent

What it implements: ``resourceNames`` (``projects/P``; unknown projects get 404, ones in
``denied_projects`` 403), ``filter`` (the subset of the Logging query language the
collector uses: comparisons ``= != < <= > >= :`` on dotted fields, quoted segments such
as ``labels."ml.googleapis.com/task_name"``, ``AND`` / ``OR`` / ``NOT`` / implicit AND,
parentheses; ``timestamp`` compares as a time; anything it cannot parse is a 400
INVALID_ARGUMENT), ``orderBy`` (``timestamp asc`` / ``timestamp desc``; equal
timestamps by ``insertId``), ``pageSize`` (default 50, 1..1000, else 400) and
``pageToken`` (opaque; must come with the same filter and order, else 400). Errors use
Google's JSON error body, so the client raises the usual ``google.api_core`` exceptions.

Faults and quota (all thread-safe, settable while running):

- :meth:`burst`: the next ``count`` requests (once ``after_pages`` pages were served)
  answer ``status`` (429 RESOURCE_EXHAUSTED, 503 UNAVAILABLE, ...).
- :meth:`fail_after`: every request after ``pages`` served pages fails until :meth:`heal`.
- :meth:`hang_after`: the first request after ``pages`` pages blocks (``hung`` is set)
  until :meth:`release`, then fails with 503; for killing a client mid-collect.
- ``quota_per_minute``: at most that many accepted requests in any ``quota_period_s``
  window (``clock`` seconds); the rest get 429 like the real per-minute quota.

Records: ``requests`` (every :class:`ListRequest`, in arrival order), ``pages_served``,
``quota_rejections``.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from tests.support.fake_google_api import ApiError, LocalJsonServer, error_body

DEFAULT_PAGE_SIZE = 50
MAX_PAGE_SIZE = 1000


# --- the filter language (the subset tierscope uses) -------------------------------------------


class FilterError(ValueError):
    pass


_TOKEN = re.compile(
    r'\s*(?:(?P<str>"(?:[^"\\]|\\.)*")|(?P<op>>=|<=|!=|=|>|<|:)|(?P<lp>\()|(?P<rp>\))|(?P<dot>\.)'
    r"|(?P<word>[A-Za-z0-9_\-/+*@]+))"
)

Predicate = Callable[[dict[str, Any], datetime], bool]


def _tokens(text: str) -> list[tuple[str, str]]:
    out, pos = [], 0
    text = text.rstrip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            raise FilterError(f"unparseable filter at character {pos}: {text[pos : pos + 20]!r}")
        kind = m.lastgroup or ""
        value = m.group(kind)
        if kind == "str":
            value = re.sub(r"\\(.)", r"\1", value[1:-1])
        out.append((kind, value))
        pos = m.end()
    return out


def parse_time(value: str) -> datetime:
    when = datetime.fromisoformat(value)
    return when.astimezone(UTC) if when.tzinfo else when.replace(tzinfo=UTC)


class _Parser:
    def __init__(self, text: str) -> None:
        self.toks = _tokens(text)
        self.i = 0

    def peek(self) -> tuple[str, str] | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self) -> tuple[str, str]:
        tok = self.peek()
        if tok is None:
            raise FilterError("unexpected end of filter")
        self.i += 1
        return tok

    def parse(self) -> Predicate:
        if not self.toks:
            return lambda entry, ts: True
        pred = self.expr()
        if self.peek() is not None:
            raise FilterError(f"unexpected {self.peek()[1]!r} in filter")  # type: ignore[index]
        return pred

    def expr(self) -> Predicate:
        parts = [self.conj()]
        while self.peek() == ("word", "OR"):
            self.take()
            parts.append(self.conj())
        return parts[0] if len(parts) == 1 else (lambda e, t: any(p(e, t) for p in parts))

    def conj(self) -> Predicate:
        parts = [self.unary()]
        while (tok := self.peek()) is not None and tok != ("word", "OR") and tok[0] != "rp":
            if tok == ("word", "AND"):
                self.take()
            parts.append(self.unary())
        return parts[0] if len(parts) == 1 else (lambda e, t: all(p(e, t) for p in parts))

    def unary(self) -> Predicate:
        tok = self.peek()
        if tok == ("word", "NOT"):
            self.take()
            inner = self.unary()
            return lambda e, t: not inner(e, t)
        if tok is not None and tok[0] == "lp":
            self.take()
            inner = self.expr()
            if self.take()[0] != "rp":
                raise FilterError("missing ')'")
            return inner
        return self.comparison()

    def comparison(self) -> Predicate:
        path = [self._segment()]
        while self.peek() is not None and self.peek()[0] == "dot":  # type: ignore[index]
            self.take()
            path.append(self._segment())
        kind, op = self.take()
        if kind != "op":
            raise FilterError(f"expected a comparison after {'.'.join(path)!r}, got {op!r}")
        kind, value = self.take()
        if kind not in ("str", "word"):
            raise FilterError(f"expected a value after {op!r}")
        if path == ["timestamp"]:
            try:
                bound = parse_time(value)
            except ValueError:
                raise FilterError(f"invalid timestamp {value!r}") from None
            return _compare_time(op, bound)
        return _compare_field(path, op, value)

    def _segment(self) -> str:
        kind, value = self.take()
        if kind not in ("word", "str") or value in ("AND", "OR", "NOT"):
            raise FilterError(f"expected a field name, got {value!r}")
        return value


def _compare_time(op: str, bound: datetime) -> Predicate:
    ops: dict[str, Callable[[datetime], bool]] = {
        "=": lambda t: t == bound,
        "!=": lambda t: t != bound,
        "<": lambda t: t < bound,
        "<=": lambda t: t <= bound,
        ">": lambda t: t > bound,
        ">=": lambda t: t >= bound,
    }
    if op not in ops:
        raise FilterError(f"operator {op!r} does not apply to timestamp")
    check = ops[op]
    return lambda entry, ts: check(ts)


def _lookup(entry: dict[str, Any], path: Sequence[str]) -> Any:
    value: Any = entry
    for name in path:
        if not isinstance(value, dict) or name not in value:
            return None
        value = value[name]
    return value


def _compare_field(path: list[str], op: str, want: str) -> Predicate:
    def check(entry: dict[str, Any], ts: datetime) -> bool:
        got = _lookup(entry, path)
        if got is None:
            return op == "!="
        got = str(got)
        if op == "=":
            return got == want
        if op == "!=":
            return got != want
        if op == ":":
            return want.lower() in got.lower()
        return {"<": got < want, "<=": got <= want, ">": got > want, ">=": got >= want}[op]

    return check


def compile_filter(text: str) -> Predicate:
    """A predicate ``(entry dict, entry timestamp) -> bool``; raises :class:`FilterError`."""
    return _Parser(text).parse()


# --- the server --------------------------------------------------------------------------------


@dataclass
class ListRequest:
    """One ``entries:list`` call as received, and what was answered (``status``, ``entries``)."""

    number: int
    resource_names: list[str]
    filter: str | None
    order_by: str | None
    page_size: int | None
    page_token: str | None
    status: int = 200
    entries: int = 0


@dataclass
class _Burst:
    status: int
    remaining: int
    after_pages: int


@dataclass
class _Stored:
    timestamp: datetime
    insert_id: str
    entry: dict[str, Any]


class FakeLoggingServer(LocalJsonServer):
    """See the module docstring. ``url`` is ``http://127.0.0.1:<port>`` once started."""

    thread_name = "fake-logging"

    def __init__(
        self,
        entries: Iterable[dict[str, Any]] = (),
        project: str = "test-project",
        *,
        projects: Iterable[str] = (),
        denied_projects: Iterable[str] = (),
        quota_per_minute: int | None = None,
        quota_period_s: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__()
        self.projects = {project, *projects}
        self.denied_projects = set(denied_projects)
        self.quota_per_minute = quota_per_minute
        self.quota_period_s = quota_period_s
        self.clock = clock
        self.requests: list[ListRequest] = []
        self.quota_rejections = 0
        self.hung = threading.Event()
        self._release = threading.Event()
        self._hang_after: int | None = None
        self._fail_after: tuple[int, int] | None = None
        self._bursts: list[_Burst] = []
        self._quota_window: deque[float] = deque()
        self._lock = threading.RLock()
        self._stored: list[_Stored] = []
        self._cache: dict[tuple[str, bool], list[int]] = {}
        #: "repeat": every page names the same next page token; "empty": pages of no entries, each with a new token.
        self.token_mode: str | None = None
        self.add_entries(entries)

    # -- data ---------------------------------------------------------------------------------

    def add_entries(self, entries: Iterable[dict[str, Any]]) -> None:
        """Add LogEntry dicts (API JSON form; ``timestamp`` and ``insertId`` required)."""
        with self._lock:
            for entry in entries:
                self._stored.append(_Stored(parse_time(entry["timestamp"]), entry["insertId"], entry))
            self._stored.sort(key=lambda s: (s.timestamp, s.insert_id))
            self._cache.clear()

    @property
    def entry_count(self) -> int:
        return len(self._stored)

    # -- faults -------------------------------------------------------------------------------

    def burst(self, status: int, count: int = 1, after_pages: int | None = None) -> None:
        """The next ``count`` requests once ``after_pages`` pages were served (default: now) fail with ``status``."""
        with self._lock:
            start = self.pages_served if after_pages is None else after_pages
            self._bursts.append(_Burst(status, count, start))

    def fail_after(self, pages: int, status: int = 503) -> None:
        """Fail every request once ``pages`` pages were served, until :meth:`heal`."""
        with self._lock:
            self._fail_after = (pages, status)

    def heal(self) -> None:
        """Stop failing: forget :meth:`fail_after`, pending bursts and a pending hang."""
        with self._lock:
            self._fail_after = None
            self._bursts.clear()
            self._hang_after = None

    def hang_after(self, pages: int) -> None:
        """Block the first request that arrives once ``pages`` pages were served (sets ``hung``)."""
        with self._lock:
            self._hang_after = pages
            self.hung.clear()
            self._release.clear()

    def release(self) -> None:
        """Let a hung request finish (it answers 503)."""
        self._release.set()

    @property
    def statuses(self) -> list[int]:
        return [r.status for r in self.requests]

    # -- lifecycle ----------------------------------------------------------------------------

    def stop(self) -> None:
        self.release()
        super().stop()

    # -- the API ------------------------------------------------------------------------------

    def answer(self, method: str, target: str, body: bytes) -> tuple[int, dict[str, Any]]:
        if method != "POST":
            return 404, error_body(404, f"no such method {method} {target}")
        return self.handle(target, body)

    def handle(self, path: str, body: bytes) -> tuple[int, dict[str, Any]]:
        """Answer one request: ``(HTTP status, JSON body)``."""
        if path.split("?")[0] != "/v2/entries:list":
            return 404, error_body(404, f"no such method {path}")
        try:
            request = json.loads(body or b"{}")
        except json.JSONDecodeError:
            return 400, error_body(400, "request body is not JSON")
        with self._lock:
            record = ListRequest(
                number=len(self.requests) + 1,
                resource_names=list(request.get("resourceNames") or []),
                filter=request.get("filter"),
                order_by=request.get("orderBy"),
                page_size=request.get("pageSize"),
                page_token=request.get("pageToken"),
            )
            self.requests.append(record)
            hang = self._hang_after is not None and self.pages_served >= self._hang_after
            if hang:
                self._hang_after = None
        if hang:
            self.hung.set()
            self._release.wait()
            record.status = 503
            return 503, error_body(503, "the server went away")
        try:
            with self._lock:
                self._faults()
                if self.token_mode and str(request.get("pageToken")).startswith(("empty-", "the-same-token")):
                    request = {**request, "pageToken": None}  # its own fake token: the first page again
                entries, token = self._page(request)
                self.pages_served += 1
        except ApiError as exc:
            record.status = exc.status
            return exc.status, error_body(exc.status, exc.message)
        if self.token_mode == "empty":
            entries, token = [], f"empty-{record.number}"
        elif self.token_mode == "repeat":
            token = "the-same-token"
        record.entries = len(entries)
        answer: dict[str, Any] = {"entries": entries}
        if token:
            answer["nextPageToken"] = token
        return 200, answer

    def _faults(self) -> None:
        for burst in self._bursts:
            if burst.remaining > 0 and self.pages_served >= burst.after_pages:
                burst.remaining -= 1
                raise ApiError(burst.status, f"injected fault ({burst.remaining} more to come)")
        if self._fail_after is not None and self.pages_served >= self._fail_after[0]:
            raise ApiError(self._fail_after[1], "injected permanent fault")
        if self.quota_per_minute is not None:
            now = self.clock()
            while self._quota_window and self._quota_window[0] <= now - self.quota_period_s:
                self._quota_window.popleft()
            if len(self._quota_window) >= self.quota_per_minute:
                self.quota_rejections += 1
                raise ApiError(
                    429,
                    "Quota exceeded for quota metric 'Read requests' and limit 'Read requests per minute' "
                    "of service 'logging.googleapis.com'",
                )
            self._quota_window.append(now)

    def _page(self, request: dict[str, Any]) -> tuple[list[dict[str, Any]], str | None]:
        names = request.get("resourceNames") or []
        if not names:
            raise ApiError(400, "resourceNames is required")
        for name in names:
            project = name.removeprefix("projects/")
            if not name.startswith("projects/") or project in self.denied_projects:
                raise ApiError(403, f"The caller does not have permission to read logs of {name}")
            if project not in self.projects:
                raise ApiError(404, f"Project {project!r} not found")
        order = (request.get("orderBy") or "timestamp asc").strip().lower()
        if order not in ("timestamp asc", "timestamp desc"):
            raise ApiError(400, f"invalid orderBy {request.get('orderBy')!r}")
        size = request.get("pageSize") or DEFAULT_PAGE_SIZE
        if not isinstance(size, int) or not 0 < size <= MAX_PAGE_SIZE:
            raise ApiError(400, f"pageSize must be between 1 and {MAX_PAGE_SIZE}, got {size!r}")
        filter_text = request.get("filter") or ""
        key = (filter_text, order == "timestamp desc")
        matching = self._cache.get(key)
        if matching is None:
            try:
                pred = compile_filter(filter_text)
            except FilterError as exc:
                raise ApiError(400, f"Invalid filter: {exc}") from None
            matching = [i for i, s in enumerate(self._stored) if pred(s.entry, s.timestamp)]
            if key[1]:
                matching.reverse()
            self._cache[key] = matching
        offset = 0
        if request.get("pageToken"):
            offset = _read_token(request["pageToken"], key)
        chunk = matching[offset : offset + size]
        end = offset + len(chunk)
        token = _make_token(key, end) if end < len(matching) else None
        return [self._stored[i].entry for i in chunk], token


def _key_digest(key: tuple[str, bool]) -> str:
    return hashlib.sha256(f"{key[0]}\x1f{key[1]}".encode()).hexdigest()[:12]


def _make_token(key: tuple[str, bool], offset: int) -> str:
    return base64.urlsafe_b64encode(f"{_key_digest(key)}:{offset}".encode()).decode()


def _read_token(token: str, key: tuple[str, bool]) -> int:
    try:
        digest, offset = base64.urlsafe_b64decode(token.encode()).decode().split(":")
        if digest != _key_digest(key):
            raise ValueError
        return int(offset)
    except ValueError:
        raise ApiError(400, "page token does not match the request's filter and order") from None


# --- entries of a fake training job ------------------------------------------------------------

#: A master, 4 workers and 3 parameter servers.
DEFAULT_REPLICAS = (
    "master-replica-0",
    *(f"worker-replica-{i}" for i in range(4)),
    *(f"ps-replica-{i}" for i in range(3)),
)
#: text: textPayload; json: tierscope's structured record as jsonPayload; message: jsonPayload.message.
PAYLOAD_KINDS = ("text", "json", "message")
START = datetime(2026, 1, 5, 9, 0, 0, tzinfo=UTC)


def _role(replica: str) -> tuple[str, int]:
    if replica.startswith("workerpool"):
        pool, index = replica.removeprefix("workerpool").split("-")
        return ("chief", "worker", "ps", "evaluator")[int(pool)], int(index)
    role, _, index = replica.split("-")
    return role, int(index)


def rfc3339(when: datetime) -> str:
    """Nanosecond RFC 3339, as the API writes it."""
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f") + "000Z"


def job_entries(
    count: int,
    job_id: str = "tierscope_job_1",
    project: str = "test-project",
    *,
    replicas: Sequence[str] = DEFAULT_REPLICAS,
    kinds: Sequence[str] = PAYLOAD_KINDS,
    tier: str | None = "STANDARD_1",
    start: datetime = START,
    same_time: int = 7,
    tick: timedelta = timedelta(milliseconds=10),
    first_step: int = 1,
) -> list[dict[str, Any]]:
    """``count`` LogEntry dicts of one training job, each holding exactly one distinct step record.

    Replicas take turns (entry ``i`` comes from ``replicas[i % len]``) and payload kinds
    rotate independently (``kinds[i % len]``); every ``same_time`` consecutive entries
    share one timestamp (``tick`` apart), so pages end in the middle of equal
    timestamps. Entry ``i`` logs global step ``first_step + i``, so no two entries are the
    same record. insertIds are hashes, so equal-timestamp order differs from ``i`` order.
    Structured records carry ``tier`` in their labels.
    """
    out = []
    per_replica: dict[str, int] = {}
    for i in range(count):
        replica = replicas[i % len(replicas)]
        local = per_replica[replica] = per_replica.get(replica, 0) + 1
        role, index = _role(replica)
        step = first_step + i
        loss = round(2.5 / (1 + step / 1000), 3)
        accuracy = round(min(0.99, 0.1 + step / 30000), 3)
        elapsed = round(local * 0.25, 3)
        rate = round(4.0 + (i % 5), 3)
        when = start + tick * (i // same_time)
        kind = kinds[i % len(kinds)]
        line = (
            f"Train [{role}/{index}], step {step}: loss: {loss:.3f}, accuracy: {accuracy:.3f} "
            f"({elapsed:.3f} sec) {rate * 8:.3f} global steps/s, {rate:.3f} local steps/s"
        )
        entry: dict[str, Any] = {
            "insertId": hashlib.sha1(f"{job_id}/{step}".encode()).hexdigest()[:16],
            "logName": f"projects/{project}/logs/{replica}",
            "resource": {
                "type": "ml_job",
                "labels": {"job_id": job_id, "task_name": replica, "project_id": project},
            },
            "severity": "INFO",
            "timestamp": rfc3339(when),
            "receiveTimestamp": rfc3339(when + timedelta(seconds=1)),
        }
        if kind == "text":
            entry["textPayload"] = line
        elif kind == "message":
            entry["jsonPayload"] = {"message": line, "python_logger": "root"}
        elif kind == "json":
            entry["jsonPayload"] = {
                "tierscope": "step",
                "message": f"step {step}",
                "run_id": job_id,
                "role": role,
                "task_index": index,
                "step": step,
                "local_step": local,
                "loss": loss,
                "accuracy": accuracy,
                "elapsed_s": elapsed,
                "global_steps_per_s": rate * 8,
                "local_steps_per_s": rate,
                "logging.googleapis.com/labels": {"run_id": job_id, **({"tier": tier} if tier else {})},
            }
        else:
            raise ValueError(f"unknown payload kind {kind!r}")
        out.append(entry)
    return out


def error_copy(entry: dict[str, Any], delay: timedelta = timedelta(microseconds=3)) -> dict[str, Any]:
    """The platform's second copy of a stdout line: severity ERROR, its own insertId and time."""
    copy = json.loads(json.dumps(entry))
    copy["severity"] = "ERROR"
    copy["insertId"] = hashlib.sha1(f"error-copy/{entry['insertId']}".encode()).hexdigest()[:16]
    copy["timestamp"] = rfc3339(parse_time(entry["timestamp"]) + delay)
    return copy


def write_export(entries: Sequence[dict[str, Any]], path: Path) -> Path:
    """Write ``entries`` as ``gcloud logging read --format=json`` does: a JSON array, newest first."""
    ordered = sorted(entries, key=lambda e: (parse_time(e["timestamp"]), e["insertId"]), reverse=True)
    path.write_text(json.dumps(ordered, indent=2) + "\n", encoding="utf-8")
    return path


__all__ = [
    "DEFAULT_REPLICAS",
    "PAYLOAD_KINDS",
    "FakeLoggingServer",
    "FilterError",
    "ListRequest",
    "compile_filter",
    "error_copy",
    "job_entries",
    "rfc3339",
    "write_export",
]
