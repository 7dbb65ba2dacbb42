"""A minimal Chrome DevTools Protocol client over ``--remote-debugging-pipe`` (no websocket, no
Playwright, no browser download): enough to load a page headless with the network cut off,
record every request, console message, exception and dialog, evaluate JavaScript and take
a screenshot. Used by the report's browser test; messages are JSON separated by NUL bytes
on file descriptors 3 (to the browser) and 4 (from it).
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import queue
import shutil
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: The flags headless Chromium needs here, plus ones that make any network request fail fast.
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--no-first-run",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--disable-default-apps",
    "--mute-audio",
    "--proxy-server=http://127.0.0.1:9",  # "the network is off": nothing is reachable
    "--host-resolver-rules=MAP * ~NOTFOUND",
    "--remote-debugging-pipe",
)


def find_chromium() -> str | None:
    """The chromium binary (``$CHROMIUM``, ``chromium`` on PATH, or Debian's path), or None."""
    for candidate in (os.environ.get("CHROMIUM"), shutil.which("chromium"), "/usr/bin/chromium"):
        if candidate and Path(candidate).exists():
            return candidate
    return None


@dataclass
class PageLog:
    """What a page did: URLs requested, console errors, uncaught exceptions, dialogs opened."""

    requests: list[str] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)
    exceptions: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)


class CDPError(RuntimeError):
    """The browser answered a command with an error, died, or did not answer in time."""


class Browser:
    """A headless chromium driven over a pipe. Use as a context manager. Tests share one
    (``tests/reports/conftest.py``); each closes the tabs it opened."""

    def __init__(self, binary: str, user_data_dir: Path, timeout: float = 15.0) -> None:
        self.timeout = timeout
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()

        def wire_pipes() -> None:  # in the child: the protocol's fixed descriptors 3 and 4
            # Move both ends above 4 first: a pipe end may itself be 3 or 4 (and dup2 onto itself
            # would keep its close-on-exec flag).
            high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in (to_browser_r, from_browser_w)]
            os.dup2(high[0], 3)
            os.dup2(high[1], 4)

        self.proc = subprocess.Popen(
            [binary, *FLAGS, f"--user-data-dir={user_data_dir}", "about:blank"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=wire_pipes,
            close_fds=False,
        )
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._next_id = 0
        self._replies: dict[int, queue.Queue[dict[str, Any]]] = {}
        self._lock = threading.Lock()
        self.events: queue.Queue[dict[str, Any]] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        buffer = b""
        while chunk := os.read(self._from_browser, 1 << 16):
            buffer += chunk
            *messages, buffer = buffer.split(b"\0")
            for raw in messages:
                message = json.loads(raw)
                if "id" in message:
                    with self._lock:
                        box = self._replies.get(message["id"])
                    if box is not None:
                        box.put(message)
                else:
                    self.events.put(message)

    def send(self, method: str, params: dict[str, Any] | None = None, session: str | None = None) -> dict[str, Any]:
        """Send one command and wait for its result. Raises :class:`CDPError`."""
        with self._lock:
            self._next_id += 1
            ident = self._next_id
            box: queue.Queue[dict[str, Any]] = queue.Queue()
            self._replies[ident] = box
        message: dict[str, Any] = {"id": ident, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        try:
            reply = box.get(timeout=self.timeout)
        except queue.Empty:
            raise CDPError(f"{method}: no answer within {self.timeout} s") from None
        if "error" in reply:
            raise CDPError(f"{method}: {reply['error']}")
        return reply.get("result", {})

    def close_pages(self, keep: set[str]) -> None:
        """Close every tab but those whose target ids are in ``keep`` (the tabs a test opened)."""
        for target in self.send("Target.getTargets")["targetInfos"]:
            if target["type"] == "page" and target["targetId"] not in keep:
                self.send("Target.closeTarget", {"targetId": target["targetId"]})

    def page_ids(self) -> set[str]:
        """The target ids of the open tabs."""
        return {t["targetId"] for t in self.send("Target.getTargets")["targetInfos"] if t["type"] == "page"}

    def close(self) -> None:
        with contextlib.suppress(CDPError, OSError):  # the browser may already be gone
            self.send("Browser.close")
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._to_browser)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Page:
    """One tab: :meth:`load` a URL, :meth:`evaluate` JavaScript, :meth:`screenshot`; :attr:`log` collects events."""

    def __init__(self, browser: Browser, width: int = 1280, height: int = 900) -> None:
        self.browser = browser
        self.log = PageLog()
        target = browser.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = browser.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.send(f"{domain}.enable")
        # The browser serves many tests: a tab loads its page as a fresh profile would, never from the cache.
        self.send("Network.setCacheDisabled", {"cacheDisabled": True})
        self.send(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
        )
        self.width = width

    def send(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        return self.browser.send(method, params, self.session)

    def _drain(self, until: str | None = None, timeout: float = 0.0) -> bool:
        """Record queued events; with ``until``, wait up to ``timeout`` s for that event. True if it came."""
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            try:
                event = (
                    self.browser.events.get(timeout=max(remaining, 0.0)) if until else self.browser.events.get_nowait()
                )
            except queue.Empty:
                return False
            if event.get("sessionId") != self.session:
                continue
            self._record(event)
            if until and event["method"] == until:
                return True

    def _record(self, event: dict[str, Any]) -> None:
        method, params = event["method"], event.get("params", {})
        if method == "Network.requestWillBeSent":
            self.log.requests.append(params["request"]["url"])
        elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            self.log.console_errors.append(" ".join(str(a.get("value", a.get("description"))) for a in params["args"]))
        elif method == "Runtime.exceptionThrown":
            details = params["exceptionDetails"]
            self.log.exceptions.append(details.get("exception", {}).get("description") or details.get("text", ""))
        elif method == "Log.entryAdded" and params["entry"]["level"] == "error":
            self.log.console_errors.append(f"{params['entry'].get('url', '')}: {params['entry']['text']}")
        elif method == "Page.javascriptDialogOpening":
            self.log.dialogs.append(params.get("message", ""))
            self.send("Page.handleJavaScriptDialog", {"accept": True})

    def load(self, url: str, timeout: float = 10.0) -> None:
        """Navigate to ``url`` and wait for its load event. Raises :class:`CDPError` on a timeout."""
        self.send("Page.navigate", {"url": url})
        if not self._drain(until="Page.loadEventFired", timeout=timeout):
            raise CDPError(f"{url} did not finish loading within {timeout} s")

    def evaluate(self, expression: str) -> Any:
        """The JSON value of a JavaScript expression (awaited if it is a promise)."""
        result = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True})
        self._drain()
        if "exceptionDetails" in result:
            raise CDPError(f"evaluate failed: {result['exceptionDetails'].get('text')}")
        return result["result"].get("value")

    def wait_for(self, expression: str, timeout: float = 10.0) -> bool:
        """Poll ``expression`` until it is truthy; False after ``timeout`` s."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.evaluate(expression):
                return True
            time.sleep(0.05)
        return False

    def screenshot(self, path: Path) -> Path:
        """A PNG of the whole page (not just the viewport) at ``path``."""
        height = self.evaluate("Math.ceil(document.documentElement.scrollHeight)")
        self.send(
            "Emulation.setDeviceMetricsOverride",
            {"width": self.width, "height": int(height), "deviceScaleFactor": 1, "mobile": False},
        )
        data = self.send("Page.captureScreenshot", {"format": "png"})["data"]
        path.write_bytes(base64.b64decode(data))
        self._drain()
        return path
