"""Cloud Storage for ``gs://`` paths: one gcsfs filesystem, and its failures as one line each.

Credentials are the application-default ones (``gcloud auth application-default login``,
``GOOGLE_APPLICATION_CREDENTIALS``, or the metadata server of a Cloud VM or Cloud Run job),
looked up once, so a machine without any says so instead of falling back to anonymous
requests that fail later with 401s. With ``STORAGE_EMULATOR_HOST`` set (a local emulator)
requests are anonymous, as emulators expect.

gcsfs is imported only when a ``gs://`` path is used: the local path pays nothing for it.
This module imports no room, so the collector (inputs) and the dataset may both use it.
"""

from __future__ import annotations

import functools
import os
import re
from typing import TYPE_CHECKING

from tierscope.errors import TierscopeError

if TYPE_CHECKING:
    from gcsfs import GCSFileSystem

SCHEME = "gs://"
#: What reading and writing a dataset needs (reading inputs needs only the read part).
SCOPE = "https://www.googleapis.com/auth/devstorage.read_write"
_LOGIN = (
    "run `gcloud auth application-default login`, or set GOOGLE_APPLICATION_CREDENTIALS to a service account "
    "key file (on a Cloud VM or Cloud Run job, give it a service account)"
)


class CloudStorageError(TierscopeError):
    """Cloud Storage cannot be used: no credentials, permission denied, no such bucket, unreachable."""


def is_url(path: object) -> bool:
    """True for a ``gs://`` URL (a ``str``; a :class:`~pathlib.Path` would have folded its ``//``)."""
    return isinstance(path, str) and path.startswith(SCHEME)


#: Another store's URL (``s3://``, ``https://``), as given or as a path folds it (``s3:/bucket``): a scheme of two
#: letters or more, so a drive (``c:/x``) stays a path.
_OTHER_URL = re.compile(r"^(?P<scheme>[A-Za-z][A-Za-z0-9+.-]+):/+(?P<rest>.*)$")


def other_store(location: str) -> str | None:
    """``location`` as the URL of a store other than Cloud Storage (``s3://bucket/x``, also from the ``s3:/bucket/x``
    a path folds it to), or None: a local path or ``gs://``. tierscope reads and writes neither such URL."""
    found = _OTHER_URL.match(location)
    if found is None or found["scheme"] == "gs":
        return None
    return f"{found['scheme']}://{found['rest']}"


def split(url: str) -> tuple[str, str]:
    """``gs://bucket/a/b`` -> ``("bucket", "a/b")``."""
    bucket, _, key = url[len(SCHEME) :].partition("/")
    return bucket, key


def join(prefix: str, name: str) -> str:
    """``name`` (relative, ``/``-separated, ``..`` allowed) under the ``gs://`` prefix ``prefix``."""
    parts = [p for p in prefix[len(SCHEME) :].split("/") if p]
    for part in name.split("/"):
        if part == "..":
            if len(parts) > 1:
                parts.pop()
        elif part not in ("", "."):
            parts.append(part)
    return SCHEME + "/".join(parts)


def parent(url: str) -> str:
    """The ``gs://`` prefix holding ``url`` (``gs://b/a/x.toml`` -> ``gs://b/a/``)."""
    return url.rsplit("/", 1)[0] + "/"


def emulated() -> bool:
    return bool(os.environ.get("STORAGE_EMULATOR_HOST"))


@functools.cache
def filesystem() -> GCSFileSystem:
    """The gcsfs filesystem for ``gs://`` paths, made once per process.

    Raises :class:`CloudStorageError` when no application-default credentials are found.
    """
    if emulated():
        # gcsfs otherwise asks the storage-control gRPC API (absent from emulators) for each
        # bucket's type and waits 60 s for it; it reads this variable when it is imported.
        os.environ.setdefault("GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT", "false")
    import logging  # here: a collect of local files imports no logging (~2 ms of a cron collect's CPU)

    import gcsfs

    # gcsfs logs each exhausted retry with its traceback; the error it raises says it in one line.
    logging.getLogger("gcsfs").addHandler(logging.NullHandler())
    logging.getLogger("gcsfs").propagate = False
    # No listing cache: a long-lived process (or a test) must see an object rewritten after it listed.
    if emulated():
        return gcsfs.GCSFileSystem(token="anon", cache_timeout=0)
    import google.auth
    from google.auth.exceptions import DefaultCredentialsError

    try:
        credentials, project = google.auth.default(scopes=[SCOPE])
    except DefaultCredentialsError as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise CloudStorageError(f"no Google Cloud credentials to read gs:// paths ({first}); {_LOGIN}") from None
    project = project or os.environ.get("GOOGLE_CLOUD_PROJECT")
    return gcsfs.GCSFileSystem(token=credentials, project=project, cache_timeout=0)


def problem(exc: BaseException, url: str, doing: str = "read") -> str:
    """One line saying why ``doing`` ``url`` failed with ``exc`` (raised by gcsfs), and what to do."""
    bucket, _ = split(url)
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    code = getattr(exc, "code", None)
    if isinstance(exc, FileNotFoundError):
        if not bucket_exists(bucket):
            return (
                f"cannot {doing} {url}: no such bucket {bucket!r} (or it is in another project); "
                "check the name with `gcloud storage ls`"
            )
        listing = f"gcloud storage ls {parent(url)}"
        return f"cannot {doing} {url}: no such object or prefix; list what is there with `{listing}`"
    if code == 401:
        return f"cannot {doing} {url}: the credentials were refused (401: {text}); {_LOGIN}"
    if isinstance(exc, PermissionError) or code == 403 or text.startswith("Forbidden"):
        role = (
            "Storage Object Viewer (roles/storage.objectViewer)"
            if doing in ("read", "list")
            else "Storage Object User (roles/storage.objectUser)"
        )
        return (
            f"cannot {doing} {url}: permission denied on bucket {bucket!r}; grant the account tierscope runs as "
            f"{role} on it, or use other credentials ({_LOGIN.split(', or set')[0]})"
        )
    where = os.environ.get("STORAGE_EMULATOR_HOST") or "storage.googleapis.com"
    return f"cannot {doing} {url}: {text} (Cloud Storage at {where}); check the network and try again"


def bucket_exists(bucket: str) -> bool:
    """Whether ``bucket`` exists (True when that cannot be told: the first error then stands)."""
    try:
        filesystem().info(bucket)
    except FileNotFoundError:
        return False
    except Exception:  # any other answer leaves the original error to explain itself
        return True
    return True
