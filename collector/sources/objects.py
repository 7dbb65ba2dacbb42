"""Log objects on Cloud Storage (``gs://`` URLs): what a URL names, and each object as a stream.

A URL names one object, a prefix (a "directory": ``gs://bucket/jobs/job42/``, every object
under it, at any depth) or a glob (``gs://bucket/logs/*.log``). An object is opened as a
seekable binary stream that fetches blocks on demand (gcsfs' read-ahead cache, 5 MiB), so
reading a 3 GiB sink export holds a block and a batch in memory, never the object.

Objects are immutable: a log that "grows" on Cloud Storage is a new generation of the same
name (a rewrite) or new objects (a sink's next hour). The generation is what identifies the
bytes read (:mod:`tierscope.collector.readers.logs`). Every failure is an
:class:`~tierscope.collector.errors.InputError` of one line (:func:`tierscope.gcs.problem`),
except missing credentials (:class:`tierscope.gcs.CloudStorageError`: nothing can be read).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any, BinaryIO

from tierscope import gcs
from tierscope.collector.errors import InputError, MissingInputError

#: Characters that make a URL a glob (fsspec's).
GLOB_CHARS = "*?["


@dataclass(frozen=True)
class StoredObject:
    """One object: its ``gs://`` URL, size in bytes, generation and last update (UTC)."""

    url: str
    size: int
    generation: str
    updated: datetime | None

    @property
    def name(self) -> str:
        """The last part of the object's name (``08:00:00_08:59:59_S0.json``)."""
        return self.url.rsplit("/", 1)[-1]


class ObjectURL(str):
    """An object's ``gs://`` URL that remembers what its listing said (size, generation), so a
    collect of a bucket of a thousand unchanged objects costs one listing, not a request each.
    What it remembers is the listing's: list again for each collect."""

    stored: StoredObject

    def __new__(cls, stored: StoredObject) -> ObjectURL:
        url = super().__new__(cls, stored.url)
        url.stored = stored
        return url


@contextmanager
def _access(url: str, doing: str = "read") -> Iterator[None]:
    """Turn what gcsfs raises about ``url`` into one line (missing credentials pass as they are)."""
    try:
        yield
    except (InputError, gcs.CloudStorageError):
        raise
    except FileNotFoundError as exc:  # nothing of it read: a run none of whose files is there is not recorded
        raise MissingInputError(gcs.problem(exc, url, doing)) from exc
    except Exception as exc:  # gcsfs raises OSError, HttpError, ValueError and aiohttp's errors
        raise InputError(gcs.problem(exc, url, doing)) from exc


def _stored(detail: dict[str, Any]) -> StoredObject:
    updated = detail.get("updated")
    return StoredObject(
        url=gcs.SCHEME + detail["name"],
        size=int(detail.get("size") or 0),
        generation=str(detail.get("generation") or ""),
        updated=datetime.fromisoformat(updated) if isinstance(updated, str) else None,
    )


def stat(url: str) -> StoredObject:
    """The object at ``url`` (as listed, for an :class:`ObjectURL`). Raises :class:`InputError` if
    there is none (or it is a prefix)."""
    if isinstance(url, ObjectURL):
        return url.stored
    with _access(url):
        detail = gcs.filesystem().info(url)
    if detail.get("type") != "file":
        raise InputError(f"cannot read {url}: a prefix (a directory), not an object")
    return _stored(detail)


def is_glob(url: str) -> bool:
    return any(c in url for c in GLOB_CHARS)


def listing(url: str) -> tuple[bool, list[StoredObject]]:
    """What ``url`` names: ``(is_prefix, objects sorted by URL)``. A glob or a single object
    gives ``is_prefix`` False. Raises :class:`InputError` when it names nothing (saying whether
    the bucket exists) or cannot be listed."""
    fs = gcs.filesystem()
    with _access(url, "list"):
        if is_glob(url):
            found = fs.glob(url, detail=True)
            objects = [_stored(d) for d in found.values() if d.get("type") == "file"]
            if not objects:
                raise MissingInputError(
                    f"no object matches {url}; list what is there with `gcloud storage ls {gcs.parent(url)}`"
                )
            return False, sorted(objects, key=lambda o: o.url)
        if not url.endswith("/"):
            try:
                detail = fs.info(url)
            except FileNotFoundError as exc:
                raise MissingInputError(gcs.problem(exc, url)) from exc
            if detail.get("type") == "file":
                return False, [_stored(detail)]
        prefix = url.rstrip("/") + "/"
        found = fs.find(prefix, detail=True)
    objects = sorted((_stored(d) for d in found.values() if d.get("type", "file") == "file"), key=lambda o: o.url)
    if not objects:
        bucket = gcs.split(prefix)[0]
        if not gcs.bucket_exists(bucket):
            raise InputError(gcs.problem(FileNotFoundError(prefix), prefix))
        raise InputError(f"no objects under {prefix}; list what is there with `gcloud storage ls gs://{bucket}/`")
    return True, objects


@contextmanager
def opened(url: str) -> Iterator[BinaryIO]:
    """``url`` as a binary stream read in blocks. Raises :class:`InputError` if it cannot be
    opened; an error while reading is an :class:`OSError` (the line reader names the line)."""
    with _access(url):
        handle = gcs.filesystem().open(url, "rb")
    with handle:
        yield handle  # type: ignore[misc]


def read_bytes(url: str, limit: int) -> bytes:
    """The first ``limit`` bytes of the object at ``url`` (a manifest, a ``run.json``)."""
    with opened(url) as handle, _access(url):
        return bytes(handle.read(limit))
