"""Where a dataset lives: a local directory, or a prefix in a Cloud Storage bucket (``gs://bucket/prefix``).

Local datasets use :class:`pathlib.Path` and the POSIX primitives of :mod:`tierscope.atomic`
untouched (their speed and kill safety are tested). A dataset on Cloud Storage uses
:class:`GsPath`, which offers the small part of :class:`~pathlib.Path` the dataset's modules use
(``/``, ``name``, ``parent``, ``glob``, ``exists``, ``read_bytes``, ``open("rb")``, ``stat``,
``unlink``), so :mod:`.store`, :mod:`.state`, :mod:`.journal`, :mod:`.compact`, :mod:`.doctor`
and :mod:`.rewind` keep one code path, and :mod:`.durable` turns the few writes into the
object-store operations of :class:`GcsStore`:

========================  ==================================================================
local (POSIX)             Cloud Storage (:class:`GcsStore`)
========================  ==================================================================
temp file + rename        upload with ``if_generation_match=0`` (:meth:`GcsStore.write_once`):
                          an object is visible only once its upload completed, and never
                          replaces another; the client sends a CRC32C the server checks
rename over a state doc   upload with ``if_generation_match=<generation this process last saw>``
                          (:meth:`GcsStore.replace`); 0 if it saw none
rename (staged -> part)   server-side copy with ``if_generation_match=0``, then delete
unlink                    delete, generation-matched when this process knows the generation
``flock`` on ``.lock``    :class:`Lease`: a lease object with an expiry, renewed by a thread
open file (pins)          download to an unlinked local temp file, checksummed (MD5) by the
                          client: the reader's copy cannot vanish under it, and the SHA-256
                          digest in the object's name is then checked as locally
========================  ==================================================================

Why google-cloud-storage and not fsspec/gcsfs or polars' own reader: the dataset's promises rest
on generation preconditions, which only the client library exposes; one client means one
credentials story (application-default credentials, ``Client()``). Polars' native ``gs://``
reader speaks the XML API, which the test emulator does not implement (a listing answers
``501 Not Implemented``), and it would read objects a concurrent compaction may delete; the
digest check reads every byte anyway, so downloading the listed objects costs no extra read.

State documents: *fencing, not merging*. Only the holder of the lease writes state, so there is
nothing to merge; the generation precondition makes a writer that lost its lease without
noticing (paused past its expiry while another collect took over) fail with
:class:`StateConflictError` (exit 75) instead of overwriting the newer state. The same holds for
the compaction journal.

The lease (object ``.lock``): ``{"holder": ..., "expires": <unix s>, "ttl": <s>}``. Taken by
creating it with ``if_generation_match=0``, or, when its expiry has passed (or it was released),
by replacing it with ``if_generation_match=<the stale generation>`` (an expiry more than two
ttls ahead is stale too: no live holder writes one), so of two collects seeing
the same stale lease exactly one wins. A thread renews it every ``ttl / 3`` s, generation-matched;
if a renewal is refused (412: taken over) the lease is lost and every later write of this process
raises (one that cannot reach the server is tried again at the next tick), as does any
write later than two thirds of the ttl after the last successful renewal (so a holder stalled
past its expiry stops writing before another can take over; a write that itself takes longer
than a third of the ttl is the one case left uncovered: keep the ttl well above an upload's
duration). Release
writes an expired lease (the object stays, as the local ``.lock`` file does). Hosts' clocks must
agree to well within the ttl (``TIERSCOPE_LEASE_SECONDS``, default 60).
"""

from __future__ import annotations

import json
import math
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from fnmatch import fnmatchcase
from pathlib import Path, PurePosixPath
from types import SimpleNamespace
from typing import IO, Any, ClassVar

from tierscope.dataset.errors import DatasetBusyError, DatasetError
from tierscope.gcs import other_store

SCHEME = "gs://"
#: Seconds a lease lasts unless renewed; short values are for tests.
LEASE_ENV = "TIERSCOPE_LEASE_SECONDS"
DEFAULT_LEASE_S = 60.0


class StateConflictError(DatasetBusyError):
    """A generation precondition failed: another process changed the object since this one read it."""


class LeaseLostError(DatasetBusyError):
    """This process's lease expired and another collect took it over: it must stop writing."""


def is_remote(location: object) -> bool:
    return isinstance(location, GsPath)


def as_location(location: str | os.PathLike[str] | GsPath) -> Path | GsPath:
    """``location`` as a :class:`Path`, or a :class:`GsPath` for ``gs://bucket/prefix`` (also as a
    :class:`Path` has mangled it, ``gs:/bucket/prefix``, since the CLI's options are paths)."""
    if isinstance(location, GsPath):
        return location
    text = os.fspath(location)
    if text == "gs:" or text.startswith("gs:/"):
        bucket, _, key = text[len("gs:") :].lstrip("/").partition("/")
        if not bucket:
            raise DatasetError(f"'gs://{key}' names no bucket; write gs://BUCKET/PREFIX")
        return GsPath(GcsStore.for_root(bucket, key.strip("/")), key.strip("/"))
    url = other_store(text)
    if url is not None:
        raise DatasetError(f"{url} is no place tierscope keeps a dataset: give a local folder or gs://BUCKET/PREFIX")
    return Path(location)


@contextmanager
def local_file(path: Path | GsPath) -> Iterator[Path]:
    """``path`` itself, or a downloaded copy under the same name for a :class:`GsPath` (for
    readers such as pyarrow that need a local file). Raises :class:`FileNotFoundError`."""
    if not isinstance(path, GsPath):
        yield path
        return
    import tempfile  # here and in GsPath.open: a dataset on the local disk needs no temporary copies

    with tempfile.TemporaryDirectory(prefix="tierscope-gs-") as tmp:
        copy = Path(tmp) / path.name
        with copy.open("wb") as fh:
            path.store.download(path.key, fh)
        yield copy


@contextmanager
def _translated(what: str, url: str) -> Iterator[None]:
    """Google's exceptions as one line each: what failed, where, and what to do."""
    from google.api_core import exceptions as gexc
    from google.auth.exceptions import DefaultCredentialsError, RefreshError

    try:
        yield
    except gexc.PreconditionFailed:
        raise StateConflictError(
            f"{url} was changed by another process since this one read it ({what} refused, nothing overwritten); "
            "another collect may have taken over an expired lease: run again"
        ) from None
    except (DefaultCredentialsError, RefreshError) as exc:
        raise DatasetError(
            f"no usable Google Cloud credentials to {what} {url} ({_first_sentence(exc)}); "
            "run `gcloud auth application-default login` or set GOOGLE_APPLICATION_CREDENTIALS"
        ) from None
    except (gexc.Forbidden, gexc.Unauthorized) as exc:
        raise DatasetError(
            f"permission denied to {what} {url} ({_first_sentence(exc.message)}); grant the account "
            "roles/storage.objectAdmin on the bucket (objectViewer to read only)"
        ) from None
    except gexc.NotFound:
        if what in ("read", "delete"):
            raise  # the object: the caller decides
        bucket = url[len(SCHEME) :].split("/", 1)[0]
        raise DatasetError(
            f"cannot {what} {url}: bucket {bucket} does not exist; create it with "
            f"`gcloud storage buckets create {SCHEME}{bucket}` or fix --dataset"
        ) from None
    except gexc.GoogleAPICallError as exc:
        raise DatasetError(f"Cloud Storage refused to {what} {url}: {exc.code} {exc.message[:200]}") from None
    except (OSError, ConnectionError) as exc:
        if isinstance(exc, FileNotFoundError):
            raise
        raise DatasetError(f"cannot reach Cloud Storage to {what} {url} ({type(exc).__name__}: {exc})") from None


def _first_sentence(exc: object) -> str:
    text = (str(exc).strip().splitlines() or [""])[0]
    return text.split(". ", 1)[0].rstrip(".")[:200]


class GcsStore:
    """The objects of one bucket, with the generation this process last read (:meth:`read`) or
    wrote (:meth:`replace`) of each state document, for the preconditions of :meth:`replace` and
    :meth:`delete`. Data objects are write-once and never fenced: deleting one (compaction,
    quarantine) needs no precondition. One per dataset and process (:meth:`for_root`)."""

    _stores: ClassVar[dict[str, GcsStore]] = {}

    def __init__(self, bucket: str) -> None:
        self.name = bucket
        self._bucket: Any = None
        self._seen: dict[str, int] = {}
        #: Set by :class:`Lease` when a renewal failed: every write raises from then on.
        self.lease_lost = False
        #: While a :class:`Lease` is held: the monotonic time after which writes are refused
        #: (its last renewal's expiry less a margin), so a stalled holder stops before another
        #: collect can take the lease over.
        self.write_deadline: float | None = None
        self._guard = threading.Lock()

    @classmethod
    def for_root(cls, bucket: str, root: str) -> GcsStore:
        """The store of the dataset at ``gs://bucket/root`` in this process (one each, so two
        datasets in one bucket never share a lease's write deadline)."""
        return cls._stores.setdefault(f"{bucket}/{root}", cls(bucket))

    def url(self, key: str) -> str:
        return f"{SCHEME}{self.name}/{key}" if key else f"{SCHEME}{self.name}"

    def bucket(self, fresh: bool = False) -> Any:
        """The client's bucket; ``fresh`` gives one of a new client (for another thread)."""
        if self._bucket is not None and not fresh:
            return self._bucket
        with _translated("connect to", self.url("")):
            from google.cloud import storage  # only for gs:// datasets: keeps it off local start-up

            client = storage.Client()
        try:
            bucket = client.bucket(self.name)
        except ValueError as exc:  # the client checks the name before any request
            raise DatasetError(f"{self.url('')} is not a bucket name ({exc}); fix --dataset") from None
        if not fresh:
            self._bucket = bucket
        return bucket

    def _check_writable(self, key: str) -> None:
        if self.lease_lost or (self.write_deadline is not None and time.monotonic() > self.write_deadline):
            raise LeaseLostError(
                f"the lease of {self.url('')} expired and another collect took it over; {key} was not written: "
                "run again (what was stored is kept)"
            )

    def seen(self, key: str) -> int | None:
        return self._seen.get(key)

    def stat(self, key: str) -> SimpleNamespace | None:
        """``st_size`` and ``st_mtime_ns``/``st_ino`` (its generation) of ``key``, or None (not noted)."""
        with _translated("read", self.url(key)):
            blob = self.bucket().get_blob(key)
        if blob is None:
            return None
        return SimpleNamespace(st_size=int(blob.size), st_mtime_ns=int(blob.generation), st_ino=int(blob.generation))

    def list(self, prefix: str) -> list[tuple[str, int]]:
        """``(key, size)`` of every object whose key starts with ``prefix``."""
        with _translated("list", self.url(prefix)):
            return [(b.name, int(b.size)) for b in self.bucket().list_blobs(prefix=prefix)]

    def read(self, key: str) -> bytes:
        """The bytes of ``key``, noting their generation. Raises :class:`FileNotFoundError`.

        The generation is asked for first and the download pinned to it (the emulator sends no
        ``x-goog-generation`` header), so the bytes and the generation noted always agree.
        """
        from google.api_core.exceptions import NotFound

        for _ in range(10):
            found = self.stat(key)
            if found is None:
                self._seen[key] = 0
                raise FileNotFoundError(self.url(key))
            try:
                with _translated("read", self.url(key)):
                    data = self.bucket().blob(key).download_as_bytes(checksum="md5", if_generation_match=found.st_ino)
                self._seen[key] = found.st_ino
                return data
            except (NotFound, StateConflictError):
                continue  # replaced or deleted between the two requests: ask again
        raise DatasetError(f"{self.url(key)} kept changing while being read; try again")

    def download(self, key: str, handle: IO[bytes]) -> None:
        """Write the bytes of ``key`` to ``handle``, MD5-checked. Raises :class:`FileNotFoundError`."""
        from google.api_core.exceptions import NotFound

        try:
            with _translated("read", self.url(key)):
                self.bucket().blob(key).download_to_file(handle, checksum="md5")
        except NotFound:
            raise FileNotFoundError(self.url(key)) from None

    def write_once(self, key: str, source: Path | bytes) -> int:
        """Create ``key`` from a local file or bytes, only if no object has that name; returns
        its generation. Raises :class:`StateConflictError` if one has."""
        self._check_writable(key)
        blob = self.bucket().blob(key)
        with _translated("create", self.url(key)):
            if isinstance(source, Path):
                blob.upload_from_filename(str(source), if_generation_match=0, checksum="crc32c")
            else:
                blob.upload_from_string(source, if_generation_match=0, checksum="crc32c")
        return int(blob.generation)

    def replace(self, key: str, data: bytes, generation: int | None = None) -> int:
        """Write ``key`` only if its generation is still ``generation`` (default: the one this
        process last saw, 0 = none); returns the new one. Raises :class:`StateConflictError`."""
        self._check_writable(key)
        match = self._seen.get(key, 0) if generation is None else generation
        blob = self.bucket().blob(key)
        with _translated("write", self.url(key)):
            blob.upload_from_string(data, if_generation_match=match, checksum="crc32c")
        self._seen[key] = int(blob.generation)
        return self._seen[key]

    def copy(self, source: str, target: str) -> None:
        """Copy ``source`` to a new object ``target`` on the server (``if_generation_match=0``)."""
        self._check_writable(target)
        bucket = self.bucket()
        with _translated("copy to", self.url(target)):
            bucket.copy_blob(bucket.blob(source), bucket, target, if_generation_match=0)

    def delete(self, key: str, missing_ok: bool = True) -> bool:
        """Delete ``key``, generation-matched if this process has seen it; True if it existed."""
        from google.api_core.exceptions import NotFound

        self._check_writable(key)
        seen = self._seen.get(key)
        try:
            with _translated("delete", self.url(key)):
                self.bucket().blob(key).delete(if_generation_match=seen or None)
        except NotFound:
            if not missing_ok:
                raise FileNotFoundError(self.url(key)) from None
            return False
        finally:
            self._seen.pop(key, None)
        return True


class GsPath:
    """An object (or a "directory": a key prefix) in a bucket, shaped like :class:`~pathlib.Path`.

    ``str()`` gives ``gs://bucket/key``. It deliberately has no ``__fspath__``: a local file
    function handed one fails instead of writing beside the working directory.
    """

    __slots__ = ("key", "store")

    def __init__(self, store: GcsStore, key: str) -> None:
        self.store = store
        self.key = key.strip("/")

    # --- pure path operations
    def __truediv__(self, other: str | PurePosixPath) -> GsPath:
        tail = PurePosixPath(other).as_posix()
        return GsPath(self.store, f"{self.key}/{tail}" if self.key else tail)

    def __str__(self) -> str:
        return self.store.url(self.key)

    def __repr__(self) -> str:
        return f"GsPath({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, GsPath) and (other.store.name, other.key) == (self.store.name, self.key)

    def __hash__(self) -> int:
        return hash((self.store.name, self.key))

    def __lt__(self, other: GsPath) -> bool:
        return (self.store.name, self.key) < (other.store.name, other.key)

    @property
    def _pure(self) -> PurePosixPath:
        return PurePosixPath(self.key or "/")

    @property
    def name(self) -> str:
        return self._pure.name

    @property
    def stem(self) -> str:
        return self._pure.stem

    @property
    def suffix(self) -> str:
        return self._pure.suffix

    @property
    def parts(self) -> tuple[str, ...]:
        return tuple(self.key.split("/")) if self.key else ()

    @property
    def parent(self) -> GsPath:
        return GsPath(self.store, self.key.rpartition("/")[0])

    @property
    def parents(self) -> list[GsPath]:
        found, path = [], self
        while path.key:
            path = path.parent
            found.append(path)
        return found

    def with_name(self, name: str) -> GsPath:
        return self.parent / name

    def relative_to(self, other: GsPath) -> PurePosixPath:
        if other.store.name != self.store.name or not (not other.key or self.key.startswith(other.key + "/")):
            raise ValueError(f"{self} is not inside {other}")
        return PurePosixPath(self.key[len(other.key) :].lstrip("/"))

    def as_posix(self) -> str:
        return str(self)

    # --- object-store operations
    def _children_prefix(self) -> str:
        return f"{self.key}/" if self.key else ""

    def exists(self) -> bool:
        return self.is_file() or self.is_dir()

    def is_file(self) -> bool:
        return bool(self.key) and self.store.stat(self.key) is not None

    def is_dir(self) -> bool:
        prefix = self._children_prefix()
        with _translated("list", self.store.url(prefix)):
            return any(True for _ in self.store.bucket().list_blobs(prefix=prefix, max_results=1))

    def mkdir(self, parents: bool = False, exist_ok: bool = False) -> None:
        """Nothing to do: a "directory" exists once an object is under it."""

    def glob(self, pattern: str) -> Iterator[GsPath]:
        """The objects under this prefix whose relative key matches ``pattern`` segment by
        segment (``*`` never crosses a ``/``)."""
        want = pattern.split("/")
        prefix = self._children_prefix()
        for key, _ in self.store.list(prefix):
            parts = key[len(prefix) :].split("/")
            if len(parts) == len(want) and all(fnmatchcase(p, w) for p, w in zip(parts, want, strict=True)):
                yield GsPath(self.store, key)

    def stat(self) -> SimpleNamespace:
        found = self.store.stat(self.key)
        if found is None:
            raise FileNotFoundError(str(self))
        return found

    def read_bytes(self) -> bytes:
        return self.store.read(self.key)

    def read_text(self, encoding: str = "utf-8") -> str:
        return self.read_bytes().decode(encoding)

    def open(self, mode: str = "rb") -> IO[bytes]:
        """A local, unlinked copy of the object, open for reading from its start (so it stays
        readable whatever happens to the object). Raises :class:`FileNotFoundError`."""
        if mode != "rb":
            raise ValueError(f"{self} opens only for reading ('rb'), not {mode!r}")
        import tempfile

        handle = tempfile.TemporaryFile(prefix="tierscope-gs-")  # noqa: SIM115 (the caller closes it)
        try:
            self.store.download(self.key, handle)
        except BaseException:
            handle.close()
            raise
        handle.seek(0)
        return handle

    def unlink(self, missing_ok: bool = False) -> None:
        self.store.delete(self.key, missing_ok=missing_ok)


def lease_seconds() -> float:
    """The lease's ttl: ``TIERSCOPE_LEASE_SECONDS`` (positive seconds), default 60."""
    raw = os.environ.get(LEASE_ENV)
    if not raw:
        return DEFAULT_LEASE_S
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not value > 0:
        raise DatasetError(f"{LEASE_ENV}={raw!r} is not a positive number of seconds; unset it or give e.g. 60")
    return value


class LeaseBusy(Exception):
    """The lease is held by another process and its expiry has not passed."""


def _number(value: object, default: float) -> float:
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return default
    return number if math.isfinite(number) else default


def _live(doc: dict[str, Any], ttl: float) -> bool:
    """Whether the lease document ``doc`` holds the lease now: its expiry not passed, and not
    further ahead than two of its ttls (``ttl`` where it names none). A holder writes now + ttl
    and clocks agree to well within a ttl, so a later expiry is no live holder's (a clock set
    years ahead, a hand-edited lease): it would lock the dataset for good. Taking it over is
    safe: such a holder's next renewal is generation-matched and fails."""
    now = time.time()
    own_ttl = _number(doc.get("ttl"), ttl)
    return now < _number(doc.get("expires"), 0.0) <= now + 2 * (own_ttl if own_ttl > 0 else ttl)


class Lease:
    """The dataset lock on Cloud Storage: the lease object ``path`` (see the module docstring).

    :meth:`acquire` waits up to ``timeout`` seconds, then raises :class:`LeaseBusy`.
    """

    def __init__(self, path: GsPath, timeout: float, ttl: float | None = None) -> None:
        self.path = path
        self.timeout = timeout
        self.ttl = lease_seconds() if ttl is None else ttl
        import socket  # here: a dataset on the local disk never takes this lock
        import uuid

        self.holder = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self.generation = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _doc(self, expires: float) -> bytes:
        return json.dumps({"holder": self.holder, "expires": expires, "ttl": self.ttl}).encode()

    def _current(self) -> tuple[dict[str, Any] | None, int]:
        """The lease document (None if unreadable) and its generation (0: no lease object)."""
        blob = self.path.store.bucket().get_blob(self.path.key)
        if blob is None:
            return None, 0
        generation = int(blob.generation)  # before the download, which may reset the properties
        try:
            doc = json.loads(blob.download_as_bytes(if_generation_match=generation))
        except Exception:  # unreadable, or replaced since: decided by the precondition below
            doc = None
        return (doc if isinstance(doc, dict) else None), generation

    def _try(self) -> bool:
        from google.api_core.exceptions import PreconditionFailed

        store, key = self.path.store, self.path.key
        started = time.monotonic()
        with _translated("take the lease", str(self.path)):
            doc, generation = self._current()
            if generation and doc is not None and _live(doc, self.ttl):
                return False
            blob = store.bucket().blob(key)
            try:
                blob.upload_from_string(self._doc(time.time() + self.ttl), if_generation_match=generation)
            except PreconditionFailed:
                return False  # another collect took it first
        self.generation = int(blob.generation)
        store.lease_lost = False
        self._renewed(started)
        return True

    def _renewed(self, started: float) -> None:
        # A third of the ttl kept in hand: the longest a write may take and still end before expiry.
        self.path.store.write_deadline = started + self.ttl * 2 / 3

    def acquire(self) -> None:
        deadline = time.monotonic() + self.timeout
        while not self._try():
            left = deadline - time.monotonic()
            if left <= 0:
                raise LeaseBusy(str(self.path))
            time.sleep(min(0.25, left))
        self._stop.clear()
        self._thread = threading.Thread(target=self._renew, name="tierscope-lease", daemon=True)
        self._thread.start()

    def _renew(self) -> None:
        from google.api_core.exceptions import PreconditionFailed

        bucket = self.path.store.bucket(fresh=True)  # a client of its own: clients are not thread-safe
        while not self._stop.wait(self.ttl / 3):
            blob = bucket.blob(self.path.key)
            started = time.monotonic()
            try:
                blob.upload_from_string(self._doc(time.time() + self.ttl), if_generation_match=self.generation)
                self.generation = int(blob.generation)
                self._renewed(started)
            except PreconditionFailed:  # another collect took it over: lost for good
                if not self._stop.is_set():
                    self.path.store.lease_lost = True
                return
            except Exception:  # unreachable for now: try again; the write deadline stops writes meanwhile
                continue

    def release(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self.path.store.write_deadline = None
        if self.path.store.lease_lost:
            return
        # An expired lease, not a deleted one: the object stays, as the local .lock file does.
        # If this fails the lease was lost meanwhile, and expires by itself.
        with suppress(Exception):
            self.path.store.bucket().blob(self.path.key).upload_from_string(
                json.dumps({"holder": None, "expires": 0, "ttl": self.ttl}).encode(),
                if_generation_match=self.generation,
            )
