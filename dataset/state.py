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

from tierscope.dataset.durable import move, read_regular, write_bytes_atomic
from tierscope.dataset.errors import StateCorruptError
from tierscope.dataset.objects import GsPath, as_location

SUFFIX = ".json"
#: The folder of a dataset holding its state documents (:attr:`tierscope.dataset.store.Dataset.state_dir`).
STATE_FOLDER = "state"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,150}$")


def state_name(kind: str, *key: str) -> str:
    """A file-name-safe document name for ``key`` within ``kind``: ``<kind>-<16 hex digits>``.

    The digits are a SHA-256 of the key parts, so any strings (project ids, filters,
    paths) give a short stable name; keep the readable key inside the document itself.
    """
    digest = hashlib.sha256("\x1f".join(key).encode("utf-8")).hexdigest()[:16]
    return f"{kind}-{digest}"


def state_dir(root: Path | GsPath) -> Path:
    """The state folder of the dataset at ``root``."""
    return root / STATE_FOLDER  # type: ignore[return-value]


class StateStore:
    """The state documents in ``directory`` (created on the first save)."""

    def __init__(self, directory: Path | GsPath | str) -> None:
        self.directory = as_location(directory)

    def path(self, name: str) -> Path:
        """Where the document ``name`` lives. Raises :class:`ValueError` for an unsafe name."""
        if not _NAME.match(name):
            raise ValueError(f"state name {name!r} is not a plain file name (letters, digits, '.', '_', '-')")
        return self.directory / f"{name}{SUFFIX}"

    def load(self, name: str) -> dict[str, Any] | None:
        """The document ``name``, or None if it was never saved.

        Raises :class:`StateCorruptError` (naming the file and what to do) if it is not a
        JSON object in UTF-8, whatever its bytes.
        """
        path = self.path(name)
        try:
            data = path.read_bytes() if isinstance(path, GsPath) else read_regular(path)
        except FileNotFoundError:
            return None
        if data is None:
            raise StateCorruptError(path, "is not a regular file (a FIFO, a device or a directory)")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise StateCorruptError(
                path, f"is not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})"
            ) from None
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            raise StateCorruptError(path, f"is not valid JSON ({exc.msg} at line {exc.lineno})") from None
        except (ValueError, RecursionError) as exc:  # an integer of too many digits, nesting too deep
            raise StateCorruptError(path, f"is not valid JSON ({type(exc).__name__}: {exc})") from None
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


def move_aside(root: Path, path: Path) -> Path:
    """Move ``path`` (inside the dataset at ``root``) to ``root/quarantine/`` under its path
    relative to the root, never overwriting (``name.1``, ``name.2``...); returns where it went."""
    target = root / "quarantine" / path.relative_to(root)
    target.parent.mkdir(parents=True, exist_ok=True)
    n = 1
    while target.exists():
        target = target.with_name(f"{path.name}.{n}")
        n += 1
    move(path, target)
    return target


def unreadable(root: Path) -> list[StateCorruptError]:
    """The state documents of the dataset at ``root`` that do not load (any bytes), one error each."""
    store = StateStore(state_dir(root))
    found: list[StateCorruptError] = []
    for name in store.names():
        try:
            store.load(name)
        except StateCorruptError as exc:
            found.append(exc)
        except ValueError:
            continue  # a file name that no state document has: not ours
    return found


def set_aside_note(error: StateCorruptError, moved_to: Path) -> str:
    """The one line telling the user a state document was moved aside, and what follows."""
    return (
        f"{error.path} {error.problem}: moved to {moved_to}; the next collect re-reads its inputs "
        "from the start (records already stored are skipped)"
    )
