"""Named JSON state documents kept with a dataset (under its ``state/`` folder).

The collector remembers where it stopped (a Cloud Logging watermark, a file's byte
offset) so the next collect resumes there. Each piece of state is one small JSON
document with a name; this module only loads and saves such documents, atomically::

    store = StateStore(dataset.state_dir)
    doc = store.load("cloud-logging-1f2e3d4c5b6a7988")    # None when never saved
    store.save("cloud-logging-1f2e3d4c5b6a7988", {"version": 1, ...})

A save writes a dot-prefixed temporary file, fsyncs it, renames it over the old
document and fsyncs the directory, so a reader (or a collect killed mid-save) sees the
old document or the new one, never a mix. Saves are not locked here: callers hold the
dataset's lock. Names are file-name safe by construction (:func:`state_name`).
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

from tierscope.dataset.durable import write_bytes_atomic
from tierscope.dataset.errors import StateCorruptError

SUFFIX = ".json"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,150}$")


def state_name(kind: str, *key: str) -> str:
    """A file-name-safe document name for ``key`` within ``kind``: ``<kind>-<16 hex digits>``.

    The digits are a SHA-256 of the key parts, so any strings (project ids, filters,
    paths) give a short stable name; keep the readable key inside the document itself.
    """
    digest = hashlib.sha256("\x1f".join(key).encode("utf-8")).hexdigest()[:16]
    return f"{kind}-{digest}"


class StateStore:
    """The state documents in ``directory`` (created on the first save)."""

    def __init__(self, directory: Path | str) -> None:
        self.directory = Path(directory)

    def path(self, name: str) -> Path:
        """Where the document ``name`` lives. Raises :class:`ValueError` for an unsafe name."""
        if not _NAME.match(name):
            raise ValueError(f"state name {name!r} is not a plain file name (letters, digits, '.', '_', '-')")
        return self.directory / f"{name}{SUFFIX}"

    def load(self, name: str) -> dict[str, Any] | None:
        """The document ``name``, or None if it was never saved.

        Raises :class:`StateCorruptError` (naming the file and what to do) if it is not a
        JSON object.
        """
        path = self.path(name)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            raise StateCorruptError(path, f"is not valid JSON ({exc.msg} at line {exc.lineno})") from None
        if not isinstance(doc, dict):
            raise StateCorruptError(path, f"holds a JSON {type(doc).__name__}, not an object")
        return doc

    def save(self, name: str, doc: dict[str, Any]) -> Path:
        """Replace the document ``name`` with ``doc`` atomically; returns its path.

        ``doc`` must be JSON-serialisable (raises :class:`TypeError` otherwise, leaving the
        old document in place).
        """
        path = self.path(name)
        write_bytes_atomic(path, (json.dumps(doc, indent=2, sort_keys=True) + "\n").encode())
        return path

    def delete(self, name: str) -> bool:
        """Remove the document ``name``; True if it existed."""
        path = self.path(name)
        existed = path.exists()
        path.unlink(missing_ok=True)
        return existed

    def names(self) -> list[str]:
        """The names of the saved documents, sorted."""
        if not self.directory.is_dir():
            return []
        return sorted(p.name[: -len(SUFFIX)] for p in self.directory.glob(f"*{SUFFIX}") if not p.name.startswith("."))
