"""What the collector must read again after ``doctor --fix`` moved a data file to quarantine.

The records of a quarantined file are gone from the dataset, yet the collector's offsets say
the lines they came from were read, so without help the next collect would read nothing and
the records would stay lost. The dataset cannot move the collector's offsets itself (it knows
nothing of how logs are read: the rooms depend one way, collector -> dataset), so it leaves a
note, the state document ``state/rewinds.json``, and the collector acts on it at its next
start (:func:`pending`, then :func:`clear` once its offsets are saved)::

    {"version": 1, "rewinds": [{"run_id": "r", "sources": ["/logs/a.log"], "quarantined": "..."}]}

``sources`` are the ``source`` values of the file's rows, which every data file's footer
lists (:data:`tierscope.dataset.store.SOURCES_KEY`); null when the footer is unreadable (a
truncated file), meaning every source of the run. Reading a source again from its start
stores exactly the records that are missing: the rest are skipped as duplicates.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from tierscope.dataset.errors import StateCorruptError
from tierscope.dataset.objects import local_file
from tierscope.dataset.state import StateStore, state_dir

NAME = "rewinds"
VERSION = 1
#: Tables whose records come from reading sources; ``runs`` rows are stored again by every collect.
READ_TABLES = ("steps", "events", "rejects")


@dataclass(frozen=True)
class Rewind:
    """Read again every source of run ``run_id`` named in ``sources`` (None: all of the run's)."""

    run_id: str
    sources: tuple[str, ...] | None
    quarantined: str

    def describe(self) -> str:
        what = "every source" if self.sources is None else ", ".join(self.sources) or "no source"
        return f"the next collect reads {what} of run {self.run_id!r} again from the start"


def sources_of(path: Path) -> tuple[str, ...] | None:
    """The ``source`` values a data file's footer lists, or None if the footer cannot be read."""
    import pyarrow.parquet as pq

    from tierscope.dataset.store import SOURCES_KEY  # polars: only for doctor --fix, not every collect's start-up

    try:
        with local_file(path) as copy:
            meta = pq.read_metadata(copy).metadata or {}
        return tuple(str(s) for s in json.loads(meta[SOURCES_KEY]))
    except Exception:  # a footer too damaged to say: every source of the run is read again
        return None


def for_quarantined(root: Path, original: Path, moved_to: Path) -> Rewind | None:
    """The rewind a data file at ``original`` (now at ``moved_to``) calls for, or None (not read from sources)."""
    relative = original.relative_to(root).parts
    if len(relative) != 3 or relative[0] not in READ_TABLES or not relative[1].startswith("run_id="):
        return None
    from tierscope.dataset.store import partition_run_id

    run_id = partition_run_id(original.parent)
    return Rewind(run_id, sources_of(moved_to), str(moved_to))


def _store(root: Path) -> StateStore:
    return StateStore(state_dir(root))


def pending(root: Path) -> list[Rewind]:
    """The rewinds not yet done. Raises :class:`StateCorruptError` if the note is not one."""
    store = _store(root)
    doc = store.load(NAME)
    if doc is None:
        return []
    try:
        return [
            Rewind(str(r["run_id"]), None if r["sources"] is None else tuple(r["sources"]), str(r["quarantined"]))
            for r in doc["rewinds"]
        ]
    except (KeyError, TypeError) as exc:
        raise StateCorruptError(store.path(NAME), f"is not a rewinds note ({exc!r})") from exc


def add(root: Path, rewinds: list[Rewind]) -> None:
    """Add ``rewinds`` to the note (call holding the lock)."""
    if not rewinds:
        return
    docs = [
        {"run_id": r.run_id, "sources": None if r.sources is None else list(r.sources), "quarantined": r.quarantined}
        for r in [*pending(root), *rewinds]
    ]
    _store(root).save(NAME, {"version": VERSION, "rewinds": docs})


def clear(root: Path) -> None:
    """The collector has rewound its offsets (and saved them): drop the note."""
    _store(root).delete(NAME)
