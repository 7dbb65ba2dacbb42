"""Where each input was read to: one family of state documents under ``Dataset.state_dir``.

A position says where the next collect of an input starts. Its kinds:

- a **file offset** (:class:`~tierscope.collector.offsets.FileState`): a local file's byte offset
  and line with its fingerprints, or a Cloud Storage object's generation and size (an object is
  read whole: its generation is its fingerprint). All of them live in one document, ``files``,
  keyed by (absolute path or ``gs://`` URL, run id);
- a **Cloud Logging watermark** (:class:`CloudWatermark`): the last stored entry's timestamp and
  insertIds of one (project, job filter), one document each, ``cloud-logging-<16 hex digits>``.

Every kind is a :class:`PositionKind`: which documents are its, and what a document of it must
hold. :func:`check_positions` loads every document of every kind and returns one
:class:`~tierscope.dataset.errors.StateCorruptError` per document that is not what its writer
writes: ``tierscope doctor`` reports them and ``doctor --fix`` moves them to quarantine, the same
way for every kind. A collect that loads one raises that error too (the file collect sets a
broken ``files`` document aside itself: correctness never rests on a position, only re-reading does).

Standard library only: a collect with nothing new (:mod:`tierscope.collector.unchanged`) reads
positions before deciding to import polars.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from tierscope.collector.cloudtime import format_time
from tierscope.collector.offsets import FileState, state_key
from tierscope.dataset.errors import StateCorruptError
from tierscope.dataset.state import StateStore, state_dir, state_name


@dataclass(frozen=True)
class PositionKind:
    """One kind of position: ``what`` it is (in messages), whether a document ``name`` is of
    this kind, and ``check``, which raises :class:`KeyError` / :class:`ValueError` /
    :class:`TypeError` for a document this kind's writer does not write."""

    what: str
    owns: Callable[[str], bool]
    check: Callable[[dict[str, Any]], object]


def load_position(state_dir: Path, kind: PositionKind, name: str) -> dict[str, Any] | None:
    """The document ``name`` of ``kind`` (None if never saved), checked. Raises
    :class:`StateCorruptError` naming the file if it is not JSON or not a document of ``kind``."""
    store = StateStore(state_dir)
    doc = store.load(name)
    if doc is None:
        return None
    try:
        kind.check(doc)
    except (KeyError, ValueError, TypeError, AttributeError) as exc:
        raise StateCorruptError(store.path(name), f"is not a {kind.what} document ({exc})") from None
    return doc


# --- file offsets ----------------------------------------------------------------------------

FILES_NAME = "files"
FILES_VERSION = 1


def _file_states(doc: dict[str, Any]) -> list[FileState]:
    if doc.get("version") != FILES_VERSION:
        raise ValueError(f"version {doc.get('version')!r}, expected {FILES_VERSION}")
    return [FileState(**item) for item in doc["files"]]


FILE_OFFSETS = PositionKind("file-offsets", lambda name: name == FILES_NAME, _file_states)


def positions_below(top: Path) -> set[Path]:
    """The dataset roots below ``top`` whose state holds a collect's file offsets: a dataset kept beside logs."""
    marker = state_dir(Path("."))
    return {p.parents[len(marker.parts)] for p in top.rglob(f"{marker.as_posix()}/{FILES_NAME}.json") if p.is_file()}


class OffsetStore:
    """The file offsets of a dataset: one :class:`FileState` per (file, run).

    Raises :class:`StateCorruptError` on load if the document is not what this class writes.
    """

    def __init__(self, state_dir: Path) -> None:
        self.store = StateStore(state_dir)
        self._states: dict[tuple[str, str], FileState] = {}
        #: Changes not saved yet (only while :meth:`deferring`), and when the document was last saved (monotonic s).
        self._unsaved = 0
        self._deferring = False
        self._saved_at = 0.0
        doc = load_position(state_dir, FILE_OFFSETS, FILES_NAME)
        for state in _file_states(doc) if doc is not None else ():
            self._states[(state.path, state.run_id)] = state

    def get(self, path: Path | str, run_id: str) -> FileState | None:
        return self._states.get((state_key(path), run_id))

    def states(self) -> list[FileState]:
        """Every file's state, by path and run."""
        return [state for _, state in sorted(self._states.items())]

    def put(self, state: FileState) -> None:
        """Record ``state`` and save the document (atomically, durably); while :meth:`deferring`, maybe later."""
        self._states[(state.path, state.run_id)] = state
        self._changed()

    @contextmanager
    def deferring(self) -> Iterator[OffsetStore]:
        """Within it, a change is saved only once the changes unsaved are an eighth of the document's files
        (:data:`SAVE_SHARE`) or :data:`SAVE_INTERVAL_S` after the last save; on leaving, whatever is unsaved.

        The document holds every file of the dataset, so saving it at each file's position made a collect of N
        small files write N documents of up to N files: quadratic. Deferred, the saves of N files write
        O(N) states in all. A kill meanwhile loses positions of files whose records are stored: the next collect
        reads them again and skips what is stored (a position is put only after its records are stored, so one
        saved late is never ahead of the data). Leave it before the lock is let go: another collect reads it."""
        self._deferring = True
        try:
            yield self
        finally:
            self._deferring = False
            self.flush()

    def flush(self) -> None:
        """Save the changes not saved yet, if any."""
        if self._unsaved:
            self._save()

    def _changed(self) -> None:
        self._unsaved += 1
        due = self._unsaved * SAVE_SHARE >= len(self._states) or time.monotonic() - self._saved_at >= SAVE_INTERVAL_S
        if not self._deferring or due:
            self._save()

    def forget(self, run_id: str, sources: tuple[str, ...] | None) -> int:
        """Drop what is known of ``run_id``'s files named in ``sources`` (None: all of them),
        so the next read of each starts from its start; save; returns how many were dropped.

        A source matches by absolute path, or else by file name (it may have been given relative
        to another directory): reading one file too many again costs only time.
        """
        names = None if sources is None else {state_key(s) for s in sources} | {Path(s).name for s in sources}
        gone = [
            key
            for key, state in self._states.items()
            if state.run_id == run_id and (names is None or state.path in names or Path(state.path).name in names)
        ]
        for key in gone:
            del self._states[key]
        self._changed()
        return len(gone)

    def _save(self) -> None:
        doc = {"version": FILES_VERSION, "files": [asdict(s) for _, s in sorted(self._states.items())]}
        self.store.save(FILES_NAME, doc)
        self._unsaved = 0
        self._saved_at = time.monotonic()


#: While an :class:`OffsetStore` is deferring, it is saved once the unsaved changes are 1/SAVE_SHARE of its files ...
SAVE_SHARE = 8
#: ... or this long after its last save (a long read of one file in a dataset of many still saves its place).
SAVE_INTERVAL_S = 5.0


# --- Cloud Logging watermarks ------------------------------------------------------------------

WATERMARK_KIND = "cloud-logging"
WATERMARK_VERSION = 1


@dataclass
class Watermark:
    """Where the last collect of a job filter stopped: the last stored entry's ``timestamp``,
    the ``insert_ids`` stored at exactly that time, and ``read_at``, when that collect started
    reading (see :mod:`tierscope.collector.readers.cloud_logging`)."""

    timestamp: datetime
    insert_ids: list[str]
    read_at: datetime

    def to_json(self) -> dict[str, Any]:
        return {
            "timestamp": format_time(self.timestamp),
            "insert_ids": sorted(self.insert_ids),
            "read_at": format_time(self.read_at),
        }

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> Watermark:
        """Raises :class:`KeyError` / :class:`ValueError` / :class:`TypeError` for a malformed document."""
        if not isinstance(doc, dict):
            raise TypeError(f"the watermark is a JSON {type(doc).__name__}, not an object")
        insert_ids = doc.get("insert_ids") or []
        if not isinstance(insert_ids, list):
            raise TypeError(f"insert_ids is a JSON {type(insert_ids).__name__}, not an array")
        return cls(
            timestamp=datetime.fromisoformat(doc["timestamp"]),
            insert_ids=[str(i) for i in insert_ids],
            read_at=datetime.fromisoformat(doc["read_at"]),
        )

    def start(self, overlap: Any) -> datetime:
        """Where the next collect starts reading (``overlap``: a :class:`~datetime.timedelta`)."""
        return min(self.timestamp, self.read_at - overlap)


@dataclass
class CloudWatermark:
    """The position of one (``project``, ``job_filter``): its :class:`Watermark` (None before
    the first entry is stored), whether the last collect read to the end (``complete``), the
    error it stopped on, and when it was saved."""

    project: str
    job_filter: str
    watermark: Watermark | None = None
    complete: bool = False
    error: str | None = None
    updated_at: str | None = field(default=None, compare=False)

    @property
    def name(self) -> str:
        """The document's name."""
        return watermark_name(self.project, self.job_filter)

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "version": WATERMARK_VERSION,
            "kind": WATERMARK_KIND,
            "project": self.project,
            "job_filter": self.job_filter,
            "watermark": self.watermark.to_json() if self.watermark else None,
            "complete": self.complete,
            "error": self.error,
        }
        if self.updated_at is not None:
            doc["updated_at"] = self.updated_at
        return doc

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> CloudWatermark:
        """Raises :class:`KeyError` / :class:`ValueError` / :class:`TypeError` for a malformed document."""
        if doc.get("kind") != WATERMARK_KIND or doc.get("version") != WATERMARK_VERSION:
            raise ValueError(
                f"kind {doc.get('kind')!r} version {doc.get('version')!r}, expected {WATERMARK_KIND!r} "
                f"version {WATERMARK_VERSION}"
            )
        for key in ("project", "job_filter"):
            if not isinstance(doc.get(key), str):
                raise TypeError(f"{key} is not a string")
        mark = doc.get("watermark")
        return cls(
            project=doc["project"],
            job_filter=doc["job_filter"],
            watermark=Watermark.from_json(mark) if mark else None,
            complete=bool(doc.get("complete")),
            error=doc.get("error"),
            updated_at=doc.get("updated_at"),
        )


def watermark_name(project: str, job_filter: str) -> str:
    """The document name of the watermark of (``project``, ``job_filter``)."""
    return state_name(WATERMARK_KIND, project, job_filter)


CLOUD_WATERMARKS = PositionKind(
    "Cloud Logging watermark", lambda name: name.startswith(f"{WATERMARK_KIND}-"), CloudWatermark.from_json
)


def load_watermark(state_dir: Path, project: str, job_filter: str) -> CloudWatermark | None:
    """The watermark of (``project``, ``job_filter``), or None if never saved. Raises
    :class:`StateCorruptError` if its document is malformed (``doctor --fix`` moves it aside;
    ``collect cloud --ignore-watermark`` reads without it)."""
    doc = load_position(state_dir, CLOUD_WATERMARKS, watermark_name(project, job_filter))
    return None if doc is None else CloudWatermark.from_json(doc)


def save_watermark(state_dir: Path, mark: CloudWatermark) -> Path:
    """Replace the watermark's document with ``mark`` (atomically); returns its path."""
    return StateStore(state_dir).save(mark.name, mark.to_json())


# --- the family ------------------------------------------------------------------------------

#: Every kind of position; a document of none of them is not the collector's (the dataset's own
#: journal, a cache) and is left to the dataset room's checks.
KINDS: tuple[PositionKind, ...] = (FILE_OFFSETS, CLOUD_WATERMARKS)

#: A position a reader hands the sink, saved once what it covers is stored.
Position = FileState | CloudWatermark


def check_positions(state_dir: Path) -> list[StateCorruptError]:
    """One :class:`StateCorruptError` per position document in ``state_dir`` that does not load
    or is not what its kind's writer writes (a check of :func:`tierscope.dataset.doctor.check`)."""
    store = StateStore(state_dir)
    found = []
    for name in store.names():
        kind = next((k for k in KINDS if k.owns(name)), None)
        if kind is None:
            continue
        try:
            load_position(state_dir, kind, name)
        except StateCorruptError as exc:
            found.append(exc)
    return found


class Positions:
    """Where a sink saves the positions readers hand it: the file offsets (loaded on first use,
    or given) and the watermarks, all under ``state_dir``."""

    def __init__(self, state_dir: Path, offsets: OffsetStore | None = None) -> None:
        self.state_dir = state_dir
        self._offsets = offsets

    @property
    def offsets(self) -> OffsetStore:
        if self._offsets is None:
            self._offsets = OffsetStore(self.state_dir)
        return self._offsets

    def put(self, position: Position) -> None:
        """Save ``position`` (atomically, durably)."""
        if isinstance(position, CloudWatermark):
            save_watermark(self.state_dir, position)
        else:
            self.offsets.put(position)
