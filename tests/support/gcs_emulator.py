"""A real Cloud Storage server on 127.0.0.1 for the tests: gcp-storage-emulator (PyPI), run in
its own process, with the JSON API's preconditions added.

Why the additions: gcp-storage-emulator stores and serves objects faithfully but ignores
``ifGenerationMatch`` and its siblings, and tierscope's dataset on object storage rests on
them (write-once parts, state documents and the lease lock taken with
``ifGenerationMatch=0``). The checks below follow the documented semantics
(https://cloud.google.com/storage/docs/request-preconditions, read 2026-12-01): a failed
precondition answers ``412 Precondition Failed`` and changes nothing; ``ifGenerationMatch=0``
means "only if no live object has this name". The emulator's HTTP server handles one request
at a time, so a check and the write it guards cannot interleave with another request.

Use from a test::

    with running_emulator() as emulator:      # sets nothing globally
        client = emulator.client()            # google.cloud.storage.Client
        env = emulator.env                    # STORAGE_EMULATOR_HOST etc. for subprocesses

or the ``gcs_emulator`` fixture (tests/conftest.py). Run by hand:
``python -m tests.support.gcs_emulator --port 9023``.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http import HTTPStatus
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]

#: The precondition query parameters of the JSON API.
PRECONDITIONS = ("ifGenerationMatch", "ifGenerationNotMatch", "ifMetagenerationMatch", "ifMetagenerationNotMatch")


def _unmet(conditions: dict[str, int], current: dict[str, Any] | None) -> bool:
    """True when any of ``conditions`` does not hold for ``current`` (None: no live object)."""
    generation = int(current["generation"]) if current else 0
    metageneration = int(current["metageneration"]) if current else None
    for name, value in conditions.items():
        if name == "ifGenerationMatch" and generation != value:
            return True
        if name == "ifGenerationNotMatch" and generation == value:
            return True
        if name == "ifMetagenerationMatch" and metageneration != value:
            return True
        if name == "ifMetagenerationNotMatch" and (metageneration is None or metageneration == value):
            return True
    return False


def _conditions(query: dict[str, list[str]]) -> dict[str, int]:
    return {name: int(query[name][0]) for name in PRECONDITIONS if name in query}


def _install_preconditions() -> None:
    """Wrap the emulator's object handlers so that unmet preconditions answer 412."""
    from gcp_storage_emulator import server
    from gcp_storage_emulator.exceptions import NotFound
    from gcp_storage_emulator.handlers import objects

    # Conditions of a resumable upload are given when it starts and checked when it completes.
    pending: dict[str, dict[str, int]] = {}

    def current(storage: Any, bucket: str, name: str) -> dict[str, Any] | None:
        try:
            return storage.get_file_obj(bucket, name)
        except NotFound:
            return None

    def refuse(response: Any) -> None:
        response.status = HTTPStatus.PRECONDITION_FAILED
        response.json(
            {
                "error": {
                    "code": 412,
                    "message": "At least one of the pre-conditions you specified did not hold.",
                    "errors": [{"reason": "conditionNotMet", "domain": "global"}],
                }
            }
        )

    def upload_name(request: Any) -> str | None:
        if "name" in request.query:
            return request.query["name"][0]
        data = request.data
        if isinstance(data, dict):
            meta = data.get("meta")
            return (meta or {}).get("name") if "meta" in data else data.get("name")
        return None

    def guarded_insert(handler: Callable[..., None]) -> Callable[..., None]:
        @functools.wraps(handler)
        def insert(request: Any, response: Any, storage: Any, *args: Any, **kwargs: Any) -> None:
            conditions = _conditions(request.query)
            if "upload_id" not in request.query and conditions:
                name = upload_name(request)
                if name is not None and _unmet(conditions, current(storage, request.params["bucket_name"], name)):
                    refuse(response)
                    return
            handler(request, response, storage, *args, **kwargs)
            location = response._headers.get("Location", "")
            if conditions and "upload_id=" in location:
                pending[location.rsplit("upload_id=", 1)[1].split("&")[0]] = conditions

        return insert

    def guarded_partial(handler: Callable[..., None]) -> Callable[..., None]:
        @functools.wraps(handler)
        def upload_partial(request: Any, response: Any, storage: Any, *args: Any, **kwargs: Any) -> None:
            upload_id = request.query.get("upload_id", [""])[0]
            conditions = pending.get(upload_id)
            if conditions:
                try:
                    obj = storage.get_resumable_file_obj(upload_id)
                except NotFound:
                    obj = None
                if obj is not None and _unmet(conditions, current(storage, obj["bucket"], obj["name"])):
                    pending.pop(upload_id, None)
                    refuse(response)
                    return
            handler(request, response, storage, *args, **kwargs)
            if response.status == HTTPStatus.OK:
                pending.pop(upload_id, None)

        return upload_partial

    def guarded_object(handler: Callable[..., None]) -> Callable[..., None]:
        @functools.wraps(handler)
        def on_object(request: Any, response: Any, storage: Any, *args: Any, **kwargs: Any) -> None:
            conditions = _conditions(request.query)
            if conditions:
                name = request.params["object_id"]
                if _unmet(conditions, current(storage, request.params["bucket_name"], name)):
                    refuse(response)
                    return
            handler(request, response, storage, *args, **kwargs)

        return on_object

    wrappers = {
        objects.insert: guarded_insert(objects.insert),
        objects.upload_partial: guarded_partial(objects.upload_partial),
        objects.delete: guarded_object(objects.delete),
        objects.patch: guarded_object(objects.patch),
        objects.get: guarded_object(objects.get),
        objects.download: guarded_object(objects.download),
    }
    server.HANDLERS = tuple(
        (regex, {method: wrappers.get(fn, fn) for method, fn in handlers.items()})
        for regex, handlers in server.HANDLERS
    )
    # The router falls back to objects.insert for uploads posted without the /upload prefix.
    objects.insert = wrappers[objects.insert]


def serve(port: int, host: str = "127.0.0.1") -> None:
    """Run the emulator in this process until killed (in memory: nothing outlives it)."""
    _install_preconditions()
    from gcp_storage_emulator.server import create_server

    create_server(host, port, in_memory=True).run()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass(frozen=True)
class Emulator:
    """A running emulator: its endpoint and the environment that points clients at it."""

    endpoint: str
    process: subprocess.Popen[bytes]

    @property
    def env(self) -> dict[str, str]:
        """Variables for a subprocess (tierscope itself, gcsfs, google-cloud-storage)."""
        return {
            "STORAGE_EMULATOR_HOST": self.endpoint,
            # gcsfs otherwise asks the (absent) gRPC storage-control API for the bucket type,
            # and waits 60 s for it, on every new bucket.
            "GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT": "false",
            "GOOGLE_CLOUD_PROJECT": "tierscope-test",
        }

    def client(self) -> Any:
        """A ``google.cloud.storage.Client`` talking to the emulator, anonymously."""
        from google.auth.credentials import AnonymousCredentials
        from google.cloud import storage

        return storage.Client(
            project="tierscope-test",
            credentials=AnonymousCredentials(),
            client_options={"api_endpoint": self.endpoint},
        )

    def bucket(self, name: str) -> Any:
        """Create bucket ``name`` and return it. The emulator lives for the whole session: each test
        takes a name no other test uses (409 Conflict otherwise), which also keeps tests apart."""
        return self.client().create_bucket(name)

    def wipe(self) -> None:
        """Delete every bucket and object."""
        urllib.request.urlopen(f"{self.endpoint}/wipe", timeout=10).read()


@contextlib.contextmanager
def running_emulator(timeout_s: float = 30.0) -> Iterator[Emulator]:
    """Start the emulator on a free loopback port; stop it (SIGKILL if needed) on exit.

    Raises ``RuntimeError`` when it does not answer its health check within ``timeout_s``.
    """
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.support.gcs_emulator", "--port", str(port)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    endpoint = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                urllib.request.urlopen(f"{endpoint}/", timeout=1).read()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"the GCS emulator did not start on {endpoint}") from None
                time.sleep(0.05)
        yield Emulator(endpoint, process)
    finally:
        process.terminate()
        try:
            process.wait(5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=9023)
    serve(parser.parse_args().port)


if __name__ == "__main__":
    main()
