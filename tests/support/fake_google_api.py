"""What the fake Google API servers share: Google's JSON error body, and a JSON server on 127.0.0.1 in a
thread whose answers can be cut mid-body.

A subclass answers each request in :meth:`LocalJsonServer.answer` (``(HTTP status, JSON body)``) and
counts the pages it served in ``pages_served`` (:meth:`LocalJsonServer.cut_bodies` counts from it).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

#: The status names Google's APIs write in an error body, by HTTP status.
STATUS_NAMES = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}


class ApiError(Exception):
    """What a fake server raises to answer ``status`` with Google's error body saying ``message``."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def error_body(status: int, message: str) -> dict[str, Any]:
    """Google's JSON error body, from which the clients raise the usual ``google.api_core`` exceptions."""
    return {
        "error": {"code": status, "message": message, "status": STATUS_NAMES.get(status, HTTPStatus(status).phrase)}
    }


class LocalJsonServer:
    """A JSON API on ``url`` (``http://127.0.0.1:<port>``) between :meth:`start` and :meth:`stop` (or as
    a context manager). ``rewrite`` changes each body before it is sent (JSON ``json.dumps`` cannot
    write, such as ``1e400``)."""

    #: The serving thread's name.
    thread_name = "fake-google-api"

    def __init__(self) -> None:
        self.pages_served = 0
        #: The port to listen on (0: any free one), read by :meth:`start`.
        self.port = 0
        self.rewrite: Callable[[bytes], bytes] | None = None
        self._cuts = 0
        self._cuts_after = 0
        self._cut_lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None

    def answer(self, method: str, target: str, body: bytes) -> tuple[int, dict[str, Any]]:
        """``(HTTP status, JSON body)`` for one request: ``target`` is the path and query."""
        raise NotImplementedError

    def cut_bodies(self, count: int = 1, after_pages: int | None = None) -> None:
        """The next ``count`` successful answers once ``after_pages`` pages were served (default: now) send
        half their body under the full Content-Length and close the connection: the client sees the
        response cut mid-body (IncompleteRead)."""
        with self._cut_lock:
            self._cuts += count
            self._cuts_after = self.pages_served if after_pages is None else after_pages

    def _take_cut(self, served_before: int) -> bool:
        with self._cut_lock:
            if self._cuts <= 0 or served_before < self._cuts_after:
                return False
            self._cuts -= 1
            return True

    def start(self) -> Self:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _serve(self, method: str) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                if len(body) < length:
                    # the client died sending it (a SIGKILLed sweep): a request that never arrived whole is
                    # none, as for a real server, which drops the connection unanswered
                    self.close_connection = True
                    return
                served_before = server.pages_served
                status, payload = server.answer(method, self.path, body)
                data = json.dumps(payload).encode("utf-8")
                if server.rewrite is not None:
                    data = server.rewrite(data)
                self.send_response(status)
                self.send_header("Content-Type", "application/json; charset=UTF-8")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if status == 200 and server._take_cut(served_before):
                    self.wfile.write(data[: len(data) // 2])
                    self.wfile.flush()
                    self.close_connection = True
                    return
                self.wfile.write(data)

            def do_GET(self) -> None:
                self._serve("GET")

            def do_POST(self) -> None:
                self._serve("POST")

        self._httpd = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self._httpd.daemon_threads = True
        threading.Thread(target=self._httpd.serve_forever, name=self.thread_name, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        if self._httpd is None:
            raise RuntimeError("the fake server is not running; call start()")
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"
